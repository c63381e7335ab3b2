/* Sweeps and tuning: value lists and ranges, point names, constraints, the coarse grid; then
 * through the binary: per-point results identical to single runs, resuming after a kill,
 * failing points, bad input, the MPI split, and a tune whose winner is known in advance. */
#include <errno.h>
#include <json-glib/json-glib.h>
#include <signal.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "sim/cpus.h"
#include "tune/sweep.h"
#include "tune/sweep_cpus.h"
#include "tests/testutil.h"

/* ======================================================================================
 * helpers
 * ====================================================================================== */

static char *write_in(const char *dir, const char *name, const char *text)
{
    char *path = g_build_filename(dir, name, NULL);
    CU_ASSERT_FATAL(g_file_set_contents(path, text, -1, NULL));
    return path;
}

/* A sanitizer build reports leaks and errors on stderr (and exits 1, which some tests
 * expect for other reasons): any report fails the test. */
static void no_sanitizer_report(const char *text, const char *what)
{
    if (text && (strstr(text, "ERROR: LeakSanitizer") || strstr(text, "ERROR: AddressSanitizer") ||
                 strstr(text, "runtime error:"))) {
        fprintf(stderr, "\n  sanitizer report from %s:\n%s\n", what, text);
        CU_FAIL("sanitizer report");
    }
}

