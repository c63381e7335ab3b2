/* Reading results folders (see read.h). */
#include "results_io/read.h"
#include "results_io/gz.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK(rocesim-results-error-quark, results_error)

/* ---- CSV --------------------------------------------------------------------------------- */

struct results_csv {
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
static gboolean csv_getline(results_csv *c, GError **err)
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
static gboolean csv_split(results_csv *c, GError **err)
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
                    g_set_error(err, RESULTS_ERROR, RESULTS_ERROR_PARSE,
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
                g_set_error(err, RESULTS_ERROR, RESULTS_ERROR_PARSE,
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

results_csv *results_csv_open(const char *path, GError **err)
{
    FILE *f = fopen(path, "r");
    char *opened = g_strdup(path);
    if (!f && errno == ENOENT) { /* [output] compress = gzip wrote PATH.gz */
        char *gz = g_strconcat(path, ".gz", NULL);
        if ((f = gz_fopen(gz, "r"))) {
            g_free(opened);
            opened = gz;
        } else {
            g_free(gz);
            errno = ENOENT;
        }
    }
    if (!f) {
        int e = errno;
        g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(e), "%s: %s", path, g_strerror(e));
        g_free(opened);
        return NULL;
    }
    results_csv *c = g_new0(results_csv, 1);
    c->path = opened;
    c->f = f;
    c->header = g_ptr_array_new_with_free_func(g_free);
    c->fields = g_ptr_array_new();
    GError *e = NULL;
    if (!csv_getline(c, &e)) {
        if (e) {
            g_propagate_error(err, e);
            results_csv_close(c);
            return NULL;
        }
        c->header_text = g_strdup("");
        return c;   /* empty file: no columns, no rows */
    }
    /* A UTF-8 byte-order mark (spreadsheets add one) is not part of the first column name. */
    if (!strncmp(c->buf, "\xEF\xBB\xBF", 3))
        memmove(c->buf, c->buf + 3, strlen(c->buf + 3) + 1);
    if (!csv_split(c, err)) {
        results_csv_close(c);
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

void results_csv_close(results_csv *c)
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

guint results_csv_ncols(const results_csv *c)
{
    return c->header->len;
}

const char *results_csv_colname(const results_csv *c, guint i)
{
    return i < c->header->len ? g_ptr_array_index(c->header, i) : NULL;
}

int results_csv_column(const results_csv *c, const char *name)
{
    for (guint i = 0; i < c->header->len; i++)
        if (!strcmp(g_ptr_array_index(c->header, i), name))
            return (int)i;
    return -1;
}

gboolean results_csv_require(const results_csv *c, const char *const *names, int *idx,
                             GError **err)
{
    for (size_t i = 0; names[i]; i++) {
        idx[i] = results_csv_column(c, names[i]);
        if (idx[i] < 0) {
            if (c->header->len == 0)
                g_set_error(err, RESULTS_ERROR, RESULTS_ERROR_COLUMN,
                            "%s: empty file, expected a header with column '%s'", c->path,
                            names[i]);
            else
                g_set_error(err, RESULTS_ERROR, RESULTS_ERROR_COLUMN,
                            "%s:1: missing column '%s' (header is %s)", c->path, names[i],
                            c->header_text);
            return FALSE;
        }
    }
    return TRUE;
}

int results_csv_next(results_csv *c, GError **err)
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
        g_set_error(err, RESULTS_ERROR, RESULTS_ERROR_PARSE,
                    "%s:%" G_GUINT64_FORMAT ": %u fields, expected %u (%s)", c->path, c->line,
                    c->fields->len, c->header->len, c->header_text);
        return -1;
    }
    return 1;
}

const char *results_csv_field(const results_csv *c, guint i)
{
    return i < c->fields->len ? g_ptr_array_index(c->fields, i) : NULL;
}

guint64 results_csv_line(const results_csv *c)
{
    return c->row_line;
}

const char *results_csv_path(const results_csv *c)
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

gboolean results_csv_double(const results_csv *c, int col, double *out, GError **err)
{
    const char *s = col >= 0 ? results_csv_field(c, (guint)col) : NULL;
    if (!s || !parse_double(s, out)) {
        g_set_error(err, RESULTS_ERROR, RESULTS_ERROR_PARSE,
                    "%s:%" G_GUINT64_FORMAT ": column '%s': '%s' is not a finite number", c->path,
                    c->row_line, col >= 0 ? results_csv_colname(c, (guint)col) : "?",
                    s ? s : "");
        return FALSE;
    }
    return TRUE;
}

gboolean results_csv_read_column(const char *path, const char *name, double **values,
                                 size_t *n, GError **err)
{
    *values = NULL;
    *n = 0;
    results_csv *c = results_csv_open(path, err);
    if (!c)
        return FALSE;
    if (results_csv_ncols(c) == 0) {
        results_csv_close(c);
        return TRUE;
    }
    const char *names[] = { name, NULL };
    int col;
    if (!results_csv_require(c, names, &col, err)) {
        results_csv_close(c);
        return FALSE;
    }
    GArray *a = g_array_new(FALSE, FALSE, sizeof(double));
    int r;
    while ((r = results_csv_next(c, err)) == 1) {
        double v;
        const char *f = results_csv_field(c, (guint)col);
        if (!f || !*f)
            continue; /* an empty cell has no value (an unfinished transfer's fct_ns) */
        if (!results_csv_double(c, col, &v, err)) {
            r = -1;
            break;
        }
        g_array_append_val(a, v);
    }
    results_csv_close(c);
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

static gboolean member(results_summary *s, const char *key, JsonNodeType want, JsonNode **out,
                       GError **err)
{
    *out = json_object_get_member(s->root, key);
    if (!*out)
        return TRUE;
    if (json_node_get_node_type(*out) != want) {
        g_set_error(err, RESULTS_ERROR, RESULTS_ERROR_FORMAT, "%s: '%s' is %s, expected %s",
                    s->path, key, node_type_name(*out),
                    want == JSON_NODE_OBJECT ? "an object" : "an array");
        return FALSE;
    }
    return TRUE;
}

/* The shape of a parsed document (s->parser loaded): its members, checked. */
static results_summary *summary_shape(results_summary *s, GError **err)
{
    const char *path = s->path;
    JsonNode *root = json_parser_get_root(s->parser);
    if (!root || !JSON_NODE_HOLDS_OBJECT(root)) {
        g_set_error(err, RESULTS_ERROR, RESULTS_ERROR_FORMAT,
                    "%s: the document is %s, expected an object", path,
                    root ? node_type_name(root) : "empty");
        results_summary_free(s);
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
    s->ports_total = s->ports ? json_array_get_length(s->ports) : 0;
    if (!member(s, "jobs", JSON_NODE_ARRAY, &n, err))
        goto fail;
    s->jobs = n ? json_node_get_array(n) : NULL;
    if (!member(s, "warnings", JSON_NODE_ARRAY, &n, err))
        goto fail;
    s->warnings = n ? json_node_get_array(n) : NULL;
    return s;
fail:
    results_summary_free(s);
    return NULL;
}

/* json-glib's error, led by the path (it names the file only for some errors) */
static void parse_error(const char *path, GError *e, GError **err)
{
    if (e->domain == G_FILE_ERROR)
        g_set_error(err, G_FILE_ERROR, e->code, "%s", e->message);
    else if (g_str_has_prefix(e->message, path))
        g_set_error(err, RESULTS_ERROR, RESULTS_ERROR_PARSE, "%s", e->message);
    else
        g_set_error(err, RESULTS_ERROR, RESULTS_ERROR_PARSE, "%s: %s", path, e->message);
    g_error_free(e);
}

results_summary *results_summary_read(const char *path, GError **err)
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
    results_summary *s = g_new0(results_summary, 1);
    s->path = g_strdup(path);
    s->parser = json_parser_new();
    GError *e = NULL;
    if (!json_parser_load_from_file(s->parser, path, &e)) {
        parse_error(path, e, err);
        results_summary_free(s);
        return NULL;
    }
    return summary_shape(s, err);
}

results_summary *results_summary_parse(const char *path, const char *text, gsize len, GError **err)
{
    results_summary *s = g_new0(results_summary, 1);
    s->path = g_strdup(path);
    s->parser = json_parser_new();
    GError *e = NULL;
    if (!json_parser_load_from_data(s->parser, text, (gssize)len, &e)) {
        parse_error(path, e, err);
        results_summary_free(s);
        return NULL;
    }
    return summary_shape(s, err);
}

results_summary *results_summary_read_dir(const char *dir, GError **err)
{
    char *p = g_build_filename(dir, "summary.json", NULL);
    results_summary *s = results_summary_read(p, err);
    g_free(p);
    return s;
}

void results_summary_free(results_summary *s)
{
    if (!s)
        return;
    if (s->parser)
        g_object_unref(s->parser);
    g_free(s->path);
    g_free(s);
}

gboolean results_json_number(JsonObject *obj, const char *key, double *out)
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

char *results_json_string(JsonObject *obj, const char *key)
{
    if (!obj)
        return NULL;
    JsonNode *n = json_object_get_member(obj, key);
    if (n && JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING)
        return g_strdup(json_node_get_string(n));
    return results_number_text(n, "true", "false");
}

char *results_number_text(JsonNode *n, const char *yes, const char *no)
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

gboolean results_summary_metric(const results_summary *s, const char *key, double *out)
{
    return results_json_number(s->metrics, key, out);
}

char *results_summary_scenario(const results_summary *s, const char *section, const char *key)
{
    if (!s->scenario)
        return NULL;
    JsonNode *n = json_object_get_member(s->scenario, section);
    if (!n || !JSON_NODE_HOLDS_OBJECT(n))
        return NULL;
    return results_json_string(json_node_get_object(n), key);
}

double results_summary_end_ns(const results_summary *s)
{
    double v;
    if (!s)
        return 0;
    if (results_json_number(s->engine, "sim_time_ns", &v) && v > 0)
        return v;
    if (results_json_number(s->metrics, "completion_ns", &v) && v > 0)
        return v;
    return 0;
}

/* ---- time series ------------------------------------------------------------------------- */

void results_series_free(results_series *s)
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
    results_series *s;
    double t_prev, v_prev;
} series_acc;

static const char *const queue_cols[] = { "t_ns", "node", "port", "prio", "bytes", NULL };
static const char *const rate_cols[] = { "t_ns", "flow", "rate_gbps", NULL };

/* Builds the key of the current row into k; returns FALSE with err on a malformed id. */
static gboolean row_key(const results_csv *c, results_series_kind kind, const int *idx,
                        GString *k, GError **err)
{
    g_string_truncate(k, 0);
    if (kind == RESULTS_SERIES_QUEUES) {
        double port, prio;
        if (!results_csv_double(c, idx[2], &port, err) ||
            !results_csv_double(c, idx[3], &prio, err))
            return FALSE;
        /* Built from the text (numbers checked above): printf per row costs more than the
         * rest of the parsing. */
        g_string_append(k, results_csv_field(c, idx[1]));
        g_string_append_c(k, ':');
        g_string_append(k, results_csv_field(c, idx[2]));
        g_string_append_c(k, ':');
        g_string_append(k, results_csv_field(c, idx[3]));
    } else {
        g_string_assign(k, results_csv_field(c, idx[1]));
    }
    return TRUE;
}

static char *series_label(const results_csv *c, results_series_kind kind, const int *idx)
{
    if (kind == RESULTS_SERIES_QUEUES)
        return g_strdup_printf("%s port %s prio %s", results_csv_field(c, idx[1]),
                               results_csv_field(c, idx[2]), results_csv_field(c, idx[3]));
    return g_strdup_printf("flow %s", results_csv_field(c, idx[1]));
}

static gint cmp_busiest_queue(gconstpointer a, gconstpointer b)
{
    const results_series *x = *(results_series *const *)a, *y = *(results_series *const *)b;
    if (x->vmax != y->vmax)
        return x->vmax > y->vmax ? -1 : 1;
    if (x->area != y->area)
        return x->area > y->area ? -1 : 1;
    return strcmp(x->key, y->key);
}

static gint cmp_busiest_flow(gconstpointer a, gconstpointer b)
{
    const results_series *x = *(results_series *const *)a, *y = *(results_series *const *)b;
    if (x->area != y->area)
        return x->area > y->area ? -1 : 1;
    if (x->vmax != y->vmax)
        return x->vmax > y->vmax ? -1 : 1;
    return strcmp(x->key, y->key);
}

/* Shared by scan (want == NULL: collect all) and load (only series in want, keep samples). */
static GPtrArray *series_pass(const char *path, results_series_kind kind, GPtrArray *want,
                              GError **err)
{
    results_csv *c = results_csv_open(path, err);
    if (!c)
        return NULL;
    GPtrArray *out = g_ptr_array_new_with_free_func((GDestroyNotify)results_series_free);
    if (results_csv_ncols(c) == 0) {
        results_csv_close(c);
        return out;
    }
    const char *const *cols = kind == RESULTS_SERIES_QUEUES ? queue_cols : rate_cols;
    int idx[6];
    int vcol = kind == RESULTS_SERIES_QUEUES ? 4 : 2;
    if (!results_csv_require(c, cols, idx, err)) {
        results_csv_close(c);
        g_ptr_array_free(out, TRUE);
        return NULL;
    }
    GHashTable *acc = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
    if (want) {
        for (guint i = 0; i < want->len; i++) {
            results_series *s = g_ptr_array_index(want, i);
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
    while ((r = results_csv_next(c, err)) == 1) {
        double t, v;
        /* rates.csv: an empty rate ends a flow's line (it has nothing left to send) */
        gboolean gap = kind == RESULTS_SERIES_RATES && !*results_csv_field(c, idx[vcol]);
        if (!results_csv_double(c, idx[0], &t, err) || (!gap && !results_csv_double(c, idx[vcol], &v, err)) ||
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
            a->s = g_new0(results_series, 1);
            a->s->key = g_strdup(k->str);
            a->s->label = series_label(c, kind, idx);
            a->s->t_first = t;
            a->s->vmax = v;
            g_ptr_array_add(out, a->s);
            g_hash_table_insert(acc, a->s->key, a);
        } else if (a->s->samples > 0) {
            if (t < a->t_prev) {
                g_set_error(err, RESULTS_ERROR, RESULTS_ERROR_PARSE,
                            "%s:%" G_GUINT64_FORMAT ": time %.0f ns goes back (previous sample of "
                            "%s was at %.0f ns)", path, results_csv_line(c), t, a->s->label,
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
    results_csv_close(c);
    if (r < 0) {
        g_ptr_array_free(out, TRUE);
        return NULL;
    }
    g_ptr_array_sort(out, kind == RESULTS_SERIES_QUEUES ? cmp_busiest_queue : cmp_busiest_flow);
    return out;
}

GPtrArray *results_series_scan(const char *path, results_series_kind kind, GError **err)
{
    return series_pass(path, kind, NULL, err);
}

gboolean results_series_load(const char *path, results_series_kind kind, GPtrArray *want,
                             GError **err)
{
    /* Statistics are recomputed on this pass; reset them so a load is self-consistent. */
    for (guint i = 0; i < want->len; i++) {
        results_series *s = g_ptr_array_index(want, i);
        s->samples = 0;
        s->area = 0;
    }
    GPtrArray *none = series_pass(path, kind, want, err);
    if (!none)
        return FALSE;
    g_ptr_array_free(none, TRUE);
    return TRUE;
}
