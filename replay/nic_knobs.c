/* Reading a NIC's DCQCN knobs (see nic_knobs.h). */
#include "replay/nic_knobs.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "replay/replay.h"

/* mlx5 knob -> [dcqcn] key and unit (MLNX_OFED: times in us, rates in Mb/s, bytes). */
enum unit { U_US, U_MBPS, U_BYTES, U_NUM, U_BOOL };
static const struct {
    const char *knob, *key;
    enum unit unit;
} map[] = {
    { "clamp_tgt_rate", "clamp_tgt_rate", U_BOOL },
    { "clamp_tgt_rate_after_time_inc", "clamp_tgt_rate_after_time_inc", U_BOOL },
    { "dce_tcp_g", "dce_tcp_g", U_NUM },
    { "dce_tcp_rtt", "dce_tcp_rtt", U_US },
    { "initial_alpha_value", "initial_alpha_value", U_NUM },
    { "min_time_between_cnps", "min_time_between_cnps", U_US },
    { "rate_reduce_monitor_period", "rate_reduce_monitor_period", U_US },
    { "rate_to_set_on_first_cnp", "rate_to_set_on_first_cnp", U_MBPS },
    { "rpg_ai_rate", "rpg_ai_rate", U_MBPS },
    { "rpg_byte_reset", "rpg_byte_reset", U_BYTES },
    { "rpg_gd", "rpg_gd", U_NUM },
    { "rpg_hai_rate", "rpg_hai_rate", U_MBPS },
    { "rpg_max_rate", "rpg_max_rate", U_MBPS },
    { "rpg_min_dec_fac", "rpg_min_dec_fac", U_NUM },
    { "rpg_min_rate", "rpg_min_rate", U_MBPS },
    { "rpg_threshold", "rpg_threshold", U_NUM },
    { "rpg_time_reset", "rpg_time_reset", U_US },
};

static gboolean read_value(const char *path, char **out, GError **err)
{
    char *t = NULL;
    GError *e = NULL;
    if (!g_file_get_contents(path, &t, NULL, &e)) {
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_RUN, "%s: %s", path, e->message);
        g_error_free(e);
        return FALSE;
    }
    g_strstrip(t);
    char *end = NULL;
    g_ascii_strtoull(t, &end, 10);
    if (!*t || *end) {
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_RUN, "%s: '%.40s' is not a number", path, t);
        g_free(t);
        return FALSE;
    }
    *out = t;
    return TRUE;
}

static int cmp_str(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file of dir whose name starts with prefix, in name order. */
static gboolean read_dir(struct nic_knobs *k, const char *dir, const char *prefix, GError **err)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    if (!d)
        return TRUE;
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    const char *n;
    while ((n = g_dir_read_name(d)))
        if (g_str_has_prefix(n, prefix)) {
            char *p = g_build_filename(dir, n, NULL);
            if (g_file_test(p, G_FILE_TEST_IS_REGULAR))
                g_ptr_array_add(names, g_strdup(n));
            g_free(p);
        }
    g_dir_close(d);
    g_ptr_array_sort(names, cmp_str);
    gboolean ok = TRUE;
    for (guint i = 0; i < names->len && ok; i++) {
        const char *name = g_ptr_array_index(names, i);
        char *p = g_build_filename(dir, name, NULL), *v = NULL;
        if ((ok = read_value(p, &v, err))) {
            g_ptr_array_add(k->names, g_strdup(name));
            g_ptr_array_add(k->values, v);
        }
        g_free(p);
    }
    g_ptr_array_unref(names);
    return ok;
}

static void read_enables(const char *dir, int *en)
{
    for (int p = 0; p < 8; p++) {
        char *f = g_strdup_printf("%s/enable/%d", dir, p), *t = NULL;
        en[p] = g_file_get_contents(f, &t, NULL, NULL) ? atoi(g_strstrip(t)) != 0 : -1;
        g_free(t);
        g_free(f);
    }
}

