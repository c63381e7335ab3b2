/* The scenario loader: the fixed sections' key table, and the algorithms' tables from the
 * registry (models/cc_registry.h), over the generic loader of sim/config.c. */
#include "models/scenario.h"
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "models/cc.h"
#include "models/net.h"
#include "models/scenario_check.h"
#include "models/workload.h"
#include "sim/units.h"

#define F(field) offsetof(struct scenario, field)
static const struct cfg_key core_keys[] = {
    { "scenario", "name", CFG_STR, F(name), "", NULL, 0, 0, 0 },
    { "scenario", "seed", CFG_UINT, F(seed), "1", NULL, 0, 1.8e19, 8 },
    { "scenario", "stop", CFG_TIME, F(stop), "1s", NULL, 0, 0, 0 },

    { "topology", "kind", CFG_ENUM, F(topo), "leaf-spine", TOPO_CHOICES, 0, 0, 0 },
    { "topology", "leaves", CFG_UINT, F(leaves), "2", NULL, 1, 4096, 4 },
    { "topology", "spines", CFG_UINT, F(spines), "2", NULL, 0, 4096, 4 },
    { "topology", "hosts_per_leaf", CFG_UINT, F(hosts_per_leaf), "8", NULL, 1, 4096, 4 },
    { "topology", "host_rate", CFG_RATE, F(host_rate), "100Gbps", NULL, 0, 0, 0 },
    { "topology", "fabric_rate", CFG_RATE, F(fabric_rate), NULL, NULL, 0, 0, 0 },
    { "topology", "link_delay", CFG_TIME, F(link_delay), "1us", NULL, 0, 0, 0 },
    { "topology", "host_link_delay", CFG_TIME, F(host_link_delay), NULL, NULL, 0, 0, 0 },
    { "topology", "file", CFG_STR, F(edges_file), "", NULL, 0, 0, 0 },

    { "switch", "buffer", CFG_SIZE, F(buffer), "32MB", NULL, 0, 0, 0 },
    { "switch", "ecn", CFG_BOOL, F(ecn), "on", NULL, 0, 0, 0 },
    { "switch", "ecn_kmin", CFG_SIZE, F(ecn_kmin), NULL, NULL, 0, 0, 0 },
    { "switch", "ecn_kmax", CFG_SIZE, F(ecn_kmax), NULL, NULL, 0, 0, 0 },
    { "switch", "ecn_pmax", CFG_DOUBLE, F(ecn_pmax), "0.2", NULL, 0, 1, 0 },
    { "switch", "ecn_mark", CFG_ENUM, F(ecn_mark), "dequeue", "dequeue|enqueue", 0, 0, 0 },
    { "switch", "pfc", CFG_BOOL, F(pfc), "on", NULL, 0, 0, 0 },
    { "switch", "lossless_priorities", CFG_STR, F(lossless_priorities_text), "3", NULL, 0, 0, 0 },
    { "switch", "xoff", CFG_STR, F(xoff_text), "dynamic", NULL, 0, 0, 0 },
    { "switch", "pfc_alpha", CFG_DOUBLE, F(pfc_alpha), "0.125", NULL, 0.001, 64, 0 },
    { "switch", "xon_offset", CFG_SIZE, F(xon_offset), "3KiB", NULL, 0, 0, 0 },
    { "switch", "reserve", CFG_SIZE, F(reserve), "4KiB", NULL, 0, 0, 0 },
    { "switch", "headroom", CFG_STR, F(headroom_text), "auto", NULL, 0, 0, 0 },
    { "switch", "cable_length", CFG_STR, F(cable_length_text), "auto", NULL, 0, 0, 0 },
    { "switch", "egress_alpha", CFG_DOUBLE, F(egress_alpha), "8", NULL, 0.001, 1024, 0 },
    { "switch", "pfc_pause_quanta", CFG_UINT, F(pfc_pause_quanta), "65535", NULL, 1, 65535, 4 },
    { "switch", "pfc_watchdog", CFG_STR, F(watchdog_text), "off", NULL, 0, 0, 0 },
    { "switch", "pfc_watchdog_restore", CFG_TIME, F(pfc_watchdog_restore), "200ms", NULL, 0, 0, 0 },
    { "switch", "dwrr_weights", CFG_STR, F(dwrr_text), "", NULL, 0, 0, 0 },
    { "switch", "deadlock_threshold", CFG_TIME, F(deadlock_threshold), "1ms", NULL, 0, 0, 0 },
    /* 600 ms: BFD's detection time with Dell SmartFabric OS10's defaults (200 ms x 3); see README */
    { "switch", "route_convergence", CFG_TIME, F(route_convergence), "600ms", NULL, 0, 0, 0 },
    /* Load balancing: the defaults are ECMP per QP and go-back-N, as before */
    { "switch", "load_balance", CFG_ENUM, F(lb), "ecmp", "ecmp|flowlet|spray|adaptive", 0, 0, 0 },
    { "switch", "flowlet_gap", CFG_TIME, F(flowlet_gap), "20us", NULL, 0, 0, 0 },

    { "nic", "mtu", CFG_UINT, F(mtu), "4096", NULL, 256, 4096, 4 },
    { "nic", "cc", CFG_ENUM, F(cc), "dcqcn", CC_CHOICES, 0, 0, 0 },
    { "nic", "cc_preset", CFG_STR, F(cc_preset), "connectx", NULL, 0, 0, 0 },
    { "nic", "ack_every", CFG_UINT, F(ack_every), "4", NULL, 1, 65535, 4 },
    /* local ACK timeout 4.096us x 2^14, the perftest/rc_pingpong default QP timeout */
    { "nic", "rto", CFG_TIME, F(rto), "67108864ns", NULL, 0, 0, 0 },
    { "nic", "nak_interval", CFG_TIME, F(nak_interval), "500us", NULL, 0, 0, 0 },
    { "nic", "data_priority", CFG_UINT, F(data_priority), "3", NULL, 0, 7, 1 },
    { "nic", "cnp_priority", CFG_UINT, F(cnp_priority), "6", NULL, 0, 7, 1 },
    { "nic", "ack_priority", CFG_UINT, F(ack_priority), "6", NULL, 0, 7, 1 },
    { "nic", "pfc", CFG_BOOL, F(nic_pfc), "on", NULL, 0, 0, 0 },
    { "nic", "rx_buffer", CFG_SIZE, F(nic_rx_buffer), "256KiB", NULL, 0, 0, 0 },
    { "nic", "receiver", CFG_ENUM, F(rx_order), "go-back-n", "go-back-n|ooo-place", 0, 0, 0 },
    /* NCCL's multi-QP connections (net_ib.cc): QPs per connection, and whether each message is
     * split over all of them (on) or the messages take them in turn (off, NCCL's default) */
    { "nic", "qps_per_connection", CFG_UINT, F(qps_per_connection), "1", NULL, 1, 128, 4 },
    { "nic", "split_data_on_qps", CFG_BOOL, F(split_data_on_qps), "off", NULL, 0, 0, 0 },

};

