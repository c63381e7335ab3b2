/* The progress line of a run on a terminal (sim/progress.h) and the share of the work done
 * it shows (net_work_done). Expected values are worked out by hand: the share done is the
 * larger of simulated time over stop and the model's share, the time left is
 * elapsed x (1 - done) / done; the incast moves 16 x 4 MB = 64,000,000 payload bytes, each
 * counted once however often it crossed the wire. */
#include <string.h>
#include "models/net.h"
#include "sim/progress.h"
#include "tests/test_fabric.h"
#include "tests/testutil.h"

static void test_share_done(void)
{
    struct progress_view v = { .now = 250 * PS_PER_MS, .stop = 1000 * PS_PER_MS, .work = -1 };
    CU_ASSERT_DOUBLE_EQUAL(progress_done(&v), 0.25, 1e-12);
    v.work = 0.6; /* the transfers are further along than the clock */
    CU_ASSERT_DOUBLE_EQUAL(progress_done(&v), 0.6, 1e-12);
    v.work = 0.1; /* the clock is: the run ends at the stop first */
    CU_ASSERT_DOUBLE_EQUAL(progress_done(&v), 0.25, 1e-12);
    v.work = 1.3; /* never past the end */
    CU_ASSERT_DOUBLE_EQUAL(progress_done(&v), 1.0, 1e-12);
    v.now = 3000 * PS_PER_MS;
    v.work = -1;
    CU_ASSERT_DOUBLE_EQUAL(progress_done(&v), 1.0, 1e-12);
    v.stop = SIMTIME_NEVER; /* neither tells */
    CU_ASSERT(progress_done(&v) < 0);
    v.stop = 0;
    CU_ASSERT(progress_done(&v) < 0);
    v.work = 0.5;
    CU_ASSERT_DOUBLE_EQUAL(progress_done(&v), 0.5, 1e-12);
}

static void test_time_left(void)
{
    struct progress_view v = { .stop = SIMTIME_NEVER, .work = 0.25, .elapsed_s = 10 };
    CU_ASSERT_DOUBLE_EQUAL(progress_left_s(&v), 30.0, 1e-9); /* 10 x 0.75 / 0.25 */
    v.work = 0.1;
    v.elapsed_s = 100;
    CU_ASSERT_DOUBLE_EQUAL(progress_left_s(&v), 900.0, 1e-9);
    v.work = 1.0;
    CU_ASSERT_DOUBLE_EQUAL(progress_left_s(&v), 0.0, 1e-9);
    v.work = 0.004; /* too early to tell */
    CU_ASSERT(progress_left_s(&v) < 0);
    v.work = 0.5;
    v.elapsed_s = 0.5;
    CU_ASSERT(progress_left_s(&v) < 0);
    v.work = -1;
    v.elapsed_s = 100;
    CU_ASSERT(progress_left_s(&v) < 0);
}

static void test_line(void)
{
    char buf[160];
    struct progress_view v = { .now = 1234567000, .stop = SIMTIME_NEVER, .work = 0.25, .elapsed_s = 10,
                               .events_per_s = 6.2e6, .workers = 2 };
    progress_format(buf, sizeof buf, &v);
    CU_ASSERT_STRING_EQUAL(buf, "  sim   1234.567 us   25.0% done  ~30 s left    6.20 M events/s  2 workers");
    /* the model cannot tell: the share of the stop, no rate, one worker */
    v = (struct progress_view){ .now = PS_PER_MS, .stop = PS_PER_S, .work = -1, .elapsed_s = 0.3,
                                .events_per_s = -1, .workers = 1 };
    progress_format(buf, sizeof buf, &v);
    CU_ASSERT_STRING_EQUAL(buf, "  sim   1000.000 us    0.1% of stop");
    /* minutes and hours */
    v = (struct progress_view){ .stop = SIMTIME_NEVER, .work = 0.1, .elapsed_s = 100, .events_per_s = -1 };
    progress_format(buf, sizeof buf, &v);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "  ~15:00 left"));
    v.work = 0.5;
    v.elapsed_s = 4000;
    progress_format(buf, sizeof buf, &v);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "  ~1:06:40 left"));
    v.elapsed_s = 59.4;
    progress_format(buf, sizeof buf, &v);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "  ~59 s left"));
    v.work = 0.99; /* 59.4 x 0.01 / 0.99 = 0.6 s rounds to 1 */
    progress_format(buf, sizeof buf, &v);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "  ~1 s left"));
    v.work = 0.995; /* 0.3 s */
    progress_format(buf, sizeof buf, &v);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "  <1 s left"));
    /* a short buffer gets a terminated prefix */
    char small[12];
    progress_format(small, sizeof small, &v);
    CU_ASSERT_STRING_EQUAL(small, "  sim      ");
}

