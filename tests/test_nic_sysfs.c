/* NIC readers on fixture trees: RoCE v2 GID selection (v1/v2 pairs, IPv4, IPv6, VLAN, bond),
 * hw_counters, counter deltas across resets, the ethtool ioctl's error path, and the DCQCN
 * knobs of every layout -> a scenario fragment that `rocesim check` accepts. */
#include <sys/stat.h>
#include "replay/nic_knobs.h"
#include "replay/nic_sysfs.h"
#include "replay/sampler.h"
#include "tests/testutil.h"

static void put(const char *root, const char *rel, const char *text)
{
    char *p = g_build_filename(root, rel, NULL), *d = g_path_get_dirname(p);
    g_mkdir_with_parents(d, 0755);
    CU_ASSERT_FATAL(g_file_set_contents(p, text, -1, NULL));
    g_free(d);
    g_free(p);
}

/* One GID table entry as the kernel lays it out. */
static void gid(const char *root, const char *dev, int i, const char *g, const char *type, const char *ndev)
{
    char *a = g_strdup_printf("%s/ports/1/gids/%d", dev, i);
    char *b = g_strdup_printf("%s/ports/1/gid_attrs/types/%d", dev, i);
    char *c = g_strdup_printf("%s/ports/1/gid_attrs/ndevs/%d", dev, i);
    char *gl = g_strconcat(g, "\n", NULL), *tl = g_strconcat(type, "\n", NULL), *nl = g_strconcat(ndev, "\n", NULL);
    put(root, a, gl);
    put(root, b, tl);
    put(root, c, nl);
    g_free(a);
    g_free(b);
    g_free(c);
    g_free(gl);
    g_free(tl);
    g_free(nl);
}

static void test_gid_selection(void)
{
    char *root = test_tmpdir();
    const char *v4 = "0000:0000:0000:0000:0000:ffff:c0a8:0001";       /* 192.168.0.1 */
    const char *vlan = "0000:0000:0000:0000:0000:ffff:c0a8:6401";     /* 192.168.100.1 */
    /* the kernel adds a v1 and a v2 entry per address */
    gid(root, "mlx5_0", 0, "fe80:0000:0000:0000:0202:c9ff:fe00:0001", "IB/RoCE v1", "ens1");
    gid(root, "mlx5_0", 1, "fe80:0000:0000:0000:0202:c9ff:fe00:0001", "RoCE v2", "ens1");
    gid(root, "mlx5_0", 2, v4, "IB/RoCE v1", "ens1");
    gid(root, "mlx5_0", 3, v4, "RoCE v2", "ens1");
    gid(root, "mlx5_0", 4, vlan, "IB/RoCE v1", "ens1.100");
    gid(root, "mlx5_0", 5, vlan, "RoCE v2", "ens1.100");
    gid(root, "mlx5_0", 6, "2001:0db8:0000:0000:0000:0000:0000:0001", "IB/RoCE v1", "ens1");
    gid(root, "mlx5_0", 7, "2001:0db8:0000:0000:0000:0000:0000:0001", "RoCE v2", "ens1");
    /* an empty slot */
    gid(root, "mlx5_0", 8, "0000:0000:0000:0000:0000:0000:0000:0000", "RoCE v2", "");
    GError *e = NULL;
    CU_ASSERT_EQUAL(nic_gid_index(root, "mlx5_0", 1, "192.168.0.1", NULL, &e), 3);
    CU_ASSERT_EQUAL(nic_gid_index(root, "mlx5_0", 1, "192.168.0.1", "ens1", &e), 3);
    CU_ASSERT_EQUAL(nic_gid_index(root, "mlx5_0", 1, "192.168.100.1", "ens1.100", &e), 5);
    CU_ASSERT_EQUAL(nic_gid_index(root, "mlx5_0", 1, "2001:db8::1", NULL, &e), 7);
    /* the VLAN address is not on the parent netdev */
    CU_ASSERT_EQUAL(nic_gid_index(root, "mlx5_0", 1, "192.168.100.1", "ens1", &e), -1);
    CU_ASSERT(e && strstr(e->message, "no RoCE v2 GID for 192.168.100.1 on ens1"));
    g_clear_error(&e);
    CU_ASSERT_EQUAL(nic_gid_index(root, "mlx5_0", 1, "10.0.0.9", NULL, &e), -1);
    CU_ASSERT(e && strstr(e->message, "no RoCE v2 GID for 10.0.0.9") && strstr(e->message, "3 ::ffff") == NULL);
    g_clear_error(&e);
    CU_ASSERT_EQUAL(nic_gid_index(root, "mlx5_0", 1, "not-an-ip", NULL, &e), -1);
    g_clear_error(&e);
    /* a bond: the address lives on bond0 */
    gid(root, "mlx5_bond_0", 0, v4, "IB/RoCE v1", "bond0");
    gid(root, "mlx5_bond_0", 1, v4, "RoCE v2", "bond0");
    CU_ASSERT_EQUAL(nic_gid_index(root, "mlx5_bond_0", 1, "192.168.0.1", "bond0", &e), 1);
    CU_ASSERT_EQUAL(nic_gid_index(root, "mlx5_bond_0", 1, "192.168.0.1", "ens1", &e), -1);
    g_clear_error(&e);
    CU_ASSERT_EQUAL(nic_gid_index(root, "mlx5_9", 1, "192.168.0.1", NULL, &e), -1);
    CU_ASSERT(e && strstr(e->message, "no GID table"));
    g_clear_error(&e);
    test_rmtree(root);
    g_free(root);
}

