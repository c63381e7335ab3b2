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

#endif
