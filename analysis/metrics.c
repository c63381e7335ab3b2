/* Statistics and results-folder reading shared by the analysis commands. See metrics.h. */
#include "analysis/metrics.h"
#include "sim/units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK(rocesim-metrics-error-quark, metrics_error)

/* ---- statistics -------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void metrics_sort(double *v, size_t n)
{
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_double);
}

double metrics_percentile(const double *sorted, size_t n, double p)
{
    if (n == 0)
        return NAN;
    if (p <= 0)
        return sorted[0];
    if (p >= 100)
        return sorted[n - 1];
    double x = p * (double)n / 100.0;
    /* p*n/100 is often an integer that floating point lands just above (99.9 * 1000); the
     * tolerance keeps such ranks exact instead of rounding up one rank too far. */
    double r = ceil(x - 1e-9 * fmax(1.0, x));
    size_t rank = r < 1 ? 1 : (size_t)r;
    if (rank > n)
        rank = n;
    return sorted[rank - 1];
}

double metrics_mean(const double *v, size_t n)
{
    if (n == 0)
        return NAN;
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    return s / (double)n;
}

GArray *metrics_cdf(const double *sorted, size_t n, size_t max_points)
{
    GArray *a = g_array_new(FALSE, FALSE, sizeof(metrics_point));
    if (n == 0)
        return a;
    if (max_points < 2)
        max_points = 2;
    if (n <= max_points) {
        for (size_t i = 0; i < n; i++) {
            metrics_point p = { sorted[i], (double)(i + 1) / (double)n };
            g_array_append_val(a, p);
        }
        return a;
    }
    /* Evenly spaced ranks from 1 to n, first and last included. */
    size_t prev = 0;
    for (size_t j = 0; j < max_points; j++) {
        size_t rank = 1 + (size_t)((double)j * (double)(n - 1) / (double)(max_points - 1) + 0.5);
        if (rank <= prev)
            continue;
        prev = rank;
        metrics_point p = { sorted[rank - 1], (double)rank / (double)n };
        g_array_append_val(a, p);
    }
    return a;
}

double metrics_busbw_factor(const char *op, unsigned ranks)
{
    if (!op || ranks == 0)
        return NAN;
    double n = ranks;
    if (!g_ascii_strcasecmp(op, "allreduce") || !g_ascii_strcasecmp(op, "all_reduce"))
        return 2.0 * (n - 1) / n;
    if (!g_ascii_strcasecmp(op, "allgather") || !g_ascii_strcasecmp(op, "all_gather") ||
        !g_ascii_strcasecmp(op, "reducescatter") || !g_ascii_strcasecmp(op, "reduce_scatter") ||
        !g_ascii_strcasecmp(op, "alltoall") || !g_ascii_strcasecmp(op, "all_to_all"))
        return (n - 1) / n;
    if (!g_ascii_strcasecmp(op, "broadcast") || !g_ascii_strcasecmp(op, "reduce") ||
        !g_ascii_strcasecmp(op, "sendrecv"))
        return 1.0;
    return NAN;
}

double metrics_algbw_GBps(double bytes, double time_ns)
{
    return time_ns > 0 ? bytes / time_ns : NAN;
}

/* ---- units ------------------------------------------------------------------------------- */

gboolean metrics_parse_bytes(const char *s, double *bytes)
{
    /* the simulator's own unit parser, so a threshold reads the same here as in a scenario */
    uint64_t b;
    char *why = NULL;
    if (!units_parse_size(s, &b, &why)) {
        g_free(why);
        return FALSE;
    }
    *bytes = (double)b;
    return TRUE;
}

/* ---- CSV --------------------------------------------------------------------------------- */

struct metrics_csv {
    char *path;
    FILE *f;
    char *buf;          /* getline buffer, fields point into it */
    size_t cap;
    guint64 line;       /* physical line number of the last line read */
    guint64 row_line;   /* line of the current row */
    GPtrArray *header;  /* owned strings */
    char *header_text;  /* "a,b,c" for messages */
    GPtrArray *fields;  /* borrowed pointers into buf */
};

/* Reads the next non-blank line into c->buf (without the line end). FALSE at EOF. */
static gboolean csv_getline(metrics_csv *c, GError **err)
{
    for (;;) {
        errno = 0;
        ssize_t len = getline(&c->buf, &c->cap, c->f);
        if (len < 0) {
            if (ferror(c->f)) {
                int e = errno;
                g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(e), "%s: read error: %s",
                            c->path, g_strerror(e));
            }
            return FALSE;
        }
        c->line++;
        while (len > 0 && (c->buf[len - 1] == '\n' || c->buf[len - 1] == '\r'))
            c->buf[--len] = '\0';
        if (len > 0)
            return TRUE;
    }
}