static void test_hw_counters(void)
{
    char *root = test_tmpdir();
    put(root, "mlx5_0/ports/1/hw_counters/rp_cnp_handled", "7\n");
    put(root, "mlx5_0/ports/1/hw_counters/np_ecn_marked_roce_packets", "5\n");
    put(root, "mlx5_0/ports/1/hw_counters/out_of_sequence", "18446744073709551615\n");
    put(root, "mlx5_0/ports/1/hw_counters/lifespan", "10\n");
    struct counter_set c = { 0 };
    GError *e = NULL;
    CU_ASSERT_FATAL(nic_hw_counters(root, "mlx5_0", 1, &c, &e));
    CU_ASSERT_EQUAL_FATAL(c.names->len, 3);
    CU_ASSERT_STRING_EQUAL(g_ptr_array_index(c.names, 0), "np_ecn_marked_roce_packets");
    CU_ASSERT_EQUAL(g_array_index(c.values, uint64_t, 0), 5);
    CU_ASSERT_EQUAL(g_array_index(c.values, uint64_t, 1), UINT64_MAX);
    CU_ASSERT_STRING_EQUAL(g_ptr_array_index(c.names, 2), "rp_cnp_handled");
    counter_set_clear(&c);
    put(root, "mlx5_0/ports/1/hw_counters/rp_cnp_handled", "seven\n");
    CU_ASSERT_FALSE(nic_hw_counters(root, "mlx5_0", 1, &c, &e));
    CU_ASSERT(e && strstr(e->message, "rp_cnp_handled: 'seven' is not a counter value"));
    g_clear_error(&e);
    test_rmtree(root);
    g_free(root);
}

static void test_counter_deltas(void)
{
    CU_ASSERT_EQUAL(counter_delta(10, 15), 5);
    CU_ASSERT_EQUAL(counter_delta(5, 5), 0);
    /* reset between samples: the new value counted from zero */
    CU_ASSERT_EQUAL(counter_delta(100, 3), 3);
    CU_ASSERT_EQUAL(counter_delta(UINT64_MAX, 0), 0);
    /* samples 10, 40, (reset) 5, 25: total increase 30 + 5 + 20 = 55 */
    uint64_t s[] = { 10, 40, 5, 25 }, tot = 0;
    for (int i = 1; i < 4; i++)
        tot += counter_delta(s[i - 1], s[i]);
    CU_ASSERT_EQUAL(tot, 55);
}

/* The sampler on a fixture tree: no rows for the first sample, then per counter its increase
 * since the previous sample, a reset counted from zero, a counter the firmware adds later
 * counted from zero, nothing before the interval is up. */
static void test_sampler(void)
{
    char *root = test_tmpdir();
    put(root, "mlx5_0/ports/1/hw_counters/np_cnp_sent", "10\n");
    put(root, "mlx5_0/ports/1/hw_counters/out_of_sequence", "100\n");
    struct sampler s;
    sampler_begin(&s, root, "mlx5_0", 1, NULL, 1000, 5000);
    CU_ASSERT_EQUAL(s.rows->len, 0);
    put(root, "mlx5_0/ports/1/hw_counters/np_cnp_sent", "40\n");
    CU_ASSERT_EQUAL(sampler_tick(&s, 5500), 6000); /* not due yet */
    CU_ASSERT_EQUAL(s.rows->len, 0);
    put(root, "mlx5_0/ports/1/hw_counters/out_of_sequence", "3\n"); /* reset */
    CU_ASSERT_EQUAL(sampler_tick(&s, 6000), 7000);
    put(root, "mlx5_0/ports/1/hw_counters/np_cnp_sent", "45\n");
    put(root, "mlx5_0/ports/1/hw_counters/rp_cnp_handled", "2\n");
    CU_ASSERT_EQUAL(sampler_tick(&s, 9500), 9501); /* late: the next one is not owed at once */
    char *rows = sampler_end(&s, 9600);
    CU_ASSERT_STRING_EQUAL(rows, "6000,1,np_cnp_sent,30\n6000,1,out_of_sequence,3\n"
                                 "9500,1,np_cnp_sent,5\n9500,1,out_of_sequence,0\n9500,1,rp_cnp_handled,2\n"
                                 "9600,1,np_cnp_sent,0\n9600,1,out_of_sequence,0\n9600,1,rp_cnp_handled,0\n");
    g_free(rows);
    sampler_clear(&s);
    /* no device, no netdev: nothing read, nothing written */
    sampler_begin(&s, root, "-", 1, "lo", 0, 0);
    CU_ASSERT_EQUAL(sampler_tick(&s, 1000000), INT64_MAX);
    rows = sampler_end(&s, 2000000);
    CU_ASSERT_STRING_EQUAL(rows, "");
    g_free(rows);
    sampler_clear(&s);
    test_rmtree(root);
    g_free(root);
}

