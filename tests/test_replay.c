/* Replay: the segmentation rule, PSN and clock arithmetic, the lab map, the verbs device path
 * over a fake table and for real (no RDMA device here), and whole replays under mpirun on
 * loopback over the UDP transport: dependencies honoured, bytes equal, results that compare
 * and plot read, packet loss recovered, and a rank that dies or hangs stopping everyone. */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include "analysis/frames.h"
#include "models/schedule_io.h"
#include "replay/hostmap.h"
#include "replay/report.h"
#include "replay/segment.h"
#include "replay/subset.h"
#include "replay/udp.h"
#include "replay/verbs.h"
#include "replay/verbs_plan.h"
#include <sys/resource.h>
#include "tests/testutil.h"

/* ---- units ---- */

/* Hand-worked: 2^31 + 100 bytes at mtu 4096 is 2^31/4096 = 524288 full packets in the first
 * message and one 100-byte packet that is a whole second message (FIRST+LAST+IMM). */
static void test_segmentation(void)
{
    struct segment s;
    uint64_t big = (1ull << 31) + 100;
    CU_ASSERT_EQUAL(segment_packets(big, 4096), 524289);
    segment_packet(big, 4096, 0, &s);
    CU_ASSERT(s.first && !s.last && !s.imm && s.payload == 4096 && s.msg_bytes == 1ull << 31);
    segment_packet(big, 4096, 524287, &s);
    CU_ASSERT(!s.first && s.last && !s.imm && s.payload == 4096);
    segment_packet(big, 4096, 524288, &s);
    CU_ASSERT(s.first && s.last && s.imm && s.payload == 100 && s.msg_bytes == 100);
    /* 2500 bytes at 1024: 1024, 1024, 452 */
    CU_ASSERT_EQUAL(segment_packets(2500, 1024), 3);
    segment_packet(2500, 1024, 2, &s);
    CU_ASSERT(!s.first && s.last && s.imm && s.payload == 452 && s.msg_bytes == 2500);
    /* a notification: one empty packet, the whole message */
    CU_ASSERT_EQUAL(segment_packets(0, 1024), 1);
    segment_packet(0, 1024, 0, &s);
    CU_ASSERT(s.first && s.last && s.imm && s.payload == 0);
    /* work requests: one per message of at most max_msg (capped at 2^31) */
    CU_ASSERT_EQUAL(segment_work_requests(big, 0), 2);
    CU_ASSERT_EQUAL(segment_work_requests(big, 1ull << 30), 3);
    CU_ASSERT_EQUAL(segment_work_requests(1ull << 31, 1ull << 40), 1);
    CU_ASSERT_EQUAL(segment_work_requests(0, 1024), 1);
}

static void test_psn_wrap(void)
{
    CU_ASSERT_EQUAL(psn_diff(0x000001, 0xFFFFFF), 2);
    CU_ASSERT_EQUAL(psn_diff(0xFFFFFF, 0x000001), -2);
    CU_ASSERT_EQUAL(psn_diff(0x400000, 0), 0x400000);
    CU_ASSERT_EQUAL(psn_diff(0x800000, 0), -0x800000);
    CU_ASSERT(udp_initial_psn(0x123) < (1u << 24));
}

/* Offsets: rank 1's clock is 1000 ns ahead at rank-0 time 0 and 3000 ns ahead at rank-0 time
 * 1 s, so at rank-0 time 0.5 s it is 2000 ns ahead: its reading 500002000 is 500000000. */
static void test_clock_interpolation(void)
{
    int64_t off[2] = { 0, 1000 }, half[2] = { 0, 10 }, at[2] = { 0, 0 };
    int64_t off2[2] = { 0, 3000 }, half2[2] = { 0, 10 }, at2[2] = { 0, 1000000000 };
    struct replay_clock k = { off, half, at, off2, half2, at2 };
    CU_ASSERT(llabs(replay_to_rank0(&k, 1, 500002000) - 500000000) <= 1);
    CU_ASSERT_EQUAL(replay_to_rank0(&k, 0, 12345), 12345);
    struct replay_clock once = { off, half, at, NULL, NULL, NULL };
    CU_ASSERT_EQUAL(replay_to_rank0(&once, 1, 500002000), 500001000);
    /* the interpolated offset is a convex mix of two estimates, each within its own bound:
     * the after-run sample's poorer bound (400 ns) is the one that holds */
    int64_t poor[2] = { 0, 400 };
    struct replay_clock mixed = { off, half, at, off2, poor, at2 };
    CU_ASSERT_EQUAL(replay_clock_uncertainty(&mixed, 1), 400);
    CU_ASSERT_EQUAL(replay_clock_uncertainty(&k, 1), 10);
    CU_ASSERT_EQUAL(replay_clock_uncertainty(&once, 1), 10);
    CU_ASSERT_EQUAL(replay_clock_uncertainty(&mixed, 0), 0);
}

/* IMM frames: the last packet of a transfer is WRITE ONLY/LAST WITH IMMEDIATE and parses back
 * with its immediate and a good ICRC. */
static void test_imm_frames(void)
{
    uint8_t buf[FRAME_MAX_BYTES];
    struct packet p = { .kind = PKT_DATA, .src = 1, .dst = 2, .payload = 100, .sport = 0xC123,
                        .dscp = 24, .ecn = ECN_ECT0, .dst_qpn = 0x101, .psn = 7,
                        .flags = PKT_F_FIRST | PKT_F_LAST };
    struct frame_ctx fc = { .msg_bytes = 100, .imm = true, .imm_data = 0xABCD };
    size_t n = frame_build(&p, &fc, buf, sizeof buf);
    /* Eth 14 + IP 20 + UDP 8 + BTH 12 + RETH 16 + ImmDt 4 + 100 + ICRC 4 */
    CU_ASSERT_EQUAL(n, 178);
    struct frame_info fi;
    CU_ASSERT_EQUAL_FATAL(frame_parse(LINKTYPE_ETHERNET, buf, (uint32_t)n, (uint32_t)n, &fi), 0);
    CU_ASSERT_EQUAL(fi.opcode, BTH_OP_WRITE_ONLY_IMM);
    CU_ASSERT(fi.has_imm && fi.imm == 0xABCD && fi.has_reth && fi.reth_dma_len == 100);
    CU_ASSERT_EQUAL(fi.icrc, ICRC_OK);
    p.flags = PKT_F_LAST;
    n = frame_build(&p, &fc, buf, sizeof buf);
    CU_ASSERT_EQUAL(n, 178 - 16);
    CU_ASSERT_EQUAL_FATAL(frame_parse(LINKTYPE_ETHERNET, buf, (uint32_t)n, (uint32_t)n, &fi), 0);
    CU_ASSERT_EQUAL(fi.opcode, BTH_OP_WRITE_LAST_IMM);
    CU_ASSERT(fi.has_imm && fi.imm == 0xABCD && !fi.has_reth && fi.icrc == ICRC_OK);
}

static void expect_map_error(const char *dir, const char *body, const char *needle)
{
    char *p = g_build_filename(dir, "lab.map", NULL);
    CU_ASSERT_FATAL(g_file_set_contents(p, body, -1, NULL));
    GError *e = NULL;
    struct hostmap *m = hostmap_read(p, &e);
    CU_ASSERT_PTR_NULL(m);
    gboolean ok = e && strstr(e->message, needle) && g_str_has_prefix(e->message, p);
    if (!ok)
        fprintf(stderr, "\nexpected '%s', got '%s'\n", needle, e ? e->message : "(none)");
    CU_ASSERT(ok);
    g_clear_error(&e);
    hostmap_free(m);
    g_free(p);
}