/* Runs a shell command built from fmt; returns the exit status, output in *out (may be NULL). */
static int sh(char **out, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static int sh(char **out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *cmd = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    char *o = NULL;
    int rc = test_run(cmd, &o);
    no_sanitizer_report(o, cmd);
    if (out)
        *out = o;
    else
        g_free(o);
    g_free(cmd);
    return rc;
}

static char *slurp(const char *path)
{
    char *t = NULL;
    if (!g_file_get_contents(path, &t, NULL, NULL))
        return NULL;
    return t;
}

static char *slurp_in(const char *dir, const char *rel)
{
    char *p = g_build_filename(dir, rel, NULL);
    char *t = slurp(p);
    g_free(p);
    return t;
}

static gboolean exists_in(const char *dir, const char *rel)
{
    char *p = g_build_filename(dir, rel, NULL);
    gboolean e = g_file_test(p, G_FILE_TEST_EXISTS);
    g_free(p);
    return e;
}

/* summary.json without the wall-clock "engine" object, re-serialised. */
static char *summary_without_engine(const char *dir)
{
    char *p = g_build_filename(dir, "summary.json", NULL);
    JsonParser *parser = json_parser_new();
    char *text = NULL;
    if (json_parser_load_from_file(parser, p, NULL)) {
        JsonNode *root = json_parser_get_root(parser);
        if (JSON_NODE_HOLDS_OBJECT(root)) {
            json_object_remove_member(json_node_get_object(root), "engine");
            JsonGenerator *g = json_generator_new();
            json_generator_set_pretty(g, TRUE);
            json_generator_set_root(g, root);
            text = json_generator_to_data(g, NULL);
            g_object_unref(g);
        }
    }
    g_object_unref(parser);
    g_free(p);
    return text;
}

static int count_lines(const char *text)
{
    int n = 0;
    for (const char *p = text; p && *p; p++)
        n += *p == '\n';
    return n;
}

/* The row of a CSV whose first fields are `prefix` (e.g. "50KB,0.1,"). */
static char *csv_row(const char *csv, const char *prefix)
{
    char **lines = g_strsplit(csv ? csv : "", "\n", -1);
    char *row = NULL;
    for (int i = 1; lines[i] && !row; i++)
        if (g_str_has_prefix(lines[i], prefix))
            row = g_strdup(lines[i]);
    g_strfreev(lines);
    return row;
}

/* The value in column `col` (by header name) of the row starting with prefix. */
static char *csv_get(const char *csv, const char *prefix, const char *col)
{
    char **lines = g_strsplit(csv ? csv : "", "\n", -1);
    char *val = NULL;
    if (lines[0]) {
        char **head = g_strsplit(lines[0], ",", -1);
        int c = -1;
        for (int i = 0; head[i]; i++)
            if (!strcmp(head[i], col))
                c = i;
        for (int i = 1; lines[i] && c >= 0 && !val; i++)
            if (g_str_has_prefix(lines[i], prefix)) {
                char **f = g_strsplit(lines[i], ",", -1);
                if ((int)g_strv_length(f) > c)
                    val = g_strdup(f[c]);
                g_strfreev(f);
            }
        g_strfreev(head);
    }
    g_strfreev(lines);
    return val;
}

/* A metric of the summary.json in dir/rel. */
static gint64 test_metric_in(const char *dir, const char *rel, const char *key)
{
    char *d = g_build_filename(dir, rel, NULL);
    gint64 v = test_metric(d, key);
    g_free(d);
    return v;
}

static gboolean has(const char *text, const char *needle)
{
    gboolean ok = text && strstr(text, needle);
    if (!ok)
        fprintf(stderr, "\n  expected '%s' in:\n%s\n", needle, text ? text : "(null)");
    return ok;
}

/* A small incast on a two-leaf fabric with PFC and DCQCN: a few ms of simulated time. */
static const char *small_ini =
    "[scenario]\nname = small\nstop = 5ms\n"
    "[topology]\nleaves = 2\nspines = 1\nhosts_per_leaf = 4\nhost_rate = 100Gbps\n"
    "[switch]\nbuffer = 4MB\necn_kmin = 50KB\necn_kmax = 200KB\n"
    "[nic]\ncc = dcqcn\n"
    "[workload inc]\nkind = incast\nsenders = 1-4\nreceiver = 0\nsize = 300KB\n";

/* ======================================================================================
 * values, names, constraints, coarse grid
 * ====================================================================================== */

static void expect_values(const char *text, const char *const *want)
{
    GError *e = NULL;
    GPtrArray *v = sweep_expand_values(text, &e);
    if (!v) {
        fprintf(stderr, "\n  '%s': %s\n", text, e->message);
        g_error_free(e);
        CU_FAIL("expansion failed");
        return;
    }
    guint n = 0;
    while (want[n])
        n++;
    CU_ASSERT_EQUAL(v->len, n);
    for (guint i = 0; i < v->len && i < n; i++)
        if (strcmp(g_ptr_array_index(v, i), want[i])) {
            fprintf(stderr, "\n  '%s' value %u: '%s', want '%s'\n", text, i, (char *)g_ptr_array_index(v, i),
                    want[i]);
            CU_FAIL("wrong value");
        }
    g_ptr_array_unref(v);
}

static void expect_bad_values(const char *text, const char *phrase)
{
    GError *e = NULL;
    GPtrArray *v = sweep_expand_values(text, &e);
    CU_ASSERT_PTR_NULL(v);
    if (v)
        g_ptr_array_unref(v);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    if (!strstr(e->message, phrase)) {
        fprintf(stderr, "\n  '%s': message '%s' lacks '%s'\n", text, e->message, phrase);
        CU_FAIL("error does not say what is wrong");
    }
    g_error_free(e);
}

static void test_ranges(void)
{
    expect_values("50KB,100KB,200KB", (const char *[]){ "50KB", "100KB", "200KB", NULL });
    expect_values(" 50KB , 1MiB ", (const char *[]){ "50KB", "1MiB", NULL });
    expect_values("dcqcn,none", (const char *[]){ "dcqcn", "none", NULL });
    /* geometric: units kept, end included when reached */
    expect_values("50KB..400KB*2", (const char *[]){ "50KB", "100KB", "200KB", "400KB", NULL });
    expect_values("50KB..399KB*2", (const char *[]){ "50KB", "100KB", "200KB", NULL });
    expect_values("1us..8us*1.5", (const char *[]){ "1us", "1.5us", "2.25us", "3.375us", "5.0625us", "7.59375us", NULL });
    /* linear: floats printed with the decimals they need, end included when reached */
    expect_values("0.01..0.2+0.05", (const char *[]){ "0.01", "0.06", "0.11", "0.16", NULL });
    expect_values("0.05..0.2+0.05", (const char *[]){ "0.05", "0.1", "0.15", "0.2", NULL });
    expect_values("0..1+0.1", (const char *[]){ "0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9",
                                               "1", NULL });
    expect_values("1us..4us+1us", (const char *[]){ "1us", "2us", "3us", "4us", NULL });
    expect_values("1us..3us+1", (const char *[]){ "1us", "2us", "3us", NULL });
    expect_values("100Gbps..100Gbps*2", (const char *[]){ "100Gbps", NULL });
    /* ranges and values mixed */
    expect_values("10KB,50KB..200KB*2,1MB", (const char *[]){ "10KB", "50KB", "100KB", "200KB", "1MB", NULL });

    expect_bad_values("50KB..400KB", "needs a step");
    expect_bad_values("50KB..1MB*2", "different units");
    expect_bad_values("400KB..50KB*2", "start is above the end");
    expect_bad_values("50KB..400KB*1", "factor must be above 1");
    expect_bad_values("50KB..400KB*2KB", "takes no unit");
    expect_bad_values("0..8*2", "must start above 0");
    expect_bad_values("0.1..0.5+0", "step must be above 0");
    expect_bad_values("1us..4us+1ms", "unit of the ends");
    expect_bad_values("abc..4us+1us", "start 'abc' is not a number");
    expect_bad_values("1us..x+1us", "end 'x' is not a number");
    expect_bad_values("1us..4us+x", "step 'x' is not a number");
    expect_bad_values("50KB,,100KB", "empty value");
    expect_bad_values("50KB,", "empty value");
    expect_bad_values("", "no values");
    expect_bad_values("50KB,100KB,50KB", "appears twice");
    expect_bad_values("1..1000000+1", "more than 10000 values");
}

static void test_dim_parse(void)
{
    GError *e = NULL;
    struct sweep_dim *d = sweep_dim_parse("workload.inc.size=64KB..256KB*2", &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_STRING_EQUAL(d->key, "workload.inc.size");
    CU_ASSERT_EQUAL(d->values->len, 3);
    sweep_dim_free(d);
    const char *bad[] = { "switch.ecn_kmin", "ecn_kmin=50KB", ".x=1", "switch.=1", "sweep.budget=3", "switch.ecn_kmin=" };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        d = sweep_dim_parse(bad[i], &e);
        CU_ASSERT_PTR_NULL(d);
        CU_ASSERT_PTR_NOT_NULL(e);
        if (e && !strstr(e->message, "switch.ecn_kmin") && !strstr(e->message, bad[i]))
            CU_FAIL("the error names neither the key nor the spec");
        g_clear_error(&e);
        sweep_dim_free(d);
    }
}

static GPtrArray *dims_of(const char *const *specs)
{
    GPtrArray *dims = g_ptr_array_new_with_free_func(sweep_dim_free);
    for (int i = 0; specs[i]; i++) {
        struct sweep_dim *d = sweep_dim_parse(specs[i], NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(d);
        g_ptr_array_add(dims, d);
    }
    return dims;
}

static void test_point_names(void)
{
    GPtrArray *dims = dims_of((const char *[]){ "switch.ecn_kmin=50KB,100KB", "switch.ecn_kmax=400KB", NULL });
    CU_ASSERT_TRUE(sweep_dims_prepare(dims, NULL));
    char *n = sweep_point_name(dims, (guint[]){ 1, 0 });
    CU_ASSERT_STRING_EQUAL(n, "ecn_kmin=100KB,ecn_kmax=400KB");
    g_free(n);
    g_ptr_array_unref(dims);

    /* the same key name in two sections: the labels keep the section */
    dims = dims_of((const char *[]){ "workload.a.size=1MB", "workload.b.size=2MB", "nic.cc=none", NULL });
    CU_ASSERT_TRUE(sweep_dims_prepare(dims, NULL));
    n = sweep_point_name(dims, (guint[]){ 0, 0, 0 });
    CU_ASSERT_STRING_EQUAL(n, "a.size=1MB,b.size=2MB,cc=none");
    g_free(n);
    g_ptr_array_unref(dims);

    /* unsafe characters are replaced; names are stable */
    dims = dims_of((const char *[]){ "workload.inc.senders=1-4 5,x/y:z", NULL });
    CU_ASSERT_TRUE(sweep_dims_prepare(dims, NULL));
    n = sweep_point_name(dims, (guint[]){ 0 });
    CU_ASSERT_STRING_EQUAL(n, "senders=1-4_5");
    g_free(n);
    n = sweep_point_name(dims, (guint[]){ 1 });
    CU_ASSERT_STRING_EQUAL(n, "senders=x_y_z");
    g_free(n);
    char *s = sweep_sanitize(".hidden name/../x");
    CU_ASSERT_STRING_EQUAL(s, "_hidden_name_.._x");
    g_free(s);
    g_ptr_array_unref(dims);

    /* long names are cut and keep a hash of the whole */
    GString *v1 = g_string_new("workload.inc.file="), *v2;
    for (int i = 0; i < 300; i++)
        g_string_append_c(v1, 'a');
    v2 = g_string_new(v1->str);
    g_string_append(v1, "1,");
    g_string_append(v1, v2->str + strlen("workload.inc.file="));
    g_string_append(v1, "2");
    dims = dims_of((const char *[]){ v1->str, NULL });
    CU_ASSERT_TRUE(sweep_dims_prepare(dims, NULL));
    char *a = sweep_point_name(dims, (guint[]){ 0 }), *b = sweep_point_name(dims, (guint[]){ 1 });
    CU_ASSERT(strlen(a) <= SWEEP_NAME_MAX);
    CU_ASSERT(strcmp(a, b) != 0);
    char *a2 = sweep_point_name(dims, (guint[]){ 0 });
    CU_ASSERT_STRING_EQUAL(a, a2);
    g_free(a);
    g_free(a2);
    g_free(b);
    g_ptr_array_unref(dims);
    g_string_free(v1, TRUE);
    g_string_free(v2, TRUE);

    /* a key varied twice */
    dims = dims_of((const char *[]){ "switch.ecn_kmin=50KB", "switch.ecn_kmin=60KB", NULL });
    GError *e = NULL;
    CU_ASSERT_FALSE(sweep_dims_prepare(dims, &e));
    CU_ASSERT_PTR_NOT_NULL(e);
    CU_ASSERT(e && strstr(e->message, "given twice"));
    g_clear_error(&e);
    g_ptr_array_unref(dims);
}

static void test_constraints(void)
{
    struct { const char *text, *metric; enum sweep_op op; double value; double yes, no; } ok[] = {
        { "drops==0", "drops", SWEEP_EQ, 0, 0, 1 },
        { " paused_fraction < 0.01 ", "paused_fraction", SWEEP_LT, 0.01, 0.005, 0.01 },
        { "fct_p99_ns<=1e6", "fct_p99_ns", SWEEP_LE, 1e6, 1e6, 1e6 + 1 },
        { "busbw_GBps>10", "busbw_GBps", SWEEP_GT, 10, 10.5, 10 },
        { "x>=-2", "x", SWEEP_GE, -2, -2, -3 },
        { "timeouts!=3", "timeouts", SWEEP_NE, 3, 2, 3 },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(ok); i++) {
        struct sweep_constraint c;
        GError *e = NULL;
        CU_ASSERT_TRUE_FATAL(sweep_constraint_parse(ok[i].text, &c, &e));
        CU_ASSERT_STRING_EQUAL(c.metric, ok[i].metric);
        CU_ASSERT_EQUAL(c.op, ok[i].op);
        CU_ASSERT_DOUBLE_EQUAL(c.value, ok[i].value, 1e-12);
        CU_ASSERT_TRUE(sweep_constraint_holds(&c, ok[i].yes));
        CU_ASSERT_FALSE(sweep_constraint_holds(&c, ok[i].no));
        sweep_constraint_clear(&c);
    }
    struct sweep_constraint c;
    GError *e = NULL;
    CU_ASSERT_TRUE(sweep_constraint_parse("paused_fraction<0.05", &c, NULL));
    CU_ASSERT_STRING_EQUAL(c.text, "paused_fraction<0.05");
    sweep_constraint_clear(&c);
    const char *bad[] = { "drops", "drops=0", "==0", "drops==", "drops==zero", "drops==0 extra", "drops=>0" };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        CU_ASSERT_FALSE(sweep_constraint_parse(bad[i], &c, &e));
        CU_ASSERT_PTR_NOT_NULL(e);
        if (e && !strstr(e->message, bad[i]))
            CU_FAIL("constraint error does not quote the text");
        g_clear_error(&e);
    }
}

static void test_coarse(void)
{
    guint out[16];
    guint n = sweep_coarse_indices(7, 0, out);
    CU_ASSERT_EQUAL(n, 4); /* 0 2 4 6 */
    CU_ASSERT(out[0] == 0 && out[1] == 2 && out[2] == 4 && out[3] == 6);
    n = sweep_coarse_indices(6, 0, out);
    CU_ASSERT_EQUAL(n, 4); /* 0 2 4 5: the last value always */
    CU_ASSERT(out[3] == 5);
    n = sweep_coarse_indices(3, 0, out);
    CU_ASSERT_EQUAL(n, 3);
    n = sweep_coarse_indices(7, 1, out);
    CU_ASSERT(n == 3 && out[0] == 0 && out[1] == 3 && out[2] == 6);
    n = sweep_coarse_indices(7, 2, out);
    CU_ASSERT(n == 2 && out[0] == 0 && out[1] == 6);
    n = sweep_coarse_indices(7, 3, out);
    CU_ASSERT(n == 1 && out[0] == 3);
    n = sweep_coarse_indices(1, 2, out);
    CU_ASSERT(n == 1 && out[0] == 0);

    int lv[3];
    sweep_coarse_levels((guint[]){ 4, 3, 4 }, 3, 8, lv); /* 3*3*3=27 -> ends: 2*2*2 = 8 */
    CU_ASSERT(lv[0] == 2 && lv[1] == 2 && lv[2] == 2);
    sweep_coarse_levels((guint[]){ 9, 2 }, 2, 100, lv);
    CU_ASSERT(lv[0] == 0 && lv[1] == 0);
    sweep_coarse_levels((guint[]){ 5, 2 }, 2, 1, lv); /* down to one point */
    guint a = sweep_coarse_indices(5, lv[0], out), b = sweep_coarse_indices(2, lv[1], out);
    CU_ASSERT_EQUAL(a * b, 1);
}

/* ======================================================================================
 * through the binary
 * ====================================================================================== */

/* Each point of a 4-point sweep is byte-identical to `rocesim run --set` of the same point. */
static void test_points_match_single_runs(void)
{
    char *tmp = test_tmpdir();
    char *ini = write_in(tmp, "small.ini", small_ini);
    const char *bin = test_rocesim_bin();
    char *out = NULL;
    /* the points on 2 threads each (--workers): still the single runs' results */
    int rc = sh(&out, "%s sweep '%s' --vary switch.ecn_kmin=20KB,80KB --vary switch.ecn_pmax=0.1,0.5 -j 2 "
                      "--workers 2 -o '%s/sw' --no-plots 2>&1", bin, ini, tmp);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(has(out, "4 points: 4 run now, 0 already done, 0 failed"));
    g_free(out);
    char *csv = slurp_in(tmp, "sw/sweep.csv");
    CU_ASSERT_PTR_NOT_NULL_FATAL(csv);
    CU_ASSERT(g_str_has_prefix(csv, "switch.ecn_kmin,switch.ecn_pmax,"));
    CU_ASSERT_EQUAL(count_lines(csv), 5);
    const char *kmin[] = { "20KB", "80KB" }, *pmax[] = { "0.1", "0.5" };
    char *marks[4] = { 0 };
    for (int i = 0; i < 4; i++) {
        const char *k = kmin[i / 2], *p = pmax[i % 2];
        char *name = g_strdup_printf("ecn_kmin=%s,ecn_pmax=%s", k, p);
        char *pdir = g_build_filename(tmp, "sw", "points", name, NULL);
        char *sdir = g_build_filename(tmp, "single", name, NULL);
        rc = sh(NULL, "%s run '%s' --set switch.ecn_kmin=%s --set switch.ecn_pmax=%s -o '%s' -q --no-plots", bin,
                ini, k, p, sdir);
        CU_ASSERT_EQUAL(rc, 0);
        const char *files[] = { "transfers.csv", "queues.csv", "pfc.csv", "counters.csv", "rates.csv" };
        for (size_t f = 0; f < G_N_ELEMENTS(files); f++) {
            char *a = slurp_in(pdir, files[f]), *b = slurp_in(sdir, files[f]);
            CU_ASSERT_PTR_NOT_NULL(a);
            CU_ASSERT(a && b && !strcmp(a, b));
            if (a && b && strcmp(a, b))
                fprintf(stderr, "\n  %s/%s differs from the single run\n", name, files[f]);
            g_free(a);
            g_free(b);
        }
        char *pj = slurp_in(pdir, "summary.json");
        CU_ASSERT(has(pj, "\"workers\" : 2,"));
        g_free(pj);
        char *ja = summary_without_engine(pdir), *jb = summary_without_engine(sdir);
        CU_ASSERT_PTR_NOT_NULL(ja);
        CU_ASSERT(ja && jb && !strcmp(ja, jb));
        g_free(ja);
        g_free(jb);
        /* the sweep row carries the point's metrics */
        char *prefix = g_strdup_printf("%s,%s,", k, p);
        marks[i] = csv_get(csv, prefix, "ecn_marked");
        CU_ASSERT_PTR_NOT_NULL(marks[i]);
        char *row = csv_row(csv, prefix);
        CU_ASSERT(row && g_str_has_suffix(row, ",ok"));
        char *sj = slurp_in(sdir, "summary.json");
        char *needle = g_strdup_printf("\"ecn_marked\" : %s,", marks[i] ? marks[i] : "?");
        CU_ASSERT(has(sj, needle));
        g_free(needle);
        g_free(sj);
        g_free(row);
        g_free(prefix);
        g_free(name);
        g_free(pdir);
        g_free(sdir);
    }
    /* the varied settings matter: not every point marks the same number of packets */
    CU_ASSERT(marks[0] && marks[1] && marks[2] && marks[3] &&
              (strcmp(marks[0], marks[1]) || strcmp(marks[0], marks[2]) || strcmp(marks[0], marks[3])));
    for (int i = 0; i < 4; i++)
        g_free(marks[i]);
    g_free(csv);
    g_free(ini);
    test_rmtree(tmp);
    g_free(tmp);
}

/* --workers auto's shares (sweep_cpus.h), by hand. */
static void test_cpu_shares(void)
{
    int out[8];
    const int eight[] = { 0, 1, 2, 3, 4, 5, 6, 7 };
    /* 3 lanes on 8 CPUs: 8 / 3 = 2 each, from k x 2 */
    CU_ASSERT(sweep_lane_cpus(eight, 8, 3, 0, out) == 2 && out[0] == 0 && out[1] == 1);
    CU_ASSERT(sweep_lane_cpus(eight, 8, 3, 2, out) == 2 && out[0] == 4 && out[1] == 5);
    /* 4 lanes on 6 CPUs: one each; one lane gets them all */
    const int six[] = { 0, 1, 2, 3, 4, 5 };
    CU_ASSERT(sweep_lane_cpus(six, 6, 4, 3, out) == 1 && out[0] == 3);
    CU_ASSERT(sweep_lane_cpus(six, 6, 1, 0, out) == 6 && out[0] == 0 && out[5] == 5);
    /* more lanes than CPUs (-j 3 under taskset -c 2,5): round the CPUs again */
    const int two[] = { 2, 5 };
    CU_ASSERT(sweep_lane_cpus(two, 2, 3, 2, out) == 1 && out[0] == 2);
    /* 2 ranks on an 8-CPU host, not bound: the second takes CPUs 4-7 */
    int all[8];
    memcpy(all, eight, sizeof all);
    CU_ASSERT(sweep_cpus_share(all, 8, 8, 1, 2) == 4 && all[0] == 4 && all[3] == 7);
    /* bound by the launcher (a mask of 2 of the 8 CPUs online): the mask is the share */
    int bound[] = { 6, 7 };
    CU_ASSERT(sweep_cpus_share(bound, 2, 8, 1, 2) == 2 && bound[0] == 6 && bound[1] == 7);
    /* 3 ranks on 2 CPUs: one each, the third round again */
    int small[] = { 0, 1 };
    CU_ASSERT(sweep_cpus_share(small, 2, 2, 2, 3) == 1 && small[0] == 0);
    /* the local rank comes from the launcher's environment */
    g_setenv("OMPI_COMM_WORLD_RANK", "3", TRUE);
    g_setenv("OMPI_COMM_WORLD_SIZE", "4", TRUE);
    g_setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2", TRUE);
    g_setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", TRUE);
    struct mpi_split m;
    GError *e = NULL;
    CU_ASSERT_FATAL(mpi_split_detect(&m, &e));
    CU_ASSERT(m.rank == 3 && m.size == 4 && m.local_size == 2 && m.local_rank == 1);
    mpi_split_clear(&m);
    g_unsetenv("OMPI_COMM_WORLD_RANK");
    g_unsetenv("OMPI_COMM_WORLD_SIZE");
    g_unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    g_unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
}

/* The "workers" a point of a --workers auto sweep ran on (its summary.json), -1 if none. */
static int point_workers(const char *points, const char *name)
{
    char *dir = g_build_filename(points, name, NULL);
    char *j = slurp_in(dir, "summary.json");
    const char *at = j ? strstr(j, "\"workers\" : ") : NULL;
    int w = at ? atoi(at + strlen("\"workers\" : ")) : -1;
    g_free(j);
    g_free(dir);
    return w;
}

/* --workers auto: with one point it takes every CPU this process may use (as many as its
 * fabric splits into: 8 hosts and 3 switches, 11); with three points the CPUs are shared
 * out over the points that run at once (C CPUs, min(C, 3) lanes, max(1, C / lanes) each),
 * each point pinned to its share, which its `run --workers auto` then counts. Results stay
 * those of a single run. */
static void test_workers_auto(void)
{
    char *tmp = test_tmpdir();
    char *ini = write_in(tmp, "small.ini", small_ini);
    const char *bin = test_rocesim_bin();
    guint C = cpus_available(), lanes = MIN(C, 3u), share = MAX(1u, C / lanes);
    char *out = NULL;
    int rc = sh(&out, "%s sweep '%s' --vary switch.ecn_kmin=20KB --workers auto -o '%s/one' --no-plots 2>&1", bin,
                ini, tmp);
    CU_ASSERT_EQUAL(rc, 0);
    char *line = g_strdup_printf("workers: auto, 1 point at once on %u CPU%s each", C, C == 1 ? "" : "s");
    CU_ASSERT(has(out, line));
    g_free(line);
    g_free(out);
    char *points = g_build_filename(tmp, "one", "points", NULL);
    CU_ASSERT_EQUAL(point_workers(points, "ecn_kmin=20KB"), (int)MIN(C, 11u));
    char *pdir = g_build_filename(points, "ecn_kmin=20KB", NULL), *sdir = g_build_filename(tmp, "single", NULL);
    rc = sh(NULL, "%s run '%s' --set switch.ecn_kmin=20KB -o '%s' -q --no-plots", bin, ini, sdir);
    CU_ASSERT_EQUAL(rc, 0);
    char *a = slurp_in(pdir, "transfers.csv"), *b = slurp_in(sdir, "transfers.csv");
    CU_ASSERT(a && b && !strcmp(a, b));
    g_free(a);
    g_free(b);
    g_free(pdir);
    g_free(sdir);
    g_free(points);
    rc = sh(&out, "%s sweep '%s' --vary switch.ecn_kmin=20KB,40KB,80KB --workers auto -o '%s/three' --no-plots 2>&1",
            bin, ini, tmp);
    CU_ASSERT_EQUAL(rc, 0);
    line = g_strdup_printf("workers: auto, %u point%s at once on %u CPU%s each", lanes, lanes == 1 ? "" : "s", share,
                           share == 1 ? "" : "s");
    CU_ASSERT(has(out, line));
    g_free(line);
    g_free(out);
    points = g_build_filename(tmp, "three", "points", NULL);
    const char *names[] = { "ecn_kmin=20KB", "ecn_kmin=40KB", "ecn_kmin=80KB" };
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(point_workers(points, names[i]), (int)MIN(share, 11u));
    g_free(points);
    g_free(ini);
    test_rmtree(tmp);
    g_free(tmp);
}

/* J points at once on W threads each, J x W beyond the CPUs (taskset leaves one): a warning
 * naming them, also for the default J (1 here) when W alone is too many; none with
 * --workers auto, nor with -q. */
static void test_threads_beyond_cpus_warned(void)
{
    static const struct {
        const char *args, *warning; /* NULL: no warning at all */
    } cases[] = {
        { "-j 2 --workers 2", "rocesim sweep: warning: 2 points at once on 2 threads each, 4 threads on 1 CPU: they "
                              "take turns" },
        { "--workers 2", "rocesim sweep: warning: 1 point at once on 2 threads each, 2 threads on 1 CPU" },
        { "-j 2 --workers auto", NULL },
        { "-j 2 --workers 2 -q", NULL },
    };
    char *tmp = test_tmpdir();
    char *ini = write_in(tmp, "small.ini", small_ini);
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *out = NULL;
        int rc = sh(&out, "taskset -c 0 %s sweep '%s' --vary switch.ecn_kmin=20KB,40KB %s -o '%s/c%zu' --no-plots 2>&1",
                    test_rocesim_bin(), ini, cases[i].args, tmp, i);
        CU_ASSERT_EQUAL(rc, 0);
        CU_ASSERT(cases[i].warning ? has(out, cases[i].warning) : strstr(out, "warning") == NULL);
        g_free(out);
    }
    g_free(ini);
    test_rmtree(tmp);
    g_free(tmp);
}