/* lo has no driver statistics: a clear error naming it, nothing else */
static void test_ethtool_error(void)
{
    struct counter_set c = { 0 };
    GError *e = NULL;
    gboolean ok = nic_ethtool_stats("lo", &c, &e);
    if (ok) {
        counter_set_clear(&c);
        return; /* a kernel that gives lo statistics: nothing to check here */
    }
    CU_ASSERT(e && strstr(e->message, "ethtool statistics of lo"));
    CU_ASSERT_PTR_NULL(c.names);
    g_clear_error(&e);
    CU_ASSERT_FALSE(nic_ethtool_stats("no-such-if0", &c, &e));
    g_clear_error(&e);
}

static const char *const rp_knobs[][2] = {
    { "clamp_tgt_rate", "0" }, { "clamp_tgt_rate_after_time_inc", "1" }, { "dce_tcp_g", "1019" },
    { "dce_tcp_rtt", "1" }, { "initial_alpha_value", "1023" }, { "rate_reduce_monitor_period", "4" },
    { "rate_to_set_on_first_cnp", "0" }, { "rpg_ai_rate", "7" }, { "rpg_byte_reset", "32767" },
    { "rpg_gd", "11" }, { "rpg_hai_rate", "50" }, { "rpg_max_rate", "0" }, { "rpg_min_dec_fac", "50" },
    { "rpg_min_rate", "1" }, { "rpg_threshold", "1" }, { "rpg_time_reset", "300" },
};

/* The fragment, appended to a small scenario, passes `rocesim check`, and says what the
 * knobs said in the simulator's units (MLNX_OFED: us, Mb/s, bytes). */
