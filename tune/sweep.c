/* Parameter sweeps: the grid of points, resumability, the results of a point, sweep.csv
 * (see sweep.h; the values, the [sweep] section and the process pool have files of their own). */
#define _GNU_SOURCE
#include "tune/sweep.h"
#include "analysis/metrics.h"
#include <glib/gstdio.h>
#include <sys/file.h>
#include "results_io/csv.h"
#include "results_io/folder.h"
#include "models/scenario.h"
#include <sched.h>
#include "tune/sweep_cpus.h"

G_DEFINE_QUARK(rocesim-sweep-error, sweep_error)

/* ======================================================================================
 * The grid
 * ====================================================================================== */

static void point_free(gpointer ptr)
{
    struct sweep_point *p = ptr;
    g_free(p->idx);
    g_free(p->name);
    g_strfreev(p->sets);
    if (p->expected)
        g_key_file_unref(p->expected);
    g_free(p->invalid);
    g_free(p->failure);
    g_free(p->stderr_tail);
    if (p->metrics)
        g_hash_table_unref(p->metrics);
    g_free(p);
}

guint sweep_default_jobs(const struct mpi_split *m)
{
    /* one point per CPU of this rank's share (ranks not bound to cores share the host's) */
    int cpu[CPU_SETSIZE];
    return sweep_cpus_mine(m, cpu);
}