/* Splits c->buf in place into c->fields, undoing CSV quoting. */
static gboolean csv_split(metrics_csv *c, GError **err)
{
    g_ptr_array_set_size(c->fields, 0);
    char *p = c->buf;
    for (;;) {
        char *start = p;
        if (*p == '"') {
            /* Unquote in place: the unquoted text is never longer than the quoted one. */
            char *w = p;
            p++;
            for (;;) {
                if (*p == '\0') {
                    g_set_error(err, METRICS_ERROR, METRICS_ERROR_PARSE,
                                "%s:%" G_GUINT64_FORMAT ": field %u: unterminated quote", c->path,
                                c->line, c->fields->len + 1);
                    return FALSE;
                }
                if (*p == '"') {
                    if (p[1] == '"') {
                        *w++ = '"';
                        p += 2;
                        continue;
                    }
                    p++;
                    break;
                }
                *w++ = *p++;
            }
            if (*p != ',' && *p != '\0') {
                g_set_error(err, METRICS_ERROR, METRICS_ERROR_PARSE,
                            "%s:%" G_GUINT64_FORMAT ": field %u: text after closing quote",
                            c->path, c->line, c->fields->len + 1);
                return FALSE;
            }
            char sep = *p;
            *w = '\0';
            g_ptr_array_add(c->fields, start);
            if (sep == '\0')
                return TRUE;
            p++;
        } else {
            while (*p && *p != ',')
                p++;
            char sep = *p;
            *p = '\0';
            g_ptr_array_add(c->fields, start);
            if (sep == '\0')
                return TRUE;
            p++;
        }
    }
}

metrics_csv *metrics_csv_open(const char *path, GError **err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        int e = errno;
        g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(e), "%s: %s", path, g_strerror(e));
        return NULL;
    }
    metrics_csv *c = g_new0(metrics_csv, 1);
    c->path = g_strdup(path);
    c->f = f;
    c->header = g_ptr_array_new_with_free_func(g_free);
    c->fields = g_ptr_array_new();
    GError *e = NULL;
    if (!csv_getline(c, &e)) {
        if (e) {
            g_propagate_error(err, e);
            metrics_csv_close(c);
            return NULL;
        }
        c->header_text = g_strdup("");
        return c;   /* empty file: no columns, no rows */
    }
    /* A UTF-8 byte-order mark (spreadsheets add one) is not part of the first column name. */
    if (!strncmp(c->buf, "\xEF\xBB\xBF", 3))
        memmove(c->buf, c->buf + 3, strlen(c->buf + 3) + 1);
    if (!csv_split(c, err)) {
        metrics_csv_close(c);
        return NULL;
    }
    GString *h = g_string_new(NULL);
    for (guint i = 0; i < c->fields->len; i++) {
        const char *name = g_ptr_array_index(c->fields, i);
        g_ptr_array_add(c->header, g_strdup(name));
        g_string_append_printf(h, "%s%s", i ? "," : "", name);
    }
    c->header_text = g_string_free(h, FALSE);
    return c;
}

void metrics_csv_close(metrics_csv *c)
{
    if (!c)
        return;
    if (c->f)
        fclose(c->f);
    free(c->buf);   /* allocated by getline */
    g_ptr_array_free(c->header, TRUE);
    g_ptr_array_free(c->fields, TRUE);
    g_free(c->header_text);
    g_free(c->path);
    g_free(c);
}

guint metrics_csv_ncols(const metrics_csv *c)
{
    return c->header->len;
}

const char *metrics_csv_colname(const metrics_csv *c, guint i)
{
    return i < c->header->len ? g_ptr_array_index(c->header, i) : NULL;
}

int metrics_csv_column(const metrics_csv *c, const char *name)
{
    for (guint i = 0; i < c->header->len; i++)
        if (!strcmp(g_ptr_array_index(c->header, i), name))
            return (int)i;
    return -1;
}

gboolean metrics_csv_require(const metrics_csv *c, const char *const *names, int *idx,
                             GError **err)
{
    for (size_t i = 0; names[i]; i++) {
        idx[i] = metrics_csv_column(c, names[i]);
        if (idx[i] < 0) {
            if (c->header->len == 0)
                g_set_error(err, METRICS_ERROR, METRICS_ERROR_COLUMN,
                            "%s: empty file, expected a header with column '%s'", c->path,
                            names[i]);
            else
                g_set_error(err, METRICS_ERROR, METRICS_ERROR_COLUMN,
                            "%s:1: missing column '%s' (header is %s)", c->path, names[i],
                            c->header_text);
            return FALSE;
        }
    }
    return TRUE;
}