gboolean nic_knobs_read(const char *net_root, const char *netdev, const char *debugfs_root,
                        const char *pci_bdf, struct nic_knobs *k, GError **err)
{
    memset(k, 0, sizeof *k);
    k->names = g_ptr_array_new_with_free_func(g_free);
    k->values = g_ptr_array_new_with_free_func(g_free);
    for (int p = 0; p < 8; p++)
        k->rp_enable[p] = k->np_enable[p] = -1;
    gboolean ok = TRUE;
    /* MLNX_OFED, with or without params/ */
    for (int v = 0; v < 2 && ok && !k->layout; v++) {
        char *rp = g_strdup_printf("%s/%s/ecn/roce_rp%s", net_root, netdev, v ? "/params" : "");
        char *np = g_strdup_printf("%s/%s/ecn/roce_np%s", net_root, netdev, v ? "/params" : "");
        guint before = k->names->len;
        ok = read_dir(k, rp, "", err) && read_dir(k, np, "", err);
        if (ok && k->names->len > before) {
            k->layout = v ? "mlnx_ofed_params" : "mlnx_ofed";
            k->source = g_strdup_printf("%s/%s/ecn", net_root, netdev);
            char *rpd = g_strdup_printf("%s/%s/ecn/roce_rp", net_root, netdev);
            char *npd = g_strdup_printf("%s/%s/ecn/roce_np", net_root, netdev);
            read_enables(rpd, k->rp_enable);
            read_enables(npd, k->np_enable);
            g_free(rpd);
            g_free(npd);
        }
        g_free(rp);
        g_free(np);
    }
    /* upstream debugfs */
    if (ok && !k->layout && debugfs_root) {
        char *bdf = pci_bdf ? g_strdup(pci_bdf) : NULL;
        if (!bdf) {
            char *link = g_strdup_printf("%s/%s/device", net_root, netdev);
            char *target = g_file_read_link(link, NULL);
            bdf = target ? g_path_get_basename(target) : NULL;
            g_free(target);
            g_free(link);
        }
        if (bdf) {
            char *dir = g_strdup_printf("%s/mlx5/%s/cc_params", debugfs_root, bdf);
            ok = read_dir(k, dir, "rp_", err) && read_dir(k, dir, "np_", err);
            if (ok && k->names->len) {
                k->layout = "debugfs";
                k->source = g_strdup(dir);
            }
            g_free(dir);
        }
        g_free(bdf);
    }
    return ok;
}

/* Upstream debugfs names (drivers/infiniband/hw/mlx5/cong.c) -> the MLNX_OFED knob names. */
static const struct {
    const char *debugfs, *knob;
} alias[] = {
    { "rp_clamp_tgt_rate", "clamp_tgt_rate" },
    { "rp_clamp_tgt_rate_ati", "clamp_tgt_rate_after_time_inc" },
    { "rp_time_reset", "rpg_time_reset" },
    { "rp_byte_reset", "rpg_byte_reset" },
    { "rp_threshold", "rpg_threshold" },
    { "rp_ai_rate", "rpg_ai_rate" },
    { "rp_max_rate", "rpg_max_rate" },
    { "rp_hai_rate", "rpg_hai_rate" },
    { "rp_min_dec_fac", "rpg_min_dec_fac" },
    { "rp_min_rate", "rpg_min_rate" },
    { "rp_rate_to_set_on_first_cnp", "rate_to_set_on_first_cnp" },
    { "rp_dce_tcp_g", "dce_tcp_g" },
    { "rp_dce_tcp_rtt", "dce_tcp_rtt" },
    { "rp_rate_reduce_monitor_period", "rate_reduce_monitor_period" },
    { "rp_initial_alpha_value", "initial_alpha_value" },
    { "rp_gd", "rpg_gd" },
    { "np_min_time_between_cnps", "min_time_between_cnps" },
    { "np_cnp_prio", "cnp_802p_prio" },
    { "np_cnp_dscp", "cnp_dscp" },
};

static const char *canonical(const char *name)
{
    for (size_t i = 0; i < G_N_ELEMENTS(alias); i++)
        if (!strcmp(name, alias[i].debugfs))
            return alias[i].knob;
    return name;
}

char *nic_knobs_fragment(const struct nic_knobs *k)
{
    GString *nic = g_string_new(NULL), *dc = g_string_new(NULL);
    for (guint i = 0; i < k->names->len; i++) {
        const char *n = canonical(g_ptr_array_index(k->names, i));
        const char *v = g_ptr_array_index(k->values, i);
        if (!strcmp(n, "cnp_802p_prio")) {
            guint64 p = g_ascii_strtoull(v, NULL, 10);
            if (p <= 7)
                g_string_append_printf(nic, "cnp_priority = %s\n", v);
            continue;
        }
        for (size_t j = 0; j < G_N_ELEMENTS(map); j++) {
            if (strcmp(n, map[j].knob))
                continue;
            switch (map[j].unit) {
            case U_US: g_string_append_printf(dc, "%s = %sus\n", map[j].key, v); break;
            case U_MBPS: g_string_append_printf(dc, "%s = %sMbps\n", map[j].key, v); break;
            case U_BYTES: g_string_append_printf(dc, "%s = %sB\n", map[j].key, v); break;
            case U_NUM: g_string_append_printf(dc, "%s = %s\n", map[j].key, v); break;
            case U_BOOL: g_string_append_printf(dc, "%s = %s\n", map[j].key, atoi(v) ? "on" : "off"); break;
            }
        }
    }
    char *out = g_strdup_printf("# DCQCN knobs read from %s (%s layout)\n[nic]\ncc = dcqcn\n"
                                "cc_preset = connectx\n%s\n[dcqcn]\n%s",
                                k->source ? k->source : "-", k->layout ? k->layout : "no",
                                nic->str, dc->str);
    g_string_free(nic, TRUE);
    g_string_free(dc, TRUE);
    return out;
}

void nic_knobs_clear(struct nic_knobs *k)
{
    if (k->names)
        g_ptr_array_unref(k->names);
    if (k->values)
        g_ptr_array_unref(k->values);
    g_free(k->source);
    memset(k, 0, sizeof *k);
}
