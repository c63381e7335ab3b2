/* The results module's [output] options: which ports and flows the time series sample
 * (sample_ports), gzip-compressed files read back by the reader plot and compare use
 * (compress), and bad values refused with file, key, value and what was expected. */
#include <string.h>
#include "models/net.h"
#include "models/workload.h"
#include "results_io/read.h"
#include "results_io/select.h"
#include "tests/testutil.h"

/* tests/scenarios/results/select.ini: hosts 0-15, leaf0 = node 16 (ports 0-7 to hosts 0-7,
 * 8-9 up), leaf1 = node 17, spines 18-19. */
#define LEAF0 16u

struct fabric {
    struct scenario *sc;
    struct topology *t;
    struct schedule *s;
    struct net *n;
};

static struct fabric build(const char *const *sets)
{
    struct fabric f = { test_scenario_load("results/select.ini", sets), NULL, NULL, NULL };
    GError *err = NULL;
    f.t = topology_build(f.sc, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f.t);
    f.s = workload_build_all(f.sc, f.t, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f.s);
    f.n = net_build(f.sc, f.t, f.s, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f.n);
    CU_ASSERT_STRING_EQUAL(f.t->nodes[LEAF0].name, "leaf0");
    return f;
}

static void fabric_free(struct fabric *f)
{
    net_free(f->n);
    schedule_free(f->s);
    topology_free(f->t);
    scenario_free(f->sc);
}

static uint32_t leaf0_port(const struct fabric *f, uint32_t local)
{
    return f->t->nodes[LEAF0].first_port + local;
}

/* busiest:N chooses by scheduled load: leaf0:0 carries all 1 MB, the others at most one
 * flow's 256 KB, so busiest:1 is leaf0:0, every flow crosses it, and the NIC ports of all
 * five hosts (four senders, the receiver) come with their flows. */