static void test_hostmap(void)
{
    char *dir = test_tmpdir();
    char *p = g_build_filename(dir, "lab.map", NULL);
    const char *good = "# lab\nhost 1 lab2 mlx5_1 ens2 192.168.0.2 0\n\nhost 0 lab1 mlx5_0 ens1 192.168.0.1 1\n";
    CU_ASSERT_FATAL(g_file_set_contents(p, good, -1, NULL));
    GError *e = NULL;
    struct hostmap *m = hostmap_read(p, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL(m->n, 2);
    CU_ASSERT_STRING_EQUAL(m->h[0].machine, "lab1");
    CU_ASSERT_STRING_EQUAL(m->h[1].device, "mlx5_1");
    CU_ASSERT_EQUAL(ntohl(m->h[1].addr.s_addr), 0xC0A80002u);
    CU_ASSERT_EQUAL(m->h[0].leaf, 1);
    hostmap_free(m);
    expect_map_error(dir, "host 0 lab1 mlx5_0 ens1 192.168.0.1\n", ":1: expected 'host <schedule-host>");
    expect_map_error(dir, "host 0 lab1 mlx5_0 ens1 192.168.0.256 0\n", ":1: '192.168.0.256' is not an IPv4 address");
    expect_map_error(dir, "host 0 a - - 10.0.0.1 0\nhost 0 b - - 10.0.0.2 0\n", ":2: host 0 is mapped twice (first on line 1)");
    expect_map_error(dir, "host 1 a - - 10.0.0.1 0\n", "schedule host 0 has no line");
    expect_map_error(dir, "host x a - - 10.0.0.1 0\n", ":1: schedule host 'x' is not a host index");
    /* strtoul reads "+0" and " 0" as 0: a host index is digits only, 0..1000000 */
    expect_map_error(dir, "host +0 a - - 10.0.0.1 0\n", ":1: schedule host '+0' is not a host index 0..1000000");
    expect_map_error(dir, "host 1000001 a - - 10.0.0.1 0\n", ":1: schedule host '1000001' is not a host index");
    /* addresses no single host has (found writing fuzz_lab), and a leaf that is not a number */
    expect_map_error(dir, "host 0 a - - 0.0.0.0 0\n", ":1: '0.0.0.0' is not a host's address");
    expect_map_error(dir, "host 0 a - - 239.1.2.3 0\n", ":1: '239.1.2.3' is not a host's address");
    expect_map_error(dir, "host 0 a - - 255.255.255.255 0\n", ":1: '255.255.255.255' is not a host's address");
    expect_map_error(dir, "host 0 a - - 240.0.0.1 0\n", ":1: '240.0.0.1' is not a host's address");
    expect_map_error(dir, "host 0 a - - 223.255.255.254 0\nhost 0 b - - 10.0.0.2 0\n", ":2: host 0 is mapped twice");
    expect_map_error(dir, "host 0 a - - 10.0.0.1 -1\n", ":1: leaf '-1' is not a number 0..4294967295");
    expect_map_error(dir, "host 0 a - - 10.0.0.1 4294967296\n", ":1: leaf '4294967296' is not a number");
    struct hostmap *lo = hostmap_loopback(3);
    CU_ASSERT_EQUAL(ntohl(lo->h[2].addr.s_addr), 0x7F000003u);
    hostmap_free(lo);
    test_rmtree(dir);
    g_free(p);
    g_free(dir);
}

/* ---- verbs device selection over a fake table ---- */

static int fake_mode; /* 0: NULL list (ENOSYS), 1: empty list, 2: two devices */
static GString *fake_calls;
static struct ibv_device *fake_devs[3] = { (struct ibv_device *)0x10, (struct ibv_device *)0x20, NULL };
static struct ibv_device *fake_empty[1] = { NULL };
static struct ibv_device **fake_get(int *num)
{
    g_string_append(fake_calls, "get ");
    if (fake_mode == 0) {
        errno = ENOSYS;
        return NULL;
    }
    *num = fake_mode == 1 ? 0 : 2;
    return fake_mode == 1 ? fake_empty : fake_devs;
}
static void fake_free(struct ibv_device **l)
{
    (void)l;
    g_string_append(fake_calls, "free ");
}
static const char *fake_name(struct ibv_device *d) { return d == fake_devs[0] ? "mlx5_0" : "mlx5_1"; }
static struct ibv_context *fake_open(struct ibv_device *d)
{
    g_string_append_printf(fake_calls, "open:%s ", fake_name(d));
    return (struct ibv_context *)0x99;
}
static int fake_close(struct ibv_context *c)
{
    (void)c;
    return 0;
}

static void test_verbs_open_fake(void)
{
    const struct verbs_fns f = { .get_device_list = fake_get, .free_device_list = fake_free,
                                 .get_device_name = fake_name, .open_device = fake_open,
                                 .close_device = fake_close };
    GError *e = NULL;
    fake_calls = g_string_new(NULL);
    fake_mode = 0;
    CU_ASSERT_PTR_NULL(verbs_open(&f, NULL, &e));
    CU_ASSERT(e && e->code == REPLAY_ERROR_NO_DEVICE &&
              !strcmp(e->message, "no RDMA device (ibv_get_device_list: Function not implemented)"));
    g_clear_error(&e);
    fake_mode = 1;
    CU_ASSERT_PTR_NULL(verbs_open(&f, NULL, &e));
    CU_ASSERT(e && e->code == REPLAY_ERROR_NO_DEVICE &&
              !strcmp(e->message, "no RDMA device (ibv_get_device_list: 0 devices)"));
    g_clear_error(&e);
    fake_mode = 2;
    CU_ASSERT_PTR_NULL(verbs_open(&f, "mlx5_9", &e));
    CU_ASSERT(e && !strcmp(e->message, "no RDMA device 'mlx5_9' (there are: mlx5_0, mlx5_1)"));
    g_clear_error(&e);
    g_string_truncate(fake_calls, 0);
    CU_ASSERT_PTR_EQUAL(verbs_open(&f, "mlx5_1", &e), (struct ibv_context *)0x99);
    /* the list is freed only after the device is open */
    CU_ASSERT_STRING_EQUAL(fake_calls->str, "get open:mlx5_1 free ");
    g_string_free(fake_calls, TRUE);
}

/* QP attributes by hand (replay.md 1.3 and 2): DSCP 26 -> traffic class 104; priority 3 ->
 * SL 3; sport 0xC123 -> flow label 0x123; timeout 14, retry 7. */
static void test_verbs_plan(void)
{
    struct sched_qp q = { .src = 0, .dst = 1, .prio = 3, .sport = 0xC123 };
    struct verbs_qp_plan p;
    GError *e = NULL;
    CU_ASSERT_FATAL(verbs_plan_qp(&q, 26, 1024, IBV_MTU_4096, TRUE, &p, &e));
    CU_ASSERT_EQUAL(p.traffic_class, 104);
    CU_ASSERT_EQUAL(p.sl, 3);
    CU_ASSERT_EQUAL(p.flow_label, 0x123);
    CU_ASSERT_EQUAL(p.path_mtu, IBV_MTU_1024);
    CU_ASSERT(p.timeout == 14 && p.retry_cnt == 7 && p.rnr_retry == 7 && p.min_rnr_timer == 12);
    CU_ASSERT(p.hop_limit > 1); /* 1 would die at the first routed hop */
    CU_ASSERT(p.access_flags & IBV_ACCESS_REMOTE_WRITE);
    CU_ASSERT(p.landing_mr_flags & IBV_ACCESS_LOCAL_WRITE); /* REMOTE_WRITE requires it */
    CU_ASSERT_FALSE((p.access_flags | p.landing_mr_flags | p.source_mr_flags) & IBV_ACCESS_REMOTE_READ);
    CU_ASSERT_EQUAL(p.source_mr_flags, 0);
    CU_ASSERT_FATAL(verbs_plan_qp(&q, 26, 1024, IBV_MTU_4096, FALSE, &p, &e));
    CU_ASSERT_EQUAL(p.access_flags, 0); /* a sender exposes nothing */
    q.sport = 0xC000; /* label 0 would mean "hash the QPNs" */
    CU_ASSERT_FATAL(verbs_plan_qp(&q, 26, 1024, IBV_MTU_4096, FALSE, &p, &e));
    CU_ASSERT_EQUAL(p.flow_label, 0x4001);
    CU_ASSERT_FALSE(verbs_plan_qp(&q, 26, 4096, IBV_MTU_1024, FALSE, &p, &e));
    CU_ASSERT(e && strstr(e->message, "path MTU 4096 is above the port's active MTU 1024"));
    g_clear_error(&e);
    CU_ASSERT_FALSE(verbs_plan_qp(&q, 26, 1500, IBV_MTU_4096, FALSE, &p, &e));
    CU_ASSERT(e && strstr(e->message, "path MTU 1500 is not an InfiniBand MTU"));
    g_clear_error(&e);
    /* preflight */
    CU_ASSERT_FALSE(verbs_preflight(65536, 1 << 20, 1000, 10, &e));
    CU_ASSERT(e && strstr(e->message, "1048576 bytes of locked memory, RLIMIT_MEMLOCK allows 65536"));
    g_clear_error(&e);
    CU_ASSERT(verbs_preflight((uint64_t)RLIM_INFINITY, 1ull << 40, 1000, 10, &e));
    CU_ASSERT_FALSE(verbs_preflight((uint64_t)RLIM_INFINITY, 1, 8, 9, &e));
    CU_ASSERT(e && strstr(e->message, "needs 9 QPs, the device allows 8"));
    g_clear_error(&e);
}

/* A 16-bit tick counter: 0xFFF0 then 0x0010 is a wrap (0x10010), then 0x0020 (0x10020).
 * Two clock pairs (1000 ticks, 5000 ns) and (3000, 9000) give 2 ns a tick: 2000 -> 7000 ns;
 * one pair uses the nominal 1 GHz (1e6 kHz): 2000 -> 6000 ns. */
static void test_tick_clock(void)
{
    struct tick_clock c = { .mask = 0xFFFF };
    CU_ASSERT_EQUAL(tick_extend(&c, 0xFFF0), 0xFFF0);
    CU_ASSERT_EQUAL(tick_extend(&c, 0x0010), 0x10010);
    CU_ASSERT_EQUAL(tick_extend(&c, 0x0020), 0x10020);
    CU_ASSERT_EQUAL(tick_extend(&c, 0x1FFFF), 0x1FFFF); /* bits above the mask are ignored */
    CU_ASSERT_EQUAL(tick_to_host_ns(2000, 1000, 5000, 3000, 9000, 0), 7000);
    CU_ASSERT_EQUAL(tick_to_host_ns(2000, 1000, 5000, 1000, 5000, 1000000), 6000);
}

/* ---- the command line ---- */

static char *write_file(const char *dir, const char *name, const char *body)
{
    char *p = g_build_filename(dir, name, NULL);
    CU_ASSERT_FATAL(g_file_set_contents(p, body, -1, NULL));
    return p;
}

/* No RDMA device on this machine: exit 3, the message, nothing written. */
static void test_no_device(void)
{
    char *dir = test_tmpdir();
    char *sched = write_file(dir, "one.sched", "# rocesim-schedule v1\n0 0 0 0 3 0 0 - - - 0\n");
    char *out = g_build_filename(dir, "lab", NULL);
    const char *args[] = { "replay", sched, "--transport", "verbs", "-o", out, NULL };
    char *so = NULL, *se = NULL;
    int rc = test_rocesim(args, NULL, &so, &se);
    CU_ASSERT_EQUAL(rc, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(se, "no RDMA device (ibv_get_device_list: "));
    CU_ASSERT(!g_file_test(out, G_FILE_TEST_EXISTS));
    GDir *d = g_dir_open(dir, 0, NULL);
    int n = 0;
    while (g_dir_read_name(d))
        n++;
    g_dir_close(d);
    CU_ASSERT_EQUAL(n, 1); /* only the schedule */
    g_free(so);
    g_free(se);
    test_rmtree(dir);
    g_free(sched);
    g_free(out);
    g_free(dir);
}

static void expect_bad_cmd(const char *const *args, const char *needle)
{
    char *so = NULL, *se = NULL;
    int rc = test_rocesim(args, NULL, &so, &se);
    gboolean ok = rc == 2 && strstr(se, needle);
    if (!ok)
        fprintf(stderr, "\nexpected exit 2 and '%s', got %d: %s\n", needle, rc, se);
    CU_ASSERT(ok);
    g_free(so);
    g_free(se);
}

static void test_bad_input(void)
{
    char *dir = test_tmpdir();
    char *four = write_file(dir, "four.sched", "# rocesim-schedule v1\n0 0 3 100 3 0 0 - - - 0\n");
    char *map = write_file(dir, "lab.map", "host 0 a - - 10.0.0.300 0\n");
    char *out = g_build_filename(dir, "lab", NULL);
    expect_bad_cmd((const char *[]){ "replay", four, "-o", out, NULL },
                   "has 4 hosts but 1 rank(s) were started");
    expect_bad_cmd((const char *[]){ "replay", four, "--transport", "rdma", "-o", out, NULL },
                   "--transport rdma: expected verbs or udp");
    expect_bad_cmd((const char *[]){ "replay", four, "--timeout", "soon", "-o", out, NULL },
                   "--timeout soon:");
    char *one = write_file(dir, "one.sched", "# rocesim-schedule v1\n0 0 0 0 3 0 0 - - - 0\n");
    expect_bad_cmd((const char *[]){ "replay", one, "--hosts", map, "-o", out, NULL },
                   "lab.map:1: '10.0.0.300' is not an IPv4 address");
    expect_bad_cmd((const char *[]){ "replay", "/nonexistent.sched", "-o", out, NULL },
                   "/nonexistent.sched: cannot open");
    /* congestion control (udp_cc.h): knobs only from a scenario, algorithms that need
     * nothing from ACKs, the udp transport only */
    char *ini = test_data_path("replay/pair2.ini");
    expect_bad_cmd((const char *[]){ "replay", one, "--cc", "dcqcn", "-o", out, NULL },
                   "--cc needs --scenario");
    expect_bad_cmd((const char *[]){ "replay", one, "--cc", "dcqcn", "--transport", "verbs", "-o", out, NULL },
                   "--cc is for the udp transport");
    expect_bad_cmd((const char *[]){ "replay", one, "--scenario", ini, "--cc", "dctcp", "-o", out, NULL },
                   "--cc dctcp: the udp transport's ACKs carry no ECN-echo");
    expect_bad_cmd((const char *[]){ "replay", one, "--scenario", ini, "--cc", "bogus", "-o", out, NULL },
                   "--cc bogus: expected one of none|dcqcn");
    expect_bad_cmd((const char *[]){ "replay", one, "--test-ce-every", "-1", "-o", out, NULL },
                   "--test-ce-every -1: expected 0 (off) or a count N > 0");
    g_free(ini);
    CU_ASSERT(!g_file_test(out, G_FILE_TEST_EXISTS));
    test_rmtree(dir);
    g_free(four);
    g_free(one);
    g_free(map);
    g_free(out);
    g_free(dir);
}

/* ---- whole replays on loopback ---- */

static int port_base(void) { return (int)test_port_base(); }

static int mpirun_replay(const char *sched, const char *out, const char *extra, char **log)
{
    char *cmd = g_strdup_printf("timeout -k 5 120 mpirun --allow-run-as-root --oversubscribe -np 4 "
                                "'%s' replay '%s' --udp-port %d --ctrl-port %d -o '%s' %s 2>&1",
                                test_rocesim_bin(), sched, port_base(), port_base() + 1, out,
                                extra ? extra : "");
    int rc = test_run(cmd, log);
    g_free(cmd);
    return rc;
}

struct row {
    uint64_t bytes, start, end;
    gboolean done;
};

/* transfers.csv rows by transfer id (n entries; ids without a row stay zero). */
static struct row *read_transfers(const char *dir, uint32_t n)
{
    char *p = g_build_filename(dir, "transfers.csv", NULL), *text = NULL;
    struct row *rows = g_new0(struct row, n);
    CU_ASSERT_FATAL(g_file_get_contents(p, &text, NULL, NULL));
    char **lines = g_strsplit(text, "\n", -1);
    CU_ASSERT_STRING_EQUAL(lines[0], "id,src,dst,bytes,prio,start_ns,end_ns,fct_ns,ideal_ns,slowdown");
    for (int i = 1; lines[i] && *lines[i]; i++) {
        char **f = g_strsplit(lines[i], ",", -1);
        uint32_t id = (uint32_t)g_ascii_strtoull(f[0], NULL, 10);
        if (id < n) {
            rows[id].bytes = g_ascii_strtoull(f[3], NULL, 10);
            rows[id].start = g_ascii_strtoull(f[5], NULL, 10);
            rows[id].done = *f[6] != '\0';
            rows[id].end = g_ascii_strtoull(f[6], NULL, 10);
        }
        g_strfreev(f);
    }
    g_strfreev(lines);
    g_free(text);
    g_free(p);
    return rows;
}

/* The earliest a transfer may start by the schedule's rule, from the measured ends of the
 * transfers it depends on (markers are not in transfers.csv: they finish when they start,
 * which is their own earliest time): LB(x) = delay(x) + max over deps d of F(d), where
 * F(d) = end(d) for a transfer with bytes and LB(d) for a marker; roots: their delay. */
static uint64_t earliest(const struct schedule *s, const struct row *rows, uint64_t *memo, uint32_t x)
{
    if (memo[x] != UINT64_MAX)
        return memo[x];
    const struct transfer *t = schedule_get(s, x);
    uint64_t m = 0;
    const uint32_t *d = schedule_deps(s, t);
    for (uint32_t k = 0; k < t->ndeps; k++) {
        uint64_t f = schedule_get(s, d[k])->bytes ? rows[d[k]].end : earliest(s, rows, memo, d[k]);
        m = MAX(m, f);
    }
    return memo[x] = m + t->delay / 1000;
}

static gint64 summary_int(const char *dir, const char *obj, const char *key)
{
    char *p = g_build_filename(dir, "summary.json", NULL);
    JsonParser *jp = json_parser_new();
    gint64 v = -1;
    if (json_parser_load_from_file(jp, p, NULL)) {
        JsonObject *o = json_object_get_object_member(json_node_get_object(json_parser_get_root(jp)), obj);
        if (o && json_object_has_member(o, key))
            v = json_object_get_int_member(o, key);
    }
    g_object_unref(jp);
    g_free(p);
    return v;
}

static char *summary_str(const char *dir, const char *obj, const char *key)
{
    char *p = g_build_filename(dir, "summary.json", NULL);
    JsonParser *jp = json_parser_new();
    char *v = NULL;
    if (json_parser_load_from_file(jp, p, NULL)) {
        JsonObject *o = json_object_get_object_member(json_node_get_object(json_parser_get_root(jp)), obj);
        if (o && json_object_has_member(o, key))
            v = g_strdup(json_object_get_string_member(o, key));
    }
    g_object_unref(jp);
    g_free(p);
    return v ? v : g_strdup("");
}

/* Hosts of summary.json's replay.hosts with a clock offset measured after the run too (the
 * drift estimate), and, in *hosts, how many hosts it lists. */
static int hosts_with_drift(const char *dir, int *hosts)
{
    char *p = g_build_filename(dir, "summary.json", NULL);
    JsonParser *jp = json_parser_new();
    int n = 0;
    *hosts = 0;
    if (json_parser_load_from_file(jp, p, NULL)) {
        JsonObject *o = json_object_get_object_member(json_node_get_object(json_parser_get_root(jp)), "replay");
        JsonArray *a = o && json_object_has_member(o, "hosts") ? json_object_get_array_member(o, "hosts") : NULL;
        for (guint i = 0; a && i < json_array_get_length(a); i++) {
            (*hosts)++;
            n += json_object_has_member(json_array_get_object_element(a, i), "clock_offset_after_ns");
        }
    }
    g_object_unref(jp);
    g_free(p);
    return n;
}

/* Every transfer completed, none started before its dependencies allowed (up to the clock
 * uncertainty the replay reports), the bytes that landed are the bytes scheduled, and the
 * clocks were measured again after the run on every host. */
static void check_complete_replay(const char *sched_path, const char *lab)
{
    GError *e = NULL;
    struct schedule *s = schedule_read(sched_path, 0, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    uint32_t n = schedule_count(s);
    struct row *rows = read_transfers(lab, n);
    uint64_t *memo = g_new(uint64_t, n);
    for (uint32_t i = 0; i < n; i++)
        memo[i] = UINT64_MAX;
    gint64 unc = summary_int(lab, "replay", "clock_uncertainty_ns");
    CU_ASSERT(unc >= 0 && unc < 5000000);
    uint64_t sched_bytes = 0, csv_bytes = 0;
    uint32_t early = 0, missing = 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct transfer *t = schedule_get(s, i);
        if (!t->bytes)
            continue;
        sched_bytes += t->bytes;
        if (!rows[i].done) {
            missing++;
            continue;
        }
        csv_bytes += rows[i].bytes;
        /* start and end come from two hosts' clocks, each mapped onto rank 0's within its
         * uncertainty (at most unc): allow twice that, +1 ns for truncation */
        uint64_t lb = earliest(s, rows, memo, i);
        if (rows[i].start + 2 * (uint64_t)unc + 1 < lb) {
            fprintf(stderr, "\ntransfer %u started at %" G_GUINT64_FORMAT " ns, its dependencies allow "
                    "%" G_GUINT64_FORMAT " ns (clock uncertainty %" G_GINT64_FORMAT " ns)\n", i,
                    rows[i].start, lb, unc);
            early++;
        }
        CU_ASSERT(rows[i].end >= rows[i].start);
    }
    CU_ASSERT_EQUAL(missing, 0);
    CU_ASSERT_EQUAL(early, 0);
    CU_ASSERT_EQUAL(csv_bytes, sched_bytes);
    CU_ASSERT_EQUAL(test_metric(lab, "bytes_landed"), (gint64)sched_bytes);
    char *st = summary_str(lab, "replay", "status");
    CU_ASSERT_STRING_EQUAL(st, "complete");
    g_free(st);
    int hosts = 0, drift = hosts_with_drift(lab, &hosts);
    CU_ASSERT(hosts > 0);
    CU_ASSERT_EQUAL(drift, hosts);
    if (drift != hosts)
        fprintf(stderr, "\n  the clocks were measured again after the run on %d of %d hosts\n", drift, hosts);
    g_free(memo);
    g_free(rows);
    schedule_free(s);
}

static void replay_scenario(const char *name, const char *extra, gboolean compare_plot)
{
    if (!have_mpirun())
        return;
    char *dir = test_tmpdir();
    char *rel = g_strconcat("replay/", name, ".ini", NULL);
    char *ini = test_data_path(rel);
    char *sched = g_build_filename(dir, "job.sched", NULL);
    char *lab = g_build_filename(dir, "lab", NULL), *sim = g_build_filename(dir, "sim", NULL);
    const char *sargs[] = { "schedule", ini, "-o", sched, NULL };
    CU_ASSERT_EQUAL_FATAL(test_rocesim(sargs, NULL, NULL, NULL), 0);
    char *log = NULL;
    char *ex = g_strdup_printf("--scenario '%s' --timeout 20s %s", ini, extra ? extra : "");
    int rc = mpirun_replay(sched, lab, ex, &log);
    if (rc != 0)
        fprintf(stderr, "\nreplay exit %d:\n%s\n", rc, log);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(log, "replay complete: "));
    if (rc == 0)
        check_complete_replay(sched, lab);
    if (rc == 0 && compare_plot) {
        const char *rargs[] = { "run", ini, "-o", sim, "--no-plots", "-q", NULL };
        CU_ASSERT_EQUAL(test_rocesim(rargs, NULL, NULL, NULL), 0);
        char *so = NULL, *se = NULL;
        const char *cargs[] = { "compare", sim, lab, NULL };
        int crc = test_rocesim(cargs, NULL, &so, &se);
        /* the verdict may go either way on a loaded machine; the folder must be readable */
        CU_ASSERT(crc == 0 || crc == 1);
        CU_ASSERT_PTR_NOT_NULL(strstr(so, "fct_p50_ns"));
        if (crc > 1)
            fprintf(stderr, "\ncompare: %s%s\n", so, se);
        g_free(so);
        g_free(se);
        const char *pargs[] = { "plot", lab, NULL };
        int prc = test_rocesim(pargs, NULL, &so, &se);
        CU_ASSERT_EQUAL(prc, 0);
        if (prc)
            fprintf(stderr, "\nplot: %s%s\n", so, se);
        g_free(so);
        g_free(se);
    }
    if (rc == 0) {
        /* the timeout used: --rto's, else the default rule (test_default_rto) */
        char *src = summary_str(lab, "replay", "rto_source");
        gint64 rto = summary_int(lab, "replay", "rto_ns");
        if (extra && strstr(extra, "--rto 20ms"))
            CU_ASSERT(!strcmp(src, "--rto") && rto == 20000000);
        if (extra && strstr(extra, "--rate 2Mbps"))
            CU_ASSERT(!strcmp(src, "default") && rto == 2306048000);
        if (!extra)
            CU_ASSERT(!strcmp(src, "default") && rto == 20000000);
        g_free(src);
        /* replay_scenario gives --timeout 20s, which a later --timeout 3s overrides */
        src = summary_str(lab, "replay", "timeout_source");
        gint64 want = extra && strstr(extra, "--timeout 3s") ? 3000000000LL : 20000000000LL;
        CU_ASSERT(!strcmp(src, "--timeout") && summary_int(lab, "replay", "timeout_ns") == want);
        g_free(src);
    }
    if (rc == 0 && extra && strstr(extra, "--drop")) {
        CU_ASSERT(test_metric(lab, "retransmitted_packets") > 0);
        CU_ASSERT(test_metric(lab, "naks_sent") > 0);
    }
    g_free(log);
    g_free(ex);
    test_rmtree(dir);
    g_free(dir);
    g_free(rel);
    g_free(ini);
    g_free(sched);
    g_free(lab);
    g_free(sim);
}

