/* Parameter sweeps: grid, point names, process pool, resumability, sweep.csv (see sweep.h). */
#define _GNU_SOURCE
#include "tune/sweep.h"
#include "analysis/metrics.h"
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "results/folder.h"
#include "sim/scenario.h"

G_DEFINE_QUARK(rocesim-sweep-error, sweep_error)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ======================================================================================
 * Values
 * ====================================================================================== */

/* A number (optional minus, digits, optional fraction) followed by a unit (any text that
 * does not start with a digit or a dot). */
static gboolean split_number(const char *text, double *v, char **unit)
{
    const char *p = text;
    if (*p == '-')
        p++;
    const char *digits = p;
    while (g_ascii_isdigit(*p))
        p++;
    if (p == digits)
        return FALSE;
    if (*p == '.' && g_ascii_isdigit(p[1])) {
        p++;
        while (g_ascii_isdigit(*p))
            p++;
    }
    if (*p == '.' || g_ascii_isdigit(*p))
        return FALSE;
    char *num = g_strndup(text, (gsize)(p - text));
    *v = g_ascii_strtod(num, NULL);
    g_free(num);
    *unit = g_strstrip(g_strdup(p));
    return TRUE;
}

/* The shortest decimal text of x (at most 15 decimals), then the unit. */
static char *format_number(double x, const char *unit)
{
    int d = 0;
    if (x != 0)
        for (; d < 15; d++) {
            double sc = pow(10, d);
            if (fabs(round(x * sc) / sc - x) <= 1e-9 * fabs(x))
                break;
        }
    char fmt[16], buf[G_ASCII_DTOSTR_BUF_SIZE + 32];
    g_snprintf(fmt, sizeof fmt, "%%.%df", d);
    g_ascii_formatd(buf, sizeof buf, fmt, x);
    if (!strcmp(buf, "-0"))
        strcpy(buf, "0");
    return g_strconcat(buf, unit, NULL);
}

static gboolean expand_range(const char *item, GPtrArray *out, GError **err)
{
    const char *dots = strstr(item, "..");
    char *start_t = g_strstrip(g_strndup(item, (gsize)(dots - item)));
    const char *rest = dots + 2;
    const char *op = NULL;
    for (const char *p = rest; *p; p++)
        if ((*p == '*' || *p == '+') && p > rest) {
            op = p;
            break;
        }
    char *end_t = NULL, *step_t = NULL, *u0 = NULL, *u1 = NULL, *us = NULL;
    gboolean ok = FALSE;
    double a, b, step;
    if (!op) {
        g_set_error(err, SWEEP_ERROR, 1,
                    "'%s': a range needs a step: FIRST..LAST*FACTOR (geometric, e.g. 50KB..400KB*2) or "
                    "FIRST..LAST+STEP (linear, e.g. 0.01..0.2+0.05)", item);
        goto done;
    }
    end_t = g_strstrip(g_strndup(rest, (gsize)(op - rest)));
    step_t = g_strstrip(g_strdup(op + 1));
    if (!split_number(start_t, &a, &u0)) {
        g_set_error(err, SWEEP_ERROR, 1, "'%s': the start '%s' is not a number with an optional unit, e.g. 50KB",
                    item, start_t);
        goto done;
    }
    if (!split_number(end_t, &b, &u1)) {
        g_set_error(err, SWEEP_ERROR, 1, "'%s': the end '%s' is not a number with an optional unit, e.g. 400KB",
                    item, end_t);
        goto done;
    }
    if (strcmp(u0, u1)) {
        g_set_error(err, SWEEP_ERROR, 1,
                    "'%s': the ends have different units ('%s' and '%s'): write both in the same unit", item, u0,
                    u1);
        goto done;
    }
    if (a > b) {
        g_set_error(err, SWEEP_ERROR, 1, "'%s': the start is above the end: expected FIRST <= LAST", item);
        goto done;
    }
    if (!split_number(step_t, &step, &us)) {
        g_set_error(err, SWEEP_ERROR, 1, "'%s': the %s '%s' is not a number", item,
                    *op == '*' ? "factor" : "step", step_t);
        goto done;
    }
    if (*op == '*') {
        if (*us) {
            g_set_error(err, SWEEP_ERROR, 1, "'%s': the factor '%s' takes no unit, e.g. *2", item, step_t);
            goto done;
        }
        if (step <= 1) {
            g_set_error(err, SWEEP_ERROR, 1, "'%s': the factor must be above 1, e.g. *2", item);
            goto done;
        }
        if (a <= 0) {
            g_set_error(err, SWEEP_ERROR, 1, "'%s': a geometric range must start above 0", item);
            goto done;
        }
        for (guint i = 0;; i++) {
            double x = a * pow(step, i);
            if (x > b * (1 + 1e-9))
                break;
            if (i >= SWEEP_MAX_VALUES) {
                g_set_error(err, SWEEP_ERROR, 1, "'%s': more than %d values", item, SWEEP_MAX_VALUES);
                goto done;
            }
            g_ptr_array_add(out, format_number(x, u0));
        }
    } else {
        if (*us && strcmp(us, u0)) {
            g_set_error(err, SWEEP_ERROR, 1, "'%s': the step '%s' must be in the unit of the ends ('%s')", item,
                        step_t, u0);
            goto done;
        }
        if (step <= 0) {
            g_set_error(err, SWEEP_ERROR, 1, "'%s': the step must be above 0", item);
            goto done;
        }
        for (guint i = 0;; i++) {
            double x = a + step * i;
            if (x > b + step * 1e-9)
                break;
            if (i >= SWEEP_MAX_VALUES) {
                g_set_error(err, SWEEP_ERROR, 1, "'%s': more than %d values", item, SWEEP_MAX_VALUES);
                goto done;
            }
            g_ptr_array_add(out, format_number(x, u0));
        }
    }
    ok = TRUE;
done:
    g_free(start_t);
    g_free(end_t);
    g_free(step_t);
    g_free(u0);
    g_free(u1);
    g_free(us);
    return ok;
}

