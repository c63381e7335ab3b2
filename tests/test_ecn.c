/* ECN marking: the RED probability against hand values, then end to end through the binary
 * on a 3-to-1 incast (tests/scenarios/ecn_incast.ini) where the switch port toward host0 is
 * the only queue: marking off marks nothing, Kmin = Kmax = 0 marks nearly every packet, the
 * number of marks follows Pmax, and the counters that report marks agree with each other. */
#include <json-glib/json-glib.h>
#include <string.h>
#include "models/net.h"
#include "tests/testutil.h"

/* ---- helpers ---- */

/* The switch port whose peer is HOST (from topology.csv), as "node" and port number. */
static int port_toward(const char *out, const char *host, char *node, size_t len)
{
    char *p = g_build_filename(out, "topology.csv", NULL);
    char *text = NULL;
    int port = -1;
    if (g_file_get_contents(p, &text, NULL, NULL)) {
        char **lines = g_strsplit(text, "\n", -1);
        for (int i = 1; lines[i] && port < 0; i++) {
            char **f = g_strsplit(lines[i], ",", -1);
            if (g_strv_length(f) >= 4 && !strcmp(f[0], host)) {
                g_strlcpy(node, f[2], len);
                port = atoi(f[3]);
            }
            g_strfreev(f);
        }
        g_strfreev(lines);
    }
    g_free(text);
    g_free(p);
    return port;
}

/* ---- the marking function ---- */

