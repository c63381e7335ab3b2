/* `rocesim run` on a terminal says what it is doing while nothing else shows (building the
 * topology, the schedule and the fabric, choosing the sampled ports, writing the results,
 * drawing the plots), each on one line that it clears before the
 * next text, and says nothing of it when stderr is not a terminal (the other suites run it
 * so) or with --quiet. The terminal is a pseudo-terminal (forkpty). */
#include "tests/testutil.h"
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs rocesim with args on a pseudo-terminal; returns what it printed, *rc its exit status. */
static GString *run_on_pty(const char *const *args, int *rc)
{
    int fd;
    pid_t pid = forkpty(&fd, NULL, NULL, NULL);
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        execv(test_rocesim_bin(), (char *const *)args);
        _exit(127);
    }
    GString *out = g_string_new(NULL);
    char buf[4096];
    ssize_t k;
    while ((k = read(fd, buf, sizeof buf)) > 0) /* EIO once the child has closed the terminal */
        g_string_append_len(out, buf, k);
    close(fd);
    int st = 0;
    waitpid(pid, &st, 0);
    *rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return out;
}

static void test_stages_on_a_terminal(void)
{
    struct test_outdir d = test_outdir_new();
    char *scen = test_data_path("minimal.ini");
    const char *args[] = { test_rocesim_bin(), "run", scen, "-o", d.out, "--no-plots", NULL };
    int rc;
    GString *out = run_on_pty(args, &rc);
    CU_ASSERT_EQUAL(rc, 0);
    /* the steps of building, in the order they run, each named */
    const char *topo = strstr(out->str, "building the topology");
    const char *sched = strstr(out->str, "building the schedule");
    /* minimal.ini: 2 leaves of 8 hosts, an incast from 3 senders */
    const char *build = strstr(out->str, "building the fabric: 16 hosts, the QPs of 3 transfers");
    const char *ports = strstr(out->str, "choosing the ports to sample");
    const char *write = strstr(out->str, "writing the results");
    const char *summary = strstr(out->str, "results in ");
    CU_ASSERT_PTR_NOT_NULL(topo);
    CU_ASSERT_PTR_NOT_NULL(sched);
    CU_ASSERT_PTR_NOT_NULL(build);
    CU_ASSERT_PTR_NOT_NULL(ports);
    CU_ASSERT_PTR_NOT_NULL(write);
    CU_ASSERT_PTR_NOT_NULL(summary);
    if (topo && sched && build && ports && write && summary) {
        CU_ASSERT(topo < sched && sched < build && build < ports && ports < write && write < summary);
        /* the line is cleared (carriage return, spaces, carriage return) before the summary */
        const char *clear = strstr(write, "\r    ");
        CU_ASSERT(clear && clear < summary);
    }
    CU_ASSERT_PTR_NULL(strstr(out->str, "drawing the plots")); /* --no-plots */
    g_string_free(out, TRUE);

    /* --quiet: nothing at all */
    const char *quiet[] = { test_rocesim_bin(), "run", scen, "-o", d.out, "--no-plots", "--quiet", NULL };
    out = run_on_pty(quiet, &rc);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NULL(strstr(out->str, "building the fabric"));
    CU_ASSERT_PTR_NULL(strstr(out->str, "writing the results"));
    g_string_free(out, TRUE);
    g_free(scen);
    test_outdir_free(&d);
}

static void test_no_stages_off_a_terminal(void)
{
    struct test_outdir d = test_outdir_new();
    const char *extra[] = { "--no-plots", NULL };
    char *err = NULL;
    char *scen = test_data_path("minimal.ini");
    const char *args[] = { "run", scen, "-o", d.out, NULL };
    CU_ASSERT_EQUAL(test_rocesim(args, extra, NULL, &err), 0);
    CU_ASSERT_PTR_NULL(strstr(err ? err : "", "building the fabric"));
    CU_ASSERT_PTR_NULL(strstr(err ? err : "", "writing the results"));
    g_free(err);
    g_free(scen);
    test_outdir_free(&d);
}

static CU_TestInfo tests[] = {
    { "on a terminal: building, writing, each line cleared before the summary", test_stages_on_a_terminal },
    { "not a terminal: no stage lines", test_no_stages_off_a_terminal },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("terminal_stages", tests)