static const struct cfg_key output_keys[] = {
    { "output", "dir", CFG_STR, F(out_dir), "", NULL, 0, 0, 0 },
    { "output", "queue_sample", CFG_TIME, F(queue_sample), "1us", NULL, 0, 0, 0 },
    { "output", "counter_sample", CFG_TIME, F(counter_sample), "10us", NULL, 0, 0, 0 },
    { "output", "sample_ports", CFG_STR, F(sample_ports), "auto", NULL, 0, 0, 0 },
    { "output", "sample_scale", CFG_STR, F(sample_scale), "auto", NULL, 0, 0, 0 },
    { "output", "compress", CFG_ENUM, F(compress), "off", "off|gzip", 0, 0, 0 },
    { "output", "plots", CFG_BOOL, F(plots), "on", NULL, 0, 0, 0 },
    { "output", "pcap", CFG_STR, F(pcap), "", NULL, 0, 0, 0 },
    { "output", "pcap_snaplen", CFG_UINT, F(pcap_snaplen), "0", NULL, 0, 65535, 4 },
};
#undef F

/* At most: the fixed sections, one block per algorithm, [output]. */
#define MAX_BLOCKS (CC_COUNT + 2)

/* The key tables bound to S's storage, in the order of the expanded scenario's sections. */
static size_t scenario_blocks(const struct scenario *s, struct cfg_block *out)
{
    size_t n = 0;
    out[n++] = (struct cfg_block){ core_keys, G_N_ELEMENTS(core_keys), (void *)s };
    for (int i = 0; i < CC_COUNT; i++)
        if (cc_registry[i]->section)
            out[n++] = (struct cfg_block){ cc_registry[i]->keys, cfg_count(cc_registry[i]->keys), s->cc_params[i] };
    out[n++] = (struct cfg_block){ output_keys, G_N_ELEMENTS(output_keys), (void *)s };
    return n;
}