/* A counter of counters.csv: host `host`'s `name` (-1: no such row). */
static gint64 counter_of(const char *dir, const char *host, const char *name)
{
    char *p = g_build_filename(dir, "counters.csv", NULL), *text = NULL;
    gint64 v = -1;
    if (g_file_get_contents(p, &text, NULL, NULL)) {
        char **lines = g_strsplit(text, "\n", -1);
        for (char **l = lines; *l; l++) {
            char **f = g_strsplit(*l, ",", -1);
            if (g_strv_length(f) == 5 && !strcmp(f[1], host) && !strcmp(f[3], name))
                v = g_ascii_strtoll(f[4], NULL, 10);
            g_strfreev(f);
        }
        g_strfreev(lines);
    }
    g_free(text);
    g_free(p);
    return v;
}

/* The congestion-control figures summary.json has for the one data QP of rank `rank`. */
struct qp_cc {
    gint64 handled, rate_min, rate_final, line;
    char *algorithm;
};

static struct qp_cc qp_cc_of(const char *dir, int rank)
{
    struct qp_cc q = { -1, -1, -1, -1, NULL };
    char *p = g_build_filename(dir, "summary.json", NULL);
    JsonParser *jp = json_parser_new();
    if (json_parser_load_from_file(jp, p, NULL)) {
        JsonObject *r = json_object_get_object_member(json_node_get_object(json_parser_get_root(jp)), "replay");
        JsonArray *hosts = json_object_get_array_member(r, "hosts");
        JsonObject *h = json_array_get_object_element(hosts, (guint)rank);
        JsonObject *cc = json_object_has_member(h, "cc") ? json_object_get_object_member(h, "cc") : NULL;
        JsonArray *qps = cc ? json_object_get_array_member(cc, "qps") : NULL;
        if (qps && json_array_get_length(qps) == 1) {
            JsonObject *o = json_array_get_object_element(qps, 0);
            q.handled = json_object_get_int_member(o, "cnp_handled");
            q.rate_min = json_object_get_int_member(o, "rate_min_bps");
            q.rate_final = json_object_get_int_member(o, "rate_final_bps");
            q.line = json_object_get_int_member(cc, "line_rate_bps");
            q.algorithm = g_strdup(json_object_get_string_member(cc, "algorithm"));
        }
    }
    g_object_unref(jp);
    g_free(p);
    return q;
}

