/* The UDP transport's congestion control glue (replay/udp_cc.c): the simulator's DCQCN driven
 * through it on the replay's nanosecond clock, its pacing, and the notification point's CNP
 * moderation. Expected values are worked out by hand from shared/reference/models.md 1.2
 * (NP) and 1.3.1 / 1.3.3 (paper and ConnectX reaction points); the loader's presets give the
 * parameters (tests/scenarios/dcqcn_unit.ini).
 *
 * Every time is offset by an arbitrary CLOCK_MONOTONIC epoch E, so the ns -> ps conversion is
 * part of what is checked. */
#include <math.h>
#include "replay/udp_cc.h"
#include "tests/testutil.h"

#define E ((int64_t)7000000000)   /* the transport's creation, ns */
#define NS(us) (E + (int64_t)((us) * 1000))
#define ASSERT_RATE(actual, expected) CU_ASSERT_DOUBLE_EQUAL((actual), (expected), fabs(expected) * 1e-9 + 1e-3)
#define ASSERT_ALPHA(actual, expected) CU_ASSERT_DOUBLE_EQUAL((actual), (expected), 1e-12)

static struct scenario *load(const char *const *sets)
{
    return test_scenario_load("dcqcn_unit.ini", sets);
}

static struct udp_cc host(const struct scenario *s, double line)
{
    const char *why = NULL;
    struct udp_cc cc = { .ops = udp_cc_for(s, &why), .sc = s, .line_bps = line, .epoch_ns = E };
    CU_ASSERT_PTR_NOT_NULL_FATAL(cc.ops);
    return cc;
}

/* dcqcn_paper preset (models.md 1.3.1): g = 1/256, K = T = 55 us, Rt <- Rc on every CNP.
 * Line rate 10 Gb/s (the replay's --rate).
 *   CNP at E: alpha = 1 (initial 1024/1024): Rt = Rc = 10e9, Rc = 10e9 (1 - 1/2) = 5e9;
 *             alpha = (1-g) 1 + g = 1
 *   E + 55 us: timer: fast recovery Rc = (10 + 5)/2 = 7.5e9; alpha timer, no CNP in K:
 *             alpha = (1-g) = 255/256
 *   E + 110 us: Rc = (10 + 7.5)/2 = 8.75e9; alpha = (255/256)^2 = 0.9922027587890625
 *   CNP at E + 120 us: Rt = 8.75e9, Rc = 8.75e9 (1 - 0.9922027587890625/2)
 *             = 8.75e9 x 0.50389862060546875 = 4409112930.2978515625;
 *             alpha = (255/256)^3 + 1/256; both timers restart: next change at E + 175 us */
static void test_paper_rule(void)
{
    const char *sets[] = { "nic.cc=dcqcn", "nic.cc_preset=dcqcn_paper", NULL };
    struct scenario *s = load(sets);
    struct udp_cc cc = host(s, 10e9);
    CU_ASSERT_STRING_EQUAL(cc.ops->name, "dcqcn");
    struct udp_cc_qp q;
    udp_cc_qp_init(&cc, &q, E);
    CU_ASSERT_EQUAL(udp_cc_rate(&cc, &q, E), 10e9);
    CU_ASSERT_EQUAL(udp_cc_next_change(&cc, &q), INT64_MAX);

    udp_cc_notified(&cc, &q, E);
    ASSERT_RATE(udp_cc_rate(&cc, &q, E), 5e9);
    ASSERT_RATE(q.f.u.d.rt, 10e9);
    ASSERT_ALPHA(q.f.u.d.alpha, 1.0);
    CU_ASSERT_EQUAL(udp_cc_next_change(&cc, &q), NS(55));
    ASSERT_RATE(udp_cc_rate(&cc, &q, NS(55) - 1), 5e9);
    ASSERT_RATE(udp_cc_rate(&cc, &q, NS(55)), 7.5e9);
    ASSERT_ALPHA(q.f.u.d.alpha, 255.0 / 256);

    udp_cc_notified(&cc, &q, NS(120));
    ASSERT_RATE(q.f.u.d.rt, 8.75e9);
    ASSERT_RATE(udp_cc_rate(&cc, &q, NS(120)), 4409112930.2978515625);
    ASSERT_ALPHA(q.f.u.d.alpha, pow(255.0 / 256, 3) + 1.0 / 256);
    CU_ASSERT_EQUAL(udp_cc_next_change(&cc, &q), NS(175));
    CU_ASSERT_EQUAL(q.cnp_handled, 2);
    ASSERT_RATE(q.min_rate, 4409112930.2978515625);
    scenario_free(s);
}

