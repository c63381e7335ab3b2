/* End to end through the binary: simulated pcap traces against the simulator's own counters
 * (tshark and pcap-stats), compare on real runs, and the report in headless Chromium. */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include "tests/testutil.h"

/* Runs tshark and returns the number of output lines. */
static long tshark_count(const char *pcap, const char *filter)
{
    char *cmd = g_strdup_printf("tshark -r '%s' -Y '%s' -T fields -e frame.number 2>/dev/null | wc -l", pcap, filter);
    char *out = NULL;
    test_run(cmd, &out);
    g_free(cmd);
    long n = out ? strtol(out, NULL, 10) : -1;
    g_free(out);
    return n;
}

static char *run_dir;

static void run_capture_once(void)
{
    if (run_dir)
        return;
    char *tmp = test_tmpdir();
    run_dir = g_build_filename(tmp, "run", NULL);
    g_free(tmp);
    char *s = test_data_path("analysis/capture.ini");
    char *cmd = g_strdup_printf("%s run %s -o %s --quiet", test_rocesim_bin(), s, run_dir);
    char *out = NULL;
    int rc = test_run(cmd, &out);
    if (rc != 0)
        fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    g_free(out);
    g_free(cmd);
    g_free(s);
}

static void test_tshark_matches_counters(void)
{
    run_capture_once();
    if (test_run("command -v tshark >/dev/null", NULL) != 0) {
        printf("\n    (tshark not installed: tshark checks skipped) ");
        return;
    }
    char *pcap = g_build_filename(run_dir, "host0-0.pcap", NULL);
    CU_ASSERT_TRUE_FATAL(g_file_test(pcap, G_FILE_TEST_EXISTS));
    long all = tshark_count(pcap, "frame");
    CU_ASSERT(all > 1000);
    /* every frame dissected: RoCE over UDP 4791 or MAC control (PFC), nothing malformed */
    CU_ASSERT_EQUAL(tshark_count(pcap, "_ws.malformed || _ws.expert.severity >= warning"), 0);
    CU_ASSERT_EQUAL(tshark_count(pcap, "infiniband || macc"), all);
    CU_ASSERT_EQUAL(tshark_count(pcap, "infiniband && !(udp.dstport == 4791)"), 0);
    /* CE-marked data into host0 = what host0's notification point counted */
    long ce = tshark_count(pcap, "ip.dst == 10.0.0.1 && ip.dsfield.ecn == 3 && infiniband.bth.opcode != 0x11");
    long long np_marked = test_counter(run_dir, "host0", -1, "np_ecn_marked_roce_packets");
    CU_ASSERT(ce > 0);
    CU_ASSERT_EQUAL(ce, np_marked);
    /* CNPs leaving host0 = np_cnp_sent; the hpcc_ns3 preset notifies with CNP-flagged ACKs,
     * which carry the flag in the BTH BECN bit */
    long cnps = tshark_count(pcap, "ip.src == 10.0.0.1 && (infiniband.bth.opcode == 129 || "
                                   "(infiniband.bth.opcode == 17 && frame[46] & 0x40))");
    CU_ASSERT(cnps > 0);
    CU_ASSERT_EQUAL(cnps, test_counter(run_dir, "host0", -1, "np_cnp_sent"));
    /* PFC XOFF frames on the link = frames host0 sent + frames it received */
    long xoff = tshark_count(pcap, "macc.opcode == 0x0101 && macc.cbfc.pause_time.c3 > 0");
    long long sent = test_counter(run_dir, "host0", -1, "tx_prio3_pause"), recvd = test_counter(run_dir, "host0", -1, "rx_prio3_pause");
    CU_ASSERT(sent > 0);
    CU_ASSERT_EQUAL(xoff, sent + recvd);
    /* every message ends WITH IMMEDIATE, as NCCL's last work request and the replay's do:
     * no plain WRITE LAST (0x08) or ONLY (0x0a); one LAST/ONLY WITH IMMEDIATE (0x09/0x0b)
     * per transfer into host0 (8 senders; lossless, so no retransmission repeats one) */
    CU_ASSERT_EQUAL(tshark_count(pcap, "infiniband.bth.opcode == 8 || infiniband.bth.opcode == 10"), 0);
    CU_ASSERT_EQUAL(test_metric(run_dir, "retransmitted_packets"), 0);
    CU_ASSERT_EQUAL(tshark_count(pcap, "ip.dst == 10.0.0.1 && (infiniband.bth.opcode == 9 || "
                                       "infiniband.bth.opcode == 11)"), 8);
    /* BTH DestQP (a QP's numbers live apart from the packet path: models/nic.c build_data).
     * Each host numbers its QPs from 0x100 in the order they are made (models/net.c), here
     * the incast's senders 1..8: host k's data goes to host0's QP 0x100 + k - 1 (10.0.k.1 is
     * host k, analysis/frames.c), and every ACK or CNP of host0 to the sender's only QP,
     * 0x100. */
    for (int k = 1; k <= 8; k++) {
        char *from = g_strdup_printf("ip.src == 10.0.%d.1 && infiniband", k);
        char *to_qp = g_strdup_printf("%s && infiniband.bth.destqp == 0x%x", from, 0x100 + k - 1);
        long data = tshark_count(pcap, from);
        CU_ASSERT(data > 0);
        CU_ASSERT_EQUAL(tshark_count(pcap, to_qp), data);
        g_free(to_qp);
        g_free(from);
    }
    CU_ASSERT(tshark_count(pcap, "ip.src == 10.0.0.1 && infiniband") > 0);
    CU_ASSERT_EQUAL(tshark_count(pcap, "ip.src == 10.0.0.1 && infiniband && infiniband.bth.destqp != 0x100"), 0);
    /* the switch side of the same link sees the same frames */
    char *leaf = g_build_filename(run_dir, "leaf0-0.pcap", NULL);
    CU_ASSERT_EQUAL(tshark_count(leaf, "macc.opcode == 0x0101 && macc.cbfc.pause_time.c3 > 0"), xoff);
    CU_ASSERT_EQUAL(tshark_count(leaf, "ip.dsfield.ecn == 3 && ip.dst == 10.0.0.1"), ce);
    g_free(leaf);
    g_free(pcap);
}

