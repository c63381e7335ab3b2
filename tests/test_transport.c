/* RoCEv2 transport end to end through the binary, read back from transfers.csv,
 * counters.csv and summary.json:
 *  - one 64 MB write on an idle leaf-spine path takes its wire-level ideal time (computed
 *    here from the framing, not taken from the simulator) within 1 %;
 *  - a 16-to-1 incast with DCQCN completes at the receiver's line rate, fairly, without
 *    drops, with ECN marks and CNPs;
 *  - the same incast without congestion control and with a 1 MB buffer drops packets and
 *    recovers every byte with NAKs and go-back-N retransmission. */
#include <json-glib/json-glib.h>
#include <stdint.h>
#include <string.h>
#include "tests/testutil.h"

/* ---- helpers ---- */

/* Counter NAME of each host h in [first, last], into v[h - first]. */
static void host_counters(const char *out, uint32_t first, uint32_t last, const char *name, gint64 *v)
{
    for (uint32_t h = first; h <= last; h++) {
        char node[32];
        snprintf(node, sizeof node, "host%u", h);
        v[h - first] = test_counter(out, node, -1, name);
    }
}

struct xfer {
    uint32_t id, src, dst;
    uint64_t bytes;
    gboolean done;
    uint64_t start_ns, end_ns, fct_ns, ideal_ns;
};

/* transfers.csv -> array of struct xfer (g_free it); *n gets the count. */
static struct xfer *read_transfers(const char *out, size_t *n)
{
    char *p = g_build_filename(out, "transfers.csv", NULL);
    char *text = NULL;
    GArray *a = g_array_new(FALSE, TRUE, sizeof(struct xfer));
    if (g_file_get_contents(p, &text, NULL, NULL)) {
        char **lines = g_strsplit(text, "\n", -1);
        CU_ASSERT_STRING_EQUAL(lines[0], "id,src,dst,bytes,prio,start_ns,end_ns,fct_ns,ideal_ns,slowdown");
        for (int i = 1; lines[i]; i++) {
            if (!*lines[i])
                continue;
            char **f = g_strsplit(lines[i], ",", -1);
            CU_ASSERT_EQUAL(g_strv_length(f), 10);
            if (g_strv_length(f) == 10) {
                struct xfer x = { 0 };
                x.id = (uint32_t)atoi(f[0]);
                x.src = (uint32_t)atoi(f[1]);
                x.dst = (uint32_t)atoi(f[2]);
                x.bytes = g_ascii_strtoull(f[3], NULL, 10);
                x.done = *f[6] != 0;
                x.start_ns = g_ascii_strtoull(f[5], NULL, 10);
                x.end_ns = g_ascii_strtoull(f[6], NULL, 10);
                x.fct_ns = g_ascii_strtoull(f[7], NULL, 10);
                x.ideal_ns = g_ascii_strtoull(f[8], NULL, 10);
                g_array_append_val(a, x);
            }
            g_strfreev(f);
        }
        g_strfreev(lines);
    }
    g_free(text);
    g_free(p);
    *n = a->len;
    return (struct xfer *)g_array_free(a, FALSE);
}

/* ---- wire-level physics, worked out independently of models/ ---- */

#define MTU 4096u
#define HDR 62u      /* Eth 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4 */
#define RETH 16u     /* first packet of an RDMA WRITE */
#define IMMDT 4u     /* last packet: WRITE LAST/ONLY WITH IMMEDIATE (IBTA 9.2) */
#define WIRE_X 20u   /* preamble 8 + IFG 12 */

/* Picoseconds to send `bytes` at 100 Gb/s: 8 bits / 100e9 = 80 ps per byte. */
static uint64_t ps_at_100g(uint64_t bytes) { return bytes * 80; }

/* ---- single flow ---- */

/* 64 MB = 15625 packets of 4096 B. On the wire: 64e6 + 15625 x 82 + 16 (RETH, first packet)
 * + 4 (ImmDt, last packet) = 65281270 B = 5222501.60 ns at 100 Gb/s. Then the last packet
 * (4096 + 82 + 4 = 4182 B on the wire, 334.56 ns) is stored and forwarded by leaf0, the spine
 * and leaf1, and every one of the 4 links adds 1 us:
 * ideal = 5222501.60 + 3 x 334.56 + 4000 = 5227505.28 ns. */
