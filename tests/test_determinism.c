/* Determinism: the same scenario and seed give byte-identical results files (summary.json
 * aside from its "engine" object of wall-clock figures); another seed draws another
 * permutation. tests/scenarios/determinism.ini mixes a permutation and an incast with DCQCN,
 * ECN and PFC so that hashing, marking, pausing and every random stream take part. */
#include <json-glib/json-glib.h>
#include <stdint.h>
#include <string.h>
#include "tests/testutil.h"

/* ---- helpers ---- */

static char *slurp(const char *dir, const char *file, gsize *len)
{
    char *p = g_build_filename(dir, file, NULL);
    char *text = NULL;
    if (!g_file_get_contents(p, &text, len, NULL))
        text = NULL;
    g_free(p);
    return text;
}

/* summary.json without its "engine" object, as compact JSON text; *engine says whether the
 * object was there. NULL if the file does not parse. */
static char *summary_sans_engine(const char *dir, gboolean *engine)
{
    char *p = g_build_filename(dir, "summary.json", NULL);
    JsonParser *jp = json_parser_new();
    char *text = NULL;
    *engine = FALSE;
    if (json_parser_load_from_file(jp, p, NULL)) {
        JsonNode *root = json_parser_get_root(jp);
        JsonObject *o = json_node_get_object(root);
        if (json_object_has_member(o, "engine")) {
            *engine = json_object_get_int_member(json_object_get_object_member(o, "engine"), "events") > 0;
            json_object_remove_member(o, "engine");
        }
        text = json_to_string(root, FALSE);
    }
    g_object_unref(jp);
    g_free(p);
    return text;
}

/* (src, dst) of the permutation's transfers: ids 0-15, the first workload. */
static void perm_pairs(const char *dir, uint32_t *src, uint32_t *dst)
{
    gsize len;
    char *text = slurp(dir, "transfers.csv", &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    char **lines = g_strsplit(text, "\n", -1);
    int found = 0;
    for (int i = 1; lines[i]; i++) {
        char **f = g_strsplit(lines[i], ",", -1);
        if (g_strv_length(f) >= 3) {
            int id = atoi(f[0]);
            if (id >= 0 && id < 16) {
                src[id] = (uint32_t)atoi(f[1]);
                dst[id] = (uint32_t)atoi(f[2]);
                found++;
            }
        }
        g_strfreev(f);
    }
    CU_ASSERT_EQUAL(found, 16);
    g_strfreev(lines);
    g_free(text);
}

/* ---- tests ---- */

static void test_same_seed_same_results(void)
{
    struct test_outdir a = test_outdir_new(), b = test_outdir_new();
    CU_ASSERT_EQUAL_FATAL(test_run_sim("determinism.ini", a.out, NULL), 0);
    CU_ASSERT_EQUAL_FATAL(test_run_sim("determinism.ini", b.out, NULL), 0);

    /* the files the issue names must be there and not trivially empty */
    static const char *const named[] = { "transfers.csv", "queues.csv", "rates.csv", "counters.csv", "pfc.csv" };
    for (size_t i = 0; i < G_N_ELEMENTS(named); i++) {
        gsize la = 0;
        char *ta = slurp(a.out, named[i], &la);
        CU_ASSERT_PTR_NOT_NULL(ta);
        if (ta) {
            int rows = 0;
            for (gsize k = 0; k < la; k++)
                rows += ta[k] == '\n';
            if (rows < 3)
                fprintf(stderr, "\n  %s has only %d lines\n", named[i], rows);
            CU_ASSERT(rows >= 3); /* a header and real data: marks, rates, pauses happened */
        }
        g_free(ta);
    }

    /* every CSV file is byte-identical (report.html shows the folder and wall-clock figures,
     * summary.json is compared below); both folders hold the same files */
    GDir *d = g_dir_open(a.out, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    const char *name;
    int compared = 0, na = 0, nb = 0;
    while ((name = g_dir_read_name(d))) {
        na++;
        char *pa = g_build_filename(a.out, name, NULL);
        gboolean is_file = g_file_test(pa, G_FILE_TEST_IS_REGULAR);
        g_free(pa);
        if (!is_file || !g_str_has_suffix(name, ".csv"))
            continue;
        gsize la = 0, lb = 0;
        char *ta = slurp(a.out, name, &la), *tb = slurp(b.out, name, &lb);
        CU_ASSERT_PTR_NOT_NULL(tb);
        if (ta && tb && (la != lb || memcmp(ta, tb, la))) {
            fprintf(stderr, "\n  %s differs between two runs with the same seed\n", name);
            CU_FAIL("results file differs");
        }
        compared++;
        g_free(ta);
        g_free(tb);
    }
    g_dir_close(d);
    d = g_dir_open(b.out, 0, NULL);
    while (d && g_dir_read_name(d))
        nb++;
    if (d)
        g_dir_close(d);
    CU_ASSERT_EQUAL(na, nb);
    CU_ASSERT(compared >= 5);

    /* summary.json: identical once the wall-clock "engine" object is set aside */
    gboolean ea = FALSE, eb = FALSE;
    char *sa = summary_sans_engine(a.out, &ea), *sb = summary_sans_engine(b.out, &eb);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sa);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sb);
    CU_ASSERT(ea && eb);
    CU_ASSERT_STRING_EQUAL(sa, sb);
    /* and the run did exercise what it should: marks, CNPs and pauses */
    CU_ASSERT_EQUAL(test_metric(a.out, "transfers_completed"), 22);
    CU_ASSERT(test_metric(a.out, "ecn_marked") > 0);
    CU_ASSERT(test_metric(a.out, "cnp_sent") > 0);
    CU_ASSERT(test_metric(a.out, "pause_frames") > 0);
    g_free(sa);
    g_free(sb);
    test_outdir_free(&a);
    test_outdir_free(&b);
}

