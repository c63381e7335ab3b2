/* Scenario files: defaults and derived values (ECN thresholds from the host rate, fabric
 * rate, presets and [dcqcn] overrides, --set overrides); broken scenarios refused through the
 * real command line with exit status 2, a message naming the section, key and problem, and no
 * results folder left behind; `rocesim check` showing the expanded configuration. */
#include <glib/gstdio.h>
#include <string.h>
#include "models/cc.h"
#include "models/cc_dcqcn.h"
#include "models/scenario.h"
#include "tests/testutil.h"

/* ---- helpers ---- */

static struct scenario *load_ok(const char *name, const char *const *sets)
{
    return test_scenario_load(name, sets);
}

static char *expanded(const struct scenario *s, const char *group, const char *key)
{
    return g_key_file_get_value(s->expanded, group, key, NULL);
}

static void assert_expanded(const struct scenario *s, const char *group, const char *key, const char *want)
{
    char *v = expanded(s, group, key);
    CU_ASSERT_PTR_NOT_NULL(v);
    if (v && strcmp(v, want)) {
        fprintf(stderr, "\n  expanded [%s] %s = '%s', want '%s'\n", group, key, v, want);
        CU_FAIL("expanded value");
    }
    g_free(v);
}

static const char *wl_key(const struct scenario *s, const char *name, const char *key)
{
    for (guint i = 0; i < s->workloads->len; i++) {
        const struct named_section *n = g_ptr_array_index(s->workloads, i);
        if (!strcmp(n->name, name))
            return g_hash_table_lookup(n->keys, key);
    }
    return NULL;
}

/* ---- valid scenarios ---- */