static double mtime_of(const char *dir, const char *rel)
{
    char *p = g_build_filename(dir, rel, NULL);
    struct stat st;
    double t = stat(p, &st) == 0 ? (double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec * 1e-9 : -1;
    g_free(p);
    return t;
}

static int count_summaries(const char *points)
{
    int n = 0;
    GDir *d = g_dir_open(points, 0, NULL);
    const char *e;
    while (d && (e = g_dir_read_name(d))) {
        char *p = g_build_filename(points, e, "summary.json", NULL);
        n += g_file_test(p, G_FILE_TEST_EXISTS);
        g_free(p);
    }
    if (d)
        g_dir_close(d);
    return n;
}

static int count_leftovers(const char *points)
{
    int n = 0;
    GDir *d = g_dir_open(points, 0, NULL);
    const char *e;
    while (d && (e = g_dir_read_name(d)))
        n += strstr(e, ".tmp-") || strstr(e, ".old-");
    if (d)
        g_dir_close(d);
    return n;
}

/* SIGTERM half-way through a -j 1 sweep, then the same command finishes only what is
 * missing; a deleted point folder is run again and nothing else. */
static void test_resume(void)
{
    char *tmp = test_tmpdir();
    /* a permutation heavy enough that each point takes a noticeable time */
    char *ini = write_in(tmp, "perm.ini",
                         "[scenario]\nname = perm\nstop = 50ms\n"
                         "[topology]\nleaves = 4\nspines = 2\nhosts_per_leaf = 8\nhost_rate = 100Gbps\n"
                         "[workload perm]\nkind = permutation\nhosts = 0-31\nsize = 6MB\n");
    const char *bin = test_rocesim_bin();
    char *dir = g_build_filename(tmp, "sw", NULL);
    char *points = g_build_filename(dir, "points", NULL);
    char *vary = g_strdup("--vary switch.ecn_kmin=20KB,40KB,80KB,160KB,320KB");
    char *cmd = g_strdup_printf("exec %s sweep '%s' %s -j 1 -o '%s' --no-plots >'%s/killed.txt' 2>&1", bin, ini, vary,
                                dir, tmp);
    const char *argv[] = { "/bin/sh", "-c", cmd, NULL };
    GPid pid;
    CU_ASSERT_FATAL(g_spawn_async(NULL, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid, NULL));
    /* wait for the first point, then stop the sweep */
    for (int i = 0; i < 6000 && count_summaries(points) == 0; i++)
        g_usleep(5000);
    CU_ASSERT(count_summaries(points) >= 1);
    kill(pid, SIGTERM);
    int st = 0;
    waitpid(pid, &st, 0);
    g_spawn_close_pid(pid);
    CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 1);
    int done = count_summaries(points);
    CU_ASSERT(done >= 1 && done < 5);
    CU_ASSERT_EQUAL(count_leftovers(points), 0); /* the killed point left no temporary folder */
    CU_ASSERT_FALSE(exists_in(dir, "sweep.csv"));
    char *killed = slurp_in(tmp, "killed.txt");
    CU_ASSERT(has(killed, "interrupted by Terminated"));
    CU_ASSERT(has(killed, "run the same command again"));
    no_sanitizer_report(killed, "the interrupted sweep");
    g_free(killed);
    double first = mtime_of(points, "ecn_kmin=20KB/summary.json");
    CU_ASSERT(first > 0);

    char *out = NULL;
    int rc = sh(&out, "%s sweep '%s' %s -j 2 -o '%s' --no-plots 2>&1", bin, ini, vary, dir);
    CU_ASSERT_EQUAL(rc, 0);
    char *want = g_strdup_printf("5 points: %d run now, %d already done, 0 failed", 5 - done, done);
    CU_ASSERT(has(out, want));
    g_free(want);
    g_free(out);
    CU_ASSERT_EQUAL(count_summaries(points), 5);
    CU_ASSERT_EQUAL(mtime_of(points, "ecn_kmin=20KB/summary.json"), first); /* not run again */
    char *csv = slurp_in(dir, "sweep.csv");
    CU_ASSERT_EQUAL(count_lines(csv), 6);
    CU_ASSERT(csv && !strstr(csv, "not run") && !strstr(csv, "failed"));

    /* a deleted point: only it runs again */
    char *gone = g_build_filename(points, "ecn_kmin=80KB", NULL);
    test_rmtree(gone);
    double keep = mtime_of(points, "ecn_kmin=160KB/summary.json");
    rc = sh(&out, "%s sweep '%s' %s -j 2 -o '%s' --no-plots 2>&1", bin, ini, vary, dir);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(has(out, "5 points: 1 run now, 4 already done, 0 failed"));
    g_free(out);
    CU_ASSERT(exists_in(points, "ecn_kmin=80KB/summary.json"));
    CU_ASSERT_EQUAL(mtime_of(points, "ecn_kmin=160KB/summary.json"), keep);
    char *csv2 = slurp_in(dir, "sweep.csv");
    CU_ASSERT(csv && csv2 && !strcmp(csv, csv2)); /* the same results again */

    /* other settings for the same folder: stale points are run again, not reused */
    rc = sh(&out, "%s sweep '%s' %s -j 2 -o '%s' --no-plots --set workload.perm.size=1MB 2>&1", bin, ini, vary, dir);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(has(out, "5 points: 5 run now, 0 already done"));
    g_free(out);
    char *csv3 = slurp_in(dir, "sweep.csv");
    char *bytes = csv_get(csv3, "20KB,", "bytes");
    CU_ASSERT(bytes && !strcmp(bytes, "32000000"));
    g_free(bytes);
    g_free(csv3);

    g_free(csv);
    g_free(csv2);
    g_free(gone);
    g_free(cmd);
    g_free(vary);
    g_free(points);
    g_free(dir);
    g_free(ini);
    test_rmtree(tmp);
    g_free(tmp);
}

