/* Statistics and results-folder reading shared by plot, report, compare and the simulator's
 * summary figures: percentiles, CDFs, bus bandwidth, a small CSV reader with precise errors,
 * summary.json access, per-queue / per-flow time series, and human formatting of metrics.
 * The results-folder layout is docs/results-format.md. */
#ifndef ROCESIM_METRICS_H
#define ROCESIM_METRICS_H
#include <glib.h>
#include <json-glib/json-glib.h>
#include <stddef.h>

#define METRICS_ERROR (metrics_error_quark())
typedef enum {
    METRICS_ERROR_PARSE,    /* a malformed row, number or JSON document */
    METRICS_ERROR_COLUMN,   /* a required CSV column is missing */
    METRICS_ERROR_FORMAT,   /* valid syntax, wrong shape (e.g. "metrics" is not an object) */
} metrics_error_code;
GQuark metrics_error_quark(void);

/* ---- statistics -------------------------------------------------------------------------- */

/* Sorts ascending (NaN-free input expected). */
void metrics_sort(double *v, size_t n);

/* Nearest-rank percentile of an ascending array: the smallest value such that at least p% of
 * the values are <= it, i.e. sorted[ceil(p/100 * n) - 1], with p <= 0 giving the minimum and
 * p >= 100 the maximum. Always returns one of the values (no interpolation), so p99 of a run
 * is a latency that some transfer really had. NAN when n == 0. */
double metrics_percentile(const double *sorted, size_t n, double p);

double metrics_mean(const double *v, size_t n);   /* NAN when n == 0 */

/* One point of an empirical CDF: y = fraction of values <= x. */
typedef struct {
    double x, y;
} metrics_point;

/* Empirical CDF of an ascending array as a GArray of metrics_point: (sorted[i], (i+1)/n).
 * With more than max_points values (max_points >= 2), points are taken at evenly spaced ranks
 * and the first and last are always kept, so the extremes survive. Empty array when n == 0. */
GArray *metrics_cdf(const double *sorted, size_t n, size_t max_points);

/* Bus-bandwidth factor of a collective, as nccl-tests defines it: busbw = algbw * factor.
 * allreduce 2(n-1)/n; allgather, reducescatter, alltoall (n-1)/n; broadcast, reduce,
 * sendrecv 1. NAN for an unknown op or ranks == 0. */
double metrics_busbw_factor(const char *op, unsigned ranks);

/* Algorithm bandwidth in GB/s (1e9 B/s): bytes / time. Bytes per ns is exactly GB/s. */
double metrics_algbw_GBps(double bytes, double time_ns);

/* ---- units ------------------------------------------------------------------------------- */

/* "100KB" -> 100000, "600KiB" -> 614400, "1.5MB", "2MiB", "9216B", "1GB", "1GiB". KB = 1000 B,
 * KiB = 1024 B (the project's convention). Spaces between number and unit are allowed; a bare
 * number or an unknown unit is refused (FALSE). */
gboolean metrics_parse_bytes(const char *s, double *bytes);

/* ---- CSV --------------------------------------------------------------------------------- */

/* A streaming reader for the results CSVs: first non-blank line is the header; fields may be
 * double-quoted ("" inside quotes is a quote) but may not span lines; blank lines are skipped;
 * every row must have as many fields as the header. Errors name the file and line:
 *   "out/queues.csv:17: 4 fields, expected 5 (t_ns,node,port,prio,bytes)". */
typedef struct metrics_csv metrics_csv;

/* Opens and reads the header. A missing file fails with G_FILE_ERROR / G_FILE_ERROR_NOENT
 * (callers that treat a missing file as "nothing to show" test for it). An empty file opens
 * fine with no columns and no rows. */
metrics_csv *metrics_csv_open(const char *path, GError **err);
void metrics_csv_close(metrics_csv *c);

guint metrics_csv_ncols(const metrics_csv *c);
const char *metrics_csv_colname(const metrics_csv *c, guint i);
/* Index of a column by header name, -1 when absent. */
int metrics_csv_column(const metrics_csv *c, const char *name);
/* Looks up every name of the NULL-terminated list into idx[]; fails naming the first missing
 * column and the header found. */
gboolean metrics_csv_require(const metrics_csv *c, const char *const *names, int *idx,
                             GError **err);

/* Reads the next row: 1 = a row, 0 = end of file, -1 = error (err set). */
int metrics_csv_next(metrics_csv *c, GError **err);
/* Field i of the current row (valid until the next call to metrics_csv_next). */
const char *metrics_csv_field(const metrics_csv *c, guint i);
guint64 metrics_csv_line(const metrics_csv *c);   /* 1-based line of the current row */
const char *metrics_csv_path(const metrics_csv *c);
/* Field `col` of the current row as a finite number; the error names file, line and column. */
gboolean metrics_csv_double(const metrics_csv *c, int col, double *out, GError **err);

/* Every value of one column as doubles (*values is g_free()d by the caller, NULL when *n == 0).
 * An empty or header-only file gives n = 0; a missing file or column is an error. */
gboolean metrics_csv_read_column(const char *path, const char *name, double **values,
                                 size_t *n, GError **err);

/* ---- summary.json ------------------------------------------------------------------------ */

typedef struct metrics_summary {
    char *path;
    JsonParser *parser;   /* owns the tree below */
    JsonObject *root;
    JsonObject *scenario; /* each member is NULL when absent from the file */
    JsonObject *metrics;
    JsonObject *engine;
    JsonArray *ports;
    JsonArray *jobs;
    JsonArray *warnings;
} metrics_summary;