gboolean sweep_init(struct sweep *s, const char *cmd, const char *scenario, char **sets, GPtrArray *dims,
                    const char *out, guint jobs, guint replicates, gboolean quiet, GError **err)
{
    memset(s, 0, sizeof *s);
    s->lock_fd = -1;
    s->cmd = cmd;
    s->scenario = g_strdup(scenario);
    s->sets = g_strdupv(sets);
    s->dims = dims;
    s->points = g_ptr_array_new_with_free_func(point_free);
    s->jobs = jobs;
    s->quiet = quiet;
    s->progress = !quiet && isatty(STDERR_FILENO);
    s->replicates = replicates ? replicates : 1;
    if (!mpi_split_detect(&s->mpi, err))
        return FALSE;
    if (!s->jobs)
        s->jobs = sweep_default_jobs(&s->mpi);
    if (dims->len == 0) {
        g_set_error(err, SWEEP_ERROR, 1,
                    "nothing to vary: give --vary SECTION.KEY=VALUES (e.g. --vary switch.ecn_kmin=50KB,100KB) or "
                    "a [sweep] section with vary = ... in the scenario");
        return FALSE;
    }
    if (!sweep_dims_prepare(dims, err))
        return FALSE;

    /* the scenario with the sweep's own overrides */
    struct scenario *sc = scenario_load(scenario, (const char *const *)s->sets, err);
    if (!sc)
        return FALSE;
    s->out = out ? g_strdup(out) : g_strdup_printf("%s-%s", sc->out_dir, cmd);
    guint64 seed0 = sc->seed;
    scenario_free(sc);
    if (s->replicates > 1 && seed0 > G_MAXUINT64 - s->replicates) {
        g_set_error(err, SWEEP_ERROR, 1, "seed %" G_GUINT64_FORMAT ": %u replicates would run past the largest seed",
                    seed0, s->replicates);
        return FALSE;
    }
    s->points_dir = g_build_filename(s->out, "points", NULL);

    double total = 1;
    for (guint d = 0; d < dims->len; d++)
        total *= ((struct sweep_dim *)g_ptr_array_index(dims, d))->values->len;
    if (total * s->replicates > SWEEP_MAX_POINTS) {
        g_set_error(err, SWEEP_ERROR, 1, "the grid has %.0f points%s: at most %d are allowed", total * s->replicates,
                    s->replicates > 1 ? " (configurations x replicates)" : "", SWEEP_MAX_POINTS);
        return FALSE;
    }
    s->nconfigs = (guint)total;
    guint npoints = s->nconfigs * s->replicates;
    guint nsets = s->sets ? g_strv_length(s->sets) : 0;
    guint nextra = s->replicates > 1; /* scenario.seed=S */
    GHashTable *names = g_hash_table_new(g_str_hash, g_str_equal);
    gboolean ok = TRUE;
    for (guint i = 0; i < npoints && ok; i++) {
        struct sweep_point *p = g_new0(struct sweep_point, 1);
        p->index = i;
        p->config = i / s->replicates;
        p->rep = i % s->replicates;
        p->idx = g_new0(guint, dims->len);
        guint rem = p->config;
        for (guint d = dims->len; d-- > 0;) {
            guint k = ((struct sweep_dim *)g_ptr_array_index(dims, d))->values->len;
            p->idx[d] = rem % k;
            rem /= k;
        }
        p->name = sweep_point_name(dims, p->idx);
        p->sets = g_new0(char *, nsets + dims->len + nextra + 1);
        for (guint k = 0; k < nsets; k++)
            p->sets[k] = g_strdup(s->sets[k]);
        for (guint d = 0; d < dims->len; d++) {
            const struct sweep_dim *dim = g_ptr_array_index(dims, d);
            p->sets[nsets + d] = g_strdup_printf("%s=%s", dim->key, (char *)g_ptr_array_index(dim->values, p->idx[d]));
        }
        if (nextra) {
            p->seed = seed0 + p->rep;
            p->sets[nsets + dims->len] = g_strdup_printf("scenario.seed=%" G_GUINT64_FORMAT, p->seed);
            char *named = g_strdup_printf("%s,seed=%" G_GUINT64_FORMAT, p->name, p->seed);
            g_free(p->name);
            p->name = named;
        }
        g_ptr_array_add(s->points, p);
        struct sweep_point *other = g_hash_table_lookup(names, p->name);
        if (other) {
            char *a = g_strjoinv(" ", p->sets + nsets), *b = g_strjoinv(" ", other->sets + nsets);
            g_set_error(err, SWEEP_ERROR, 1,
                        "the points %s and %s would share the results folder %s: values must differ in more than "
                        "characters that cannot go into a folder name", b, a, p->name);
            g_free(a);
            g_free(b);
            ok = FALSE;
        }
        g_hash_table_insert(names, p->name, p);
    }
    g_hash_table_unref(names);
    if (!ok)
        return FALSE;

    /* validation: each point's scenario must load */
    for (guint i = 0; i < s->points->len; i++) {
        struct sweep_point *p = g_ptr_array_index(s->points, i);
        GError *e = NULL;
        struct scenario *psc = scenario_load(scenario, (const char *const *)p->sets, &e);
        if (!psc) {
            if (i == 0) {
                char *vals = g_strjoinv(" ", p->sets + nsets);
                g_set_error(err, SWEEP_ERROR, 1, "the first point (%s) is not a valid scenario: %s", vals,
                            e->message);
                g_free(vals);
                g_error_free(e);
                return FALSE;
            }
            p->state = SP_INVALID;
            p->invalid = g_strdup(e->message);
            g_error_free(e);
            continue;
        }
        p->expected = g_key_file_ref(psc->expanded);
        scenario_free(psc);
    }
    /* a value that no point can use is a mistake in --vary, not a combination to skip */
    for (guint d = 0; d < dims->len; d++) {
        const struct sweep_dim *dim = g_ptr_array_index(dims, d);
        for (guint v = 0; v < dim->values->len; v++) {
            const struct sweep_point *first_bad = NULL;
            gboolean any_ok = FALSE;
            for (guint i = 0; i < s->points->len && !any_ok; i++) {
                const struct sweep_point *p = g_ptr_array_index(s->points, i);
                if (p->idx[d] != v)
                    continue;
                if (p->state == SP_INVALID) {
                    if (!first_bad)
                        first_bad = p;
                } else {
                    any_ok = TRUE;
                }
            }
            if (!any_ok && first_bad) {
                g_set_error(err, SWEEP_ERROR, 1, "--vary %s: the value %s is not valid in any combination with the other values: %s",
                            dim->key, (char *)g_ptr_array_index(dim->values, v), first_bad->invalid);
                return FALSE;
            }
        }
    }
    return TRUE;
}