/* A point that fails at run time is reported with its status and stderr; the others finish. */
static void test_failing_point(void)
{
    char *tmp = test_tmpdir();
    char *ini = write_in(tmp, "small.ini", small_ini);
    const char *bin = test_rocesim_bin();
    char *out = NULL;
    /* hosts_per_leaf=2 and 1 load, but the incast names hosts that do not exist then */
    int rc = sh(&out, "%s sweep '%s' --vary topology.hosts_per_leaf=4,2,1 -j 2 -o '%s/sw' --no-plots 2>&1", bin, ini,
                tmp);
    CU_ASSERT_EQUAL(rc, 1);
    CU_ASSERT(has(out, "point hosts_per_leaf=2 failed (exit 2)"));
    CU_ASSERT(has(out, "host 4 does not exist"));
    CU_ASSERT(has(out, "3 points: 3 run now, 0 already done, 2 failed"));
    g_free(out);
    char *csv = slurp_in(tmp, "sw/sweep.csv");
    char *r4 = csv_row(csv, "4,"), *r2 = csv_row(csv, "2,");
    CU_ASSERT(r4 && g_str_has_suffix(r4, ",ok"));
    CU_ASSERT(r2 && g_str_has_suffix(r2, ",failed"));
    char *log = slurp_in(tmp, "sw/points/hosts_per_leaf=2.log");
    CU_ASSERT(has(log, "host 4 does not exist"));
    CU_ASSERT(exists_in(tmp, "sw/points/hosts_per_leaf=4/summary.json"));
    CU_ASSERT_FALSE(exists_in(tmp, "sw/points/hosts_per_leaf=2"));
    CU_ASSERT_FALSE(exists_in(tmp, "sw/points/hosts_per_leaf=4.log")); /* empty logs are not kept */
    g_free(log);
    g_free(r4);
    g_free(r2);
    g_free(csv);
    /* a re-run retries the failed points only */
    rc = sh(&out, "%s sweep '%s' --vary topology.hosts_per_leaf=4,2,1 -j 2 -o '%s/sw' --no-plots 2>&1", bin, ini, tmp);
    CU_ASSERT_EQUAL(rc, 1);
    CU_ASSERT(has(out, "3 points: 2 run now, 1 already done, 2 failed"));
    g_free(out);
    g_free(ini);
    test_rmtree(tmp);
    g_free(tmp);
}

