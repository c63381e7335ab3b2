/* Issue 17 regression tests: inputs that once crashed, lost data or were accepted although
 * wrong. Each test names the defect it guards; scenarios are written to a temporary folder so
 * a test shows its whole input. */
#include <glib/gstdio.h>
#include <string.h>
#include "models/topology.h"
#include "sim/scenario.h"
#include "tests/testutil.h"

/* ---- helpers ---- */

/* Writes NAME with CONTENTS into DIR; returns the path (g_free). */
static char *put_file(const char *dir, const char *name, const char *contents)
{
    char *p = g_build_filename(dir, name, NULL);
    CU_ASSERT_FATAL(g_file_set_contents(p, contents, -1, NULL));
    return p;
}

/* Loads scenario text (written as DIR/s.ini); NULL and *msg (g_free) on error. */
static struct scenario *load_text(const char *dir, const char *text, char **msg)
{
    char *p = put_file(dir, "s.ini", text);
    GError *err = NULL;
    struct scenario *s = scenario_load(p, NULL, &err);
    *msg = err ? g_strdup(err->message) : NULL;
    g_clear_error(&err);
    g_free(p);
    return s;
}

/* Loads scenario text that must be refused with a message containing every NULL-terminated
 * WANT string. */
static void refused(const char *text, const char *const *want)
{
    char *dir = test_tmpdir(), *msg = NULL;
    struct scenario *s = load_text(dir, text, &msg);
    CU_ASSERT_PTR_NULL(s);
    if (s) {
        fprintf(stderr, "\n  accepted:\n%s\n", text);
        scenario_free(s);
    }
    for (int i = 0; msg && want[i]; i++)
        if (!strstr(msg, want[i])) {
            fprintf(stderr, "\n  message '%s' lacks '%s'\n", msg, want[i]);
            CU_FAIL("message");
        }
    g_free(msg);
    test_rmtree(dir);
    g_free(dir);
}

#define WORKLOAD "[workload w]\nkind = incast\nsenders = 1\nreceiver = 0\nsize = 4KB\n"

/* Builds the topology of an edge-list scenario; *msg is the error (g_free) or NULL. */
static struct topology *edges_topology(const char *edges, char **msg)
{
    char *dir = test_tmpdir();
    char *ep = put_file(dir, "t.topo", edges);
    struct scenario *s = load_text(dir, "[topology]\nkind = edges\nfile = t.topo\n" WORKLOAD, msg);
    struct topology *t = NULL;
    if (s) {
        GError *err = NULL;
        t = topology_build(s, &err);
        if (!t)
            *msg = g_strdup(err->message);
        g_clear_error(&err);
        scenario_free(s);
    }
    g_free(ep);
    test_rmtree(dir);
    g_free(dir);
    return t;
}

/* ---- memory errors ---- */

/* `link h0  s0 ...` (two spaces): the field compaction freed a token twice. */
static void test_edges_repeated_blanks(void)
{
    char *msg = NULL;
    struct topology *t = edges_topology("host  h0\nhost h1\t\t\nswitch   s0\n"
                                        "link h0  s0 100Gbps\t 1us\nlink  h1 s0   100Gbps 1us  \n", &msg);
    if (!t)
        fprintf(stderr, "\n  %s\n", msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(t->nhosts, 2);
    CU_ASSERT_EQUAL(t->nnodes, 3);
    CU_ASSERT_EQUAL(t->nports, 4);
    CU_ASSERT_EQUAL(t->ports[t->nodes[0].first_port].rate_bps, 100000000000ull);
    topology_free(t);
    g_free(msg);
}

/* Hosts and no switch: memcpy from the empty switch array's NULL data. */
static void test_edges_no_switch(void)
{
    char *msg = NULL;
    struct topology *t = edges_topology("host h0\nhost h1\nlink h0 h1 100Gbps 1us\n", &msg);
    CU_ASSERT_PTR_NULL(t);
    topology_free(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "t.topo"));
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "switch"));
    g_free(msg);
}

/* [workload] and [fault] without a name: the name was read past the end of the group name. */
static void test_nameless_sections(void)
{
    refused("[workload]\nkind = incast\nsenders = 1\nreceiver = 0\nsize = 4KB\n",
            (const char *const[]){ "[workload]", "needs a name", NULL });
    refused(WORKLOAD "[fault]\nkind = nic-stall\nnode = host0\nat = 1us\n",
            (const char *const[]){ "[fault]", "needs a name", NULL });
}

static CU_TestInfo tests[] = {
    { "edge list: repeated blanks between fields", test_edges_repeated_blanks },
    { "edge list: hosts and no switch refused", test_edges_no_switch },
    { "[workload] / [fault] without a name refused", test_nameless_sections },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("hardening", tests)