static void test_busiest_port(void)
{
    const char *sets[] = { "output.sample_ports=busiest:1", NULL };
    struct fabric f = build(sets);
    struct sample_selection sel;
    GError *err = NULL;
    CU_ASSERT_TRUE_FATAL(sample_selection_build(&sel, f.n, &err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(sel.port);
    CU_ASSERT_EQUAL(sel.nports, 1);
    uint32_t switch_ports = 0;
    for (uint32_t p = 0; p < f.t->nports; p++)
        if (sel.port[p] && !f.n->ports[p].is_host)
            switch_ports++;
    CU_ASSERT_EQUAL(switch_ports, 1);
    CU_ASSERT_TRUE(sel.port[leaf0_port(&f, 0)]);
    CU_ASSERT_EQUAL(f.n->nqps, 4);
    for (uint32_t q = 0; q < f.n->nqps; q++)
        CU_ASSERT_TRUE(sel.flow[q]);
    const uint32_t hosts[] = { 0, 1, 2, 3, 9 };
    uint32_t host_ports = 0;
    for (uint32_t h = 0; h < f.t->nhosts; h++)
        host_ports += sel.port[f.n->hosts[h].port];
    CU_ASSERT_EQUAL(host_ports, 5);
    for (size_t i = 0; i < G_N_ELEMENTS(hosts); i++)
        CU_ASSERT_TRUE(sel.port[f.n->hosts[hosts[i]].port]);
    /* more than there are loaded ports: only the loaded ones (leaf0:0, host 9's uplink and
     * its spine's port down to leaf0) */
    sample_selection_clear(&sel);
    fabric_free(&f);
    const char *sets8[] = { "output.sample_ports=busiest:8", NULL };
    f = build(sets8);
    CU_ASSERT_TRUE_FATAL(sample_selection_build(&sel, f.n, &err));
    CU_ASSERT_EQUAL(sel.nports, 3);
    CU_ASSERT_TRUE(sel.port[leaf0_port(&f, 0)]);
    CU_ASSERT_FALSE(sel.port[leaf0_port(&f, 8)]); /* leaf0's uplinks carry nothing to host 0 */
    CU_ASSERT_FALSE(sel.port[leaf0_port(&f, 9)]);
    sample_selection_clear(&sel);
    fabric_free(&f);
}

/* A list: host9 is its NIC port; the flows crossing it are host 9's alone, and the NIC
 * counters sampled are those of its two ends (hosts 9 and 0). leaf0:5 (toward host 5, which
 * receives nothing) adds its queue but no flow. */
static void test_port_list(void)
{
    const char *sets[] = { "output.sample_ports=host9,leaf0:5", NULL };
    struct fabric f = build(sets);
    struct sample_selection sel;
    GError *err = NULL;
    CU_ASSERT_TRUE_FATAL(sample_selection_build(&sel, f.n, &err));
    CU_ASSERT_EQUAL(sel.nports, 2);
    for (uint32_t q = 0; q < f.n->nqps; q++)
        CU_ASSERT_EQUAL(sel.flow[q], f.n->qps[q].src == 9);
    CU_ASSERT_TRUE(sel.port[f.n->hosts[9].port]);
    CU_ASSERT_TRUE(sel.port[f.n->hosts[0].port]);
    CU_ASSERT_FALSE(sel.port[f.n->hosts[1].port]);
    CU_ASSERT_TRUE(sel.port[leaf0_port(&f, 5)]);
    CU_ASSERT_FALSE(sel.port[leaf0_port(&f, 0)]);
    sample_selection_clear(&sel);
    fabric_free(&f);
    /* auto on 16 hosts (at most SELECT_SMALL_HOSTS) is every port, at the configured periods */
    f = build(NULL);
    CU_ASSERT_TRUE_FATAL(sample_selection_build(&sel, f.n, &err));
    CU_ASSERT_PTR_NULL(sel.port);
    CU_ASSERT_PTR_NULL(sel.flow);
    CU_ASSERT_EQUAL(sel.scale, 1);
    sample_selection_clear(&sel);
    fabric_free(&f);
}

/* Every row of a run's queues.csv names a selected port: with busiest:1 only leaf0 port 0
 * (the incast queue builds there, so there are rows), and the sampled ecn_marked rows too;
 * the end-of-run counters still cover every port. */
static void test_run_writes_selected_ports(void)
{
    struct test_outdir o = test_outdir_new();
    const char *extra[] = { "--set", "output.sample_ports=busiest:1", NULL };
    CU_ASSERT_EQUAL_FATAL(test_run_sim("results/select.ini", o.out, extra), 0);
    char *qp = g_build_filename(o.out, "queues.csv", NULL);
    GError *err = NULL;
    results_csv *c = results_csv_open(qp, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    int rows = 0, r;
    while ((r = results_csv_next(c, &err)) == 1) {
        CU_ASSERT_STRING_EQUAL(results_csv_field(c, 1), "leaf0");
        CU_ASSERT_STRING_EQUAL(results_csv_field(c, 2), "0");
        rows++;
    }
    CU_ASSERT_EQUAL(r, 0);
    CU_ASSERT(rows > 0);
    results_csv_close(c);
    /* end-of-run tx_bytes rows exist for leaf1's ports too (node, port any) */
    CU_ASSERT(test_counter(o.out, "leaf1", -1, "tx_bytes") > 0);
    g_free(qp);
    test_outdir_free(&o);
}

/* The rates of the selected flows only, and all of them: with sample_ports=host9 the flows
 * crossing host 9's NIC port are its own QPs (test_port_list), and rates.csv holds exactly
 * the rows of the every-port run whose flow is one of those, row for row. The model does not
 * even list the other QPs' rate changes (net_sample_hooks.flows); a selected QP's rows must
 * not change for it. */
static void test_run_writes_selected_rates(void)
{
    struct fabric f = build(NULL);
    gboolean mine[64] = { 0 };
    CU_ASSERT_FATAL(f.n->nqps <= G_N_ELEMENTS(mine));
    for (uint32_t q = 0; q < f.n->nqps; q++)
        mine[q] = f.n->qps[q].src == 9;
    fabric_free(&f);
    struct test_outdir all = test_outdir_new(), one = test_outdir_new();
    const char *every[] = { "--set", "output.sample_ports=all", NULL };
    const char *host9[] = { "--set", "output.sample_ports=host9", NULL };
    CU_ASSERT_EQUAL_FATAL(test_run_sim("results/select.ini", all.out, every), 0);
    CU_ASSERT_EQUAL_FATAL(test_run_sim("results/select.ini", one.out, host9), 0);
    GString *want = g_string_new(NULL), *got = g_string_new(NULL);
    uint32_t others = 0;
    const char *dirs[] = { all.out, one.out };
    GString *into[] = { want, got };
    for (int d = 0; d < 2; d++) {
        char *path = g_build_filename(dirs[d], "rates.csv", NULL);
        GError *err = NULL;
        results_csv *c = results_csv_open(path, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        int r;
        while ((r = results_csv_next(c, &err)) == 1) {
            guint64 flow = g_ascii_strtoull(results_csv_field(c, 1), NULL, 10);
            CU_ASSERT_FATAL(flow < G_N_ELEMENTS(mine));
            if (!mine[flow]) {
                CU_ASSERT_EQUAL(d, 0); /* another host's flow: only in the every-port run */
                others++;
                continue;
            }
            g_string_append_printf(into[d], "%s,%s,%s\n", results_csv_field(c, 0), results_csv_field(c, 1),
                                   results_csv_field(c, 2));
        }
        CU_ASSERT_EQUAL(r, 0);
        results_csv_close(c);
        g_free(path);
    }
    CU_ASSERT(others > 0);
    CU_ASSERT(want->len > 0);
    CU_ASSERT_STRING_EQUAL(got->str, want->str);
    g_string_free(want, TRUE);
    g_string_free(got, TRUE);
    test_outdir_free(&all);
    test_outdir_free(&one);
}

/* compress = gzip: the time series are NAME.csv.gz (gzip magic 1f 8b), NAME.csv is absent,
 * and the reader plot and compare use (results_csv_open on NAME.csv, results_series_scan)
 * gives back every row of the uncompressed run, in order. */
static void test_gzip_round_trip(void)
{
    struct test_outdir plain = test_outdir_new(), gz = test_outdir_new();
    const char *extra[] = { "--set", "output.compress=gzip", NULL };
    CU_ASSERT_EQUAL_FATAL(test_run_sim("results/select.ini", plain.out, NULL), 0);
    CU_ASSERT_EQUAL_FATAL(test_run_sim("results/select.ini", gz.out, extra), 0);
    const char *files[] = { "queues.csv", "rates.csv", "counters.csv", "pfc.csv" };
    for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
        char *pp = g_build_filename(plain.out, files[i], NULL), *gp = g_build_filename(gz.out, files[i], NULL);
        char *gzname = g_strconcat(gp, ".gz", NULL), *raw = NULL, *text = NULL;
        gsize len = 0;
        CU_ASSERT_FALSE(g_file_test(gp, G_FILE_TEST_EXISTS));
        CU_ASSERT_TRUE_FATAL(g_file_get_contents(gzname, &raw, &len, NULL));
        CU_ASSERT(len >= 2 && (uint8_t)raw[0] == 0x1f && (uint8_t)raw[1] == 0x8b);
        CU_ASSERT_TRUE_FATAL(g_file_get_contents(pp, &text, NULL, NULL));
        GError *err = NULL;
        results_csv *c = results_csv_open(gp, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        GString *back = g_string_new(NULL);
        for (guint k = 0; k < results_csv_ncols(c); k++)
            g_string_append_printf(back, "%s%s", k ? "," : "", results_csv_colname(c, k));
        g_string_append_c(back, '\n');
        int r;
        while ((r = results_csv_next(c, &err)) == 1) {
            for (guint k = 0; k < results_csv_ncols(c); k++)
                g_string_append_printf(back, "%s%s", k ? "," : "", results_csv_field(c, k));
            g_string_append_c(back, '\n');
        }
        CU_ASSERT_EQUAL(r, 0);
        CU_ASSERT_STRING_EQUAL(back->str, text);
        if (i < 3) /* more than a header: the incast's queues, rates, counters (no pause here) */
            CU_ASSERT(strlen(text) > 40);
        results_csv_close(c);
        g_string_free(back, TRUE);
        g_free(raw);
        g_free(text);
        g_free(gzname);
        g_free(pp);
        g_free(gp);
    }
    /* the time series as plot scans them: the same series either way */
    char *pq = g_build_filename(plain.out, "queues.csv", NULL), *gq = g_build_filename(gz.out, "queues.csv", NULL);
    GPtrArray *a = results_series_scan(pq, RESULTS_SERIES_QUEUES, NULL);
    GPtrArray *b = results_series_scan(gq, RESULTS_SERIES_QUEUES, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_EQUAL(a->len, b->len);
    for (guint i = 0; i < a->len && i < b->len; i++) {
        results_series *x = g_ptr_array_index(a, i), *y = g_ptr_array_index(b, i);
        CU_ASSERT_STRING_EQUAL(x->key, y->key);
        CU_ASSERT_EQUAL(x->samples, y->samples);
        CU_ASSERT_EQUAL(x->vmax, y->vmax);
    }
    g_ptr_array_free(a, TRUE);
    g_ptr_array_free(b, TRUE);
    g_free(pq);
    g_free(gq);
    test_outdir_free(&plain);
    test_outdir_free(&gz);
}

/* A bad [output] value: exit 2, the message names the file, [output], the key, the value and
 * what was expected, and no folder is written. */
static void test_bad_values(void)
{
    struct {
        const char *set, *key, *value, *expected;
    } bad[] = {
        { "output.sample_ports=busiest:0", "sample_ports", "busiest:0", "expected busiest:N with N from 1 to" },
        { "output.sample_ports=leaf7:3", "sample_ports", "leaf7:3", "'leaf7:3' is not a port: expected" },
        { "output.sample_scale=0", "sample_scale", "0", "expected auto or a whole number" },
        { "output.compress=zip", "compress", "zip", "expected one of off,gzip" },
        { "output.pcap=leaf0:99", "pcap", "leaf0:99", "'leaf0:99' is not a port: expected NODE:PORT" },
    };
    char *path = test_data_path("results/select.ini");
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        struct test_outdir o = test_outdir_new();
        const char *args[] = { "run", path, "-o", o.out, "-q", "--no-plots", "--set", bad[i].set, NULL };
        char *se = NULL;
        CU_ASSERT_EQUAL(test_rocesim(args, NULL, NULL, &se), 2);
        CU_ASSERT_PTR_NOT_NULL_FATAL(se);
        char *key = g_strdup_printf("[output] %s", bad[i].key), *value = g_strdup_printf("'%s'", bad[i].value);
        CU_ASSERT_PTR_NOT_NULL(strstr(se, "select.ini"));
        CU_ASSERT_PTR_NOT_NULL(strstr(se, key));
        CU_ASSERT_PTR_NOT_NULL(strstr(se, value));
        CU_ASSERT_PTR_NOT_NULL(strstr(se, bad[i].expected));
        if (!strstr(se, bad[i].expected))
            fprintf(stderr, "\n  %s\n", se);
        CU_ASSERT_FALSE(g_file_test(o.out, G_FILE_TEST_EXISTS));
        g_free(key);
        g_free(value);
        g_free(se);
        test_outdir_free(&o);
    }
    g_free(path);
}

/* rates.csv after a gap (docs/results-format.md: an empty rate ends the flow's line "until a
 * later row gives it a rate again"). One QP at a constant 100 Gb/s (cc none) sends 100 KB at
 * 0 and 100 KB at 50 us: its rows are the line rate at 0, an empty rate once the first
 * transfer is done and before 50 us, and the line rate again at the second one's start
 * (the 1 us tick at 50 us), although the rate itself never changed. */
static void test_rate_after_gap(void)
{
    struct test_outdir o = test_outdir_new();
    CU_ASSERT_EQUAL_FATAL(test_run_sim("results/rate-gap.ini", o.out, NULL), 0);
    char *path = g_build_filename(o.out, "rates.csv", NULL);
    GError *err = NULL;
    results_csv *c = results_csv_open(path, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    guint64 t[4] = { 0 };
    char rate[4][32] = { { 0 } };
    int n = 0, r;
    while ((r = results_csv_next(c, &err)) == 1) {
        CU_ASSERT_STRING_EQUAL(results_csv_field(c, 1), "0");
        if (n < 4) {
            t[n] = g_ascii_strtoull(results_csv_field(c, 0), NULL, 10);
            g_strlcpy(rate[n], results_csv_field(c, 2), sizeof rate[n]);
        }
        n++;
    }
    CU_ASSERT_EQUAL(r, 0);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    CU_ASSERT_EQUAL(t[0], 0);
    CU_ASSERT_EQUAL(g_ascii_strtod(rate[0], NULL), 100.0);
    CU_ASSERT(t[1] > 8000 && t[1] < 50000); /* 100 KB take 8 us at 100 Gb/s, then the ACK */
    CU_ASSERT_STRING_EQUAL(rate[1], "");
    CU_ASSERT_EQUAL(t[2], 50000);
    CU_ASSERT_EQUAL(g_ascii_strtod(rate[2], NULL), 100.0);
    results_csv_close(c);
    g_free(path);
    test_outdir_free(&o);
}

/* summary.json's utilisation counts each frame's preamble and gap: on rate-gap.ini the leaf
 * sends host0 the two transfers' 2 x ceil(100000 / 4096) = 50 data frames and nothing else,
 * so utilisation x rate x run time / 8 is tx_bytes + 20 x 50 (the run time is read in whole
 * nanoseconds: at 100 Gb/s over 60 us about 3.4 bytes of slack). */
static void test_utilisation_counts_wire_bytes(void)
{
    struct test_outdir o = test_outdir_new();
    CU_ASSERT_EQUAL_FATAL(test_run_sim("results/rate-gap.ini", o.out, NULL), 0);
    char *path = g_build_filename(o.out, "summary.json", NULL);
    JsonParser *jp = json_parser_new();
    CU_ASSERT_TRUE_FATAL(json_parser_load_from_file(jp, path, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(jp));
    double secs = (double)json_object_get_int_member(json_object_get_object_member(root, "engine"), "sim_time_ns") * 1e-9;
    JsonArray *ports = json_object_get_array_member(root, "ports");
    bool seen = false;
    for (guint i = 0; i < json_array_get_length(ports); i++) {
        JsonObject *po = json_array_get_object_element(ports, i);
        if (strcmp(json_object_get_string_member(po, "peer"), "host0") != 0)
            continue;
        seen = true;
        double wire = json_object_get_double_member(po, "utilisation") * 100e9 * secs / 8;
        double expect = (double)json_object_get_int_member(po, "tx_bytes") + 20.0 * 50;
        CU_ASSERT_DOUBLE_EQUAL(wire, expect, 10.0);
    }
    CU_ASSERT_TRUE(seen);
    g_object_unref(jp);
    g_free(path);
    test_outdir_free(&o);
}

static CU_TestInfo tests[] = {
    { "busiest:N by scheduled load (hand-built incast)", test_busiest_port },
    { "a list of ports, and auto on a small fabric", test_port_list },
    { "a run writes the selected ports' queue rows only", test_run_writes_selected_ports },
    { "a run writes the selected flows' rate rows, the same as with every port", test_run_writes_selected_rates },
    { "a flow's rate is written again after a gap, unchanged", test_rate_after_gap },
    { "utilisation counts each frame's preamble and gap", test_utilisation_counts_wire_bytes },
    { "gzip round trip through the results reader", test_gzip_round_trip },
    { "bad [output] values: file, key, value, expected; exit 2", test_bad_values },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("results", tests)