static void test_probability_hand_values(void)
{
    /* Kmin 100 KB, Kmax 400 KB, Pmax 0.2 */
    const uint64_t kmin = 100000, kmax = 400000;
    CU_ASSERT_EQUAL(ecn_mark_probability(0, kmin, kmax, 0.2), 0);
    CU_ASSERT_EQUAL(ecn_mark_probability(99999, kmin, kmax, 0.2), 0);
    CU_ASSERT_EQUAL(ecn_mark_probability(100000, kmin, kmax, 0.2), 0);         /* q <= Kmin */
    /* just above Kmin: 0.2 x 1/300000 */
    CU_ASSERT_DOUBLE_EQUAL(ecn_mark_probability(100001, kmin, kmax, 0.2), 0.2 / 300000, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(ecn_mark_probability(250000, kmin, kmax, 0.2), 0.1, 1e-12);   /* midpoint: Pmax/2 */
    CU_ASSERT_DOUBLE_EQUAL(ecn_mark_probability(175000, kmin, kmax, 0.2), 0.05, 1e-12);  /* a quarter */
    CU_ASSERT_DOUBLE_EQUAL(ecn_mark_probability(400000, kmin, kmax, 0.2), 0.2, 1e-12);   /* q = Kmax: Pmax */
    CU_ASSERT_EQUAL(ecn_mark_probability(400001, kmin, kmax, 0.2), 1);          /* q > Kmax: always */
    CU_ASSERT_EQUAL(ecn_mark_probability(1000000000, kmin, kmax, 0.2), 1);
    /* Kmin = Kmax (DCTCP style step): no division by zero */
    CU_ASSERT_EQUAL(ecn_mark_probability(0, 0, 0, 1), 0);
    CU_ASSERT_EQUAL(ecn_mark_probability(1, 0, 0, 1), 1);
    CU_ASSERT_EQUAL(ecn_mark_probability(50000, 50000, 50000, 0.5), 0);
    CU_ASSERT_EQUAL(ecn_mark_probability(50001, 50000, 50000, 0.5), 1);
    /* Pmax 1, Kmin 0, Kmax 1000: p = q/1000 */
    CU_ASSERT_DOUBLE_EQUAL(ecn_mark_probability(500, 0, 1000, 1.0), 0.5, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(ecn_mark_probability(1, 0, 1000, 1.0), 0.001, 1e-12);
    /* monotone in q, within [0, 1] */
    double last = 0;
    int bad = 0;
    for (uint64_t q = 0; q < 600000; q += 97) {
        double p = ecn_mark_probability(q, kmin, kmax, 0.2);
        if (p < last || p < 0 || p > 1)
            bad++;
        last = p;
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/* ---- end to end ---- */

struct ecn_run {
    gint64 marked, port_marked, port_pkts, np_marked, cnp_sent, drops, max_q, transfers, done;
};

static int do_run(const char *const *sets, struct ecn_run *r)
{
    struct test_outdir o = test_outdir_new();
    int rc = test_run_sim("ecn_incast.ini", o.out, sets);
    if (rc == 0) {
        char node[32] = "";
        int port = port_toward(o.out, "host0", node, sizeof node);
        CU_ASSERT(port >= 0);
        r->marked = test_metric(o.out, "ecn_marked");
        r->cnp_sent = test_metric(o.out, "cnp_sent");
        r->drops = test_metric(o.out, "drops");
        r->max_q = test_metric(o.out, "max_queue_bytes");
        r->transfers = test_metric(o.out, "transfers");
        r->done = test_metric(o.out, "transfers_completed");
        r->port_marked = test_counter(o.out, node, port, "ecn_marked");
        r->port_pkts = test_counter(o.out, node, port, "tx_packets");
        r->np_marked = test_counter(o.out, "host0", -1, "np_ecn_marked_roce_packets");
    }
    test_outdir_free(&o);
    return rc;
}

static void test_marking_on_off(void)
{
    struct ecn_run on = { 0 }, off = { 0 };
    CU_ASSERT_EQUAL_FATAL(do_run(NULL, &on), 0);
    const char *sets_off[] = { "--set", "switch.ecn=off", NULL };
    CU_ASSERT_EQUAL_FATAL(do_run(sets_off, &off), 0);
    /* with the default thresholds the queue (about 2 MB) passes Kmin = 400 KB: marks */
    CU_ASSERT(on.max_q > 400000);
    CU_ASSERT(on.marked > 0);
    /* marks happen only at the port toward host0 and all reach host0 (no drops) */
    CU_ASSERT_EQUAL(on.port_marked, on.marked);
    CU_ASSERT_EQUAL(on.np_marked, on.marked);
    CU_ASSERT_EQUAL(on.drops, 0);
    CU_ASSERT_EQUAL(on.cnp_sent, 0); /* cc = none: the NIC sends no CNPs */
    /* marking off: not a single mark anywhere, and the queue is the same (cc = none) */
    CU_ASSERT_EQUAL(off.marked, 0);
    CU_ASSERT_EQUAL(off.port_marked, 0);
    CU_ASSERT_EQUAL(off.np_marked, 0);
    CU_ASSERT_EQUAL(off.max_q, on.max_q);
    CU_ASSERT_EQUAL(off.done, off.transfers);
    CU_ASSERT_EQUAL(off.transfers, 3);
}

/* Kmin = Kmax = 0: every packet that leaves a non-empty queue is marked; only the first
 * packet or two (queue still empty) are not. 3 x 1 MB = 3 x 245 packets. */
static void test_zero_thresholds_mark_everything(void)
{
    const char *modes[] = { "dequeue", "enqueue" };
    for (int m = 0; m < 2; m++) {
        char *mark = g_strdup_printf("switch.ecn_mark=%s", modes[m]);
        const char *sets[] = { "--set", "switch.ecn_kmin=0B", "--set", "switch.ecn_kmax=0B", "--set", mark, NULL };
        struct ecn_run r = { 0 };
        CU_ASSERT_EQUAL_FATAL(do_run(sets, &r), 0);
        CU_ASSERT_EQUAL(r.port_pkts, 735);
        CU_ASSERT(r.port_marked >= r.port_pkts * 99 / 100);
        CU_ASSERT(r.port_marked <= r.port_pkts);
        CU_ASSERT_EQUAL(r.np_marked, r.port_marked);
        CU_ASSERT_EQUAL(r.marked, r.port_marked);
        g_free(mark);
    }
}

/* Kmin = 0, Kmax = 4 MB (above the 2 MB peak): p = Pmax q / 4 MB at every dequeue, and with
 * cc = none the queue does not depend on the marks. Expected marks per run, by hand:
 * 3 senders at line rate into one port add 2 packets per departure for 245 departures,
 * then the 490 queued packets drain one by one; with F = 4158 B per frame,
 *   sum of q = F (2(1 + ... + 245) + (0 + ... + 489)) = 4158 (60270 + 119805) = 748.8 MB
 *   E[marks] = Pmax x 748.8 MB / 4 MB = 187.2 Pmax.
 * Summed over seeds 1-4: 748.8 at Pmax = 1 and 374.4 at Pmax = 0.5 (binomial s.d. about
 * 20 and 17); the tolerance covers the s.d. and the timing detail the estimate leaves out. */
static void test_marks_follow_pmax(void)
{
    const char *pmax[] = { "switch.ecn_pmax=1", "switch.ecn_pmax=0.5" };
    gint64 total[2] = { 0, 0 };
    for (int k = 0; k < 2; k++)
        for (int seed = 1; seed <= 4; seed++) {
            char s[32];
            snprintf(s, sizeof s, "%d", seed);
            const char *sets[] = { "--set", "switch.ecn_kmin=0B", "--set", "switch.ecn_kmax=4MB", "--set", pmax[k],
                                   "--seed", s, NULL };
            struct ecn_run r = { 0 };
            CU_ASSERT_EQUAL_FATAL(do_run(sets, &r), 0);
            CU_ASSERT(r.max_q < 4000000);
            total[k] += r.port_marked;
        }
    fprintf(stderr, "[marks: %" G_GINT64_FORMAT " at Pmax 1, %" G_GINT64_FORMAT " at Pmax 0.5] ", total[0], total[1]);
    CU_ASSERT(total[0] > 749 * 88 / 100 && total[0] < 749 * 112 / 100);
    CU_ASSERT(total[1] > 374 * 85 / 100 && total[1] < 374 * 115 / 100);
}

/* With DCQCN the marks turn into CNPs: at most one per QP per min_time_between_cnps (4 us),
 * every CNP is handled by a sender, and the queue stays below the cc = none peak. */
static void test_marks_become_cnps(void)
{
    struct test_outdir o = test_outdir_new();
    const char *sets[] = { "--set", "nic.cc=dcqcn", NULL };
    CU_ASSERT_EQUAL_FATAL(test_run_sim("ecn_incast.ini", o.out, sets), 0);
    gint64 marked = test_metric(o.out, "ecn_marked"), cnp = test_metric(o.out, "cnp_sent");
    gint64 handled = test_metric(o.out, "cnp_handled"), end_ns = test_metric(o.out, "completion_ns");
    CU_ASSERT(marked > 0);
    CU_ASSERT(cnp > 0);
    CU_ASSERT(cnp <= marked);
    CU_ASSERT_EQUAL(handled, cnp);
    CU_ASSERT_EQUAL(test_counter(o.out, "host0", -1, "np_cnp_sent"), cnp);
    CU_ASSERT_EQUAL(test_counter(o.out, "host*", -1, "rp_cnp_handled"), cnp);
    CU_ASSERT(cnp <= 3 * (end_ns / 4000 + 1));
    CU_ASSERT(test_metric(o.out, "max_queue_bytes") < 2000000);
    CU_ASSERT_EQUAL(test_metric(o.out, "transfers_completed"), 3);
    test_outdir_free(&o);
}

/* hpcc_ns3 notifies with CNP-flagged ACKs, one for every CE-marked packet (HPCC ns-3 ACKs every
 * packet and flags the ACK of a marked one; nothing is spaced). On one switch with no loss every
 * marked packet arrives in order, so notifications = marks, and every one reaches its sender. */
static void test_flagged_acks(void)
{
    struct test_outdir o = test_outdir_new();
    const char *sets[] = { "--set", "nic.cc=dcqcn", "--set", "nic.cc_preset=hpcc_ns3", NULL };
    CU_ASSERT_EQUAL_FATAL(test_run_sim("ecn_incast.ini", o.out, sets), 0);
    gint64 marked = test_metric(o.out, "ecn_marked"), cnp = test_metric(o.out, "cnp_sent");
    CU_ASSERT(marked > 0);
    CU_ASSERT_EQUAL(test_metric(o.out, "drops"), 0);
    CU_ASSERT_EQUAL(test_counter(o.out, "host0", -1, "out_of_sequence"), 0);
    CU_ASSERT_EQUAL(cnp, marked);
    CU_ASSERT_EQUAL(test_counter(o.out, "host0", -1, "np_ecn_marked_roce_packets"), marked);
    CU_ASSERT_EQUAL(test_metric(o.out, "cnp_handled"), cnp);
    CU_ASSERT_EQUAL(test_counter(o.out, "host*", -1, "rp_cnp_handled"), cnp);
    test_outdir_free(&o);
}

/* cnp_scope: per port, the receiver sends at most one CNP per 4 us for all three senders
 * together, so fewer than per QP; per destination with one QP per sender is per QP exactly. */
static void test_cnp_scope(void)
{
    const char *scope[] = { "dcqcn.cnp_scope=qp", "dcqcn.cnp_scope=port", "dcqcn.cnp_scope=destination" };
    gint64 cnp[3], end[3];
    char *summary[3];
    for (int k = 0; k < 3; k++) {
        struct test_outdir o = test_outdir_new();
        const char *sets[] = { "--set", "nic.cc=dcqcn", "--set", scope[k], NULL };
        CU_ASSERT_EQUAL_FATAL(test_run_sim("ecn_incast.ini", o.out, sets), 0);
        cnp[k] = test_metric(o.out, "cnp_sent");
        end[k] = test_metric(o.out, "completion_ns");
        char *p = g_build_filename(o.out, "transfers.csv", NULL);
        g_file_get_contents(p, &summary[k], NULL, NULL);
        g_free(p);
        test_outdir_free(&o);
    }
    fprintf(stderr, "[CNPs per qp %" G_GINT64_FORMAT ", per port %" G_GINT64_FORMAT "] ", cnp[0], cnp[1]);
    CU_ASSERT(cnp[1] > 0);
    CU_ASSERT(cnp[1] <= end[1] / 4000 + 1);
    CU_ASSERT(cnp[1] < cnp[0]);
    CU_ASSERT_EQUAL(cnp[2], cnp[0]);
    CU_ASSERT_STRING_EQUAL(summary[2], summary[0]);
    for (int k = 0; k < 3; k++)
        g_free(summary[k]);
}

static CU_TestInfo tests[] = {
    { "marking probability: hand values", test_probability_hand_values },
    { "ecn off marks nothing; counters agree", test_marking_on_off },
    { "Kmin = Kmax = 0 marks nearly every packet", test_zero_thresholds_mark_everything },
    { "number of marks follows Pmax", test_marks_follow_pmax },
    { "marks become CNPs (DCQCN)", test_marks_become_cnps },
    { "hpcc_ns3: a CNP-flagged ACK per marked packet", test_flagged_acks },
    { "cnp_scope: per port spaces all senders' CNPs", test_cnp_scope },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("ecn", tests)
