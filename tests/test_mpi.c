/* MPI runs (`mpirun -np N rocesim run`, models/net_mpi.c): each rank is one worker in its own
 * process, so what threads share in memory (packets on cut links, completions, deadlock
 * requests, sampled rows, PFC rows, the nodes' state at the end) goes through MPI. The
 * results folder of 2 and 3 ranks is byte for byte that of one process, for scenarios that
 * exercise each of those: a PFC storm with a fault, collectives with dependencies, servers,
 * a link fault with route convergence, HPCC (INT stacks on packets that cross ranks), and a
 * deadlock that halts every rank. Bad input ends every rank with exit 2, one message from
 * rank 0, no folder, and no rank left waiting. */
#include "tests/same_results.h"

/* The environment and launcher every mpirun here starts with: under AddressSanitizer, Open
 * MPI's own leaks at exit are suppressed by library, which needs full stacks (its libraries
 * have no frame pointers) and its components loaded; a time limit, since a rank left waiting
 * would otherwise hang the suite. Caller frees. */
static char *mpirun_prefix(void)
{
    char *sc = test_data_path("../lsan-mpi.supp");
    char *supp = g_canonicalize_filename(sc, NULL);
    const char *asan = getenv("ASAN_OPTIONS");
    char *cmd = g_strdup_printf("ASAN_OPTIONS='%s%sfast_unwind_on_malloc=0' "
                                "LSAN_OPTIONS='suppressions=%s:print_suppressions=0' "
                                "OMPI_MCA_mca_base_component_disable_dlclose=1 "
                                "timeout -k 5 300 mpirun --allow-run-as-root --oversubscribe",
                                asan ? asan : "", asan ? ":" : "", supp);
    g_free(supp);
    g_free(sc);
    return cmd;
}

/* `mpirun -np NP rocesim run SCENARIO -o OUT -q --no-plots EXTRA`; the output in *log. */
static int mpirun_sim(int np, const char *rel, const char *out, const char *extra, char **log)
{
    char *path = test_data_path(rel), *pre = mpirun_prefix();
    char *cmd = g_strdup_printf("%s -np %d '%s' run '%s' -o '%s' -q --no-plots %s 2>&1", pre, np,
                                test_rocesim_bin(), path, out, extra ? extra : "");
    int rc = test_run(cmd, log);
    g_free(cmd);
    g_free(pre);
    g_free(path);
    return rc;
}

/* Two ranks that each run `rocesim run SCENARIO -o OUT -q --no-plots EXTRA` in their own
 * folder (mpirun's -wdir), as two machines that each read their own copy of the files. */
static int mpirun_two_dirs(const char *dir0, const char *extra0, const char *dir1, const char *extra1,
                           const char *scenario, const char *out, char **log)
{
    char *pre = mpirun_prefix(), *bin = g_canonicalize_filename(test_rocesim_bin(), NULL); /* beside -wdir */
    char *cmd = g_strdup_printf("%s -np 1 -wdir '%s' '%s' run '%s' -o '%s' -q --no-plots %s "
                                ": -np 1 -wdir '%s' '%s' run '%s' -o '%s' -q --no-plots %s 2>&1",
                                pre, dir0, bin, scenario, out, extra0 ? extra0 : "", dir1, bin, scenario, out,
                                extra1 ? extra1 : "");
    int rc = test_run(cmd, log);
    g_free(cmd);
    g_free(bin);
    g_free(pre);
    return rc;
}

/* REL (relative to tests/scenarios) in one process and on 2 and 3 ranks, `extra` options for
 * all: the same exit status `rc` and the same folder. */
