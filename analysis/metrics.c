/* Describing and formatting metrics (see metrics.h). */
#include "analysis/metrics.h"
#include "sim/units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

char *metrics_number_text(JsonNode *n, const char *yes, const char *no)
{
    return results_number_text(n, yes, no);
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
        { "setup_s", "Setup wall-clock time" },
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