static void test_pcap_stats_reproduces(void)
{
    run_capture_once();
    char *pcap = g_build_filename(run_dir, "host0-0.pcap", NULL);
    char *tmp = test_tmpdir();
    char *out = g_build_filename(tmp, "stats", NULL);
    char *cmd = g_strdup_printf("%s pcap-stats %s -o %s", test_rocesim_bin(), pcap, out);
    char *log = NULL;
    int rc = test_run(cmd, &log);
    if (rc)
        fprintf(stderr, "%s\n", log);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    /* the capture's node is named after the file */
    CU_ASSERT_EQUAL(test_counter(out, "host0-0.pcap", -1, "np_ecn_marked_roce_packets"), test_counter(run_dir, "host0", -1, "np_ecn_marked_roce_packets"));
    CU_ASSERT_EQUAL(test_counter(out, "host0-0.pcap", -1, "np_cnp_sent"), test_counter(run_dir, "host0", -1, "np_cnp_sent"));
    CU_ASSERT_EQUAL(test_counter(out, "host0-0.pcap", -1, "tx_prio3_pause"),
                    test_counter(run_dir, "host0", -1, "tx_prio3_pause") + test_counter(run_dir, "host0", -1, "rx_prio3_pause"));
    /* messages reconstructed from the capture: the same bytes the simulator delivered */
    JsonParser *a = json_parser_new(), *b = json_parser_new();
    char *sa = g_build_filename(run_dir, "summary.json", NULL), *sb = g_build_filename(out, "summary.json", NULL);
    CU_ASSERT_TRUE_FATAL(json_parser_load_from_file(a, sa, NULL) && json_parser_load_from_file(b, sb, NULL));
    JsonObject *ma = json_object_get_object_member(json_node_get_object(json_parser_get_root(a)), "metrics");
    JsonObject *mb = json_object_get_object_member(json_node_get_object(json_parser_get_root(b)), "metrics");
    CU_ASSERT_EQUAL(json_object_get_int_member(mb, "bytes"), json_object_get_int_member(ma, "bytes"));
    CU_ASSERT_EQUAL(json_object_get_int_member(mb, "transfers"), json_object_get_int_member(ma, "transfers"));
    CU_ASSERT_EQUAL(json_object_get_int_member(mb, "ecn_marked"), json_object_get_int_member(ma, "ecn_marked") > 0 ?
                    test_counter(run_dir, "host0", -1, "np_ecn_marked_roce_packets") : 0);
    g_object_unref(a);
    g_object_unref(b);
    g_free(sa);
    g_free(sb);
    g_free(log);
    g_free(cmd);
    /* plot reads a capture's folder too: its FCTs are drawn, and what a capture cannot have
     * (ideal times, queues) is skipped with a reason, not an error */
    cmd = g_strdup_printf("%s plot %s", test_rocesim_bin(), out);
    CU_ASSERT_EQUAL(test_run(cmd, &log), 0);
    char *fct = g_build_filename(out, "plots", "fct_cdf.png", NULL);
    CU_ASSERT_TRUE(g_file_test(fct, G_FILE_TEST_EXISTS) || test_run("command -v gnuplot >/dev/null", NULL) != 0);
    g_free(fct);
    g_free(log);
    g_free(cmd);
    test_rmtree(tmp);
    g_free(tmp);
    g_free(out);
    g_free(pcap);
}

