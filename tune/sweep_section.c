/* The [sweep] section of a scenario: vary/vary2/... lines and the sweep's options (see sweep.h). */
#define _GNU_SOURCE
#include "tune/sweep.h"
#include <string.h>

/* ======================================================================================
 * The [sweep] section
 * ====================================================================================== */

static gboolean numbered_key(const char *key, const char *base)
{
    size_t l = strlen(base);
    if (strncmp(key, base, l))
        return FALSE;
    for (const char *p = key + l; *p; p++)
        if (!g_ascii_isdigit(*p))
            return FALSE;
    return TRUE;
}

static guint numbered_key_order(const char *key, const char *base)
{
    const char *p = key + strlen(base);
    return *p ? (guint)atoi(p) : 1;
}

struct numbered {
    guint order;
    char *value;
};

static gint cmp_numbered(gconstpointer a, gconstpointer b)
{
    const struct numbered *x = a, *y = b;
    return x->order < y->order ? -1 : x->order > y->order;
}

gboolean sweep_section_read(const char *scenario, char **sets, struct sweep_section *sec, GError **err)
{
    memset(sec, 0, sizeof *sec);
    sec->vary = g_ptr_array_new_with_free_func(g_free);
    sec->constraints = g_ptr_array_new_with_free_func(g_free);
    GKeyFile *kf = g_key_file_new();
    GError *e = NULL;
    gboolean ok = TRUE;
    if (!g_key_file_load_from_file(kf, scenario, G_KEY_FILE_NONE, &e)) {
        /* scenario_load reports unreadable or malformed files with the full story */
        g_clear_error(&e);
        g_key_file_unref(kf);
        return TRUE;
    }
    for (int i = 0; sets && sets[i]; i++) {
        if (!g_str_has_prefix(sets[i], "sweep."))
            continue;
        const char *eq = strchr(sets[i], '=');
        if (!eq)
            continue; /* scenario_load reports it */
        char *key = g_strndup(sets[i] + 6, (gsize)(eq - sets[i] - 6));
        g_key_file_set_value(kf, "sweep", key, eq + 1);
        g_free(key);
    }
    GArray *vary = g_array_new(FALSE, FALSE, sizeof(struct numbered));
    GArray *cons = g_array_new(FALSE, FALSE, sizeof(struct numbered));
    gsize nk = 0;
    char **keys = g_key_file_get_keys(kf, "sweep", &nk, NULL);
    for (gsize i = 0; keys && i < nk && ok; i++) {
        char *v = g_key_file_get_value(kf, "sweep", keys[i], NULL);
        g_strstrip(v);
        if (numbered_key(keys[i], "vary")) {
            struct numbered n = { numbered_key_order(keys[i], "vary"), v };
            g_array_append_val(vary, n);
            continue;
        }
        if (numbered_key(keys[i], "constraint")) {
            struct numbered n = { numbered_key_order(keys[i], "constraint"), v };
            g_array_append_val(cons, n);
            continue;
        }
        if (!strcmp(keys[i], "objective")) {
            g_free(sec->objective);
            sec->objective = v;
        } else if (!strcmp(keys[i], "direction")) {
            if (strcmp(v, "minimize") && strcmp(v, "maximize")) {
                g_set_error(err, SWEEP_ERROR, 1, "%s: [sweep] direction = '%s': expected minimize or maximize",
                            scenario, v);
                ok = FALSE;
            }
            g_free(sec->direction);
            sec->direction = v;
        } else if (!strcmp(keys[i], "budget")) {
            char *end;
            guint64 b = g_ascii_strtoull(v, &end, 10);
            if (!*v || *end || b < 1 || b > SWEEP_MAX_POINTS) {
                g_set_error(err, SWEEP_ERROR, 1, "%s: [sweep] budget = '%s': expected a number of runs from 1 to %d",
                            scenario, v, SWEEP_MAX_POINTS);
                ok = FALSE;
            }
            sec->budget = (guint)b;
            g_free(v);
        } else if (!strcmp(keys[i], "replicates")) {
            char *end;
            guint64 r = g_ascii_strtoull(v, &end, 10);
            if (!*v || *end || r < 1 || r > SWEEP_MAX_REPLICATES) {
                g_set_error(err, SWEEP_ERROR, 1, "%s: [sweep] replicates = '%s': expected a number of seeds from 1 to %d",
                            scenario, v, SWEEP_MAX_REPLICATES);
                ok = FALSE;
            }
            sec->replicates = (guint)r;
            g_free(v);
        } else if (!strcmp(keys[i], "rank")) {
            g_free(sec->rank);
            sec->rank = v;
        } else if (!strcmp(keys[i], "constraint_share")) {
            char *end;
            double x = g_ascii_strtod(v, &end);
            if (!*v || *end || !(x > 0 && x <= 1)) {
                g_set_error(err, SWEEP_ERROR, 1, "%s: [sweep] constraint_share = '%s': expected a share of the "
                            "replicates above 0 and at most 1, e.g. 0.8", scenario, v);
                ok = FALSE;
            }
            sec->constraint_share = x;
            g_free(v);
        } else {
            g_set_error(err, SWEEP_ERROR, 1,
                        "%s: [sweep] %s: unknown key: [sweep] has vary, vary2, ..., objective, direction, "
                        "constraint, constraint2, ..., budget, replicates, rank, constraint_share", scenario, keys[i]);
            g_free(v);
            ok = FALSE;
        }
    }
    g_strfreev(keys);
    g_array_sort(vary, cmp_numbered);
    g_array_sort(cons, cmp_numbered);
    for (guint i = 0; i < vary->len; i++)
        g_ptr_array_add(sec->vary, g_array_index(vary, struct numbered, i).value);
    for (guint i = 0; i < cons->len; i++)
        g_ptr_array_add(sec->constraints, g_array_index(cons, struct numbered, i).value);
    g_array_free(vary, TRUE);
    g_array_free(cons, TRUE);
    g_key_file_unref(kf);
    return ok;
}

void sweep_section_clear(struct sweep_section *sec)
{
    if (sec->vary)
        g_ptr_array_unref(sec->vary);
    if (sec->constraints)
        g_ptr_array_unref(sec->constraints);
    g_free(sec->objective);
    g_free(sec->direction);
    g_free(sec->rank);
    memset(sec, 0, sizeof *sec);
}
