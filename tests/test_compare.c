/* `rocesim compare`: self-comparison, tolerance, floors, one-sided metrics, bad input, and the
 * files it writes (compare.json, compare.html, overlay figures). */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "analysis/metrics.h"
#include "analysis/plot.h"
#include "cli/commands.h"
#include "tests/fixture_results.h"
#include "tests/testutil.h"

/* Runs cmd_compare with the given arguments (NULL-terminated); its stderr is kept in
 * last_stderr and its stdout in *out (when out is not NULL). Both are echoed to the log. */
static char *last_stderr;

static int redirect(int fd, char **path)
{
    *path = g_build_filename(g_get_tmp_dir(), "rocesim-compare-out-XXXXXX", NULL);
    int tmp = g_mkstemp(*path);
    int saved = dup(fd);
    dup2(tmp, fd);
    close(tmp);
    return saved;
}

static char *restore(int fd, int saved, char *path)
{
    dup2(saved, fd);
    close(saved);
    char *text = NULL;
    g_file_get_contents(path, &text, NULL, NULL);
    g_unlink(path);
    g_free(path);
    return text ? text : g_strdup("");
}

static int compare(char **out, ...)
{
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, "compare");
    va_list ap;
    va_start(ap, out);
    const char *a;
    while ((a = va_arg(ap, const char *)))
        g_ptr_array_add(argv, (gpointer)a);
    va_end(ap);
    g_ptr_array_add(argv, NULL);

    char *po, *pe;
    fflush(stdout);
    fflush(stderr);
    int so = redirect(STDOUT_FILENO, &po), se = redirect(STDERR_FILENO, &pe);
    int rc = cmd_compare((int)argv->len - 1, (char **)argv->pdata);
    fflush(stdout);
    fflush(stderr);
    char *text = restore(STDOUT_FILENO, so, po);
    g_free(last_stderr);
    last_stderr = restore(STDERR_FILENO, se, pe);
    fputs(text, stdout);
    fputs(last_stderr, stdout);
    if (out)
        *out = text;
    else
        g_free(text);
    g_ptr_array_free(argv, TRUE);
    return rc;
}

/* The last command's stderr contains `want`. */
static gboolean said(const char *want)
{
    gboolean ok = last_stderr && strstr(last_stderr, want);
    if (!ok)
        printf("\n  expected on stderr: %s\n  got: %s", want, last_stderr ? last_stderr : "");
    return ok;
}

static JsonObject *load_json(JsonParser *p, const char *dir)
{
    char *path = g_build_filename(dir, "compare.json", NULL);
    gboolean ok = json_parser_load_from_file(p, path, NULL);
    g_free(path);
    return ok ? json_node_get_object(json_parser_get_root(p)) : NULL;
}

/* The row of compare.json with this name, or NULL. */
static JsonObject *row(JsonObject *root, const char *name)
{
    JsonArray *rows = json_object_get_array_member(root, "rows");
    for (guint i = 0; i < json_array_get_length(rows); i++) {
        JsonObject *r = json_array_get_object_element(rows, i);
        if (!strcmp(json_object_get_string_member(r, "name"), name))
            return r;
    }
    return NULL;
}

/* Replaces the first occurrence of `from` in DIR/summary.json. */
static void edit_summary(const char *dir, const char *from, const char *to)
{
    char *p = g_build_filename(dir, "summary.json", NULL);
    char *text = NULL;
    g_file_get_contents(p, &text, NULL, NULL);
    GString *g = g_string_new(text);
    CU_ASSERT_EQUAL(g_string_replace(g, from, to, 1), 1);
    g_file_set_contents(p, g->str, -1, NULL);
    g_string_free(g, TRUE);
    g_free(text);
    g_free(p);
}

