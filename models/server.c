/* [server] and [cluster]: presets, overrides, layout lists, validation. */
#include "models/server.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "models/nccl_topo.h"
#include "sim/units.h"

/* Presets, as scenario text so they go through the same parser as user keys.
 * dgx-h100: NVIDIA DGX H100 (8 H100 SXM, 8 ConnectX-7 at 400 Gb/s, 4 PCIe gen5 switches with
 * 2 GPUs and 2 NICs each, 2 sockets; NVLink 4 at 450 GB/s per direction and GPU).
 * dgx-a100: DGX A100 (8 A100, 8 ConnectX-6 at 200 Gb/s, 4 PCIe gen4 switches, NVLink 3 at
 * 300 GB/s per direction). Host memory per socket: 8 DDR5-4800 channels (307 GB/s, H100
 * systems) or 8 DDR4-3200 (205 GB/s, A100). hgx-8x4: an 8-GPU HGX board with 4 NICs at 400 Gb/s, one per PCIe
 * switch. Latencies are first-order figures (NVLink ~1 us per NCCL hop, PCIe ~0.5 us
 * through a switch, inter-socket ~0.2 us); override them for a measured machine. */
/* A preset's keys; a variant names the preset it differs from and lists only what differs. */
struct server_preset {
    const char *name;
    const char *const (*kv)[2];
    const struct server_preset *base;
};
static const char *const dgx_h100[][2] = {
    { "gpus", "8" }, { "nics", "8" }, { "pcie_switches", "4" }, { "sockets", "2" },
    { "nic_rate", "400Gbps" }, { "nvlink_rate", "3600Gbps" }, { "nvlink_latency", "1us" },
    { "pcie_gen", "5" }, { "pcie_width", "16" }, { "pcie_latency", "500ns" },
    { "socket_link_rate", "512Gbps" }, { "socket_link_latency", "200ns" },
    { "host_memory_rate", "2400Gbps" }, { NULL, NULL },
};
static const char *const dgx_a100[][2] = {
    { "nic_rate", "200Gbps" }, { "nvlink_rate", "2400Gbps" }, { "pcie_gen", "4" },
    { "socket_link_rate", "400Gbps" }, { "host_memory_rate", "1600Gbps" }, { NULL, NULL },
};
static const char *const hgx_8x4[][2] = { { "nics", "4" }, { NULL, NULL } };
static const struct server_preset presets[] = {
    { "dgx-h100", dgx_h100, NULL },
    { "dgx-a100", dgx_a100, &presets[0] },
    { "hgx-8x4", hgx_8x4, &presets[0] },
};

const char *server_preset_names(void) { return "dgx-h100|dgx-a100|hgx-8x4"; }

const char *const server_section_keys[] = {
    "preset", "gpus", "nics", "pcie_switches", "sockets", "nic_rate", "nvlink_rate", "nvlink_latency",
    "pcie_gen", "pcie_width", "pcie_latency", "socket_link_rate", "socket_link_latency", "host_memory_rate", "gpu_pcie",
    "nic_pcie", "pcie_socket", "gpu_pcie_width", "nic_pcie_width", "import", NULL,
};
const char *const cluster_section_keys[] = { "servers", "rail_group", "k", NULL };

uint64_t server_pcie_rate(uint32_t gen, uint32_t width)
{
    static const uint64_t gts[] = { 0, 2500, 5000, 8000, 16000, 32000, 64000 }; /* MT/s per lane */
    double enc = gen <= 2 ? 0.8 : gen <= 5 ? 128.0 / 130.0 : 242.0 / 256.0;
    return (uint64_t)((double)gts[gen] * 1e6 * width * enc * 256.0 / 280.0);
}

struct reader {
    const struct scenario *s;
    const struct named_section *sec;
    const char *group;
    const struct server_preset *preset;
    GHashTable *imported;        /* the layout of `import`, or NULL */
    GError **err;
    bool ok;
};

/* A key's text: the section's own, else the imported layout's, else the preset's. */
static const char *value_of(const struct reader *r, const char *key)
{
    const char *v = r->sec ? g_hash_table_lookup(r->sec->keys, key) : NULL;
    if (!v && r->imported)
        v = g_hash_table_lookup(r->imported, key);
    for (const struct server_preset *p = r->preset; !v && p; p = p->base)
        for (int i = 0; !v && p->kv[i][0]; i++)
            if (!strcmp(p->kv[i][0], key))
                v = p->kv[i][1];
    return v;
}

