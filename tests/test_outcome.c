/* transfers.csv written row by row (results_io/outcome.c) and by the thread that writes it
 * during a run (results_io/outcome_stream.c): a row appears only once its transfer is
 * complete, in id order, and the file is the one written after the run. The expected rows
 * are computed by hand from the contract's columns:
 * id,src,dst,bytes,prio,start_ns,end_ns,fct_ns,ideal_ns,slowdown. */
#include <string.h>
#include <unistd.h>
#include "results_io/format.h"
#include "results_io/outcome.h"
#include "results_io/outcome_stream.h"
#include "tests/testutil.h"

#define PS_NS 1000ull
#define IDEAL_NS 1000ull /* every transfer's ideal time here */

static simtime_t fixed_ideal(const void *ctx, uint32_t src, uint32_t dst, uint64_t bytes)
{
    (void)ctx, (void)src, (void)dst, (void)bytes;
    return IDEAL_NS * PS_NS;
}

/* Four transfers of one job: 0 and 3 from host 0 to 1, 1 a marker (no row), 2 from 1 to 0. */
static struct schedule *four(void)
{
    struct schedule *s = schedule_new();
    uint32_t job = schedule_add_job(s, "a", "flows", "", 2);
    const struct transfer t[] = {
        { .src = 0, .dst = 1, .bytes = 4096, .prio = 3, .job = job, .coll = SCHEDULE_NO_JOB },
        { .src = 0, .dst = 0, .bytes = 0, .prio = 0, .job = job, .coll = SCHEDULE_NO_JOB },
        { .src = 1, .dst = 0, .bytes = 8192, .prio = 3, .job = job, .coll = SCHEDULE_NO_JOB },
        { .src = 0, .dst = 1, .bytes = 100, .prio = 3, .job = job, .coll = SCHEDULE_NO_JOB },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(t); i++)
        schedule_add(s, &t[i], NULL, 0);
    return s;
}

/* The outcomes a run publishes while it goes on: states stored with release, loaded with
 * acquire, as models/net.h does for the simulated transfers. */
struct live {
    uint8_t state[4];
    simtime_t start[4], end[4];
};

static void live_get(const void *src, uint32_t id, struct xfer_outcome *o)
{
    const struct live *l = src;
    o->state = __atomic_load_n(&l->state[id], __ATOMIC_ACQUIRE);
    o->start = l->start[id];
    o->end = o->state == OUTCOME_DONE ? l->end[id] : 0;
}

static void live_done(struct live *l, uint32_t id, simtime_t start_ns, simtime_t end_ns)
{
    l->start[id] = start_ns * PS_NS;
    l->end[id] = end_ns * PS_NS;
    __atomic_store_n(&l->state[id], OUTCOME_DONE, __ATOMIC_RELEASE);
}

static char *file_text(FILE *f)
{
    fflush(f);
    long len = ftell(f);
    char *buf = g_malloc0((gsize)len + 1);
    rewind(f);
    CU_ASSERT_EQUAL(fread(buf, 1, (size_t)len, f), (size_t)len);
    fseek(f, 0, SEEK_END);
    return buf;
}

/* by hand: fct = end - start, slowdown = fct / 1000 ns to four places */
static const char *const ROW0 = "0,0,1,4096,3,0,2000,2000,1000,2.0000\n";
static const char *const ROW2_POSTED = "2,1,0,8192,3,500,,,1000,\n";
static const char *const ROW2_DONE = "2,1,0,8192,3,500,2000,1500,1000,1.5000\n";
static const char *const ROW3 = "3,0,1,100,3,100,3100,3000,1000,3.0000\n";

