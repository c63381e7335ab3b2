/* analysis/plot and analysis/report: figures from a results folder (with gnuplot, without it,
 * with missing and broken inputs), report.html, `rocesim plot`, and the headless-browser check
 * of the report (tests/report_screenshot.sh) when chromium is installed. */
#include <glib/gstdio.h>
#include <string.h>

#include "analysis/plot.h"
#include "analysis/report.h"
#include "cli/commands.h"
#include "results_io/format.h"
#include "tests/fixture_results.h"
#include "tests/testutil.h"

static char *read_text(const char *dir, const char *file)
{
    char *p = g_build_filename(dir, file, NULL);
    char *text = NULL;
    g_file_get_contents(p, &text, NULL, NULL);
    g_free(p);
    return text;
}

/* NAME.png has the PNG signature and NAME.svg is an SVG document. */
static gboolean figure_ok(const char *plots, const char *name)
{
    char *f = g_strdup_printf("%s.png", name);
    char *p = g_build_filename(plots, f, NULL);
    gchar *png = NULL;
    gsize len = 0;
    gboolean ok = g_file_get_contents(p, &png, &len, NULL) && len > 100 &&
                  !memcmp(png, "\x89PNG\r\n\x1a\n", 8);
    g_free(png);
    g_free(p);
    g_free(f);
    f = g_strdup_printf("%s.svg", name);
    char *svg = read_text(plots, f);
    ok = ok && svg && strstr(svg, "<svg") && strstr(svg, "</svg>");
    g_free(svg);
    g_free(f);
    return ok;
}

static gboolean exists(const char *dir, const char *name, const char *ext)
{
    char *f = g_strdup_printf("%s.%s", name, ext);
    char *p = g_build_filename(dir, f, NULL);
    gboolean ok = g_file_test(p, G_FILE_TEST_EXISTS);
    g_free(p);
    g_free(f);
    return ok;
}

static int run_plot_cmd(const char *dir)
{
    char *argv[] = { "plot", (char *)dir, NULL };
    return cmd_plot(2, argv);
}

static gboolean have_gnuplot(void)
{
    char *g = plot_find_gnuplot();
    gboolean ok = g != NULL;
    g_free(g);
    if (!ok)
        printf("\n  gnuplot not installed: the drawing checks cannot run (apt-get install "
               "gnuplot-nox)");
    return ok;
}

