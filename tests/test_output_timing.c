/* results_io/samples.c: the time a run spends writing its time series (engine.output_s and
 * output_share in summary.json) counts each moment once. A sampling tick is timed whole, and
 * the PFC rows it hands over inside it are part of it: timed again on their own they were
 * counted twice (the incast bench showed 10.3 % where 8.4 % was spent). The check: the
 * writer's total never exceeds the wall time around everything it timed. */
#include "results_io/samples.h"
#include "tests/testutil.h"

static void write_pfc_rows(const struct net_sample_hooks *h, int n)
{
    for (int i = 0; i < n; i++)
        h->pfc(h->ctx, (uint64_t)i, 0, "leaf0", (uint32_t)(i % 16), 3, i & 1 ? "resume" : "pause", (uint64_t)i);
}

static void test_each_moment_counted_once(void)
{
    struct test_outdir d = test_outdir_new();
    struct results_dir rd = { 0 };
    GError *err = NULL;
    CU_ASSERT_FATAL(results_begin(&rd, d.out, &err));
    struct sample_writer w;
    CU_ASSERT_FATAL(sample_writer_open(&w, &rd, false, NULL, &err));
    struct net_sample_hooks h;
    sample_writer_hooks(&w, &h);

    /* rows inside ticks: the ticks' spans hold all of the rows' time */
    uint64_t t0 = results_clock_ns();
    for (int tick = 0; tick < 20; tick++) {
        h.tick(h.ctx, true);
        write_pfc_rows(&h, 20000);
        h.tick(h.ctx, false);
    }
    uint64_t inside = results_clock_ns() - t0;
    CU_ASSERT(w.output_ns > 0);
    CU_ASSERT(w.output_ns <= inside);

    /* rows outside a tick (the run's end) are timed on their own, and still once */
    uint64_t before = w.output_ns;
    t0 = results_clock_ns();
    write_pfc_rows(&h, 100000);
    uint64_t outside = results_clock_ns() - t0;
    CU_ASSERT(w.output_ns > before);
    CU_ASSERT(w.output_ns - before <= outside);

    CU_ASSERT(sample_writer_close(&w, &err));
    results_abort(&rd);
    test_outdir_free(&d);
}

static CU_TestInfo tests[] = {
    { "sampling time: a tick's PFC rows are not counted twice", test_each_moment_counted_once },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("output_timing", tests)