/* connectx preset (models.md 1.3.3), line 25 Gb/s: q = 1019/1024, g = 5/1024,
 * a0 = 1023/1024, alpha every 1 us, decrease gate 4 us, clamp_tgt_rate off.
 *   CNP at E + 10 us: no cut yet (gated); the cut at the period's end, E + 14 us, with alpha
 *   after the ticks at 11 (CNP seen: q a0 + g) and 12, 13, 14 (quiet: x q^3):
 *     a = (q a0 + g) q^3; Rc = 25e9 (1 - a/2); Rt stays 25e9 (no increase since). */
static void test_gated_first_cnp(void)
{
    struct scenario *s = load(NULL);
    CU_ASSERT_EQUAL_FATAL(s->cc, CC_ID_dcqcn);
    struct udp_cc cc = host(s, 25e9);
    struct udp_cc_qp q;
    udp_cc_qp_init(&cc, &q, E);
    udp_cc_notified(&cc, &q, NS(10));
    CU_ASSERT_EQUAL(udp_cc_rate(&cc, &q, NS(14) - 1), 25e9);
    CU_ASSERT_EQUAL(udp_cc_next_change(&cc, &q), NS(14));
    const double qq = 1019.0 / 1024, g = 5.0 / 1024, a0 = 1023.0 / 1024;
    double a = (qq * a0 + g) * pow(qq, 3);
    ASSERT_RATE(udp_cc_rate(&cc, &q, NS(14)), 25e9 * (1 - a / 2));
    ASSERT_ALPHA(q.f.u.d.alpha, a);
    ASSERT_RATE(q.f.u.d.rt, 25e9);
    scenario_free(s);
}

/* Pacing (models/nic.c next_avail): a QP may send again one wire time of its last packet at
 * its current rate after that packet's slot; a rate cut in between re-paces the wait.
 *   1100 wire bytes at 10 Gb/s: 880 ns; after the paper cut to 5 Gb/s: 1760 ns.
 * A QP idle for long earns at most UDP_PACE_CREDIT_NS of burst. */
static void test_pacing(void)
{
    const char *sets[] = { "nic.cc_preset=dcqcn_paper", NULL };
    struct scenario *s = load(sets);
    struct udp_cc cc = host(s, 10e9);
    struct udp_cc_qp q;
    udp_cc_qp_init(&cc, &q, E);
    CU_ASSERT(isinf(udp_cc_ready_at(&cc, &q, E)));           /* nothing sent: at once */
    udp_cc_sent(&cc, &q, E, -INFINITY, 1080, 1100);
    CU_ASSERT_DOUBLE_EQUAL(udp_cc_ready_at(&cc, &q, E + 1), (double)E + 880, 1e-6);
    udp_cc_notified(&cc, &q, E + 100);
    CU_ASSERT_DOUBLE_EQUAL(udp_cc_ready_at(&cc, &q, E + 101), (double)E + 1760, 1e-6);
    /* sent in its slot: the next slot follows on from it, not from the send time */
    udp_cc_sent(&cc, &q, E + 1800, (double)E + 1760, 1080, 1100);
    CU_ASSERT_DOUBLE_EQUAL(udp_cc_ready_at(&cc, &q, E + 1801), (double)E + 1760 + 1760, 1e-6);
    /* 10 ms idle: the slot is clamped to 1 ms before the send */
    udp_cc_sent(&cc, &q, NS(10000), (double)E + 3520, 1080, 1100);
    CU_ASSERT_DOUBLE_EQUAL(q.paced_at, (double)NS(10000) - UDP_PACE_CREDIT_NS, 1e-6);
    /* without a line rate (an unpaced replay) nothing waits */
    struct udp_cc none = { .ops = &cc_none_ops, .line_bps = 0, .epoch_ns = E };
    struct udp_cc_qp n;
    udp_cc_qp_init(&none, &n, E);
    udp_cc_sent(&none, &n, E, -INFINITY, 1080, 1100);
    CU_ASSERT(isinf(udp_cc_ready_at(&none, &n, E + 1)));
    scenario_free(s);
}

/* cc = none: CNPs are counted, the rate stays at line. */
static void test_none_counts_only(void)
{
    const char *sets[] = { "nic.cc=none", NULL };
    struct scenario *s = load(sets);
    struct udp_cc cc = host(s, 10e9);
    CU_ASSERT_PTR_EQUAL(cc.ops, &cc_none_ops);
    struct udp_cc_qp q;
    udp_cc_qp_init(&cc, &q, E);
    for (int i = 0; i < 10; i++)
        udp_cc_notified(&cc, &q, NS(i));
    CU_ASSERT_EQUAL(q.cnp_handled, 10);
    CU_ASSERT_EQUAL(udp_cc_rate(&cc, &q, NS(100)), 10e9);
    CU_ASSERT_EQUAL(q.min_rate, 10e9);
    scenario_free(s);
}

