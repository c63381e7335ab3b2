/* Reading a results folder (docs/results-format.md): the CSV reader with precise errors,
 * summary.json access and the per-queue / per-flow time series. What compare, plot, report,
 * breakdown and the tests read a folder through. */
#ifndef ROCESIM_RESULTS_READ_H
#define ROCESIM_RESULTS_READ_H
#include <glib.h>
#include <json-glib/json-glib.h>
#include <stddef.h>

#define RESULTS_ERROR (results_error_quark())
typedef enum {
    RESULTS_ERROR_PARSE,    /* a malformed row, number or JSON document */
    RESULTS_ERROR_COLUMN,   /* a required CSV column is missing */
    RESULTS_ERROR_FORMAT,   /* valid syntax, wrong shape (e.g. "metrics" is not an object) */
} results_error_code;
GQuark results_error_quark(void);

/* ---- CSV --------------------------------------------------------------------------------- */

/* A streaming reader for the results CSVs: first non-blank line is the header; fields may be
 * double-quoted ("" inside quotes is a quote) but may not span lines; blank lines are skipped;
 * every row must have as many fields as the header. Errors name the file and line:
 *   "out/queues.csv:17: 4 fields, expected 5 (t_ns,node,port,prio,bytes)". */
typedef struct results_csv results_csv;

/* Opens and reads the header. PATH missing, PATH.gz is read in its place (the path in
 * messages is then PATH.gz). A missing file fails with G_FILE_ERROR / G_FILE_ERROR_NOENT
 * (callers that treat a missing file as "nothing to show" test for it). An empty file opens
 * fine with no columns and no rows. */
results_csv *results_csv_open(const char *path, GError **err);
void results_csv_close(results_csv *c);

guint results_csv_ncols(const results_csv *c);
const char *results_csv_colname(const results_csv *c, guint i);
/* Index of a column by header name, -1 when absent. */
int results_csv_column(const results_csv *c, const char *name);
/* Looks up every name of the NULL-terminated list into idx[]; fails naming the first missing
 * column and the header found. */
gboolean results_csv_require(const results_csv *c, const char *const *names, int *idx,
                             GError **err);

/* Reads the next row: 1 = a row, 0 = end of file, -1 = error (err set). */
int results_csv_next(results_csv *c, GError **err);
/* Field i of the current row (valid until the next call to results_csv_next). */
const char *results_csv_field(const results_csv *c, guint i);
guint64 results_csv_line(const results_csv *c);   /* 1-based line of the current row */
const char *results_csv_path(const results_csv *c);
/* Field `col` of the current row as a finite number; the error names file, line and column. */
gboolean results_csv_double(const results_csv *c, int col, double *out, GError **err);

/* Every value of one column as doubles (*values is g_free()d by the caller, NULL when *n == 0).
 * An empty or header-only file gives n = 0; a missing file or column is an error. */
gboolean results_csv_read_column(const char *path, const char *name, double **values,
                                 size_t *n, GError **err);

/* ---- summary.json ------------------------------------------------------------------------ */

typedef struct results_summary {
    char *path;
    JsonParser *parser;   /* owns the tree below */
    JsonObject *root;
    JsonObject *scenario; /* each member is NULL when absent from the file */
    JsonObject *metrics;
    JsonObject *engine;
    JsonArray *ports;
    guint ports_total;    /* the ports the file lists: more than `ports` holds when the
                           * summary is a digest (summary_run_digest) */
    JsonArray *jobs;
    JsonArray *warnings;
} results_summary;

/* Parses summary.json and checks the top-level shape (object; metrics/scenario/engine objects,
 * ports/jobs/warnings arrays when present). Errors name the file. */
results_summary *results_summary_read(const char *path, GError **err);
/* The same from a document's text; `path` is the file the errors name. */
results_summary *results_summary_parse(const char *path, const char *text, gsize len, GError **err);
/* DIR/summary.json */
results_summary *results_summary_read_dir(const char *dir, GError **err);
void results_summary_free(results_summary *s);

/* The order of summary.json's ports by how busy they were: the deeper max_queue_bytes first,
 * then the higher utilisation; 0 for equals (whose order the file's decides). report.html's
 * table of busiest ports, and the digest a run hands it (summary_run_digest), both use it. */
static inline int results_port_busier(double max_q_a, double util_a, double max_q_b, double util_b)
{
    if (max_q_a != max_q_b)
        return max_q_a > max_q_b ? -1 : 1;
    return (util_a < util_b) - (util_a > util_b);
}

/* A JSON number (integer or double) member of obj; FALSE when absent or not a number. */
gboolean results_json_number(JsonObject *obj, const char *key, double *out);
/* A string member, or a number printed as a string; NULL when absent. g_free() the result. */
char *results_json_string(JsonObject *obj, const char *key);
/* A number node printed (integers exactly, doubles so they read back the same, booleans as
 * yes/no); NULL for anything else. g_free() the result. */
char *results_number_text(JsonNode *n, const char *yes, const char *no);
/* metrics.<key> */
gboolean results_summary_metric(const results_summary *s, const char *key, double *out);
/* scenario.<section>.<key> as a string (the scenario is stored as the key file's strings);
 * NULL when absent. g_free() the result. */
char *results_summary_scenario(const results_summary *s, const char *section, const char *key);
/* The end of the simulated (or measured) time in ns: engine.sim_time_ns, else
 * metrics.completion_ns; 0 when neither is known. */
double results_summary_end_ns(const results_summary *s);

/* ---- time series from queues.csv and rates.csv ------------------------------------------- */

typedef enum {
    RESULTS_SERIES_QUEUES,   /* queues.csv: one series per (node, port, prio), value = bytes */
    RESULTS_SERIES_RATES,    /* rates.csv: one series per flow, value = rate_gbps */
} results_series_kind;

/* A sampled step function: each sample holds until the next one. */
typedef struct results_series {
    char *key;        /* matches the same series in another run: "leaf0:16:3", "7" */
    char *label;      /* for legends: "leaf0 port 16 prio 3", "flow 7" */
    guint64 samples;
    double t_first, t_last;   /* ns */
    double vmax;
    double area;      /* sum of v_i * (t_{i+1} - t_i): value x ns, how "busy" the series was */
    GArray *t, *v;    /* doubles, filled by results_series_load; NULL after a scan */
} results_series;

void results_series_free(results_series *s);

/* One pass over the file computing per-series statistics without keeping the samples (queues.csv
 * can be large). Returns a GPtrArray of results_series (freeing them on destroy), busiest
 * first: queues by peak depth, flows by area (bits sent). Missing file: G_FILE_ERROR_NOENT. */
GPtrArray *results_series_scan(const char *path, results_series_kind kind, GError **err);

/* Second pass: loads the samples of the series listed in `want` (entries of a scan). */
gboolean results_series_load(const char *path, results_series_kind kind, GPtrArray *want,
                             GError **err);

#endif
