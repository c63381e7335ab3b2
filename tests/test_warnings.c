/* Each warning of analysis/warnings.c (and the unfinished-transfers one) from a scenario that
 * calls for it, and its absence from one that does not. The thresholds are in
 * analysis/warnings.h; the scenarios are chosen far from them:
 *  - quickstart: the incast port leaf0:0 sits at 8.5 MB for about half the run against a 400 KB
 *    Kmax (4 x Kmax = 1.6 MB), and is idle about 20% of the time while its senders are held
 *    at a few Mb/s (README, "Reading the demo's plots");
 *  - scenarios/incast.ini: the receiver's port is 99% busy: no idle-bottleneck warning;
 *  - pfc-incast without CC: spine1's port toward leaf0 is paused about 66% of the run;
 *    with PFC off and a 1 MB buffer the same incast drops data on (now lossy) priority 3;
 *  - a single flow: none of them;
 *  - incast16 with PFC on, 100 KiB of headroom and the default 4 KiB reserve: a leaf's 18
 *    ports (16 hosts, 2 spines) set apart 18 x (8 x 4096 + 102400) = 2,433,024 B (2376 KiB),
 *    a spine's 2 ports 270,336 B: a 2 MB buffer leaves both leaves no shared pool, 3 MB all. */
#include <json-glib/json-glib.h>
#include <string.h>
#include "tests/testutil.h"

/* The warnings of a run, one per line. */
static char *warnings_of(const char *scenario, const char *const *sets)
{
    struct test_outdir o = test_outdir_new();
    int rc = test_run_sim(scenario, o.out, sets);
    CU_ASSERT(rc == 0 || rc == 1);
    char *p = g_build_filename(o.out, "summary.json", NULL);
    JsonParser *jp = json_parser_new();
    GString *g = g_string_new(NULL);
    if (json_parser_load_from_file(jp, p, NULL)) {
        JsonArray *w = json_object_get_array_member(json_node_get_object(json_parser_get_root(jp)), "warnings");
        for (guint i = 0; w && i < json_array_get_length(w); i++)
            g_string_append_printf(g, "%s\n", json_array_get_string_element(w, i));
    } else {
        CU_FAIL("no summary.json");
    }
    g_object_unref(jp);
    g_free(p);
    test_outdir_free(&o);
    return g_string_free(g, FALSE);
}

static gboolean has(const char *text, const char *needle)
{
    gboolean ok = strstr(text, needle) != NULL;
    if (!ok)
        printf("\n    no '%s' in:\n%s", needle, text);
    return ok;
}

static void test_queue_above_kmax(void)
{
    char *w = warnings_of("../../scenarios/quickstart.ini", NULL);
    CU_ASSERT(has(w, "queue at leaf0:0 held above 4 x Kmax (1.6 MB)"));
    CU_ASSERT(has(w, "ECN is not controlling it"));
    g_free(w);
    w = warnings_of("single_flow.ini", NULL);
    CU_ASSERT_PTR_NULL(strstr(w, "Kmax"));
    g_free(w);
}

static void test_bottleneck_idle(void)
{
    char *w = warnings_of("../../scenarios/quickstart.ini", NULL);
    CU_ASSERT(has(w, "the bottleneck leaf0:0 -> host0 sat idle"));
    CU_ASSERT(has(w, "congestion control held back"));
    g_free(w);
    w = warnings_of("../../scenarios/incast.ini", NULL);
    CU_ASSERT_PTR_NULL(strstr(w, "sat idle"));
    g_free(w);
    const char *none[] = { "--set", "nic.cc=none", NULL }; /* no congestion control to blame */
    w = warnings_of("../../scenarios/quickstart.ini", none);
    CU_ASSERT_PTR_NULL(strstr(w, "sat idle"));
    g_free(w);
}

static void test_lossy_drops(void)
{
    const char *sets[] = { "--set", "switch.pfc=off", "--set", "switch.buffer=1MB", "--set", "nic.rto=1ms", NULL };
    char *w = warnings_of("../../scenarios/pfc-incast.ini", sets);
    CU_ASSERT(has(w, "dropped on lossy priority 3 (data)"));
    g_free(w);
    w = warnings_of("../../scenarios/pfc-incast.ini", NULL);
    CU_ASSERT_PTR_NULL(strstr(w, "lossy priority"));
    g_free(w);
}

static void test_long_pause(void)
{
    char *w = warnings_of("../../scenarios/pfc-incast.ini", NULL);
    CU_ASSERT(has(w, "was paused by PFC for"));
    CU_ASSERT(has(w, "head-of-line blocking"));
    g_free(w);
    w = warnings_of("single_flow.ini", NULL);
    CU_ASSERT_STRING_EQUAL(w, "");
    g_free(w);
}

static void test_unfinished(void)
{
    char *w = warnings_of("analysis/unfinished.ini", NULL);
    CU_ASSERT(has(w, "1 of 1 transfers did not complete by stop = 20us"));
    g_free(w);
}

static void test_buffer_overcommitted(void)
{
    const char *small[] = { "--set", "switch.pfc=on", "--set", "switch.headroom=100KiB", "--set", "switch.buffer=2MB",
                            NULL };
    char *w = warnings_of("incast16.ini", small);
    CU_ASSERT(has(w, "leaf0: the reserves and PFC headroom of its 18 ports need 2376KiB, its buffer is 2MB (2 switches "
                     "in all): no shared buffer is left"));
    CU_ASSERT(has(w, "raise [switch] buffer above 2376KiB"));
    g_free(w);
    const char *fits[] = { "--set", "switch.pfc=on", "--set", "switch.headroom=100KiB", "--set", "switch.buffer=3MB",
                           NULL };
    w = warnings_of("incast16.ini", fits);
    CU_ASSERT_PTR_NULL(strstr(w, "no shared buffer"));
    g_free(w);
}

static CU_TestInfo tests[] = {
    { "queue held far above Kmax", test_queue_above_kmax },
    { "bottleneck idle while CC holds its senders back", test_bottleneck_idle },
    { "drops on a lossy priority", test_lossy_drops },
    { "a link paused for a large share of the run", test_long_pause },
    { "transfers unfinished at stop", test_unfinished },
    { "a switch whose reserves and headroom take its whole buffer", test_buffer_overcommitted },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("warnings", tests)