void sweep_free(struct sweep *s)
{
    if (s->lock_fd >= 0)
        close(s->lock_fd);
    g_free(s->scenario);
    g_strfreev(s->sets);
    if (s->dims)
        g_ptr_array_unref(s->dims);
    if (s->points)
        g_ptr_array_unref(s->points);
    g_free(s->out);
    g_free(s->points_dir);
    g_free(s->rank_problem);
    mpi_split_clear(&s->mpi);
    memset(s, 0, sizeof *s);
    s->lock_fd = -1;
}

gboolean sweep_prepare_dir(struct sweep *s, GError **err)
{
    if (g_mkdir_with_parents(s->points_dir, 0755) != 0) {
        g_set_error(err, SWEEP_ERROR, 1, "cannot create %s: %s", s->points_dir, g_strerror(errno));
        return FALSE;
    }
    if (s->mpi.size > 1)
        return TRUE; /* the ranks share the folder on purpose */
    char *lock = g_build_filename(s->out, ".lock", NULL);
    s->lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (s->lock_fd < 0) {
        g_set_error(err, SWEEP_ERROR, 1, "cannot create %s: %s", lock, g_strerror(errno));
        g_free(lock);
        return FALSE;
    }
    if (flock(s->lock_fd, LOCK_EX | LOCK_NB) != 0) {
        g_set_error(err, SWEEP_ERROR, 1, "%s is in use by another sweep or tune (%s is locked)", s->out, lock);
        g_free(lock);
        return FALSE;
    }
    g_free(lock);
    return TRUE;
}

/* ======================================================================================
 * Results of a point
 * ====================================================================================== */

char *sweep_point_path(const struct sweep *s, const struct sweep_point *p, const char *suffix)
{
    char *f = g_strconcat(p->name, suffix, NULL);
    char *path = g_build_filename(s->points_dir, f, NULL);
    g_free(f);
    return path;
}

char *sweep_digest(const struct sweep *s)
{
    GChecksum *c = g_checksum_new(G_CHECKSUM_MD5);
    for (guint i = 0; i < s->points->len; i++) {
        const struct sweep_point *p = g_ptr_array_index(s->points, i);
        char *head = g_strdup_printf("%s %" G_GUINT64_FORMAT "\n", p->name, p->seed);
        g_checksum_update(c, (const guchar *)head, -1);
        g_free(head);
        if (p->expected) {
            char *text = g_key_file_to_data(p->expected, NULL, NULL);
            g_checksum_update(c, (const guchar *)text, -1);
            g_free(text);
        } else if (p->invalid) {
            g_checksum_update(c, (const guchar *)p->invalid, -1);
        }
    }
    char *d = g_strdup(g_checksum_get_string(c));
    g_checksum_free(c);
    return d;
}

/* The "scenario" object of a summary.json against the expanded key file. */
static gboolean scenario_matches(JsonObject *js, GKeyFile *kf)
{
    gsize ng;
    char **groups = g_key_file_get_groups(kf, &ng);
    gboolean ok = json_object_get_size(js) == ng;
    for (gsize g = 0; g < ng && ok; g++) {
        JsonNode *gn = json_object_get_member(js, groups[g]);
        if (!gn || !JSON_NODE_HOLDS_OBJECT(gn)) {
            ok = FALSE;
            break;
        }
        JsonObject *go = json_node_get_object(gn);
        gsize nk;
        char **keys = g_key_file_get_keys(kf, groups[g], &nk, NULL);
        ok = json_object_get_size(go) == nk;
        for (gsize k = 0; k < nk && ok; k++) {
            JsonNode *vn = json_object_get_member(go, keys[k]);
            char *v = g_key_file_get_value(kf, groups[g], keys[k], NULL);
            ok = vn && JSON_NODE_HOLDS_VALUE(vn) && json_node_get_value_type(vn) == G_TYPE_STRING &&
                 !g_strcmp0(json_node_get_string(vn), v);
            g_free(v);
        }
        g_strfreev(keys);
    }
    g_strfreev(groups);
    return ok;
}