static void test_rows_stop_at_the_first_unfinished(void)
{
    struct schedule *s = four();
    struct live l = { 0 };
    struct run_figures fig = { 0 };
    FILE *f = tmpfile();
    struct outcome_rows *r = outcome_rows_begin(f, s, fixed_ideal, NULL, &fig);
    CU_ASSERT_EQUAL(outcome_rows_write(r, live_get, &l, true, UINT32_MAX), 0); /* nothing done */
    live_done(&l, 0, 0, 2000);
    live_done(&l, 3, 100, 3100);
    l.state[2] = OUTCOME_POSTED;
    l.start[2] = 500 * PS_NS;
    /* row 0; the marker has none; 2 is posted, not done: its row would change, so 3 waits too */
    CU_ASSERT_EQUAL(outcome_rows_write(r, live_get, &l, true, UINT32_MAX), 1);
    char *want = g_strconcat(RESULTS_TRANSFERS_HEADER "\n", ROW0, NULL);
    char *got = file_text(f);
    CU_ASSERT_STRING_EQUAL(got, want);
    g_free(got);
    g_free(want);
    /* after the run: the rest, unfinished ones included */
    CU_ASSERT_EQUAL(outcome_rows_write(r, live_get, &l, false, UINT32_MAX), 2);
    outcome_rows_end(r);
    want = g_strconcat(RESULTS_TRANSFERS_HEADER "\n", ROW0, ROW2_POSTED, ROW3, NULL);
    got = file_text(f);
    CU_ASSERT_STRING_EQUAL(got, want);
    /* figures: three transfers with bytes, two done, FCTs {2000, 3000} ns (nearest rank) */
    CU_ASSERT_EQUAL(fig.nxfers, 3);
    CU_ASSERT_EQUAL(fig.done, 2);
    CU_ASSERT_EQUAL(fig.bytes, 4096 + 8192 + 100);
    CU_ASSERT_EQUAL(fig.fct_p50, 2000);
    CU_ASSERT_EQUAL(fig.fct_max, 3000);
    CU_ASSERT_DOUBLE_EQUAL(fig.sd_max, 3.0, 1e-12);
    CU_ASSERT_EQUAL(fig.completion, 3100 * PS_NS);

    /* the same outcomes written at once give the same file */
    struct xfer_outcome o[4] = { { OUTCOME_DONE, 0, 2000 * PS_NS },
                                 { OUTCOME_PENDING, 0, 0 },
                                 { OUTCOME_POSTED, 500 * PS_NS, 0 },
                                 { OUTCOME_DONE, 100 * PS_NS, 3100 * PS_NS } };
    struct run_figures fig2 = { 0 };
    FILE *g = tmpfile();
    outcome_write_transfers(g, s, o, fixed_ideal, NULL, &fig2);
    char *got2 = file_text(g);
    CU_ASSERT_STRING_EQUAL(got2, want);
    CU_ASSERT_EQUAL(fig2.fct_p99, fig.fct_p99);
    g_free(got2);
    g_free(got);
    g_free(want);
    fclose(g);
    fclose(f);
    run_figures_clear(&fig);
    run_figures_clear(&fig2);
    schedule_free(s);
}

/* Waits up to 10 s for the file to read `want`. */
static bool file_becomes(FILE *f, const char *want)
{
    for (int i = 0; i < 1000; i++) {
        char *got = file_text(f);
        bool same = strcmp(got, want) == 0;
        g_free(got);
        if (same)
            return true;
        g_usleep(10000);
    }
    return false;
}

/* The thread writes a transfer's row once it completes, not before, and a stop leaves the
 * rest to the caller; the file is the one written at once. */
