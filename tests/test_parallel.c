/* Parallel runs (--workers N, models/net_parallel.c): the results folder of a run on 2 and 3
 * workers is byte for byte that of the run on one, for scenarios that exercise what couples
 * nodes: an incast with PFC storms and a link fault, collectives whose transfers wait for one
 * another across hosts, multi-GPU servers, and a PFC deadlock that halts the run. summary.json
 * may differ only in its "engine" object's wall-clock figures, "workers" and "partition".
 * Bad --workers values and what cannot run on several workers are refused with exit 2. The
 * summary table's workers line shows what summary.json's partition holds. */
#define _GNU_SOURCE
#include <sched.h>
#include "sim/cpus.h"
#include "tests/same_results.h"
#include "tests/test_fabric.h"

/* Runs REL (relative to tests/scenarios) on 1, 2 and 3 workers with `sets` and expects exit
 * status `rc` from each and identical folders. */
static void same_on_any_workers(const char *rel, const char *const *sets, int rc)
{
    struct test_outdir one = test_outdir_new();
    GPtrArray *extra = g_ptr_array_new();
    for (int i = 0; sets && sets[i]; i++) {
        g_ptr_array_add(extra, (gpointer) "--set");
        g_ptr_array_add(extra, (gpointer)sets[i]);
    }
    g_ptr_array_add(extra, NULL);
    CU_ASSERT_EQUAL_FATAL(test_run_sim_rc(rel, one.out, (const char *const *)extra->pdata), rc);
    gint64 w1;
    guint parts1;
    char *t1;
    char *s1 = summary_masked(one.out, &w1, &parts1, &t1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s1);
    CU_ASSERT_EQUAL(w1, 1);
    CU_ASSERT_EQUAL(parts1, 0);
    CU_ASSERT_PTR_NULL(t1);
    for (int w = 2; w <= 3; w++) {
        struct test_outdir par = test_outdir_new();
        char ws[8];
        g_snprintf(ws, sizeof ws, "%d", w);
        g_ptr_array_remove_index(extra, extra->len - 1);
        g_ptr_array_add(extra, (gpointer) "--workers");
        g_ptr_array_add(extra, ws);
        g_ptr_array_add(extra, NULL);
        CU_ASSERT_EQUAL_FATAL(test_run_sim_rc(rel, par.out, (const char *const *)extra->pdata), rc);
        g_ptr_array_remove_range(extra, extra->len - 3, 2);
        gint64 wn;
        guint parts;
        char *tn;
        char *sn = summary_masked(par.out, &wn, &parts, &tn);
        CU_ASSERT_PTR_NOT_NULL_FATAL(sn);
        CU_ASSERT_EQUAL(wn, w);
        CU_ASSERT_EQUAL(parts, (guint)w);
        CU_ASSERT_STRING_EQUAL(tn ? tn : "", "threads");
        g_free(tn);
        if (strcmp(s1, sn))
            fprintf(stderr, "\n  %s: summary.json differs on %d workers\n", rel, w);
        CU_ASSERT_STRING_EQUAL(s1, sn);
        CU_ASSERT(compare_tree(one.out, par.out, "") >= 5);
        g_free(sn);
        test_outdir_free(&par);
    }
    g_free(s1);
    g_ptr_array_free(extra, TRUE);
    test_outdir_free(&one);
}

/* an incast into one host with PFC storms, a pause-storm fault and a stalled NIC */
static void test_incast_pfc_storm(void)
{
    same_on_any_workers("../../scenarios/pause-storm.ini", NULL, 0);
}

/* a ring AllReduce: every step waits for the one before, on its host and across hosts */
static void test_collective_with_dependencies(void)
{
    static const char *const sets[] = { "scenario.stop=300us", NULL };
    same_on_any_workers("../../scenarios/allreduce-ring.ini", sets, 0);
}

/* multi-GPU servers (a server's nodes stay on one worker) and a training step's DAG */
static void test_servers_training_step(void)
{
    static const char *const sets[] = { "scenario.stop=200us", NULL };
    same_on_any_workers("../../scenarios/training-step.ini", sets, 0);
}