static void test_single_flow_line_rate(void)
{
    const uint64_t bytes = 64000000;
    uint64_t npkts = (bytes + MTU - 1) / MTU;
    CU_ASSERT_EQUAL(npkts, 15625);
    uint64_t wire = bytes + npkts * (HDR + WIRE_X) + RETH + IMMDT;
    uint64_t last_wire = (bytes - (npkts - 1) * MTU) + HDR + WIRE_X + IMMDT;
    uint64_t ideal_ps = ps_at_100g(wire) + 3 * ps_at_100g(last_wire) + 4 * 1000000ull /* 4 links of 1 us */;
    uint64_t ideal_ns = ideal_ps / 1000;
    CU_ASSERT_EQUAL(ideal_ns, 5227505);

    struct test_outdir o = test_outdir_new();
    CU_ASSERT_EQUAL_FATAL(test_run_sim("single_flow.ini", o.out, NULL), 0);
    size_t n = 0;
    struct xfer *x = read_transfers(o.out, &n);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_EQUAL(x[0].src, 0);
    CU_ASSERT_EQUAL(x[0].dst, 2);
    CU_ASSERT_EQUAL(x[0].bytes, bytes);
    CU_ASSERT(x[0].done);
    CU_ASSERT_EQUAL(x[0].start_ns, 0);
    /* the simulator's own ideal agrees with ours (to the nanosecond it truncates to) */
    CU_ASSERT(x[0].ideal_ns + 1 >= ideal_ns && x[0].ideal_ns <= ideal_ns + 1);
    /* physics: not faster than the ideal; the idle path adds almost nothing (1 %) */
    fprintf(stderr, "[fct %" G_GUINT64_FORMAT " ns, ideal %" G_GUINT64_FORMAT " ns] ", x[0].fct_ns, ideal_ns);
    CU_ASSERT(x[0].fct_ns + 1 >= ideal_ns);
    CU_ASSERT(x[0].fct_ns <= ideal_ns + ideal_ns / 100);
    CU_ASSERT_EQUAL(x[0].end_ns, x[0].start_ns + x[0].fct_ns);
    /* an idle path: no queue, no marks, no loss */
    CU_ASSERT_EQUAL(test_metric(o.out, "transfers_completed"), 1);
    CU_ASSERT_EQUAL(test_metric(o.out, "drops"), 0);
    CU_ASSERT_EQUAL(test_metric(o.out, "ecn_marked"), 0);
    CU_ASSERT_EQUAL(test_metric(o.out, "cnp_sent"), 0);
    CU_ASSERT_EQUAL(test_metric(o.out, "retransmitted_packets"), 0);
    CU_ASSERT_EQUAL(test_metric(o.out, "timeouts"), 0);
    CU_ASSERT_EQUAL(test_metric(o.out, "completion_ns"), (gint64)x[0].end_ns);
    /* framing: the sender put exactly 15625 data frames on its link, 62 B of headers each
     * plus one RETH and one ImmDt; the receiver got every payload byte once */
    CU_ASSERT_EQUAL(test_counter(o.out, "host0", -1, "tx_packets"), 15625);
    CU_ASSERT_EQUAL(test_counter(o.out, "host0", -1, "tx_bytes"), (gint64)(bytes + npkts * HDR + RETH + IMMDT));
    CU_ASSERT_EQUAL(test_counter(o.out, "host2", -1, "rx_bytes"), (gint64)bytes);
    CU_ASSERT_EQUAL(test_counter(o.out, "host2", -1, "out_of_sequence"), 0);
    g_free(x);
    test_outdir_free(&o);
}

/* ---- 16-to-1 incast ---- */