GPtrArray *sweep_expand_values(const char *text, GError **err)
{
    GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
    if (!text || strspn(text, " \t") == strlen(text)) {
        g_set_error(err, SWEEP_ERROR, 1, "no values: expected a list such as 50KB,100KB or a range such as 50KB..400KB*2");
        g_ptr_array_unref(out);
        return NULL;
    }
    char **items = g_strsplit(text, ",", -1);
    for (int i = 0; items[i]; i++) {
        char *it = g_strstrip(items[i]);
        if (!*it) {
            g_set_error(err, SWEEP_ERROR, 1, "'%s': empty value in the list (two commas in a row, or a comma at an end)",
                        text);
            goto fail;
        }
        if (strstr(it, "..")) {
            if (!expand_range(it, out, err))
                goto fail;
        } else {
            g_ptr_array_add(out, g_strdup(it));
        }
        if (out->len > SWEEP_MAX_VALUES) {
            g_set_error(err, SWEEP_ERROR, 1, "'%s': more than %d values", text, SWEEP_MAX_VALUES);
            goto fail;
        }
    }
    for (guint i = 0; i < out->len; i++)
        for (guint j = 0; j < i; j++)
            if (!strcmp(g_ptr_array_index(out, i), g_ptr_array_index(out, j))) {
                g_set_error(err, SWEEP_ERROR, 1, "'%s': the value %s appears twice", text,
                            (char *)g_ptr_array_index(out, i));
                goto fail;
            }
    g_strfreev(items);
    return out;
fail:
    g_strfreev(items);
    g_ptr_array_unref(out);
    return NULL;
}