static void test_all_figures(void)
{
    CU_ASSERT_TRUE_FATAL(have_gnuplot());
    fixture_opts o = { 1.0, TRUE, "all-figures" };
    char *dir = fixture_tmp(&o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    GError *e = NULL;
    gboolean ok = plot_results(dir, &e);
    if (!ok)
        printf("\n  plot_results: %s", e->message);
    CU_ASSERT_TRUE(ok);
    g_clear_error(&e);
    char *plots = g_build_filename(dir, "plots", NULL);
    size_t n;
    const plot_desc *cat = plot_catalogue(&n);
    CU_ASSERT_EQUAL(n, 8);
    for (size_t i = 0; i < n; i++) {
        if (!figure_ok(plots, cat[i].name))
            printf("\n  figure %s missing or broken", cat[i].name);
        CU_ASSERT_TRUE(figure_ok(plots, cat[i].name));
        CU_ASSERT_TRUE(exists(plots, cat[i].name, "gp"));
    }
    /* Nothing skipped: only the comment line. */
    char *skipped = read_text(plots, "skipped.txt");
    CU_ASSERT_PTR_NOT_NULL_FATAL(skipped);
    guint lines = 0;
    for (const char *c = skipped; *c; c++)
        lines += *c == '\n';
    CU_ASSERT_EQUAL(lines, 1);
    CU_ASSERT_TRUE(g_str_has_prefix(skipped, "#"));
    g_free(skipped);

    /* The scenario's thresholds are drawn on the queue plot, parsed with their units. */
    char *gp = read_text(plots, "queue_depth.gp");
    CU_ASSERT_PTR_NOT_NULL(strstr(gp, "'ECN Kmin (100KB)'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(gp, "'ECN Kmax (400KB)'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(gp, "'PFC XOFF (600KiB)'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(gp, "614400/ydiv"));
    CU_ASSERT_PTR_NOT_NULL(strstr(gp, "6 busiest of 8 queues"));
    CU_ASSERT_PTR_NOT_NULL(strstr(gp, "'leaf0 port 1 prio 3'"));   /* busiest first */
    CU_ASSERT_PTR_NOT_NULL(strstr(gp, "set xlabel 'time (µs)'"));
    g_free(gp);
    /* PFC: host5 is still paused at the end, so its box runs to the end of the run. */
    char *dat = read_text(plots, "pfc_pauses.dat");
    CU_ASSERT_PTR_NOT_NULL(strstr(dat, "100000 200000 "));
    g_free(dat);
    /* The scripts re-run by hand from plots/. */
    char *cmd = g_strdup_printf("cd '%s' && rm fct_cdf.png && gnuplot fct_cdf.gp", plots);
    CU_ASSERT_EQUAL(test_run(cmd, NULL), 0);
    CU_ASSERT_TRUE(figure_ok(plots, "fct_cdf"));
    g_free(cmd);
    g_free(plots);
    test_rmtree(dir);
    g_free(dir);
}

static void test_missing_inputs_skipped(void)
{
    CU_ASSERT_TRUE_FATAL(have_gnuplot());
    char *dir = fixture_tmp(NULL);   /* counters.csv holds end-of-run totals only */
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    static const char *const gone[] = { "queues.csv", "rates.csv", "collectives.csv" };
    for (size_t i = 0; i < G_N_ELEMENTS(gone); i++) {
        char *p = g_build_filename(dir, gone[i], NULL);
        g_unlink(p);
        g_free(p);
    }
    char *p = g_build_filename(dir, "pfc.csv", NULL);
    g_file_set_contents(p, "", 0, NULL);   /* empty: no pauses */
    g_free(p);
    GError *e = NULL;
    gboolean ok = plot_results(dir, &e);
    if (!ok)
        printf("\n  plot_results: %s", e->message);
    CU_ASSERT_TRUE(ok);
    g_clear_error(&e);
    char *plots = g_build_filename(dir, "plots", NULL);
    CU_ASSERT_TRUE(figure_ok(plots, "fct_cdf"));
    CU_ASSERT_TRUE(figure_ok(plots, "slowdown_cdf"));
    CU_ASSERT_TRUE(figure_ok(plots, "utilisation"));
    static const char *const skipped[] = { "queue_depth", "flow_rates", "collectives",
                                           "pfc_pauses", "ecn_cnp" };
    for (size_t i = 0; i < G_N_ELEMENTS(skipped); i++) {
        CU_ASSERT_FALSE(exists(plots, skipped[i], "png"));
        CU_ASSERT_FALSE(exists(plots, skipped[i], "gp"));
    }
    char *why = read_text(plots, "skipped.txt");
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "queue_depth: no queues.csv\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "pfc_pauses: pfc.csv is empty (no pauses)\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "ecn_cnp: counters.csv holds end-of-run totals only"));
    g_free(why);

    /* The report lists what was not drawn and why. */
    CU_ASSERT_TRUE(report_write(dir, &e));
    char *html = read_text(dir, "report.html");
    CU_ASSERT_PTR_NOT_NULL(strstr(html, "<li>Queue depth over time: no queues.csv</li>"));
    g_free(html);

    /* Redrawing after the data came back removes nothing it should keep, and stale figures
     * of inputs that disappeared are removed. */
    fixture_results(dir, NULL);
    CU_ASSERT_TRUE(plot_results(dir, &e));
    g_clear_error(&e);
    CU_ASSERT_TRUE(figure_ok(plots, "queue_depth"));
    p = g_build_filename(dir, "queues.csv", NULL);
    g_unlink(p);
    g_free(p);
    CU_ASSERT_TRUE(plot_results(dir, &e));
    g_clear_error(&e);
    CU_ASSERT_FALSE(exists(plots, "queue_depth", "png"));
    g_free(plots);
    test_rmtree(dir);
    g_free(dir);
}

/* The PFC watchdog's rows (models/pfc.c): at a storm it logs watchdog-storm and then the
 * queue's resume, later watchdog-restore. The pause runs from the pause row to the resume
 * row, 40000 to 52000 ns, and the watchdog's rows neither end nor start one. */
static void test_watchdog_rows(void)
{
    CU_ASSERT_TRUE_FATAL(have_gnuplot());
    char *dir = fixture_tmp(NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    char *p = g_build_filename(dir, "pfc.csv", NULL);
    g_file_set_contents(p, "t_ns,node,port,prio,event,duration_ns\n40000,spine0,0,3,pause,0\n"
                           "52000,spine0,0,3,watchdog-storm,12000\n52000,spine0,0,3,resume,12000\n"
                           "252000,spine0,0,3,watchdog-restore,0\n", -1, NULL);
    GError *e = NULL;
    gboolean ok = plot_results(dir, &e);
    if (!ok)
        printf("\n  plot_results: %s", e->message);
    CU_ASSERT_TRUE(ok);
    g_clear_error(&e);
    char *plots = g_build_filename(dir, "plots", NULL);
    CU_ASSERT_TRUE(figure_ok(plots, "pfc_pauses"));
    char *dat = read_text(plots, "pfc_pauses.dat");
    CU_ASSERT_PTR_NOT_NULL(dat && strstr(dat, "40000 52000 "));
    g_free(dat);
    g_free(plots);
    g_free(p);
    test_rmtree(dir);
    g_free(dir);
}

static void test_bad_input_reported(void)
{
    CU_ASSERT_TRUE_FATAL(have_gnuplot());
    char *dir = fixture_tmp(NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    char *p = g_build_filename(dir, "pfc.csv", NULL);
    g_file_set_contents(p, "t_ns,node,port,prio,event,duration_ns\n40000,spine0,0,3,pause,0\n"
                           "52000,spine0,0,3,resume\n", -1, NULL);
    GError *e = NULL;
    CU_ASSERT_FALSE(plot_results(dir, &e));
    CU_ASSERT_TRUE(g_error_matches(e, PLOT_ERROR, PLOT_ERROR_INPUT));
    char *want = g_strdup_printf("%s:3: 5 fields, expected 6", p);
    CU_ASSERT_PTR_NOT_NULL(e && strstr(e->message, want));
    g_free(want);
    g_clear_error(&e);
    /* The other figures are still drawn. */
    char *plots = g_build_filename(dir, "plots", NULL);
    CU_ASSERT_TRUE(figure_ok(plots, "queue_depth"));
    CU_ASSERT_FALSE(exists(plots, "pfc_pauses", "png"));
    /* `rocesim plot` reports it as bad input but still writes the report. */
    char *rp = g_build_filename(dir, "report.html", NULL);
    g_unlink(rp);
    g_free(rp);
    CU_ASSERT_EQUAL(run_plot_cmd(dir), 2);
    char *html = read_text(dir, "report.html");
    CU_ASSERT_PTR_NOT_NULL(html);
    g_free(html);
    g_free(plots);
    g_free(p);
    test_rmtree(dir);
    g_free(dir);
}

static void test_without_gnuplot(void)
{
    char *dir = fixture_tmp(NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    char *empty = test_tmpdir();
    char *saved = g_strdup(g_getenv("PATH"));
    g_setenv("PATH", empty, TRUE);
    GError *e = NULL;
    gboolean ok = plot_results(dir, &e);
    CU_ASSERT_FALSE(ok);
    CU_ASSERT_TRUE(g_error_matches(e, PLOT_ERROR, PLOT_ERROR_NO_GNUPLOT));
    CU_ASSERT_STRING_EQUAL(e ? e->message : "",
                           "gnuplot not found: plots skipped (apt-get install gnuplot-nox)");
    g_clear_error(&e);
    /* Scripts are still written for a machine that has gnuplot; no image is. */
    char *plots = g_build_filename(dir, "plots", NULL);
    CU_ASSERT_TRUE(exists(plots, "queue_depth", "gp"));
    CU_ASSERT_TRUE(exists(plots, "queue_depth", "dat"));
    CU_ASSERT_FALSE(exists(plots, "queue_depth", "png"));
    /* The command warns and still writes the report; exit 0. */
    CU_ASSERT_EQUAL(run_plot_cmd(dir), 0);
    char *html = read_text(dir, "report.html");
    CU_ASSERT_PTR_NOT_NULL_FATAL(html);
    CU_ASSERT_PTR_NOT_NULL(strstr(html, "No figures yet"));
    CU_ASSERT_PTR_NULL(strstr(html, "<img "));
    g_free(html);
    /* report_results hands the message back as a warning. */
    char *warning = NULL;
    CU_ASSERT_TRUE(report_results(dir, NULL, &warning, &e));
    CU_ASSERT_PTR_NOT_NULL(warning && strstr(warning, "gnuplot not found"));
    g_free(warning);
    g_setenv("PATH", saved, TRUE);
    g_free(saved);
    g_free(plots);
    test_rmtree(empty);
    g_free(empty);
    test_rmtree(dir);
    g_free(dir);
}

static void test_report(void)
{
    CU_ASSERT_TRUE_FATAL(have_gnuplot());
    fixture_opts o = { 1.0, TRUE, "incast <b>&</b> \"allreduce\"" };
    char *dir = fixture_tmp(&o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    char *warning = NULL;
    GError *e = NULL;
    CU_ASSERT_TRUE_FATAL(report_results(dir, NULL, &warning, &e));
    CU_ASSERT_PTR_NULL(warning);
    char *html = read_text(dir, "report.html");
    CU_ASSERT_PTR_NOT_NULL_FATAL(html);
    /* Scenario name escaped, never raw markup. */
    CU_ASSERT_PTR_NOT_NULL(strstr(html, "<h1>incast &lt;b&gt;&amp;&lt;/b&gt; &quot;allreduce&quot;"
                                        "</h1>"));
    CU_ASSERT_PTR_NULL(strstr(html, "<b>&</b>"));
    /* Warnings box, headline values with units, jobs and ports, engine. */
    CU_ASSERT_PTR_NOT_NULL(strstr(html, "2 warnings"));
    CU_ASSERT_PTR_NOT_NULL(strstr(html, "host5 port 0 prio 3 was still paused"));
    CU_ASSERT_PTR_NOT_NULL(strstr(html, ">75.25 GB/s<"));
    CU_ASSERT_PTR_NOT_NULL(strstr(html, ">1,800<"));
    CU_ASSERT_PTR_NOT_NULL(strstr(html, "<h2>Jobs</h2>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(html, "<h2>Busiest ports</h2>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(html, ">21.5 M/s<"));
    /* Every figure embedded: self-contained. */
    int imgs = 0;
    for (const char *s = html; (s = strstr(s, "<img ")); s++)
        imgs++;
    CU_ASSERT_EQUAL(imgs, 8);
    int embedded = 0;
    for (const char *s = html; (s = strstr(s, "src=\"data:image/png;base64,iVBORw0KGgo")); s++)
        embedded++;
    CU_ASSERT_EQUAL(embedded, 8);
    g_free(html);

    /* A lossless drop the run forgot to warn about still shows, in the red box. */
    char *js = read_text(dir, "summary.json");
    char *fixed = NULL;
    {
        GString *g = g_string_new(js);
        g_string_replace(g, "\"drops_lossless\": 0", "\"drops_lossless\": 3", 1);
        fixed = g_string_free(g, FALSE);
    }
    char *p = g_build_filename(dir, "summary.json", NULL);
    g_file_set_contents(p, fixed, -1, NULL);
    CU_ASSERT_TRUE(report_write(dir, &e));
    html = read_text(dir, "report.html");
    CU_ASSERT_PTR_NOT_NULL(strstr(html, "<div class=\"box bad\"><h2>⚠ 3 warnings</h2>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(html, "3 packets dropped on a lossless priority"));
    g_free(html);
    g_free(p);
    g_free(js);
    g_free(fixed);

    /* The page renders in a browser with every image loaded (needs chromium). */
    if (!g_file_test("tests/report_screenshot.sh", G_FILE_TEST_IS_EXECUTABLE)) {
        CU_FAIL("tests/report_screenshot.sh not found: run the suite from the repository root");
    } else {
        char *shot = g_build_filename(dir, "shot.png", NULL);
        char *cmd = g_strdup_printf("tests/report_screenshot.sh '%s' '%s'", dir, shot);
        char *out = NULL;
        int rc = test_run(cmd, &out);
        if (rc == 77) {
            printf("\n  chromium not installed: browser check skipped");
        } else {
            if (rc != 0)
                printf("\n  %s", out);
            CU_ASSERT_EQUAL(rc, 0);
            CU_ASSERT_PTR_NOT_NULL(strstr(out, "8 of 8 images loaded"));
            /* ... and the check fails on a page with a broken image. */
            char *page = read_text(dir, "report.html");
            GString *g = g_string_new(page);
            g_string_replace(g, "</main>", "<img src=\"plots/none.svg\" data-name=\"none\"></main>",
                             1);
            char *bad = g_build_filename(dir, "broken.html", NULL);
            g_file_set_contents(bad, g->str, -1, NULL);
            g_free(out);
            g_free(cmd);
            cmd = g_strdup_printf("tests/report_screenshot.sh '%s' '%s'", bad, shot);
            CU_ASSERT_EQUAL(test_run(cmd, &out), 1);
            CU_ASSERT_PTR_NOT_NULL(strstr(out, "images that did not load: none"));
            g_string_free(g, TRUE);
            g_free(page);
            g_free(bad);
        }
        g_free(out);
        g_free(cmd);
        g_free(shot);
    }
    test_rmtree(dir);
    g_free(dir);
}

static void test_plot_cmd_errors(void)
{
    char *dir = test_tmpdir();
    char *missing = g_build_filename(dir, "nope", NULL);
    CU_ASSERT_EQUAL(run_plot_cmd(missing), 2);
    CU_ASSERT_EQUAL(run_plot_cmd(dir), 2);   /* no summary.json */
    char *p = g_build_filename(dir, "summary.json", NULL);
    g_file_set_contents(p, "{\"metrics\": ", -1, NULL);
    CU_ASSERT_EQUAL(run_plot_cmd(dir), 2);
    char *argv[] = { "plot", NULL };
    CU_ASSERT_EQUAL(cmd_plot(1, argv), 2);
    GError *e = NULL;
    CU_ASSERT_FALSE(report_write(dir, &e));
    CU_ASSERT_PTR_NOT_NULL(e && strstr(e->message, "summary.json"));
    g_clear_error(&e);
    CU_ASSERT_FALSE(plot_results(missing, &e));
    CU_ASSERT_TRUE(g_error_matches(e, PLOT_ERROR, PLOT_ERROR_INPUT));
    g_clear_error(&e);
    g_free(p);
    g_free(missing);
    test_rmtree(dir);
    g_free(dir);
}

static void test_decimation_keeps_peaks(void)
{
    /* 100k samples of a square wave with one spike: decimated output is much shorter and
     * still holds the spike and the extremes. */
    results_series s = { .key = "k", .label = "k" };
    s.t = g_array_new(FALSE, FALSE, sizeof(double));
    s.v = g_array_new(FALSE, FALSE, sizeof(double));
    for (int i = 0; i < 100000; i++) {
        double t = i * 10.0, v = (i / 500) % 2 ? 1000 : 0;
        if (i == 54321)
            v = 99999;
        g_array_append_val(s.t, t);
        g_array_append_val(s.v, v);
    }
    GString *dat = g_string_new(NULL);
    plot_dat_series(dat, &s, 1000, 2e6);
    guint lines = 0;
    for (const char *c = dat->str; *c; c++)
        lines += *c == '\n';
    CU_ASSERT_TRUE(lines < 4100);
    CU_ASSERT_PTR_NOT_NULL(strstr(dat->str, "\n543210 99999\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(dat->str, "\n2000000 1000\n"));   /* held to t_end */
    CU_ASSERT_TRUE(g_str_has_suffix(dat->str, "\n\n\n"));
    g_string_free(dat, TRUE);
    g_array_free(s.t, TRUE);
    g_array_free(s.v, TRUE);
}

/* The ECN/CNP figure attributes each increment to the sampling interval it happened in:
 * counters.csv (cumulative, written only when a value changed) has ecn_marked at 20 us (5),
 * 100 us (12) and at the end, 200 us (12, unchanged), with counter_sample = 10 us. The plotted
 * series must be 5 in (10, 20] us, 7 in (90, 100] us, 0 in every other interval (not 7 spread
 * over (20, 100]), and sum to the total, 12. */
/* The fixture with counters.csv as given and the scenario's [output] counter_sample. */
static char *counter_fixture(const char *counters, const char *sample)
{
    char *dir = fixture_tmp(NULL);
    char *p = g_build_filename(dir, "counters.csv", NULL);
    g_file_set_contents(p, counters, -1, NULL);
    g_free(p);
    p = g_build_filename(dir, "summary.json", NULL);
    char *text = NULL;
    g_file_get_contents(p, &text, NULL, NULL);
    GString *g = g_string_new(text);
    char *with = g_strdup_printf("\"output\": {\"counter_sample\": \"%s\"}, \"scenario\": {\"name\"", sample);
    CU_ASSERT_EQUAL(g_string_replace(g, "\"scenario\": {\"name\"", with, 1), 1);
    g_file_set_contents(p, g->str, -1, NULL);
    g_free(with);
    g_string_free(g, TRUE);
    g_free(text);
    g_free(p);
    return dir;
}

/* Plots DIR and returns the ECN/CNP figure's data (NULL if none). */
static char *plotted_counters(const char *dir)
{
    GError *e = NULL;
    plot_results(dir, &e);
    g_clear_error(&e);
    char *plots = g_build_filename(dir, "plots", NULL);
    char *dat = read_text(plots, "ecn_cnp.dat");
    g_free(plots);
    return dat;
}

static void test_counter_intervals(void)
{
    char *dir = counter_fixture("t_ns,node,port,counter,value\n20000,leaf0,1,ecn_marked,5\n"
                                "100000,leaf0,1,ecn_marked,12\n200000,leaf0,1,ecn_marked,12\n", "10us");
    char *dat = plotted_counters(dir);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dat);
    char **lines = g_strsplit(dat, "\n", -1);
    double sum = 0;
    int intervals = 0, nonzero = 0;
    gboolean in_block = FALSE;
    for (char **l = lines; *l; l++) {
        if (g_str_has_prefix(*l, "# ecn_marked")) {
            in_block = TRUE;
            continue;
        }
        if (!in_block || **l == '#')
            continue;
        if (!**l)
            break; /* end of the block */
        double t, v;
        if (sscanf(*l, "%lf %lf", &t, &v) != 2)
            continue;
        if (t >= 200000) /* the right edge of the last step repeats its value */
            continue;
        intervals++;
        sum += v;
        nonzero += v != 0;
        double want = t == 10000 ? 5 : t == 90000 ? 7 : 0;
        CU_ASSERT_DOUBLE_EQUAL(v, want, 1e-9);
    }
    CU_ASSERT_EQUAL(intervals, 20);
    CU_ASSERT_EQUAL(nonzero, 2);
    CU_ASSERT_DOUBLE_EQUAL(sum, 12, 1e-9);
    g_strfreev(lines);
    g_free(dat);
    test_rmtree(dir);
    g_free(dir);
}

/* A summary.json whose counter_sample is not a time (a hand-edited folder): the period comes
 * from the samples' smallest gap, as without one (it once crashed plot: the parse's message
 * went through a NULL pointer). */
static void test_counter_sample_not_a_time(void)
{
    char *dir = counter_fixture("t_ns,node,port,counter,value\n20000,leaf0,1,ecn_marked,5\n"
                                "100000,leaf0,1,ecn_marked,12\n", "fast");
    char *dat = plotted_counters(dir);
    CU_ASSERT_PTR_NOT_NULL(dat);
    g_free(dat);
    test_rmtree(dir);
    g_free(dir);
}

/* A finished flow's rate line ends when it finishes: rates.csv has flow 3 at 50 Gb/s from 0,
 * 40 from 100 us and an empty rate at 150 us (nothing left to send), in a 200 us run. Its
 * plotted series holds 40 up to 150 us and has no finite point after it; flow 4, still
 * sending, is drawn to the end of the run. */
static void test_rate_line_ends(void)
{
    char *dir = fixture_tmp(NULL);
    char *p = g_build_filename(dir, "rates.csv", NULL);
    g_file_set_contents(p, "t_ns,flow,rate_gbps\n0,3,50.0000\n0,4,20.0000\n100000,3,40.0000\n150000,3,\n", -1, NULL);
    g_free(p);
    GError *e = NULL;
    plot_results(dir, &e);
    g_clear_error(&e);
    char *plots = g_build_filename(dir, "plots", NULL);
    char *dat = read_text(plots, "flow_rates.dat");
    CU_ASSERT_PTR_NOT_NULL_FATAL(dat);
    char **blocks = g_strsplit(dat, "\n\n\n", -1);
    int seen = 0;
    for (char **b = blocks; *b; b++) {
        gboolean f3 = strstr(*b, "# flow 3:") != NULL, f4 = strstr(*b, "# flow 4:") != NULL;
        if (!f3 && !f4)
            continue;
        seen++;
        double last_finite_t = -1, held = -1;
        char **lines = g_strsplit(*b, "\n", -1);
        for (char **l = lines; *l; l++) {
            double t;
            char v[32];
            if (**l == '#' || sscanf(*l, "%lf %31s", &t, v) != 2)
                continue;
            if (strcmp(v, "NaN")) {
                last_finite_t = t;
                held = g_ascii_strtod(v, NULL);
            }
        }
        g_strfreev(lines);
        if (f3) {
            CU_ASSERT_DOUBLE_EQUAL(last_finite_t, 150000, 1e-6);
            CU_ASSERT_DOUBLE_EQUAL(held, 40, 1e-9);
            CU_ASSERT_PTR_NOT_NULL(strstr(*b, "150000 NaN"));
        } else {
            CU_ASSERT_DOUBLE_EQUAL(last_finite_t, 200000, 1e-6); /* to the end of the run */
        }
    }
    CU_ASSERT_EQUAL(seen, 2);
    g_strfreev(blocks);
    g_free(dat);
    g_free(plots);
    test_rmtree(dir);
    g_free(dir);
}

/* A run stopped before any transfer completed: its transfers.csv has rows, none with an end.
 * No FCT or slowdown figure (a CDF of nothing), and skipped.txt says why. */
static void test_nothing_completed(void)
{
    CU_ASSERT_TRUE_FATAL(have_gnuplot());
    char *dir = fixture_tmp(NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    char *p = g_build_filename(dir, "transfers.csv", NULL);
    const char *rows = RESULTS_TRANSFERS_HEADER "\n0,0,3,10000000,3,0,,,820441,\n1,1,2,10000000,3,0,,,820441,\n";
    CU_ASSERT_TRUE_FATAL(g_file_set_contents(p, rows, -1, NULL));
    g_free(p);
    GError *e = NULL;
    CU_ASSERT_TRUE(plot_results(dir, &e));
    g_clear_error(&e);
    char *plots = g_build_filename(dir, "plots", NULL);
    CU_ASSERT_FALSE(exists(plots, "fct_cdf", "png"));
    CU_ASSERT_FALSE(exists(plots, "slowdown_cdf", "png"));
    CU_ASSERT_TRUE(figure_ok(plots, "utilisation"));
    char *why = read_text(plots, "skipped.txt");
    CU_ASSERT_PTR_NOT_NULL(why && strstr(why, "fct_cdf: transfers.csv has no completed transfer\n"));
    CU_ASSERT_PTR_NOT_NULL(why && strstr(why, "slowdown_cdf: transfers.csv has no completed transfer\n"));
    g_free(why);
    g_free(plots);
    test_rmtree(dir);
    g_free(dir);
}

static CU_TestInfo tests[] = {
    { "a finished flow's rate line ends at its end", test_rate_line_ends },
    { "ECN/CNP counts land in their own sampling interval", test_counter_intervals },
    { "a counter_sample that is not a time: the samples' gap instead, no crash", test_counter_sample_not_a_time },
    { "every figure drawn as PNG and SVG", test_all_figures },
    { "missing or empty inputs are skipped", test_missing_inputs_skipped },
    { "no transfer completed: no FCT or slowdown figure, and why", test_nothing_completed },
    { "PFC watchdog rows: the pause ends at its resume", test_watchdog_rows },
    { "a malformed CSV is reported with file and line", test_bad_input_reported },
    { "without gnuplot: clear message, scripts kept", test_without_gnuplot },
    { "report.html content and browser check", test_report },
    { "rocesim plot bad input", test_plot_cmd_errors },
    { "decimation keeps peaks", test_decimation_keeps_peaks },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("plot", tests)
