/* PFC end to end through the binary (ROCESIM), reading the results folders: the scenarios
 * scenarios/pfc-incast.ini, congestion-spreading.ini, pause-storm.ini and deadlock.ini, run as
 * shipped or with --set, and the checks of issue 3:
 *   - a 31-to-1 incast without CC is lossless under PFC and runs at the efficient line rate;
 *     with a headroom smaller than a frame it drops on the lossless priority (and warns);
 *     without PFC and with a small buffer it drops and retransmits;
 *   - congestion spreading: a victim that shares no bottleneck with an incast is slowed by
 *     PFC's head-of-line blocking, and DCQCN gives it back its throughput;
 *   - a stalled NIC's pauses reach ports two and three hops away; the PFC watchdog bounds the
 *     spines' paused time by detection + restoration;
 *   - a deadlock exits 3 with a complete results folder and the cycle named;
 *   - pfc.csv agrees with the mlx5-named pause counters and the two ends of each link agree;
 *   - pause frames are refreshed before they lapse (one pause, no gap) and lapse when not.
 * Every run takes well under a second; each is run once and its folder shared between tests. */
#include <json-glib/json-glib.h>
#include <string.h>
#include "models/mmu.h"
#include "models/net.h"
#include "models/packet.h"
#include "models/scenario.h"
#include "models/workload.h"
#include "sim/simtime.h"
#include "sim/units.h"
#include "tests/testutil.h"

/* ---------- running the binary ---------- */

/* A repository file: relative to the working directory when run from the top (make test),
 * else found from the test binary's location (build/tests[-san]/). */
static char *repo_path(const char *rel)
{
    if (g_file_test("scenarios", G_FILE_TEST_IS_DIR))
        return g_strdup(rel);
    char *exe = g_file_read_link("/proc/self/exe", NULL);
    char *dir = exe ? g_path_get_dirname(exe) : g_strdup(".");
    char *p = g_build_filename(dir, "..", "..", rel, NULL);
    g_free(exe);
    g_free(dir);
    return p;
}

struct run {
    const char *key;       /* cache key */
    char *dir;             /* results folder (inside a temporary directory) */
    char *tmp;             /* the temporary directory */
    int rc;
    char *err;             /* stderr */
};

static GPtrArray *runs; /* of struct run *, removed at exit */

static void runs_cleanup(void)
{
    if (!runs)
        return;
    for (guint i = 0; i < runs->len; i++) {
        struct run *r = g_ptr_array_index(runs, i);
        test_rmtree(r->tmp);
        g_free(r->tmp);
        g_free(r->dir);
        g_free(r->err);
        g_free(r);
    }
    g_ptr_array_free(runs, TRUE);
    runs = NULL;
}

/* `rocesim run SCENARIO -o DIR -q --no-plots --set S... [--workers W]` once per key; later
 * calls with the same key return the same run. */
static struct run *run_on_workers(const char *key, const char *scenario, const char *const *sets, int workers)
{
    if (!runs) {
        runs = g_ptr_array_new();
        atexit(runs_cleanup);
    }
    for (guint i = 0; i < runs->len; i++) {
        struct run *r = g_ptr_array_index(runs, i);
        if (!strcmp(r->key, key))
            return r;
    }
    struct run *r = g_new0(struct run, 1);
    r->key = key;
    r->tmp = test_tmpdir();
    r->dir = g_build_filename(r->tmp, "out", NULL);
    char *path = repo_path(scenario);
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)test_rocesim_bin());
    const char *fixed[] = { "run", path, "-o", r->dir, "-q", "--no-plots" };
    for (size_t i = 0; i < G_N_ELEMENTS(fixed); i++)
        g_ptr_array_add(argv, (gpointer)fixed[i]);
    for (int i = 0; sets && sets[i]; i++) {
        g_ptr_array_add(argv, (gpointer) "--set");
        g_ptr_array_add(argv, (gpointer)sets[i]);
    }
    char wtext[16];
    snprintf(wtext, sizeof wtext, "%d", workers);
    if (workers > 1) {
        g_ptr_array_add(argv, (gpointer) "--workers");
        g_ptr_array_add(argv, wtext);
    }
    g_ptr_array_add(argv, NULL);
    gchar *so = NULL;
    gint status = 0;
    GError *e = NULL;
    r->rc = -1;
    if (g_spawn_sync(NULL, (gchar **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &so, &r->err, &status, &e)) {
        r->rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    } else {
        fprintf(stderr, "\n  cannot run %s: %s\n", test_rocesim_bin(), e->message);
        g_error_free(e);
    }
    if (!r->err)
        r->err = g_strdup("");
    if (r->rc != 0 && r->rc != 3)
        fprintf(stderr, "\n  rocesim run %s (%s): exit %d\n%s\n", scenario, key, r->rc, r->err);
    g_free(so);
    g_ptr_array_free(argv, TRUE);
    g_free(path);
    g_ptr_array_add(runs, r);
    return r;
}

static struct run *run_scenario(const char *key, const char *scenario, const char *const *sets)
{
    return run_on_workers(key, scenario, sets, 1);
}

/* ---------- reading a results folder ---------- */

static JsonParser *summary_parser(const struct run *r)
{
    char *p = g_build_filename(r->dir, "summary.json", NULL);
    JsonParser *jp = json_parser_new();
    if (!json_parser_load_from_file(jp, p, NULL)) {
        g_object_unref(jp);
        jp = NULL;
    }
    g_free(p);
    return jp;
}

/* metrics.KEY as a number, or -1 when the file or the key is missing. */
static double metric(const struct run *r, const char *key)
{
    JsonParser *jp = summary_parser(r);
    double v = -1;
    if (jp) {
        JsonObject *m = json_object_get_object_member(json_node_get_object(json_parser_get_root(jp)), "metrics");
        if (m && json_object_has_member(m, key))
            v = json_node_get_double(json_object_get_member(m, key));
        g_object_unref(jp);
    }
    return v;
}