static void test_defaults(void)
{
    struct scenario *s = load_ok("minimal.ini", NULL);
    CU_ASSERT_STRING_EQUAL(s->name, "minimal"); /* from the file name */
    CU_ASSERT_STRING_EQUAL(s->out_dir, "results/minimal");
    CU_ASSERT_EQUAL(s->seed, 1);
    CU_ASSERT_EQUAL(s->stop, PS_PER_S);
    CU_ASSERT_EQUAL(s->topo, TOPO_LEAF_SPINE);
    CU_ASSERT_EQUAL(s->leaves, 2);
    CU_ASSERT_EQUAL(s->spines, 2);
    CU_ASSERT_EQUAL(s->hosts_per_leaf, 8);
    CU_ASSERT_EQUAL(s->leaves * s->hosts_per_leaf, 16);
    CU_ASSERT_EQUAL(s->host_rate, 100000000000ull);
    CU_ASSERT_EQUAL(s->fabric_rate, s->host_rate);       /* defaults to host_rate */
    CU_ASSERT_EQUAL(s->link_delay, PS_PER_US);
    CU_ASSERT_EQUAL(s->host_link_delay, s->link_delay);  /* defaults to link_delay */
    CU_ASSERT_EQUAL(s->buffer, 32000000);
    CU_ASSERT(s->ecn);
    /* 100 KB and 400 KB x BW/25G: 400 KB and 1600 KB at 100 Gb/s */
    CU_ASSERT_EQUAL(s->ecn_kmin, 400000);
    CU_ASSERT_EQUAL(s->ecn_kmax, 1600000);
    CU_ASSERT_DOUBLE_EQUAL(s->ecn_pmax, 0.2, 1e-12);
    CU_ASSERT_EQUAL(s->ecn_mark, MARK_DEQUEUE);
    CU_ASSERT(s->pfc); /* RoCE runs lossless by default */
    CU_ASSERT_EQUAL(s->lossless_mask, 1u << 3);
    CU_ASSERT_EQUAL(s->mtu, 4096);
    CU_ASSERT_PTR_EQUAL(cc_ops_for(s->cc), &cc_dcqcn_ops);
    CU_ASSERT_STRING_EQUAL(s->cc_preset, "connectx");
    CU_ASSERT_EQUAL(s->ack_every, 4);
    CU_ASSERT(s->rto > 0);
    CU_ASSERT_EQUAL(s->data_priority, 3);
    CU_ASSERT_EQUAL(s->cnp_priority, 6);
    CU_ASSERT_EQUAL(s->queue_sample, PS_PER_US);
    /* the connectx preset (shared/reference/models.md 1.3.4, ConnectX column) */
    const struct dcqcn_params *d = cc_dcqcn_params(s);
    CU_ASSERT_EQUAL(d->style, DCQCN_GATED);
    CU_ASSERT_EQUAL(d->min_time_between_cnps, 4 * PS_PER_US);
    CU_ASSERT_EQUAL(d->dce_tcp_rtt, PS_PER_US);
    CU_ASSERT_EQUAL(d->dce_tcp_g, 1019);
    CU_ASSERT_DOUBLE_EQUAL(d->g, 5.0 / 1024, 1e-15);     /* (1024 - 1019) / 1024 */
    CU_ASSERT_EQUAL(d->initial_alpha_value, 1023);
    CU_ASSERT_EQUAL(d->rate_reduce_monitor_period, 4 * PS_PER_US);
    CU_ASSERT_EQUAL(d->rpg_time_reset, 300 * PS_PER_US);
    CU_ASSERT_EQUAL(d->rpg_byte_reset, 32767);
    CU_ASSERT_EQUAL(d->rpg_threshold, 1);
    CU_ASSERT_EQUAL(d->rpg_ai_rate, 5000000);
    CU_ASSERT_EQUAL(d->rpg_hai_rate, 50000000);
    CU_ASSERT_EQUAL(d->rpg_min_rate, 1000000);
    CU_ASSERT_EQUAL(d->rpg_max_rate, 0);
    CU_ASSERT_EQUAL(d->rate_to_set_on_first_cnp, 0);
    CU_ASSERT_EQUAL(d->rpg_gd, 11);
    CU_ASSERT_EQUAL(d->rpg_min_dec_fac, 50);
    CU_ASSERT_FALSE(d->clamp_tgt_rate);
    CU_ASSERT(d->clamp_tgt_rate_after_time_inc);
    /* the workload, validated as text */
    CU_ASSERT_EQUAL_FATAL(s->workloads->len, 1);
    const struct named_section *w = g_ptr_array_index(s->workloads, 0);
    CU_ASSERT_STRING_EQUAL(w->name, "w");
    CU_ASSERT_STRING_EQUAL(w->kind, "incast");
    CU_ASSERT_STRING_EQUAL(wl_key(s, "w", "senders"), "1-3");
    CU_ASSERT_EQUAL(s->faults->len, 0);
    /* the expanded configuration shows derived values in canonical units */
    assert_expanded(s, "switch", "ecn_kmin", "400KB");
    assert_expanded(s, "switch", "ecn_kmax", "1600KB");
    assert_expanded(s, "topology", "fabric_rate", "100Gbps");
    assert_expanded(s, "topology", "host_link_delay", "1us");
    assert_expanded(s, "dcqcn", "rpg_time_reset", "300us");
    assert_expanded(s, "dcqcn", "rpg_byte_reset", "32767B");
    assert_expanded(s, "workload w", "size", "64KB");
    scenario_free(s);
}

static void test_derived_scale_with_host_rate(void)
{
    struct scenario *s = load_ok("rate25.ini", NULL);
    CU_ASSERT_STRING_EQUAL(s->name, "twentyfive");
    CU_ASSERT_EQUAL(s->seed, 7);
    CU_ASSERT_EQUAL(s->stop, 20 * PS_PER_MS);
    CU_ASSERT_EQUAL(s->host_rate, 25000000000ull);
    CU_ASSERT_EQUAL(s->fabric_rate, 100000000000ull); /* given: not derived */
    CU_ASSERT_EQUAL(s->link_delay, 500 * PS_PER_NS);
    CU_ASSERT_EQUAL(s->host_link_delay, 100 * PS_PER_NS);
    /* 100 KB and 400 KB at 25 Gb/s */
    CU_ASSERT_EQUAL(s->ecn_kmin, 100000);
    CU_ASSERT_EQUAL(s->ecn_kmax, 400000);
    CU_ASSERT_EQUAL(s->leaves * s->hosts_per_leaf, 16);
    /* hpcc_ns3 preset: R_AI and R_HAI are 5 and 50 Mb/s x BW/25G; at 25G that is 5 and 50,
     * but the file overrides rpg_ai_rate = 10Mbps; everything else comes from the preset */
    const struct dcqcn_params *d = cc_dcqcn_params(s);
    CU_ASSERT_STRING_EQUAL(s->cc_preset, "hpcc_ns3");
    CU_ASSERT_EQUAL(d->rpg_ai_rate, 10000000);
    CU_ASSERT_EQUAL(d->rpg_hai_rate, 50000000);
    CU_ASSERT_EQUAL(d->rpg_min_rate, 1000000000);
    CU_ASSERT_EQUAL(d->dce_tcp_g, 1020);
    CU_ASSERT_DOUBLE_EQUAL(d->g, 4.0 / 1024, 1e-15);
    CU_ASSERT_EQUAL(d->initial_alpha_value, 1024);
    CU_ASSERT_EQUAL(d->rpg_byte_reset, 0);
    CU_ASSERT_EQUAL(d->rpg_min_dec_fac, 0);
    CU_ASSERT_EQUAL(d->style, DCQCN_HPCC);
    CU_ASSERT_EQUAL(d->np_feedback, NP_ACK_FLAG); /* HPCC ns-3 has no CNP packet */
    CU_ASSERT_EQUAL(d->min_time_between_cnps, 0);
    assert_expanded(s, "dcqcn", "rpg_ai_rate", "10Mbps");
    assert_expanded(s, "switch", "ecn_kmin", "100KB");
    scenario_free(s);

    /* the same preset at 100 Gb/s scales R_AI and R_HAI by 4 */
    const char *sets[] = { "nic.cc_preset=hpcc_ns3", NULL };
    s = load_ok("minimal.ini", sets);
    CU_ASSERT_EQUAL(cc_dcqcn_params(s)->rpg_ai_rate, 20000000);
    CU_ASSERT_EQUAL(cc_dcqcn_params(s)->rpg_hai_rate, 200000000);
    scenario_free(s);
}