/* a link goes down and the routes converge around it (global events between windows) */
static void test_link_fault(void)
{
    static const char *const sets[] = { "output.pcap=", "scenario.stop=2ms", NULL };
    same_on_any_workers("routing/link-down.ini", sets, 0);
}

/* the deadlock check (the global entity) halts the run: exit 3, the same report */
static void test_deadlock(void)
{
    same_on_any_workers("../../scenarios/deadlock.ini", NULL, 3);
}

static void expect_refused(const char *rel, const char *const *extra, const char *needle)
{
    struct test_outdir o = test_outdir_new();
    char *path = test_data_path(rel);
    const char *args[] = { "run", path, "-o", o.out, "-q", "--no-plots", NULL };
    char *se = NULL;
    CU_ASSERT_EQUAL(test_rocesim(args, extra, NULL, &se), 2);
    CU_ASSERT_PTR_NOT_NULL(se && strstr(se, needle));
    if (!se || !strstr(se, needle))
        fprintf(stderr, "\n  expected \"%s\" in: %s\n", needle, se ? se : "(nothing)");
    CU_ASSERT_FALSE(g_file_test(o.out, G_FILE_TEST_EXISTS)); /* nothing left behind */
    g_free(se);
    g_free(path);
    test_outdir_free(&o);
}

static void test_bad_workers_refused(void)
{
    static const char *const zero[] = { "--workers", "0", NULL };
    static const char *const word[] = { "--workers", "two", NULL };
    static const char *const huge[] = { "--workers", "100000", NULL };
    expect_refused("minimal.ini", zero, "--workers '0': expected a whole number from 1 to 256");
    expect_refused("minimal.ini", word, "--workers 'two'");
    expect_refused("minimal.ini", huge, "--workers '100000'");
}

/* more workers than the fabric has nodes to share out */
static void test_too_many_workers_refused(void)
{
    static const char *const many[] = { "--workers", "200", NULL };
    expect_refused("minimal.ini", many, "splits into at most");
}

/* packet capture writes one file in time order: one worker only */
static void test_capture_needs_one_worker(void)
{
    static const char *const two[] = { "--workers", "2", NULL };
    expect_refused("routing/link-down.ini", two, "packet capture runs on one worker only");
}

