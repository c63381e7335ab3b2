/* The README's key tables against the loader's own tables (models/scenario.c's and each
 * congestion-control algorithm's, through scenario_key_at): every key the loader
 * reads is documented, every key a section's table names is one the loader reads, and the
 * default a table shows is the default the loader applies (sizes, rates and times compared as
 * values: `67.108864ms` is the loader's `67108864ns`). */
#include "models/net.h"
#include "models/server.h"
#include "models/workload.h"
#include "sim/units.h"
#include "tests/testutil.h"

static char *readme_text(void)
{
    char *p = test_data_path("../../README.md");
    char *text = NULL;
    if (!g_file_get_contents(p, &text, NULL, NULL))
        text = NULL;
    g_free(p);
    return text;
}

static const struct scenario_key_info *lookup(const GArray *keys, const char *sec, const char *key)
{
    for (guint i = 0; i < keys->len; i++) {
        const struct scenario_key_info *k = &g_array_index(keys, struct scenario_key_info, i);
        if (!strcmp(k->section, sec) && !strcmp(k->key, key))
            return k;
    }
    return NULL;
}

static GArray *loader_keys(void)
{
    GArray *a = g_array_new(FALSE, FALSE, sizeof(struct scenario_key_info));
    struct scenario_key_info k;
    for (size_t i = 0; scenario_key_at(i, &k); i++)
        g_array_append_val(a, k);
    return a;
}

/* The backticked words of a table cell, in order. */
static char **ticked(const char *cell)
{
    GPtrArray *out = g_ptr_array_new();
    for (const char *p = strchr(cell, '`'); p; p = strchr(p + 1, '`')) {
        const char *q = strchr(p + 1, '`');
        if (!q)
            break;
        g_ptr_array_add(out, g_strndup(p + 1, (gsize)(q - p - 1)));
        p = q;
    }
    g_ptr_array_add(out, NULL);
    return (char **)g_ptr_array_free(out, FALSE);
}

static bool same_value(const struct scenario_key_info *k, const char *doc)
{
    if (!strcmp(k->deflt, doc))
        return true;
    uint64_t a = 0, b = 0;
    simtime_t ta = 0, tb = 0;
    bool ok = false;
    if (k->unit && !strcmp(k->unit, "size"))
        ok = units_parse_size(k->deflt, &a, NULL) && units_parse_size(doc, &b, NULL) && a == b;
    else if (k->unit && !strcmp(k->unit, "rate"))
        ok = units_parse_rate(k->deflt, &a, NULL) && units_parse_rate(doc, &b, NULL) && a == b;
    else if (k->unit && !strcmp(k->unit, "time"))
        ok = units_parse_time(k->deflt, &ta, NULL) && units_parse_time(doc, &tb, NULL) && ta == tb;
    return ok;
}

/* "### `[switch]`" -> "switch"; any other heading -> NULL */
static char *section_of_heading(const char *line)
{
    const char *p = line;
    while (*p == '#')
        p++;
    if (p == line || strncmp(p, " `[", 3))
        return NULL;
    const char *e = strchr(p + 3, ']');
    /* named sections ("[workload NAME]") are the workload and fault builders' own */
    if (!e || e[1] != '`' || memchr(p + 3, ' ', (size_t)(e - p - 3)))
        return NULL;
    return g_strndup(p + 3, (gsize)(e - p - 3));
}