static uint32_t get_uint(struct reader *r, const char *key, uint32_t lo, uint32_t hi, uint32_t deflt)
{
    const char *v = value_of(r, key);
    if (!r->ok || !v)
        return deflt;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi) {
        scenario_key_error(r->err, r->s, r->group, key, v, "expected a whole number from %u to %u", lo, hi);
        r->ok = false;
        return deflt;
    }
    return (uint32_t)x;
}

/* A rate or a time (both 64-bit values parsed by sim/units.c): missing is an error naming
 * the presets; POSITIVE refuses 0 with that text. */
static uint64_t get_units(struct reader *r, const char *key, gboolean (*parse)(const char *, uint64_t *, char **),
                          const char *positive)
{
    const char *v = value_of(r, key);
    uint64_t x = 0;
    char *why = NULL;
    if (!r->ok)
        return 0;
    if (!v) {
        scenario_key_error(r->err, r->s, r->group, key, NULL, "missing: set it or a preset (%s)", server_preset_names());
        r->ok = false;
    } else if (!parse(v, &x, &why) || (positive && x == 0)) {
        scenario_key_error(r->err, r->s, r->group, key, v, "%s", why ? why : positive);
        r->ok = false;
    }
    g_free(why);
    return x;
}

static uint64_t get_rate(struct reader *r, const char *key)
{
    return get_units(r, key, units_parse_rate, "expected a positive rate");
}

static simtime_t get_time(struct reader *r, const char *key)
{
    return get_units(r, key, units_parse_time, NULL);
}

static void get_list(struct reader *r, const char *key, uint32_t n, uint32_t limit, const char *what, uint32_t *out)
{
    for (uint32_t i = 0; i < n; i++)
        out[i] = (uint32_t)((uint64_t)i * limit / n);
    const char *v = value_of(r, key);
    if (!r->ok || !v)
        return;
    char **f = g_strsplit(v, ",", -1);
    uint32_t k = 0;
    bool good = true;
    for (; f[k] && good; k++) {
        char *t = g_strstrip(f[k]), *end;
        errno = 0;
        unsigned long x = strtoul(t, &end, 10);
        good = k < n && !errno && end != t && !*end && x < limit;
        if (good)
            out[k] = (uint32_t)x;
    }
    if (!good || k != n) {
        scenario_key_error(r->err, r->s, r->group, key, v, "expected %u comma-separated %s numbers below %u",
                           n, what, limit);
        r->ok = false;
    }
    g_strfreev(f);
}

/* Per-device PCIe link widths ("16,16,8,..."), default every link at `deflt`. */
static void get_widths(struct reader *r, const char *key, uint32_t n, uint32_t deflt, uint32_t *out)
{
    const char *v = value_of(r, key);
    if (!r->ok || !v) {
        for (uint32_t i = 0; i < n; i++)
            out[i] = deflt;
        return;
    }
    get_list(r, key, n, 33, "lane-count", out);
    for (uint32_t i = 0; r->ok && i < n; i++)
        if (!out[i] || (out[i] & (out[i] - 1))) {
            scenario_key_error(r->err, r->s, r->group, key, v, "expected %u link widths of 1, 2, 4, 8, 16 or 32 lanes", n);
            r->ok = false;
        }
}

static bool check_keys(struct reader *r, const char *const *known)
{
    if (!r->sec)
        return true;
    for (guint i = 0; i < r->sec->order->len; i++) {
        const char *k = g_ptr_array_index(r->sec->order, i);
        bool found = false;
        for (int j = 0; known[j] && !found; j++)
            found = !strcmp(known[j], k);
        if (!found) {
            char *list = g_strjoinv(", ", (char **)known);
            scenario_key_error(r->err, r->s, r->group, k, NULL, "unknown key: [%s] has %s", r->group, list);
            g_free(list);
            return r->ok = false;
        }
    }
    return true;
}