int metrics_csv_next(metrics_csv *c, GError **err)
{
    if (c->header->len == 0)
        return 0;
    GError *e = NULL;
    if (!csv_getline(c, &e)) {
        if (e) {
            g_propagate_error(err, e);
            return -1;
        }
        return 0;
    }
    c->row_line = c->line;
    if (!csv_split(c, err))
        return -1;
    if (c->fields->len != c->header->len) {
        g_set_error(err, METRICS_ERROR, METRICS_ERROR_PARSE,
                    "%s:%" G_GUINT64_FORMAT ": %u fields, expected %u (%s)", c->path, c->line,
                    c->fields->len, c->header->len, c->header_text);
        return -1;
    }
    return 1;
}

const char *metrics_csv_field(const metrics_csv *c, guint i)
{
    return i < c->fields->len ? g_ptr_array_index(c->fields, i) : NULL;
}

guint64 metrics_csv_line(const metrics_csv *c)
{
    return c->row_line;
}

const char *metrics_csv_path(const metrics_csv *c)
{
    return c->path;
}

static gboolean parse_double(const char *s, double *out)
{
    while (*s == ' ')
        s++;
    if (!*s)
        return FALSE;
    char *end = NULL;
    double v = g_ascii_strtod(s, &end);
    if (end == s)
        return FALSE;
    while (*end == ' ')
        end++;
    if (*end || !isfinite(v))
        return FALSE;
    *out = v;
    return TRUE;
}

gboolean metrics_csv_double(const metrics_csv *c, int col, double *out, GError **err)
{
    const char *s = col >= 0 ? metrics_csv_field(c, (guint)col) : NULL;
    if (!s || !parse_double(s, out)) {
        g_set_error(err, METRICS_ERROR, METRICS_ERROR_PARSE,
                    "%s:%" G_GUINT64_FORMAT ": column '%s': '%s' is not a finite number", c->path,
                    c->row_line, col >= 0 ? metrics_csv_colname(c, (guint)col) : "?",
                    s ? s : "");
        return FALSE;
    }
    return TRUE;
}

gboolean metrics_csv_read_column(const char *path, const char *name, double **values,
                                 size_t *n, GError **err)
{
    *values = NULL;
    *n = 0;
    metrics_csv *c = metrics_csv_open(path, err);
    if (!c)
        return FALSE;
    if (metrics_csv_ncols(c) == 0) {
        metrics_csv_close(c);
        return TRUE;
    }
    const char *names[] = { name, NULL };
    int col;
    if (!metrics_csv_require(c, names, &col, err)) {
        metrics_csv_close(c);
        return FALSE;
    }
    GArray *a = g_array_new(FALSE, FALSE, sizeof(double));
    int r;
    while ((r = metrics_csv_next(c, err)) == 1) {
        double v;
        const char *f = metrics_csv_field(c, (guint)col);
        if (!f || !*f)
            continue; /* an empty cell has no value (an unfinished transfer's fct_ns) */
        if (!metrics_csv_double(c, col, &v, err)) {
            r = -1;
            break;
        }
        g_array_append_val(a, v);
    }
    metrics_csv_close(c);
    if (r < 0) {
        g_array_free(a, TRUE);
        return FALSE;
    }
    *n = a->len;
    *values = a->len ? (double *)g_array_free(a, FALSE) : (g_array_free(a, TRUE), NULL);
    return TRUE;
}

/* ---- summary.json ------------------------------------------------------------------------ */

static const char *node_type_name(JsonNode *n)
{
    switch (json_node_get_node_type(n)) {
    case JSON_NODE_OBJECT: return "an object";
    case JSON_NODE_ARRAY: return "an array";
    case JSON_NODE_NULL: return "null";
    default: return "a value";
    }
}

static gboolean member(metrics_summary *s, const char *key, JsonNodeType want, JsonNode **out,
                       GError **err)
{
    *out = json_object_get_member(s->root, key);
    if (!*out)
        return TRUE;
    if (json_node_get_node_type(*out) != want) {
        g_set_error(err, METRICS_ERROR, METRICS_ERROR_FORMAT, "%s: '%s' is %s, expected %s",
                    s->path, key, node_type_name(*out),
                    want == JSON_NODE_OBJECT ? "an object" : "an array");
        return FALSE;
    }
    return TRUE;
}