static void test_tables_match_loader(void)
{
    char *text = readme_text();
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    GArray *keys = loader_keys();
    CU_ASSERT(keys->len > 50);
    char **lines = g_strsplit(text, "\n", -1);
    char *sec = NULL;
    unsigned rows = 0, compared = 0;
    for (int i = 0; lines[i]; i++) {
        if (lines[i][0] == '#') {
            g_free(sec);
            sec = section_of_heading(lines[i]);
            continue;
        }
        if (!sec || strncmp(lines[i], "| `", 3))
            continue;
        char **cells = g_strsplit(lines[i], "|", -1);
        if (g_strv_length(cells) < 4) {
            g_strfreev(cells);
            continue;
        }
        rows++;
        char **names = ticked(cells[1]), **vals = ticked(cells[2]);
        guint nn = g_strv_length(names), nv = g_strv_length(vals);
        /* "`[timely] alpha`, `beta`": a named section holds for the rest of the row;
         * otherwise the keys are the heading's section's */
        char s2[64] = "", k2[64] = "";
        const char *ks = sec;
        for (guint j = 0; j < nn; j++) {
            const char *kk = names[j];
            if (sscanf(names[j], "[%63[a-z_]] %63s", s2, k2) == 2) {
                ks = s2;
                kk = k2;
            }
            const struct scenario_key_info *k = lookup(keys, ks, kk);
            if (!k) {
                fprintf(stderr, "\n  README.md:%d: [%s] %s is not a key the loader reads\n", i + 1, ks, kk);
                CU_FAIL("README documents a key the loader does not read");
                continue;
            }
            const char *doc = nv == nn ? vals[j] : nv == 1 ? vals[0] : NULL;
            if (!k->deflt || !*k->deflt || !doc)
                continue;
            compared++;
            if (!same_value(k, doc)) {
                fprintf(stderr, "\n  README.md:%d: [%s] %s default shown as `%s`, the loader's is %s\n",
                        i + 1, ks, kk, doc, k->deflt);
                CU_FAIL("README default differs from the loader's");
            }
        }
        g_strfreev(names);
        g_strfreev(vals);
        g_strfreev(cells);
    }
    /* the tables exist and carry defaults: a parser that matched nothing would pass silently */
    CU_ASSERT(rows > 30);
    CU_ASSERT(compared > 30);
    g_free(sec);
    g_strfreev(lines);
    g_array_free(keys, TRUE);
    g_free(text);
}

static void test_every_key_documented(void)
{
    char *text = readme_text();
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    GArray *keys = loader_keys();
    for (guint i = 0; i < keys->len; i++) {
        const struct scenario_key_info *k = &g_array_index(keys, struct scenario_key_info, i);
        char *a = g_strdup_printf("`%s`", k->key), *b = g_strdup_printf("`[%s] %s", k->section, k->key);
        char *c = g_strdup_printf("`%s =", k->key);
        if (!strstr(text, a) && !strstr(text, b) && !strstr(text, c)) {
            fprintf(stderr, "\n  [%s] %s is not in README.md\n", k->section, k->key);
            CU_FAIL("a key the loader reads is undocumented");
        }
        g_free(a);
        g_free(b);
        g_free(c);
    }
    g_array_free(keys, TRUE);
    g_free(text);
}

/* "`word`" or "`word =" somewhere in the README. */
static bool documented(const char *text, const char *word)
{
    char *a = g_strdup_printf("`%s`", word), *b = g_strdup_printf("`%s =", word);
    bool ok = strstr(text, a) || strstr(text, b);
    g_free(a);
    g_free(b);
    return ok;
}

/* The keys of the named sections and of [server]/[cluster] come from their models' own lists
 * (models/workload.c, fault.c, server.c): every kind and every key must be in the README. */
static void test_model_keys_documented(void)
{
    char *text = readme_text();
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    const struct { const char *what; const struct cfg_kind *table; } kinds[] = {
        { "workload", workload_kinds }, { "fault", fault_kinds },
    };
    for (size_t t = 0; t < G_N_ELEMENTS(kinds); t++)
        for (const struct cfg_kind *k = kinds[t].table; k->kind; k++) {
            if (strcmp(k->kind, "*") && !documented(text, k->kind)) {
                fprintf(stderr, "\n  %s kind %s is not in README.md\n", kinds[t].what, k->kind);
                CU_FAIL("a kind the loader accepts is undocumented");
            }
            char **words = g_strsplit(k->keys, " ", -1);
            for (char **w = words; *w; w++) {
                size_t l = strlen(*w);
                if (l && (*w)[l - 1] == '!')
                    (*w)[l - 1] = 0;
                if (**w && !documented(text, *w)) {
                    fprintf(stderr, "\n  [%s] kind %s: key %s is not in README.md\n", kinds[t].what, k->kind, *w);
                    CU_FAIL("a key of a named section is undocumented");
                }
            }
            g_strfreev(words);
        }
    const char *const *lists[] = { server_section_keys, cluster_section_keys };
    for (size_t l = 0; l < G_N_ELEMENTS(lists); l++)
        for (const char *const *k = lists[l]; *k; k++)
            if (!documented(text, *k)) {
                fprintf(stderr, "\n  [%s] %s is not in README.md\n", l ? "cluster" : "server", *k);
                CU_FAIL("a [server]/[cluster] key is undocumented");
            }
    g_free(text);
}

static CU_TestInfo tests[] = {
    { "README tables: known keys, loader defaults", test_tables_match_loader },
    { "every loader key is in the README", test_every_key_documented },
    { "every workload, fault, server and cluster key is in the README", test_model_keys_documented },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("readme keys", tests)