static void test_self_compare(void)
{
    char *dir = fixture_tmp(NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    char *out = NULL;
    CU_ASSERT_EQUAL(compare(&out, dir, dir, NULL), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "verdict: SAME: all "));
    CU_ASSERT_PTR_NULL(strstr(out, "  *\n"));
    g_free(out);
    /* Default output folder: DIR_B/compare-vs-<name of A>. */
    char *base = g_path_get_basename(dir);
    char *sub = g_strdup_printf("compare-vs-%s", base);
    char *outdir = g_build_filename(dir, sub, NULL);
    JsonParser *p = json_parser_new();
    JsonObject *root = load_json(p, outdir);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    CU_ASSERT_EQUAL(json_object_get_int_member(root, "out_of_tolerance"), 0);
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(root, "verdict"), "same");
    /* 25 metrics + 2 jobs x 4 + 8 ports x 2. */
    CU_ASSERT_EQUAL(json_object_get_int_member(root, "compared"), 25 + 8 + 16);
    CU_ASSERT_EQUAL(json_object_get_int_member(root, "one_sided"), 0);
    JsonArray *rows = json_object_get_array_member(root, "rows");
    for (guint i = 0; i < json_array_get_length(rows); i++) {
        JsonObject *r = json_array_get_object_element(rows, i);
        CU_ASSERT_EQUAL(json_object_get_double_member(r, "diff"), 0);
        CU_ASSERT_FALSE(json_object_get_boolean_member(r, "out_of_tolerance"));
    }
    /* engine figures are not compared. */
    CU_ASSERT_PTR_NULL(row(root, "events_per_s"));
    CU_ASSERT_PTR_NULL(row(root, "wall_s"));
    CU_ASSERT_PTR_NOT_NULL(row(root, "port leaf0:1 max_queue_bytes"));
    CU_ASSERT_PTR_NOT_NULL(row(root, "job ar time_p99_us"));
    g_object_unref(p);
    char *html = g_build_filename(outdir, "compare.html", NULL);
    CU_ASSERT_TRUE(g_file_test(html, G_FILE_TEST_IS_REGULAR));
    g_free(html);
    char *g = plot_find_gnuplot();
    if (g) {   /* overlays need gnuplot */
        static const char *const figs[] = { "overlay_fct_cdf.png", "overlay_queue.svg",
                                            "overlay_rates.png" };
        for (size_t i = 0; i < G_N_ELEMENTS(figs); i++) {
            char *f = g_build_filename(outdir, figs[i], NULL);
            CU_ASSERT_TRUE(g_file_test(f, G_FILE_TEST_IS_REGULAR));
            g_free(f);
        }
    }
    g_free(g);
    g_free(outdir);
    g_free(sub);
    g_free(base);
    test_rmtree(dir);
    g_free(dir);
}

static void test_tolerance(void)
{
    char *a = fixture_tmp(NULL);
    fixture_opts ob = { 1.3, FALSE, NULL };   /* max_queue_bytes 30% higher in B */
    char *b = fixture_tmp(&ob);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    char *outdir = g_build_filename(b, "cmp", NULL);
    char *out = NULL;
    CU_ASSERT_EQUAL(compare(&out, a, b, "--tolerance", "0.05", "-o", outdir, NULL), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "verdict: DIFFERENT: 2 of "));
    /* The row is marked on the terminal, with +30.0%. */
    const char *line = strstr(out, "\nmax_queue_bytes ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(line);
    char *eol = strchr(line + 1, '\n');
    char *l = g_strndup(line + 1, (gsize)(eol - line - 1));
    CU_ASSERT_PTR_NOT_NULL(strstr(l, "+30.0%"));
    CU_ASSERT_TRUE(g_str_has_suffix(l, "  *"));
    g_free(l);
    g_free(out);
    JsonParser *p = json_parser_new();
    JsonObject *root = load_json(p, outdir);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    JsonObject *r = row(root, "max_queue_bytes");
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_TRUE(json_object_get_boolean_member(r, "out_of_tolerance"));
    CU_ASSERT_DOUBLE_EQUAL(json_object_get_double_member(r, "rel"), 0.3, 0.01);
    CU_ASSERT_TRUE(json_object_get_boolean_member(row(root, "port leaf0:1 max_queue_bytes"),
                                                  "out_of_tolerance"));
    CU_ASSERT_FALSE(json_object_get_boolean_member(row(root, "p99_queue_bytes"),
                                                   "out_of_tolerance"));
    CU_ASSERT_EQUAL(json_object_get_int_member(root, "out_of_tolerance"), 2);
    g_object_unref(p);

    CU_ASSERT_EQUAL(compare(NULL, a, b, "--tolerance", "0.5", "-o", outdir, NULL), 0);
    CU_ASSERT_EQUAL(compare(NULL, a, b, "--tolerance", "29%", "-o", outdir, NULL), 1);
    CU_ASSERT_EQUAL(compare(NULL, a, b, "--tolerance", "31%", "-o", outdir, NULL), 0);
    CU_ASSERT_EQUAL(compare(NULL, a, b, "-o", outdir, NULL), 1);   /* default 5% */
    /* A per-metric floor of 100 KB accepts the 90 KB difference. */
    CU_ASSERT_EQUAL(compare(NULL, a, b, "--floor", "max_queue_bytes=100000", "-o", outdir, NULL),
                    0);
    g_free(outdir);
    test_rmtree(a);
    test_rmtree(b);
    g_free(a);
    g_free(b);
}