/* Parses summary.json and checks the top-level shape (object; metrics/scenario/engine objects,
 * ports/jobs/warnings arrays when present). Errors name the file. */
metrics_summary *metrics_summary_read(const char *path, GError **err);
/* DIR/summary.json */
metrics_summary *metrics_summary_read_dir(const char *dir, GError **err);
void metrics_summary_free(metrics_summary *s);

/* A JSON number (integer or double) member of obj; FALSE when absent or not a number. */
gboolean metrics_json_number(JsonObject *obj, const char *key, double *out);
/* A string member, or a number printed as a string; NULL when absent. g_free() the result. */
char *metrics_json_string(JsonObject *obj, const char *key);
/* A number node printed (integers exactly, doubles so they read back the same, booleans as
 * yes/no); NULL for anything else. g_free() the result. */
char *metrics_number_text(JsonNode *n, const char *yes, const char *no);
/* metrics.<key> */
gboolean metrics_summary_metric(const metrics_summary *s, const char *key, double *out);
/* scenario.<section>.<key> as a string (the scenario is stored as the key file's strings);
 * NULL when absent. g_free() the result. */
char *metrics_summary_scenario(const metrics_summary *s, const char *section, const char *key);
/* The end of the simulated (or measured) time in ns: engine.sim_time_ns, else
 * metrics.completion_ns; 0 when neither is known. */
double metrics_summary_end_ns(const metrics_summary *s);

/* ---- time series from queues.csv and rates.csv ------------------------------------------- */

typedef enum {
    METRICS_SERIES_QUEUES,   /* queues.csv: one series per (node, port, prio), value = bytes */
    METRICS_SERIES_RATES,    /* rates.csv: one series per flow, value = rate_gbps */
} metrics_series_kind;

/* A sampled step function: each sample holds until the next one. */
typedef struct metrics_series {
    char *key;        /* matches the same series in another run: "leaf0:16:3", "7" */
    char *label;      /* for legends: "leaf0 port 16 prio 3", "flow 7" */
    guint64 samples;
    double t_first, t_last;   /* ns */
    double vmax;
    double area;      /* sum of v_i * (t_{i+1} - t_i): value x ns, how "busy" the series was */
    GArray *t, *v;    /* doubles, filled by metrics_series_load; NULL after a scan */
} metrics_series;

void metrics_series_free(metrics_series *s);

/* One pass over the file computing per-series statistics without keeping the samples (queues.csv
 * can be large). Returns a GPtrArray of metrics_series (freeing them on destroy), busiest
 * first: queues by peak depth, flows by area (bits sent). Missing file: G_FILE_ERROR_NOENT. */
GPtrArray *metrics_series_scan(const char *path, metrics_series_kind kind, GError **err);

/* Second pass: loads the samples of the series listed in `want` (entries of a scan). */
gboolean metrics_series_load(const char *path, metrics_series_kind kind, GPtrArray *want,
                             GError **err);

/* ---- describing and formatting metrics --------------------------------------------------- */

typedef enum {
    METRICS_KIND_COUNT,     /* plain number: transfers, marks, pause frames */
    METRICS_KIND_TIME,      /* base unit ns (keys *_ns, *_us, *_s) */
    METRICS_KIND_BYTES,     /* bytes (keys *bytes) */
    METRICS_KIND_FRACTION,  /* 0..1 shown as percent (keys *_fraction, utilisation) */
    METRICS_KIND_RATIO,     /* slowdown: shown as "1.23x" */
    METRICS_KIND_GBYTES_S,  /* GB/s (keys *_GBps) */
    METRICS_KIND_GBITS_S,   /* Gb/s (keys *_gbps, *_Gbps) */
    METRICS_KIND_PER_S,     /* events per second (keys *_per_s) */
} metrics_kind;

/* The kind of a metric from its key's suffix; *scale converts the key's unit to the kind's
 * base unit (e.g. 1000 for *_us -> ns). */
metrics_kind metrics_key_kind(const char *key, double *scale);
/* Human name of a well-known key ("fct_p99_ns" -> "FCT p99"), else NULL. */
const char *metrics_key_label(const char *key);
/* Human formatting in the kind's base unit: 1234 ns -> "1.234 µs", 123456 B -> "123.5 KB",
 * 0.25 fraction -> "25.00%", 1234567 count -> "1,234,567". g_free() the result. */
char *metrics_format_kind(metrics_kind kind, double base_value);
/* Same for a metric named by key (applies the key's scale). */
char *metrics_format(const char *key, double value);

/* Which way is better for a metric: times, slowdowns, drops, pauses, queues and
 * retransmissions are better lower; bandwidths, utilisation and completed transfers higher;
 * counts of marks, CNPs, bytes and transfers say nothing by themselves. */
typedef enum { METRICS_NEITHER = 0, METRICS_LOWER_BETTER, METRICS_HIGHER_BETTER } metrics_direction;
metrics_direction metrics_key_direction(const char *key);

/* Sample statistics of n values: mean, sample standard deviation (0 when n < 2) and the
 * half-width of the 95% confidence interval of the mean (Student's t; 0 when n < 2). */
typedef struct {
    guint n;
    double mean, sd, ci95;
} metrics_stats;
metrics_stats metrics_stats_of(const double *v, guint n);
/* The two-sided 97.5% quantile of Student's t with df degrees of freedom (df >= 1). */
double metrics_t975(double df);
/* Welch's test: is the difference of two means larger than the noise of either sample at
 * the 95% level? FALSE when either side has fewer than two values. */
gboolean metrics_differ_beyond_noise(const metrics_stats *a, const metrics_stats *b);

#endif