static void test_stream_thread(void)
{
    struct schedule *s = four();
    struct live l = { 0 };
    struct run_figures fig = { 0 };
    FILE *f = tmpfile();
    setvbuf(f, NULL, _IONBF, 0); /* each row reaches the file as the thread writes it */
    struct outcome_rows *r = outcome_rows_begin(f, s, fixed_ideal, NULL, &fig);
    struct outcome_stream *st = outcome_stream_start(r, live_get, &l);
    CU_ASSERT_PTR_NOT_NULL_FATAL(st);
    l.start[2] = 500 * PS_NS;
    __atomic_store_n(&l.state[2], OUTCOME_POSTED, __ATOMIC_RELEASE);
    live_done(&l, 3, 100, 3100);
    live_done(&l, 0, 0, 2000);
    char *want = g_strconcat(RESULTS_TRANSFERS_HEADER "\n", ROW0, NULL);
    CU_ASSERT_TRUE(file_becomes(f, want));
    g_usleep(50000); /* five of its polls: 2 is not done, so neither it nor 3 may appear */
    char *got = file_text(f);
    CU_ASSERT_STRING_EQUAL(got, want);
    g_free(got);
    g_free(want);
    live_done(&l, 2, 500, 2000);
    want = g_strconcat(RESULTS_TRANSFERS_HEADER "\n", ROW0, ROW2_DONE, ROW3, NULL);
    CU_ASSERT_TRUE(file_becomes(f, want));
    outcome_stream_stop(st);
    CU_ASSERT_EQUAL(outcome_rows_write(r, live_get, &l, false, UINT32_MAX), 0); /* nothing left */
    outcome_rows_end(r);
    got = file_text(f);
    CU_ASSERT_STRING_EQUAL(got, want);
    CU_ASSERT_EQUAL(fig.done, 3);
    CU_ASSERT_EQUAL(fig.fct_p50, 2000); /* {1500, 2000, 3000} */
    g_free(got);
    g_free(want);
    fclose(f);
    run_figures_clear(&fig);
    schedule_free(s);
}

/* Stopped before anything completed (a run stopped at its start): only the header, and
 * after the run every row without start or end; bytes are the three rows' 4096 + 8192 + 100. */
static void test_stream_stopped_early(void)
{
    struct schedule *s = four();
    struct live l = { 0 };
    struct run_figures fig = { 0 };
    FILE *f = tmpfile();
    struct outcome_rows *r = outcome_rows_begin(f, s, fixed_ideal, NULL, &fig);
    outcome_stream_stop(outcome_stream_start(r, live_get, &l));
    char *got = file_text(f);
    CU_ASSERT_STRING_EQUAL(got, RESULTS_TRANSFERS_HEADER "\n");
    g_free(got);
    CU_ASSERT_EQUAL(outcome_rows_write(r, live_get, &l, false, UINT32_MAX), 3);
    outcome_rows_end(r);
    got = file_text(f);
    CU_ASSERT_STRING_EQUAL(got, RESULTS_TRANSFERS_HEADER "\n"
                                "0,0,1,4096,3,,,,1000,\n"
                                "2,1,0,8192,3,,,,1000,\n"
                                "3,0,1,100,3,,,,1000,\n");
    CU_ASSERT_EQUAL(fig.nxfers, 3);
    CU_ASSERT_EQUAL(fig.done, 0);
    /* nothing done: the counts, and no completion time, FCT or slowdown (absent, not 0,
     * which a sweep ranking by FCT would take for the best point) */
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    outcome_json_transfer_metrics(b, &fig);
    json_builder_end_object(b);
    JsonGenerator *gen = json_generator_new();
    JsonNode *root = json_builder_get_root(b);
    json_generator_set_root(gen, root);
    char *json = json_generator_to_data(gen, NULL);
    CU_ASSERT_STRING_EQUAL(json, "{\"transfers\":3,\"transfers_completed\":0,\"bytes\":12388}");
    /* the keys left out, the run's and a job's, and not others */
    CU_ASSERT(outcome_metric_optional("fct_p99_ns") && outcome_metric_optional("slowdown_max") &&
              outcome_metric_optional("completion_ns") && outcome_metric_optional("collective_time_p99_us"));
    CU_ASSERT(outcome_metric_optional("jobs.ar.time_p99_us") && outcome_metric_optional("jobs.a.b.fct_p50_ns"));
    CU_ASSERT(!outcome_metric_optional("drops") && !outcome_metric_optional("transfers_completed") &&
              !outcome_metric_optional("fct_p99") && !outcome_metric_optional("jobs.ar.drops") &&
              !outcome_metric_optional("jobs.fct_p99_ns") && !outcome_metric_optional("jobs.ar.slowdown_max"));
    g_free(json);
    json_node_unref(root);
    g_object_unref(gen);
    g_object_unref(b);
    g_free(got);
    fclose(f);
    run_figures_clear(&fig);
    schedule_free(s);
}