static void test_presets(void)
{
    const char *paper[] = { "nic.cc_preset=dcqcn_paper", NULL };
    struct scenario *s = load_ok("minimal.ini", paper);
    const struct dcqcn_params *d = cc_dcqcn_params(s);
    CU_ASSERT_EQUAL(d->style, DCQCN_PAPER);
    CU_ASSERT_EQUAL(d->min_time_between_cnps, 50 * PS_PER_US);
    CU_ASSERT_EQUAL(d->dce_tcp_rtt, 55 * PS_PER_US);
    CU_ASSERT_DOUBLE_EQUAL(d->g, 1.0 / 256, 1e-15);
    CU_ASSERT_EQUAL(d->rpg_time_reset, 55 * PS_PER_US);
    CU_ASSERT_EQUAL(d->rpg_byte_reset, 10000000);
    CU_ASSERT_EQUAL(d->rpg_threshold, 5);
    CU_ASSERT_EQUAL(d->rpg_ai_rate, 40000000);
    CU_ASSERT_EQUAL(d->rpg_min_rate, 100000000);
    CU_ASSERT(d->clamp_tgt_rate);
    scenario_free(s);

    /* a [dcqcn] g given directly wins over dce_tcp_g */
    s = load_ok("gdirect.ini", NULL);
    CU_ASSERT_DOUBLE_EQUAL(cc_dcqcn_params(s)->g, 0.0625, 1e-15);
    CU_ASSERT_EQUAL(cc_dcqcn_params(s)->dce_tcp_g, 1020);
    scenario_free(s);
}