static void same_on_any_ranks(const char *rel, const char *extra, int rc)
{
    if (!have_mpirun())
        return;
    struct test_outdir one = test_outdir_new();
    char **ex = extra ? g_strsplit(extra, " ", -1) : NULL;
    CU_ASSERT_EQUAL_FATAL(test_run_sim_rc(rel, one.out, (const char *const *)ex), rc);
    gint64 w1;
    guint parts1;
    char *t1;
    char *s1 = summary_masked(one.out, &w1, &parts1, &t1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s1);
    CU_ASSERT_EQUAL(w1, 1);
    CU_ASSERT_PTR_NULL(t1);
    for (int np = 2; np <= 3; np++) {
        struct test_outdir par = test_outdir_new();
        char *log = NULL;
        int got = mpirun_sim(np, rel, par.out, extra, &log);
        CU_ASSERT_EQUAL(got, rc);
        if (got != rc)
            fprintf(stderr, "\n  %s on %d ranks: exit %d, expected %d:\n%s\n", rel, np, got, rc, log);
        gint64 wn;
        guint parts;
        char *tn;
        char *sn = summary_masked(par.out, &wn, &parts, &tn);
        CU_ASSERT_PTR_NOT_NULL_FATAL(sn);
        CU_ASSERT_EQUAL(wn, np);
        CU_ASSERT_EQUAL(parts, (guint)np);
        CU_ASSERT_STRING_EQUAL(tn ? tn : "", "mpi");
        if (strcmp(s1, sn))
            fprintf(stderr, "\n  %s: summary.json differs on %d ranks\n", rel, np);
        CU_ASSERT_STRING_EQUAL(s1, sn);
        CU_ASSERT(compare_tree(one.out, par.out, "") >= 5);
        g_free(sn);
        g_free(tn);
        g_free(log);
        test_outdir_free(&par);
    }
    g_strfreev(ex);
    g_free(s1);
    test_outdir_free(&one);
}

/* an incast with PFC storms, a stalled NIC and PFC rows from every rank */
static void test_incast_pfc_storm(void)
{
    same_on_any_ranks("../../scenarios/pause-storm.ini", NULL, 0);
}

/* a ring AllReduce: steps wait for completions on other ranks; rates sampled on all */
static void test_collective_with_dependencies(void)
{
    same_on_any_ranks("../../scenarios/allreduce-ring.ini", "--set scenario.stop=300us", 0);
}

/* multi-GPU servers (kept whole on a rank) running a training step's DAG */
static void test_servers_training_step(void)
{
    same_on_any_ranks("../../scenarios/training-step.ini", "--set scenario.stop=200us", 0);
}

/* a link goes down: the global entity's copies flush only their own rank's queues */
static void test_link_fault(void)
{
    same_on_any_ranks("routing/link-down.ini", "--set output.pcap= --set scenario.stop=2ms", 0);
}

/* HPCC: every data packet crossing ranks carries its INT stack */
static void test_hpcc_int_stacks(void)
{
    same_on_any_ranks("../../scenarios/hpcc-incast.ini", "--set scenario.stop=300us", 0);
}

/* the deadlock check sees every rank's paused queues; every rank halts with exit 3 */
static void test_deadlock(void)
{
    same_on_any_ranks("../../scenarios/deadlock.ini", NULL, 3);
}

/* An MPI run refused: exit 2 within the time limit, `needle` said once, no folder. */
static void expect_refused(const char *rel, const char *extra, const char *needle)
{
    if (!have_mpirun())
        return;
    struct test_outdir o = test_outdir_new();
    char *log = NULL;
    int rc = mpirun_sim(2, rel, o.out, extra, &log);
    CU_ASSERT_EQUAL(rc, 2);
    const char *at = log ? strstr(log, needle) : NULL;
    CU_ASSERT_PTR_NOT_NULL(at);
    CU_ASSERT_PTR_NULL(at ? strstr(at + 1, needle) : NULL); /* said by one rank */
    if (rc != 2 || !at)
        fprintf(stderr, "\n  expected exit 2 and \"%s\"; exit %d: %s\n", needle, rc, log ? log : "(nothing)");
    CU_ASSERT_FALSE(g_file_test(o.out, G_FILE_TEST_EXISTS));
    g_free(log);
    test_outdir_free(&o);
}

