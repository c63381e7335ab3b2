/* Load balancing beyond one ECMP path per QP, on scenarios/lb-permutation.ini (a permutation
 * on a non-blocking leaf-spine): per-packet spraying into receivers that place out-of-order
 * packets gets within 5% of the line-rate bound; ECMP loses to hash collisions; flowlets and
 * split multi-QP connections land in between; spraying into go-back-N receivers pays in
 * retransmissions. Plus the out-of-order responder on its own (a whole message in reverse
 * order) and the flowlet gap's meaning. */
#include <string.h>
#include "models/net.h"
#include "models/workload.h"
#include "models/scenario.h"
#include "tests/test_fabric.h"
#include "tests/testutil.h"

#define PERM "../../scenarios/lb-permutation.ini"

struct perm_result {
    double completion_ns, mean_slowdown;
    gint64 retransmitted, seq_err, out_of_seq;
};

/* Runs the permutation with `sets` ("key=value" pairs, NULL-terminated). */
static struct perm_result run_perm(const char *const *sets)
{
    struct perm_result r = { 0 };
    struct test_outdir o = test_outdir_new();
    GPtrArray *extra = g_ptr_array_new();
    for (int i = 0; sets[i]; i++) {
        g_ptr_array_add(extra, (gpointer) "--set");
        g_ptr_array_add(extra, (gpointer)sets[i]);
    }
    g_ptr_array_add(extra, NULL);
    CU_ASSERT_EQUAL_FATAL(test_run_sim(PERM, o.out, (const char *const *)extra->pdata), 0);
    g_ptr_array_free(extra, TRUE);
    CU_ASSERT_EQUAL(test_metric(o.out, "transfers_completed"), 32);
    r.completion_ns = (double)test_metric(o.out, "completion_ns");
    r.retransmitted = test_metric(o.out, "retransmitted_packets");
    r.seq_err = test_counter(o.out, "host*", -1, "packet_seq_err");
    r.out_of_seq = test_counter(o.out, "host*", -1, "out_of_sequence");
    char *p = g_build_filename(o.out, "transfers.csv", NULL), *text = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(p, &text, NULL, NULL));
    char **lines = g_strsplit(text, "\n", -1);
    int n = 0;
    for (int i = 1; lines[i] && *lines[i]; i++) {
        char **f = g_strsplit(lines[i], ",", -1);
        if (g_strv_length(f) == 10) {
            r.mean_slowdown += g_ascii_strtod(f[9], NULL);
            n++;
        }
        g_strfreev(f);
    }
    r.mean_slowdown /= n ? n : 1;
    g_strfreev(lines);
    g_free(text);
    g_free(p);
    test_outdir_free(&o);
    return r;
}