static void check_fragment(const char *dir, const struct nic_knobs *k)
{
    char *frag = nic_knobs_fragment(k);
    CU_ASSERT_PTR_NOT_NULL(strstr(frag, "\nrpg_ai_rate = 7Mbps\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(frag, "\nrpg_time_reset = 300us\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(frag, "\nrpg_byte_reset = 32767B\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(frag, "\nclamp_tgt_rate = off\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(frag, "\nclamp_tgt_rate_after_time_inc = on\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(frag, "\nmin_time_between_cnps = 4us\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(frag, "\ncnp_priority = 6\n"));
    char *ini = g_strconcat("[scenario]\nname = lab-knobs\n\n[topology]\nleaves = 1\nspines = 1\nhosts_per_leaf = 2\n\n[workload w]\nkind = incast\nsenders = 1\nreceiver = 0\nsize = 1MB\n\n",
                            frag, NULL);
    char *p = g_build_filename(dir, "lab.ini", NULL);
    CU_ASSERT_FATAL(g_file_set_contents(p, ini, -1, NULL));
    const char *args[] = { "check", p, NULL };
    char *so = NULL, *se = NULL;
    int rc = test_rocesim(args, NULL, &so, &se);
    if (rc != 0)
        fprintf(stderr, "\nrocesim check: %s%s\n%s\n", so, se, ini);
    CU_ASSERT_EQUAL(rc, 0);
    /* the lab's 7 Mb/s, not the connectx preset's 5 */
    CU_ASSERT_PTR_NOT_NULL(so && strstr(so, "rpg_ai_rate = 7Mbps"));
    g_free(so);
    g_free(se);
    g_free(p);
    g_free(ini);
    g_free(frag);
}

static void test_knob_layouts(void)
{
    for (int layout = 0; layout < 3; layout++) {
        char *root = test_tmpdir();
        char *net = g_build_filename(root, "net", NULL), *dbg = g_build_filename(root, "debug", NULL);
        for (size_t i = 0; i < G_N_ELEMENTS(rp_knobs); i++) {
            char *rel = layout == 0   ? g_strdup_printf("net/ens1/ecn/roce_rp/%s", rp_knobs[i][0])
                        : layout == 1 ? g_strdup_printf("net/ens1/ecn/roce_rp/params/%s", rp_knobs[i][0])
                                      : NULL;
            if (layout == 2) {
                /* upstream names: rp_ + the knob without its rpg_ prefix, two exceptions */
                const char *k = rp_knobs[i][0];
                const char *up = !strcmp(k, "clamp_tgt_rate_after_time_inc") ? "clamp_tgt_rate_ati"
                                 : g_str_has_prefix(k, "rpg_") ? k + 4 : k;
                rel = g_strdup_printf("debug/mlx5/0000:3b:00.0/cc_params/rp_%s", up);
            }
            char *v = g_strconcat(rp_knobs[i][1], "\n", NULL);
            put(root, rel, v);
            g_free(v);
            g_free(rel);
        }
        if (layout < 2) {
            const char *np = layout ? "net/ens1/ecn/roce_np/params/" : "net/ens1/ecn/roce_np/";
            char *a = g_strconcat(np, "min_time_between_cnps", NULL), *b = g_strconcat(np, "cnp_802p_prio", NULL),
                 *c = g_strconcat(np, "cnp_dscp", NULL);
            put(root, a, "4\n");
            put(root, b, "6\n");
            put(root, c, "48\n");
            g_free(a);
            g_free(b);
            g_free(c);
            put(root, "net/ens1/ecn/roce_rp/enable/3", "1\n");
            put(root, "net/ens1/ecn/roce_rp/enable/0", "0\n");
        } else {
            put(root, "debug/mlx5/0000:3b:00.0/cc_params/np_min_time_between_cnps", "4\n");
            put(root, "debug/mlx5/0000:3b:00.0/cc_params/np_cnp_prio", "6\n");
            put(root, "debug/mlx5/0000:3b:00.0/cc_params/np_cnp_dscp", "48\n");
            /* the netdev's device link names the PCI function */
            char *pci = g_build_filename(root, "pci/0000:3b:00.0", NULL), *dev = g_build_filename(net, "ens1", NULL);
            g_mkdir_with_parents(pci, 0755);
            g_mkdir_with_parents(dev, 0755);
            char *link = g_build_filename(dev, "device", NULL);
            CU_ASSERT_FATAL(symlink(pci, link) == 0);
            g_free(link);
            g_free(pci);
            g_free(dev);
        }
        struct nic_knobs k;
        GError *e = NULL;
        CU_ASSERT_FATAL(nic_knobs_read(net, "ens1", dbg, NULL, &k, &e));
        const char *want[] = { "mlnx_ofed", "mlnx_ofed_params", "debugfs" };
        CU_ASSERT_STRING_EQUAL(k.layout, want[layout]);
        CU_ASSERT_EQUAL(k.names->len, G_N_ELEMENTS(rp_knobs) + 3);
        if (layout < 2) {
            CU_ASSERT_EQUAL(k.rp_enable[3], 1);
            CU_ASSERT_EQUAL(k.rp_enable[0], 0);
            CU_ASSERT_EQUAL(k.rp_enable[5], -1);
        }
        check_fragment(root, &k);
        nic_knobs_clear(&k);
        test_rmtree(root);
        g_free(net);
        g_free(dbg);
        g_free(root);
    }
    /* no knobs anywhere: no layout, and no error */
    char *root = test_tmpdir();
    struct nic_knobs k;
    CU_ASSERT(nic_knobs_read(root, "ens1", root, NULL, &k, NULL));
    CU_ASSERT_PTR_NULL(k.layout);
    nic_knobs_clear(&k);
    /* a knob that is not a number is an error naming the file */
    put(root, "ens1/ecn/roce_rp/rpg_ai_rate", "fast\n");
    GError *e = NULL;
    CU_ASSERT_FALSE(nic_knobs_read(root, "ens1", NULL, NULL, &k, &e));
    CU_ASSERT(e && strstr(e->message, "rpg_ai_rate: 'fast' is not a number"));
    g_clear_error(&e);
    nic_knobs_clear(&k);
    test_rmtree(root);
    g_free(root);
}

static CU_TestInfo tests[] = {
    { "RoCE v2 GID selection (v1/v2, IPv4, IPv6, VLAN, bond)", test_gid_selection },
    { "hw_counters", test_hw_counters },
    { "counter deltas across resets", test_counter_deltas },
    { "counters sampled every interval (fixture hw_counters)", test_sampler },
    { "ethtool ioctl error path", test_ethtool_error },
    { "DCQCN knobs, every layout -> fragment rocesim check accepts", test_knob_layouts },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("nic_sysfs", tests)