metrics_summary *metrics_summary_read(const char *path, GError **err)
{
    /* Checked first so a missing file reads "PATH: No such file or directory", in ASCII
     * (json-glib's message quotes the name with typographic quotes). */
    FILE *f = fopen(path, "r");
    if (!f) {
        int en = errno;
        g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(en), "%s: %s", path,
                    g_strerror(en));
        return NULL;
    }
    fclose(f);
    metrics_summary *s = g_new0(metrics_summary, 1);
    s->path = g_strdup(path);
    s->parser = json_parser_new();
    GError *e = NULL;
    if (!json_parser_load_from_file(s->parser, path, &e)) {
        /* json-glib names the file only for some errors; always lead with the path. */
        if (e->domain == G_FILE_ERROR)
            g_set_error(err, G_FILE_ERROR, e->code, "%s", e->message);
        else if (g_str_has_prefix(e->message, path))
            g_set_error(err, METRICS_ERROR, METRICS_ERROR_PARSE, "%s", e->message);
        else
            g_set_error(err, METRICS_ERROR, METRICS_ERROR_PARSE, "%s: %s", path, e->message);
        g_error_free(e);
        metrics_summary_free(s);
        return NULL;
    }
    JsonNode *root = json_parser_get_root(s->parser);
    if (!root || !JSON_NODE_HOLDS_OBJECT(root)) {
        g_set_error(err, METRICS_ERROR, METRICS_ERROR_FORMAT,
                    "%s: the document is %s, expected an object", path,
                    root ? node_type_name(root) : "empty");
        metrics_summary_free(s);
        return NULL;
    }
    s->root = json_node_get_object(root);
    JsonNode *n;
    if (!member(s, "scenario", JSON_NODE_OBJECT, &n, err))
        goto fail;
    s->scenario = n ? json_node_get_object(n) : NULL;
    if (!member(s, "metrics", JSON_NODE_OBJECT, &n, err))
        goto fail;
    s->metrics = n ? json_node_get_object(n) : NULL;
    if (!member(s, "engine", JSON_NODE_OBJECT, &n, err))
        goto fail;
    s->engine = n ? json_node_get_object(n) : NULL;
    if (!member(s, "ports", JSON_NODE_ARRAY, &n, err))
        goto fail;
    s->ports = n ? json_node_get_array(n) : NULL;
    if (!member(s, "jobs", JSON_NODE_ARRAY, &n, err))
        goto fail;
    s->jobs = n ? json_node_get_array(n) : NULL;
    if (!member(s, "warnings", JSON_NODE_ARRAY, &n, err))
        goto fail;
    s->warnings = n ? json_node_get_array(n) : NULL;
    return s;
fail:
    metrics_summary_free(s);
    return NULL;
}

metrics_summary *metrics_summary_read_dir(const char *dir, GError **err)
{
    char *p = g_build_filename(dir, "summary.json", NULL);
    metrics_summary *s = metrics_summary_read(p, err);
    g_free(p);
    return s;
}

void metrics_summary_free(metrics_summary *s)
{
    if (!s)
        return;
    if (s->parser)
        g_object_unref(s->parser);
    g_free(s->path);
    g_free(s);
}

gboolean metrics_json_number(JsonObject *obj, const char *key, double *out)
{
    if (!obj)
        return FALSE;
    JsonNode *n = json_object_get_member(obj, key);
    if (!n || !JSON_NODE_HOLDS_VALUE(n))
        return FALSE;
    GType t = json_node_get_value_type(n);
    if (t == G_TYPE_INT64)
        *out = (double)json_node_get_int(n);
    else if (t == G_TYPE_DOUBLE)
        *out = json_node_get_double(n);
    else
        return FALSE;
    return TRUE;
}

char *metrics_json_string(JsonObject *obj, const char *key)
{
    if (!obj)
        return NULL;
    JsonNode *n = json_object_get_member(obj, key);
    if (n && JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING)
        return g_strdup(json_node_get_string(n));
    return metrics_number_text(n, "true", "false");
}

char *metrics_number_text(JsonNode *n, const char *yes, const char *no)
{
    if (!n || !JSON_NODE_HOLDS_VALUE(n))
        return NULL;
    GType t = json_node_get_value_type(n);
    if (t == G_TYPE_INT64)
        return g_strdup_printf("%" G_GINT64_FORMAT, json_node_get_int(n));
    if (t == G_TYPE_DOUBLE) {
        char buf[G_ASCII_DTOSTR_BUF_SIZE];
        return g_strdup(g_ascii_dtostr(buf, sizeof buf, json_node_get_double(n)));
    }
    if (t == G_TYPE_BOOLEAN)
        return g_strdup(json_node_get_boolean(n) ? yes : no);
    return NULL;
}

gboolean metrics_summary_metric(const metrics_summary *s, const char *key, double *out)
{
    return metrics_json_number(s->metrics, key, out);
}