static void test_floors(void)
{
    char *a = fixture_tmp(NULL);
    char *b = fixture_tmp(NULL);
    char *outdir = g_build_filename(b, "cmp", NULL);
    /* One drop where A had none: a count has no floor, so it is a difference. */
    edit_summary(b, "\"drops\": 0, \"drops_lossless\"", "\"drops\": 1, \"drops_lossless\"");
    CU_ASSERT_EQUAL(compare(NULL, a, b, "-o", outdir, NULL), 1);
    CU_ASSERT_EQUAL(compare(NULL, a, b, "--floor", "drops=1", "-o", outdir, NULL), 0);
    CU_ASSERT_EQUAL(compare(NULL, a, b, "--floor", "count=1", "-o", outdir, NULL), 0);
    edit_summary(b, "\"drops\": 1, \"drops_lossless\"", "\"drops\": 0, \"drops_lossless\"");
    /* Paused fraction 0.0179 -> 0.0186: +3.9% is within 5%; 0 -> 0.0005 is under the
     * fraction floor (0.001) although infinitely larger. */
    edit_summary(b, "\"paused_fraction\": 0.0179", "\"paused_fraction\": 0.0186");
    CU_ASSERT_EQUAL(compare(NULL, a, b, "-o", outdir, NULL), 0);
    edit_summary(a, "\"paused_fraction\": 0.0179", "\"paused_fraction\": 0");
    edit_summary(b, "\"paused_fraction\": 0.0186", "\"paused_fraction\": 0.0005");
    CU_ASSERT_EQUAL(compare(NULL, a, b, "-o", outdir, NULL), 0);
    CU_ASSERT_EQUAL(compare(NULL, a, b, "--floor", "fraction=0", "-o", outdir, NULL), 1);
    CU_ASSERT_EQUAL(compare(NULL, a, b, "--floor", "all=0", "--tolerance", "0", "-o", outdir,
                            NULL), 1);
    /* Times: 100 ns floor. fct_p50_ns + 80 ns on a 47 µs value is within anyway; a +80 ns
     * change of a 0 ns metric is within the floor; +150 ns is not. */
    edit_summary(a, "\"timeouts\": 0", "\"timeouts\": 0, \"idle_ns\": 0");
    edit_summary(b, "\"timeouts\": 0", "\"timeouts\": 0, \"idle_ns\": 80");
    CU_ASSERT_EQUAL(compare(NULL, a, b, "-o", outdir, NULL), 0);
    edit_summary(b, "\"idle_ns\": 80", "\"idle_ns\": 150");
    CU_ASSERT_EQUAL(compare(NULL, a, b, "-o", outdir, NULL), 1);
    CU_ASSERT_EQUAL(compare(NULL, a, b, "--floor", "time=200", "-o", outdir, NULL), 0);
    edit_summary(b, "\"idle_ns\": 150", "\"idle_ns\": 0");
    /* Bytes: a queue of 8 KB against 16 KB (+100%) is under the 10 KB floor. */
    edit_summary(b, "\"max_queue_bytes\": 8000", "\"max_queue_bytes\": 16000");
    CU_ASSERT_EQUAL(compare(NULL, a, b, "-o", outdir, NULL), 0);
    CU_ASSERT_EQUAL(compare(NULL, a, b, "--floor", "bytes=0", "-o", outdir, NULL), 1);
    g_free(outdir);
    test_rmtree(a);
    test_rmtree(b);
    g_free(a);
    g_free(b);
}

