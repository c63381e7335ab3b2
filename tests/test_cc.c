/* DCTCP and TIMELY reaction against values worked out by hand from shared/reference/models.md
 * 6.2 and 6.3, and both end to end on an incast. */
#include <math.h>
#include <string.h>
#include "models/cc.h"
#include "tests/cc_testutil.h"
#include "tests/testutil.h"

#define US(x) ((simtime_t)(x) * PS_PER_US)
#define LINE 100e9
#define ASSERT_RATE(actual, expected) CU_ASSERT_DOUBLE_EQUAL((actual), (expected), fabs(expected) * 1e-9 + 1e-3)

static struct scenario *load(void)
{
    return test_scenario_load("minimal.ini", NULL);
}

static struct cc_ack ack(uint32_t acked, uint32_t psn, uint32_t snd_nxt, bool ece, simtime_t rtt)
{
    return (struct cc_ack){ .rtt = rtt, .acked_pkts = acked, .ack_psn = psn, .snd_nxt = snd_nxt, .ece = ece };
}

/* g = 1/16, rate_ai = 615 Mb/s, alpha starts at 1.
 *   ACK psn 4 (no ECE): first window closes: alpha = 15/16 = 0.9375; +AI, capped at line.
 *   ACK psn 8 ECE: cut once: R = 100e9 (1 - 0.9375/2) = 53.125e9; CWR until psn 64.
 *   ACK psn 62 ECE: still in CWR, no cut; window closes with F = 58/58:
 *       alpha = 0.9375 * 15/16 + 1/16 = 0.94140625; no increase in CWR.
 *   ACK psn 65: leaves CWR.
 *   ACK psn 121, no ECE: window with F = 0 (59 acked): alpha = 0.94140625 * 15/16
 *       = 0.882568359375; R = 53.125e9 + 615e6 = 53.74e9. */
static void test_dctcp(void)
{
    struct scenario *s = load();
    const struct cc_ops *D = &cc_dctcp_ops;
    struct cc_flow f;
    memset(&f, 0, sizeof f);
    D->init(&f, s, cc_test_env_for(s, D, LINE), 0);
    CU_ASSERT_EQUAL(f.rate, LINE);
    struct cc_ack a = ack(4, 4, 60, false, US(10));
    D->on_ack(&f, US(10), &a);
    CU_ASSERT_DOUBLE_EQUAL(f.u.c.alpha, 0.9375, 1e-12);
    CU_ASSERT_EQUAL(f.rate, LINE);
    a = ack(4, 8, 64, true, US(10));
    D->on_ack(&f, US(11), &a);
    ASSERT_RATE(f.rate, 53.125e9);
    CU_ASSERT_TRUE(f.u.c.in_cwr);
    a = ack(54, 62, 120, true, US(10));
    D->on_ack(&f, US(12), &a);
    ASSERT_RATE(f.rate, 53.125e9);
    CU_ASSERT_DOUBLE_EQUAL(f.u.c.alpha, 0.94140625, 1e-12);
    a = ack(3, 65, 120, false, US(10));
    D->on_ack(&f, US(13), &a);
    CU_ASSERT_FALSE(f.u.c.in_cwr);
    a = ack(56, 121, 180, false, US(10));
    D->on_ack(&f, US(14), &a);
    CU_ASSERT_DOUBLE_EQUAL(f.u.c.alpha, 0.882568359375, 1e-12);
    ASSERT_RATE(f.rate, 53.74e9);
    scenario_free(s);
}

/* alpha 0.875, beta 0.8, t_low 50 us, t_high 500 us, min_rtt 20 us, AI 100 Mb/s and HAI 500
 * Mb/s at 100 Gb/s (10 Mb/s per 10 Gb/s; 5x).
 *   psn 4, rtt 30 us: rtt < t_low, raise (capped at line).
 *   psn 30, rtt 100 us: diff 70 us: rtt_diff = 0.875 * 70 = 61.25 us; no decision (psn <= 60).
 *   psn 61, rtt 105 us: diff 5 us: rtt_diff = 0.125 * 61.25 + 0.875 * 5 = 12.03125 us;
 *       gradient 0.6015625 > 0 between the thresholds: R = 100e9 (1 - 0.8 * 0.6015625)
 *       = 51.875e9.
 *   psn 101, rtt 600 us > t_high: R = 51.875e9 (1 - 0.8 (1 - 500/600)) = 44.958333...e9.
 *   then five decisions with rtt 30 us: +100, +100, +100, +100 Mb/s, then +500 (hyper). */