/* The key SECTION.KEY (KEY NULL: any key of SECTION) in the scenario's blocks, and its block. */
static const struct cfg_key *find_key(const struct cfg_block *b, size_t nb, const char *section, const char *key,
                                      const struct cfg_block **owner)
{
    for (size_t j = 0; j < nb; j++) {
        const struct cfg_key *k = cfg_find(&b[j], section, key);
        if (k) {
            *owner = &b[j];
            return k;
        }
    }
    return NULL;
}

bool scenario_key_at(size_t i, struct scenario_key_info *out)
{
    struct scenario none = { 0 };
    struct cfg_block b[MAX_BLOCKS];
    size_t nb = scenario_blocks(&none, b);
    for (size_t j = 0; j < nb; j++) {
        if (i >= b[j].n) {
            i -= b[j].n;
            continue;
        }
        const struct cfg_key *k = &b[j].keys[i];
        *out = (struct scenario_key_info){ k->section, k->key, k->deflt,
                                           k->type == CFG_SIZE ? "size" : k->type == CFG_RATE ? "rate"
                                           : k->type == CFG_TIME ? "time" : NULL };
        return true;
    }
    return false;
}

void scenario_key_error(GError **err, const struct scenario *s, const char *section,
                        const char *key, const char *value, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *what = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    cfg_key_error(err, s->path, section, key, value, "%s", what);
    g_free(what);
}

gboolean hostlist_parse(const char *text, uint32_t nhosts, struct hostlist *out, char **why)
{
    out->ids = NULL;
    out->n = 0;
    if (!text || !*text) {
        *why = g_strdup("empty host list: expected host numbers and ranges such as 0-15,20");
        return FALSE;
    }
    GArray *ids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    char **parts = g_strsplit(text, ",", -1);
    gboolean ok = TRUE;
    /* one bit per host finds a host listed twice in linear time */
    uint64_t *listed = g_new0(uint64_t, ((size_t)nhosts + 63) / 64 + 1);
    for (int i = 0; parts[i] && ok; i++) {
        char *p = g_strstrip(parts[i]);
        char *dash = strchr(p, '-');
        uint64_t a, b;
        if (dash) {
            *dash = 0;
            char *q = g_strstrip(dash + 1);
            ok = cfg_parse_uint(g_strstrip(p), &a) && cfg_parse_uint(q, &b);
            if (!ok || a > b) {
                *why = g_strdup_printf("'%s' is not a host range: expected FIRST-LAST with FIRST <= LAST, e.g. 0-15", text);
                ok = FALSE;
                break;
            }
        } else {
            ok = cfg_parse_uint(p, &a);
            b = a;
            if (!ok) {
                *why = g_strdup_printf("'%s' is not a host list: expected host numbers and ranges such as 0-15,20", text);
                break;
            }
        }
        if (b >= nhosts) {
            *why = g_strdup_printf("host %" G_GUINT64_FORMAT " does not exist: the fabric has hosts 0-%u", b, nhosts - 1);
            ok = FALSE;
            break;
        }
        for (uint64_t h = a; h <= b; h++) {
            uint32_t v = (uint32_t)h;
            if (listed[v / 64] & (1ull << (v % 64))) {
                *why = g_strdup_printf("host %u is listed twice", v);
                ok = FALSE;
                break;
            }
            listed[v / 64] |= 1ull << (v % 64);
            g_array_append_val(ids, v);
        }
    }
    g_free(listed);
    g_strfreev(parts);
    if (!ok) {
        g_array_free(ids, TRUE);
        return FALSE;
    }
    out->n = ids->len;
    out->ids = (uint32_t *)g_array_free(ids, FALSE);
    return TRUE;
}

void hostlist_clear(struct hostlist *h)
{
    g_free(h->ids);
    h->ids = NULL;
    h->n = 0;
}

