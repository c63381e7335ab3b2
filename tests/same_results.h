/* Comparing results folders of one scenario run on different worker counts (threads or MPI
 * ranks): summary.json without its run-dependent figures, and every other file byte for byte. */
#ifndef ROCESIM_TEST_SAME_RESULTS_H
#define ROCESIM_TEST_SAME_RESULTS_H
#include <json-glib/json-glib.h>
#include <string.h>
#include "tests/testutil.h"

/* summary.json's text with the engine's run-dependent members removed; the engine object's
 * "workers" in *workers, the partition's per-worker entries in *parts and its transport
 * ("threads" or "mpi", g_free it) in *transport. */
static char *summary_masked(const char *dir, gint64 *workers, guint *parts, char **transport)
{
    char *p = g_build_filename(dir, "summary.json", NULL);
    JsonParser *jp = json_parser_new();
    char *text = NULL;
    *workers = 0;
    *parts = 0;
    *transport = NULL;
    if (json_parser_load_from_file(jp, p, NULL)) {
        JsonNode *root = json_parser_get_root(jp);
        JsonObject *e = json_object_get_object_member(json_node_get_object(root), "engine");
        *workers = json_object_get_int_member(e, "workers");
        if (json_object_has_member(e, "partition")) {
            JsonObject *p = json_object_get_object_member(e, "partition");
            *parts = json_array_get_length(json_object_get_array_member(p, "per_worker"));
            *transport = g_strdup(json_object_get_string_member(p, "transport"));
        }
        static const char *const drop[] = { "wall_s", "setup_s", "events_per_s", "packet_hops_per_s", "peak_rss_bytes",
                                            "output_s", "output_share", "output_stream_s", "workers", "partition" };
        for (size_t i = 0; i < G_N_ELEMENTS(drop); i++)
            if (json_object_has_member(e, drop[i]))
                json_object_remove_member(e, drop[i]);
        text = json_to_string(root, FALSE);
    }
    g_object_unref(jp);
    g_free(p);
    return text;
}

/* Every file under a (but report.html, which shows wall-clock figures, and summary.json) is
 * in b with the same bytes, and b has no other. Returns the number of files compared. */
static int compare_tree(const char *a, const char *b, const char *rel)
{
    char *da = g_build_filename(a, rel, NULL), *db = g_build_filename(b, rel, NULL);
    GDir *d = g_dir_open(da, 0, NULL);
    int n = 0;
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    const char *name;
    while ((name = g_dir_read_name(d))) {
        char *sub = g_build_filename(rel, name, NULL);
        char *pa = g_build_filename(a, sub, NULL), *pb = g_build_filename(b, sub, NULL);
        if (g_file_test(pa, G_FILE_TEST_IS_DIR)) {
            n += compare_tree(a, b, sub);
        } else if (strcmp(sub, "report.html") && strcmp(sub, "summary.json")) {
            gchar *ta = NULL, *tb = NULL;
            gsize la = 0, lb = 0;
            CU_ASSERT_TRUE(g_file_get_contents(pa, &ta, &la, NULL));
            gboolean same = g_file_get_contents(pb, &tb, &lb, NULL) && la == lb && memcmp(ta, tb, la) == 0;
            if (!same)
                fprintf(stderr, "\n  %s differs between %s and %s\n", sub, a, b);
            CU_ASSERT_TRUE(same);
            g_free(ta);
            g_free(tb);
            n++;
        }
        g_free(pa);
        g_free(pb);
        g_free(sub);
    }
    g_dir_close(d);
    /* nothing more in b */
    GDir *e = g_dir_open(db, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    while ((name = g_dir_read_name(e))) {
        char *pa = g_build_filename(da, name, NULL);
        CU_ASSERT_TRUE(g_file_test(pa, G_FILE_TEST_EXISTS));
        g_free(pa);
    }
    g_dir_close(e);
    g_free(da);
    g_free(db);
    return n;
}

/* `rocesim run tests/scenarios/REL -o OUT -q --no-plots EXTRA...`: the exit status. */
static int test_run_sim_rc(const char *rel, const char *out, const char *const *extra)
{
    char *path = test_data_path(rel);
    const char *args[] = { "run", path, "-o", out, "-q", "--no-plots", NULL };
    char *se = NULL;
    int rc = test_rocesim(args, extra, NULL, &se);
    if (rc != 0 && rc != 3)
        fprintf(stderr, "\n  rocesim run %s: exit %d\n%s\n", rel, rc, se ? se : "");
    g_free(se);
    g_free(path);
    return rc;
}

#endif