/* One 2 MB transfer, host 1 -> host 0 at 1 Gb/s, every datagram CE-marked by the sender
 * (--test-ce-every 1, the test-only CE source), DCQCN knobs that make the effect plain:
 * the paper's (each CNP cuts at once, 50 us between CNPs per QP) without recovery
 * (timer 1 s, byte counter off) and a 100 Mb/s floor.
 *   --cc none: the receiver's NP sends CNPs and the sender counts them (rp_cnp_handled), but
 *   the rate stays at line; at most one CNP per 50 us: cnp_sent <= fct / 50 us + 1.
 *   --cc dcqcn: each CNP halves the rate (alpha stays about 1), so a few CNPs bring it to the
 *   100 Mb/s floor, which is then its lowest rate; the FCT is longer than without CC and
 *   than twice the ideal (16 ms at line rate; 160 ms at the floor).
 * Both deliver every byte. */
static int replay_pair(const char *sched, const char *ini, const char *lab, const char *cc, char **log)
{
    char *cmd = g_strdup_printf("timeout -k 5 120 mpirun --allow-run-as-root --oversubscribe -np 2 "
                                "'%s' replay '%s' --udp-port %d --ctrl-port %d -o '%s' --scenario '%s' "
                                "--timeout 20s --cc %s --test-ce-every 1 --set nic.cc_preset=dcqcn_paper "
                                "--set dcqcn.rpg_time_reset=1s --set dcqcn.rpg_byte_reset=0B "
                                "--set dcqcn.rpg_min_rate=100Mbps 2>&1",
                                test_rocesim_bin(), sched, port_base(), port_base() + 1, lab, ini, cc);
    int rc = test_run(cmd, log);
    g_free(cmd);
    if (rc != 0)
        fprintf(stderr, "\nreplay --cc %s exit %d:\n%s\n", cc, rc, *log);
    return rc;
}