static void test_timely(void)
{
    struct scenario *s = load();
    const struct cc_ops *T = &cc_timely_ops;
    struct cc_flow f;
    memset(&f, 0, sizeof f);
    T->init(&f, s, cc_test_env_for(s, T, LINE), 0);
    struct cc_ack a = ack(4, 4, 60, false, US(30));
    T->on_ack(&f, 0, &a);
    CU_ASSERT_EQUAL(f.rate, LINE);
    a = ack(26, 30, 90, false, US(100));
    T->on_ack(&f, 0, &a);
    CU_ASSERT_DOUBLE_EQUAL(f.u.t.rtt_diff, 61.25e6, 1e-3);
    CU_ASSERT_EQUAL(f.rate, LINE);
    a = ack(31, 61, 100, false, US(105));
    T->on_ack(&f, 0, &a);
    CU_ASSERT_DOUBLE_EQUAL(f.u.t.rtt_diff, 12.03125e6, 1e-3);
    ASSERT_RATE(f.rate, 51.875e9);
    a = ack(40, 101, 150, false, US(600));
    T->on_ack(&f, 0, &a);
    double r = 51.875e9 * (1 - 0.8 * (1 - 500.0 / 600.0));
    ASSERT_RATE(f.rate, r);
    uint32_t psn = 150;
    const double steps[] = { 100e6, 100e6, 100e6, 100e6, 500e6 };
    for (int i = 0; i < 5; i++) {
        a = ack(10, psn + 1, psn + 10, false, US(30));
        T->on_ack(&f, 0, &a);
        r += steps[i];
        ASSERT_RATE(f.rate, r);
        psn += 10;
    }
    scenario_free(s);
}

/* Both complete an incast end to end without drops and actually cut their rates. */
static void test_end_to_end(void)
{
    const char *ccs[] = { "dctcp", "timely" };
    for (int i = 0; i < 2; i++) {
        char *tmp = test_tmpdir();
        char *out = g_build_filename(tmp, ccs[i], NULL);
        char *cc = g_strdup_printf("nic.cc=%s", ccs[i]);
        const char *extra[] = { "--set", cc, "--set", "switch.ecn_kmin=50KB", "--set", "switch.ecn_kmax=50KB",
                                "--set", "switch.ecn_pmax=1", "--set", "switch.pfc=on", NULL };
        CU_ASSERT_EQUAL_FATAL(test_run_sim("incast16.ini", out, extra), 0);
        CU_ASSERT_EQUAL(test_metric(out, "transfers_completed"), 16);
        CU_ASSERT_EQUAL(test_metric(out, "drops"), 0);
        CU_ASSERT_EQUAL(test_metric(out, "cnp_sent"), 0); /* no CNPs: these react to ACKs */
        /* some rate below line rate was logged */
        char *p = g_build_filename(out, "rates.csv", NULL), *text = NULL;
        g_file_get_contents(p, &text, NULL, NULL);
        gboolean cut = FALSE;
        char *save = NULL;
        for (char *line = text ? strtok_r(text, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
            double t, flow, rate;
            if (sscanf(line, "%lf,%lf,%lf", &t, &flow, &rate) == 3 && rate < 50)
                cut = TRUE;
        }
        CU_ASSERT_TRUE(cut);
        g_free(text);
        g_free(p);
        g_free(cc);
        g_free(out);
        test_rmtree(tmp);
        g_free(tmp);
    }
}

static CU_TestInfo tests[] = {
    { "DCTCP: alpha per window, one cut per window, CWR, additive increase", test_dctcp },
    { "TIMELY: RTT gradient, thresholds, hyper increase", test_timely },
    { "DCTCP and TIMELY end to end on a 16-to-1 incast", test_end_to_end },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("cc", tests)