static void test_set_overrides(void)
{
    const char *sets[] = {
        "switch.ecn_kmin=50KB",
        "topology.host_rate=200Gbps",
        "workload w.size=1MB",        /* the section name with its space */
        "workload.w.prio=5",          /* the dotted form of the same */
        "dcqcn.rpg_ai_rate=7Mbps",    /* wins over the preset */
        "scenario.seed=99",
        NULL,
    };
    struct scenario *s = load_ok("minimal.ini", sets);
    CU_ASSERT_EQUAL(s->ecn_kmin, 50000);
    CU_ASSERT_EQUAL(s->host_rate, 200000000000ull);
    CU_ASSERT_EQUAL(s->fabric_rate, 200000000000ull);   /* follows the overridden host rate */
    CU_ASSERT_EQUAL(s->ecn_kmax, 3200000);              /* 400 KB x 200/25 */
    CU_ASSERT_EQUAL(s->seed, 99);
    CU_ASSERT_EQUAL(cc_dcqcn_params(s)->rpg_ai_rate, 7000000);
    CU_ASSERT_EQUAL(cc_dcqcn_params(s)->rpg_hai_rate, 50000000);   /* still the preset's */
    CU_ASSERT_STRING_EQUAL(wl_key(s, "w", "size"), "1MB");
    CU_ASSERT_STRING_EQUAL(wl_key(s, "w", "prio"), "5");
    CU_ASSERT_STRING_EQUAL(wl_key(s, "w", "senders"), "1-3");
    scenario_free(s);

    /* bad overrides are refused with a message that quotes them */
    const char *bad_syntax[] = { "nodot=5", NULL };
    const char *bad_key[] = { "switch.nonsense=1", NULL };
    const char *bad_value[] = { "switch.ecn_kmin=50", NULL };
    struct {
        const char *const *sets;
        const char *want[3];
    } cases[] = {
        { bad_syntax, { "--set 'nodot=5'", "section.key=value", NULL } },
        { bad_key, { "[switch] nonsense", "unknown key", NULL } },
        { bad_value, { "[switch] ecn_kmin", "no unit", NULL } },
    };
    char *p = test_data_path("minimal.ini");
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        GError *err = NULL;
        s = scenario_load(p, cases[i].sets, &err);
        CU_ASSERT_PTR_NULL(s);
        scenario_free(s);
        CU_ASSERT_PTR_NOT_NULL_FATAL(err);
        for (int k = 0; cases[i].want[k]; k++)
            if (!strstr(err->message, cases[i].want[k])) {
                fprintf(stderr, "\n  '%s' lacks '%s'\n", err->message, cases[i].want[k]);
                CU_FAIL("--set error message");
            }
        g_error_free(err);
    }
    g_free(p);
}

/* ---- broken scenarios through the command line ---- */

struct broken {
    const char *file;        /* under tests/scenarios/broken; NULL = minimal.ini */
    const char *set;         /* --set argument, or NULL */
    const char *want[5];     /* phrases stderr must contain: section, key, problem */
};

static const struct broken broken_cases[] = {
    { "unknown_key.ini", NULL, { "[topology]", "bogus_key", "unknown key" } },
    { "unknown_section.ini", NULL, { "[swtich]", "unknown section" } },
    { "missing_unit.ini", NULL, { "[switch]", "ecn_kmin", "'50' has no unit" } },
    { "negative_size.ini", NULL, { "[switch]", "buffer", "negative" } },
    { "unknown_host.ini", NULL, { "[workload w]", "receiver", "host 99 does not exist", "0-31" } },
    { "kmin_gt_kmax.ini", NULL, { "[switch]", "ecn_kmin", "must not exceed", "ecn_kmax" } },
    { "empty.ini", NULL, { "empty" } },
    { "not_keyfile.ini", NULL, { "not a scenario key file" } },
    { "bad_enum.ini", NULL, { "[switch]", "ecn_mark", "'sometimes'", "dequeue" } },
    { "no_kind.ini", NULL, { "[workload w]", "kind", "missing" } },
    { "unknown_kind.ini", NULL, { "[workload w]", "kind", "'broadcastt'", "unknown workload kind" } },
    { "missing_required.ini", NULL, { "[workload w]", "size", "missing", "incast" } },
    { "flows_bad.ini", NULL, { "flows_bad.csv:3", "start", "'banana' is not a time" } },
    { "bad_mtu.ini", NULL, { "[nic]", "mtu", "'1500'", "RoCE path MTU" } },
    { "unknown_preset.ini", NULL, { "[nic]", "cc_preset", "'cx9'", "unknown preset" } },
    { NULL, "nodot=5", { "--set", "nodot=5", "section.key=value" } },
    { NULL, "switch.ecn_kmin", { "--set", "switch.ecn_kmin", "section.key=value" } },
};

/* Runs `rocesim run FILE -o DIR` and checks: exit 2, the message, no DIR, nothing left in
 * DIR's parent (no half-written temporary folder). */