static void test_mpirun_cc_cnp(void)
{
    if (!have_mpirun())
        return;
    char *dir = test_tmpdir();
    char *ini = test_data_path("replay/pair2.ini");
    char *sched = g_build_filename(dir, "job.sched", NULL);
    char *none = g_build_filename(dir, "none", NULL), *dcqcn = g_build_filename(dir, "dcqcn", NULL);
    const char *sargs[] = { "schedule", ini, "-o", sched, NULL };
    CU_ASSERT_EQUAL_FATAL(test_rocesim(sargs, NULL, NULL, NULL), 0);
    char *log = NULL;
    int rc = replay_pair(sched, ini, none, "none", &log);
    CU_ASSERT_EQUAL(rc, 0);
    g_free(log);
    log = NULL;
    int rc2 = replay_pair(sched, ini, dcqcn, "dcqcn", &log);
    CU_ASSERT_EQUAL(rc2, 0);
    g_free(log);
    if (rc == 0 && rc2 == 0) {
        check_complete_replay(sched, none);
        check_complete_replay(sched, dcqcn);
        char *c0 = summary_str(none, "replay", "cc"), *c1 = summary_str(dcqcn, "replay", "cc");
        CU_ASSERT_STRING_EQUAL(c0, "none");
        CU_ASSERT_STRING_EQUAL(c1, "dcqcn");
        g_free(c0);
        g_free(c1);
        /* without CC: counted, nothing changes */
        struct qp_cc n = qp_cc_of(none, 1), d = qp_cc_of(dcqcn, 1);
        gint64 fct_none = test_metric(none, "fct_p50_ns"), fct_dcqcn = test_metric(dcqcn, "fct_p50_ns");
        gint64 sent = test_metric(none, "cnp_sent");
        CU_ASSERT(sent > 0);
        CU_ASSERT(n.handled > 0 && n.handled <= sent);
        CU_ASSERT_EQUAL(counter_of(none, "host1", "rp_cnp_handled"), n.handled);
        CU_ASSERT_EQUAL(counter_of(none, "host0", "np_cnp_sent"), sent);
        CU_ASSERT(sent <= fct_none / 50000 + 1);
        CU_ASSERT(test_metric(none, "ecn_marked") > sent); /* every datagram CE, CNPs moderated */
        CU_ASSERT_EQUAL(n.line, 1000000000);
        CU_ASSERT_EQUAL(n.rate_min, n.line);
        CU_ASSERT_EQUAL(n.rate_final, n.line);
        /* with DCQCN: the CNPs cut the rate to the floor, the transfer takes longer */
        CU_ASSERT(d.handled > 0);
        CU_ASSERT_EQUAL(counter_of(dcqcn, "host1", "rp_cnp_handled"), d.handled);
        CU_ASSERT_EQUAL(d.rate_min, 100000000);
        CU_ASSERT(d.rate_final <= d.line);
        CU_ASSERT(fct_dcqcn > fct_none);
        CU_ASSERT(fct_dcqcn > 2 * 16000000); /* 2 MB at 1 Gb/s: 16 ms before headers */
        if (!(fct_dcqcn > fct_none))
            fprintf(stderr, "\nfct with dcqcn %" G_GINT64_FORMAT " ns, without %" G_GINT64_FORMAT " ns\n",
                    fct_dcqcn, fct_none);
        g_free(n.algorithm);
        g_free(d.algorithm);
    }
    test_rmtree(dir);
    g_free(dir);
    g_free(ini);
    g_free(sched);
    g_free(none);
    g_free(dcqcn);
}

static void test_mpirun_ring_allreduce(void) { replay_scenario("ring4", NULL, TRUE); }
static void test_mpirun_incast(void) { replay_scenario("incast4", NULL, TRUE); }

/* Two ranks started with mpirun's MPMD form, each in a folder of its own (-wdir) as on two
 * machines: `rocesim replay job.sched EXTRA` in a and b. */
static int replay_two_dirs(const char *a, const char *b, const char *extra_b, const char *lab, char **log)
{
    char *bin = g_canonicalize_filename(test_rocesim_bin(), NULL);
    char *cmd = g_strdup_printf("timeout -k 5 120 mpirun --allow-run-as-root --oversubscribe "
                                "-np 1 -wdir '%s' '%s' replay job.sched --udp-port %d --ctrl-port %d -o '%s' "
                                "--timeout 20s : -np 1 -wdir '%s' '%s' replay job.sched --udp-port %d --ctrl-port %d "
                                "-o '%s' --timeout 20s %s 2>&1",
                                a, bin, port_base(), port_base() + 1, lab, b, bin, port_base(), port_base() + 1, lab,
                                extra_b ? extra_b : "");
    int rc = test_run(cmd, log);
    g_free(cmd);
    g_free(bin);
    return rc;
}

/* Each rank reads the schedule and its options on its own machine. Rank 1 with a copy whose
 * one transfer is a byte longer made a replay "complete" with 2000001 of 2000000 bytes; now
 * the ranks compare what they read before any traffic: exit 2, the rank and the part named,
 * no folder. The same files and options replay. */
static void test_mpirun_ranks_read_one_schedule(void)
{
    if (!have_mpirun())
        return;
    char *dir = test_tmpdir();
    char *ini = test_data_path("replay/pair2.ini");
    char *a = g_build_filename(dir, "a", NULL), *b = g_build_filename(dir, "b", NULL);
    char *sa = g_build_filename(a, "job.sched", NULL), *sb = g_build_filename(b, "job.sched", NULL);
    char *lab = g_build_filename(dir, "lab", NULL);
    CU_ASSERT_EQUAL_FATAL(g_mkdir_with_parents(a, 0755), 0);
    CU_ASSERT_EQUAL_FATAL(g_mkdir_with_parents(b, 0755), 0);
    const char *sargs[] = { "schedule", ini, "-o", sa, NULL };
    CU_ASSERT_EQUAL_FATAL(test_rocesim(sargs, NULL, NULL, NULL), 0);
    gchar *text = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(sa, &text, NULL, NULL));
    char *row = strstr(text, "\n0 1 0 2000000 "); /* pair2.ini: one 2 MB transfer, host 1 to 0 */
    CU_ASSERT_PTR_NOT_NULL_FATAL(row);
    CU_ASSERT_TRUE_FATAL(g_file_set_contents(sb, text, -1, NULL));
    char *log = NULL;
    int rc = replay_two_dirs(a, b, "--rate 10Gbps", lab, &log);
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT_PTR_NOT_NULL(log && strstr(log, "rank 0: MPI rank 1's options differ from rank 0's"));
    CU_ASSERT_FALSE(g_file_test(lab, G_FILE_TEST_EXISTS));
    g_free(log);
    row[12] = '1'; /* 2000000 -> 2000001 */
    CU_ASSERT_TRUE_FATAL(g_file_set_contents(sb, text, -1, NULL));
    rc = replay_two_dirs(a, b, NULL, lab, &log);
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT_PTR_NOT_NULL(log && strstr(log, "rank 0: MPI rank 1's schedule differs from rank 0's (each rank "
                                              "reads job.sched on its own machine"));
    CU_ASSERT_FALSE(g_file_test(lab, G_FILE_TEST_EXISTS));
    if (rc != 2)
        fprintf(stderr, "\nreplay of two schedules: exit %d:\n%s\n", rc, log);
    g_free(log);
    rc = replay_two_dirs(a, a, NULL, lab, &log);
    CU_ASSERT_EQUAL(rc, 0);
    if (rc == 0)
        CU_ASSERT_EQUAL(test_metric(lab, "bytes_landed"), 2000000);
    g_free(log);
    g_free(text);
    g_free(lab);
    g_free(sb);
    g_free(sa);
    g_free(b);
    g_free(a);
    g_free(ini);
    test_rmtree(dir);
    g_free(dir);
}

/* --subset: hosts 0, 1 and 3 of the 4-host incast (3 senders -> host 0) on 3 ranks. By the
 * rule of replay/subset.h: t0 (1 -> 0) and t2 (3 -> 0) run, t1 (2 -> 0) is a marker at host 0
 * (markers have no transfers.csv row); the results keep the schedule's ids and host numbers. Without --subset the map is refused. */