/* Runs the 16-to-1 incast (4 MB each) with `sets` on `workers` workers; returns the share
 * done at the end and the payload delivered and received at the hosts. */
static double run_incast(const char *const *sets, uint32_t workers, uint64_t *delivered, uint64_t *received)
{
    struct test_fabric f = test_fabric_build(test_scenario_load("incast16.ini", sets));
    struct net *n = f.n;
    GError *err = NULL;
    if (workers > 1)
        CU_ASSERT_FATAL(net_set_workers(n, workers, &err));
    net_progress_install(n);
    CU_ASSERT_EQUAL(n->bytes_expected, 16 * 4000000ull);
    CU_ASSERT_DOUBLE_EQUAL(net_work_done(n), 0.0, 1e-12);
    net_run_workers(n);
    double done = net_work_done(n);
    *delivered = n->st.bytes_delivered;
    *received = 0;
    for (uint32_t h = 0; h < n->topo->nhosts; h++)
        *received += n->hosts[h].rx_bytes;
    test_fabric_free(&f);
    return done;
}

static void test_work_done_counts_each_byte_once(void)
{
    uint64_t got, rx;
    /* lossless: everything arrives once */
    CU_ASSERT_DOUBLE_EQUAL(run_incast(NULL, 1, &got, &rx), 1.0, 1e-12);
    CU_ASSERT_EQUAL(got, 64000000ull);
    CU_ASSERT_EQUAL(rx, 64000000ull);
    /* drops and go-back-N: the receiver sees retransmitted and discarded data too, the share
     * counts each byte once */
    const char *lossy[] = { "nic.cc=none", "switch.buffer=1MB", NULL };
    CU_ASSERT_DOUBLE_EQUAL(run_incast(lossy, 1, &got, &rx), 1.0, 1e-12);
    CU_ASSERT_EQUAL(got, 64000000ull);
    CU_ASSERT(rx > got);
    /* the same with out-of-order placement (the other receiver's path) */
    const char *ooo[] = { "nic.cc=none", "switch.buffer=1MB", "nic.receiver=ooo-place", NULL };
    CU_ASSERT_DOUBLE_EQUAL(run_incast(ooo, 1, &got, &rx), 1.0, 1e-12);
    CU_ASSERT_EQUAL(got, 64000000ull);
    CU_ASSERT(rx > got);
    /* on two workers the workers' counts add up */
    CU_ASSERT_DOUBLE_EQUAL(run_incast(lossy, 2, &got, &rx), 1.0, 1e-12);
    CU_ASSERT_EQUAL(got, 64000000ull);
}

/* Stopped halfway through, the share is between 0 and 1 and equals the delivered share. */
static void test_work_done_midway(void)
{
    const char *sets[] = { "scenario.stop=1ms", NULL };
    uint64_t got, rx;
    double done = run_incast(sets, 1, &got, &rx);
    CU_ASSERT(done > 0.1 && done < 0.9);
    CU_ASSERT_DOUBLE_EQUAL(done, (double)got / 64e6, 1e-12);
}

static CU_TestInfo tests[] = {
    { "the share done is the larger of the stop's and the model's", test_share_done },
    { "the time left is elapsed x (1 - done) / done", test_time_left },
    { "the line's text", test_line },
    { "the model's share counts each payload byte once", test_work_done_counts_each_byte_once },
    { "a run stopped midway is partly done", test_work_done_midway },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("progress", tests)