static void expect_refused(const char *file, const char *set, const char *const *want)
{
    char *tmp = test_tmpdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
    char *dir = g_build_filename(tmp, "res", NULL);
    const char *args[8];
    int a = 0;
    args[a++] = "run";
    args[a++] = file;
    args[a++] = "-o";
    args[a++] = dir;
    if (set) {
        args[a++] = "--set";
        args[a++] = set;
    }
    args[a] = NULL;
    char *out = NULL, *err = NULL;
    int rc = test_rocesim(args, NULL, &out, &err);
    if (rc != 2)
        fprintf(stderr, "\n  %s: exit %d, stderr: %s\n", file, rc, err ? err : "");
    CU_ASSERT_EQUAL(rc, 2);
    for (int k = 0; want[k]; k++)
        if (!err || !strstr(err, want[k])) {
            fprintf(stderr, "\n  %s: stderr '%s' lacks '%s'\n", file, err ? err : "", want[k]);
            CU_FAIL("error message");
        }
    /* the message names the scenario file (a bad --set names the override instead) */
    if (!set) {
        char *base = g_path_get_basename(file);
        if (!strstr(err ? err : "", base) && !strstr(err ? err : "", "flows_bad.csv")) {
            fprintf(stderr, "\n  stderr '%s' does not name %s\n", err ? err : "", base);
            CU_FAIL("file not named");
        }
        g_free(base);
    }
    CU_ASSERT_FALSE(g_file_test(dir, G_FILE_TEST_EXISTS));
    GDir *d = g_dir_open(tmp, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL(d);
    if (d) {
        const char *left = g_dir_read_name(d);
        if (left)
            fprintf(stderr, "\n  left behind: %s\n", left);
        CU_ASSERT_PTR_NULL(left);
        g_dir_close(d);
    }
    CU_ASSERT_PTR_NOT_NULL(out);
    if (out)
        CU_ASSERT_STRING_EQUAL(out, ""); /* nothing on stdout: no summary of a run that did not happen */
    g_free(out);
    g_free(err);
    test_rmtree(tmp);
    g_free(dir);
    g_free(tmp);
}

static void test_broken_scenarios(void)
{
    for (size_t i = 0; i < G_N_ELEMENTS(broken_cases); i++) {
        const struct broken *b = &broken_cases[i];
        char *rel = b->file ? g_build_filename("broken", b->file, NULL) : g_strdup("minimal.ini");
        char *p = test_data_path(rel);
        CU_ASSERT_FATAL(g_file_test(p, G_FILE_TEST_EXISTS));
        expect_refused(p, b->set, b->want);
        g_free(p);
        g_free(rel);
    }
}

/* Random bytes (with NULs and invalid UTF-8) are refused like text that is not a key file. */
static void test_binary_file(void)
{
    char *tmp = test_tmpdir();
    char *p = g_build_filename(tmp, "binary.ini", NULL);
    guint8 bytes[512];
    GRand *r = g_rand_new_with_seed(5);
    for (size_t i = 0; i < sizeof bytes; i++)
        bytes[i] = (guint8)g_rand_int_range(r, 0, 256);
    bytes[0] = 0x7f; /* not '[' nor '#': an ELF-like start */
    bytes[1] = 'E';
    bytes[7] = 0;
    g_rand_free(r);
    CU_ASSERT_FATAL(g_file_set_contents(p, (const char *)bytes, sizeof bytes, NULL));
    /* the scenario sits in its own folder: the check for leftovers looks at another one */
    const char *want[] = { "binary.ini", "not a scenario key file", NULL };
    expect_refused(p, NULL, want);
    test_rmtree(tmp);
    g_free(p);
    g_free(tmp);
}

/* A missing file is refused too (exit 2, names the file). */
static void test_missing_file(void)
{
    const char *want[] = { "no-such-scenario.ini", "cannot read", NULL };
    expect_refused("/nonexistent/no-such-scenario.ini", NULL, want);
}

/* ---- rocesim check ---- */

static void test_check_prints_expanded(void)
{
    char *p = test_data_path("minimal.ini");
    const char *args[] = { "check", p, NULL };
    char *out = NULL, *err = NULL;
    int rc = test_rocesim(args, NULL, &out, &err);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    const char *want[] = {
        "[switch]", "ecn_kmin = 400KB", "ecn_kmax = 1600KB", "fabric_rate = 100Gbps",
        "[dcqcn]", "rpg_time_reset = 300us", "dce_tcp_g = 1019", "[workload w]", "receiver = 0",
        "hosts = 16\n",
        /* 8 hosts x 100G down, 2 x 100G up per leaf */
        "oversubscription = 4.00:1",
        /* host0 -> host8: 4 links of 1 us; a 1-byte write (WRITE ONLY WITH IMMEDIATE) is
         * 1+62+16 (RETH)+4 (ImmDt)+20 = 103 B on the wire = 8.24 ns per link, so one way =
         * 4 x (1 us + 8.24 ns) = 4.03296 us, RTT 8.06592 us, BDP = 100 Gb/s x 8.06592 us / 8
         * = 100824 B */
        "longest_path = 4 links", "base_rtt = 8.06592us", "bdp = 100824B",
        "transfers = 3 (192KB in total)",
        /* the workload's own defaults: prio from [nic] data_priority (3), start 0 */
        "# [workload w]: defaults it takes\nprio = 3   ([nic] data_priority)\nstart = 0ps\n",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++)
        if (!strstr(out, want[i])) {
            fprintf(stderr, "\n  check output lacks '%s'\n", want[i]);
            CU_FAIL("check output");
        }
    /* --set applies to check as well */
    const char *args2[] = { "check", p, "--set", "switch.ecn_kmin=50KB", "--set", "topology.hosts_per_leaf=4", NULL };
    char *out2 = NULL;
    rc = test_rocesim(args2, NULL, &out2, NULL);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out2 ? out2 : "", "ecn_kmin = 50KB"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out2 ? out2 : "", "hosts = 8\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out2 ? out2 : "", "oversubscription = 2.00:1"));
    /* and a broken scenario makes check fail with status 2 */
    char *bad = test_data_path("broken/missing_unit.ini");
    const char *args3[] = { "check", bad, NULL };
    char *err3 = NULL;
    rc = test_rocesim(args3, NULL, NULL, &err3);
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err3 ? err3 : "", "ecn_kmin"));
    g_free(err3);
    g_free(bad);
    g_free(out2);
    g_free(out);
    g_free(err);
    g_free(p);
}