char *metrics_summary_scenario(const metrics_summary *s, const char *section, const char *key)
{
    if (!s->scenario)
        return NULL;
    JsonNode *n = json_object_get_member(s->scenario, section);
    if (!n || !JSON_NODE_HOLDS_OBJECT(n))
        return NULL;
    return metrics_json_string(json_node_get_object(n), key);
}

double metrics_summary_end_ns(const metrics_summary *s)
{
    double v;
    if (!s)
        return 0;
    if (metrics_json_number(s->engine, "sim_time_ns", &v) && v > 0)
        return v;
    if (metrics_json_number(s->metrics, "completion_ns", &v) && v > 0)
        return v;
    return 0;
}

/* ---- time series ------------------------------------------------------------------------- */

void metrics_series_free(metrics_series *s)
{
    if (!s)
        return;
    g_free(s->key);
    g_free(s->label);
    if (s->t)
        g_array_free(s->t, TRUE);
    if (s->v)
        g_array_free(s->v, TRUE);
    g_free(s);
}

/* Per-series state while scanning; last sample kept to integrate the step function. */
typedef struct {
    metrics_series *s;
    double t_prev, v_prev;
} series_acc;

static const char *const queue_cols[] = { "t_ns", "node", "port", "prio", "bytes", NULL };
static const char *const rate_cols[] = { "t_ns", "flow", "rate_gbps", NULL };

/* Builds the key of the current row into k; returns FALSE with err on a malformed id. */
static gboolean row_key(const metrics_csv *c, metrics_series_kind kind, const int *idx,
                        GString *k, GError **err)
{
    g_string_truncate(k, 0);
    if (kind == METRICS_SERIES_QUEUES) {
        double port, prio;
        if (!metrics_csv_double(c, idx[2], &port, err) ||
            !metrics_csv_double(c, idx[3], &prio, err))
            return FALSE;
        /* Built from the text (numbers checked above): printf per row costs more than the
         * rest of the parsing. */
        g_string_append(k, metrics_csv_field(c, idx[1]));
        g_string_append_c(k, ':');
        g_string_append(k, metrics_csv_field(c, idx[2]));
        g_string_append_c(k, ':');
        g_string_append(k, metrics_csv_field(c, idx[3]));
    } else {
        g_string_assign(k, metrics_csv_field(c, idx[1]));
    }
    return TRUE;
}

static char *series_label(const metrics_csv *c, metrics_series_kind kind, const int *idx)
{
    if (kind == METRICS_SERIES_QUEUES)
        return g_strdup_printf("%s port %s prio %s", metrics_csv_field(c, idx[1]),
                               metrics_csv_field(c, idx[2]), metrics_csv_field(c, idx[3]));
    return g_strdup_printf("flow %s", metrics_csv_field(c, idx[1]));
}

static gint cmp_busiest_queue(gconstpointer a, gconstpointer b)
{
    const metrics_series *x = *(metrics_series *const *)a, *y = *(metrics_series *const *)b;
    if (x->vmax != y->vmax)
        return x->vmax > y->vmax ? -1 : 1;
    if (x->area != y->area)
        return x->area > y->area ? -1 : 1;
    return strcmp(x->key, y->key);
}

static gint cmp_busiest_flow(gconstpointer a, gconstpointer b)
{
    const metrics_series *x = *(metrics_series *const *)a, *y = *(metrics_series *const *)b;
    if (x->area != y->area)
        return x->area > y->area ? -1 : 1;
    if (x->vmax != y->vmax)
        return x->vmax > y->vmax ? -1 : 1;
    return strcmp(x->key, y->key);
}