/* Two taps of one link (host0's port and leaf0:0) see every flow twice: pcap-stats counts each
 * flow once (the same transfers, bytes and CE marks as the simulator), and compare of the run
 * against the capture compares what a capture can measure and finds them the same. */
static void test_two_taps_and_compare(void)
{
    run_capture_once();
    char *tmp = test_tmpdir();
    char *out = g_build_filename(tmp, "stats2", NULL);
    char *cmd = g_strdup_printf("%s pcap-stats %s/host0-0.pcap %s/leaf0-0.pcap -o %s", test_rocesim_bin(), run_dir,
                                run_dir, out);
    char *log = NULL;
    CU_ASSERT_EQUAL_FATAL(test_run(cmd, &log), 0);
    g_free(log);
    g_free(cmd);
    CU_ASSERT_EQUAL(test_metric(out, "transfers"), test_metric(run_dir, "transfers"));
    CU_ASSERT_EQUAL(test_metric(out, "bytes"), test_metric(run_dir, "bytes"));
    CU_ASSERT_EQUAL(test_metric(out, "ecn_marked"), test_counter(run_dir, "host0", -1, "np_ecn_marked_roce_packets"));
    CU_ASSERT_EQUAL(test_metric(out, "cnp_sent"), test_counter(run_dir, "host0", -1, "np_cnp_sent"));
    cmd = g_strdup_printf("%s compare %s %s -o %s/cmp", test_rocesim_bin(), run_dir, out, tmp);
    CU_ASSERT_EQUAL(test_run(cmd, &log), 0);
    CU_ASSERT_PTR_NOT_NULL(log ? strstr(log, "B is a capture") : NULL);
    CU_ASSERT_PTR_NOT_NULL(log ? strstr(log, "SAME: all 10 compared metrics within tolerance") : NULL);
    g_free(log);
    g_free(cmd);
    test_rmtree(tmp);
    g_free(tmp);
    g_free(out);
}

/* compare on real runs: a folder against itself, and Kmin 20KB against 400KB */
static void test_compare_real_runs(void)
{
    run_capture_once();
    char *cmd = g_strdup_printf("%s compare %s %s -o %s/cmp-self", test_rocesim_bin(), run_dir, run_dir, run_dir);
    char *out = NULL;
    CU_ASSERT_EQUAL(test_run(cmd, &out), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "verdict"));
    g_free(out);
    g_free(cmd);
    char *tmp = test_tmpdir();
    char *s = test_data_path("analysis/capture.ini");
    char *lo = g_build_filename(tmp, "kmin20", NULL), *hi = g_build_filename(tmp, "kmin400", NULL);
    cmd = g_strdup_printf("%s run %s -o %s -q --set switch.ecn_kmin=20KB --set switch.ecn_kmax=80KB --set output.pcap= && "
                          "%s run %s -o %s -q --set switch.ecn_kmin=400KB --set switch.ecn_kmax=1600KB --set output.pcap=",
                          test_rocesim_bin(), s, lo, test_rocesim_bin(), s, hi);
    CU_ASSERT_EQUAL_FATAL(test_run(cmd, NULL), 0);
    g_free(cmd);
    cmd = g_strdup_printf("%s compare %s %s --tolerance 0.02", test_rocesim_bin(), lo, hi);
    CU_ASSERT_EQUAL(test_run(cmd, &out), 1);
    /* the queue at the incast port is the metric that moves */
    char *line = strstr(out, "max_queue_bytes");
    CU_ASSERT_PTR_NOT_NULL(line);
    if (line) {
        char *eol = strchr(line, '\n');
        CU_ASSERT_PTR_NOT_NULL(eol && memchr(line, '*', (size_t)(eol - line)) ? eol : NULL);
    }
    g_free(out);
    g_free(cmd);
    /* and the higher thresholds let the queue grow: read both summaries */
    JsonParser *a = json_parser_new(), *b = json_parser_new();
    char *sa = g_build_filename(lo, "summary.json", NULL), *sb = g_build_filename(hi, "summary.json", NULL);
    CU_ASSERT_TRUE_FATAL(json_parser_load_from_file(a, sa, NULL) && json_parser_load_from_file(b, sb, NULL));
    gint64 qa = json_object_get_int_member(json_object_get_object_member(json_node_get_object(json_parser_get_root(a)), "metrics"), "max_queue_bytes");
    gint64 qb = json_object_get_int_member(json_object_get_object_member(json_node_get_object(json_parser_get_root(b)), "metrics"), "max_queue_bytes");
    CU_ASSERT(qb > qa);
    g_object_unref(a);
    g_object_unref(b);
    g_free(sa);
    g_free(sb);
    g_free(lo);
    g_free(hi);
    g_free(s);
    test_rmtree(tmp);
    g_free(tmp);
}