struct sweep_dim *sweep_dim_parse(const char *spec, GError **err)
{
    const char *eq = strchr(spec, '=');
    char *key = eq ? g_strstrip(g_strndup(spec, (gsize)(eq - spec))) : NULL;
    const char *dot = key ? strrchr(key, '.') : NULL;
    if (!eq || !key || !dot || dot == key || !dot[1] || strchr(key, ' ')) {
        g_set_error(err, SWEEP_ERROR, 1,
                    "--vary '%s': expected SECTION.KEY=VALUES, e.g. switch.ecn_kmin=50KB,100KB or "
                    "workload.NAME.size=64KB..1MB*4", spec);
        g_free(key);
        return NULL;
    }
    if (g_str_has_prefix(key, "sweep.")) {
        g_set_error(err, SWEEP_ERROR, 1, "--vary '%s': the [sweep] section describes the sweep and cannot be varied",
                    spec);
        g_free(key);
        return NULL;
    }
    GError *e = NULL;
    GPtrArray *values = sweep_expand_values(eq + 1, &e);
    if (!values) {
        g_set_error(err, SWEEP_ERROR, 1, "--vary %s: %s", key, e->message);
        g_error_free(e);
        g_free(key);
        return NULL;
    }
    struct sweep_dim *d = g_new0(struct sweep_dim, 1);
    d->key = key;
    d->values = values;
    return d;
}

void sweep_dim_free(gpointer p)
{
    struct sweep_dim *d = p;
    if (!d)
        return;
    g_free(d->key);
    g_free(d->label);
    if (d->values)
        g_ptr_array_unref(d->values);
    g_free(d);
}

/* The last n dot-separated parts of key (all of it when it has fewer). */
static const char *key_tail(const char *key, int n)
{
    const char *p = key + strlen(key);
    while (p > key) {
        p--;
        if (*p == '.' && --n == 0)
            return p + 1;
    }
    return key;
}

gboolean sweep_dims_prepare(GPtrArray *dims, GError **err)
{
    for (guint i = 0; i < dims->len; i++) {
        struct sweep_dim *d = g_ptr_array_index(dims, i);
        for (guint j = 0; j < i; j++)
            if (!strcmp(d->key, ((struct sweep_dim *)g_ptr_array_index(dims, j))->key)) {
                g_set_error(err, SWEEP_ERROR, 1, "--vary %s is given twice: list all its values in one --vary",
                            d->key);
                return FALSE;
            }
    }
    for (guint i = 0; i < dims->len; i++) {
        struct sweep_dim *d = g_ptr_array_index(dims, i);
        for (int n = 1;; n++) {
            const char *tail = key_tail(d->key, n);
            gboolean unique = TRUE;
            for (guint j = 0; j < dims->len && unique; j++)
                if (j != i && !strcmp(tail, key_tail(((struct sweep_dim *)g_ptr_array_index(dims, j))->key, n)))
                    unique = FALSE;
            if (unique || tail == d->key) {
                g_free(d->label);
                d->label = g_strdup(tail);
                break;
            }
        }
    }
    return TRUE;
}

char *sweep_sanitize(const char *text)
{
    char *s = g_strdup(text);
    for (char *p = s; *p; p++)
        if (!g_ascii_isalnum(*p) && !strchr("._-+=,", *p))
            *p = '_';
    if (s[0] == '.')
        s[0] = '_';
    return s;
}

char *sweep_point_name(GPtrArray *dims, const guint *idx)
{
    GString *raw = g_string_new(NULL);
    for (guint d = 0; d < dims->len; d++) {
        const struct sweep_dim *dim = g_ptr_array_index(dims, d);
        g_string_append_printf(raw, "%s%s=%s", d ? "," : "", dim->label,
                               (const char *)g_ptr_array_index(dim->values, idx[d]));
    }
    char *name = sweep_sanitize(raw->str);
    if (strlen(name) > SWEEP_NAME_MAX) {
        guint32 h = 2166136261u; /* FNV-1a of the full text */
        for (const char *p = raw->str; *p; p++)
            h = (h ^ (guint8)*p) * 16777619u;
        char *cut = g_strdup_printf("%.*s~%08x", SWEEP_NAME_MAX - 20, name, h);
        g_free(name);
        name = cut;
    }
    g_string_free(raw, TRUE);
    return name;
}

/* ======================================================================================
 * Constraints and the coarse grid
 * ====================================================================================== */

static const char *const op_text[] = { "==", "!=", "<", "<=", ">", ">=" };