/* An edge-list fabric's derived values come from its links: the 400G edge list of
 * tests/scenarios/edges400 (no [topology] host_rate) gives the same host rate, ECN thresholds
 * (100 KB x 400/25 = 1600 KB, 400 KB x 16 = 6400 KB), hpcc_ns3 steps (5 and 50 Mb/s x 16),
 * headroom, base RTT and BDP as its leaf-spine twin, where 100 Gb/s (the host_rate default)
 * would give 400 KB, 1600 KB and a quarter of the BDP. */
static void test_edges_rates_from_links(void)
{
    const char *names[] = { "edges400/edges.ini", "edges400/leafspine.ini" };
    char *out[2];
    for (int i = 0; i < 2; i++) {
        char *p = test_data_path(names[i]);
        const char *args[] = { "check", p, NULL };
        CU_ASSERT_EQUAL(test_rocesim(args, NULL, &out[i], NULL), 0);
        g_free(p);
    }
    const char *same[] = { "host_rate = 400Gbps\n", "ecn_kmin = 1600KB\n", "ecn_kmax = 6250KiB\n", /* 6400 KB, printed as KiB */
                           "rpg_ai_rate = 80Mbps\n", "rpg_hai_rate = 800Mbps\n", "bdp = ", "base_rtt = ",
                           "headroom (400Gbps ports, 1us links) = " };
    for (size_t k = 0; k < G_N_ELEMENTS(same); k++) {
        const char *a = strstr(out[0] ? out[0] : "", same[k]), *b = strstr(out[1] ? out[1] : "", same[k]);
        CU_ASSERT_PTR_NOT_NULL(a);
        CU_ASSERT_PTR_NOT_NULL(b);
        if (a && b) {
            /* the rest of the line matches too */
            char *la = g_strndup(a, strcspn(a, "\n")), *lb = g_strndup(b, strcspn(b, "\n"));
            CU_ASSERT_STRING_EQUAL(la, lb);
            g_free(la);
            g_free(lb);
        }
    }
    CU_ASSERT_PTR_NOT_NULL(strstr(out[0], "(from the edge list's host links"));
    g_free(out[0]);
    g_free(out[1]);
}

static CU_TestInfo tests[] = {
    { "defaults and derived values", test_defaults },
    { "derived values follow the host rate; [dcqcn] beats the preset", test_derived_scale_with_host_rate },
    { "presets dcqcn_paper and hpcc_ns3; g given directly", test_presets },
    { "--set overrides, including workload NAME.key", test_set_overrides },
    { "broken scenarios: exit 2, precise message, no folder", test_broken_scenarios },
    { "binary file refused", test_binary_file },
    { "missing file refused", test_missing_file },
    { "rocesim check prints the expanded config", test_check_prints_expanded },
    { "edge lists: derived values from the links' rates", test_edges_rates_from_links },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("scenario", tests)