/* Bad input: exit 2 before anything runs or any folder is made. */
static void test_bad_input(void)
{
    char *tmp = test_tmpdir();
    char *ini = write_in(tmp, "small.ini", small_ini);
    const char *bin = test_rocesim_bin();
    struct { const char *args, *phrase; } cases[] = {
        { "--vary switch.ecn_kmin=50KB..400KB", "needs a step" },
        { "--vary switch.ecn_kmin=50KB..1MB*2", "different units" },
        { "--vary ecn_kmin=50KB", "expected SECTION.KEY=VALUES" },
        { "--vary switch.ecn_kmn=50KB,60KB", "unknown key" },
        { "--vary nosuch.key=1,2", "unknown section" },
        { "--vary switch.ecn_kmin=50XB,60KB", "unknown unit 'XB'" },
        { "--vary switch.ecn_kmin=60KB,50XB", "the value 50XB is not valid" },
        { "--vary switch.ecn_kmin=300KB,400KB", "Kmin must not exceed" },
        { "--vary switch.ecn_pmax=0.5..2+0.5", "the value 1.5 is not valid" },
        { "", "nothing to vary" },
        { "--vary switch.ecn_kmin=50KB -j 0 --set switch.bogus=1", "bogus" },
        { "--vary switch.ecn_kmin=50KB -j -1", "-j -1" },
        { "--vary switch.ecn_kmin=50KB --seed x", "--seed 'x'" },
        { "--vary switch.ecn_kmin=50KB --workers 0", "--workers '0': expected a whole number from 1 to 256" },
        { "--vary switch.ecn_kmin=50KB --workers 1000", "--workers '1000'" },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *out = NULL;
        int rc = sh(&out, "%s sweep '%s' %s -o '%s/sw' 2>&1", bin, ini, cases[i].args, tmp);
        CU_ASSERT_EQUAL(rc, 2);
        CU_ASSERT(has(out, cases[i].phrase));
        CU_ASSERT_FALSE(exists_in(tmp, "sw"));
        g_free(out);
    }
    char *out = NULL;
    int rc = sh(&out, "%s tune '%s' --vary switch.ecn_kmin=50KB,60KB --constraint 'drops=0' --objective fct_p99_ns -o "
                      "'%s/sw' 2>&1", bin, ini, tmp);
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT(has(out, "constraint 'drops=0'"));
    g_free(out);
    rc = sh(&out, "%s tune '%s' --vary switch.ecn_kmin=50KB,60KB -o '%s/sw' 2>&1", bin, ini, tmp);
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT(has(out, "no objective"));
    g_free(out);
    /* an unknown metric is found after the first point, and the known ones are listed */
    rc = sh(&out, "%s tune '%s' --vary switch.ecn_kmin=50KB,60KB --objective fct_p98_ns -j 1 -o '%s/sw' 2>&1", bin, ini,
            tmp);
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT(has(out, "unknown metric 'fct_p98_ns'"));
    CU_ASSERT(has(out, "fct_p99_ns"));
    g_free(out);
    g_free(ini);
    test_rmtree(tmp);
    g_free(tmp);
}

/* The [sweep] section: read by sweep, ignored by run; --vary replaces its vary lines. */
static void test_sweep_section(void)
{
    char *tmp = test_tmpdir();
    char *text = g_strconcat(small_ini, "[sweep]\nvary = switch.ecn_kmin=20KB,80KB\nvary2 = nic.cc=none,dcqcn\n"
                                        "objective = fct_p99_ns\nconstraint = drops==0\nbudget = 3\n", NULL);
    char *ini = write_in(tmp, "s.ini", text);
    const char *bin = test_rocesim_bin();
    char *out = NULL;
    CU_ASSERT_EQUAL(sh(&out, "%s run '%s' -o '%s/run' -q", bin, ini, tmp), 0);
    g_free(out);
    CU_ASSERT_EQUAL(sh(&out, "%s sweep '%s' -o '%s/sw' -j 2 --no-plots 2>&1", bin, ini, tmp), 0);
    CU_ASSERT(has(out, "4 points: 4 run now"));
    g_free(out);
    CU_ASSERT(exists_in(tmp, "sw/points/ecn_kmin=80KB,cc=none/summary.json"));
    CU_ASSERT_EQUAL(sh(&out, "%s sweep '%s' --vary switch.ecn_pmax=0.1,0.2,0.3 -o '%s/sw2' -j 2 --no-plots 2>&1", bin,
                       ini, tmp), 0);
    CU_ASSERT(has(out, "3 points: 3 run now"));
    g_free(out);
    CU_ASSERT_EQUAL(sh(&out, "%s tune '%s' -o '%s/tune' -j 2 --no-plots 2>&1", bin, ini, tmp), 0);
    char *csv = slurp_in(tmp, "tune/tune.csv");
    CU_ASSERT(csv && count_lines(csv) <= 4 && count_lines(csv) >= 2); /* budget 3 */
    g_free(csv);
    g_free(out);
    g_free(ini);
    g_free(text);
    /* unknown keys in [sweep] are refused by sweep and tune */
    text = g_strconcat(small_ini, "[sweep]\nvary = switch.ecn_kmin=20KB\nbudjet = 3\n", NULL);
    ini = write_in(tmp, "bad.ini", text);
    CU_ASSERT_EQUAL(sh(&out, "%s sweep '%s' -o '%s/sw3' 2>&1", bin, ini, tmp), 2);
    CU_ASSERT(has(out, "[sweep] budjet: unknown key"));
    g_free(out);
    g_free(ini);
    g_free(text);
    test_rmtree(tmp);
    g_free(tmp);
}

/* A 2:1 incast space whose winner follows from first principles:
 *   4 senders write 2 MB each to host 0 through one switch (PFC off, so a full buffer drops).
 *   The receiver's link is the bottleneck: no setting finishes the last transfer before the
 *   8 MB cross it at 100 Gb/s. With cc=none the senders never slow down, so that link is busy
 *   from the first packet to the last and the p99 FCT is that bound, provided nothing is
 *   dropped; the standing queue peaks near 3/4 of 8 MB = 6 MB, so only the 8000KB buffer
 *   holds it. DCQCN cuts rates and lets the link idle while they recover: slower.
 * So the best feasible point (drops==0, minimise fct_p99_ns) is buffer=8000KB, cc=none. The
 * full sweep confirms the premises; tune must find that point within its budget. */
static void test_tune_known_best(void)
{
    char *tmp = test_tmpdir();
    char *ini = write_in(tmp, "inc.ini",
                         "[scenario]\nname = inc\nstop = 20ms\n"
                         "[topology]\nleaves = 1\nspines = 0\nhosts_per_leaf = 5\nhost_rate = 100Gbps\n"
                         "[switch]\npfc = off\n[nic]\ncc_preset = connectx\n"
                         "[workload inc]\nkind = incast\nsenders = 1-4\nreceiver = 0\nsize = 2MB\n");
    const char *bin = test_rocesim_bin();
    const char *vary = "--vary switch.buffer=500KB..8000KB*2 --vary nic.cc=dcqcn,none";
    char *out = NULL;
    int rc = sh(&out, "%s sweep '%s' %s -j 2 -o '%s/full' --no-plots 2>&1", bin, ini, vary, tmp);
    CU_ASSERT_EQUAL(rc, 0);
    g_free(out);
    char *csv = slurp_in(tmp, "full/sweep.csv");
    CU_ASSERT_EQUAL_FATAL(count_lines(csv), 11);
    /* premises: with cc=none only the largest buffer is drop-free; it beats every DCQCN point */
    const char *bufs[] = { "500KB", "1000KB", "2000KB", "4000KB", "8000KB" };
    char *best_fct = csv_get(csv, "8000KB,none,", "fct_p99_ns");
    CU_ASSERT_PTR_NOT_NULL_FATAL(best_fct);
    double best = g_ascii_strtod(best_fct, NULL);
    int feasible_dcqcn = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(bufs); i++) {
        char *pn = g_strdup_printf("%s,none,", bufs[i]), *pd = g_strdup_printf("%s,dcqcn,", bufs[i]);
        char *dn = csv_get(csv, pn, "drops"), *dd = csv_get(csv, pd, "drops"), *fd = csv_get(csv, pd, "fct_p99_ns");
        CU_ASSERT(dn && dd && fd);
        if (dn)
            CU_ASSERT_EQUAL(strcmp(dn, "0") == 0, i == 4);
        if (dd && fd && !strcmp(dd, "0")) {
            feasible_dcqcn++;
            CU_ASSERT(g_ascii_strtod(fd, NULL) > best);
        }
        g_free(pn);
        g_free(pd);
        g_free(dn);
        g_free(dd);
        g_free(fd);
    }
    CU_ASSERT(feasible_dcqcn >= 1); /* the space has more than one feasible point */
    /* the bound: 8 MB of payload at 100 Gb/s is 640 us; headers add a few percent */
    CU_ASSERT(best >= 640000 && best < 700000);

    rc = sh(&out, "%s tune '%s' %s --objective fct_p99_ns --minimize --constraint 'drops==0' --budget 8 -j 2 "
                  "-o '%s/tune' 2>&1", bin, ini, vary, tmp);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(has(out, "best: buffer=8000KB,cc=none"));
    char *line = g_strdup_printf("fct_p99_ns = %s (objective, minimize)", best_fct);
    CU_ASSERT(has(out, line));
    CU_ASSERT(has(out, "top "));
    g_free(line);
    g_free(out);
    char *tcsv = slurp_in(tmp, "tune/tune.csv");
    CU_ASSERT_PTR_NOT_NULL_FATAL(tcsv);
    CU_ASSERT(g_str_has_prefix(tcsv, "run,phase,switch.buffer,nic.cc,status,feasible,objective,violated,"));
    int runs = count_lines(tcsv) - 1;
    CU_ASSERT(runs >= 3 && runs <= 8); /* within the budget, less than the 10-point grid */
    CU_ASSERT(has(tcsv, ",8000KB,none,ok,yes,"));
    CU_ASSERT(has(tcsv, ",coarse,"));
    CU_ASSERT(has(tcsv, ",refine,"));
    CU_ASSERT(has(tcsv, "drops==0")); /* the violated constraint of infeasible points */
    CU_ASSERT(exists_in(tmp, "tune/plots/tune.png") || !g_find_program_in_path("gnuplot"));
    /* the tune reuses the points of an earlier tune in the same folder */
    rc = sh(&out, "%s tune '%s' %s --objective fct_p99_ns --constraint 'drops==0' --budget 8 -j 2 "
                  "-o '%s/tune' --no-plots 2>&1", bin, ini, vary, tmp);
    CU_ASSERT_EQUAL(rc, 0);
    char *reused = g_strdup_printf("%d reused from an earlier run", runs);
    CU_ASSERT(has(out, reused));
    g_free(reused);
    g_free(out);
    /* nothing feasible: exit 1 */
    rc = sh(&out, "%s tune '%s' %s --objective fct_p99_ns --constraint 'drops<0' --budget 4 -j 2 -o '%s/none' "
                  "--no-plots 2>&1", bin, ini, vary, tmp);
    CU_ASSERT_EQUAL(rc, 1);
    CU_ASSERT(has(out, "no evaluated point meets the constraints"));
    g_free(out);
    g_free(tcsv);
    g_free(best_fct);
    g_free(csv);
    g_free(ini);
    test_rmtree(tmp);
    g_free(tmp);
}