gboolean sweep_constraint_parse(const char *text, struct sweep_constraint *c, GError **err)
{
    memset(c, 0, sizeof *c);
    const char *p = text;
    while (g_ascii_isspace(*p))
        p++;
    const char *m0 = p;
    while (*p && (g_ascii_isalnum(*p) || *p == '_' || *p == '.'))
        p++;
    const char *m1 = p;
    while (g_ascii_isspace(*p))
        p++;
    int op = -1;
    if (!strncmp(p, "==", 2))
        op = SWEEP_EQ;
    else if (!strncmp(p, "!=", 2))
        op = SWEEP_NE;
    else if (!strncmp(p, "<=", 2))
        op = SWEEP_LE;
    else if (!strncmp(p, ">=", 2))
        op = SWEEP_GE;
    else if (*p == '<')
        op = SWEEP_LT;
    else if (*p == '>')
        op = SWEEP_GT;
    if (m1 == m0 || op < 0) {
        g_set_error(err, SWEEP_ERROR, 1,
                    "constraint '%s': expected METRIC OP NUMBER with OP one of == != < <= > >=, "
                    "e.g. drops==0 or paused_fraction<0.01", text);
        return FALSE;
    }
    p += strlen(op_text[op]);
    while (g_ascii_isspace(*p))
        p++;
    char *end = NULL;
    errno = 0;
    double v = *p ? g_ascii_strtod(p, &end) : NAN;
    if (end)
        while (g_ascii_isspace(*end))
            end++;
    if (!*p || !end || *end || errno || !isfinite(v)) {
        g_set_error(err, SWEEP_ERROR, 1, "constraint '%s': '%s' is not a number: expected e.g. drops==0 or "
                    "paused_fraction<0.01", text, p);
        return FALSE;
    }
    c->metric = g_strndup(m0, (gsize)(m1 - m0));
    c->op = (enum sweep_op)op;
    c->value = v;
    char *num = g_strstrip(g_strndup(p, (gsize)(end - p)));
    c->text = g_strdup_printf("%s%s%s", c->metric, op_text[op], num);
    g_free(num);
    return TRUE;
}

gboolean sweep_constraint_holds(const struct sweep_constraint *c, double v)
{
    switch (c->op) {
    case SWEEP_EQ:
        return v == c->value;
    case SWEEP_NE:
        return v != c->value;
    case SWEEP_LT:
        return v < c->value;
    case SWEEP_LE:
        return v <= c->value;
    case SWEEP_GT:
        return v > c->value;
    case SWEEP_GE:
        return v >= c->value;
    }
    return FALSE;
}

void sweep_constraint_clear(struct sweep_constraint *c)
{
    g_free(c->metric);
    g_free(c->text);
    c->metric = c->text = NULL;
}

guint sweep_coarse_indices(guint k, int level, guint *out)
{
    guint n = 0;
    if (k == 0)
        return 0;
    guint mid = (k - 1) / 2;
    switch (level) {
    case 0:
        for (guint i = 0; i < k; i += (k <= 3 ? 1 : 2))
            out[n++] = i;
        if (out[n - 1] != k - 1)
            out[n++] = k - 1;
        return n;
    case 1:
        out[n++] = 0;
        if (mid != 0)
            out[n++] = mid;
        if (k - 1 != mid)
            out[n++] = k - 1;
        return n;
    case 2:
        out[n++] = 0;
        if (k > 1)
            out[n++] = k - 1;
        return n;
    default:
        out[n++] = mid;
        return n;
    }
}

static guint coarse_count(guint k, int level)
{
    guint *tmp = g_new(guint, k + 1);
    guint n = sweep_coarse_indices(k, level, tmp);
    g_free(tmp);
    return n;
}

void sweep_coarse_levels(const guint *k, guint ndims, guint target, int *levels)
{
    if (target < 1)
        target = 1;
    for (guint d = 0; d < ndims; d++)
        levels[d] = 0;
    for (;;) {
        double product = 1;
        for (guint d = 0; d < ndims; d++)
            product *= coarse_count(k[d], levels[d]);
        if (product <= target)
            return;
        /* the dimension keeping the most values that can still keep fewer */
        int best = -1;
        guint best_n = 0, best_next = 0;
        for (guint d = 0; d < ndims; d++) {
            guint cur = coarse_count(k[d], levels[d]);
            int next = levels[d] + 1;
            while (next <= 3 && coarse_count(k[d], next) >= cur)
                next++;
            if (next > 3)
                continue;
            if (best < 0 || cur > best_n) {
                best = (int)d;
                best_n = cur;
                best_next = (guint)next;
            }
        }
        if (best < 0)
            return;
        levels[best] = (int)best_next;
    }
}

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
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online < 1)
        online = 1;
    long n = online;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        n = CPU_COUNT(&set);
    /* ranks that were not bound to cores share the host's cores */
    if (n >= online && m && m->local_size > 1)
        n = online / m->local_size;
    return n < 1 ? 1 : (guint)n;
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

