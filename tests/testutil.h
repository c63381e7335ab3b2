/* Shared scaffolding for the CUnit suites: each tests/test_*.c is its own program.
 *
 *   static CU_TestInfo tests[] = { {"name", fn}, CU_TEST_INFO_NULL };
 *   TEST_MAIN("suite name", tests)
 *
 * The program exits non-zero when a test fails; tests/run-suites adds up the tallies.
 * ROCESIM (environment) names the rocesim binary for tests that run the command line.
 */
#ifndef ROCESIM_TESTUTIL_H
#define ROCESIM_TESTUTIL_H
#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>
#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <stdlib.h>

#define TEST_MAIN(suite_name, tests_array)                                                     \
    int main(void)                                                                             \
    {                                                                                          \
        if (CU_initialize_registry() != CUE_SUCCESS)                                           \
            return 2;                                                                          \
        CU_SuiteInfo suites[] = { { suite_name, NULL, NULL, NULL, NULL, tests_array },         \
                                  CU_SUITE_INFO_NULL };                                        \
        if (CU_register_suites(suites) != CUE_SUCCESS)                                         \
            return 2;                                                                          \
        CU_basic_set_mode(CU_BRM_VERBOSE);                                                     \
        CU_basic_run_tests();                                                                  \
        unsigned failed = CU_get_number_of_tests_failed();                                     \
        unsigned run = CU_get_number_of_tests_run();                                           \
        printf("TALLY %u %u\n", run - failed, failed);                                         \
        CU_cleanup_registry();                                                                 \
        return failed ? 1 : 0;                                                                 \
    }

/* The rocesim binary under test (release or sanitizer build). */
static inline const char *test_rocesim_bin(void)
{
    const char *b = getenv("ROCESIM");
    return b ? b : "build/rocesim";
}

/* Runs a shell command, captures stdout+stderr into *out (may be NULL), returns exit status. */
static inline int test_run(const char *cmd, char **out)
{
    gchar *sout = NULL, *serr = NULL;
    gint status = 0;
    GError *err = NULL;
    const gchar *argv[] = { "/bin/sh", "-c", cmd, NULL };
    if (!g_spawn_sync(NULL, (gchar **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &sout, &serr,
                      &status, &err)) {
        g_error_free(err);
        return -1;
    }
    if (out)
        *out = g_strconcat(sout ? sout : "", serr ? serr : "", NULL);
    g_free(sout);
    g_free(serr);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A fresh temporary directory; caller g_free()s the path and removes it with test_rmtree. */
static inline char *test_tmpdir(void)
{
    return g_dir_make_tmp("rocesim-test-XXXXXX", NULL);
}

static inline void test_rmtree(const char *dir)
{
    if (!dir)
        return;
    char *cmd = g_strdup_printf("rm -rf '%s'", dir);
    test_run(cmd, NULL);
    g_free(cmd);
}

/* tests/scenarios/REL (REL may have folders: "coll/ring16.ini"), found from the working folder
 * (make runs the suites from the top of the tree) or from the test binary's own path. */
static inline char *test_data_path(const char *rel)
{
    if (g_file_test("tests/scenarios", G_FILE_TEST_IS_DIR))
        return g_build_filename("tests", "scenarios", rel, NULL);
    char *exe = g_file_read_link("/proc/self/exe", NULL);
    char *dir = exe ? g_path_get_dirname(exe) : g_strdup(".");
    char *p = g_build_filename(dir, "..", "..", "tests", "scenarios", rel, NULL);
    g_free(exe);
    g_free(dir);
    return p;
}

/* `rocesim run tests/scenarios/REL -o OUT -q --no-plots EXTRA...`: the exit status; stderr is
 * printed when the run fails. */
static inline int test_run_sim(const char *rel, const char *out, const char *const *extra)
{
    char *path = test_data_path(rel);
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)test_rocesim_bin());
    const char *fixed[] = { "run", path, "-o", out, "-q", "--no-plots" };
    for (size_t i = 0; i < G_N_ELEMENTS(fixed); i++)
        g_ptr_array_add(argv, (gpointer)fixed[i]);
    for (int i = 0; extra && extra[i]; i++)
        g_ptr_array_add(argv, (gpointer)extra[i]);
    g_ptr_array_add(argv, NULL);
    gchar *so = NULL, *se = NULL;
    gint status = 0;
    GError *e = NULL;
    int rc = -1;
    if (g_spawn_sync(NULL, (gchar **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &so, &se, &status, &e))
        rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    else {
        fprintf(stderr, "cannot run %s: %s\n", test_rocesim_bin(), e->message);
        g_error_free(e);
    }
    if (rc != 0)
        fprintf(stderr, "\n  rocesim run %s: exit %d\n%s\n", rel, rc, se ? se : "");
    g_free(so);
    g_free(se);
    g_ptr_array_free(argv, TRUE);
    g_free(path);
    return rc;
}

/* metrics.KEY (an integer) of DIR/summary.json, or -1 when missing. */
static inline gint64 test_metric(const char *dir, const char *key)
{
    char *p = g_build_filename(dir, "summary.json", NULL);
    JsonParser *jp = json_parser_new();
    gint64 v = -1;
    if (json_parser_load_from_file(jp, p, NULL)) {
        JsonObject *m = json_object_get_object_member(json_node_get_object(json_parser_get_root(jp)), "metrics");
        if (m && json_object_has_member(m, key))
            v = json_object_get_int_member(m, key);
    }
    g_object_unref(jp);
    g_free(p);
    if (v < 0)
        fprintf(stderr, "\n  %s/summary.json: no metrics.%s\n", dir, key);
    return v;
}

#endif