static void test_refusals(void)
{
    expect_refused("routing/link-down.ini", "--set scenario.stop=1ms", "packet capture runs in one process only");
    expect_refused("minimal.ini", "--workers 2", "--workers 2 under mpirun: an MPI run has one worker per rank");
    expect_refused("minimal.ini", "--workers auto", "--workers auto under mpirun: an MPI run has one worker per rank");
    expect_refused("minimal.ini", "--set nic.receiver=ooo-place", "an MPI run cannot split it");
    expect_refused("no-such-scenario.ini", NULL, "no-such-scenario.ini: cannot read the scenario");
}

/* Only rank 0 checks the output folder: when it refuses, the other ranks, which could start,
 * must end too (exit 2, nothing written), not wait for it in the run. */
static void test_rank0_refusal_ends_all(void)
{
    if (!have_mpirun())
        return;
    struct test_outdir o = test_outdir_new();
    CU_ASSERT_EQUAL_FATAL(g_mkdir_with_parents(o.out, 0755), 0);
    char *mine = g_build_filename(o.out, "thesis.tex", NULL);
    CU_ASSERT_TRUE_FATAL(g_file_set_contents(mine, "mine", -1, NULL));
    char *log = NULL;
    int rc = mpirun_sim(2, "minimal.ini", o.out, NULL, &log);
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT_PTR_NOT_NULL(log && strstr(log, o.out));
    if (rc != 2)
        fprintf(stderr, "\n  exit %d: %s\n", rc, log ? log : "");
    gchar *text = NULL;
    CU_ASSERT_TRUE(g_file_get_contents(mine, &text, NULL, NULL) && !strcmp(text, "mine"));
    g_free(text);
    g_free(log);
    g_free(mine);
    test_outdir_free(&o);
}

/* Copies tests/scenarios/SRC's files `names` (NULL-ended) into DST. */
static void copy_fixture(const char *src, const char *const *names, const char *dst)
{
    CU_ASSERT_EQUAL_FATAL(g_mkdir_with_parents(dst, 0755), 0);
    for (const char *const *f = names; *f; f++) {
        char *rel = g_build_filename(src, *f, NULL), *from = test_data_path(rel), *to = g_build_filename(dst, *f, NULL);
        gchar *text = NULL;
        gsize len = 0;
        CU_ASSERT_TRUE_FATAL(g_file_get_contents(from, &text, &len, NULL));
        CU_ASSERT_TRUE_FATAL(g_file_set_contents(to, text, (gssize)len, NULL));
        g_free(text);
        g_free(to);
        g_free(from);
        g_free(rel);
    }
}

/* Replaces the first `old` in DIR/FILE by `new` (the fixture must hold it). */
static void edit_fixture(const char *dir, const char *file, const char *old, const char *new)
{
    char *path = g_build_filename(dir, file, NULL);
    gchar *text = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(path, &text, NULL, NULL));
    char *at = strstr(text, old);
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    *at = 0;
    char *edited = g_strconcat(text, new, at + strlen(old), NULL);
    CU_ASSERT_TRUE_FATAL(g_file_set_contents(path, edited, -1, NULL));
    g_free(edited);
    g_free(text);
    g_free(path);
}

/* Two ranks whose inputs differ in one file (dir b's copy edited): exit 2, rank 0's one
 * message naming the rank and what differs, and no results folder. */
