/* The verbs data path end to end over a fake provider (tests/fake_verbs.h): three ranks of one
 * process (threads) replay a schedule through replay_run with --transport verbs; the fake
 * loops every WRITE into the remote rank's landing buffer. Checked against the schedule and the
 * segmentation rule by hand: the QP attributes each end was given, the work requests posted,
 * the results folder, a retry-exceeded completion stopping the run with the rank and transfer
 * named, and every resource released. */
#include "testutil.h"
#include <arpa/inet.h>
#include <unistd.h>
#include "fake_verbs.h"
#include "models/schedule_io.h"
#include "replay/replay.h"

/* 3 hosts, priority 3 (DSCP 24). t0 h0->h1; t1 h1->h2 after t0 (t0 landed at t1's source);
 * t2 h2->h0 after t0 (learned by a notification h1 -> h2); t3 h0->h1 after t1 (notification
 * h2 -> h0) and t2 (landed at h0). */
static const char *SCHED =
    "# rocesim-schedule v2\n"
    "meta hosts 3\nmeta mtu 1024\nmeta host_rate_bps 100000000000\n"
    "meta dscp 0,8,16,24,32,40,48,56\n"
    "qp 0 0 1 3 49668\nqp 1 1 2 3 52000\nqp 2 2 0 3 65535\n"
    "0 0 1 300000 3 0 0 - - - 0\n"
    "1 1 2 100000 3 1 1000000 0 - - 0\n"
    "2 2 0 50000 3 2 0 0 - - 0\n"
    "3 0 1 70000 3 0 0 1,2 - - 0\n";

static simtime_t ideal(const void *ctx, uint32_t src, uint32_t dst, uint64_t bytes)
{
    (void)ctx;
    (void)src;
    (void)dst;
    return (simtime_t)bytes * 80; /* 100 Gbit/s, headers left out: only needs to be > 0 */
}

struct rank_run {
    struct replay_config c;
    enum replay_status st;
    gboolean ok;
    char *err;
};

static gpointer run_rank(gpointer p)
{
    struct rank_run *r = p;
    GError *e = NULL;
    r->ok = replay_run(&r->c, &r->st, &e);
    if (e) {
        r->err = g_strdup(e->message);
        g_error_free(e);
    }
    return NULL;
}