/* scenario.SECTION.KEY as run (every default filled in), or NULL. */
static char *scenario_value(const struct run *r, const char *section, const char *key)
{
    JsonParser *jp = summary_parser(r);
    char *v = NULL;
    if (jp) {
        JsonObject *s = json_object_get_object_member(json_node_get_object(json_parser_get_root(jp)), "scenario");
        if (s && json_object_has_member(s, section)) {
            JsonObject *sec = json_object_get_object_member(s, section);
            if (json_object_has_member(sec, key))
                v = g_strdup(json_object_get_string_member(sec, key));
        }
        g_object_unref(jp);
    }
    return v;
}

static simtime_t scenario_time(const struct run *r, const char *section, const char *key)
{
    char *text = scenario_value(r, section, key), *why = NULL;
    simtime_t t = 0;
    if (!text || !units_parse_time(text, &t, &why)) {
        fprintf(stderr, "\n  [%s] %s = '%s': %s\n", section, key, text ? text : "(missing)", why ? why : "");
        CU_FAIL("scenario time missing from summary.json");
    }
    g_free(why);
    g_free(text);
    return t;
}

/* The warnings of summary.json joined by newlines ("" if none). */
static char *warnings(const struct run *r)
{
    JsonParser *jp = summary_parser(r);
    GString *g = g_string_new("");
    if (jp) {
        JsonObject *root = json_node_get_object(json_parser_get_root(jp));
        if (json_object_has_member(root, "warnings")) {
            JsonArray *a = json_object_get_array_member(root, "warnings");
            for (guint i = 0; i < json_array_get_length(a); i++)
                g_string_append_printf(g, "%s\n", json_array_get_string_element(a, i));
        }
        g_object_unref(jp);
    }
    return g_string_free(g, FALSE);
}

/* A CSV file as rows of fields, header dropped. */
struct csv {
    GPtrArray *rows; /* of gchar ** */
    char *header;
};

static struct csv csv_load(const struct run *r, const char *name)
{
    struct csv c = { g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev), NULL };
    char *p = g_build_filename(r->dir, name, NULL), *text = NULL;
    if (g_file_get_contents(p, &text, NULL, NULL)) {
        /* lines cut in place: g_strsplit on the whole file is quadratic under ASan, whose
         * strstr interceptor measures the rest of the string at every call */
        char *line = text;
        for (gboolean first = TRUE; *line; first = FALSE) {
            char *nl = line;
            while (*nl && *nl != '\n')
                nl++;
            gboolean more = *nl != 0;
            *nl = 0;
            if (first)
                c.header = g_strdup(line);
            else if (*line)
                g_ptr_array_add(c.rows, g_strsplit(line, ",", -1));
            line = more ? nl + 1 : nl;
        }
    }
    g_free(text);
    g_free(p);
    return c;
}

static void csv_free(struct csv *c)
{
    g_ptr_array_free(c->rows, TRUE);
    g_free(c->header);
}

#define ROW(c, i) ((char **)g_ptr_array_index((c)->rows, (i)))

/* counters.csv value of (node, port, name), or -1. */
static gint64 counter_of(const struct csv *cnt, const char *node, const char *port, const char *name)
{
    for (guint i = 0; i < cnt->rows->len; i++) {
        char **f = ROW(cnt, i);
        if (g_strv_length(f) == 5 && !strcmp(f[1], node) && !strcmp(f[2], port) && !strcmp(f[3], name))
            return g_ascii_strtoll(f[4], NULL, 10);
    }
    return -1;
}

/* Hop distance of every switch or host port from a host, as PFC spreads: a port is paused by
 * the node at its far end, so its distance is that node's link distance from the host plus
 * one (the leaf port toward the host is 1, a spine port toward that leaf 2, ...). Keys
 * "node:port". */
static GHashTable *hops_from(const struct run *r, const char *host)
{
    struct csv topo = csv_load(r, "topology.csv"); /* node,port,peer,peer_port,rate_bps,delay_ps */
    GHashTable *dist = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_hash_table_insert(dist, g_strdup(host), GINT_TO_POINTER(1)); /* node distance + 1 */
    for (gboolean grew = TRUE; grew;) {
        grew = FALSE;
        for (guint i = 0; i < topo.rows->len; i++) {
            char **f = ROW(&topo, i);
            gpointer d = g_hash_table_lookup(dist, f[2]);
            gpointer mine = g_hash_table_lookup(dist, f[0]);
            if (d && (!mine || GPOINTER_TO_INT(mine) > GPOINTER_TO_INT(d) + 1)) {
                g_hash_table_insert(dist, g_strdup(f[0]), GINT_TO_POINTER(GPOINTER_TO_INT(d) + 1));
                grew = TRUE;
            }
        }
    }
    GHashTable *ports = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; i < topo.rows->len; i++) {
        char **f = ROW(&topo, i);
        int d = GPOINTER_TO_INT(g_hash_table_lookup(dist, f[2])); /* peer's distance + 1 */
        g_hash_table_insert(ports, g_strdup_printf("%s:%s", f[0], f[1]), GINT_TO_POINTER(d));
    }
    g_hash_table_unref(dist);
    csv_free(&topo);
    return ports;
}

/* The peer of node:port ("node:port"), from topology.csv; caller frees. */
static char *peer_of(const struct csv *topo, const char *node, const char *port)
{
    for (guint i = 0; i < topo->rows->len; i++) {
        char **f = ROW(topo, i);
        if (!strcmp(f[0], node) && !strcmp(f[1], port))
            return g_strdup_printf("%s:%s", f[2], f[3]);
    }
    return NULL;
}

/* ---------- the 31-to-1 incast ---------- */

static const char *const INCAST = "scenarios/pfc-incast.ini";