/* Two ranks started as an MPI launcher would (environment only): they split the points,
 * rank 0 gathers them; sweep.csv equals a single-process sweep's. A failure in rank 1's
 * share is reported by rank 0. With mpirun installed, the same through mpirun. */
static void test_mpi_split(void)
{
    char *tmp = test_tmpdir();
    char *ini = write_in(tmp, "small.ini", small_ini);
    const char *bin = test_rocesim_bin();
    const char *vary = "--vary switch.ecn_kmin=20KB,40KB,80KB --vary switch.ecn_pmax=0.1,0.5";
    char *out = NULL;
    CU_ASSERT_EQUAL(sh(&out, "%s sweep '%s' %s -j 2 -o '%s/one' --no-plots 2>&1", bin, ini, vary, tmp), 0);
    g_free(out);
    char *one = slurp_in(tmp, "one/sweep.csv");
    CU_ASSERT_PTR_NOT_NULL_FATAL(one);
    int rc = sh(&out,
                "env OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=1 PMIX_NAMESPACE=t$$ %s sweep '%s' %s -j 1 -o '%s/two' "
                "--no-plots > '%s/rank1.txt' 2>&1 & "
                "env OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0 PMIX_NAMESPACE=t$$ %s sweep '%s' %s -j 1 -o '%s/two' "
                "--no-plots 2>&1; r=$?; wait; exit $r",
                bin, ini, vary, tmp, tmp, bin, ini, vary, tmp);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(has(out, "MPI: 2 ranks"));
    g_free(out);
    char *r1 = slurp_in(tmp, "rank1.txt");
    CU_ASSERT(has(r1, "rank 1: 3 run"));
    no_sanitizer_report(r1, "rank 1");
    g_free(r1);
    char *two = slurp_in(tmp, "two/sweep.csv");
    CU_ASSERT(one && two && !strcmp(one, two));
    g_free(two);

    /* point 1 (hosts_per_leaf=2) belongs to rank 1 and fails: rank 0 reports it, exits 1 */
    rc = sh(&out,
            "env OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=1 PMIX_NAMESPACE=f$$ %s sweep '%s' "
            "--vary topology.hosts_per_leaf=4,2 -o '%s/fail' --no-plots > '%s/r1.txt' 2>&1 & "
            "env OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0 PMIX_NAMESPACE=f$$ %s sweep '%s' "
            "--vary topology.hosts_per_leaf=4,2 -o '%s/fail' --no-plots 2>&1; r=$?; wait $!; echo rank1=$?; exit $r",
            bin, ini, tmp, tmp, bin, ini, tmp);
    CU_ASSERT_EQUAL(rc, 1);
    CU_ASSERT(has(out, "failed: hosts_per_leaf=2 (exit 2)"));
    CU_ASSERT(has(out, "rank1=0")); /* mpirun would abort the launch on a non-zero rank */
    g_free(out);
    char *fcsv = slurp_in(tmp, "fail/sweep.csv");
    char *row = csv_row(fcsv, "2,");
    CU_ASSERT(row && g_str_has_suffix(row, ",failed"));
    g_free(row);
    g_free(fcsv);

    char *mpirun = g_find_program_in_path("mpirun");
    if (mpirun) {
        rc = sh(&out, "timeout 300 %s --allow-run-as-root --oversubscribe -np 2 %s sweep '%s' %s -o '%s/mpi' --no-plots "
                      "2>&1", mpirun, bin, ini, vary, tmp);
        if (rc != 0)
            fprintf(stderr, "\n  mpirun: %s\n", out);
        CU_ASSERT_EQUAL(rc, 0);
        g_free(out);
        char *m = slurp_in(tmp, "mpi/sweep.csv");
        CU_ASSERT(m && !strcmp(one, m));
        g_free(m);
        g_free(mpirun);
    }
    g_free(one);
    g_free(ini);
    test_rmtree(tmp);
    g_free(tmp);
}

/* Rank 1 in folder b and rank 0 in folder a, each `sweep small.ini` into tmp/OUT with the
 * same launch id, started as by a launcher (the environment only); rank 0's output in *out. */
static int sweep_two_dirs(const char *a, const char *b, const char *bin, const char *tmp, const char *outdir,
                          const char *id, char **out)
{
    const char *vary = "--vary switch.ecn_kmin=20KB,40KB";
    return sh(out,
              "cd '%s' && env OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=1 PMIX_NAMESPACE=%s$$ timeout 120 %s sweep "
              "small.ini %s -j 1 -o '%s/%s' --no-plots > '%s/r1.txt' 2>&1 & "
              "cd '%s' && env OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0 PMIX_NAMESPACE=%s$$ timeout 120 %s sweep "
              "small.ini %s -j 1 -o '%s/%s' --no-plots 2>&1; r=$?; wait; exit $r",
              b, id, bin, vary, tmp, outdir, tmp, a, id, bin, vary, tmp, outdir);
}

/* Each rank reads the scenario on its own machine. Rank 1 with a copy whose switch buffer
 * differs ran its points with those settings; their results never matched rank 0's grid,
 * and rank 0 waited for them until killed. Now a rank that is done leaves its grid's digest
 * (points/.rank-1) and rank 0 stops with exit 2, naming the rank. Copies that are the same
 * in two folders sweep through. */
static void test_mpi_ranks_differ(void)
{
    char *tmp = test_tmpdir();
    char *a = g_build_filename(tmp, "a", NULL), *b = g_build_filename(tmp, "b", NULL);
    CU_ASSERT_EQUAL_FATAL(g_mkdir_with_parents(a, 0755), 0);
    CU_ASSERT_EQUAL_FATAL(g_mkdir_with_parents(b, 0755), 0);
    char *ia = write_in(a, "small.ini", small_ini);
    char *other = g_strdup(small_ini);
    char *at = strstr(other, "buffer = 4MB");
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    at[9] = '8'; /* buffer = 8MB on rank 1's machine */
    char *ib = write_in(b, "small.ini", other);
    char *bin = g_canonicalize_filename(test_rocesim_bin(), NULL); /* beside cd */
    char *out = NULL;
    int rc = sweep_two_dirs(a, b, bin, tmp, "out", "d", &out);
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT(has(out, "rocesim sweep: MPI rank 1 built another grid from rank 0's"));
    if (rc != 2)
        fprintf(stderr, "\n  two grids: exit %d:\n%s\n", rc, out);
    char *csv = g_build_filename(tmp, "out", "sweep.csv", NULL);
    CU_ASSERT_FALSE(g_file_test(csv, G_FILE_TEST_EXISTS)); /* no table mixing the two */
    g_free(csv);
    g_free(out);
    g_free(ib);
    ib = write_in(b, "small.ini", small_ini); /* the same copy on both machines */
    rc = sweep_two_dirs(a, b, bin, tmp, "same", "s", &out);
    CU_ASSERT_EQUAL(rc, 0);
    if (rc != 0)
        fprintf(stderr, "\n  one grid in two folders: exit %d:\n%s\n", rc, out);
    csv = g_build_filename(tmp, "same", "sweep.csv", NULL);
    CU_ASSERT_TRUE(g_file_test(csv, G_FILE_TEST_IS_REGULAR));
    g_free(csv);
    g_free(out);
    g_free(bin);
    g_free(ib);
    g_free(other);
    g_free(ia);
    g_free(b);
    g_free(a);
    test_rmtree(tmp);
    g_free(tmp);
}

/* Ranks on machines that do not share the sweep folder: rank 1 writes its points into a
 * folder rank 0 never sees, and rank 0 waited for them forever. Now, done with its own points,
 * it waits --rank-wait seconds for rank 1's start marker, then stops with exit 2, naming the
 * rank; no sweep.csv. */