/* Replays SCHED on 3 threads; returns the results folder (caller frees) and rank 0's status. */
static char *replay3(const char *dir, enum replay_status *st0, gboolean *ok0)
{
    char *sp = g_build_filename(dir, "job.sched", NULL);
    CU_ASSERT_FATAL(g_file_set_contents(sp, SCHED, -1, NULL));
    GError *e = NULL;
    struct schedule *s = schedule_read(sp, 0, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    char *out = g_build_filename(dir, "lab", NULL);
    struct in_addr addr[3];
    for (int h = 0; h < 3; h++)
        inet_pton(AF_INET, h == 0 ? "127.0.0.1" : h == 1 ? "127.0.0.2" : "127.0.0.3", &addr[h]);
    static int round;
    uint16_t port = (uint16_t)(test_port_base() + 1 + (unsigned)(round++ % 7)); /* + 0: the other test */
    struct rank_run rr[3];
    GThread *th[3];
    for (int k = 0; k < 3; k++) {
        rr[k] = (struct rank_run){ .c = {
            .sched = s, .schedule_path = sp, .rank = k, .size = 3, .addr = addr,
            .ctrl_addr = "127.0.0.1", .ctrl_port = port, .mtu = 1024, .timeout_ns = 5000000000LL,
            .start_delay_ns = 50000000, .ideal = ideal, .out_dir = out, .transport = "verbs",
            .verbs = &fake_fns, .gid_index = -1, .device = "fake0", .ib_root = dir,
            .sample_interval_ns = 1000000 } };
        th[k] = g_thread_new("rank", run_rank, &rr[k]);
    }
    for (int k = 0; k < 3; k++)
        g_thread_join(th[k]);
    for (int k = 0; k < 3; k++) {
        if (rr[k].err)
            fprintf(stderr, "\n  rank %d: %s\n", k, rr[k].err);
        g_free(rr[k].err);
    }
    *st0 = rr[0].st;
    *ok0 = rr[0].ok;
    schedule_free(s);
    g_free(sp);
    return out;
}

static JsonObject *summary(JsonParser *p, const char *out)
{
    char *f = g_build_filename(out, "summary.json", NULL);
    gboolean ok = json_parser_load_from_file(p, f, NULL);
    g_free(f);
    CU_ASSERT_FATAL(ok);
    return json_node_get_object(json_parser_get_root(p));
}

static void done(char *dir, char *out)
{
    fake_done();
    char *rm = g_strdup_printf("rm -rf '%s'", dir);
    CU_ASSERT_EQUAL(system(rm), 0);
    g_free(rm);
    g_free(out);
    g_free(dir);
}

static void assert_all_released(void)
{
    CU_ASSERT_EQUAL(fake.live_ctx, 0);
    CU_ASSERT_EQUAL(fake.live_pd, 0);
    CU_ASSERT_EQUAL(fake.live_mr, 0);
    CU_ASSERT_EQUAL(fake.live_cq, 0);
    CU_ASSERT_EQUAL(fake.live_srq, 0);
    CU_ASSERT_EQUAL(fake.live_qp, 0);
}

static void test_verbs_replay_complete(void)
{
    fake_reset(65536);
    char *dir = g_dir_make_tmp("rocesim-verbs-XXXXXX", NULL);
    /* the device's hw_counters, for the sampler */
    char *hc = g_build_filename(dir, "fake0", "ports", "1", "hw_counters", NULL);
    CU_ASSERT_EQUAL_FATAL(g_mkdir_with_parents(hc, 0755), 0);
    char *cf = g_build_filename(hc, "np_cnp_sent", NULL);
    CU_ASSERT_FATAL(g_file_set_contents(cf, "7\n", -1, NULL));
    g_free(cf);
    g_free(hc);
    enum replay_status st;
    gboolean ok;
    char *out = replay3(dir, &st, &ok);
    CU_ASSERT(ok);
    CU_ASSERT_EQUAL(st, REPLAY_COMPLETE);
    assert_all_released();
    /* QPs: 3 schedule QPs x 2 ends + a control QP per ordered host pair (6) */
    CU_ASSERT_EQUAL(fake.next_qpn - 0x200, 12);
    CU_ASSERT_EQUAL(fake.rtr->len, 12);
    /* segmentation by hand at max_msg 65536: 300000 -> 5, 100000 -> 2, 50000 -> 1, 70000 -> 2
     * WRITEs; notifications: t0's end h1 -> h2 (for t2), t1's end h2 -> h0 (for t3) */
    CU_ASSERT_EQUAL(fake.wrs, 10 + 2);
    CU_ASSERT_EQUAL(fake.signalled, 4 + 2);
    CU_ASSERT_EQUAL(fake.imm_writes, 4 + 2);
    CU_ASSERT_EQUAL(fake.bytes_written, 520000);
    CU_ASSERT_EQUAL(fake.oversize, 0);
    CU_ASSERT_EQUAL(fake.bad_access, 0);
    /* memory: the 3 landing buffers are the only remote-write memory, nothing remote-read */
    CU_ASSERT_EQUAL(fake.remote_write_mrs, 3);
    CU_ASSERT_EQUAL(fake.remote_read_mrs, 0);
    /* every QP end as replay.md says: TC = DSCP 24 << 2, SL 3, the label of the QP's port, MTU
     * 1024, timeout 14, retry 7, hop limit 64, the RoCE v2 GID of the host's address (index
     * 3 + host in the fake's table, never the RoCE v1 entry 0) */
    const uint16_t sport[3] = { 49668, 52000, 65535 };
    int data_ends = 0;
    for (guint i = 0; i < fake.rtr->len; i++) {
        const struct fake_rtr *r = &g_array_index(fake.rtr, struct fake_rtr, i);
        CU_ASSERT_EQUAL(r->mtu, IBV_MTU_1024);
        CU_ASSERT_EQUAL(r->timeout, 14);
        CU_ASSERT_EQUAL(r->retry, 7);
        CU_ASSERT_EQUAL(r->hop_limit, 64);
        CU_ASSERT(r->sgid_index >= 3 && r->sgid_index <= 5);
        CU_ASSERT(r->flow_label != 0);
        for (int q = 0; q < 3; q++)
            if (r->flow_label == roce_flow_label_for_sport(sport[q]) && r->sl == 3) {
                data_ends++;
                CU_ASSERT_EQUAL(r->tclass, 24 << 2);
            }
    }
    CU_ASSERT_EQUAL(data_ends, 6);
    CU_ASSERT_EQUAL(roce_sport_of_flow_label(roce_flow_label_for_sport(65535)), 65535);
    JsonParser *p = json_parser_new();
    JsonObject *o = summary(p, out);
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(json_object_get_object_member(o, "replay"), "status"),
                           "complete");
    JsonObject *m = json_object_get_object_member(o, "metrics");
    CU_ASSERT_EQUAL(json_object_get_int_member(m, "bytes_landed"), 520000);
    CU_ASSERT_EQUAL(json_object_get_int_member(m, "bytes_scheduled"), 520000);
    CU_ASSERT_EQUAL(json_object_get_int_member(m, "dependency_violations"), 0);
    g_object_unref(p);
    char *csv = g_build_filename(out, "transfers.csv", NULL), *body = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(csv, &body, NULL, NULL));
    char **lines = g_strsplit(body, "\n", -1);
    CU_ASSERT_EQUAL(g_strv_length(lines), 1 + 4 + 1);
    g_strfreev(lines);
    g_free(body);
    g_free(csv);
    /* counters.csv: the sampled hw_counters of every host, port 1, no increase in the fixture */
    csv = g_build_filename(out, "counters.csv", NULL);
    CU_ASSERT_FATAL(g_file_get_contents(csv, &body, NULL, NULL));
    for (int h = 0; h < 3; h++) {
        char *row = g_strdup_printf(",host%d,1,np_cnp_sent,0\n", h);
        CU_ASSERT_PTR_NOT_NULL(strstr(body, row));
        g_free(row);
    }
    g_free(body);
    g_free(csv);
    done(dir, out);
}