static void test_one_sided(void)
{
    char *a = fixture_tmp(NULL);
    char *b = fixture_tmp(NULL);
    char *outdir = g_build_filename(b, "cmp", NULL);
    /* A lab run without switch queue figures still compares; the gap is reported. */
    edit_summary(b, "\"max_queue_bytes\": ", "\"max_queue_bytes_unused\": ");
    char *out = NULL;
    CU_ASSERT_EQUAL(compare(&out, a, b, "-o", outdir, NULL), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "2 present in one run only"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "only in A"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "only in B"));
    g_free(out);
    JsonParser *p = json_parser_new();
    JsonObject *root = load_json(p, outdir);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    JsonObject *r = row(root, "max_queue_bytes");
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_TRUE(json_object_get_null_member(r, "b"));
    CU_ASSERT_EQUAL(json_object_get_int_member(root, "one_sided"), 2);
    g_object_unref(p);
    g_free(outdir);
    test_rmtree(a);
    test_rmtree(b);
    g_free(a);
    g_free(b);
}

static void test_bad_input(void)
{
    char *a = fixture_tmp(NULL);
    char *tmp = test_tmpdir();
    char *missing = g_build_filename(tmp, "no-such-run", NULL);
    char *want = g_strdup_printf("rocesim compare: %s: no such results folder\n", missing);
    CU_ASSERT_EQUAL(compare(NULL, a, missing, NULL), 2);
    CU_ASSERT_TRUE(said(want));
    CU_ASSERT_EQUAL(compare(NULL, missing, a, NULL), 2);
    CU_ASSERT_TRUE(said(want));
    g_free(want);
    char *p = g_build_filename(tmp, "summary.json", NULL);
    CU_ASSERT_EQUAL(compare(NULL, tmp, a, NULL), 2);   /* a folder without summary.json */
    want = g_strdup_printf("rocesim compare: %s: No such file or directory", p);
    CU_ASSERT_TRUE(said(want));
    g_free(want);
    g_file_set_contents(p, "{\"metrics\": {\"drops\": 0", -1, NULL);
    CU_ASSERT_EQUAL(compare(NULL, a, tmp, NULL), 2);   /* truncated JSON: file and line */
    want = g_strdup_printf("rocesim compare: %s:1:", p);
    CU_ASSERT_TRUE(said(want));
    g_free(want);
    g_file_set_contents(p, "{\"engine\": {}}", -1, NULL);
    CU_ASSERT_EQUAL(compare(NULL, a, tmp, NULL), 2);   /* no metrics */
    want = g_strdup_printf("rocesim compare: %s: no \"metrics\" object", p);
    CU_ASSERT_TRUE(said(want));
    g_free(want);
    CU_ASSERT_EQUAL(compare(NULL, a, NULL), 2);        /* one folder */
    CU_ASSERT_TRUE(said("expected two results folders"));
    CU_ASSERT_EQUAL(compare(NULL, a, a, "--tolerance", "lots", NULL), 2);
    CU_ASSERT_TRUE(said("--tolerance 'lots': expected a non-negative number"));
    CU_ASSERT_EQUAL(compare(NULL, a, a, "--tolerance", "-0.1", NULL), 2);
    CU_ASSERT_EQUAL(compare(NULL, a, a, "--floor", "time", NULL), 2);
    CU_ASSERT_TRUE(said("--floor 'time': expected KIND=VALUE or METRIC=VALUE"));
    CU_ASSERT_EQUAL(compare(NULL, a, a, "--bogus", NULL), 2);
    /* Bad input writes nothing. */
    char *base = g_path_get_basename(tmp);
    char *sub = g_strdup_printf("compare-vs-%s", base);
    char *outdir = g_build_filename(a, sub, NULL);
    CU_ASSERT_FALSE(g_file_test(outdir, G_FILE_TEST_EXISTS));
    g_free(outdir);
    g_free(sub);
    g_free(base);
    g_free(p);
    g_free(missing);
    test_rmtree(tmp);
    g_free(tmp);
    test_rmtree(a);
    g_free(a);
}

