/* The time figures of summary.json's engine object. results_io/samples.c: the time a run
 * spends writing its time series (engine.output_s and output_share) counts each moment once.
 * A sampling tick is timed whole, and the PFC rows it hands over inside it are part of it:
 * timed again on their own they were counted twice (the incast bench showed 10.3 % where
 * 8.4 % was spent). The check: the writer's total never exceeds the wall time around
 * everything it timed. And setup_s and wall_s, two spans of one process, fit inside it. */
#include "results_io/samples.h"
#include "tests/testutil.h"

static void write_pfc_rows(const struct net_sample_hooks *h, int n)
{
    for (int i = 0; i < n; i++)
        h->pfc(h->ctx, (uint64_t)i, 0, "leaf0", (uint32_t)(i % 16), 3, i & 1 ? "resume" : "pause", (uint64_t)i);
}

/* Rows inside ticks, then rows outside any: with `batches`, each hand-over of rows inside a
 * pfc_batch span as the model makes them (pfc_rows_flush), without, row by row. */
static void check_counted_once(bool batches)
{
    struct test_outdir d = test_outdir_new();
    struct results_dir rd = { 0 };
    GError *err = NULL;
    CU_ASSERT_FATAL(results_begin(&rd, d.out, &err));
    struct sample_writer w;
    CU_ASSERT_FATAL(sample_writer_open(&w, &rd, false, NULL, &err));
    struct net_sample_hooks h;
    sample_writer_hooks(&w, &h);
    CU_ASSERT_FATAL(h.pfc_batch != NULL);

    /* rows inside ticks: the ticks' spans hold all of the rows' time */
    uint64_t t0 = results_clock_ns();
    for (int tick = 0; tick < 20; tick++) {
        h.tick(h.ctx, true);
        if (batches)
            h.pfc_batch(h.ctx, true);
        write_pfc_rows(&h, 20000);
        if (batches)
            h.pfc_batch(h.ctx, false);
        h.tick(h.ctx, false);
    }
    uint64_t inside = results_clock_ns() - t0;
    CU_ASSERT(w.output_ns > 0);
    CU_ASSERT(w.output_ns <= inside);

    /* rows outside a tick (a batch of 64 K, the run's end) are timed on their own, once */
    uint64_t before = w.output_ns;
    t0 = results_clock_ns();
    if (batches)
        h.pfc_batch(h.ctx, true);
    write_pfc_rows(&h, 100000);
    if (batches)
        h.pfc_batch(h.ctx, false);
    uint64_t outside = results_clock_ns() - t0;
    CU_ASSERT(w.output_ns > before);
    CU_ASSERT(w.output_ns - before <= outside);

    CU_ASSERT(sample_writer_close(&w, &err));
    results_abort(&rd);
    test_outdir_free(&d);
}

static void test_each_moment_counted_once(void)
{
    check_counted_once(false);
}

/* The model hands PFC rows over in batches (pfc_rows_flush), each inside a pfc_batch span,
 * inside a tick or not. A batch inside a tick is part of the tick's span: counted once (the
 * tick's time, not the tick's and the batch's again). A batch outside a tick is timed whole,
 * once. */
static void test_batches_counted_once(void)
{
    check_counted_once(true);
}

/* setup_s (building before the run) and wall_s (the run) are two spans of one process: each
 * positive, and together no longer than the process took from outside. */
static void test_setup_and_run_within_the_process(void)
{
    struct test_outdir d = test_outdir_new();
    char *scen = test_data_path("minimal.ini");
    const char *args[] = { "run", scen, "-o", d.out, NULL };
    const char *extra[] = { "--no-plots", "--quiet", NULL };
    gint64 t0 = g_get_monotonic_time();
    CU_ASSERT_EQUAL_FATAL(test_rocesim(args, extra, NULL, NULL), 0);
    double outside = (double)(g_get_monotonic_time() - t0) / 1e6;
    char *sum = g_build_filename(d.out, "summary.json", NULL);
    JsonParser *jp = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_file(jp, sum, NULL));
    JsonObject *e = json_object_get_object_member(json_node_get_object(json_parser_get_root(jp)), "engine");
    CU_ASSERT_FATAL(e && json_object_has_member(e, "setup_s") && json_object_has_member(e, "wall_s"));
    double setup = json_object_get_double_member(e, "setup_s"), wall = json_object_get_double_member(e, "wall_s");
    CU_ASSERT(setup > 0);
    CU_ASSERT(wall > 0);
    CU_ASSERT(setup + wall <= outside);
    g_object_unref(jp);
    g_free(sum);
    g_free(scen);
    test_outdir_free(&d);
}

static CU_TestInfo tests[] = {
    { "sampling time: a tick's PFC rows are not counted twice", test_each_moment_counted_once },
    { "PFC row batches: inside a tick counted once, outside timed whole", test_batches_counted_once },
    { "setup and run: two spans inside the process's time", test_setup_and_run_within_the_process },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("output_timing", tests)