/* Only algorithms that need nothing from ACKs run on this transport. */
static void test_supported_algorithms(void)
{
    const char *names[] = { "none", "dcqcn", "dctcp", "timely", "hpcc" };
    for (int i = 0; i < 5; i++) {
        char *set = g_strdup_printf("nic.cc=%s", names[i]);
        const char *sets[] = { set, NULL };
        struct scenario *s = load(sets);
        const char *why = NULL;
        const struct cc_ops *ops = udp_cc_for(s, &why);
        if (i < 2) {
            CU_ASSERT_PTR_NOT_NULL(ops);
            if (ops)
                CU_ASSERT_STRING_EQUAL(ops->name, names[i]);
        } else {
            CU_ASSERT_PTR_NULL(ops);
            CU_ASSERT_PTR_NOT_NULL(why);
        }
        scenario_free(s);
        g_free(set);
    }
    const char *why = NULL;
    CU_ASSERT_PTR_EQUAL(udp_cc_for(NULL, &why), &cc_none_ops);
}

/* CE on every datagram, one per us per QP for 100 us (QP 0 at k us, QP 1 at k + 0.5 us);
 * returns the CNPs each QP's datagrams got. peer1: QP 1's sender. */
static void ce_storm(struct udp_np *np, uint32_t peer1, uint32_t got[2])
{
    uint32_t slot[2] = { udp_np_slot(np, 0, 0), udp_np_slot(np, 1, peer1) };
    got[0] = got[1] = 0;
    for (int k = 0; k < 100; k++)
        for (int i = 0; i < 2; i++)
            got[i] += udp_np_take(np, slot[i], E + k * 1000 + i * 500);
}

/* models.md 1.2 / models/nic.c np_send_cnp: a CE datagram gets a CNP unless its slot sent one
 * within min_time_between_cnps.
 *   connectx, 4 us per QP: CNPs at 0, 4, ..., 96 us: 25 per QP.
 *   per port: one slot for both QPs: QP 0's datagrams at 0, 4, ... take every window: 25 + 0.
 *   per destination: both QPs from one sender share a slot (25 + 0), from two they do not.
 *   hpcc_ns3 (np_feedback = ack_flag, no moderation): every CE datagram, 100 each.
 *   no scenario: [DCQCN15]'s N = 50 us per QP: 0 and 50 us, 2 each. */
static void test_np_moderation(void)
{
    uint32_t got[2];
    struct udp_np np;
    struct scenario *s = load(NULL);
    udp_np_init(&np, cc_dcqcn_params(s), 2, 2);
    CU_ASSERT_EQUAL(np.gap_ns, 4000);
    ce_storm(&np, 0, got);
    CU_ASSERT_EQUAL(got[0], 25);
    CU_ASSERT_EQUAL(got[1], 25);
    udp_np_clear(&np);
    scenario_free(s);

    const char *port[] = { "dcqcn.cnp_scope=port", NULL };
    s = load(port);
    udp_np_init(&np, cc_dcqcn_params(s), 2, 2);
    ce_storm(&np, 1, got);
    CU_ASSERT_EQUAL(got[0], 25);
    CU_ASSERT_EQUAL(got[1], 0);
    udp_np_clear(&np);
    scenario_free(s);

    const char *dest[] = { "dcqcn.cnp_scope=destination", NULL };
    s = load(dest);
    udp_np_init(&np, cc_dcqcn_params(s), 2, 2);
    ce_storm(&np, 0, got);
    CU_ASSERT_EQUAL(got[0] + got[1], 25);
    udp_np_clear(&np);
    udp_np_init(&np, cc_dcqcn_params(s), 2, 2);
    ce_storm(&np, 1, got);
    CU_ASSERT_EQUAL(got[0], 25);
    CU_ASSERT_EQUAL(got[1], 25);
    udp_np_clear(&np);
    scenario_free(s);

    const char *hpcc[] = { "nic.cc_preset=hpcc_ns3", NULL };
    s = load(hpcc);
    udp_np_init(&np, cc_dcqcn_params(s), 2, 2);
    CU_ASSERT(np.ack_flag);
    ce_storm(&np, 0, got);
    CU_ASSERT_EQUAL(got[0], 100);
    CU_ASSERT_EQUAL(got[1], 100);
    udp_np_clear(&np);
    scenario_free(s);

    udp_np_init(&np, NULL, 2, 2);
    ce_storm(&np, 0, got);
    CU_ASSERT_EQUAL(got[0], 2);
    CU_ASSERT_EQUAL(got[1], 2);
    udp_np_clear(&np);
}

static CU_TestInfo tests[] = {
    { "paper DCQCN through the glue: cuts, recovery, alpha", test_paper_rule },
    { "ConnectX DCQCN through the glue: the gated first cut", test_gated_first_cnp },
    { "per-QP pacing at the QP's rate", test_pacing },
    { "cc none: CNPs counted, rate unchanged", test_none_counts_only },
    { "which algorithms the udp transport runs", test_supported_algorithms },
    { "NP: one CNP per min_time_between_cnps per slot", test_np_moderation },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("replay udp congestion control", tests)