static void test_mpi_folder_not_shared(void)
{
    char *tmp = test_tmpdir();
    char *a = g_build_filename(tmp, "a", NULL), *b = g_build_filename(tmp, "b", NULL);
    CU_ASSERT_EQUAL_FATAL(g_mkdir_with_parents(a, 0755), 0);
    CU_ASSERT_EQUAL_FATAL(g_mkdir_with_parents(b, 0755), 0);
    char *ia = write_in(a, "small.ini", small_ini), *ib = write_in(b, "small.ini", small_ini);
    char *bin = g_canonicalize_filename(test_rocesim_bin(), NULL);
    char *out = NULL;
    gint64 t0 = g_get_monotonic_time();
    /* each rank's -o is relative to its own folder, as a local path on two machines */
    int rc = sh(&out,
                "cd '%s' && env OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=1 PMIX_NAMESPACE=u$$ timeout 120 %s sweep "
                "small.ini --vary switch.ecn_kmin=20KB,40KB -j 1 -o sw --no-plots > r1.txt 2>&1 & "
                "cd '%s' && env OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0 PMIX_NAMESPACE=u$$ timeout 120 %s sweep "
                "small.ini --vary switch.ecn_kmin=20KB,40KB -j 1 -o sw --no-plots --rank-wait 1 2>&1; r=$?; wait; "
                "exit $r",
                b, bin, a, bin);
    double secs = (double)(g_get_monotonic_time() - t0) / G_USEC_PER_SEC;
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT(has(out, "MPI rank 1 has left nothing in sw in 1 s"));
    CU_ASSERT(has(out, "give -o a shared path"));
    if (rc != 2)
        fprintf(stderr, "\n  folder not shared: exit %d after %.1f s:\n%s\n", rc, secs, out);
    CU_ASSERT(secs < 100); /* not the timeout's kill */
    g_free(out);
    /* a wait that is no number of seconds above 0 is bad input, before anything runs */
    static const char *const bad[] = { "-1", "0", "nan", "5s", "2e9" };
    for (size_t k = 0; k < G_N_ELEMENTS(bad); k++) {
        rc = sh(&out, "cd '%s' && %s sweep small.ini --vary switch.ecn_kmin=20KB,40KB -o bad --rank-wait %s 2>&1", a, bin,
                bad[k]);
        CU_ASSERT_EQUAL(rc, 2);
        char *want = g_strdup_printf("--rank-wait %s: expected a number of seconds above 0", bad[k]);
        CU_ASSERT(has(out, want));
        g_free(want);
        g_free(out);
    }
    char *bad_dir = g_build_filename(a, "bad", NULL);
    CU_ASSERT_FALSE(g_file_test(bad_dir, G_FILE_TEST_EXISTS));
    g_free(bad_dir);
    out = NULL;
    char *csv = g_build_filename(a, "sw", "sweep.csv", NULL);
    CU_ASSERT_FALSE(g_file_test(csv, G_FILE_TEST_EXISTS));
    g_free(csv);
    /* rank 1's own points and start marker went to its folder */
    char *marker = g_build_filename(b, "sw", "points", ".rank-1-started", NULL);
    CU_ASSERT_TRUE(g_file_test(marker, G_FILE_TEST_IS_REGULAR));
    g_free(marker);
    g_free(out);
    g_free(bin);
    g_free(ia);
    g_free(ib);
    g_free(a);
    g_free(b);
    test_rmtree(tmp);
    g_free(tmp);
}

/* A run that stops at a PFC deadlock (exit 3, results written) is an outcome, not a failed
 * point: status deadlock, also when reused; tune never takes it as feasible. */
static void test_deadlock_points(void)
{
    char *tmp = test_tmpdir();
    const char *bin = test_rocesim_bin();
    const char *vary = "--vary switch.pfc=on,off --vary switch.buffer=1MB,2MB";
    char *out = NULL;
    for (int pass = 0; pass < 2; pass++) {
        int rc = sh(&out, "%s sweep scenarios/deadlock.ini %s -j 2 -o '%s/sw' --no-plots 2>&1", bin, vary, tmp);
        CU_ASSERT_EQUAL(rc, 0);
        CU_ASSERT(has(out, pass ? "0 run now, 4 already done, 0 failed" : "4 run now, 0 already done, 0 failed"));
        CU_ASSERT(has(out, "2 points stopped at a PFC deadlock"));
        g_free(out);
        char *csv = slurp_in(tmp, "sw/sweep.csv");
        char *on = csv_row(csv, "on,1MB,"), *off = csv_row(csv, "off,1MB,");
        CU_ASSERT(on && g_str_has_suffix(on, ",deadlock"));
        CU_ASSERT(off && g_str_has_suffix(off, ",ok"));
        char *dl = csv_get(csv, "on,2MB,", "deadlock");
        CU_ASSERT(dl && !strcmp(dl, "1"));
        g_free(dl);
        g_free(on);
        g_free(off);
        g_free(csv);
    }
    int rc = sh(&out, "%s tune scenarios/deadlock.ini %s --objective fct_p99_ns --budget 4 -j 2 -o '%s/sw' --no-plots "
                      "2>&1", bin, vary, tmp);
    CU_ASSERT_EQUAL(rc, 1);
    CU_ASSERT(has(out, "violates deadlock"));
    g_free(out);
    char *tcsv = slurp_in(tmp, "sw/tune.csv");
    /* no transfer finished at the deadlock: no FCT (not 0, which ranked it as the fastest) */
    CU_ASSERT(has(tcsv, ",on,1MB,deadlock,no,,deadlock;no fct_p99_ns,"));
    g_free(tcsv);
    test_rmtree(tmp);
    g_free(tmp);
}

/* Plots: a line plot for one varied key, a heat map for two, a note for three. */
static void test_plots(void)
{
    char *gnuplot = g_find_program_in_path("gnuplot");
    char *tmp = test_tmpdir();
    char *ini = write_in(tmp, "small.ini", small_ini);
    const char *bin = test_rocesim_bin();
    char *out = NULL;
    CU_ASSERT_EQUAL(sh(&out, "%s sweep '%s' --vary switch.ecn_kmin=20KB,80KB --vary switch.ecn_pmax=0.1,0.5 "
                             "-o '%s/two' 2>&1", bin, ini, tmp), 0);
    g_free(out);
    CU_ASSERT(exists_in(tmp, "two/plots/sweep.gp"));
    char *gp = slurp_in(tmp, "two/plots/sweep.gp");
    CU_ASSERT(has(gp, "with image"));
    g_free(gp);
    if (gnuplot) {
        CU_ASSERT(exists_in(tmp, "two/plots/sweep.png"));
        CU_ASSERT(exists_in(tmp, "two/plots/sweep.svg"));
    }
    /* (the transfer size certainly changes the metrics: constant metrics are not drawn) */
    CU_ASSERT_EQUAL(sh(&out, "%s sweep '%s' --vary workload.inc.size=100KB,200KB,300KB -o '%s/one' 2>&1", bin, ini,
                       tmp), 0);
    g_free(out);
    gp = slurp_in(tmp, "one/plots/sweep.gp");
    CU_ASSERT(has(gp, "with linespoints"));
    g_free(gp);
    if (gnuplot)
        CU_ASSERT(exists_in(tmp, "one/plots/sweep.png"));
    /* without gnuplot on PATH the sweep still succeeds */
    CU_ASSERT_EQUAL(sh(&out, "PATH=/nonexistent %s sweep '%s' --vary workload.inc.size=100KB,200KB -o '%s/nogp' 2>&1",
                       bin, ini, tmp), 0);
    CU_ASSERT(has(out, "gnuplot not found"));
    CU_ASSERT(exists_in(tmp, "nogp/sweep.csv"));
    g_free(out);
    CU_ASSERT_EQUAL(sh(&out, "%s sweep '%s' --vary switch.ecn_kmin=20KB,40KB --vary switch.ecn_pmax=0.1,0.2 "
                             "--vary nic.cc=none,dcqcn -o '%s/three' 2>&1", bin, ini, tmp), 0);
    CU_ASSERT(has(out, "3 keys vary"));
    g_free(out);
    g_free(gnuplot);
    g_free(ini);
    test_rmtree(tmp);
    g_free(tmp);
}

/* ======================================================================================
 * replicates
 * ====================================================================================== */

static const char *perm_ini =
    "[scenario]\nname = perm\nstop = 20ms\n"
    "[topology]\nleaves = 2\nspines = 2\nhosts_per_leaf = 8\nhost_rate = 100Gbps\n"
    "[switch]\necn_kmin = 100KB\necn_kmax = 400KB\n"
    "[nic]\ncc = dcqcn\n"
    "[workload perm]\nkind = permutation\nhosts = 0-15\nsize = 2MB\n";

/* --replicates 3: each configuration runs under seeds 1, 2, 3 (the scenario's and the two
 * after it); each run is byte-identical to `rocesim run` with that seed; sweep.csv holds the
 * mean, the sample sd and the 95% half-width t(2) sd / sqrt(3) of the runs in sweep-runs.csv. */