/* 16 x 4 MB into host0 over one 100 Gb/s link: 64e6 x 4178/4096 B on the wire x 80 ps =
 * 5222500 ns at the efficient line rate, plus the path latency of the farthest sender (host16
 * on leaf1: 4 links of 1 us and 3 store-and-forward hops of 334.24 ns, about 5 us). */
static void test_incast_dcqcn(void)
{
    struct test_outdir o = test_outdir_new();
    CU_ASSERT_EQUAL_FATAL(test_run_sim("incast16.ini", o.out, NULL), 0);
    size_t n = 0;
    struct xfer *x = read_transfers(o.out, &n);
    CU_ASSERT_EQUAL_FATAL(n, 16);
    uint64_t first_end = UINT64_MAX, last_end = 0, fct_min = UINT64_MAX, fct_max = 0;
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT(x[i].done);
        CU_ASSERT_EQUAL(x[i].dst, 0);
        CU_ASSERT_EQUAL(x[i].bytes, 4000000);
        CU_ASSERT(x[i].fct_ns + 1 >= x[i].ideal_ns); /* nobody beats physics */
        if (x[i].end_ns > last_end)
            last_end = x[i].end_ns;
        if (x[i].end_ns < first_end)
            first_end = x[i].end_ns;
        if (x[i].fct_ns < fct_min)
            fct_min = x[i].fct_ns;
        if (x[i].fct_ns > fct_max)
            fct_max = x[i].fct_ns;
    }
    const uint64_t line_ns = ps_at_100g(64000000ull * (MTU + HDR + WIRE_X) / MTU) / 1000;
    CU_ASSERT_EQUAL(line_ns, 5222500);
    const uint64_t expect_ns = line_ns + 4000 + 3 * ps_at_100g(MTU + HDR + WIRE_X) / 1000;
    fprintf(stderr, "[last end %" G_GUINT64_FORMAT " ns (expect %" G_GUINT64_FORMAT "), FCT %" G_GUINT64_FORMAT
                    "..%" G_GUINT64_FORMAT " ns] ",
            last_end, expect_ns, fct_min, fct_max);
    /* physics: the link into host0 must carry every frame (16 x (4e6 + 977 x 82 + 16) =
     * 65282080 B on the wire = 5222566.4 ns), and the first frame cannot start on it before
     * it has crossed the sender's link (4194 B = 335.52 ns, plus 1 us); the last then needs
     * 1 us more to reach host0: last end >= 5224901 ns */
    const uint64_t floor_ns = (ps_at_100g(16 * (4000000ull + 977 * (HDR + WIRE_X) + RETH)) +
                               ps_at_100g(MTU + HDR + WIRE_X + RETH) + 2 * 1000000ull) / 1000;
    CU_ASSERT_EQUAL(floor_ns, 5224901);
    CU_ASSERT(last_end >= floor_ns);
    /* DCQCN keeps the receiver link busy: within 5 % of line rate plus latency */
    CU_ASSERT(last_end <= expect_ns + expect_ns / 20);
    /* fairness: the slowest flow within 25 % of the fastest */
    CU_ASSERT(fct_max * 100 <= fct_min * 125);
    /* congestion was signalled and acted upon, and nothing was lost */
    CU_ASSERT_EQUAL(test_metric(o.out, "transfers_completed"), 16);
    CU_ASSERT(test_metric(o.out, "ecn_marked") > 0);
    CU_ASSERT(test_metric(o.out, "cnp_sent") > 0);
    CU_ASSERT_EQUAL(test_metric(o.out, "cnp_handled"), test_metric(o.out, "cnp_sent"));
    CU_ASSERT_EQUAL(test_metric(o.out, "drops"), 0);
    CU_ASSERT_EQUAL(test_metric(o.out, "retransmitted_packets"), 0);
    CU_ASSERT_EQUAL(test_metric(o.out, "timeouts"), 0);
    CU_ASSERT(test_metric(o.out, "max_queue_bytes") <= 32000000);
    CU_ASSERT_EQUAL(test_counter(o.out, "host0", -1, "rx_bytes"), 64000000);
    /* every sender was told to slow down */
    gint64 handled[16];
    host_counters(o.out, 1, 16, "rp_cnp_handled", handled);
    for (int i = 0; i < 16; i++)
        CU_ASSERT(handled[i] > 0);
    g_free(x);
    test_outdir_free(&o);
}