static char *point_path(const struct sweep *s, const struct sweep_point *p, const char *suffix)
{
    char *f = g_strconcat(p->name, suffix, NULL);
    char *path = g_build_filename(s->points_dir, f, NULL);
    g_free(f);
    return path;
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
static gboolean point_load_results(const struct sweep *s, struct sweep_point *p)
{
    char *dir = point_path(s, p, "");
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
static char *log_tail(const char *path)
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
static void point_clean(const struct sweep *s, const struct sweep_point *p)
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
    char *f = point_path(s, p, ".failed");
    g_unlink(f);
    g_free(f);
}

/* ======================================================================================
 * Progress
 * ====================================================================================== */

static void format_eta(double secs, char *buf, size_t len)
{
    long t = (long)(secs + 0.5);
    if (t < 60)
        g_snprintf(buf, len, "%lds", t);
    else if (t < 3600)
        g_snprintf(buf, len, "%ldm%02lds", t / 60, t % 60);
    else
        g_snprintf(buf, len, "%ldh%02ldm", t / 3600, (t / 60) % 60);
}

static void progress_show(struct sweep *s, const char *what)
{
    if (!s->progress)
        return;
    struct sweep_progress *g = &s->prog;
    char eta[32] = "";
    if (g->ran > 0 && g->to_run > g->ran) {
        double per = g->run_seconds / g->ran;
        guint left = g->to_run - g->ran;
        double queued = left > g->running ? left - g->running : 0;
        double lanes = s->jobs < left ? s->jobs : left;
        char t[24];
        format_eta(per * (queued + 0.5 * g->running) / (lanes > 0 ? lanes : 1), t, sizeof t);
        g_snprintf(eta, sizeof eta, ", ETA %s", t);
    }
    fprintf(stderr, "\r\033[K%s: %u/%u done, %u running, %u failed%s%s%s", s->cmd, g->done, g->total, g->running,
            g->failed, eta, what ? ", " : "", what ? what : "");
    fflush(stderr);
    g->shown = TRUE;
}

void sweep_progress_end(struct sweep *s)
{
    if (s->prog.shown) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
        s->prog.shown = FALSE;
    }
}