static void test_permutation(void)
{
    struct perm_result ecmp = run_perm((const char *const[]){ NULL });
    struct perm_result spray = run_perm((const char *const[]){ "switch.load_balance=spray", "nic.receiver=ooo-place", NULL });
    struct perm_result gbn = run_perm((const char *const[]){ "switch.load_balance=spray", NULL });
    struct perm_result flowlet = run_perm((const char *const[]){ "switch.load_balance=flowlet", NULL });
    struct perm_result mqp = run_perm((const char *const[]){ "nic.qps_per_connection=8", "nic.split_data_on_qps=on", NULL });
    struct perm_result ar = run_perm((const char *const[]){ "switch.load_balance=adaptive", "nic.receiver=ooo-place", NULL });
    printf("(completion us / mean slowdown: ecmp %.0f/%.3f, flowlet %.0f/%.3f, 8 QPs split %.0f/%.3f, "
           "spray+ooo %.0f/%.3f, adaptive+ooo %.0f/%.3f, spray+gbn %.0f/%.3f with %" G_GINT64_FORMAT " retx) ",
           ecmp.completion_ns / 1e3, ecmp.mean_slowdown, flowlet.completion_ns / 1e3, flowlet.mean_slowdown,
           mqp.completion_ns / 1e3, mqp.mean_slowdown, spray.completion_ns / 1e3, spray.mean_slowdown,
           ar.completion_ns / 1e3, ar.mean_slowdown, gbn.completion_ns / 1e3, gbn.mean_slowdown, gbn.retransmitted);
    /* within 5% of line rate: the mean FCT over the ideal one (8 MB at 100 Gb/s + one RTT) */
    CU_ASSERT(spray.mean_slowdown < 1.05);
    CU_ASSERT(ar.mean_slowdown < 1.05);
    /* it got there by placing reordered packets, not by luck */
    CU_ASSERT(spray.out_of_seq > 0);
    CU_ASSERT_EQUAL(spray.retransmitted, 0);
    CU_ASSERT_EQUAL(spray.seq_err, 0);
    /* ECMP: 32 flows hashed onto 8 uplinks per leaf collide (some uplinks carry 2-3 flows) */
    CU_ASSERT(ecmp.completion_ns > 1.5 * spray.completion_ns);
    CU_ASSERT(ecmp.mean_slowdown > 1.3);
    CU_ASSERT_EQUAL(ecmp.out_of_seq, 0);
    /* flowlets and 8 QPs per connection: in between */
    CU_ASSERT(flowlet.completion_ns < ecmp.completion_ns && flowlet.completion_ns > spray.completion_ns);
    CU_ASSERT(mqp.completion_ns < ecmp.completion_ns && mqp.completion_ns > spray.completion_ns);
    /* spraying into RC go-back-N receivers: NAKs, retransmissions, slower than ECMP even */
    CU_ASSERT(gbn.seq_err > 0);
    CU_ASSERT(gbn.retransmitted > 1000);
    CU_ASSERT(gbn.completion_ns > ecmp.completion_ns);
}

/* The flowlet gap: with a gap longer than the run every flow keeps its first path, so nothing
 * is reordered; with a zero gap every packet may take a new path, and packets arrive out of
 * order. */
static void test_flowlet_gap(void)
{
    struct perm_result keep = run_perm((const char *const[]){ "switch.load_balance=flowlet", "switch.flowlet_gap=1s", NULL });
    struct perm_result every = run_perm((const char *const[]){ "switch.load_balance=flowlet", "switch.flowlet_gap=0s",
                                                               "nic.receiver=ooo-place", NULL });
    CU_ASSERT_EQUAL(keep.out_of_seq, 0);
    CU_ASSERT_EQUAL(keep.retransmitted, 0);
    CU_ASSERT(every.out_of_seq > 0);
}

/* The out-of-order responder on its own: one 40 MB message (9,766 packets of 4 KiB) delivered
 * last packet first. Every packet but PSN 0 arrives past a gap and is placed (out_of_sequence
 * 9,765, deeper than the initial 1,024-PSN ring, so the ring grows); PSN 0 then closes the gap,
 * epsn jumps to the end and the transfer completes; nothing is NAKed or counted twice. */
