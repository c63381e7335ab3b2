/* Sweep values: the value grammar (lists, ranges with units), point names, constraints and
 * the coarse grid of tune (see sweep.h). */
#define _GNU_SOURCE
#include "tune/sweep.h"
#include <string.h>
#include <math.h>

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
