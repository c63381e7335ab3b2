/* analysis/metrics: percentiles, CDFs, units, the CSV reader and its errors, summary.json,
 * time series, formatting. */
#include <math.h>
#include <string.h>

#include "analysis/metrics.h"
#include "tests/fixture_results.h"
#include "tests/testutil.h"

static char *write_tmp(const char *dir, const char *name, const char *text)
{
    char *p = g_build_filename(dir, name, NULL);
    g_file_set_contents(p, text, -1, NULL);
    return p;
}

static void test_percentile_nearest_rank(void)
{
    /* The textbook nearest-rank example. */
    double v[] = { 15, 20, 35, 40, 50 };
    CU_ASSERT_EQUAL(stats_percentile(v, 5, 0), 15);
    CU_ASSERT_EQUAL(stats_percentile(v, 5, 5), 15);
    CU_ASSERT_EQUAL(stats_percentile(v, 5, 30), 20);
    CU_ASSERT_EQUAL(stats_percentile(v, 5, 40), 20);
    CU_ASSERT_EQUAL(stats_percentile(v, 5, 41), 35);
    CU_ASSERT_EQUAL(stats_percentile(v, 5, 50), 35);
    CU_ASSERT_EQUAL(stats_percentile(v, 5, 100), 50);

    double t[10];
    for (int i = 0; i < 10; i++)
        t[i] = i + 1;
    CU_ASSERT_EQUAL(stats_percentile(t, 10, 10), 1);
    CU_ASSERT_EQUAL(stats_percentile(t, 10, 50), 5);
    CU_ASSERT_EQUAL(stats_percentile(t, 10, 90), 9);
    CU_ASSERT_EQUAL(stats_percentile(t, 10, 95), 10);   /* rank ceil(9.5) = 10 */
    CU_ASSERT_EQUAL(stats_percentile(t, 10, 99), 10);

    /* p*n/100 is an integer that floating point overshoots (1.1 * 3000 / 100 =
     * 33.000000000000007): the rank must stay 33, not round up to 34. */
    double *k = g_new(double, 3000);
    for (int i = 0; i < 3000; i++)
        k[i] = i + 1;
    CU_ASSERT_EQUAL(stats_percentile(k, 3000, 1.1), 33);
    CU_ASSERT_EQUAL(stats_percentile(k, 1500, 2.2), 33);
    CU_ASSERT_EQUAL(stats_percentile(k, 1000, 99.9), 999);
    CU_ASSERT_EQUAL(stats_percentile(k, 1000, 99), 990);
    CU_ASSERT_EQUAL(stats_percentile(k, 1000, 0.1), 1);
    CU_ASSERT_EQUAL(stats_percentile(k, 1000, 0.15), 2);
    g_free(k);

    CU_ASSERT_TRUE(isnan(stats_percentile(NULL, 0, 50)));
    double one = 7;
    CU_ASSERT_EQUAL(stats_percentile(&one, 1, 1), 7);
    CU_ASSERT_EQUAL(stats_percentile(&one, 1, 99), 7);
}

static void test_sort_mean(void)
{
    double v[] = { 5, -1, 3, 3, 10, 0 };
    stats_sort(v, 6);
    double want[] = { -1, 0, 3, 3, 5, 10 };
    CU_ASSERT_EQUAL(memcmp(v, want, sizeof v), 0);
    CU_ASSERT_DOUBLE_EQUAL(stats_mean(v, 6), 20.0 / 6, 1e-12);
    CU_ASSERT_TRUE(isnan(stats_mean(v, 0)));
}

/* The radix path (more than 256 values): the same order as qsort with the comparison
 * functions, for doubles of both signs, values that differ only in low bits, equal runs,
 * infinities, and 64-bit integers up to UINT64_MAX. */