static simtime_t no_ideal(const void *ctx, uint32_t src, uint32_t dst, uint64_t bytes)
{
    (void)ctx, (void)src, (void)dst, (void)bytes;
    return 0;
}

/* With no ideal time (a replay that knows no host rate): empty ideal_ns and slowdown, and no
 * slowdown in the metrics, the run's or the job's (it was inf, and summary.json's "inf.0" was
 * not JSON). The rows by hand from ROW0, ROW2_POSTED and ROW3 without their last two. */
static void test_no_ideal_no_slowdown(void)
{
    struct schedule *s = four();
    struct xfer_outcome o[4] = { { OUTCOME_DONE, 0, 2000 * PS_NS },
                                 { OUTCOME_PENDING, 0, 0 },
                                 { OUTCOME_POSTED, 500 * PS_NS, 0 },
                                 { OUTCOME_DONE, 100 * PS_NS, 3100 * PS_NS } };
    struct run_figures fig = { 0 };
    FILE *f = tmpfile();
    outcome_write_transfers(f, s, o, no_ideal, NULL, &fig);
    char *got = file_text(f);
    CU_ASSERT_STRING_EQUAL(got, RESULTS_TRANSFERS_HEADER "\n0,0,1,4096,3,0,2000,2000,,\n2,1,0,8192,3,500,,,,\n"
                                                         "3,0,1,100,3,100,3100,3000,,\n");
    CU_ASSERT_EQUAL(fig.done, 2);
    CU_ASSERT_EQUAL(fig.sd_known, 0);
    CU_ASSERT_EQUAL(fig.fct_max, 3000);
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    outcome_json_transfer_metrics(b, &fig);
    outcome_json_job_metrics(b, s, &fig);
    json_builder_end_object(b);
    JsonGenerator *gen = json_generator_new();
    JsonNode *root = json_builder_get_root(b);
    json_generator_set_root(gen, root);
    char *json = json_generator_to_data(gen, NULL);
    CU_ASSERT(strstr(json, "\"fct_max_ns\":3000") && !strstr(json, "slowdown") && !strstr(json, "inf"));
    g_free(json);
    json_node_unref(root);
    g_object_unref(gen);
    g_object_unref(b);
    g_free(got);
    fclose(f);
    run_figures_clear(&fig);
    schedule_free(s);
}

/* Many transfers for outcome_rows_write_all: more than four of its 4096-transfer pieces, in
 * two jobs that alternate (so each job's FCT array is built row by row), every 13th one a
 * marker without bytes, and in every state. */
#define MANY (5 * 4096 + 77)

static struct schedule *many(struct xfer_outcome *o)
{
    struct schedule *s = schedule_new();
    uint32_t jobs[2] = { schedule_add_job(s, "a", "flows", "", 64), schedule_add_job(s, "b", "flows", "", 64) };
    for (uint32_t i = 0; i < MANY; i++) {
        const struct transfer t = { .src = i % 61, .dst = (i * 7) % 64, .bytes = i % 13 ? 1000 + (i * 37) % 90000 : 0,
                                    .prio = i % 8, .job = jobs[i % 2], .coll = SCHEDULE_NO_JOB };
        schedule_add(s, &t, NULL, 0);
        /* a state by i % 5; times with from 1 to 10 digits in ns */
        simtime_t start = (simtime_t)(i % 3 ? i * 1013ull : i) * PS_NS;
        o[i] = (struct xfer_outcome){ .state = i % 5 == 0 ? OUTCOME_PENDING : i % 5 == 1 ? OUTCOME_POSTED : OUTCOME_DONE,
                                      .start = i % 5 ? start : 0 };
        if (o[i].state == OUTCOME_DONE)
            o[i].end = start + (1 + (i * 7919ull) % 3000000) * PS_NS + (i % 997); /* not whole ns either */
    }
    return s;
}