static void test_mpirun_subset(void)
{
    if (!have_mpirun())
        return;
    char *dir = test_tmpdir();
    char *ini = test_data_path("replay/incast4.ini");
    char *sched = g_build_filename(dir, "job.sched", NULL), *lab = g_build_filename(dir, "lab", NULL);
    const char *sargs[] = { "schedule", ini, "-o", sched, NULL };
    CU_ASSERT_EQUAL_FATAL(test_rocesim(sargs, NULL, NULL, NULL), 0);
    char *map = write_file(dir, "lab.map", "host 0 a - - 127.0.0.1 0\nhost 1 b - - 127.0.0.2 0\n"
                                           "host 3 d - - 127.0.0.4 0\n");
    char *cmd = g_strdup_printf("timeout -k 5 120 mpirun --allow-run-as-root --oversubscribe -np 3 "
                                "'%s' replay '%s' --hosts '%s' %%s --udp-port %d --ctrl-port %d "
                                "--timeout 20s -o '%s' 2>&1", test_rocesim_bin(), sched, map,
                                port_base(), port_base() + 1, lab);
    char *with = g_strdup_printf(cmd, "--subset"), *without = g_strdup_printf(cmd, "");
    char *log = NULL;
    int rc = test_run(without, &log);
    CU_ASSERT_NOT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL(log && strstr(log, "--subset"));
    CU_ASSERT_FALSE(g_file_test(lab, G_FILE_TEST_EXISTS));
    g_free(log);
    rc = test_run(with, &log);
    if (rc)
        fprintf(stderr, "\nreplay --subset exit %d:\n%s\n", rc, log);
    CU_ASSERT_EQUAL(rc, 0);
    if (rc == 0) {
        CU_ASSERT_EQUAL(test_metric(lab, "bytes_landed"), 2 * 256000);
        CU_ASSERT_EQUAL(test_metric(lab, "bytes_scheduled"), 2 * 256000);
        char *st = summary_str(lab, "replay", "status");
        CU_ASSERT_STRING_EQUAL(st, "complete");
        g_free(st);
        char *tp = g_build_filename(lab, "transfers.csv", NULL), *body = NULL;
        CU_ASSERT_FATAL(g_file_get_contents(tp, &body, NULL, NULL));
        CU_ASSERT_PTR_NOT_NULL(strstr(body, "\n0,1,0,256000,"));
        CU_ASSERT_PTR_NULL(strstr(body, "\n1,")); /* a marker has no row */
        CU_ASSERT_PTR_NOT_NULL(strstr(body, "\n2,3,0,256000,"));
        g_free(body);
        g_free(tp);
    }
    g_free(log);
    g_free(with);
    g_free(without);
    g_free(cmd);
    g_free(map);
    test_rmtree(dir);
    g_free(dir);
    g_free(ini);
    g_free(sched);
    g_free(lab);
}