static void test_sort_large_against_qsort(void)
{
    enum { N = 5000 };
    double *d = g_new(double, N), *ref = g_new(double, N);
    uint64_t *u = g_new(uint64_t, N), *uref = g_new(uint64_t, N);
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < N; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        switch (i % 5) {
        case 0: d[i] = (double)(int64_t)(x % 2000001) - 1e6; break;  /* integers of both signs */
        case 1: d[i] = 1.0 + (double)(x % 1024) * 0x1p-52; break;      /* low mantissa bits */
        case 2: d[i] = 3.25; break;                                      /* a run of equals */
        case 3: d[i] = (x & 1 ? -1 : 1) * (double)(x >> 11) * 0x1p-30; break;
        default: d[i] = i % 10 == 4 ? INFINITY : -INFINITY; break;
        }
        u[i] = i % 7 == 0 ? UINT64_MAX - (x % 3) : x >> (i % 64);
    }
    memcpy(ref, d, N * sizeof *d);
    memcpy(uref, u, N * sizeof *u);
    qsort(ref, N, sizeof *ref, stats_cmp_dbl);
    qsort(uref, N, sizeof *uref, stats_cmp_u64);
    stats_sort(d, N);
    stats_sort_u64(u, N);
    CU_ASSERT_EQUAL(memcmp(d, ref, N * sizeof *d), 0);
    CU_ASSERT_EQUAL(memcmp(u, uref, N * sizeof *u), 0);
    g_free(d);
    g_free(ref);
    g_free(u);
    g_free(uref);
}

static void test_cdf(void)
{
    double v[] = { 1, 2, 2, 8 };
    GArray *c = stats_cdf(v, 4, 100);
    CU_ASSERT_EQUAL_FATAL(c->len, 4);
    stats_point *p = (stats_point *)c->data;
    CU_ASSERT_EQUAL(p[0].x, 1);
    CU_ASSERT_DOUBLE_EQUAL(p[0].y, 0.25, 1e-12);
    CU_ASSERT_EQUAL(p[2].x, 2);
    CU_ASSERT_DOUBLE_EQUAL(p[2].y, 0.75, 1e-12);
    CU_ASSERT_EQUAL(p[3].x, 8);
    CU_ASSERT_DOUBLE_EQUAL(p[3].y, 1.0, 1e-12);
    g_array_free(c, TRUE);

    /* Downsampled: at most max_points, monotone, extremes kept. */
    double *k = g_new(double, 1000);
    for (int i = 0; i < 1000; i++)
        k[i] = i * 2.0;
    c = stats_cdf(k, 1000, 10);
    CU_ASSERT_TRUE(c->len <= 10 && c->len >= 9);
    p = (stats_point *)c->data;
    CU_ASSERT_EQUAL(p[0].x, 0);
    CU_ASSERT_DOUBLE_EQUAL(p[0].y, 0.001, 1e-12);
    CU_ASSERT_EQUAL(p[c->len - 1].x, 1998);
    CU_ASSERT_DOUBLE_EQUAL(p[c->len - 1].y, 1.0, 1e-12);
    for (guint i = 1; i < c->len; i++)
        CU_ASSERT_TRUE(p[i].x > p[i - 1].x && p[i].y > p[i - 1].y);
    /* Each point is a true CDF point: y = rank/n for x = k[rank-1]. */
    for (guint i = 0; i < c->len; i++)
        CU_ASSERT_DOUBLE_EQUAL(p[i].y, (p[i].x / 2 + 1) / 1000, 1e-12);
    g_array_free(c, TRUE);
    g_free(k);

    c = stats_cdf(NULL, 0, 10);
    CU_ASSERT_EQUAL(c->len, 0);
    g_array_free(c, TRUE);
}