static void test_incast_lossless(void)
{
    struct run *r = run_scenario("incast", INCAST, NULL);
    CU_ASSERT_EQUAL_FATAL(r->rc, 0);
    CU_ASSERT_EQUAL(metric(r, "drops"), 0);
    CU_ASSERT_EQUAL(metric(r, "drops_lossless"), 0);
    CU_ASSERT_EQUAL(metric(r, "retransmitted_packets"), 0);
    CU_ASSERT(metric(r, "pause_frames") > 0);
    CU_ASSERT_EQUAL(metric(r, "transfers"), 31);
    CU_ASSERT_EQUAL(metric(r, "transfers_completed"), 31);
    /* lossless: nothing dropped; PFC alone holds the senders' links most of the run, which is
     * the one warning (analysis/warnings.c) */
    char *w = warnings(r);
    CU_ASSERT_PTR_NULL(strstr(w, "dropped"));
    CU_ASSERT_PTR_NOT_NULL(strstr(w, "was paused by PFC"));
    g_free(w);
    /* the efficient line rate: 31 x 2 MB with 82 B of headers and framing per 4096 B of
     * payload, at 100 Gb/s; plus the latency of the longest path (4 links of 1 us, store and
     * forward of one frame at each), which is 0.1 % of it */
    double size = 2e6, mtu = 4096, wire = ROCE_HDR_BYTES + WIRE_EXTRA_BYTES;
    double line_ns = 31 * size * (mtu + wire) / mtu * 8 / 100e9 * 1e9;
    double lat_ns = 4 * 1000 + 4 * (mtu + wire + ROCE_RETH_BYTES) * 8 / 100e9 * 1e9;
    double done = metric(r, "completion_ns");
    fprintf(stderr, "\n  31 x 2 MB: completion %.0f ns, line rate %.0f ns (+%.3f%%), latency allowance %.0f ns\n",
            done, line_ns, 100 * (done / line_ns - 1), lat_ns);
    CU_ASSERT(done <= 1.05 * (line_ns + lat_ns));
    CU_ASSERT(done >= line_ns); /* and no faster than the receiver's link */
    /* the pauses reached the spines and the other leaf's hosts: senders on both leaves */
    struct csv pfc = csv_load(r, "pfc.csv");
    gboolean spine = FALSE, remote_host = FALSE;
    for (guint i = 0; i < pfc.rows->len; i++) {
        char **f = ROW(&pfc, i);
        if (strcmp(f[4], "pause"))
            continue;
        spine |= g_str_has_prefix(f[1], "spine");
        remote_host |= !strcmp(f[1], "host31");
    }
    CU_ASSERT(spine);
    CU_ASSERT(remote_host);
    csv_free(&pfc);
}

static void test_incast_small_headroom(void)
{
    /* a short retransmission timeout keeps the recovery within a few ms whatever the default */
    const char *sets[] = { "switch.headroom=1KB", "nic.rto=1ms", NULL };
    struct run *r = run_scenario("incast-hdrm1k", INCAST, sets);
    CU_ASSERT_EQUAL_FATAL(r->rc, 0);
    CU_ASSERT(metric(r, "drops_lossless") > 0);
    CU_ASSERT(metric(r, "drops_prio3") >= metric(r, "drops_lossless"));
    CU_ASSERT(metric(r, "retransmitted_packets") > 0);
    CU_ASSERT_EQUAL(metric(r, "transfers_completed"), 31); /* go-back-N recovers */
    char *w = warnings(r);
    if (!strstr(w, "lossless"))
        fprintf(stderr, "\n  warnings: %s\n", w);
    CU_ASSERT_PTR_NOT_NULL(strstr(w, "lossless"));
    CU_ASSERT_PTR_NOT_NULL(strstr(w, "headroom"));
    g_free(w);
}

static void test_incast_no_pfc(void)
{
    const char *sets[] = { "switch.pfc=off", "switch.buffer=2MB", "nic.rto=1ms", NULL };
    struct run *r = run_scenario("incast-nopfc", INCAST, sets);
    CU_ASSERT_EQUAL_FATAL(r->rc, 0);
    CU_ASSERT(metric(r, "drops") > 0);
    CU_ASSERT(metric(r, "retransmitted_packets") > 0);
    CU_ASSERT_EQUAL(metric(r, "drops_lossless"), 0); /* nothing is lossless without PFC */
    CU_ASSERT_EQUAL(metric(r, "pause_frames"), 0);
    CU_ASSERT_EQUAL(metric(r, "transfers_completed"), 31);
}

/* rocesim check shows the headroom the switch sets aside per port, from the same formula the
 * MMU tests pin down: at 100 Gb/s with the largest 4 KiB RoCE frame (an ONLY with RETH and
 * ImmDt: 4096 + 62 + 16 + 4 + 20 = 4198 B on the wire), 1 us links:
 * 4198 + 84 + 25000 + 40576 + 4198 = 74056 B; cable_length = 100m (500 ns one way at 5 ns/m):
 * 12500 instead of 25000, 61556 B. */
static void test_headroom_in_check(void)
{
    char *path = repo_path(INCAST);
    uint64_t frame = 4096 + ROCE_HDR_BYTES + ROCE_RETH_BYTES + ROCE_IMMDT_BYTES + WIRE_EXTRA_BYTES;
    CU_ASSERT_EQUAL(pfc_headroom_bytes(100000000000ull, 1000000, (uint32_t)frame), 74056);
    CU_ASSERT_EQUAL(pfc_headroom_bytes(100000000000ull, 500000, (uint32_t)frame), 61556);
    const char *cases[][2] = { { "", "74056B per lossless priority" },
                               { "--set switch.cable_length=100m", "61556B per lossless priority" } };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *cmd = g_strdup_printf("'%s' check '%s' %s", test_rocesim_bin(), path, cases[i][0]);
        char *out = NULL;
        int rc = test_run(cmd, &out);
        CU_ASSERT_EQUAL(rc, 0);
        if (!out || !strstr(out, cases[i][1]))
            fprintf(stderr, "\n  %s: no '%s' in\n%s\n", cmd, cases[i][1], out ? out : "");
        CU_ASSERT_PTR_NOT_NULL(out ? strstr(out, cases[i][1]) : NULL);
        g_free(out);
        g_free(cmd);
    }
    g_free(path);
}

/* ---------- congestion spreading ---------- */

static const char *const SPREAD = "scenarios/congestion-spreading.ini";

/* The victim (host0 -> host9): throughput in Gb/s from transfers.csv, -1 if missing; its
 * end and the end of the last incast transfer (ns). */