/* The subset rule on a hand-made schedule: hosts 0, 1, 3 of 4 become ranks 0, 1, 2. */
static void test_schedule_subset(void)
{
    char *dir = test_tmpdir();
    char *p = write_file(dir, "s.sched", "# rocesim-schedule v2\nmeta hosts 4\nmeta mtu 1024\n"
                         "meta host_rate_bps 1000000000\nmeta dscp 0,8,16,24,32,40,48,56\n"
                         "qp 0 0 1 3 49668\nqp 1 1 2 3 52000\nqp 2 3 0 3 65535\n"
                         "0 0 1 100000 3 0 0 - - - 0\n"
                         "1 1 2 50000 3 1 2000000 0 - - 0\n"
                         "2 3 0 70000 3 2 0 1 - - 0\n");
    GError *e = NULL;
    struct schedule *s = schedule_read(p, 0, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    const guint8 mapped[4] = { 1, 1, 0, 1 };
    struct schedule_subset sub;
    CU_ASSERT_FATAL(schedule_subset(s, 4, mapped, &sub, &e));
    CU_ASSERT_EQUAL(sub.ranks, 3);
    CU_ASSERT(sub.rank_host[0] == 0 && sub.rank_host[1] == 1 && sub.rank_host[2] == 3);
    CU_ASSERT_EQUAL(sub.run->meta.hosts, 3);
    const struct transfer *t0 = schedule_get(sub.run, 0), *t1 = schedule_get(sub.run, 1),
                          *t2 = schedule_get(sub.run, 2);
    CU_ASSERT(t0->src == 0 && t0->dst == 1 && t0->bytes == 100000 && t0->qp == 0);
    /* 1 -> 2: host 2 is not there: a marker at host 1, its delay and dependency kept */
    CU_ASSERT(t1->src == 1 && t1->dst == 1 && t1->bytes == 0 && t1->qp == SCHEDULE_NO_QP);
    CU_ASSERT(t1->delay == 2000000 && t1->ndeps == 1 && schedule_deps(sub.run, t1)[0] == 0);
    /* 3 -> 0 is rank 2 -> rank 0, on the second QP left, with its own UDP source port */
    CU_ASSERT(t2->src == 2 && t2->dst == 0 && t2->bytes == 70000 && t2->qp == 1);
    CU_ASSERT(t2->ndeps == 1 && schedule_deps(sub.run, t2)[0] == 1);
    CU_ASSERT_EQUAL_FATAL(sub.run->qps->len, 2);
    const struct sched_qp *q1 = &g_array_index(sub.run->qps, struct sched_qp, 1);
    CU_ASSERT(q1->src == 2 && q1->dst == 0 && q1->sport == 65535 && q1->prio == 3);
    /* the results' copy keeps the schedule's numbering */
    CU_ASSERT(schedule_get(sub.out, 2)->src == 3 && schedule_get(sub.out, 2)->dst == 0);
    CU_ASSERT(schedule_get(sub.out, 1)->src == 1 && schedule_get(sub.out, 1)->bytes == 0);
    schedule_subset_clear(&sub);
    const guint8 none[4] = { 0 };
    CU_ASSERT_FALSE(schedule_subset(s, 4, none, &sub, &e));
    CU_ASSERT(e && strstr(e->message, "names none of the schedule's 4 hosts"));
    g_clear_error(&e);
    /* a map with a hole: refused as a full map, read as a subset */
    char *mp = write_file(dir, "lab.map", "host 0 a - - 127.0.0.1 0\nhost 2 c - - 127.0.0.3 0\n");
    CU_ASSERT_PTR_NULL(hostmap_read(mp, &e));
    CU_ASSERT(e && strstr(e->message, "schedule host 1 has no line"));
    g_clear_error(&e);
    struct hostmap *m = hostmap_read_subset(mp, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT(m->n == 3 && m->mapped[0] && !m->mapped[1] && m->mapped[2]);
    hostmap_free(m);
    g_free(mp);
    schedule_free(s);
    g_free(p);
    test_rmtree(dir);
    g_free(dir);
}
/* The default retransmission timeout (udp_default_rto_ns), by hand: host 1 has three QPs in
 * (0->1 twice, on two tags, and 2->1) and one out (1->3), so 4 QPs; 1024-byte packets make
 * frames of 1024 + 14 (Ethernet) + 20 (IPv4) + 8 (UDP) + 12 (BTH) + 16 (RETH) + 4 (immediate)
 * + 4 (ICRC) + 4 (FCS) + 20 (preamble, gap) = 1126 bytes on the wire. */
static void test_default_rto(void)
{
    struct schedule *s = schedule_new();
    const struct { uint32_t src, dst, qp; } xfers[] = { { 0, 1, 0 }, { 0, 1, 1 }, { 2, 1, 0 }, { 1, 3, 0 } };
    for (size_t i = 0; i < G_N_ELEMENTS(xfers); i++) {
        struct transfer t = { .src = xfers[i].src, .dst = xfers[i].dst, .bytes = 100000, .prio = 3, .qp = xfers[i].qp,
                              .job = SCHEDULE_NO_JOB, .coll = SCHEDULE_NO_JOB };
        schedule_add(s, &t, NULL, 0);
    }
    /* 100 Mbit/s: 2 x 4 x 64 x 1126 x 8 / 1e8 s = 46.12096 ms */
    CU_ASSERT_EQUAL(udp_default_rto_ns(s, 1024, 64, 100000000), 46120960);
    /* a window of 16: 11.53 ms, under the floor */
    CU_ASSERT_EQUAL(udp_default_rto_ns(s, 1024, 16, 100000000), UDP_RTO_FLOOR_NS);
    CU_ASSERT_EQUAL(UDP_RTO_FLOOR_NS, 20000000);
    /* 1 Gbit/s: 4.6 ms, the floor; unpaced: the floor */
    CU_ASSERT_EQUAL(udp_default_rto_ns(s, 1024, 64, 1000000000), UDP_RTO_FLOOR_NS);
    CU_ASSERT_EQUAL(udp_default_rto_ns(s, 1024, 64, 0), UDP_RTO_FLOOR_NS);
    /* 4096-byte packets at 10 Mbit/s: 2 x 4 x 64 x 4198 x 8 / 1e7 s = 1.7195008 s */
    CU_ASSERT_EQUAL(udp_default_rto_ns(s, 4096, 64, 10000000), 1719500800);
    schedule_free(s);
}

/* The default --timeout (replay_default_timeout_ns), by hand: host 1 receives 2 x 1 GB from
 * host 0 and 1 GB from host 2, and sends 0.5 GB to host 3: 3.5e9 bytes. */
static void test_default_timeout(void)
{
    struct schedule *s = schedule_new();
    const struct { uint32_t src, dst; uint64_t bytes; } xfers[] = {
        { 0, 1, 1000000000 }, { 0, 1, 1000000000 }, { 2, 1, 1000000000 }, { 1, 3, 500000000 }, { 3, 3, 0 } };
    for (size_t i = 0; i < G_N_ELEMENTS(xfers); i++) {
        struct transfer t = { .src = xfers[i].src, .dst = xfers[i].dst, .bytes = xfers[i].bytes, .prio = 3,
                              .job = SCHEDULE_NO_JOB, .coll = SCHEDULE_NO_JOB };
        schedule_add(s, &t, NULL, 0);
    }
    /* 1 Gbit/s: 2 x 3.5e9 x 8 / 1e9 s = 56 s */
    CU_ASSERT_EQUAL(replay_default_timeout_ns(s, 1000000000), 56000000000LL);
    /* 10 Gbit/s: 5.6 s, under the floor of 30 s; unpaced: the floor */
    CU_ASSERT_EQUAL(replay_default_timeout_ns(s, 10000000000ULL), REPLAY_TIMEOUT_FLOOR_NS);
    CU_ASSERT_EQUAL(REPLAY_TIMEOUT_FLOOR_NS, 30000000000LL);
    CU_ASSERT_EQUAL(replay_default_timeout_ns(s, 0), REPLAY_TIMEOUT_FLOOR_NS);
    schedule_free(s);
}

/* 2% of data packets lost on the way: NAKs and timeouts, go-back-N, everything lands */
static void test_mpirun_drops_recovered(void) { replay_scenario("ring4", "--drop 0.02 --rto 20ms", FALSE); }

/* ring4 paced at 2 Mb/s: 96 transfers of 64 KiB, about 0.57 s each, 7 s in all (measured),
 * past the control plane's setup deadline (the larger of --timeout and 5 s), while each
 * transfer ends well inside --timeout 3s. The clocks' second estimate after the run was
 * bounded by that setup deadline and failed at once after such a run; it gets time of its
 * own now. Without --rto: the default must not time out what is only paced slowly. Each host
 * has 4 QPs (2 channels, one QP out and one in each), so 2 x 4 x 64 x 1126 x 8 / 2e6 s. */
static void test_mpirun_longer_than_setup_deadline(void)
{
    replay_scenario("ring4", "--rate 2Mbps --timeout 3s", FALSE);
}

/* The ranks read their NIC's DCQCN knobs (here a fixture tree given as --sysfs-net, the map
 * naming netdev ens1 for every host): summary.json records them and the folder holds a
 * scenario fragment per host that `rocesim check` accepts. */
static void test_mpirun_knobs_fixture(void)
{
    if (!have_mpirun())
        return;
    char *dir = test_tmpdir();
    const char *knobs[][2] = { { "rpg_ai_rate", "9" }, { "rpg_time_reset", "250" }, { "rpg_gd", "11" },
                               { "clamp_tgt_rate", "1" } };
    for (size_t i = 0; i < G_N_ELEMENTS(knobs); i++) {
        char *d = g_build_filename(dir, "net/ens1/ecn/roce_rp", NULL);
        g_mkdir_with_parents(d, 0755);
        char *f = g_build_filename(d, knobs[i][0], NULL);
        CU_ASSERT_FATAL(g_file_set_contents(f, knobs[i][1], -1, NULL));
        g_free(f);
        g_free(d);
    }
    GString *m = g_string_new(NULL);
    for (int h = 0; h < 4; h++)
        g_string_append_printf(m, "host %d localhost - ens1 127.0.0.%d 0\n", h, h + 1);
    char *map = write_file(dir, "lab.map", m->str);
    g_string_free(m, TRUE);
    char *sched = write_file(dir, "s.sched", "# rocesim-schedule v1\n0 0 1 10000 3 0 0 - - - 0\n"
                                             "1 2 3 10000 3 0 0 0 - - 0\n");
    char *lab = g_build_filename(dir, "lab", NULL), *net = g_build_filename(dir, "net", NULL);
    /* without --timeout: a v1 schedule has no host rate, so the default is the floor */
    char *extra = g_strdup_printf("--hosts '%s' --sysfs-net '%s'", map, net);
    char *log = NULL;
    int rc = mpirun_replay(sched, lab, extra, &log);
    if (rc)
        fprintf(stderr, "\n%s\n", log);
    CU_ASSERT_EQUAL(rc, 0);
    char *tsrc = summary_str(lab, "replay", "timeout_source");
    CU_ASSERT(!strcmp(tsrc, "default") && summary_int(lab, "replay", "timeout_ns") == 30000000000LL);
    g_free(tsrc);
    char *frag = NULL, *fp = g_build_filename(lab, "nic-knobs-host2.ini", NULL);
    CU_ASSERT(g_file_get_contents(fp, &frag, NULL, NULL));
    CU_ASSERT(frag && strstr(frag, "rpg_ai_rate = 9Mbps") && strstr(frag, "rpg_time_reset = 250us") &&
              strstr(frag, "clamp_tgt_rate = on"));
    char *sp = g_build_filename(lab, "summary.json", NULL), *sum = NULL;
    CU_ASSERT(g_file_get_contents(sp, &sum, NULL, NULL) && strstr(sum, "\"layout\" : \"mlnx_ofed\""));
    if (frag) {
        char *ini = g_strconcat("[scenario]\nname = lab\n[topology]\nleaves = 1\nspines = 1\nhosts_per_leaf = 4\n"
                                "[workload w]\nkind = incast\nsenders = 1\nreceiver = 0\nsize = 1MB\n", frag, NULL);
        char *ip = write_file(dir, "lab.ini", ini);
        const char *args[] = { "check", ip, NULL };
        char *so = NULL;
        CU_ASSERT_EQUAL(test_rocesim(args, NULL, &so, NULL), 0);
        CU_ASSERT(so && strstr(so, "rpg_ai_rate = 9Mbps"));
        g_free(so);
        g_free(ip);
        g_free(ini);
    }
    g_free(sum);
    g_free(sp);
    g_free(frag);
    g_free(fp);
    g_free(log);
    g_free(extra);
    test_rmtree(dir);
    g_free(dir);
    g_free(map);
    g_free(sched);
    g_free(lab);
    g_free(net);
}

static simtime_t ideal_1ns_per_byte(const void *ctx, uint32_t a, uint32_t b, uint64_t bytes)
{
    (void)ctx;
    (void)a;
    (void)b;
    return bytes * 1000; /* ps */
}

/* Rank 0's folder from hand-made reports: two hosts whose clocks differ by 500 ns. Schedule
 * time 0 is local 1000 on rank 0 and 1500 on rank 1; transfer 0 (0 -> 1) starts at rank-0
 * local 3000 (2000 ns) and lands at rank-1 local 8500 (7000 ns): FCT 5000 ns. Transfer 1 (1 -> 0)
 * started (rank-1 local 9500: 8000 ns) but never landed: the run is incomplete. */
static GBytes *hand_report(uint32_t rank, int64_t t0, const struct replay_record *rec, size_t n)
{
    struct replay_report_hdr h = { .rank = rank, .complete = 1, .local_t0 = t0 };
    h.stats.rx_bytes = rank == 1 ? 4096 : 0;
    GByteArray *b = g_byte_array_new();
    g_byte_array_append(b, (const guint8 *)&h, sizeof h);
    g_byte_array_append(b, (const guint8 *)rec, (guint)(n * sizeof *rec));
    return g_byte_array_free_to_bytes(b);
}

static void test_results_time_base(void)
{
    char *dir = test_tmpdir();
    char *sp = write_file(dir, "two.sched", "# rocesim-schedule v1\n0 0 1 4096 3 0 0 - - - 0\n1 1 0 4096 3 0 0 - - - 0\n");
    GError *e = NULL;
    struct schedule *s = schedule_read(sp, 0, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    struct replay_record r0[] = { { 0, REC_START, 3000, 0 } };
    struct replay_record r1[] = { { 0, REC_END, 8500, 4096 }, { 1, REC_START, 9500, 0 } };
    GBytes *reports[2] = { hand_report(0, 1000, r0, 1), hand_report(1, 1500, r1, 2) };
    int64_t off[2] = { 0, 500 }, half[2] = { 0, 20 }, at[2] = { 0, 0 };
    struct replay_clock k = { off, half, at, NULL, NULL, NULL };
    struct in_addr addr[2] = { { htonl(0x7F000001) }, { htonl(0x7F000002) } };
    char *out = g_build_filename(dir, "lab", NULL);
    struct replay_config c = { .sched = s, .schedule_path = sp, .size = 2, .addr = addr, .mtu = 1024,
                               .out_dir = out, .transport = "udp", .ideal = NULL };
    /* the ideal: 1 ns a byte, 4096 ns, so the slowdown is 5000 / 4096 = 1.2207 */
    c.ideal = ideal_1ns_per_byte;
    CU_ASSERT_FATAL(replay_write_results(&c, reports, &k, FALSE, "rank 1: test", NULL, &e));
    char *csv = NULL, *p = g_build_filename(out, "transfers.csv", NULL);
    CU_ASSERT_FATAL(g_file_get_contents(p, &csv, NULL, NULL));
    CU_ASSERT_PTR_NOT_NULL(strstr(csv, "\n0,0,1,4096,3,2000,7000,5000,4096,1.2207\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(csv, "\n1,1,0,4096,3,8000,,,4096,\n"));
    char *st = summary_str(out, "replay", "status");
    CU_ASSERT_STRING_EQUAL(st, "incomplete");
    g_free(st);
    CU_ASSERT_EQUAL(test_metric(out, "bytes_landed"), 4096);
    CU_ASSERT_EQUAL(test_metric(out, "transfers_completed"), 1);
    CU_ASSERT_EQUAL(summary_int(out, "replay", "clock_uncertainty_ns"), 20);
    g_free(csv);
    g_free(p);
    g_bytes_unref(reports[0]);
    g_bytes_unref(reports[1]);
    schedule_free(s);
    test_rmtree(dir);
    g_free(out);
    g_free(sp);
    g_free(dir);
}

/* ---- failures: four ranks started by hand (the launcher's variables), one killed ---- */

static GPid spawn_rank(const char *sched, const char *out, int rank, const char *extra, int *err_fd)
{
    char *r = g_strdup_printf("%d", rank);
    char *cmd = g_strdup_printf("OMPI_COMM_WORLD_RANK=%d OMPI_COMM_WORLD_SIZE=4 exec '%s' replay '%s' "
                                "--udp-port %d --ctrl-port %d -o '%s' %s",
                                rank, test_rocesim_bin(), sched, port_base() + 2, port_base() + 3,
                                out, extra);
    const gchar *argv[] = { "/bin/sh", "-c", cmd, NULL };
    GPid pid = 0;
    GError *e = NULL;
    CU_ASSERT_FATAL(g_spawn_async_with_pipes(NULL, (gchar **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                                             NULL, NULL, &pid, NULL, NULL, err_fd, &e));
    g_free(cmd);
    g_free(r);
    return pid;
}

/* Waits for pid at most `secs`; returns its exit status, or -1 (then kills it). */
static int wait_bounded(GPid pid, double secs)
{
    gint64 until = g_get_monotonic_time() + (gint64)(secs * 1e6);
    int st;
    while (g_get_monotonic_time() < until) {
        if (waitpid(pid, &st, WNOHANG) == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        g_usleep(20000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return -1;
}

static char *read_all(int fd)
{
    GString *g = g_string_new(NULL);
    char b[4096];
    ssize_t n;
    while ((n = read(fd, b, sizeof b)) > 0)
        g_string_append_len(g, b, n);
    close(fd);
    return g_string_free(g, FALSE);
}

/* A long, paced schedule; `sig` goes to rank 2 once the run is under way. SIGKILL: the others
 * see its control connection close at once. SIGSTOP: it is alive but silent, so the transfers
 * to it are not completed within --timeout. Either way every other rank exits 1 within the
 * timeout (plus the grace rank 0 gives for reports), and rank 0 writes an incomplete folder
 * that names rank 2. */
static void rank_failure(int sig, const char *extra, const char *needle)
{
    char *dir = test_tmpdir();
    /* 4 hosts, each sends 8 MB to the next at 100 Mb/s: ~0.7 s of data */
    char *sched = write_file(dir, "long.sched",
                             "# rocesim-schedule v1\n"
                             "0 0 1 8000000 3 0 0 - - - 0\n1 1 2 8000000 3 0 0 - - - 0\n"
                             "2 2 3 8000000 3 0 0 - - - 0\n3 3 0 8000000 3 0 0 - - - 0\n");
    char *out = g_build_filename(dir, "lab", NULL);
    GPid pid[4];
    int efd[4];
    for (int r = 0; r < 4; r++)
        pid[r] = spawn_rank(sched, out, r, extra, &efd[r]);
    g_usleep(400000);
    kill(pid[2], sig);
    gint64 t0 = g_get_monotonic_time();
    int rc[4] = { 0 };
    for (int r = 0; r < 4; r++)
        if (r != 2)
            rc[r] = wait_bounded(pid[r], 15);
    double took = (double)(g_get_monotonic_time() - t0) / 1e6;
    if (sig == SIGSTOP)
        kill(pid[2], SIGCONT);
    rc[2] = wait_bounded(pid[2], sig == SIGSTOP ? 10 : 5);
    if (sig == SIGTERM)
        CU_ASSERT_EQUAL(rc[2], 1); /* it stopped itself, it was not killed */
    char *err0 = read_all(efd[0]);
    for (int r = 1; r < 4; r++)
        g_free(read_all(efd[r]));
    for (int r = 0; r < 4; r++)
        if (r != 2) {
            if (rc[r] != 1)
                fprintf(stderr, "\nrank %d exit %d; rank 0 said: %s\n", r, rc[r], err0);
            CU_ASSERT_EQUAL(rc[r], 1);
        }
    /* within the 2 s timeout, the 5 s at most that rank 0 waits for reports, and slack */
    CU_ASSERT(took < 9);
    char *st = summary_str(out, "replay", "status");
    CU_ASSERT_STRING_EQUAL(st, "incomplete");
    g_free(st);
    char *why = summary_str(out, "replay", "reason");
    if (!strstr(why, needle))
        fprintf(stderr, "\nexpected the reason to say '%s', got '%s'\n", needle, why);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, needle));
    g_free(why);
    CU_ASSERT_EQUAL(test_metric(out, "complete"), 0);
    g_free(err0);
    test_rmtree(dir);
    g_free(sched);
    g_free(out);
    g_free(dir);
}

static void test_rank_killed(void)
{
    rank_failure(SIGKILL, "--timeout 2s --rate 100Mbps --mtu 1024", "rank 2 went away");
}
/* With the RC retry budget (7 x rto) longer than --timeout, the timeout is what stops it */
static void test_rank_hangs(void)
{
    rank_failure(SIGSTOP, "--timeout 2s --rto 1s --rate 100Mbps --mtu 1024",
                 "rank 1: transfer 1 (host 1 -> host 2, 8000000 bytes) not completed within the timeout of 2.000 s");
}
/* ... and with a short rto the transport gives up first, as a NIC's retry counter does */
static void test_rank_hangs_retry_exceeded(void)
{
    rank_failure(SIGSTOP, "--timeout 2s --rto 20ms --rate 100Mbps --mtu 1024",
                 "rank 1: transfer 1 (host 1 -> host 2, 8000000 bytes): transport retry counter exceeded");
}

/* SIGTERM (as mpirun sends when a job is cancelled) behaves like a timeout: the rank stops,
 * says why, and everyone writes what they have */
static void test_rank_terminated(void)
{
    rank_failure(SIGTERM, "--timeout 2s --rate 100Mbps --mtu 1024", "rank 2: stopped by a signal");
}

static CU_TestInfo tests[] = {
    { "segmentation rule (32-bit RETH, 2^31 messages)", test_segmentation },
    { "24-bit PSN arithmetic", test_psn_wrap },
    { "clock offset interpolation", test_clock_interpolation },
    { "WRITE WITH IMMEDIATE frames", test_imm_frames },
    { "lab map file", test_hostmap },
    { "subset of a schedule (--subset)", test_schedule_subset },
    { "verbs device selection (fake table)", test_verbs_open_fake },
    { "verbs QP attributes and preflight", test_verbs_plan },
    { "CQE ticks: wrap and host time", test_tick_clock },
    { "results on one time base from hand-made reports", test_results_time_base },
    { "no RDMA device: exit 3, nothing written", test_no_device },
    { "bad input: exit 2 with the reason", test_bad_input },
    { "mpirun -np 4: ring AllReduce", test_mpirun_ring_allreduce },
    { "mpirun -np 3 --subset: 3 of the incast's 4 hosts", test_mpirun_subset },
    { "mpirun MPMD: ranks that read another schedule or options: exit 2, named", test_mpirun_ranks_read_one_schedule },
    { "mpirun -np 4: incast", test_mpirun_incast },
    { "mpirun -np 4: packet loss recovered", test_mpirun_drops_recovered },
    { "mpirun -np 4: a replay longer than the setup deadline measures the clocks again", test_mpirun_longer_than_setup_deadline },
    { "mpirun -np 2: CE marks, CNPs, DCQCN vs no CC", test_mpirun_cc_cnp },
    { "default retransmission timeout: a window of every QP of the busiest host", test_default_rto },
    { "default --timeout: all the busiest host sends and receives", test_default_timeout },
    { "mpirun -np 4: NIC knobs into summary.json and fragments", test_mpirun_knobs_fixture },
    { "a rank killed: the others stop, incomplete", test_rank_killed },
    { "a rank hung: timeout, incomplete", test_rank_hangs },
    { "a rank hung: retry exceeded, incomplete", test_rank_hangs_retry_exceeded },
    { "SIGTERM: the rank stops cleanly, incomplete", test_rank_terminated },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("replay", tests)