static void test_busbw(void)
{
    CU_ASSERT_DOUBLE_EQUAL(stats_busbw_factor("allreduce", 8), 1.75, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(stats_busbw_factor("allgather", 8), 0.875, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(stats_busbw_factor("reducescatter", 4), 0.75, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(stats_busbw_factor("alltoall", 2), 0.5, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(stats_busbw_factor("broadcast", 16), 1.0, 1e-12);
    CU_ASSERT_TRUE(isnan(stats_busbw_factor("gossip", 8)));
    CU_ASSERT_TRUE(isnan(stats_busbw_factor("allreduce", 0)));
    /* 8 MiB in 100 µs = 83.886 GB/s */
    CU_ASSERT_DOUBLE_EQUAL(stats_algbw_GBps(8388608, 100000), 83.88608, 1e-9);
}

static void test_parse_bytes(void)
{
    double b;
    CU_ASSERT_TRUE(metrics_parse_bytes("100KB", &b) && b == 100000);
    CU_ASSERT_TRUE(metrics_parse_bytes("600KiB", &b) && b == 614400);
    CU_ASSERT_TRUE(metrics_parse_bytes("1.5MB", &b) && b == 1.5e6);
    CU_ASSERT_TRUE(metrics_parse_bytes("2MiB", &b) && b == 2097152);
    CU_ASSERT_TRUE(metrics_parse_bytes("9216B", &b) && b == 9216);
    CU_ASSERT_TRUE(metrics_parse_bytes("32 MB", &b) && b == 32e6);
    CU_ASSERT_TRUE(metrics_parse_bytes("1GiB", &b) && b == 1073741824.0);
    CU_ASSERT_FALSE(metrics_parse_bytes("100", &b));      /* a size needs a unit */
    CU_ASSERT_FALSE(metrics_parse_bytes("100kb", &b));    /* units are case-sensitive */
    CU_ASSERT_FALSE(metrics_parse_bytes("KB", &b));
    CU_ASSERT_FALSE(metrics_parse_bytes("-4KB", &b));
    CU_ASSERT_FALSE(metrics_parse_bytes(NULL, &b));
}

static void test_csv_reader(void)
{
    char *dir = test_tmpdir();
    /* Quoted fields, CRLF line ends, a blank line, a byte-order mark. */
    char *p = write_tmp(dir, "ok.csv",
                        "\xEF\xBB\xBFname,value,note\r\n"
                        "a,1.5,plain\r\n"
                        "\r\n"
                        "\"b,c\",2,\"say \"\"hi\"\"\"\n"
                        "d,3e2,\n");
    GError *e = NULL;
    results_csv *c = results_csv_open(p, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(results_csv_ncols(c), 3);
    CU_ASSERT_STRING_EQUAL(results_csv_colname(c, 0), "name");
    CU_ASSERT_EQUAL(results_csv_column(c, "note"), 2);
    CU_ASSERT_EQUAL(results_csv_column(c, "nope"), -1);
    double v;
    CU_ASSERT_EQUAL(results_csv_next(c, &e), 1);
    CU_ASSERT_EQUAL(results_csv_line(c), 2);
    CU_ASSERT_TRUE(results_csv_double(c, 1, &v, &e) && v == 1.5);
    CU_ASSERT_EQUAL(results_csv_next(c, &e), 1);
    CU_ASSERT_EQUAL(results_csv_line(c), 4);   /* the blank line 3 is skipped, still counted */
    CU_ASSERT_STRING_EQUAL(results_csv_field(c, 0), "b,c");
    CU_ASSERT_STRING_EQUAL(results_csv_field(c, 2), "say \"hi\"");
    CU_ASSERT_EQUAL(results_csv_next(c, &e), 1);
    CU_ASSERT_TRUE(results_csv_double(c, 1, &v, &e) && v == 300);
    CU_ASSERT_STRING_EQUAL(results_csv_field(c, 2), "");
    CU_ASSERT_EQUAL(results_csv_next(c, &e), 0);
    CU_ASSERT_PTR_NULL(e);
    results_csv_close(c);
    g_free(p);

    /* A short row: the error names the file and the line. */
    p = write_tmp(dir, "queues.csv", "t_ns,node,port,prio,bytes\n0,leaf0,1,3,0\n\n"
                                     "1000,leaf0,1,3\n");
    c = results_csv_open(p, &e);
    CU_ASSERT_EQUAL(results_csv_next(c, &e), 1);
    CU_ASSERT_EQUAL(results_csv_next(c, &e), -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    char *want = g_strdup_printf("%s:4: 4 fields, expected 5 (t_ns,node,port,prio,bytes)", p);
    CU_ASSERT_STRING_EQUAL(e->message, want);
    g_free(want);
    g_clear_error(&e);
    results_csv_close(c);
    g_free(p);

    /* A bad number: file, line, column and value. */
    p = write_tmp(dir, "t.csv", "id,fct_ns\n1,100\n2,12x\n");
    c = results_csv_open(p, &e);
    CU_ASSERT_EQUAL(results_csv_next(c, &e), 1);
    CU_ASSERT_EQUAL(results_csv_next(c, &e), 1);
    CU_ASSERT_FALSE(results_csv_double(c, 1, &v, &e));
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    want = g_strdup_printf("%s:3: column 'fct_ns': '12x' is not a finite number", p);
    CU_ASSERT_STRING_EQUAL(e->message, want);
    g_free(want);
    g_clear_error(&e);
    results_csv_close(c);

    /* The same through read_column; and "nan" is refused too. */
    double *vals = NULL;
    size_t n = 99;
    CU_ASSERT_FALSE(results_csv_read_column(p, "fct_ns", &vals, &n, &e));
    CU_ASSERT_PTR_NOT_NULL(e && strstr(e->message, "t.csv:3:"));
    g_clear_error(&e);
    g_free(p);
    p = write_tmp(dir, "n.csv", "x\n1\nnan\n");
    CU_ASSERT_FALSE(results_csv_read_column(p, "x", &vals, &n, &e));
    CU_ASSERT_PTR_NOT_NULL(e && strstr(e->message, "n.csv:3: column 'x': 'nan'"));
    g_clear_error(&e);
    g_free(p);

    /* Missing column. */
    p = write_tmp(dir, "m.csv", "a,b\n1,2\n");
    CU_ASSERT_FALSE(results_csv_read_column(p, "fct_ns", &vals, &n, &e));
    CU_ASSERT_TRUE(g_error_matches(e, RESULTS_ERROR, RESULTS_ERROR_COLUMN));
    CU_ASSERT_PTR_NOT_NULL(e && strstr(e->message, "missing column 'fct_ns' (header is a,b)"));
    g_clear_error(&e);
    g_free(p);

    /* Unterminated quote. */
    p = write_tmp(dir, "q.csv", "a,b\n\"x,1\n");
    c = results_csv_open(p, &e);
    CU_ASSERT_EQUAL(results_csv_next(c, &e), -1);
    CU_ASSERT_PTR_NOT_NULL(e && strstr(e->message, "q.csv:2: field 1: unterminated quote"));
    g_clear_error(&e);
    results_csv_close(c);
    g_free(p);

    /* Missing file: NOENT, for callers that skip it. Empty file: no columns, no rows. */
    p = g_build_filename(dir, "absent.csv", NULL);
    CU_ASSERT_PTR_NULL(results_csv_open(p, &e));
    CU_ASSERT_TRUE(g_error_matches(e, G_FILE_ERROR, G_FILE_ERROR_NOENT));
    g_clear_error(&e);
    g_free(p);
    p = write_tmp(dir, "empty.csv", "");
    c = results_csv_open(p, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(results_csv_ncols(c), 0);
    CU_ASSERT_EQUAL(results_csv_next(c, &e), 0);
    results_csv_close(c);
    CU_ASSERT_TRUE(results_csv_read_column(p, "x", &vals, &n, &e));
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_PTR_NULL(vals);
    g_free(p);
    test_rmtree(dir);
    g_free(dir);
}

static void test_read_fixture(void)
{
    char *dir = fixture_tmp(NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    GError *e = NULL;
    char *p = g_build_filename(dir, "transfers.csv", NULL);
    double *fct = NULL;
    size_t n = 0;
    CU_ASSERT_TRUE_FATAL(results_csv_read_column(p, "fct_ns", &fct, &n, &e));
    CU_ASSERT_EQUAL(n, 64);
    g_free(p);

    results_summary *s = results_summary_read_dir(dir, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    double v;
    /* summary.json's p99 is the nearest-rank p99 of transfers.csv. */
    stats_sort(fct, n);
    CU_ASSERT_TRUE(results_summary_metric(s, "fct_p99_ns", &v));
    CU_ASSERT_EQUAL(v, stats_percentile(fct, n, 99));
    CU_ASSERT_TRUE(results_summary_metric(s, "transfers", &v) && v == 64);   /* an integer */
    CU_ASSERT_TRUE(results_summary_metric(s, "busbw_GBps", &v) && v == 75.25);
    CU_ASSERT_FALSE(results_summary_metric(s, "no_such_metric", &v));
    char *kmin = results_summary_scenario(s, "switch", "ecn_kmin");
    CU_ASSERT_STRING_EQUAL(kmin, "100KB");
    g_free(kmin);
    CU_ASSERT_PTR_NULL(results_summary_scenario(s, "switch", "nope"));
    CU_ASSERT_PTR_NULL(results_summary_scenario(s, "nosection", "x"));
    CU_ASSERT_EQUAL(results_summary_end_ns(s), FIXTURE_END_NS);
    CU_ASSERT_EQUAL(json_array_get_length(s->ports), FIXTURE_NQ);
    CU_ASSERT_EQUAL(json_array_get_length(s->warnings), 2);
    results_summary_free(s);
    g_free(fct);

    /* Time series: the busiest queue is the incast port; its peak is max_queue_bytes. */
    p = g_build_filename(dir, "queues.csv", NULL);
    GPtrArray *q = results_series_scan(p, RESULTS_SERIES_QUEUES, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(q);
    CU_ASSERT_EQUAL(q->len, FIXTURE_NQ);
    results_series *top = g_ptr_array_index(q, 0);
    CU_ASSERT_STRING_EQUAL(top->key, "leaf0:1:3");
    CU_ASSERT_STRING_EQUAL(top->label, "leaf0 port 1 prio 3");
    CU_ASSERT_PTR_NULL(top->t);
    for (guint i = 1; i < q->len; i++)
        CU_ASSERT_TRUE(((results_series *)g_ptr_array_index(q, i - 1))->vmax >=
                       ((results_series *)g_ptr_array_index(q, i))->vmax);
    double vmax = top->vmax;
    guint64 samples = top->samples;
    g_ptr_array_set_size(q, 1);
    CU_ASSERT_TRUE(results_series_load(p, RESULTS_SERIES_QUEUES, q, &e));
    CU_ASSERT_EQUAL(top->t->len, samples);
    CU_ASSERT_EQUAL(top->vmax, vmax);
    double m = 0;
    for (guint i = 0; i < top->v->len; i++)
        m = fmax(m, g_array_index(top->v, double, i));
    CU_ASSERT_EQUAL(m, vmax);
    g_ptr_array_free(q, TRUE);
    g_free(p);
    test_rmtree(dir);
    g_free(dir);
}

static void test_series_hand(void)
{
    char *dir = test_tmpdir();
    /* flow 1 holds 10 for 10 ns then 20 for 20 ns: area 500; flow 2: 50 for 4 ns: area 200. */
    char *p = write_tmp(dir, "rates.csv", "t_ns,flow,rate_gbps\n0,1,10\n0,2,50\n4,2,0\n"
                                          "10,1,20\n30,1,0\n");
    GError *e = NULL;
    GPtrArray *r = results_series_scan(p, RESULTS_SERIES_RATES, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL_FATAL(r->len, 2);
    results_series *a = g_ptr_array_index(r, 0), *b = g_ptr_array_index(r, 1);
    CU_ASSERT_STRING_EQUAL(a->key, "1");   /* busiest by area, although flow 2 peaks higher */
    CU_ASSERT_DOUBLE_EQUAL(a->area, 500, 1e-9);
    CU_ASSERT_EQUAL(a->vmax, 20);
    CU_ASSERT_EQUAL(a->samples, 3);
    CU_ASSERT_EQUAL(a->t_first, 0);
    CU_ASSERT_EQUAL(a->t_last, 30);
    CU_ASSERT_DOUBLE_EQUAL(b->area, 200, 1e-9);
    g_ptr_array_free(r, TRUE);
    g_free(p);

    /* Time going backwards within a series is an error naming the line. */
    p = write_tmp(dir, "back.csv", "t_ns,flow,rate_gbps\n10,1,5\n5,1,6\n");
    CU_ASSERT_PTR_NULL(results_series_scan(p, RESULTS_SERIES_RATES, &e));
    CU_ASSERT_PTR_NOT_NULL(e && strstr(e->message, "back.csv:3: time 5 ns goes back"));
    g_clear_error(&e);
    g_free(p);
    test_rmtree(dir);
    g_free(dir);
}

static void test_summary_errors(void)
{
    char *dir = test_tmpdir();
    GError *e = NULL;
    CU_ASSERT_PTR_NULL(results_summary_read_dir(dir, &e));
    CU_ASSERT_TRUE(g_error_matches(e, G_FILE_ERROR, G_FILE_ERROR_NOENT));
    CU_ASSERT_PTR_NOT_NULL(e && strstr(e->message, "summary.json"));
    g_clear_error(&e);

    char *p = write_tmp(dir, "summary.json", "{\"metrics\": {\"drops\": 0,}\n");
    CU_ASSERT_PTR_NULL(results_summary_read(p, &e));
    CU_ASSERT_TRUE(g_error_matches(e, RESULTS_ERROR, RESULTS_ERROR_PARSE));
    CU_ASSERT_PTR_NOT_NULL(e && g_str_has_prefix(e->message, p));
    g_clear_error(&e);
    g_free(p);

    p = write_tmp(dir, "summary.json", "{\"metrics\": [1, 2]}");
    CU_ASSERT_PTR_NULL(results_summary_read(p, &e));
    CU_ASSERT_TRUE(g_error_matches(e, RESULTS_ERROR, RESULTS_ERROR_FORMAT));
    char *want = g_strdup_printf("%s: 'metrics' is an array, expected an object", p);
    CU_ASSERT_STRING_EQUAL(e ? e->message : "", want);
    g_free(want);
    g_clear_error(&e);
    g_free(p);

    p = write_tmp(dir, "summary.json", "[]");
    CU_ASSERT_PTR_NULL(results_summary_read(p, &e));
    CU_ASSERT_PTR_NOT_NULL(e && strstr(e->message, "expected an object"));
    g_clear_error(&e);
    g_free(p);
    test_rmtree(dir);
    g_free(dir);
}

static void expect_format(const char *key, double v, const char *want)
{
    char *s = metrics_format(key, v);
    if (strcmp(s, want))
        printf("\n  metrics_format(%s, %g) = '%s', expected '%s'", key, v, s, want);
    CU_ASSERT_STRING_EQUAL(s, want);
    g_free(s);
}

static void test_format(void)
{
    expect_format("fct_p99_ns", 850, "850 ns");
    expect_format("fct_p99_ns", 1234, "1.234 µs");
    expect_format("completion_ns", 2.5e6, "2.5 ms");
    expect_format("time_p50_us", 183.9, "183.9 µs");
    expect_format("wall_s", 0.224, "224 ms");
    expect_format("max_queue_bytes", 512, "512 B");
    expect_format("max_queue_bytes", 123456, "123.5 KB");
    expect_format("peak_rss_bytes", 48234496, "48.23 MB");
    expect_format("paused_fraction", 0.25, "25.00%");
    expect_format("utilisation", 0.9, "90.00%");
    expect_format("drops", 1234567, "1,234,567");
    expect_format("drops", 0, "0");
    expect_format("slowdown_p99", 1.5, "1.5×");
    expect_format("busbw_GBps", 75.25, "75.25 GB/s");
    expect_format("rate_gbps", 100, "100 Gb/s");
    expect_format("events_per_s", 21.5e6, "21.5 M/s");
    double scale;
    CU_ASSERT_EQUAL(metrics_key_kind("collective_time_p99_us", &scale), METRICS_KIND_TIME);
    CU_ASSERT_EQUAL(scale, 1000);
    CU_ASSERT_EQUAL(metrics_key_kind("ecn_marked", &scale), METRICS_KIND_COUNT);
    CU_ASSERT_STRING_EQUAL(metrics_key_label("fct_p99_ns"), "FCT p99");
    CU_ASSERT_PTR_NULL(metrics_key_label("something_new"));
}

/* Percentiles by selection equal the nearest-rank ones of the sorted array (qsort as the
 * reference), for random values, runs of equals, sorted and reversed input, and unsorted
 * requests. */
static void test_percentiles_by_selection(void)
{
    static const size_t sizes[] = { 0, 1, 2, 17, 100, 1000, 100003 };
    static const double ps[] = { 0, 1, 50, 90, 99, 99.9, 100 };
    const size_t np = G_N_ELEMENTS(ps);
    for (size_t si = 0; si < G_N_ELEMENTS(sizes); si++)
        for (int shape = 0; shape < 4; shape++) {
            size_t n = sizes[si];
            uint64_t *u = g_new(uint64_t, n + 1), *uref = g_new(uint64_t, n + 1);
            double *d = g_new(double, n + 1), *dref = g_new(double, n + 1);
            uint64_t x = 0x9e3779b97f4a7c15ull ^ n;
            for (size_t i = 0; i < n; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
                u[i] = shape == 0 ? x : shape == 1 ? x % 5 : shape == 2 ? i : n - i;
                d[i] = shape == 1 ? (double)(x % 3) - 1 : (double)(int64_t)(x >> 12) * 1e-3;
            }
            memcpy(uref, u, n * sizeof *u);
            memcpy(dref, d, n * sizeof *d);
            qsort(uref, n, sizeof *uref, stats_cmp_u64);
            qsort(dref, n, sizeof *dref, stats_cmp_dbl);
            uint64_t uq[G_N_ELEMENTS(ps)];
            double dq[G_N_ELEMENTS(ps)];
            stats_percentiles_u64(u, n, ps, np, uq);
            stats_percentiles(d, n, ps, np, dq);
            for (size_t k = 0; k < np; k++) {
                CU_ASSERT_EQUAL(uq[k], stats_percentile_u64(uref, n, ps[k]));
                if (n) {
                    CU_ASSERT_EQUAL(dq[k], stats_percentile(dref, n, ps[k]));
                } else {
                    CU_ASSERT_TRUE(isnan(dq[k]));
                }
            }
            /* requested out of order: each still right */
            static const double back[] = { 99, 50, 100, 0 };
            uint64_t bq[4];
            stats_percentiles_u64(u, n, back, 4, bq);
            for (size_t k = 0; k < 4; k++)
                CU_ASSERT_EQUAL(bq[k], stats_percentile_u64(uref, n, back[k]));
            /* the values are only reordered */
            qsort(u, n, sizeof *u, stats_cmp_u64);
            CU_ASSERT_EQUAL(memcmp(u, uref, n * sizeof *u), 0);
            g_free(u);
            g_free(uref);
            g_free(d);
            g_free(dref);
        }
}

static CU_TestInfo tests[] = {
    { "percentiles by selection equal those of the sorted array", test_percentiles_by_selection },
    { "percentile is nearest-rank", test_percentile_nearest_rank },
    { "sort (radix path) matches qsort", test_sort_large_against_qsort },
    { "sort and mean", test_sort_mean },
    { "CDF points and downsampling", test_cdf },
    { "busbw factors (nccl-tests)", test_busbw },
    { "sizes with units", test_parse_bytes },
    { "CSV reader and its errors", test_csv_reader },
    { "reading a results folder", test_read_fixture },
    { "series statistics by hand", test_series_hand },
    { "summary.json errors", test_summary_errors },
    { "human formatting", test_format },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("metrics", tests)