void scenario_free(struct scenario *s)
{
    if (!s)
        return;
    struct cfg_block b[MAX_BLOCKS];
    size_t nb = scenario_blocks(s, b);
    for (size_t j = 0; j < nb; j++)
        if (b[j].base)
            cfg_free_strings(&b[j]);
    for (int i = 0; i < CC_COUNT; i++)
        g_free(s->cc_params[i]);
    if (s->workloads)
        g_ptr_array_unref(s->workloads);
    if (s->faults)
        g_ptr_array_unref(s->faults);
    if (s->server)
        named_section_free(s->server);
    if (s->cluster)
        named_section_free(s->cluster);
    if (s->expanded)
        g_key_file_unref(s->expanded);
    g_free(s->path);
    g_free(s->dir);
    g_free(s);
}

/* The scenario name as one harmless path component: letters, digits and -_.+ kept, anything
 * else (a '/', "..") made '_', no leading dot, at most 128 bytes; so results/NAME stays
 * inside results/. */
static char *path_component(const char *name)
{
    GString *g = g_string_new(NULL);
    for (const char *p = name; *p && g->len < 128; p++)
        g_string_append_c(g, g_ascii_isalnum(*p) || strchr("-_.+", *p) ? *p : '_');
    if (g->len && g->str[0] == '.')
        g->str[0] = '_';
    if (!g->len)
        g_string_assign(g, "scenario");
    return g_string_free(g, FALSE);
}

/* The host link rate of an edge-list file: the fastest `link` with a host at one end. A light
 * read for the rate-derived defaults (Kmin/Kmax, the presets' rate-scaled steps, BDP);
 * models/topology.c parses and checks the file in full. FALSE when the file cannot tell. */
static gboolean edge_host_rate(const struct scenario *s, uint64_t *rate, uint64_t *slowest)
{
    char *path = g_path_is_absolute(s->edges_file) ? g_strdup(s->edges_file)
                                                   : g_build_filename(s->dir, s->edges_file, NULL);
    char *text = NULL;
    gboolean ok = g_file_get_contents(path, &text, NULL, NULL);
    g_free(path);
    if (!ok)
        return FALSE;
    GHashTable *hosts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    *rate = 0;
    *slowest = UINT64_MAX;
    char **lines = g_strsplit(text, "\n", -1);
    for (char **l = lines; *l; l++) {
        char **f = g_strsplit_set(g_strstrip(*l), " \t", -1);
        char *w[5] = { NULL };
        int n = 0;
        for (char **x = f; *x && n < 5; x++)
            if (**x)
                w[n++] = *x;
        uint64_t r;
        if (n >= 2 && !strcmp(w[0], "host"))
            g_hash_table_add(hosts, g_strdup(w[1]));
        else if (n >= 4 && !strcmp(w[0], "link") &&
                 (g_hash_table_contains(hosts, w[1]) || g_hash_table_contains(hosts, w[2])) &&
                 units_parse_rate(w[3], &r, NULL) && r) {
            *rate = MAX(*rate, r);
            *slowest = MIN(*slowest, r);
        }
        g_strfreev(f);
    }
    g_strfreev(lines);
    g_hash_table_unref(hosts);
    g_free(text);
    return *rate > 0;
}

static gboolean derive_defaults(struct scenario *s, GKeyFile *kf)
{
    /* an edge list's hosts run at the rate of their links, not at [topology] host_rate's default */
    uint64_t er, slowest;
    if (s->topo == TOPO_EDGES && *s->edges_file && !g_key_file_has_key(kf, "topology", "host_rate", NULL) &&
        edge_host_rate(s, &er, &slowest)) {
        s->host_rate = er;
        s->host_rate_from_edges = slowest == er ? 1 : 2;
    }
    if (!g_key_file_has_key(kf, "topology", "fabric_rate", NULL))
        s->fabric_rate = s->host_rate;
    if (!g_key_file_has_key(kf, "topology", "host_link_delay", NULL))
        s->host_link_delay = s->link_delay;
    /* ECN defaults: the Alibaba production values of the HPCC paper, scaled by rate, in 128-bit
     * products (100 KB x rate overflows 64 bits above 184 Tb/s) */
    if (!g_key_file_has_key(kf, "switch", "ecn_kmin", NULL))
        s->ecn_kmin = (uint64_t)((unsigned __int128)100000u * s->host_rate / 25000000000ULL);
    if (!g_key_file_has_key(kf, "switch", "ecn_kmax", NULL))
        s->ecn_kmax = (uint64_t)((unsigned __int128)400000u * s->host_rate / 25000000000ULL);
    if (!*s->name) {
        g_free(s->name);
        char *b = g_path_get_basename(s->path);
        char *dot = strrchr(b, '.');
        if (dot)
            *dot = 0;
        s->name = b;
    }
    if (!*s->out_dir) {
        g_free(s->out_dir);
        char *folder = path_component(s->name);
        s->out_dir = g_build_filename("results", folder, NULL);
        g_free(folder);
    }
    return TRUE;
}

