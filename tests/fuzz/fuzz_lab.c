/* The lab's own files: the replay's host map (--hosts) and a server's layout from NCCL's
 * topology XML or `nvidia-smi topo -m` ([server] import). The first byte picks
 * the reader, the rest is the file. A refusal says why; an accepted map names a machine and a
 * unicast address (1.0.0.0 to 223.255.255.255) for every host it marks as mapped, and no host
 * beyond HOSTMAP_MAX_HOST. */
#include <arpa/inet.h>
#include "models/nccl_topo.h"
#include "replay/hostmap.h"
#include "tests/fuzz/fuzz.h"

static void read_map(const uint8_t *data, size_t size, gboolean subset)
{
    char *p = fuzz_file("lab.map", data, size);
    GError *e = NULL;
    struct hostmap *m = subset ? hostmap_read_subset(p, &e) : hostmap_read(p, &e);
    if (!m) {
        if (!e || !e->message || !*e->message)
            abort(); /* a refusal always says why */
        g_error_free(e);
    } else {
        if (m->n > HOSTMAP_MAX_HOST + 1)
            abort();
        for (uint32_t i = 0; i < m->n; i++) {
            uint32_t a = ntohl(m->h[i].addr.s_addr);
            if ((m->mapped[i] || !subset) && (!m->h[i].machine || (a >> 24) == 0 || (a >> 24) >= 224))
                abort();
        }
        hostmap_free(m);
    }
    g_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    switch (data[0] % 3) {
    case 0:
        read_map(data + 1, size - 1, FALSE);
        break;
    case 1:
        read_map(data + 1, size - 1, TRUE);
        break;
    default: {
        char *text = fuzz_string(data + 1, size - 1), *why = NULL;
        GHashTable *keys = nccl_topo_import(text, &why);
        if (keys)
            g_hash_table_unref(keys);
        else if (!why || !*why)
            abort();
        g_free(why);
        g_free(text);
    }
    }
    return 0;
}