/* Shared by scan (want == NULL: collect all) and load (only series in want, keep samples). */
static GPtrArray *series_pass(const char *path, metrics_series_kind kind, GPtrArray *want,
                              GError **err)
{
    metrics_csv *c = metrics_csv_open(path, err);
    if (!c)
        return NULL;
    GPtrArray *out = g_ptr_array_new_with_free_func((GDestroyNotify)metrics_series_free);
    if (metrics_csv_ncols(c) == 0) {
        metrics_csv_close(c);
        return out;
    }
    const char *const *cols = kind == METRICS_SERIES_QUEUES ? queue_cols : rate_cols;
    int idx[6];
    int vcol = kind == METRICS_SERIES_QUEUES ? 4 : 2;
    if (!metrics_csv_require(c, cols, idx, err)) {
        metrics_csv_close(c);
        g_ptr_array_free(out, TRUE);
        return NULL;
    }
    GHashTable *acc = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
    if (want) {
        for (guint i = 0; i < want->len; i++) {
            metrics_series *s = g_ptr_array_index(want, i);
            if (s->t)
                g_array_set_size(s->t, 0);
            else
                s->t = g_array_new(FALSE, FALSE, sizeof(double));
            if (s->v)
                g_array_set_size(s->v, 0);
            else
                s->v = g_array_new(FALSE, FALSE, sizeof(double));
            series_acc *a = g_new0(series_acc, 1);
            a->s = s;
            g_hash_table_insert(acc, s->key, a);
        }
    }
    GString *k = g_string_new(NULL);
    int r;
    while ((r = metrics_csv_next(c, err)) == 1) {
        double t, v;
        /* rates.csv: an empty rate ends a flow's line (it has nothing left to send) */
        gboolean gap = kind == METRICS_SERIES_RATES && !*metrics_csv_field(c, idx[vcol]);
        if (!metrics_csv_double(c, idx[0], &t, err) || (!gap && !metrics_csv_double(c, idx[vcol], &v, err)) ||
            !row_key(c, kind, idx, k, err)) {
            r = -1;
            break;
        }
        if (gap)
            v = NAN;
        series_acc *a = g_hash_table_lookup(acc, k->str);
        if (!a) {
            if (want)
                continue;
            a = g_new0(series_acc, 1);
            a->s = g_new0(metrics_series, 1);
            a->s->key = g_strdup(k->str);
            a->s->label = series_label(c, kind, idx);
            a->s->t_first = t;
            a->s->vmax = v;
            g_ptr_array_add(out, a->s);
            g_hash_table_insert(acc, a->s->key, a);
        } else if (a->s->samples > 0) {
            if (t < a->t_prev) {
                g_set_error(err, METRICS_ERROR, METRICS_ERROR_PARSE,
                            "%s:%" G_GUINT64_FORMAT ": time %.0f ns goes back (previous sample of "
                            "%s was at %.0f ns)", path, metrics_csv_line(c), t, a->s->label,
                            a->t_prev);
                r = -1;
                break;
            }
            if (isfinite(a->v_prev))
                a->s->area += a->v_prev * (t - a->t_prev);
        } else {
            a->s->t_first = t;
            a->s->vmax = v;
        }
        a->s->samples++;
        a->s->t_last = t;
        if (v > a->s->vmax || !isfinite(a->s->vmax))
            a->s->vmax = v;
        if (want) {
            /* a gap: the last value holds up to it, then the line breaks */
            if (gap && a->s->samples > 1 && isfinite(a->v_prev)) {
                g_array_append_val(a->s->t, t);
                g_array_append_val(a->s->v, a->v_prev);
            }
            g_array_append_val(a->s->t, t);
            g_array_append_val(a->s->v, v);
        }
        a->t_prev = t;
        a->v_prev = v;
    }
    g_string_free(k, TRUE);
    g_hash_table_destroy(acc);
    metrics_csv_close(c);
    if (r < 0) {
        g_ptr_array_free(out, TRUE);
        return NULL;
    }
    g_ptr_array_sort(out, kind == METRICS_SERIES_QUEUES ? cmp_busiest_queue : cmp_busiest_flow);
    return out;
}

GPtrArray *metrics_series_scan(const char *path, metrics_series_kind kind, GError **err)
{
    return series_pass(path, kind, NULL, err);
}

gboolean metrics_series_load(const char *path, metrics_series_kind kind, GPtrArray *want,
                             GError **err)
{
    /* Statistics are recomputed on this pass; reset them so a load is self-consistent. */
    for (guint i = 0; i < want->len; i++) {
        metrics_series *s = g_ptr_array_index(want, i);
        s->samples = 0;
        s->area = 0;
    }
    GPtrArray *none = series_pass(path, kind, want, err);
    if (!none)
        return FALSE;
    g_ptr_array_free(none, TRUE);
    return TRUE;
}

/* ---- describing and formatting metrics --------------------------------------------------- */

metrics_kind metrics_key_kind(const char *key, double *scale)
{
    double dummy;
    if (!scale)
        scale = &dummy;
    *scale = 1;
    if (g_str_has_suffix(key, "_ns"))
        return METRICS_KIND_TIME;
    if (g_str_has_suffix(key, "_us")) {
        *scale = 1e3;
        return METRICS_KIND_TIME;
    }
    if (g_str_has_suffix(key, "_per_s"))
        return METRICS_KIND_PER_S;
    if (g_str_has_suffix(key, "_s")) {
        *scale = 1e9;
        return METRICS_KIND_TIME;
    }
    if (g_str_has_suffix(key, "bytes"))
        return METRICS_KIND_BYTES;
    if (g_str_has_suffix(key, "_GBps"))
        return METRICS_KIND_GBYTES_S;
    if (g_str_has_suffix(key, "_gbps") || g_str_has_suffix(key, "_Gbps"))
        return METRICS_KIND_GBITS_S;
    if (g_str_has_suffix(key, "fraction") || !strcmp(key, "utilisation") ||
        !strcmp(key, "utilization"))
        return METRICS_KIND_FRACTION;
    if (g_str_has_prefix(key, "slowdown"))
        return METRICS_KIND_RATIO;
    return METRICS_KIND_COUNT;
}