static void expect_different_model(const char *src, const char *const *names, const char *scenario, const char *file,
                                   const char *old, const char *new, const char *what)
{
    struct test_outdir o = test_outdir_new();
    char *a = g_build_filename(o.tmp, "a", NULL), *b = g_build_filename(o.tmp, "b", NULL);
    copy_fixture(src, names, a);
    copy_fixture(src, names, b);
    edit_fixture(b, file, old, new);
    char *log = NULL;
    int rc = mpirun_two_dirs(a, NULL, b, NULL, scenario, o.out, &log);
    CU_ASSERT_EQUAL(rc, 2);
    char *want = g_strdup_printf("rocesim: %s: MPI rank 1 built a different model from rank 0's: %s", scenario, what);
    CU_ASSERT_PTR_NOT_NULL(log && strstr(log, want));
    if (rc != 2 || !log || !strstr(log, want))
        fprintf(stderr, "\n  %s edited on rank 1: exit %d, expected \"%s\":\n%s\n", file, rc, want, log ? log : "");
    CU_ASSERT_FALSE(g_file_test(o.out, G_FILE_TEST_EXISTS));
    g_free(want);
    g_free(log);
    g_free(a);
    g_free(b);
    test_outdir_free(&o);
}

/* Each rank reads the scenario, its options and the files it names on its own machine. A
 * rank that built another model would exchange handler indices, ports and QPs that mean
 * something else on the others, and the results would be wrong without a word. */
static void test_ranks_build_one_model(void)
{
    if (!have_mpirun())
        return;
    /* the options: one rank's --set (a rank's command line is its own under MPMD launches) */
    struct test_outdir o = test_outdir_new();
    char *rel = test_data_path("."), *dir = g_canonicalize_filename(rel, NULL);
    g_free(rel);
    char *log = NULL;
    int rc = mpirun_two_dirs(dir, NULL, dir, "--set scenario.stop=2ms", "minimal.ini", o.out, &log);
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT_PTR_NOT_NULL(log && strstr(log, "minimal.ini: MPI rank 1 built a different model from rank 0's: "
                                              "its scenario differs"));
    CU_ASSERT_PTR_NULL(log && strstr(log, "rocesim (MPI rank 1)")); /* one message, rank 0's */
    CU_ASSERT_FALSE(g_file_test(o.out, G_FILE_TEST_EXISTS));
    g_free(log);
    /* the same options on both: the run goes ahead */
    rc = mpirun_two_dirs(dir, "--seed 5", dir, "--seed 5", "minimal.ini", o.out, &log);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_TRUE(g_file_test(o.out, G_FILE_TEST_IS_DIR));
    g_free(log);
    g_free(dir);
    test_outdir_free(&o);
    /* a file the scenario names, at the same path, with other contents on rank 1's machine */
    const char *const sched[] = { "rate-gap.ini", "rate-gap.sched", NULL };
    expect_different_model("results", sched, "rate-gap.ini", "rate-gap.sched", "\n1 1 0 100000 ", "\n1 1 0 100001 ",
                           "its schedule differs");
    const char *const edges[] = { "edges.ini", "fabric.topo", NULL };
    expect_different_model("edges400", edges, "edges.ini", "fabric.topo", "link leaf1 spine1 400Gbps 1us",
                           "link leaf1 spine1 400Gbps 2us", "its topology differs");
    expect_different_model("edges400", edges, "edges.ini", "edges.ini", "cc_preset = hpcc_ns3", "cc_preset = connectx",
                           "its scenario differs");
}

/* Each rank builds the whole fabric, so on one machine N ranks need N times one process's
 * memory. M is the smallest power-of-two limit one process's estimate E fits in (`check`,
 * which is one process): E > M / 2, so 2 ranks on this machine (2E) do not fit in M and are
 * refused with both figures, and they fit in 2M. */