/* A number as the CSV writes it (round-trip doubles, booleans as 1/0), or NULL. */
static char *metric_text(JsonNode *n)
{
    return metrics_number_text(n, "1", "0");
}

/* TRUE when the point's folder holds a complete summary.json of this point's settings;
 * its metrics are loaded. */
gboolean sweep_point_load_results(const struct sweep *s, struct sweep_point *p)
{
    char *dir = sweep_point_path(s, p, "");
    char *path = g_build_filename(dir, "summary.json", NULL);
    g_free(dir);
    gboolean ok = FALSE;
    if (!g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
        g_free(path);
        return FALSE;
    }
    JsonParser *parser = json_parser_new();
    if (json_parser_load_from_file(parser, path, NULL)) {
        JsonNode *root = json_parser_get_root(parser);
        JsonObject *o = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
        JsonNode *mn = o ? json_object_get_member(o, "metrics") : NULL;
        JsonNode *sn = o ? json_object_get_member(o, "scenario") : NULL;
        if (mn && JSON_NODE_HOLDS_OBJECT(mn) && sn && JSON_NODE_HOLDS_OBJECT(sn)) {
            if (p->expected && !scenario_matches(json_node_get_object(sn), p->expected)) {
                p->stale = TRUE;
            } else {
                JsonObject *m = json_node_get_object(mn);
                if (p->metrics)
                    g_hash_table_unref(p->metrics);
                p->metrics = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
                GList *members = json_object_get_members(m);
                for (GList *l = members; l; l = l->next) {
                    char *text = metric_text(json_object_get_member(m, l->data));
                    if (text)
                        g_hash_table_insert(p->metrics, g_strdup(l->data), text);
                }
                g_list_free(members);
                ok = TRUE;
            }
        }
    }
    g_object_unref(parser);
    g_free(path);
    return ok;
}

/* The last lines of a log file (at most 6 lines or 1500 bytes). */
char *sweep_log_tail(const char *path)
{
    char *text = NULL;
    gsize len = 0;
    if (!g_file_get_contents(path, &text, &len, NULL))
        return g_strdup("");
    while (len > 0 && g_ascii_isspace(text[len - 1]))
        text[--len] = 0;
    gsize start = len > 1500 ? len - 1500 : 0;
    int lines = 0;
    for (gsize i = len; i > start; i--)
        if (text[i - 1] == '\n' && ++lines == 6) {
            start = i;
            break;
        }
    char *tail = g_strdup(text + start);
    g_free(text);
    return tail;
}

/* Removes leftovers of an interrupted run of this point: NAME.tmp-XXXXXX / NAME.old-XXXXXX
 * folders of results_begin/commit, the log and the failure marker. */
void sweep_point_clean(const struct sweep *s, const struct sweep_point *p)
{
    GDir *d = g_dir_open(s->points_dir, 0, NULL);
    if (d) {
        size_t nl = strlen(p->name);
        const char *e;
        while ((e = g_dir_read_name(d))) {
            if (strncmp(e, p->name, nl) || (strncmp(e + nl, ".tmp-", 5) && strncmp(e + nl, ".old-", 5)) ||
                strlen(e + nl) != 11)
                continue;
            char *path = g_build_filename(s->points_dir, e, NULL);
            rmtree(path);
            g_free(path);
        }
        g_dir_close(d);
    }
    char *f = sweep_point_path(s, p, ".failed");
    g_unlink(f);
    g_free(f);
}