gboolean server_load(const struct scenario *s, struct server_desc *sd, struct cluster_desc *cd, GError **err)
{
    memset(sd, 0, sizeof *sd);
    memset(cd, 0, sizeof *cd);
    struct reader r = { s, s->server, "server", NULL, NULL, err, true };
    if (!check_keys(&r, server_section_keys))
        return FALSE;
    const char *pn = s->server ? g_hash_table_lookup(s->server->keys, "preset") : NULL;
    if (pn) {
        for (size_t i = 0; i < G_N_ELEMENTS(presets); i++)
            if (!strcmp(presets[i].name, pn))
                r.preset = &presets[i];
        if (!r.preset) {
            scenario_key_error(err, s, "server", "preset", pn, "unknown preset: expected %s", server_preset_names());
            return FALSE;
        }
    }
    sd->preset = g_strdup(pn ? pn : "");
    const char *imp = s->server ? g_hash_table_lookup(s->server->keys, "import") : NULL;
    if (imp) {
        char *path = g_path_is_absolute(imp) ? g_strdup(imp) : g_build_filename(s->dir, imp, NULL), *text = NULL, *why = NULL;
        GError *e = NULL;
        if (!g_file_get_contents(path, &text, NULL, &e)) {
            scenario_key_error(err, s, "server", "import", imp, "cannot read: %s", e->message);
            g_error_free(e);
        } else if (!(r.imported = nccl_topo_import(text, &why))) {
            scenario_key_error(err, s, "server", "import", imp, "%s", why);
            g_free(why);
        }
        g_free(text);
        g_free(path);
        if (!r.imported) {
            server_desc_clear(sd);
            return FALSE;
        }
    }
    sd->gpus = get_uint(&r, "gpus", 1, SERVER_MAX_GPUS, 8);
    sd->nics = get_uint(&r, "nics", 1, SERVER_MAX_NICS, sd->gpus);
    sd->pcie_switches = get_uint(&r, "pcie_switches", 1, SERVER_MAX_GPUS, 1);
    sd->sockets = get_uint(&r, "sockets", 1, 8, 1);
    sd->nic_rate = get_rate(&r, "nic_rate");
    sd->nvlink_rate = get_rate(&r, "nvlink_rate");
    sd->nvlink_latency = get_time(&r, "nvlink_latency");
    sd->pcie_gen = get_uint(&r, "pcie_gen", 1, 6, 5);
    sd->pcie_width = get_uint(&r, "pcie_width", 1, 32, 16);
    if (r.ok && sd->pcie_width & (sd->pcie_width - 1)) {
        char v[16];
        snprintf(v, sizeof v, "%u", sd->pcie_width);
        scenario_key_error(err, s, "server", "pcie_width", v, "expected a link width of 1, 2, 4, 8, 16 or 32 lanes");
        r.ok = false;
    }
    sd->pcie_rate = r.ok ? server_pcie_rate(sd->pcie_gen, sd->pcie_width) : 0;
    sd->pcie_latency = get_time(&r, "pcie_latency");
    sd->socket_link_rate = get_rate(&r, "socket_link_rate");
    sd->socket_link_latency = get_time(&r, "socket_link_latency");
    sd->host_memory_rate = get_rate(&r, "host_memory_rate");
    if (r.ok && sd->sockets > sd->pcie_switches) {
        char v[16];
        snprintf(v, sizeof v, "%u", sd->sockets);
        scenario_key_error(err, s, "server", "sockets", v, "more sockets than PCIe switches (%u): every socket needs one",
                           sd->pcie_switches);
        r.ok = false;
    }
    get_list(&r, "gpu_pcie", sd->gpus, sd->pcie_switches, "PCIe switch", sd->gpu_pcie);
    get_list(&r, "nic_pcie", sd->nics, sd->pcie_switches, "PCIe switch", sd->nic_pcie);
    get_list(&r, "pcie_socket", sd->pcie_switches, sd->sockets, "socket", sd->pcie_socket);
    get_widths(&r, "gpu_pcie_width", sd->gpus, sd->pcie_width, sd->gpu_pcie_width);
    get_widths(&r, "nic_pcie_width", sd->nics, sd->pcie_width, sd->nic_pcie_width);

    if (r.imported)
        g_hash_table_unref(r.imported);
    struct reader c = { s, s->cluster, "cluster", NULL, NULL, err, r.ok };
    if (r.ok && !check_keys(&c, cluster_section_keys))
        r.ok = false;
    cd->servers = get_uint(&c, "servers", 1, 65536, 1);
    cd->rail_group = get_uint(&c, "rail_group", 1, 65536, cd->servers);
    cd->k = get_uint(&c, "k", 2, 256, 8);
    if (c.ok && cd->k % 2) {
        char v[16];
        snprintf(v, sizeof v, "%u", cd->k);
        scenario_key_error(err, s, "cluster", "k", v, "expected an even number of ports per fat-tree switch");
        c.ok = false;
    }
    if (!r.ok || !c.ok) {
        server_desc_clear(sd);
        return FALSE;
    }
    return TRUE;
}

void server_desc_clear(struct server_desc *sd)
{
    g_free(sd->preset);
    sd->preset = NULL;
}