/* Direction: what each metric means for "better" (metrics_key_direction's table). */
static void test_directions(void)
{
    const char *lower[] = { "fct_p99_ns", "completion_ns", "slowdown_p50", "drops", "drops_prio3", "paused_fraction",
                            "max_queue_bytes", "timeouts", "retransmitted_packets", "pause_frames",
                            "collective_time_p99_us", "time_p99_us", "paused_ns" };
    const char *higher[] = { "busbw_GBps", "algbw_GBps", "utilisation", "transfers_completed" };
    const char *neither[] = { "ecn_marked", "cnp_sent", "cnp_handled", "bytes", "transfers", "ranks" };
    for (size_t i = 0; i < G_N_ELEMENTS(lower); i++)
        CU_ASSERT_EQUAL(metrics_key_direction(lower[i]), METRICS_LOWER_BETTER);
    for (size_t i = 0; i < G_N_ELEMENTS(higher); i++)
        CU_ASSERT_EQUAL(metrics_key_direction(higher[i]), METRICS_HIGHER_BETTER);
    for (size_t i = 0; i < G_N_ELEMENTS(neither); i++)
        CU_ASSERT_EQUAL(metrics_key_direction(neither[i]), METRICS_NEITHER);
}

/* Statistics against hand values: Student's t table (t_0.975: df 1 12.706, 4 2.776, 10 2.228,
 * 30 2.042, 60 2.000, 120 1.980), and Welch's test on {1,2,3} against {4,5,6}: means 2 and 5,
 * sd 1 each, se = sqrt(1/3 + 1/3) = 0.8165, df = (2/3)^2 / (2 (1/9)/2) = 4, so the threshold is
 * 2.776 x 0.8165 = 2.267: a difference of 3 is beyond the noise, 1.5 ({2.5,3.5,4.5}) is not. */