static void test_ooo_responder(void)
{
    char *p = test_data_path("minimal.ini");
    GError *err = NULL;
    struct scenario *s = scenario_load(p, (const char *const[]){ "nic.receiver=ooo-place", "workload w.size=40MB", NULL }, &err);
    g_free(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    struct test_fabric f = test_fabric_build(s);
    struct net *n = f.n;
    const uint32_t npk = 9766;
    CU_ASSERT_EQUAL_FATAL(n->xfers[0].npkts, npk);
    nic_post(n, 0);
    uint32_t qp = n->xfers[0].qp, dst = n->qps[qp].dst;
    struct host_rt *h = &n->hosts[dst];
    for (uint32_t k = 0; k < npk; k++) {
        uint32_t psn = npk - 1 - k;
        uint32_t i = pkt_alloc(n);
        struct packet *pk = &n->pool[i];
        *pk = (struct packet){ .kind = PKT_DATA, .qp = qp, .psn = psn, .src = n->qps[qp].src, .dst = dst,
                               .transfer = 0, .payload = 4096, .frame = 4096 + ROCE_HDR_BYTES, .prio = 3,
                               .ecn = ECN_ECT0, .flags = psn + 1 == npk ? PKT_F_LAST : 0 };
        nic_receive(n, &n->ports[h->port], i);
        if (psn)
            CU_ASSERT_EQUAL(n->xfers[0].state, XF_POSTED);
    }
    CU_ASSERT_EQUAL(n->qresp[qp].epsn, npk);
    CU_ASSERT_EQUAL(n->xfers[0].state, XF_DONE);
    CU_ASSERT_EQUAL(h->out_of_sequence, npk - 1);
    CU_ASSERT_EQUAL(h->duplicate_request, 0);
    CU_ASSERT(n->ooo[qp].nbits >= npk);
    /* a late duplicate is counted, not placed */
    uint32_t i = pkt_alloc(n);
    n->pool[i] = (struct packet){ .kind = PKT_DATA, .qp = qp, .psn = 17, .src = n->qps[qp].src, .dst = dst,
                                  .transfer = 0, .payload = 4096, .frame = 4096 + ROCE_HDR_BYTES, .prio = 3 };
    nic_receive(n, &n->ports[h->port], i);
    CU_ASSERT_EQUAL(h->duplicate_request, 1);
    test_fabric_free(&f);
}

/* Same scenario and seed, byte-identical results, for the random choices added here (spraying,
 * flowlet picks, ties of adaptive routing) and for HPCC. */
static gboolean same_file(const char *a, const char *b, const char *name)
{
    char *pa = g_build_filename(a, name, NULL), *pb = g_build_filename(b, name, NULL), *ta = NULL, *tb = NULL;
    gsize la = 0, lb = 0;
    gboolean same = g_file_get_contents(pa, &ta, &la, NULL) && g_file_get_contents(pb, &tb, &lb, NULL) && la == lb &&
                    la > 0 && !memcmp(ta, tb, la);
    g_free(ta), g_free(tb), g_free(pa), g_free(pb);
    return same;
}

static void test_determinism(void)
{
    const char *modes[][4] = { { PERM, "switch.load_balance=spray", "nic.receiver=ooo-place", NULL },
                               { PERM, "switch.load_balance=flowlet", "nic.qps_per_connection=4", "nic.split_data_on_qps=on" },
                               { PERM, "switch.load_balance=adaptive", NULL, NULL },
                               { "../../scenarios/hpcc-incast.ini", "nic.cc=hpcc", NULL, NULL } };
    for (size_t m = 0; m < G_N_ELEMENTS(modes); m++) {
        struct test_outdir a = test_outdir_new(), b = test_outdir_new();
        const char *extra[8] = { NULL };
        int k = 0;
        for (int i = 1; i < 4 && modes[m][i]; i++) {
            extra[k++] = "--set";
            extra[k++] = modes[m][i];
        }
        CU_ASSERT_EQUAL_FATAL(test_run_sim(modes[m][0], a.out, extra), 0);
        CU_ASSERT_EQUAL_FATAL(test_run_sim(modes[m][0], b.out, extra), 0);
        for (const char *const *f = (const char *const[]){ "transfers.csv", "queues.csv", "rates.csv", "counters.csv", NULL };
             *f; f++)
            CU_ASSERT_TRUE(same_file(a.out, b.out, *f));
        test_outdir_free(&a);
        test_outdir_free(&b);
    }
}

static CU_TestInfo tests[] = {
    { "same seed, byte-identical results", test_determinism },
    { "permutation: spray+OOO near line rate, ECMP collisions, others between", test_permutation },
    { "flowlet gap: long keeps paths, zero reorders", test_flowlet_gap },
    { "out-of-order responder: a message in reverse order", test_ooo_responder },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("load balancing", tests)