static void test_other_seed_other_permutation(void)
{
    struct test_outdir a = test_outdir_new(), b = test_outdir_new();
    CU_ASSERT_EQUAL_FATAL(test_run_sim("determinism.ini", a.out, NULL), 0);
    const char *seed[] = { "--seed", "2", NULL };
    CU_ASSERT_EQUAL_FATAL(test_run_sim("determinism.ini", b.out, seed), 0);
    gsize la = 0, lb = 0;
    char *ta = slurp(a.out, "transfers.csv", &la), *tb = slurp(b.out, "transfers.csv", &lb);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ta);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tb);
    CU_ASSERT(la != lb || memcmp(ta, tb, la) != 0);
    g_free(ta);
    g_free(tb);
    /* both are permutations without fixed points (every host sends to another host, and
     * receives exactly once), and they are not the same permutation */
    uint32_t sa[16], da[16], sb[16], db[16];
    perm_pairs(a.out, sa, da);
    perm_pairs(b.out, sb, db);
    int same = 0;
    for (int s = 0; s < 2; s++) {
        const uint32_t *src = s ? sb : sa, *dst = s ? db : da;
        int seen[16] = { 0 };
        for (int i = 0; i < 16; i++) {
            CU_ASSERT(src[i] < 16 && dst[i] < 16);
            CU_ASSERT(src[i] != dst[i]);
            if (dst[i] < 16)
                seen[dst[i]]++;
        }
        for (int h = 0; h < 16; h++)
            CU_ASSERT_EQUAL(seen[h], 1);
    }
    for (int i = 0; i < 16; i++)
        same += sa[i] == sb[i] && da[i] == db[i];
    CU_ASSERT(same < 16);
    /* the summary records the seed that ran */
    gboolean e;
    char *sum = summary_sans_engine(b.out, &e);
    CU_ASSERT_PTR_NOT_NULL(strstr(sum ? sum : "", "\"seed\":\"2\""));
    g_free(sum);
    test_outdir_free(&a);
    test_outdir_free(&b);
}

static CU_TestInfo tests[] = {
    { "same seed: byte-identical results", test_same_seed_same_results },
    { "other seed: another permutation", test_other_seed_other_permutation },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("determinism", tests)
