/* The lab map file (see hostmap.h). */
#include "replay/hostmap.h"
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "replay/replay.h"

struct hostmap *hostmap_loopback(uint32_t n)
{
    struct hostmap *m = g_new0(struct hostmap, 1);
    m->n = n;
    m->h = g_new0(struct host_entry, n ? n : 1);
    m->mapped = g_new0(guint8, n ? n : 1);
    for (uint32_t i = 0; i < n; i++) {
        m->mapped[i] = 1;
        m->h[i].machine = g_strdup("localhost");
        m->h[i].device = g_strdup("-");
        m->h[i].netdev = g_strdup("lo");
        m->h[i].addr.s_addr = htonl(0x7F000001u + i);
    }
    return m;
}

void hostmap_free(struct hostmap *m)
{
    if (!m)
        return;
    for (uint32_t i = 0; i < m->n; i++) {
        g_free(m->h[i].machine);
        g_free(m->h[i].device);
        g_free(m->h[i].netdev);
    }
    g_free(m->h);
    g_free(m->mapped);
    g_free(m);
}

static gboolean bad(GError **err, const char *path, unsigned line, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);
static gboolean bad(GError **err, const char *path, unsigned line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *m = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_INPUT, "%s:%u: %s", path, line, m);
    g_free(m);
    return FALSE;
}

/* An address one host can be sent to: not 0.0.0.0/8 ("this network"), multicast (224/4),
 * or the reserved 240/4 with the limited broadcast in it (RFC 1122 3.2.1.3, RFC 1112 4,
 * RFC 6890 2.2.2: "Reserved", not forwardable; Linux refuses to route it by default). */
static gboolean unicast_host(struct in_addr a)
{
    uint32_t h = ntohl(a.s_addr);
    return (h >> 24) != 0 && (h >> 28) < 0xE;
}

static struct hostmap *read_map(const char *path, gboolean subset, GError **err);
struct hostmap *hostmap_read(const char *path, GError **err) { return read_map(path, FALSE, err); }
struct hostmap *hostmap_read_subset(const char *path, GError **err) { return read_map(path, TRUE, err); }

static struct hostmap *read_map(const char *path, gboolean subset, GError **err)
{
    char *text = NULL;
    GError *e = NULL;
    if (!g_file_get_contents(path, &text, NULL, &e)) {
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_INPUT, "%s: cannot read the host map: %s",
                    path, e->message);
        g_error_free(e);
        return NULL;
    }
    char **lines = g_strsplit(text, "\n", -1);
    g_free(text);
    GArray *hs = g_array_new(FALSE, TRUE, sizeof(struct host_entry));
    GArray *seen = g_array_new(FALSE, TRUE, sizeof(unsigned));
    gboolean ok = TRUE;
    for (unsigned ln = 0; lines[ln] && ok; ln++) {
        char *l = g_strstrip(lines[ln]);
        if (!*l || *l == '#')
            continue;
        char **f = g_strsplit_set(l, " \t", -1);
        char *v[8];
        int nf = 0;
        for (int i = 0; f[i] && nf < 8; i++)
            if (*f[i])
                v[nf++] = f[i];
        char *end = NULL;
        unsigned long idx = nf > 1 ? strtoul(v[1], &end, 10) : 0;
        unsigned long leaf = 0;
        struct in_addr a;
        if (nf != 7 || strcmp(v[0], "host"))
            ok = bad(err, path, ln + 1, "expected 'host <schedule-host> <machine> <rdma-device> "
                     "<netdev> <ipv4> <leaf>' (7 fields), found %d field(s)", nf);
        else if (!g_ascii_isdigit(*v[1]) || *end || idx > HOSTMAP_MAX_HOST)
            ok = bad(err, path, ln + 1, "schedule host '%s' is not a host index 0..%u", v[1], HOSTMAP_MAX_HOST);
        else if (inet_pton(AF_INET, v[5], &a) != 1)
            ok = bad(err, path, ln + 1, "'%s' is not an IPv4 address", v[5]);
        else if (!unicast_host(a))
            ok = bad(err, path, ln + 1, "'%s' is not a host's address (0.0.0.0/8, multicast 224/4 and the "
                     "reserved 240/4 with broadcast cannot be sent to as one host)", v[5]);
        else if (leaf = strtoul(v[6], &end, 10), !g_ascii_isdigit(*v[6]) || *end || leaf > UINT32_MAX)
            ok = bad(err, path, ln + 1, "leaf '%s' is not a number 0..%u", v[6], UINT32_MAX);
        else {
            if (idx >= hs->len) {
                g_array_set_size(hs, (guint)idx + 1);
                g_array_set_size(seen, (guint)idx + 1);
            }
            if (g_array_index(seen, unsigned, idx))
                ok = bad(err, path, ln + 1, "host %lu is mapped twice (first on line %u)", idx,
                         g_array_index(seen, unsigned, idx));
            else {
                struct host_entry *h = &g_array_index(hs, struct host_entry, idx);
                h->machine = g_strdup(v[2]);
                h->device = g_strdup(v[3]);
                h->netdev = g_strdup(v[4]);
                h->addr = a;
                h->leaf = (uint32_t)leaf;
                g_array_index(seen, unsigned, idx) = ln + 1;
            }
        }
        g_strfreev(f);
    }
    g_strfreev(lines);
    for (guint i = 0; ok && !subset && i < seen->len; i++)
        if (!g_array_index(seen, unsigned, i)) {
            g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_INPUT,
                        "%s: schedule host %u has no line (hosts 0..%u must each be mapped once)",
                        path, i, seen->len - 1);
            ok = FALSE;
        }
    if (ok && hs->len == 0) {
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_INPUT, "%s: no host lines", path);
        ok = FALSE;
    }
    struct hostmap *m = g_new0(struct hostmap, 1);
    m->n = hs->len;
    m->mapped = g_new0(guint8, hs->len ? hs->len : 1);
    for (guint i = 0; i < seen->len; i++)
        m->mapped[i] = g_array_index(seen, unsigned, i) != 0;
    m->h = (struct host_entry *)g_array_free(hs, FALSE);
    g_array_free(seen, TRUE);
    if (!ok) {
        hostmap_free(m);
        return NULL;
    }
    return m;
}