const char *metrics_key_label(const char *key)
{
    static const char *const labels[][2] = {
        { "transfers", "Transfers" },
        { "transfers_completed", "Transfers completed" },
        { "bytes", "Bytes transferred" },
        { "completion_ns", "Completion time" },
        { "fct_p50_ns", "FCT p50" },
        { "fct_p99_ns", "FCT p99" },
        { "fct_max_ns", "FCT max" },
        { "slowdown_p50", "Slowdown p50" },
        { "slowdown_p99", "Slowdown p99" },
        { "slowdown_max", "Slowdown max" },
        { "drops", "Drops" },
        { "drops_lossless", "Drops on lossless priorities" },
        { "ecn_marked", "ECN-marked packets" },
        { "cnp_sent", "CNPs sent" },
        { "cnp_handled", "CNPs handled" },
        { "retransmitted_packets", "Retransmitted packets" },
        { "timeouts", "Timeouts" },
        { "pause_frames", "PFC pause frames" },
        { "paused_ns", "Paused time (sum over ports)" },
        { "paused_fraction", "Paused fraction" },
        { "max_queue_bytes", "Max queue" },
        { "p99_queue_bytes", "p99 queue" },
        { "collective_time_p50_us", "Collective time p50" },
        { "collective_time_p99_us", "Collective time p99" },
        { "busbw_GBps", "Bus bandwidth" },
        { "tx_bytes", "Bytes sent" },
        { "utilisation", "Utilisation" },
        { "time_p50_us", "Time p50" },
        { "time_p99_us", "Time p99" },
        { "comm_fraction", "Communication fraction" },
        { "pause_frames_received", "Pause frames received" },
        { "pfc_watchdog_storms", "PFC pause storms (watchdog)" },
        { "deadlock", "Deadlock detected" },
        { "events", "Events" },
        { "events_per_s", "Events per second" },
        { "packet_hops", "Packet hops" },
        { "packet_hops_per_s", "Packet hops per second" },
        { "sim_time_ns", "Simulated time" },
        { "wall_s", "Wall-clock time" },
        { "peak_rss_bytes", "Peak memory (RSS)" },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(labels); i++)
        if (!strcmp(labels[i][0], key))
            return labels[i][1];
    return NULL;
}

/* "1234567" -> "1,234,567" for integral values, else 4 significant digits. */
static char *format_count(double v)
{
    if (fabs(v) < 1e15 && v == floor(v)) {
        char digits[32];
        g_snprintf(digits, sizeof digits, "%.0f", fabs(v));
        GString *s = g_string_new(v < 0 ? "-" : "");
        size_t len = strlen(digits);
        for (size_t i = 0; i < len; i++) {
            if (i > 0 && (len - i) % 3 == 0)
                g_string_append_c(s, ',');
            g_string_append_c(s, digits[i]);
        }
        return g_string_free(s, FALSE);
    }
    return g_strdup_printf("%.4g", v);
}

/* Picks the largest unit not bigger than |v| and prints 4 significant digits. */
static char *format_scaled(double v, const double *div, const char *const *unit, size_t n)
{
    size_t i = 0;
    while (i + 1 < n && fabs(v) >= div[i + 1])
        i++;
    return g_strdup_printf("%.4g %s", v / div[i], unit[i]);
}

char *metrics_format_kind(metrics_kind kind, double v)
{
    if (isnan(v))
        return g_strdup("n/a");
    switch (kind) {
    case METRICS_KIND_TIME: {
        static const double d[] = { 1, 1e3, 1e6, 1e9 };
        static const char *const u[] = { "ns", "µs", "ms", "s" };
        return format_scaled(v, d, u, 4);
    }
    case METRICS_KIND_BYTES: {
        static const double d[] = { 1, 1e3, 1e6, 1e9, 1e12 };
        static const char *const u[] = { "B", "KB", "MB", "GB", "TB" };
        if (fabs(v) < 1e3)
            return g_strdup_printf("%.0f B", v);
        return format_scaled(v, d, u, 5);
    }
    case METRICS_KIND_FRACTION:
        return g_strdup_printf("%.2f%%", v * 100);
    case METRICS_KIND_RATIO:
        return g_strdup_printf("%.4g×", v);
    case METRICS_KIND_GBYTES_S:
        return g_strdup_printf("%.4g GB/s", v);
    case METRICS_KIND_GBITS_S:
        return g_strdup_printf("%.4g Gb/s", v);
    case METRICS_KIND_PER_S: {
        static const double d[] = { 1, 1e3, 1e6, 1e9 };
        static const char *const u[] = { "/s", "k/s", "M/s", "G/s" };
        return format_scaled(v, d, u, 4);
    }
    case METRICS_KIND_COUNT:
    default:
        return format_count(v);
    }
}