static void test_memory_counts_every_rank(void)
{
    if (!have_mpirun())
        return;
    char *path = test_data_path("minimal.ini");
    uint64_t m = 4096;
    for (; m < (1ull << 34); m *= 2) {
        char lim[32];
        g_snprintf(lim, sizeof lim, "%" G_GUINT64_FORMAT "B", m);
        const char *args[] = { "check", path, "--max-memory", lim, NULL };
        char *so = NULL, *se = NULL;
        int rc = test_rocesim(args, NULL, &so, &se);
        g_free(so);
        g_free(se);
        if (rc == 0)
            break;
        CU_ASSERT_EQUAL_FATAL(rc, 2);
    }
    CU_ASSERT_FATAL(m > 4096 && m < (1ull << 34)); /* a limit refused first, then one that fits */
    char extra[64];
    g_snprintf(extra, sizeof extra, "--max-memory %" G_GUINT64_FORMAT "B", m);
    expect_refused("minimal.ini", extra, "on each of the 2 MPI ranks on this machine");
    struct test_outdir o = test_outdir_new();
    g_snprintf(extra, sizeof extra, "--max-memory %" G_GUINT64_FORMAT "B", 2 * m);
    char *log = NULL;
    int rc = mpirun_sim(2, "minimal.ini", o.out, extra, &log);
    CU_ASSERT_EQUAL(rc, 0);
    if (rc != 0)
        fprintf(stderr, "\n  2 ranks in %s: exit %d:\n%s\n", extra, rc, log ? log : "");
    g_free(log);
    test_outdir_free(&o);
    g_free(path);
}

/* More ranks on this machine than its CPUs online: rank 0 warns, once; as many as the CPUs:
 * no warning. (Runs where one CPU more is few ranks: up to 3 CPUs, as in CI.) */
static void test_more_ranks_than_cpus_warned(void)
{
    if (!have_mpirun())
        return;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1 || cpus > 3) {
        fprintf(stderr, "\n  SKIPPED: %ld CPUs online (the check runs %ld + 1 ranks up to 3 CPUs)\n", cpus, cpus);
        return;
    }
    char *path = test_data_path("minimal.ini"), *pre = mpirun_prefix();
    for (long np = cpus; np <= cpus + 1; np++) {
        if (np < 2)
            continue;
        struct test_outdir o = test_outdir_new();
        char *cmd = g_strdup_printf("%s -np %ld '%s' run '%s' -o '%s' --no-plots 2>&1 >/dev/null", pre, np,
                                    test_rocesim_bin(), path, o.out);
        char *log = NULL;
        CU_ASSERT_EQUAL(test_run(cmd, &log), 0);
        char *want = g_strdup_printf("rocesim: warning: %ld MPI ranks on this machine's %ld CPU", np, cpus);
        const char *at = log ? strstr(log, want) : NULL;
        if (np > cpus) {
            CU_ASSERT_PTR_NOT_NULL(at);
            CU_ASSERT(at == NULL || strstr(at + strlen(want), "MPI ranks on this machine") == NULL); /* once */
        } else {
            CU_ASSERT_PTR_NULL(log ? strstr(log, "MPI ranks on this machine") : NULL);
        }
        g_free(want);
        g_free(log);
        g_free(cmd);
        test_outdir_free(&o);
    }
    g_free(pre);
    g_free(path);
}

static CU_TestInfo tests[] = {
    { "incast with PFC storms: identical on 1 process, 2 and 3 ranks", test_incast_pfc_storm },
    { "ring AllReduce with dependencies: identical on 2 and 3 ranks", test_collective_with_dependencies },
    { "servers and a training step: identical on 2 and 3 ranks", test_servers_training_step },
    { "link down and route convergence: identical on 2 and 3 ranks", test_link_fault },
    { "HPCC with INT stacks: identical on 2 and 3 ranks", test_hpcc_int_stacks },
    { "PFC deadlock halts every rank: exit 3, identical", test_deadlock },
    { "pcap, --workers (a number or auto), ooo-place and a missing file under mpirun: exit 2", test_refusals },
    { "rank 0 refusing the output folder ends every rank", test_rank0_refusal_ends_all },
    { "the memory limit counts every rank on the machine", test_memory_counts_every_rank },
    { "ranks that read different scenarios, options, schedules or topologies: exit 2, named", test_ranks_build_one_model },
    { "more ranks than CPUs on the machine: rank 0 warns", test_more_ranks_than_cpus_warned },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("mpi", tests)