/* ======================================================================================
 * sweep.csv
 * ====================================================================================== */

static gint cmp_str(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

GPtrArray *sweep_metric_names(struct sweep *s)
{
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < s->points->len; i++) {
        const struct sweep_point *p = g_ptr_array_index(s->points, i);
        if (p->state != SP_DONE || !p->metrics)
            continue;
        GHashTableIter it;
        gpointer k;
        g_hash_table_iter_init(&it, p->metrics);
        while (g_hash_table_iter_next(&it, &k, NULL))
            if (!g_hash_table_contains(seen, k)) {
                char *c = g_strdup(k);
                g_hash_table_add(seen, c);
                g_ptr_array_add(names, c);
            }
    }
    g_hash_table_unref(seen);
    g_ptr_array_sort(names, cmp_str);
    return names;
}

gboolean sweep_point_metric(const struct sweep_point *p, const char *name, double *v)
{
    const char *t = p->metrics ? g_hash_table_lookup(p->metrics, name) : NULL;
    if (!t)
        return FALSE;
    *v = g_ascii_strtod(t, NULL);
    return TRUE;
}

gboolean sweep_point_deadlocked(const struct sweep_point *p)
{
    double v;
    return p->state == SP_DONE && sweep_point_metric(p, "deadlock", &v) && v != 0;
}

const char *sweep_state_text(const struct sweep_point *p)
{
    switch (p->state) {
    case SP_DONE:
        return sweep_point_deadlocked(p) ? "deadlock" : "ok";
    case SP_FAILED:
        return "failed";
    case SP_INVALID:
        return "invalid";
    default:
        return "not run";
    }
}

gboolean sweep_write_file(const char *path, const GString *text, GError **err)
{
    GError *e = NULL;
    if (!g_file_set_contents(path, text->str, (gssize)text->len, &e)) {
        g_set_error(err, SWEEP_ERROR, 1, "%s", e->message);
        g_error_free(e);
        return FALSE;
    }
    return TRUE;
}

gboolean sweep_write_csv(struct sweep *s, const char *file, GError **err)
{
    GPtrArray *metrics = sweep_metric_names(s);
    GString *g = g_string_new(NULL);
    for (guint d = 0; d < s->dims->len; d++) {
        results_csv_quote(g, ((struct sweep_dim *)g_ptr_array_index(s->dims, d))->key);
        g_string_append_c(g, ',');
    }
    if (s->replicates > 1)
        g_string_append(g, "scenario.seed,");
    for (guint m = 0; m < metrics->len; m++) {
        results_csv_quote(g, g_ptr_array_index(metrics, m));
        g_string_append_c(g, ',');
    }
    g_string_append(g, "status\n");
    for (guint i = 0; i < s->points->len; i++) {
        const struct sweep_point *p = g_ptr_array_index(s->points, i);
        for (guint d = 0; d < s->dims->len; d++) {
            const struct sweep_dim *dim = g_ptr_array_index(s->dims, d);
            results_csv_quote(g, g_ptr_array_index(dim->values, p->idx[d]));
            g_string_append_c(g, ',');
        }
        if (s->replicates > 1)
            g_string_append_printf(g, "%" G_GUINT64_FORMAT ",", p->seed);
        for (guint m = 0; m < metrics->len; m++) {
            const char *v = p->state == SP_DONE && p->metrics ? g_hash_table_lookup(p->metrics,
                                                                                    g_ptr_array_index(metrics, m))
                                                              : NULL;
            if (v)
                results_csv_quote(g, v);
            g_string_append_c(g, ',');
        }
        g_string_append_printf(g, "%s\n", sweep_state_text(p));
    }
    char *path = g_build_filename(s->out, file, NULL);
    gboolean ok = sweep_write_file(path, g, err);
    g_free(path);
    g_string_free(g, TRUE);
    g_ptr_array_unref(metrics);
    return ok;
}