/* No congestion control and a 1 MB buffer: the port toward host0 overflows. Every transfer
 * must still complete, through NAKs (PSN sequence errors) and go-back-N. */
static void test_incast_drops_go_back_n(void)
{
    struct test_outdir o = test_outdir_new();
    const char *sets[] = { "--set", "nic.cc=none", "--set", "switch.buffer=1MB", NULL };
    CU_ASSERT_EQUAL_FATAL(test_run_sim("incast16.ini", o.out, sets), 0);
    size_t n = 0;
    struct xfer *x = read_transfers(o.out, &n);
    CU_ASSERT_EQUAL_FATAL(n, 16);
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT(x[i].done);
        CU_ASSERT(x[i].fct_ns + 1 >= x[i].ideal_ns);
    }
    gint64 drops = test_metric(o.out, "drops"), retx = test_metric(o.out, "retransmitted_packets");
    fprintf(stderr, "[drops %" G_GINT64_FORMAT ", retransmitted %" G_GINT64_FORMAT ", timeouts %" G_GINT64_FORMAT "] ",
            drops, retx, test_metric(o.out, "timeouts"));
    CU_ASSERT(drops > 0);
    CU_ASSERT(retx > 0);
    CU_ASSERT_EQUAL(test_metric(o.out, "transfers_completed"), 16);
    CU_ASSERT_EQUAL(test_metric(o.out, "cnp_sent"), 0);
    /* only data (priority 3) is dropped; the switches' per-port counters add up */
    gint64 leaf_drops = test_counter(o.out, "leaf*", -1, "drops_prio3"), spine_drops = test_counter(o.out, "spine*", -1, "drops_prio3");
    CU_ASSERT_EQUAL((leaf_drops > 0 ? leaf_drops : 0) + (spine_drops > 0 ? spine_drops : 0), drops);
    /* the receiver saw gaps and the senders got NAKs for them */
    gint64 seq_err[16], retx_h[16], txp[16], txb[16];
    host_counters(o.out, 1, 16, "packet_seq_err", seq_err);
    host_counters(o.out, 1, 16, "retransmitted_packets", retx_h);
    host_counters(o.out, 1, 16, "tx_packets", txp);
    host_counters(o.out, 1, 16, "tx_bytes", txb);
    gint64 naks = 0, retx_sum = 0, tx_pkts = 0, tx_payload_max = 0;
    for (int i = 0; i < 16; i++) {
        naks += seq_err[i];
        retx_sum += retx_h[i];
        tx_pkts += txp[i];
        tx_payload_max += txb[i] - (gint64)HDR * txp[i];
    }
    CU_ASSERT(naks > 0);
    CU_ASSERT(test_counter(o.out, "host0", -1, "out_of_sequence") > 0);
    CU_ASSERT_EQUAL(retx_sum, retx);
    /* senders send only data: each frame is a first transmission or a retransmission;
     * 4 MB = 976 full packets + one of 2304 B = 977 packets per transfer */
    CU_ASSERT_EQUAL(tx_pkts, 16 * 977 + retx);
    /* bytes delivered: the receiver took in at least every byte sent (plus the discarded
     * out-of-order copies), and no more than the senders' payload on the wire */
    gint64 rx = test_counter(o.out, "host0", -1, "rx_bytes");
    CU_ASSERT(rx >= 64000000);
    CU_ASSERT(rx <= tx_payload_max);
    g_free(x);
    test_outdir_free(&o);
}

static CU_TestInfo tests[] = {
    { "64 MB on an idle path: within 1 % of the wire ideal", test_single_flow_line_rate },
    { "16-to-1 incast with DCQCN: line rate, fair, lossless", test_incast_dcqcn },
    { "16-to-1 incast, cc=none, 1 MB: drops, NAKs, go-back-N", test_incast_drops_go_back_n },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("transport", tests)