static void test_replicates(void)
{
    char *tmp = test_tmpdir();
    char *ini = write_in(tmp, "perm.ini", perm_ini);
    const char *bin = test_rocesim_bin();
    char *out = NULL;
    int rc = sh(&out, "%s sweep '%s' --vary switch.ecn_kmin=50KB,200KB --replicates 3 -j 2 -o '%s/sw' --no-plots 2>&1",
                bin, ini, tmp);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(has(out, "2 configurations x 3 seeds = 6 points"));
    g_free(out);
    for (int seed = 1; seed <= 3; seed++) {
        char *rel = g_strdup_printf("sw/points/ecn_kmin=50KB,seed=%d/summary.json", seed);
        CU_ASSERT(exists_in(tmp, rel));
        g_free(rel);
    }
    /* the run of seed 2 is the single run with --seed 2 */
    rc = sh(&out, "%s run '%s' --set switch.ecn_kmin=200KB --seed 2 -o '%s/single' --quiet --no-plots 2>&1", bin, ini,
            tmp);
    CU_ASSERT_EQUAL(rc, 0);
    g_free(out);
    char *a = slurp_in(tmp, "single/transfers.csv"), *b = slurp_in(tmp, "sw/points/ecn_kmin=200KB,seed=2/transfers.csv");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_STRING_EQUAL(a, b ? b : "");
    g_free(a);
    g_free(b);
    /* the statistics from the runs */
    char *runs = slurp_in(tmp, "sw/sweep-runs.csv"), *agg = slurp_in(tmp, "sw/sweep.csv");
    CU_ASSERT_PTR_NOT_NULL_FATAL(runs);
    CU_ASSERT_PTR_NOT_NULL_FATAL(agg);
    CU_ASSERT_EQUAL(count_lines(runs), 7);
    CU_ASSERT_EQUAL(count_lines(agg), 3);
    CU_ASSERT(g_str_has_prefix(runs, "switch.ecn_kmin,scenario.seed,"));
    CU_ASSERT(g_str_has_prefix(agg, "switch.ecn_kmin,replicates,"));
    double v[3];
    for (int seed = 1; seed <= 3; seed++) {
        char *prefix = g_strdup_printf("50KB,%d,", seed);
        char *x = csv_get(runs, prefix, "fct_p99_ns");
        CU_ASSERT_PTR_NOT_NULL_FATAL(x);
        v[seed - 1] = g_ascii_strtod(x, NULL);
        g_free(x);
        g_free(prefix);
    }
    double mean = (v[0] + v[1] + v[2]) / 3;
    double sd = sqrt(((v[0] - mean) * (v[0] - mean) + (v[1] - mean) * (v[1] - mean) + (v[2] - mean) * (v[2] - mean)) / 2);
    char *m = csv_get(agg, "50KB,3,", "fct_p99_ns"), *d = csv_get(agg, "50KB,3,", "fct_p99_ns_sd");
    char *ci = csv_get(agg, "50KB,3,", "fct_p99_ns_ci95"), *st = csv_get(agg, "50KB,3,", "status");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_DOUBLE_EQUAL(g_ascii_strtod(m, NULL), mean, 1e-6 * mean);
    CU_ASSERT_DOUBLE_EQUAL(g_ascii_strtod(d, NULL), sd, 1e-6 * sd + 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(g_ascii_strtod(ci, NULL), 4.303 * sd / sqrt(3), 1e-3 * sd + 1e-9);
    CU_ASSERT_STRING_EQUAL(st, "ok");
    CU_ASSERT(sd > 0); /* the seed moves the permutation: the replicates differ */
    g_free(m);
    g_free(d);
    g_free(ci);
    g_free(st);
    g_free(runs);
    g_free(agg);
    /* resumable: everything is reused */
    rc = sh(&out, "%s sweep '%s' --vary switch.ecn_kmin=50KB,200KB --replicates 3 -o '%s/sw' --no-plots 2>&1", bin, ini,
            tmp);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(has(out, "0 run now, 6 already done"));
    g_free(out);
    /* bad values */
    rc = sh(&out, "%s sweep '%s' --vary switch.ecn_kmin=50KB --replicates -1 -o '%s/bad' 2>&1", bin, ini, tmp);
    CU_ASSERT_EQUAL(rc, 2);
    g_free(out);
    char *bad = write_in(tmp, "bad.ini", "[scenario]\nname = b\n[sweep]\nvary = switch.ecn_kmin=50KB\nreplicates = 0\n");
    rc = sh(&out, "%s sweep '%s' -o '%s/bad' 2>&1", bin, bad, tmp);
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT(has(out, "[sweep] replicates = '0': expected a number of seeds from 1 to 1000"));
    g_free(out);
    g_free(bad);
    test_rmtree(tmp);
    g_free(ini);
    g_free(tmp);
}

/* Tune with replicates. Where the seed moves the FCT more than the setting (Kmin 90/100/110 KB
 * on a 16-host permutation whose pairs and ECMP collisions change with the seed), the top
 * configurations are reported as not distinguishable. Where one setting is clearly better
 * (the incast of test_tune_known_best: only an 8000KB buffer without CC is drop-free and
 * fastest), every single seed picks it, and so does the tune over three seeds. */
static void test_tune_replicates(void)
{
    char *tmp = test_tmpdir();
    const char *bin = test_rocesim_bin();
    char *ini = write_in(tmp, "perm.ini", perm_ini);
    char *out = NULL;
    int rc = sh(&out, "%s tune '%s' --vary switch.ecn_kmin=90KB,100KB,110KB --objective fct_p99_ns --replicates 4 -j 2 "
                      "-o '%s/noise' --no-plots 2>&1", bin, ini, tmp);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(has(out, "not distinguishable"));
    CU_ASSERT(has(out, "(mean of 4 seeds, 95% CI)"));
    g_free(out);
    char *tcsv = slurp_in(tmp, "noise/tune.csv");
    CU_ASSERT(tcsv && g_str_has_prefix(tcsv, "run,phase,switch.ecn_kmin,replicates,status,feasible,objective,"
                                             "objective_mean,objective_sd,objective_ci95,violated,"));
    g_free(tcsv);

    char *inc = write_in(tmp, "inc.ini",
                         "[scenario]\nname = inc\nstop = 20ms\n"
                         "[topology]\nleaves = 1\nspines = 0\nhosts_per_leaf = 5\nhost_rate = 100Gbps\n"
                         "[switch]\npfc = off\n[nic]\ncc_preset = connectx\n"
                         "[workload inc]\nkind = incast\nsenders = 1-4\nreceiver = 0\nsize = 2MB\n");
    const char *vary = "--vary switch.buffer=500KB..8000KB*2 --vary nic.cc=dcqcn,none";
    for (int seed = 1; seed <= 3; seed++) {
        rc = sh(&out, "%s tune '%s' %s --objective fct_p99_ns --constraint 'drops==0' --budget 10 --seed %d -j 2 "
                      "-o '%s/clear%d' --no-plots 2>&1", bin, inc, vary, seed, tmp, seed);
        CU_ASSERT_EQUAL(rc, 0);
        CU_ASSERT(has(out, "best: buffer=8000KB,cc=none"));
        g_free(out);
    }
    rc = sh(&out, "%s tune '%s' %s --objective fct_p99_ns --constraint 'drops==0' --budget 10 --replicates 3 -j 2 "
                  "-o '%s/clear' --no-plots 2>&1", bin, inc, vary, tmp);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(has(out, "best: buffer=8000KB,cc=none"));
    /* a constraint must hold on every seed: the 500KB points drop on all three */
    char *t = slurp_in(tmp, "clear/tune.csv");
    CU_ASSERT(has(t, "drops==0 (on 0 of 3 seeds)"));
    g_free(t);
    g_free(out);
    /* --rank and --constraint-share are checked */
    rc = sh(&out, "%s tune '%s' %s --objective fct_p99_ns --rank p1000 -o '%s/x' 2>&1", bin, inc, vary, tmp);
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT(has(out, "--rank 'p1000': expected mean or a quantile p0 .. p100"));
    g_free(out);
    rc = sh(&out, "%s tune '%s' %s --objective fct_p99_ns --constraint-share 1.5 -o '%s/x' 2>&1", bin, inc, vary, tmp);
    CU_ASSERT_EQUAL(rc, 2);
    g_free(out);
    g_free(inc);
    g_free(ini);
    test_rmtree(tmp);
    g_free(tmp);
}

/* Per-job metrics: summary.json has jobs.NAME.KEY for every job, an incast's completion is its
 * first transfer's start to its last one's end in transfers.csv, and tune can constrain and
 * optimise them. */
static void test_job_metrics(void)
{
    char *tmp = test_tmpdir();
    char *ini = write_in(tmp, "small.ini", small_ini);
    const char *bin = test_rocesim_bin();
    char *out = NULL;
    int rc = sh(&out, "%s run '%s' -o '%s/run' --quiet --no-plots 2>&1", bin, ini, tmp);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    g_free(out);
    char *csv = slurp_in(tmp, "run/transfers.csv");
    CU_ASSERT_PTR_NOT_NULL_FATAL(csv);
    char **lines = g_strsplit(csv, "\n", -1);
    double first = -1, last = 0;
    int n = 0;
    for (int i = 1; lines[i] && *lines[i]; i++) {
        char **f = g_strsplit(lines[i], ",", -1);
        double st = g_ascii_strtod(f[5], NULL), en = g_ascii_strtod(f[6], NULL);
        if (first < 0 || st < first)
            first = st;
        if (en > last)
            last = en;
        n++;
        g_strfreev(f);
    }
    g_strfreev(lines);
    CU_ASSERT_EQUAL(n, 4);
    CU_ASSERT_EQUAL(test_metric_in(tmp, "run", "jobs.inc.completion_ns"), (gint64)(last - first));
    CU_ASSERT_EQUAL(test_metric_in(tmp, "run", "jobs.inc.transfers_completed"), 4);
    rc = sh(&out, "%s tune '%s' --vary switch.ecn_kmin=20KB,50KB --objective jobs.inc.completion_ns "
                  "--constraint 'jobs.inc.transfers_completed==4' -o '%s/tune' --no-plots 2>&1", bin, ini, tmp);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(has(out, "jobs.inc.completion_ns = "));
    g_free(out);
    g_free(csv);
    g_free(ini);
    test_rmtree(tmp);
    g_free(tmp);
}

static CU_TestInfo tests[] = {
    { "ranges: lists, geometric, linear, units, errors", test_ranges },
    { "--vary parsing", test_dim_parse },
    { "-j x --workers beyond the CPUs: a warning", test_threads_beyond_cpus_warned },
    { "point names: labels, sanitising, long names", test_point_names },
    { "constraints", test_constraints },
    { "coarse grid of tune", test_coarse },
    { "sweep points are byte-identical to single runs", test_points_match_single_runs },
    { "--workers auto: CPU shares by hand", test_cpu_shares },
    { "--workers auto: points share out the CPUs, pinned", test_workers_auto },
    { "resume after SIGTERM and after a deleted point", test_resume },
    { "a failing point is reported, the others complete", test_failing_point },
    { "bad input is exit 2 before anything runs", test_bad_input },
    { "[sweep] section", test_sweep_section },
    { "tune finds the known best point within its budget", test_tune_known_best },
    { "MPI split: same sweep.csv as one process", test_mpi_split },
    { "MPI ranks that read different scenarios: rank 0 names the rank, exit 2", test_mpi_ranks_differ },
    { "MPI ranks that do not share the folder: rank 0 names the rank, exit 2", test_mpi_folder_not_shared },
    { "deadlocked points are results, not failures", test_deadlock_points },
    { "plots", test_plots },
    { "replicates: seeds per configuration, mean/sd/CI, resumable", test_replicates },
    { "per-job metrics: jobs.NAME.KEY in summary, sweep and tune", test_job_metrics },
    { "tune with replicates: noise vs a clearly better setting", test_tune_replicates },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("sweep", tests)