static void build_expanded(struct scenario *s)
{
    s->expanded = g_key_file_new();
    struct cfg_block b[MAX_BLOCKS];
    size_t nb = scenario_blocks(s, b);
    for (size_t j = 0; j < nb; j++)
        for (size_t i = 0; i < b[j].n; i++) {
            const struct cfg_key *k = &b[j].keys[i];
            if (!strcmp(k->section, "topology") && !strcmp(k->key, "file") && !*s->edges_file)
                continue;
            char *v = cfg_format_value(&b[j], k);
            g_key_file_set_value(s->expanded, k->section, k->key, v);
            g_free(v);
        }
    GPtrArray *lists[2] = { s->workloads, s->faults };
    const char *types[2] = { "workload", "fault" };
    for (int l = 0; l < 2; l++)
        for (guint i = 0; i < lists[l]->len; i++) {
            struct named_section *n = g_ptr_array_index(lists[l], i);
            char *group = g_strdup_printf("%s %s", types[l], n->name);
            for (guint k = 0; k < n->order->len; k++) {
                const char *key = g_ptr_array_index(n->order, k);
                g_key_file_set_value(s->expanded, group, key, g_hash_table_lookup(n->keys, key));
            }
            g_free(group);
        }
    const struct named_section *raw[2] = { s->server, s->cluster };
    for (int l = 0; l < 2; l++)
        for (guint k = 0; raw[l] && k < raw[l]->order->len; k++) {
            const char *key = g_ptr_array_index(raw[l]->order, k);
            g_key_file_set_value(s->expanded, raw[l]->name, key, g_hash_table_lookup(raw[l]->keys, key));
        }
}

/* Every section a scenario may have, for the unknown-section message. */
static char *section_names(const struct cfg_block *b, size_t nb)
{
    GString *g = g_string_new(NULL);
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (size_t j = 0; j < nb; j++)
        for (size_t i = 0; i < b[j].n; i++)
            if (g_hash_table_add(seen, (gpointer)b[j].keys[i].section))
                g_string_append_printf(g, "%s, ", b[j].keys[i].section);
    g_hash_table_destroy(seen);
    g_string_append(g, "server, cluster, workload NAME, fault NAME or sweep");
    return g_string_free(g, FALSE);
}

/* The values of one fixed or algorithm section. */
static gboolean load_section(struct scenario *s, GKeyFile *kf, const char *grp, const struct cfg_block *b, size_t nb,
                             GError **err)
{
    gsize nk = 0;
    char **ks = g_key_file_get_keys(kf, grp, &nk, NULL);
    gboolean ok = TRUE;
    for (gsize k = 0; k < nk && ok; k++) {
        const struct cfg_block *owner = NULL;
        const struct cfg_key *kd = find_key(b, nb, grp, ks[k], &owner);
        if (!kd) {
            GString *valid = g_string_new(NULL);
            for (size_t j = 0; j < nb; j++)
                for (size_t i = 0; i < b[j].n; i++)
                    if (!strcmp(b[j].keys[i].section, grp))
                        g_string_append_printf(valid, "%s%s", valid->len ? ", " : "", b[j].keys[i].key);
            scenario_key_error(err, s, grp, ks[k], NULL, "unknown key: [%s] has %s", grp, valid->str);
            g_string_free(valid, TRUE);
            ok = FALSE;
            break;
        }
        char *v = g_key_file_get_value(kf, grp, ks[k], NULL);
        g_strstrip(v);
        ok = cfg_set_value(owner, kd, s->path, v, err);
        g_free(v);
    }
    g_strfreev(ks);
    return ok;
}