/* Prints a message on its own line, above the progress line. */
static void report(struct sweep *s, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void report(struct sweep *s, const char *fmt, ...)
{
    sweep_progress_end(s);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static void report_failure(struct sweep *s, const struct sweep_point *p)
{
    char *log = point_path(s, p, ".log");
    if (p->stderr_tail && *p->stderr_tail) {
        char **lines = g_strsplit(p->stderr_tail, "\n", -1);
        char *body = g_strjoinv("\n    ", lines);
        g_strfreev(lines);
        report(s, "rocesim %s: point %s failed (%s):\n    %s\n  (stderr in %s)", s->cmd, p->name, p->failure, body,
               log);
        g_free(body);
    } else {
        report(s, "rocesim %s: point %s failed (%s), nothing on stderr", s->cmd, p->name, p->failure);
    }
    g_free(log);
}

/* ======================================================================================
 * The pool
 * ====================================================================================== */

struct running {
    pid_t pid;
    struct sweep_point *p;
};

static pid_t launch(struct sweep *s, struct sweep_point *p, const sigset_t *oldmask, GError **err)
{
    point_clean(s, p);
    char *out = point_path(s, p, "");
    char *log = point_path(s, p, ".log");
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, "rocesim");
    g_ptr_array_add(argv, "run");
    g_ptr_array_add(argv, s->scenario);
    for (int i = 0; p->sets[i]; i++) {
        g_ptr_array_add(argv, "--set");
        g_ptr_array_add(argv, p->sets[i]);
    }
    g_ptr_array_add(argv, "-o");
    g_ptr_array_add(argv, out);
    g_ptr_array_add(argv, "--quiet");
    g_ptr_array_add(argv, "--no-plots");
    g_ptr_array_add(argv, NULL);
    pid_t pid = -1;
    int logfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int nullfd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (logfd < 0 || nullfd < 0) {
        g_set_error(err, SWEEP_ERROR, 1, "cannot create %s: %s", log, g_strerror(errno));
        goto done;
    }
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) {
        g_set_error(err, SWEEP_ERROR, 1, "cannot start a process for point %s: %s", p->name, g_strerror(errno));
        goto done;
    }
    if (pid == 0) {
        dup2(nullfd, STDIN_FILENO);
        dup2(nullfd, STDOUT_FILENO);
        dup2(logfd, STDERR_FILENO);
        sigprocmask(SIG_SETMASK, oldmask, NULL);
        execv("/proc/self/exe", (char **)argv->pdata);
        static const char msg[] = "rocesim sweep: cannot execute /proc/self/exe\n";
        ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
        (void)w;
        _exit(127);
    }
    p->pid = pid;
    p->started = now_s();
done:
    if (logfd >= 0)
        close(logfd);
    if (nullfd >= 0)
        close(nullfd);
    g_ptr_array_free(argv, TRUE);
    g_free(out);
    g_free(log);
    return pid;
}

static void write_failed_marker(const struct sweep *s, const struct sweep_point *p)
{
    char *path = point_path(s, p, ".failed");
    GString *g = g_string_new(NULL);
    g_string_append_printf(g, "%s\n%s\n%s\n", s->mpi.job ? s->mpi.job : "-", p->failure,
                           p->stderr_tail ? p->stderr_tail : "");
    GError *e = NULL;
    if (!g_file_set_contents(path, g->str, (gssize)g->len, &e)) {
        fprintf(stderr, "rocesim %s: %s\n", s->cmd, e->message);
        g_error_free(e);
    }
    g_string_free(g, TRUE);
    g_free(path);
}

/* A point's process ended with wait status st (stopped: terminated by the sweep itself). */
static void finished(struct sweep *s, struct sweep_point *p, int st, gboolean stopped)
{
    struct sweep_progress *g = &s->prog;
    g->running--;
    char *log = point_path(s, p, ".log");
    p->pid = 0;
    if (stopped) {
        /* terminated by us: leave the point pending, with nothing behind */
        point_clean(s, p);
        g_unlink(log);
        g_free(log);
        p->state = SP_PENDING;
        return;
    }
    g->ran++;
    g->run_seconds += now_s() - p->started;
    g_free(p->failure);
    g_free(p->stderr_tail);
    p->failure = p->stderr_tail = NULL;
    /* exit 3: the run stopped at a PFC deadlock and wrote its results (metrics.deadlock = 1):
     * an outcome of these settings, not a failure of the point */
    if (WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 3) && point_load_results(s, p)) {
        p->state = SP_DONE;
        g->done++;
        GStatBuf sb;
        if (g_stat(log, &sb) == 0 && sb.st_size == 0)
            g_unlink(log);
    } else {
        p->state = SP_FAILED;
        g->done++;
        g->failed++;
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
            p->failure = g_strdup("exit 0 but no complete summary.json");
        else if (WIFEXITED(st))
            p->failure = g_strdup_printf("exit %d", WEXITSTATUS(st));
        else if (WIFSIGNALED(st))
            p->failure = g_strdup_printf("killed by signal %d (%s)", WTERMSIG(st), g_strsignal(WTERMSIG(st)));
        else
            p->failure = g_strdup_printf("wait status %d", st);
        p->stderr_tail = log_tail(log);
        write_failed_marker(s, p);
        report_failure(s, p);
    }
    g_free(log);
}