/* t3's WRITE WITH IMMEDIATE completes with IBV_WC_RETRY_EXC_ERR: the run stops, the folder
 * says incomplete, naming rank 0 and transfer 3, and nothing stays allocated. */
static void test_verbs_replay_retry_exceeded(void)
{
    fake_reset(1u << 31);
    fake.fail_imm = 3;
    char *dir = g_dir_make_tmp("rocesim-verbs-XXXXXX", NULL);
    enum replay_status st;
    gboolean ok;
    int64_t t0 = g_get_monotonic_time();
    char *out = replay3(dir, &st, &ok);
    CU_ASSERT(g_get_monotonic_time() - t0 < 5000000); /* well within the 5 s timeout */
    CU_ASSERT(ok);
    CU_ASSERT_EQUAL(st, REPLAY_INCOMPLETE);
    assert_all_released();
    JsonParser *p = json_parser_new();
    JsonObject *o = summary(p, out);
    JsonObject *r = json_object_get_object_member(o, "replay");
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(r, "status"), "incomplete");
    const char *why = json_object_get_string_member(r, "reason");
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "rank 0: transfer 3 (host 0 -> host 1, 70000 bytes)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(why, ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR)));
    g_object_unref(p);
    done(dir, out);
}

/* A device whose table has no RoCE v2 GID for the host's address: the rank says so, and every
 * resource opened so far is released. */
static void test_verbs_no_gid(void)
{
    fake_reset(65536);
    char *dir = g_dir_make_tmp("rocesim-verbs-XXXXXX", NULL);
    char *sp = g_build_filename(dir, "job.sched", NULL);
    CU_ASSERT_FATAL(g_file_set_contents(sp, SCHED, -1, NULL));
    struct schedule *s = schedule_read(sp, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    struct in_addr addr[3];
    for (int h = 0; h < 3; h++)
        inet_pton(AF_INET, "10.9.9.9", &addr[h]);
    struct replay_config c = { .sched = s, .schedule_path = sp, .rank = 0, .size = 1, .addr = addr,
                               .ctrl_addr = "127.0.0.1", .ctrl_port = (uint16_t)test_port_base(),
                               .mtu = 1024, .timeout_ns = 2000000000LL, .ideal = ideal,
                               .transport = "verbs", .verbs = &fake_fns, .gid_index = -1 };
    char *out = g_build_filename(dir, "lab", NULL);
    c.out_dir = out;
    enum replay_status st;
    GError *e = NULL;
    CU_ASSERT_FALSE(replay_run(&c, &st, &e));
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_PTR_NOT_NULL(strstr(e->message, "no RoCE v2 GID for 10.9.9.9"));
    CU_ASSERT_FALSE(g_file_test(out, G_FILE_TEST_EXISTS));
    g_clear_error(&e);
    assert_all_released();
    schedule_free(s);
    g_free(sp);
    done(dir, out);
}

static CU_TestInfo tests[] = {
    { "verbs replay over the fake provider: QPs, WRs, results", test_verbs_replay_complete },
    { "verbs replay: retry exceeded stops the run, resources released", test_verbs_replay_retry_exceeded },
    { "verbs replay: no RoCE v2 GID for the address", test_verbs_no_gid },
    CU_TEST_INFO_NULL,
};
TEST_MAIN("replay verbs", tests)