/* The partition of f's fabric over `workers`: per node, its worker (g_free it). */
static uint32_t *partition_of(const struct test_fabric *f, uint32_t workers)
{
    GError *err = NULL;
    struct net_partition *p = net_partition_make(f->n, workers, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    uint32_t *w = g_memdup2(net_partition_worker_of(p), f->topo->nnodes * sizeof *w);
    net_partition_free(p);
    return w;
}

/* 4 leaves of 4 hosts and 2 spines, an AllToAll: by symmetry each of 2 workers holds 2 leaves
 * with their hosts and 1 spine (11 of the 22 nodes), whatever a host weighs against a switch */
static void test_partition_splits_leaf_spine_evenly(void)
{
    static const char *const sets[] = { "topology.leaves=4", "topology.spines=2", "topology.hosts_per_leaf=4",
                                        "workload w.ranks=0-15", NULL };
    struct test_fabric f = test_fabric_build(test_scenario_load("fanout3.ini", sets));
    const struct topology *t = f.topo;
    uint32_t *w = partition_of(&f, 2);
    CU_ASSERT_EQUAL_FATAL(t->nhosts, 16);
    CU_ASSERT_EQUAL_FATAL(t->nnodes, 22);
    uint32_t leaves[2] = { 0 }, spines[2] = { 0 }, hosts[2] = { 0 };
    for (uint32_t h = 0; h < t->nhosts; h++) {
        hosts[w[h]]++;
        CU_ASSERT_EQUAL(w[h], w[t->attach[h]]); /* with its leaf */
    }
    for (uint32_t s = t->nhosts; s < t->nnodes; s++) {
        bool leaf = false;
        for (uint32_t h = 0; h < t->nhosts; h++)
            leaf |= t->attach[h] == s;
        (leaf ? leaves : spines)[w[s]]++;
    }
    for (int k = 0; k < 2; k++) {
        CU_ASSERT_EQUAL(leaves[k], 2);
        CU_ASSERT_EQUAL(spines[k], 1);
        CU_ASSERT_EQUAL(hosts[k], 8);
    }
    g_free(w);
    test_fabric_free(&f);
}

/* two DGX servers (a unit each, most of the load) and their rail switches on 3 workers: every
 * worker gets nodes (the servers' weight once made the cut skip the middle worker) */
static void test_partition_leaves_no_worker_empty(void)
{
    struct test_fabric f = test_fabric_build(test_scenario_load("servers/rail.ini", NULL));
    uint32_t *w = partition_of(&f, 3);
    uint32_t nodes[3] = { 0 };
    for (uint32_t i = 0; i < f.topo->nnodes; i++) {
        CU_ASSERT_FATAL(w[i] < 3);
        nodes[w[i]]++;
    }
    for (int k = 0; k < 3; k++)
        CU_ASSERT(nodes[k] > 0);
    g_free(w);
    test_fabric_free(&f);
}

/* The summary table's workers line says what summary.json's engine.partition holds: the
 * transport and worker count, the windows, each worker's time inside them (to the hundredth
 * of a second it prints) and load share (up to four workers; beyond, the least and the most
 * time), and the time between them; a run on one worker has no such line. */
static char *run_stdout(const char *rel, const char *out, const char *workers)
{
    char *path = test_data_path(rel);
    const char *args[] = { "run", path, "-o", out, "--no-plots", "--workers", workers, NULL };
    char *so = NULL;
    CU_ASSERT_EQUAL(test_rocesim(args, NULL, &so, NULL), 0);
    g_free(path);
    return so;
}

/* The workers line the run in `dir` should have printed, from its summary.json. */
static char *workers_line_of(const char *dir)
{
    char *sum = g_build_filename(dir, "summary.json", NULL);
    JsonParser *jp = json_parser_new();
    CU_ASSERT_TRUE_FATAL(json_parser_load_from_file(jp, sum, NULL));
    g_free(sum);
    JsonObject *e = json_object_get_object_member(json_node_get_object(json_parser_get_root(jp)), "engine");
    CU_ASSERT_DOUBLE_EQUAL_FATAL(json_object_get_double_member(e, "lookahead_ns"), 1000.0, 1e-9); /* the default link delay */
    JsonObject *part = json_object_get_object_member(e, "partition");
    JsonArray *per = json_object_get_array_member(part, "per_worker");
    guint n = json_array_get_length(per);
    GString *l = g_string_new(NULL);
    g_string_printf(l, "  workers      %u threads, %" G_GINT64_FORMAT " windows of 1 \u00b5s: inside them", n,
                    json_object_get_int_member(part, "windows"));
    double lo = 1e300, hi = 0;
    for (guint w = 0; w < n; w++) {
        double busy = json_object_get_double_member(json_array_get_object_element(per, w), "busy_s");
        lo = MIN(lo, busy);
        hi = MAX(hi, busy);
        if (n <= 4)
            g_string_append_printf(l, "%s %.2f s", w ? (w + 1 == n ? " and" : ",") : "", busy);
    }
    if (n <= 4) {
        g_string_append(l, " (estimated load");
        for (guint w = 0; w < n; w++)
            g_string_append_printf(
                l, "%s %.1f%%", w ? "," : "",
                100 * json_object_get_double_member(json_array_get_object_element(per, w), "load_share"));
        g_string_append(l, ")");
    } else {
        g_string_append_printf(l, " %.2f-%.2f s a worker", lo, hi);
    }
    g_string_append_printf(l, ", between them %.2f s\n", json_object_get_double_member(part, "serial_s"));
    g_object_unref(jp);
    return g_string_free(l, FALSE);
}

static void test_workers_line(void)
{
    struct test_outdir one = test_outdir_new();
    char *s1 = run_stdout("incast16.ini", one.out, "1");
    CU_ASSERT_PTR_NOT_NULL_FATAL(s1);
    CU_ASSERT_PTR_NULL(strstr(s1, "  workers "));
    g_free(s1);
    test_outdir_free(&one);
    for (int k = 0; k < 2; k++) {
        const char *workers = k ? "5" : "2";
        struct test_outdir o = test_outdir_new();
        char *so = run_stdout("incast16.ini", o.out, workers);
        CU_ASSERT_PTR_NOT_NULL_FATAL(so);
        char *want = workers_line_of(o.out);
        const char *line = strstr(so, want);
        CU_ASSERT_PTR_NOT_NULL(line);
        if (!line)
            fprintf(stderr, "\n  expected \"%s\" in:\n%s\n", want, so);
        else /* before the folder's line, which the engine's closes */
            CU_ASSERT_PTR_NOT_NULL(strstr(line, "\nresults in "));
        g_free(want);
        g_free(so);
        test_outdir_free(&o);
    }
}

/* `--workers auto` on `rel` with `extra` options, under `taskset -c CPUS` when cpus is not
 * NULL: exit 0 and the workers summary.json reports. */
static gint64 auto_workers(const char *rel, const char *out, const char *cpus, const char *extra)
{
    char *path = test_data_path(rel);
    char *pin = cpus ? g_strdup_printf("taskset -c %s ", cpus) : g_strdup("");
    char *cmd = g_strdup_printf("%s'%s' run '%s' -o '%s' -q --no-plots --workers auto %s 2>&1", pin,
                                test_rocesim_bin(), path, out, extra ? extra : "");
    char *log = NULL;
    int rc = test_run(cmd, &log);
    CU_ASSERT_EQUAL(rc, 0);
    if (rc)
        fprintf(stderr, "\n  %s: exit %d\n%s\n", cmd, rc, log ? log : "");
    gint64 w = 0;
    guint parts = 0;
    char *tn = NULL;
    g_free(summary_masked(out, &w, &parts, &tn));
    /* one worker has no partition; more have one part each, on threads */
    CU_ASSERT_EQUAL(parts, w > 1 ? (guint)w : 0);
    g_free(tn);
    g_free(log);
    g_free(cmd);
    g_free(pin);
    g_free(path);
    return w;
}

/* --workers auto: one worker per CPU the process may use (its affinity, as taskset sets it),
 * at most one per node group, one where the run needs a single worker; the same results. */
static void test_workers_auto(void)
{
    struct test_outdir one = test_outdir_new(), pinned = test_outdir_new(), all = test_outdir_new();
    const char *const none[] = { NULL };
    CU_ASSERT_EQUAL_FATAL(test_run_sim_rc("incast16.ini", one.out, none), 0);
    /* one CPU: one worker, as sequential */
    CU_ASSERT_EQUAL(auto_workers("incast16.ini", pinned.out, "0", NULL), 1);
    CU_ASSERT(compare_tree(one.out, pinned.out, "") >= 5);
    /* every CPU: incast16 has 2 leaves, 2 spines and 32 hosts, 36 nodes and no server, so up
     * to 36 workers */
    cpu_set_t set;
    CU_ASSERT_EQUAL_FATAL(sched_getaffinity(0, sizeof set, &set), 0);
    gint64 want = MIN((gint64)CPU_COUNT(&set), 36);
    char *cg = NULL; /* and no more than a cgroup CPU quota grants (tests/test_cpus.c) */
    if (g_file_get_contents("/proc/self/cgroup", &cg, NULL, NULL) && cpus_quota(cg, "/sys/fs/cgroup"))
        want = MIN(want, (gint64)cpus_quota(cg, "/sys/fs/cgroup"));
    g_free(cg);
    CU_ASSERT_EQUAL(auto_workers("incast16.ini", all.out, NULL, NULL), want);
    CU_ASSERT(compare_tree(one.out, all.out, "") >= 5);
    test_outdir_free(&one);
    test_outdir_free(&pinned);
    test_outdir_free(&all);
    /* a packet capture, or a deadlock check shorter than the 1 us lookahead: one worker (where
     * --workers 2 is refused), not an error */
    struct test_outdir cap = test_outdir_new(), dl = test_outdir_new();
    CU_ASSERT_EQUAL(auto_workers("routing/link-down.ini", cap.out, NULL, "--set scenario.stop=2ms"), 1);
    char *pcap = g_build_filename(cap.out, "leaf0-5.pcap", NULL); /* its [output] pcap = leaf0:5 */
    CU_ASSERT(g_file_test(pcap, G_FILE_TEST_IS_REGULAR));
    g_free(pcap);
    CU_ASSERT_EQUAL(auto_workers("minimal.ini", dl.out, NULL, "--set switch.deadlock_threshold=500ns"), 1);
    test_outdir_free(&cap);
    test_outdir_free(&dl);
}

/* More workers than CPUs: a warning on stderr that says how many of each (taskset leaves the
 * run one CPU), none with -q or with a worker per CPU; the results are the same. */
static char *stderr_pinned(const char *out, const char *workers, const char *quiet)
{
    char *path = test_data_path("incast16.ini");
    char *cmd = g_strdup_printf("taskset -c 0 '%s' run '%s' -o '%s' --no-plots --workers %s %s 2>&1 >/dev/null",
                                test_rocesim_bin(), path, out, workers, quiet);
    char *log = NULL;
    CU_ASSERT_EQUAL(test_run(cmd, &log), 0);
    g_free(cmd);
    g_free(path);
    return log ? log : g_strdup("");
}

static void test_more_workers_than_cpus_warned(void)
{
    struct test_outdir one = test_outdir_new(), two = test_outdir_new(), quiet = test_outdir_new();
    char *e1 = stderr_pinned(one.out, "1", ""), *e2 = stderr_pinned(two.out, "2", "");
    char *eq = stderr_pinned(quiet.out, "2", "-q");
    CU_ASSERT_PTR_NULL(strstr(e1, "warning"));
    CU_ASSERT_PTR_NOT_NULL(strstr(e2, "rocesim: warning: 2 workers on 1 CPU: they take turns"));
    CU_ASSERT_EQUAL(eq[0], '\0');
    CU_ASSERT(compare_tree(one.out, two.out, "") >= 5);
    g_free(e1);
    g_free(e2);
    g_free(eq);
    test_outdir_free(&one);
    test_outdir_free(&two);
    test_outdir_free(&quiet);
}

/* 18360 transfers: after the run their rows are formatted on the process's CPUs
 * (results_io/outcome_rows_all.c), on one when pinned to one; the same files either way, and on
 * 1, 2 and 3 workers */
static void test_rows_on_threads_same(void)
{
    same_on_any_workers("many-transfers.ini", NULL, 0);
    struct test_outdir all = test_outdir_new(), pinned = test_outdir_new();
    const char *const none[] = { NULL };
    CU_ASSERT_EQUAL_FATAL(test_run_sim_rc("many-transfers.ini", all.out, none), 0);
    CU_ASSERT_EQUAL(auto_workers("many-transfers.ini", pinned.out, "0", NULL), 1);
    CU_ASSERT(compare_tree(all.out, pinned.out, "") >= 5);
    test_outdir_free(&all);
    test_outdir_free(&pinned);
}

static CU_TestInfo tests[] = {
    { "incast with PFC storms: identical on 1, 2, 3 workers", test_incast_pfc_storm },
    { "ring AllReduce with dependencies: identical on 1, 2, 3 workers", test_collective_with_dependencies },
    { "servers and a training step: identical on 1, 2, 3 workers", test_servers_training_step },
    { "link down and route convergence: identical on 1, 2, 3 workers", test_link_fault },
    { "PFC deadlock halts the run: identical on 1, 2, 3 workers", test_deadlock },
    { "18360 transfers' rows on threads: identical on 1 CPU, 1, 2, 3 workers", test_rows_on_threads_same },
    { "a symmetric leaf-spine splits symmetrically", test_partition_splits_leaf_spine_evenly },
    { "no worker is left without nodes", test_partition_leaves_no_worker_empty },
    { "bad --workers values: exit 2", test_bad_workers_refused },
    { "more workers than parts: exit 2", test_too_many_workers_refused },
    { "packet capture with --workers 2: exit 2", test_capture_needs_one_worker },
    { "the summary's workers line agrees with summary.json", test_workers_line },
    { "--workers auto: the CPUs the process may use, as the fabric allows", test_workers_auto },
    { "more workers than CPUs: a warning, the same results", test_more_workers_than_cpus_warned },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("parallel", tests)