enum sweep_result sweep_run(struct sweep *s, const guint *which, guint n, sweep_point_fn fn, void *ud)
{
    struct sweep_progress *g = &s->prog;
    if (g->t0 == 0)
        g->t0 = now_s();
    GPtrArray *queue = g_ptr_array_new();
    gboolean stop = FALSE;
    /* reuse complete results first */
    for (guint i = 0; i < n && !stop; i++) {
        struct sweep_point *p = g_ptr_array_index(s->points, which[i]);
        if (p->state == SP_INVALID || p->state == SP_DONE || p->state == SP_FAILED)
            continue;
        if (point_load_results(s, p)) {
            p->state = SP_DONE;
            p->reused = TRUE;
            g->done++;
            /* a sweep killed (SIGKILL) after the point's run finished never removed its
             * empty log: done now, as finished() would have */
            char *log = point_path(s, p, ".log");
            GStatBuf sb;
            if (g_stat(log, &sb) == 0 && sb.st_size == 0)
                g_unlink(log);
            g_free(log);
            if (fn && !fn(s, p, ud))
                stop = TRUE;
        } else {
            g_ptr_array_add(queue, p);
        }
    }
    g->to_run += queue->len;

    /* an inherited SIGCHLD = SIG_IGN would make the kernel reap the points behind our back */
    signal(SIGCHLD, SIG_DFL);
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, &old);

    struct running *run = g_new0(struct running, s->jobs);
    guint next = 0, nrun = 0;
    gboolean terminated = FALSE; /* SIGTERM sent to what runs */
#define TERMINATE_ALL(signo)                                                                     \
    do {                                                                                         \
        for (guint k_ = 0; k_ < s->jobs; k_++)                                                   \
            if (run[k_].pid)                                                                     \
                kill(run[k_].pid, (signo));                                                      \
    } while (0)
    progress_show(s, NULL);
    while (nrun > 0 || (!stop && next < queue->len)) {
        while (!stop && nrun < s->jobs && next < queue->len) {
            struct sweep_point *p = g_ptr_array_index(queue, next++);
            GError *e = NULL;
            pid_t pid = launch(s, p, &old, &e);
            if (pid < 0) {
                report(s, "rocesim %s: %s", s->cmd, e->message);
                g_error_free(e);
                p->state = SP_FAILED;
                p->failure = g_strdup("could not be started");
                g->done++;
                g->failed++;
                g->ran++;
                if (fn && !fn(s, p, ud))
                    stop = TRUE;
                continue;
            }
            for (guint k = 0; k < s->jobs; k++)
                if (!run[k].pid) {
                    run[k].pid = pid;
                    run[k].p = p;
                    break;
                }
            nrun++;
            g->running++;
        }
        if (stop && !terminated) {
            TERMINATE_ALL(SIGTERM);
            terminated = TRUE;
        }
        progress_show(s, NULL);
        if (nrun == 0)
            break;
        /* sleep until a child ends, a signal comes, or a second passes (progress); then take
         * every pending signal, so an interrupt is seen before the children it killed */
        struct timespec ts = { 1, 0 }, zero = { 0, 0 };
        for (int sig = sigtimedwait(&set, NULL, &ts); sig > 0; sig = sigtimedwait(&set, NULL, &zero)) {
            if (sig == SIGCHLD)
                continue;
            if (!s->interrupted)
                s->interrupted = sig;
            if (!stop) {
                stop = TRUE;
                TERMINATE_ALL(SIGTERM);
                terminated = TRUE;
            } else {
                TERMINATE_ALL(SIGKILL); /* a second interrupt: no more waiting */
            }
        }
        for (;;) {
            int st;
            pid_t pid = waitpid(-1, &st, WNOHANG);
            if (pid <= 0)
                break;
            for (guint k = 0; k < s->jobs; k++) {
                if (run[k].pid != pid)
                    continue;
                struct sweep_point *p = run[k].p;
                run[k].pid = 0;
                run[k].p = NULL;
                nrun--;
                /* a point killed by a signal once the sweep is stopping was stopped by the
                 * sweep (or by the same Ctrl-C): pending, not failed */
                gboolean ours = stop && WIFSIGNALED(st);
                finished(s, p, st, ours);
                if (!ours && fn && !fn(s, p, ud))
                    stop = TRUE;
                break;
            }
        }
    }