static double victim_gbps(const struct run *r, gint64 *victim_end, gint64 *incast_end)
{
    struct csv t = csv_load(r, "transfers.csv"); /* id,src,dst,bytes,prio,start,end,fct,... */
    double g = -1;
    *victim_end = *incast_end = -1;
    for (guint i = 0; i < t.rows->len; i++) {
        char **f = ROW(&t, i);
        gint64 end = *f[6] ? g_ascii_strtoll(f[6], NULL, 10) : -1;
        if (!strcmp(f[1], "0") && !strcmp(f[2], "9") && *f[7]) {
            g = g_ascii_strtod(f[3], NULL) * 8 / g_ascii_strtod(f[7], NULL);
            *victim_end = end;
        } else if (end > *incast_end) {
            *incast_end = end;
        }
    }
    csv_free(&t);
    return g;
}

static void test_congestion_spreading(void)
{
    struct run *pfc = run_scenario("spread", SPREAD, NULL);
    const char *sets[] = { "nic.cc=dcqcn", NULL };
    struct run *dcq = run_scenario("spread-dcqcn", SPREAD, sets);
    CU_ASSERT_EQUAL_FATAL(pfc->rc, 0);
    CU_ASSERT_EQUAL_FATAL(dcq->rc, 0);
    double line = 100.0 * 4096 / (4096 + ROCE_HDR_BYTES + WIRE_EXTRA_BYTES); /* 98.04 Gb/s */
    gint64 va, ia, vb, ib;
    double a = victim_gbps(pfc, &va, &ia), b = victim_gbps(dcq, &vb, &ib);
    fprintf(stderr, "\n  victim host0 -> host9: %.1f Gb/s with PFC alone, %.1f Gb/s with DCQCN (line %.1f)\n", a, b,
            line);
    CU_ASSERT(a > 0 && b > 0);
    CU_ASSERT(a < 0.8 * line);
    CU_ASSERT(b >= 2 * a);
    CU_ASSERT(b >= 0.8 * line);
    /* the comparison is fair: with PFC alone the victim spans the whole incast, and with
     * DCQCN it ran entirely while the incast was still going (not in a quiet spell after) */
    CU_ASSERT(va > ia);
    CU_ASSERT(vb < ib);
    /* lossless both ways; every transfer completes */
    CU_ASSERT_EQUAL(metric(pfc, "drops"), 0);
    CU_ASSERT_EQUAL(metric(dcq, "drops"), 0);
    CU_ASSERT_EQUAL(metric(pfc, "transfers_completed"), 9);
    CU_ASSERT_EQUAL(metric(dcq, "transfers_completed"), 9);
    /* the victim's upstream was paused: the spine's port toward leaf1 or leaf0's uplink */
    struct csv topo = csv_load(pfc, "topology.csv");
    char *spine_to_leaf1 = NULL, *leaf0_up = NULL;
    for (guint i = 0; i < topo.rows->len; i++) {
        char **f = ROW(&topo, i);
        if (!strcmp(f[0], "spine0") && !strcmp(f[2], "leaf1"))
            spine_to_leaf1 = g_strdup_printf("%s:%s", f[0], f[1]);
        if (!strcmp(f[0], "leaf0") && !strcmp(f[2], "spine0"))
            leaf0_up = g_strdup_printf("%s:%s", f[0], f[1]);
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(spine_to_leaf1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(leaf0_up);
    struct csv ev = csv_load(pfc, "pfc.csv");
    int upstream = 0;
    for (guint i = 0; i < ev.rows->len; i++) {
        char **f = ROW(&ev, i);
        char *k = g_strdup_printf("%s:%s", f[1], f[2]);
        if (!strcmp(f[4], "pause") && (!strcmp(k, spine_to_leaf1) || !strcmp(k, leaf0_up)))
            upstream++;
        g_free(k);
    }
    CU_ASSERT(upstream > 0);
    csv_free(&ev);
    csv_free(&topo);
    g_free(spine_to_leaf1);
    g_free(leaf0_up);
}

/* ---------- pause storm ---------- */

static const char *const STORM = "scenarios/pause-storm.ini";

static void test_pause_storm_spreads(void)
{
    const char *sets[] = { "switch.pfc_watchdog=off", NULL };
    struct run *r = run_scenario("storm-nowd", STORM, sets);
    CU_ASSERT_EQUAL_FATAL(r->rc, 0);
    char *stalled = scenario_value(r, "fault stuck", "node");
    CU_ASSERT_STRING_EQUAL_FATAL(stalled, "host0");
    simtime_t at = scenario_time(r, "fault stuck", "at"), dur = scenario_time(r, "fault stuck", "for");
    uint64_t stall_end_ns = (at + dur) / PS_PER_NS;
    GHashTable *hops = hops_from(r, stalled);
    struct csv ev = csv_load(r, "pfc.csv");
    int max_hop = 0;
    gboolean spine = FALSE;
    for (guint i = 0; i < ev.rows->len; i++) {
        char **f = ROW(&ev, i);
        if (strcmp(f[4], "pause"))
            continue;
        /* pauses that began while the NIC was stuck are the storm's */
        if (g_ascii_strtoull(f[0], NULL, 10) >= stall_end_ns)
            continue;
        char *k = g_strdup_printf("%s:%s", f[1], f[2]);
        int h = GPOINTER_TO_INT(g_hash_table_lookup(hops, k));
        if (h > max_hop)
            max_hop = h;
        if (h >= 2 && g_str_has_prefix(f[1], "spine"))
            spine = TRUE;
        g_free(k);
    }
    fprintf(stderr, "\n  storm reached %d hops from %s during the stall\n", max_hop, stalled);
    CU_ASSERT(max_hop >= 3);
    CU_ASSERT(spine);
    CU_ASSERT_EQUAL(metric(r, "pfc_watchdog_storms"), 0);
    CU_ASSERT_EQUAL(metric(r, "drops"), 0);
    CU_ASSERT_EQUAL(metric(r, "transfers_completed"), 7);
    csv_free(&ev);
    g_hash_table_unref(hops);
    g_free(stalled);
}

/* The largest rx_prio3_pause_duration (us) over the spine ports, and their number. */
static gint64 spine_paused_us(const struct run *r, int *nports)
{
    struct csv cnt = csv_load(r, "counters.csv");
    gint64 worst = -1;
    *nports = 0;
    for (guint i = 0; i < cnt.rows->len; i++) {
        char **f = ROW(&cnt, i);
        if (g_str_has_prefix(f[1], "spine") && !strcmp(f[3], "rx_prio3_pause_duration")) {
            gint64 v = g_ascii_strtoll(f[4], NULL, 10);
            (*nports)++;
            if (v > worst)
                worst = v;
        }
    }
    csv_free(&cnt);
    return worst;
}

static void test_pause_storm_watchdog(void)
{
    struct run *r = run_scenario("storm", STORM, NULL); /* the watchdog is on as shipped */
    const char *sets[] = { "switch.pfc_watchdog=off", NULL };
    struct run *off = run_scenario("storm-nowd", STORM, sets);
    CU_ASSERT_EQUAL_FATAL(r->rc, 0);
    CU_ASSERT_EQUAL_FATAL(off->rc, 0);
    simtime_t detect = scenario_time(r, "switch", "pfc_watchdog");
    simtime_t restore = scenario_time(r, "switch", "pfc_watchdog_restore");
    simtime_t link = scenario_time(r, "topology", "link_delay");
    CU_ASSERT(metric(r, "pfc_watchdog_storms") >= 1);
    /* the flows that never touch the stalled NIC complete (those toward it lose packets to the
     * watchdog and recover on the retransmission timeout) */
    struct csv t = csv_load(r, "transfers.csv");
    guint victims = 0;
    for (guint i = 0; i < t.rows->len; i++) {
        char **f = ROW(&t, i);
        if (strcmp(f[2], "0")) {
            victims++;
            CU_ASSERT_STRING_NOT_EQUAL(f[6], "");
        }
    }
    CU_ASSERT_EQUAL(victims, 5);
    csv_free(&t);
    char *w = warnings(r);
    CU_ASSERT_PTR_NOT_NULL(strstr(w, "watchdog"));
    g_free(w);
    /* the storm is declared on the leaf port toward the stalled NIC one detection time after
     * it was paused (a watchdog that polls may take up to one more period) */
    struct csv ev = csv_load(r, "pfc.csv");
    gint64 paused_at = -1, storm_at = -1;
    for (guint i = 0; i < ev.rows->len; i++) {
        char **f = ROW(&ev, i);
        if (strcmp(f[1], "leaf0") || strcmp(f[2], "0"))
            continue;
        if (!strcmp(f[4], "pause") && paused_at < 0)
            paused_at = g_ascii_strtoll(f[0], NULL, 10);
        if (!strcmp(f[4], "watchdog-storm") && storm_at < 0)
            storm_at = g_ascii_strtoll(f[0], NULL, 10);
    }
    CU_ASSERT(paused_at >= 0 && storm_at >= 0);
    CU_ASSERT(storm_at - paused_at >= (gint64)(detect / PS_PER_NS));
    CU_ASSERT(storm_at - paused_at <= (gint64)(2 * detect / PS_PER_NS));
    csv_free(&ev);
    /* Contained: each spine port's paused time is at most detection + one restoration cycle.
     * Slack: one link delay, the XON's trip from the leaf back to the spine (the 84 B frame
     * takes 1.7 ns at 400 Gb/s); counters are whole microseconds, truncated. */
    int n = 0, n_off = 0;
    gint64 on_us = spine_paused_us(r, &n), off_us = spine_paused_us(off, &n_off);
    gint64 bound_us = (gint64)((detect + restore + link) / PS_PER_US);
    fprintf(stderr, "\n  worst spine port paused: %" G_GINT64_FORMAT " us with the watchdog, %" G_GINT64_FORMAT
                    " us without (bound %" G_GINT64_FORMAT " us)\n",
            on_us, off_us, bound_us);
    CU_ASSERT(n >= 2 && n_off >= 2);
    CU_ASSERT(on_us >= 0 && on_us <= bound_us);
    /* and the bound means something: without the watchdog the spines stay paused longer */
    CU_ASSERT(off_us > bound_us);
}

/* ---------- deadlock ---------- */

static void test_deadlock(void)
{
    struct run *r = run_scenario("deadlock", "scenarios/deadlock.ini", NULL);
    CU_ASSERT_EQUAL_FATAL(r->rc, 3);
    CU_ASSERT_EQUAL(metric(r, "deadlock"), 1);
    const char *files[] = { "summary.json", "transfers.csv", "pfc.csv", "counters.csv", "queues.csv" };
    for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
        char *p = g_build_filename(r->dir, files[i], NULL);
        if (!g_file_test(p, G_FILE_TEST_IS_REGULAR))
            fprintf(stderr, "\n  missing %s\n", p);
        CU_ASSERT(g_file_test(p, G_FILE_TEST_IS_REGULAR));
        g_free(p);
    }
    /* the folder is committed: no temporary folder left beside it */
    GDir *d = g_dir_open(r->tmp, 0, NULL);
    int entries = 0;
    for (const char *e; d && (e = g_dir_read_name(d));)
        entries++;
    if (d)
        g_dir_close(d);
    CU_ASSERT_EQUAL(entries, 1);
    /* transfers.csv: the header and the four stuck transfers, none finished */
    struct csv t = csv_load(r, "transfers.csv");
    CU_ASSERT_STRING_EQUAL(t.header, "id,src,dst,bytes,prio,start_ns,end_ns,fct_ns,ideal_ns,slowdown");
    CU_ASSERT_EQUAL(t.rows->len, 4);
    for (guint i = 0; i < t.rows->len; i++)
        CU_ASSERT_STRING_EQUAL(ROW(&t, i)[6], "");
    csv_free(&t);
    /* pfc.csv: pauses that never resume */
    struct csv ev = csv_load(r, "pfc.csv");
    CU_ASSERT_STRING_EQUAL(ev.header, "t_ns,node,port,prio,event,duration_ns");
    CU_ASSERT(ev.rows->len > 0);
    csv_free(&ev);
    /* the cycle, in summary.json and on stderr: the four switches of the ring */
    char *w = warnings(r);
    const char *cyc = strstr(w, "deadlock");
    CU_ASSERT_PTR_NOT_NULL(cyc);
    const char *sw[] = { "s0:", "s1:", "s2:", "s3:" };
    for (size_t i = 0; i < G_N_ELEMENTS(sw); i++) {
        CU_ASSERT_PTR_NOT_NULL(cyc ? strstr(cyc, sw[i]) : NULL);
        CU_ASSERT_PTR_NOT_NULL(strstr(r->err, sw[i]));
    }
    CU_ASSERT_PTR_NOT_NULL(strstr(r->err, "deadlock"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r->err, "prio 3 ->"));
    g_free(w);
}

/* ---------- pfc.csv against the counters ---------- */

/* For every port and priority with pause counters:
 *   - rx_prioN_pause_duration (us, truncated) is the time the port was paused: the resume
 *     durations of pfc.csv, plus for a pause still open at the end, end - its start. Each
 *     pfc.csv figure is truncated to the ns, so the sum is within one ns per event below the
 *     exact total;
 *   - pause events <= rx_prioN_pause: a pause begins with a received XOFF, but refreshes
 *     count as frames and do not begin a new pause;
 *   - tx_prioN_pause at one end of a link = rx_prioN_pause at the other (a frame still on
 *     the wire when the run stops is the only allowed difference). */
static void check_counters_match(const struct run *r)
{
    struct csv cnt = csv_load(r, "counters.csv"), ev = csv_load(r, "pfc.csv"), topo = csv_load(r, "topology.csv");
    CU_ASSERT_FATAL(cnt.rows->len > 0);
    gint64 end_ns = g_ascii_strtoll(ROW(&cnt, 0)[0], NULL, 10);
    int checked = 0, bad = 0;
    for (guint i = 0; i < cnt.rows->len; i++) {
        char **f = ROW(&cnt, i);
        int prio;
        char tail[32];
        if (sscanf(f[3], "rx_prio%d_pause%31s", &prio, tail) != 1)
            continue; /* only the frame counter rows: rx_prioN_pause */
        char name[48];
        snprintf(name, sizeof name, "rx_prio%d_pause_duration", prio);
        gint64 frames = g_ascii_strtoll(f[4], NULL, 10);
        gint64 dur_us = counter_of(&cnt, f[1], f[2], name);
        gint64 sum_ns = 0, open_at = -1, pauses = 0, events = 0;
        char ps[8];
        snprintf(ps, sizeof ps, "%d", prio);
        for (guint k = 0; k < ev.rows->len; k++) {
            char **e = ROW(&ev, k);
            if (strcmp(e[1], f[1]) || strcmp(e[2], f[2]) || strcmp(e[3], ps))
                continue;
            if (!strcmp(e[4], "pause")) {
                pauses++;
                events++;
                open_at = g_ascii_strtoll(e[0], NULL, 10);
            } else if (!strcmp(e[4], "resume")) {
                sum_ns += g_ascii_strtoll(e[5], NULL, 10);
                events++;
                open_at = -1;
            }
        }
        if (open_at >= 0)
            sum_ns += end_ns - open_at;
        gboolean ok = dur_us * 1000 <= sum_ns + events && sum_ns <= (dur_us + 1) * 1000 && pauses <= frames;
        /* the peer's tx counter */
        char *peer = peer_of(&topo, f[1], f[2]);
        gint64 tx = -2;
        if (peer) {
            char *colon = strchr(peer, ':');
            *colon = 0;
            snprintf(name, sizeof name, "tx_prio%d_pause", prio);
            tx = counter_of(&cnt, peer, colon + 1, name);
            *colon = ':';
        }
        if (tx >= 0 || frames > 0)
            ok = ok && (tx == frames || tx == frames + 1);
        if (!ok && bad++ < 5)
            fprintf(stderr, "\n  %s:%s prio %d: rx_pause %" G_GINT64_FORMAT " (peer %s tx %" G_GINT64_FORMAT
                            "), pause events %" G_GINT64_FORMAT ", duration %" G_GINT64_FORMAT
                            " us vs pfc.csv %" G_GINT64_FORMAT " ns\n",
                    f[1], f[2], prio, frames, peer ? peer : "?", tx, pauses, dur_us, sum_ns);
        CU_ASSERT(ok);
        g_free(peer);
        checked++;
    }
    CU_ASSERT(checked > 0);
    csv_free(&cnt);
    csv_free(&ev);
    csv_free(&topo);
}

static void test_counters_match_pfc_csv(void)
{
    const char *nowd[] = { "switch.pfc_watchdog=off", NULL };
    struct run *rs[] = { run_scenario("incast", INCAST, NULL), run_scenario("spread", SPREAD, NULL),
                         run_scenario("storm", STORM, NULL), run_scenario("storm-nowd", STORM, nowd),
                         run_scenario("deadlock", "scenarios/deadlock.ini", NULL) };
    for (size_t i = 0; i < G_N_ELEMENTS(rs); i++) {
        CU_ASSERT_FATAL(rs[i]->rc == 0 || rs[i]->rc == 3);
        check_counters_match(rs[i]);
    }
}

/* pfc.csv's rows are in time order, then by node (the topology's order: topology.csv lists
 * the nodes in it), whatever order the events were logged in (models/pfc.c pfc_rows_flush):
 * on three workers, each keeps its own rows, one time's from several nodes. */
static void check_rows_ordered(const struct run *r)
{
    struct csv ev = csv_load(r, "pfc.csv"), topo = csv_load(r, "topology.csv");
    GHashTable *node_index = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < topo.rows->len; i++)
        if (!g_hash_table_contains(node_index, ROW(&topo, i)[0]))
            g_hash_table_insert(node_index, ROW(&topo, i)[0], GUINT_TO_POINTER(g_hash_table_size(node_index) + 1));
    CU_ASSERT(ev.rows->len > 100);
    gint64 t0 = -1;
    guint node0 = 0, bad = 0, same_time = 0;
    for (guint k = 0; k < ev.rows->len; k++) {
        char **e = ROW(&ev, k);
        gint64 t = g_ascii_strtoll(e[0], NULL, 10);
        guint node = GPOINTER_TO_UINT(g_hash_table_lookup(node_index, e[1]));
        CU_ASSERT(node > 0);
        if (t < t0 || (t == t0 && node < node0))
            bad++;
        same_time += t == t0 && node != node0;
        t0 = t;
        node0 = node;
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(same_time > 0); /* the order among nodes of one time was put to the test */
    g_hash_table_destroy(node_index);
    csv_free(&ev);
    csv_free(&topo);
}

static void test_rows_ordered(void)
{
    struct run *rs[] = { run_scenario("incast", INCAST, NULL), run_on_workers("incast-w3", INCAST, NULL, 3),
                         run_on_workers("spread-w3", SPREAD, NULL, 3) };
    for (size_t i = 0; i < G_N_ELEMENTS(rs); i++) {
        CU_ASSERT_FATAL(rs[i]->rc == 0);
        check_rows_ordered(rs[i]);
    }
}

/* pfc_rows_order against a reference: the rows' (time, node, hand-over order) packed into
 * one integer (the test's times are multiples of 1000 ps below 2^20 ns, nodes and sequence
 * numbers below 2^20), sorted by qsort, on rows nearly in order (the insertion pass) and on
 * rows from three "workers" each in time order over the same span (past the 8-moves-a-row
 * limit: the fallback). */
static uint64_t packed(const struct pfc_row_ref *x)
{
    /* the packing's assumptions, so that it orders what the rows' fields order */
    g_assert(x->r->t % 1000 == 0 && x->r->t / 1000 < (1u << 24) && x->r->node < (1u << 20) && x->seq < (1u << 20));
    return (uint64_t)(x->r->t / 1000) << 40 | (uint64_t)x->r->node << 20 | x->seq;
}

static int ref_cmp(const void *a, const void *b)
{
    uint64_t x = packed(a), y = packed(b);
    return x < y ? -1 : x > y;
}

static void test_order_reference(void)
{
    enum { N = 3000 };
    struct pfc_row *rows = g_new0(struct pfc_row, N);
    struct pfc_row_ref *got = g_new(struct pfc_row_ref, N), *want = g_new(struct pfc_row_ref, N);
    for (int layout = 0; layout < 2; layout++) {
        for (uint32_t i = 0; i < N; i++) {
            /* 0: times rising, every time's nodes descending (4 rows per time);
             * 1: three runs of 1000, each rising over the same times, nodes repeating */
            uint32_t in_run = layout == 0 ? i : i % 1000;
            rows[i].t = layout == 0 ? (simtime_t)(i / 4) * 1000 : (simtime_t)(in_run / 2) * 1000;
            rows[i].node = layout == 0 ? 3 - i % 4 : (i / 1000 + in_run) % 3;
            got[i] = want[i] = (struct pfc_row_ref){ &rows[i], i }; /* runs one after another */
        }
        qsort(want, N, sizeof *want, ref_cmp);
        pfc_rows_order(got, N);
        int bad = 0;
        for (uint32_t i = 0; i < N; i++)
            bad += got[i].r != want[i].r;
        CU_ASSERT_EQUAL(bad, 0);
        /* and what the order means, checked without the reference */
        for (uint32_t i = 1; i < N; i++)
            bad += got[i - 1].r->t > got[i].r->t ||
                   (got[i - 1].r->t == got[i].r->t && got[i - 1].r->node > got[i].r->node);
        CU_ASSERT_EQUAL(bad, 0);
    }
    g_free(rows);
    g_free(got);
    g_free(want);
}

/* ---------- pause timer: refresh and expiry ---------- */

/* The events of one port and priority in pfc.csv. */
static void port_events(const struct run *r, const char *node, const char *port, GArray *pause_t, GArray *resume_t,
                        GArray *resume_d)
{
    struct csv ev = csv_load(r, "pfc.csv");
    for (guint i = 0; i < ev.rows->len; i++) {
        char **f = ROW(&ev, i);
        if (strcmp(f[1], node) || strcmp(f[2], port) || strcmp(f[3], "3"))
            continue;
        gint64 t = g_ascii_strtoll(f[0], NULL, 10), d = g_ascii_strtoll(f[5], NULL, 10);
        if (!strcmp(f[4], "pause"))
            g_array_append_val(pause_t, t);
        else if (!strcmp(f[4], "resume")) {
            g_array_append_val(resume_t, t);
            g_array_append_val(resume_d, d);
        }
    }
    csv_free(&ev);
}

/* 1000 quanta = 5.12 us at 100 Gb/s, refreshed every 2.56 us while host0 is stuck: one pause
 * at leaf0:0 for the whole stall (no gap), carried by many frames. */
static void test_refresh_no_gap(void)
{
    const char *sets[] = { "switch.pfc_watchdog=off", "switch.pfc_pause_quanta=1000", NULL };
    struct run *r = run_scenario("storm-q1000", STORM, sets);
    CU_ASSERT_EQUAL_FATAL(r->rc, 0);
    simtime_t at = scenario_time(r, "fault stuck", "at"), dur = scenario_time(r, "fault stuck", "for");
    GArray *pt = g_array_new(FALSE, FALSE, sizeof(gint64)), *rt = g_array_new(FALSE, FALSE, sizeof(gint64)),
           *rd = g_array_new(FALSE, FALSE, sizeof(gint64));
    port_events(r, "leaf0", "0", pt, rt, rd);
    struct csv cnt = csv_load(r, "counters.csv");
    gint64 frames = counter_of(&cnt, "leaf0", "0", "rx_prio3_pause");
    csv_free(&cnt);
    fprintf(stderr, "\n  leaf0:0: %u pause event(s), %" G_GINT64_FORMAT " XOFF frames\n", pt->len, frames);
    CU_ASSERT_EQUAL(pt->len, 1);
    CU_ASSERT_EQUAL(rt->len, 1);
    if (pt->len == 1 && rt->len == 1) {
        gint64 p = g_array_index(pt, gint64, 0), q = g_array_index(rt, gint64, 0);
        CU_ASSERT(p > (gint64)(at / PS_PER_NS));          /* paused after the stall began, */
        CU_ASSERT(q >= (gint64)((at + dur) / PS_PER_NS)); /* resumed only once it ended */
        /* kept paused by refreshes: at least one frame per 5.12 us of pause (in fact two) */
        double quantum_ns = 1000 * 512 / 100.0;
        CU_ASSERT(frames >= (gint64)((q - p) / quantum_ns));
    }
    CU_ASSERT(frames > (gint64)pt->len);
    g_array_free(pt, TRUE);
    g_array_free(rt, TRUE);
    g_array_free(rd, TRUE);
}

/* 1 quantum = 5.12 ns at 100 Gb/s, shorter than the 84 B frame that refreshes it (6.72 ns):
 * every pause lapses on its timer before the next frame arrives, so each frame begins a new
 * pause that lasts exactly one quantum (5 ns in pfc.csv, truncated). */
static void test_pause_expiry(void)
{
    const char *sets[] = { "switch.pfc_watchdog=off", "switch.pfc_pause_quanta=1", NULL };
    struct run *r = run_scenario("storm-q1", STORM, sets);
    CU_ASSERT_EQUAL_FATAL(r->rc, 0);
    GArray *pt = g_array_new(FALSE, FALSE, sizeof(gint64)), *rt = g_array_new(FALSE, FALSE, sizeof(gint64)),
           *rd = g_array_new(FALSE, FALSE, sizeof(gint64));
    port_events(r, "leaf0", "0", pt, rt, rd);
    struct csv cnt = csv_load(r, "counters.csv");
    gint64 frames = counter_of(&cnt, "leaf0", "0", "rx_prio3_pause");
    csv_free(&cnt);
    fprintf(stderr, "\n  leaf0:0: %u pause events, %" G_GINT64_FORMAT " XOFF frames\n", pt->len, frames);
    CU_ASSERT(pt->len > 1000);
    CU_ASSERT_EQUAL((gint64)pt->len, frames);
    CU_ASSERT_EQUAL(rt->len, pt->len);
    guint longer = 0;
    for (guint i = 0; i < rd->len; i++)
        if (g_array_index(rd, gint64, i) != 5)
            longer++;
    CU_ASSERT_EQUAL(longer, 0);
    g_array_free(pt, TRUE);
    g_array_free(rt, TRUE);
    g_array_free(rd, TRUE);
}

/* ---------- a paused priority's QPs at the NIC ---------- */

/* Host 0 of an AllToAll has three QPs ready, in the order their messages were posted. While
 * their priority is paused the NIC sends nothing; when it resumes it serves them in that same
 * order (802.1Qbb stops a priority's transmission; the NIC's queues for it wait as they are).
 * With QPs of two priorities and one paused, the other's QP is served and the paused ones wait
 * in order. */
static void test_paused_qps_keep_order(void)
{
    struct scenario *s = test_scenario_load("fanout3.ini", NULL);
    GError *err = NULL;
    struct topology *topo = topology_build(s, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(topo);
    struct schedule *sched = workload_build_all(s, topo, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sched);
    for (int mixed = 0; mixed < 2; mixed++) {
        struct net *n = net_build(s, topo, sched, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(n);
        struct host_rt *h = &n->hosts[0];
        struct port_rt *port = &n->ports[h->port];
        port->paused = 0xff; /* posting kicks the port: nothing may leave yet */
        uint32_t qp[3], k = 0;
        for (uint32_t x = 0; x < n->nxfers && k < 3; x++) {
            uint32_t q = n->xfers[x].qp;
            bool taken = false; /* a QP carries several of the AllToAll's transfers */
            for (uint32_t j = 0; j < k; j++)
                taken |= qp[j] == q;
            if (q >= n->nqps || n->qps[q].src != 0 || !n->xfers[x].npkts || taken)
                continue;
            if (mixed && k == 1)
                n->qps[q].prio = 5; /* the middle QP on another priority */
            nic_post(n, x);
            qp[k++] = q;
        }
        CU_ASSERT_EQUAL_FATAL(k, 3);
        uint8_t prio = n->qps[qp[0]].prio;
        CU_ASSERT_EQUAL_FATAL(h->ready_head, qp[0]);
        CU_ASSERT_EQUAL(n->qps[qp[0]].snd_nxt, 0);
        port->paused = (uint8_t)(1u << prio);
        uint32_t i = nic_dequeue(n, h);
        if (!mixed) {
            CU_ASSERT_EQUAL(i, NONE32);
            port->paused = 0;
            for (k = 0; k < 3; k++) {
                i = nic_dequeue(n, h);
                CU_ASSERT_FATAL(i != NONE32);
                CU_ASSERT_EQUAL(n->pool[i].qp, qp[k]);
            }
        } else {
            CU_ASSERT_FATAL(i != NONE32);
            CU_ASSERT_EQUAL(n->pool[i].qp, qp[1]);
            CU_ASSERT_EQUAL(n->pool[i].prio, 5);
            /* the first waits on its priority; the third, behind the one served, is not
             * looked at yet */
            CU_ASSERT_EQUAL(h->parked_head[prio], qp[0]);
            CU_ASSERT_EQUAL(h->parked_tail[prio], qp[0]);
            CU_ASSERT_EQUAL(h->ready_head, qp[2]);
        }
        net_free(n);
    }
    schedule_free(sched);
    topology_free(topo);
    scenario_free(s);
}

static CU_TestInfo tests[] = {
    { "31-to-1 incast, PFC, no CC: lossless at line rate", test_incast_lossless },
    { "incast with 1KB headroom: lossless drops, warning", test_incast_small_headroom },
    { "incast without PFC, small buffer: drops, retransmissions", test_incast_no_pfc },
    { "rocesim check: headroom from cable and MTU", test_headroom_in_check },
    { "congestion spreading: victim slowed, DCQCN restores it", test_congestion_spreading },
    { "pause storm reaches 2+ hops", test_pause_storm_spreads },
    { "pause storm contained by the watchdog", test_pause_storm_watchdog },
    { "deadlock: exit 3, complete folder, cycle named", test_deadlock },
    { "pfc.csv matches the pause counters", test_counters_match_pfc_csv },
    { "pfc.csv in time, then node order", test_rows_ordered },
    { "PFC rows ordered as the reference order", test_order_reference },
    { "pause refresh: one pause, no gap", test_refresh_no_gap },
    { "pause expiry on the timer", test_pause_expiry },
    { "a paused priority's QPs wait at the NIC in their order", test_paused_qps_keep_order },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("pfc", tests)
