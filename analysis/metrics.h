/* Describing and formatting metrics for people (compare, plot, report, sweep): units, kinds,
 * labels, which way is better, and the noise statistics over replicates. Reading a results
 * folder and the statistics of its numbers are results_io/read.h and results_io/stats.h. */
#ifndef ROCESIM_METRICS_H
#define ROCESIM_METRICS_H
#include <glib.h>
#include <json-glib/json-glib.h>
#include <stddef.h>
#include "results_io/read.h"
#include "results_io/stats.h"

/* ---- units ------------------------------------------------------------------------------- */

/* "100KB" -> 100000, "600KiB" -> 614400, "1.5MB", "2MiB", "9216B", "1GB", "1GiB". KB = 1000 B,
 * KiB = 1024 B (the project's convention). Spaces between number and unit are allowed; a bare
 * number or an unknown unit is refused (FALSE). */
gboolean metrics_parse_bytes(const char *s, double *bytes);

/* A number node printed; results_number_text under its old name (tune/sweep.c uses it). */
char *metrics_number_text(JsonNode *n, const char *yes, const char *no);

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