/* plots of a real run exist and are non-empty; the report renders with every image loaded */
static void test_plots_and_report(void)
{
    run_capture_once();
    char *cmd = g_strdup_printf("%s plot %s", test_rocesim_bin(), run_dir);
    CU_ASSERT_EQUAL_FATAL(test_run(cmd, NULL), 0);
    g_free(cmd);
    const char *figs[] = { "queue_depth", "flow_rates", "fct_cdf", "slowdown_cdf", "pfc_pauses", "ecn_cnp", "utilisation", NULL };
    for (int i = 0; figs[i]; i++)
        for (int k = 0; k < 2; k++) {
            char *f = g_strdup_printf("%s/plots/%s.%s", run_dir, figs[i], k ? "svg" : "png");
            GStatBuf st;
            int missing = g_stat(f, &st) != 0 || st.st_size < 1000;
            if (missing)
                fprintf(stderr, "\n    missing or tiny: %s ", f);
            CU_ASSERT_FALSE(missing);
            g_free(f);
        }
    if (test_run("command -v chromium >/dev/null", NULL) != 0) {
        printf("\n    (chromium not installed: report screenshot skipped) ");
        return;
    }
    cmd = g_strdup_printf("MIN_IMAGES=7 tests/report_screenshot.sh %s %s/report.png", run_dir, run_dir);
    char *out = NULL;
    int rc = test_run(cmd, &out);
    if (rc)
        fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL(rc, 0);
    g_free(out);
    g_free(cmd);
}

/* Unfinished transfers (empty fct_ns) neither break the plots nor compare. */
static void test_unfinished_transfers(void)
{
    char *tmp = test_tmpdir();
    char *out = g_build_filename(tmp, "u", NULL);
    char *s = test_data_path("analysis/unfinished.ini");
    char *cmd = g_strdup_printf("%s run %s -o %s -q", test_rocesim_bin(), s, out);
    char *log = NULL;
    CU_ASSERT_EQUAL(test_run(cmd, &log), 0);
    CU_ASSERT_PTR_NULL(strstr(log, "warning"));
    g_free(log);
    g_free(cmd);
    cmd = g_strdup_printf("%s compare %s %s -o %s/cmp", test_rocesim_bin(), out, out, tmp);
    CU_ASSERT_EQUAL(test_run(cmd, NULL), 0);
    g_free(cmd);
    g_free(s);
    g_free(out);
    test_rmtree(tmp);
    g_free(tmp);
}

static int cleanup(void)
{
    if (run_dir) {
        char *parent = g_path_get_dirname(run_dir);
        test_rmtree(parent);
        g_free(parent);
        g_free(run_dir);
    }
    return 0;
}

static CU_TestInfo tests[] = {
    { "two taps of one link count a flow once; compare against the capture", test_two_taps_and_compare },
    { "tshark on a simulated capture agrees with the counters", test_tshark_matches_counters },
    { "pcap-stats on a simulated capture reproduces counters and bytes", test_pcap_stats_reproduces },
    { "compare: self is identical, Kmin 20KB vs 400KB differs", test_compare_real_runs },
    { "plots of a real run and the report in headless Chromium", test_plots_and_report },
    { "unfinished transfers: plots and compare without errors", test_unfinished_transfers },
    CU_TEST_INFO_NULL,
};

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    CU_SuiteInfo suites[] = { { "analysis end to end", NULL, cleanup, NULL, NULL, tests }, CU_SUITE_INFO_NULL };
    if (CU_register_suites(suites) != CUE_SUCCESS)
        return 2;
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_tests_failed(), run = CU_get_number_of_tests_run();
    printf("TALLY %u %u\n", run - failed, failed);
    CU_cleanup_registry();
    return failed ? 1 : 0;
}
