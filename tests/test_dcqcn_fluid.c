/* DCQCN against its fluid model (shared/reference/models.md 2.2-2.3): N long flows on one
 * 40 Gb/s link with the paper's parameters. After the start-up transient the time-averaged
 * queue and the marked fraction must sit near the model's fixed point, within the
 * tens-of-percent agreement the reference says to expect, and the queue must grow with N. */
#include <math.h>
#include <string.h>
#include "tests/testutil.h"

#define T0_NS 20000000.0 /* after about 1.5 alpha time constants (K/g = 14 ms) */
#define T1_NS 60000000.0

/* Time-weighted mean of leaf0:0 prio 3 depth over [T0, T1] from queues.csv (samples are
 * written when the depth changes). */
static double mean_queue(const char *dir)
{
    char *p = g_build_filename(dir, "queues.csv", NULL);
    char *text = NULL;
    g_file_get_contents(p, &text, NULL, NULL);
    g_free(p);
    if (!text)
        return -1;
    double acc = 0, last_t = -1, last_b = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char node[32];
        int port, prio;
        double t, b;
        if (sscanf(line, "%lf,%31[^,],%d,%d,%lf", &t, node, &port, &prio, &b) != 5 || strcmp(node, "leaf0") ||
            port != 0 || prio != 3)
            continue;
        if (last_t >= 0) {
            double a = fmax(last_t, T0_NS), e = fmin(t, T1_NS);
            if (e > a)
                acc += last_b * (e - a);
        }
        last_t = t;
        last_b = b;
    }
    if (last_t < T1_NS)
        acc += last_b * (T1_NS - fmax(last_t, T0_NS));
    g_free(text);
    return acc / (T1_NS - T0_NS);
}

/* ECN marks at leaf0:0 between T0 and T1 (counters.csv holds cumulative samples). */
static double marks_between(const char *dir)
{
    char *p = g_build_filename(dir, "counters.csv", NULL);
    char *text = NULL;
    g_file_get_contents(p, &text, NULL, NULL);
    g_free(p);
    if (!text)
        return -1;
    double at0 = 0, at1 = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char node[32], name[64];
        int port;
        double t, v;
        if (sscanf(line, "%lf,%31[^,],%d,%63[^,],%lf", &t, node, &port, name, &v) != 5 || strcmp(node, "leaf0") ||
            port != 0 || strcmp(name, "ecn_marked"))
            continue;
        if (t <= T0_NS)
            at0 = v;
        if (t <= T1_NS)
            at1 = v;
    }
    g_free(text);
    return at1 - at0;
}

static void test_fixed_point(void)
{
    /* models.md 2.3: N, p*, q* (KB) */
    const struct {
        int n;
        double p, q_kb;
    } model[] = { { 2, 7.77e-4, 20.2 }, { 4, 1.89e-3, 41.8 }, { 8, 4.55e-3, 93.8 } };
    char *tmp = test_tmpdir();
    double prev_q = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(model); i++) {
        char *out = g_strdup_printf("%s/n%d", tmp, model[i].n);
        char *senders = g_strdup_printf("workload long.senders=1-%d", model[i].n);
        const char *extra[] = { "--set", senders, NULL };
        CU_ASSERT_EQUAL_FATAL(test_run_sim("../../scenarios/dcqcn-fluid.ini", out, extra), 0);
        double q_kb = mean_queue(out) / 1e3;
        /* packets through the bottleneck in the window, at line rate (utilisation is ~1) */
        double pkts = 40e9 * (T1_NS - T0_NS) * 1e-9 / ((1024 + 62) * 8.0);
        double p = marks_between(out) / pkts;
        printf("\n    N=%d: queue %.1f KB (model %.1f), marked %.2e (model %.2e) ", model[i].n, q_kb, model[i].q_kb, p,
               model[i].p);
        CU_ASSERT(q_kb > 0.6 * model[i].q_kb && q_kb < 1.6 * model[i].q_kb);
        CU_ASSERT(p > 0.5 * model[i].p && p < 2.0 * model[i].p);
        CU_ASSERT(q_kb > prev_q); /* the queue grows with the number of flows */
        prev_q = q_kb;
        g_free(senders);
        g_free(out);
    }
    test_rmtree(tmp);
    g_free(tmp);
}

static CU_TestInfo tests[] = {
    { "queue and marking near the fluid fixed point, growing with N", test_fixed_point },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("dcqcn fluid model", tests)