static gboolean load_named_section(struct scenario *s, GKeyFile *kf, const char *grp, GError **err)
{
    bool workload = g_str_has_prefix(grp, "workload");
    struct named_section *n = cfg_load_named(kf, s->path, grp, workload ? "workload" : "fault",
                                             workload ? workload_kinds : fault_kinds, err);
    if (!n)
        return FALSE;
    gboolean ok = TRUE;
    for (guint i = 0; workload && i < s->workloads->len; i++)
        if (!strcmp(((struct named_section *)g_ptr_array_index(s->workloads, i))->name, n->name)) {
            scenario_key_error(err, s, grp, NULL, NULL, "a workload with this name already exists");
            ok = FALSE;
        }
    g_ptr_array_add(workload ? s->workloads : s->faults, n);
    return ok;
}

/* Derived defaults, presets and checks: the fixed sections, then each algorithm's. */
static gboolean complete(struct scenario *s, GKeyFile *kf, GError **err)
{
    if (!derive_defaults(s, kf))
        return FALSE;
    for (int i = 0; i < CC_COUNT; i++)
        if (cc_registry[i]->derive && !cc_registry[i]->derive(s->cc_params[i], s, kf, err))
            return FALSE;
    if (!scenario_validate_fixed(s, err))
        return FALSE;
    for (int i = 0; i < CC_COUNT; i++)
        if (cc_registry[i]->validate && !cc_registry[i]->validate(s->cc_params[i], s, err))
            return FALSE;
    return TRUE;
}

struct scenario *scenario_load(const char *path, const char *const *sets, GError **err)
{
    GKeyFile *kf = cfg_read(path, sets, err);
    if (!kf)
        return NULL;
    struct scenario *s = g_new0(struct scenario, 1);
    s->path = g_strdup(path);
    s->dir = g_path_get_dirname(path);
    s->workloads = g_ptr_array_new_with_free_func(named_section_free);
    s->faults = g_ptr_array_new_with_free_func(named_section_free);
    for (int i = 0; i < CC_COUNT; i++)
        s->cc_params[i] = cc_registry[i]->params_size ? g_malloc0(cc_registry[i]->params_size) : NULL;
    struct cfg_block b[MAX_BLOCKS];
    size_t nb = scenario_blocks(s, b);

    /* Defaults first, then the file's values on top. */
    for (size_t j = 0; j < nb; j++)
        for (size_t i = 0; i < b[j].n; i++)
            if (b[j].keys[i].deflt && !cfg_set_value(&b[j], &b[j].keys[i], path, b[j].keys[i].deflt, err))
                goto fail;

    gsize ngroups = 0;
    char **groups = g_key_file_get_groups(kf, &ngroups);
    gboolean ok = TRUE;
    for (gsize g = 0; g < ngroups && ok; g++) {
        const char *grp = groups[g];
        const struct cfg_block *owner;
        if (g_str_has_prefix(grp, "workload ") || !strcmp(grp, "workload") || g_str_has_prefix(grp, "fault ") ||
            !strcmp(grp, "fault"))
            ok = load_named_section(s, kf, grp, err);
        else if (!strcmp(grp, "server") || !strcmp(grp, "cluster"))
            /* kept as text: models/server.c owns their keys and checks them */
            *(grp[0] == 's' ? &s->server : &s->cluster) = cfg_load_raw(kf, grp);
        else if (!strcmp(grp, "sweep"))
            continue; /* read by `rocesim sweep` and `rocesim tune` (tune/sweep.c); `run` ignores it */
        else if (!find_key(b, nb, grp, NULL, &owner)) {
            char *names = section_names(b, nb);
            g_set_error(err, SCENARIO_ERROR, 1, "%s: [%s]: unknown section: expected %s", path, grp, names);
            g_free(names);
            ok = FALSE;
        } else
            ok = load_section(s, kf, grp, b, nb, err);
    }
    g_strfreev(groups);
    if (!ok || !complete(s, kf, err))
        goto fail;
    if (s->workloads->len == 0) {
        g_set_error(err, SCENARIO_ERROR, 1, "%s: no [workload NAME] section: nothing to simulate", path);
        goto fail;
    }
    build_expanded(s);
    g_key_file_unref(kf);
    return s;
fail:
    g_key_file_unref(kf);
    scenario_free(s);
    return NULL;
}