char *metrics_format(const char *key, double value)
{
    double scale;
    metrics_kind k = metrics_key_kind(key, &scale);
    return metrics_format_kind(k, value * scale);
}

metrics_direction metrics_key_direction(const char *key)
{
    static const char *const higher[] = { "busbw_GBps", "algbw_GBps", "utilisation", "utilization",
                                          "transfers_completed", "packet_hops_per_s", "events_per_s" };
    static const char *const neither[] = { "transfers", "bytes", "tx_bytes", "ecn_marked", "cnp_sent",
                                           "cnp_handled", "tx_packets", "roce_packets", "roce_bytes" };
    for (size_t i = 0; i < G_N_ELEMENTS(higher); i++)
        if (!strcmp(key, higher[i]) || g_str_has_suffix(key, higher[i]))
            return METRICS_HIGHER_BETTER;
    for (size_t i = 0; i < G_N_ELEMENTS(neither); i++)
        if (!strcmp(key, neither[i]))
            return METRICS_NEITHER;
    switch (metrics_key_kind(key, NULL)) {
    case METRICS_KIND_TIME:     /* FCT, completion, collective time, paused time */
    case METRICS_KIND_BYTES:    /* queue depths */
    case METRICS_KIND_FRACTION: /* paused fraction, comm fraction */
    case METRICS_KIND_RATIO:    /* slowdown */
        return METRICS_LOWER_BETTER;
    case METRICS_KIND_GBYTES_S:
    case METRICS_KIND_GBITS_S:
        return METRICS_HIGHER_BETTER;
    default:
        break;
    }
    if (g_str_has_prefix(key, "drops") || !strcmp(key, "timeouts") || !strcmp(key, "retransmitted_packets") ||
        !strcmp(key, "pause_frames") || !strcmp(key, "deadlock"))
        return METRICS_LOWER_BETTER;
    return METRICS_NEITHER;
}

double metrics_t975(double df)
{
    /* Student's t, two-sided 95%: exact table to 30 degrees of freedom, then the
     * Cornish-Fisher expansion around the normal quantile 1.959964 (error < 1e-4). */
    static const double t[] = { 0,      12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646,
                                2.3060, 2.2622,  2.2281, 2.2010, 2.1788, 2.1604, 2.1448, 2.1314,
                                2.1199, 2.1098,  2.1009, 2.0930, 2.0860, 2.0796, 2.0739, 2.0687,
                                2.0639, 2.0595,  2.0555, 2.0518, 2.0484, 2.0452, 2.0423 };
    if (df < 1)
        return NAN;
    if (df <= 30 && df == floor(df))
        return t[(int)df];
    const double z = 1.959964;
    double z3 = z * z * z, z5 = z3 * z * z;
    return z + (z3 + z) / (4 * df) + (5 * z5 + 16 * z3 + 3 * z) / (96 * df * df);
}

metrics_stats metrics_stats_of(const double *v, guint n)
{
    metrics_stats st = { n, NAN, 0, 0 };
    if (n == 0)
        return st;
    double sum = 0;
    for (guint i = 0; i < n; i++)
        sum += v[i];
    st.mean = sum / n;
    if (n < 2)
        return st;
    double ss = 0;
    for (guint i = 0; i < n; i++)
        ss += (v[i] - st.mean) * (v[i] - st.mean);
    st.sd = sqrt(ss / (n - 1));
    st.ci95 = metrics_t975(n - 1) * st.sd / sqrt(n);
    return st;
}

gboolean metrics_differ_beyond_noise(const metrics_stats *a, const metrics_stats *b)
{
    if (a->n < 2 || b->n < 2)
        return FALSE;
    double va = a->sd * a->sd / a->n, vb = b->sd * b->sd / b->n;
    double d = fabs(b->mean - a->mean);
    if (va + vb == 0)
        return d > 0;
    /* Welch-Satterthwaite degrees of freedom */
    double df = (va + vb) * (va + vb) / (va * va / (a->n - 1) + vb * vb / (b->n - 1));
    return d > metrics_t975(floor(df)) * sqrt(va + vb);
}