static void test_noise_statistics(void)
{
    CU_ASSERT_DOUBLE_EQUAL(metrics_t975(1), 12.706, 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(metrics_t975(4), 2.776, 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(metrics_t975(10), 2.228, 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(metrics_t975(30), 2.042, 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(metrics_t975(60), 2.000, 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(metrics_t975(120), 1.980, 1e-3);
    const double a[] = { 1, 2, 3 }, b[] = { 4, 5, 6 }, c[] = { 2.5, 3.5, 4.5 };
    metrics_stats sa = metrics_stats_of(a, 3), sb = metrics_stats_of(b, 3), sc = metrics_stats_of(c, 3);
    CU_ASSERT_DOUBLE_EQUAL(sa.mean, 2, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(sa.sd, 1, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(sa.ci95, 4.303 / sqrt(3), 1e-3); /* t(2) = 4.303 */
    CU_ASSERT_TRUE(metrics_differ_beyond_noise(&sa, &sb));
    CU_ASSERT_FALSE(metrics_differ_beyond_noise(&sa, &sc));
    metrics_stats one = metrics_stats_of(b, 1);
    CU_ASSERT_FALSE(metrics_differ_beyond_noise(&sa, &one)); /* no replicates, no noise estimate */
}

/* The value of `key` in DIR's metrics made `v` (the fixture writes fct_p99_ns once). */
static void set_fct_p99(const char *dir, const char *from, const char *to) { edit_summary(dir, from, to); }

/* compare decides: B with a lower FCT p99 is better; a higher one makes A better; with three
 * replicates a side whose spread covers the difference is "within noise" and exit 0. */
static void test_better_and_noise(void)
{
    char *a = fixture_tmp(NULL), *b = fixture_tmp(NULL);
    char *outdir = g_build_filename(b, "cmp", NULL);
    JsonParser *p = json_parser_new();
    char *text = NULL;
    char *summary = g_build_filename(a, "summary.json", NULL);
    g_file_get_contents(summary, &text, NULL, NULL);
    g_free(summary);
    const char *at = strstr(text, "\"fct_p99_ns\": ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    double fct = g_ascii_strtod(at + strlen("\"fct_p99_ns\": "), NULL);
    char *orig = g_strdup_printf("\"fct_p99_ns\": %.0f", fct); /* the fixture writes integers */
    char *lower = g_strdup_printf("\"fct_p99_ns\": %.0f", fct * 0.8);
    set_fct_p99(b, orig, lower);
    char *out = NULL;
    CU_ASSERT_EQUAL(compare(&out, a, b, "-o", outdir, NULL), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "overall: B is better"));
    g_free(out);
    JsonObject *root = load_json(p, outdir);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(row(root, "fct_p99_ns"), "better"), "b");
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(row(root, "fct_p99_ns"), "better_is"), "lower");
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(root, "better"), "b");
    /* the other way round: A is better */
    CU_ASSERT_EQUAL(compare(&out, b, a, "-o", outdir, NULL), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "overall: A is better"));
    g_free(out);

    /* replicates: A = {f, f, f}, B = {0.8 f, 1.2 f, 0.7 f}: B's mean 0.9 f is 10% lower (out of
     * the 5% tolerance), but its sd 0.2646 f gives se 0.1528 f with df 2 (t = 4.303): the
     * threshold 0.657 f is larger than 0.1 f, within the noise. B' = {0.8, 0.81, 0.79} f against
     * A' = {1, 1.01, 0.99} f: sd 0.01 f each, se 0.0082 f, df 4 (t = 2.776): 0.2 f is beyond. */
    char *b2 = fixture_tmp(NULL), *b3 = fixture_tmp(NULL), *a2 = fixture_tmp(NULL), *a3 = fixture_tmp(NULL);
    char *v12 = g_strdup_printf("\"fct_p99_ns\": %.0f", fct * 1.2), *v07 = g_strdup_printf("\"fct_p99_ns\": %.0f", fct * 0.7);
    set_fct_p99(b2, orig, v12);
    set_fct_p99(b3, orig, v07);
    CU_ASSERT_EQUAL(compare(&out, a, b, "--more-a", a2, "--more-a", a3, "--more-b", b2, "--more-b", b3, "-o", outdir,
                            NULL), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "less than the run-to-run noise"));
    g_free(out);
    root = load_json(p, outdir);
    CU_ASSERT_TRUE(json_object_get_boolean_member(row(root, "fct_p99_ns"), "within_noise"));
    CU_ASSERT_EQUAL(json_object_get_int_member(row(root, "fct_p99_ns"), "runs_b"), 3);
    char *v081 = g_strdup_printf("\"fct_p99_ns\": %.0f", fct * 0.81), *v079 = g_strdup_printf("\"fct_p99_ns\": %.0f", fct * 0.79);
    char *v101 = g_strdup_printf("\"fct_p99_ns\": %.0f", fct * 1.01), *v099 = g_strdup_printf("\"fct_p99_ns\": %.0f", fct * 0.99);
    set_fct_p99(b2, v12, v081);
    set_fct_p99(b3, v07, v079);
    set_fct_p99(a2, orig, v101);
    set_fct_p99(a3, orig, v099);
    CU_ASSERT_EQUAL(compare(&out, a, b, "--more-a", a2, "--more-a", a3, "--more-b", b2, "--more-b", b3, "-o", outdir,
                            NULL), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "overall: B is better"));
    g_free(out);
    /* a missing replicate folder is bad input */
    CU_ASSERT_EQUAL(compare(NULL, a, b, "--more-a", "/nonexistent/run", "-o", outdir, NULL), 2);
    CU_ASSERT(said("/nonexistent/run"));
    g_object_unref(p);
    const char *dirs[] = { a, b, a2, a3, b2, b3 };
    for (size_t i = 0; i < G_N_ELEMENTS(dirs); i++) {
        test_rmtree(dirs[i]);
        g_free((char *)dirs[i]);
    }
    g_free(v12);
    g_free(v07);
    g_free(v081);
    g_free(v079);
    g_free(v101);
    g_free(v099);
    g_free(lower);
    g_free(orig);
    g_free(text);
    g_free(outdir);
}

static CU_TestInfo tests[] = {
    { "metric directions", test_directions },
    { "mean, CI, Welch's test against hand values", test_noise_statistics },
    { "compare says which run is better, and what is noise", test_better_and_noise },
    { "a folder against itself", test_self_compare },
    { "tolerance decides the verdict", test_tolerance },
    { "absolute floors near zero", test_floors },
    { "metrics present in one run only", test_one_sided },
    { "bad input exits 2 and says why", test_bad_input },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("compare", tests)