#undef TERMINATE_ALL
    g_free(run);
    sigprocmask(SIG_SETMASK, &old, NULL);
    g_ptr_array_unref(queue);
    progress_show(s, NULL);
    if (s->interrupted)
        return SWEEP_INTERRUPTED;
    return stop ? SWEEP_STOPPED : SWEEP_FINISHED;
}

/* A failure marker written by a rank of this launch: the job id matches (when the launcher
 * gives one). */
static gboolean load_failed_marker(const struct sweep *s, struct sweep_point *p)
{
    char *path = point_path(s, p, ".failed");
    char *text = NULL;
    gboolean ok = g_file_get_contents(path, &text, NULL, NULL);
    g_free(path);
    if (!ok)
        return FALSE;
    char **lines = g_strsplit(text, "\n", 3);
    g_free(text);
    if (!lines[0] || !lines[1] || (s->mpi.job && strcmp(lines[0], s->mpi.job))) {
        g_strfreev(lines);
        return FALSE;
    }
    g_free(p->failure);
    g_free(p->stderr_tail);
    p->failure = g_strdup(lines[1]);
    p->stderr_tail = g_strdup(lines[2] ? g_strstrip(lines[2]) : "");
    g_strfreev(lines);
    return TRUE;
}

enum sweep_result sweep_wait_others(struct sweep *s)
{
    struct sweep_progress *g = &s->prog;
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, &old);
    enum sweep_result r = SWEEP_FINISHED;
    for (;;) {
        guint waiting = 0;
        for (guint i = 0; i < s->points->len; i++) {
            struct sweep_point *p = g_ptr_array_index(s->points, i);
            if (mpi_split_owns(&s->mpi, p->index) || p->state != SP_PENDING)
                continue;
            if (point_load_results(s, p)) {
                p->state = SP_DONE;
                g->done++;
            } else if (load_failed_marker(s, p)) {
                p->state = SP_FAILED;
                g->done++;
                g->failed++;
            } else {
                waiting++;
            }
        }
        if (!waiting)
            break;
        char what[64];
        g_snprintf(what, sizeof what, "waiting for %u point%s of other ranks", waiting, waiting == 1 ? "" : "s");
        progress_show(s, what);
        struct timespec ts = { 0, 200000000 };
        int sig = sigtimedwait(&set, NULL, &ts);
        if (sig > 0) {
            s->interrupted = sig;
            r = SWEEP_INTERRUPTED;
            break;
        }
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return r;
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

void sweep_csv_field(GString *g, const char *text)
{
    if (!strpbrk(text, ",\"\n\r")) {
        g_string_append(g, text);
        return;
    }
    g_string_append_c(g, '"');
    for (const char *p = text; *p; p++) {
        if (*p == '"')
            g_string_append_c(g, '"');
        g_string_append_c(g, *p);
    }
    g_string_append_c(g, '"');
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
        sweep_csv_field(g, ((struct sweep_dim *)g_ptr_array_index(s->dims, d))->key);
        g_string_append_c(g, ',');
    }
    if (s->replicates > 1)
        g_string_append(g, "scenario.seed,");
    for (guint m = 0; m < metrics->len; m++) {
        sweep_csv_field(g, g_ptr_array_index(metrics, m));
        g_string_append_c(g, ',');
    }
    g_string_append(g, "status\n");
    for (guint i = 0; i < s->points->len; i++) {
        const struct sweep_point *p = g_ptr_array_index(s->points, i);
        for (guint d = 0; d < s->dims->len; d++) {
            const struct sweep_dim *dim = g_ptr_array_index(s->dims, d);
            sweep_csv_field(g, g_ptr_array_index(dim->values, p->idx[d]));
            g_string_append_c(g, ',');
        }
        if (s->replicates > 1)
            g_string_append_printf(g, "%" G_GUINT64_FORMAT ",", p->seed);
        for (guint m = 0; m < metrics->len; m++) {
            const char *v = p->state == SP_DONE && p->metrics ? g_hash_table_lookup(p->metrics,
                                                                                    g_ptr_array_index(metrics, m))
                                                              : NULL;
            if (v)
                sweep_csv_field(g, v);
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