static void many_get(const void *src, uint32_t id, struct xfer_outcome *out)
{
    *out = ((const struct xfer_outcome *)src)[id];
}

/* ideal = bytes x 8 ns per KB plus 1 us: many slowdowns, not all round */
static simtime_t bytes_ideal(const void *ctx, uint32_t src, uint32_t dst, uint64_t bytes)
{
    (void)ctx, (void)src, (void)dst;
    return (bytes * 8 + 1000) * PS_NS;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The rows after the run on 1, 2 and 3 threads of their own (after the first few written as a
 * stream would): the contract's printf formats row by row, and figures added up in id order:
 * each job's FCT array in id order, the run's FCT and slowdown percentiles by nearest rank
 * over a sort (the slowdowns' selected on a thread of their own). */
static void test_rows_on_threads(void)
{
    struct xfer_outcome *o = g_new(struct xfer_outcome, MANY);
    struct schedule *s = many(o);
    GString *want = g_string_new(RESULTS_TRANSFERS_HEADER "\n");
    uint64_t *fct = g_new(uint64_t, MANY), nfct = 0, rows = 0, bytes = 0;
    double *sd = g_new(double, MANY);
    GArray *job_fct[2] = { g_array_new(FALSE, FALSE, sizeof(uint64_t)), g_array_new(FALSE, FALSE, sizeof(uint64_t)) };
    simtime_t completion = 0;
    for (uint32_t i = 0; i < MANY; i++) {
        const struct transfer *t = schedule_get(s, i);
        if (!t->bytes)
            continue;
        rows++;
        bytes += t->bytes;
        simtime_t ideal = bytes_ideal(NULL, t->src, t->dst, t->bytes);
        g_string_append_printf(want, "%u,%u,%u,%" G_GUINT64_FORMAT ",%u,", i, t->src, t->dst, t->bytes, t->prio);
        if (o[i].state != OUTCOME_DONE) {
            if (o[i].state == OUTCOME_POSTED)
                g_string_append_printf(want, "%" G_GUINT64_FORMAT, (uint64_t)(o[i].start / PS_NS));
            g_string_append_printf(want, ",,,%" G_GUINT64_FORMAT ",\n", (uint64_t)(ideal / PS_NS));
            continue;
        }
        uint64_t f = (uint64_t)((o[i].end - o[i].start) / PS_NS);
        g_string_append_printf(want, "%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%.4f\n",
                               (uint64_t)(o[i].start / PS_NS), (uint64_t)(o[i].end / PS_NS), f, (uint64_t)(ideal / PS_NS),
                               (double)(o[i].end - o[i].start) / (double)ideal);
        sd[nfct] = (double)(o[i].end - o[i].start) / (double)ideal;
        fct[nfct++] = f;
        g_array_append_val(job_fct[i % 2], f);
        if (o[i].end > completion)
            completion = o[i].end;
    }
    qsort(fct, nfct, sizeof *fct, cmp_u64);
    qsort(sd, nfct, sizeof *sd, cmp_dbl);
    CU_ASSERT(nfct >= 8192); /* the slowdowns' percentiles take their thread (outcome.c) */
    for (unsigned threads = 1; threads <= 3; threads++) {
        struct run_figures fig = { 0 };
        FILE *f = tmpfile();
        struct outcome_rows *r = outcome_rows_begin(f, s, bytes_ideal, NULL, &fig);
        /* the stream's part: 0 (a marker) and nothing more, 1 being only posted */
        CU_ASSERT_EQUAL(outcome_rows_write(r, many_get, o, true, UINT32_MAX), 0);
        outcome_rows_write_all(r, many_get, o, threads);
        outcome_rows_end(r);
        char *got = file_text(f);
        CU_ASSERT_EQUAL(strlen(got), want->len);
        CU_ASSERT_STRING_EQUAL(got, want->str);
        CU_ASSERT_EQUAL(fig.nxfers, rows);
        CU_ASSERT_EQUAL(fig.done, nfct);
        CU_ASSERT_EQUAL(fig.bytes, bytes);
        CU_ASSERT_EQUAL(fig.completion, completion);
        CU_ASSERT_EQUAL(fig.fct_p50, fct[(nfct + 1) / 2 - 1]); /* nearest rank: ceil(n / 2) */
        CU_ASSERT_EQUAL(fig.fct_max, fct[nfct - 1]);
        /* nearest rank: p99 is the ceil(0.99 n)-th; the slowdowns are computed on a thread
         * of their own beside the FCTs */
        CU_ASSERT_EQUAL(fig.sd_known, nfct);
        CU_ASSERT_EQUAL(fig.sd_p50, sd[(nfct + 1) / 2 - 1]);
        CU_ASSERT_EQUAL(fig.sd_p99, sd[(99 * nfct + 99) / 100 - 1]);
        CU_ASSERT_EQUAL(fig.sd_max, sd[nfct - 1]);
        CU_ASSERT_EQUAL(fig.fct_p99, fct[(99 * nfct + 99) / 100 - 1]);
        for (int j = 0; j < 2; j++) {
            CU_ASSERT_EQUAL_FATAL(fig.jobs[j].fct_ns->len, job_fct[j]->len);
            CU_ASSERT_EQUAL(memcmp(fig.jobs[j].fct_ns->data, job_fct[j]->data, job_fct[j]->len * sizeof(uint64_t)), 0);
        }
        g_free(got);
        fclose(f);
        run_figures_clear(&fig);
    }
    g_array_free(job_fct[0], TRUE);
    g_array_free(job_fct[1], TRUE);
    g_free(fct);
    g_free(sd);
    g_string_free(want, TRUE);
    schedule_free(s);
    g_free(o);
}

/* A full disk while the threads format: the writing stops (it does not wait for ever on the
 * threads) and the stream shows the error (results_close reports it). */
static void test_rows_on_threads_full_disk(void)
{
    struct xfer_outcome *o = g_new(struct xfer_outcome, MANY);
    struct schedule *s = many(o);
    struct run_figures fig = { 0 };
    FILE *f = fopen("/dev/full", "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    struct outcome_rows *r = outcome_rows_begin(f, s, bytes_ideal, NULL, &fig);
    outcome_rows_write_all(r, many_get, o, 2);
    CU_ASSERT_TRUE(outcome_rows_failed(r));
    CU_ASSERT(fig.nxfers < MANY - MANY / 13 - 1); /* it stopped before the end */
    outcome_rows_abort(r);
    fclose(f);
    run_figures_clear(&fig);
    schedule_free(s);
    g_free(o);
}

static CU_TestInfo tests[] = {
    { "rows stop at the first unfinished transfer; same file as at once", test_rows_stop_at_the_first_unfinished },
    { "the writer thread adds a row once its transfer completes", test_stream_thread },
    { "a writer stopped at once leaves the header; unfinished rows after", test_stream_stopped_early },
    { "no ideal time: empty ideal_ns and slowdown, no slowdown metrics", test_no_ideal_no_slowdown },
    { "rows on 1, 2 and 3 threads: the contract's text, figures in id order", test_rows_on_threads },
    { "rows on threads to a full disk: the writing stops, the error shows", test_rows_on_threads_full_disk },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("outcome", tests)
