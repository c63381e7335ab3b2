/* A run draws report.html from a digest of its summary.json (results_io/summary_run.c: the
 * busiest ports only), not by parsing every port again. The page must be the one `rocesim plot`
 * draws from the file: the reference here is report_write on the installed folder. */
#include "analysis/report.h"
#include "results_io/read.h"
#include "tests/testutil.h"

static char *file_text(const char *dir, const char *name)
{
    char *path = g_build_filename(dir, name, NULL), *text = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(path, &text, NULL, NULL));
    g_free(path);
    return text;
}

/* Runs the scenario; returns how many ports its summary.json lists. */
static guint run_and_compare(const char *scenario)
{
    struct test_outdir d = test_outdir_new();
    char *scen = test_data_path(scenario);
    const char *args[] = { "run", scen, "-o", d.out, NULL };
    const char *extra[] = { "--no-plots", "--quiet", NULL };
    CU_ASSERT_EQUAL_FATAL(test_rocesim(args, extra, NULL, NULL), 0);
    char *from_run = file_text(d.out, "report.html");
    GError *e = NULL;
    CU_ASSERT_TRUE_FATAL(report_write(d.out, &e)); /* from summary.json, every port parsed */
    char *from_file = file_text(d.out, "report.html");
    CU_ASSERT_STRING_EQUAL(from_run, from_file);
    results_summary *s = results_summary_read_dir(d.out, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    guint ports = s->ports_total;
    CU_ASSERT_EQUAL(ports, json_array_get_length(s->ports));
    results_summary_free(s);
    g_free(from_run);
    g_free(from_file);
    g_free(scen);
    test_outdir_free(&d);
    return ports;
}

/* The 16-to-1 incast lists 21 ports; the 12th and 13th busiest have the same deepest queue
 * and utilisation, so the table's cut falls inside a tie, which the file's order decides. */
static void test_incast_tie_at_the_cut(void)
{
    CU_ASSERT(run_and_compare("incast16.ini") > REPORT_PORTS);
}

/* A leaf-spine run with more ports than the table shows. */
static void test_leaf_spine(void)
{
    CU_ASSERT(run_and_compare("determinism.ini") > REPORT_PORTS);
}

/* A run with fewer ports than the table's rows: all of them, and no "of N" line. */
static void test_few_ports(void)
{
    CU_ASSERT(run_and_compare("minimal.ini") < REPORT_PORTS);
}

static CU_TestInfo tests[] = {
    { "the table's cut inside a tie: the same page as from summary.json", test_incast_tie_at_the_cut },
    { "a leaf-spine run: the same page as from summary.json", test_leaf_spine },
    { "fewer ports than rows: the same page", test_few_ports },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("report_digest", tests)
