#include "tune/sweep_stats.h"
#include "results_io/csv.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

metrics_stats sweep_config_stats(const struct sweep *s, guint c, const char *metric)
{
    double *v = g_new(double, s->replicates);
    guint n = 0;
    for (guint r = 0; r < s->replicates; r++) {
        const struct sweep_point *p = sweep_config_point(s, c, r);
        n += p->state == SP_DONE && sweep_point_metric(p, metric, &v[n]);
    }
    metrics_stats st = metrics_stats_of(v, n);
    g_free(v);
    return st;
}

double sweep_config_quantile(const struct sweep *s, guint c, const char *metric, double q)
{
    double *v = g_new(double, s->replicates);
    guint n = 0;
    for (guint r = 0; r < s->replicates; r++) {
        const struct sweep_point *p = sweep_config_point(s, c, r);
        n += p->state == SP_DONE && sweep_point_metric(p, metric, &v[n]);
    }
    double x = NAN;
    if (n) {
        stats_sort(v, n);
        x = stats_percentile(v, n, q);
    }
    g_free(v);
    return x;
}

const char *sweep_config_state(const struct sweep *s, guint c)
{
    static const char *const worst[] = { "invalid", "failed", "not run", "deadlock" };
    gboolean seen[G_N_ELEMENTS(worst)] = { FALSE };
    for (guint r = 0; r < s->replicates; r++) {
        const char *st = sweep_state_text(sweep_config_point(s, c, r));
        for (size_t k = 0; k < G_N_ELEMENTS(worst); k++)
            seen[k] |= !strcmp(st, worst[k]);
    }
    for (size_t k = 0; k < G_N_ELEMENTS(worst); k++)
        if (seen[k])
            return worst[k];
    return "ok";
}

/* Rounds to the second significant digit of the confidence half-width (the digits below it
 * are noise) and prints without an exponent; with no spread, the value as it is. */
char *sweep_format_mean(double mean, double ci95)
{
    if (!isfinite(mean))
        return g_strdup("NaN");
    if (!(ci95 > 0)) {
        if (mean == floor(mean) && fabs(mean) < 1e15)
            return g_strdup_printf("%.0f", mean);
        return g_strdup_printf("%.6g", mean);
    }
    int e = (int)floor(log10(ci95)) - 1;
    double unit = pow(10, e);
    return g_strdup_printf("%.*f", e < 0 ? -e : 0, round(mean / unit) * unit);
}

char *sweep_format_ci(double ci95)
{
    if (!(ci95 > 0))
        return g_strdup("0");
    int e = (int)floor(log10(ci95)) - 1;
    double unit = pow(10, e);
    return g_strdup_printf("%.*f", e < 0 ? -e : 0, round(ci95 / unit) * unit);
}

static void stat_field(GString *g, double v)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    if (isfinite(v))
        g_string_append(g, g_ascii_dtostr(buf, sizeof buf, v));
}

gboolean sweep_write_config_csv(struct sweep *s, GError **err)
{
    GPtrArray *metrics = sweep_metric_names(s);
    GString *g = g_string_new(NULL);
    for (guint d = 0; d < s->dims->len; d++) {
        results_csv_quote(g, ((struct sweep_dim *)g_ptr_array_index(s->dims, d))->key);
        g_string_append_c(g, ',');
    }
    g_string_append(g, "replicates,");
    for (guint m = 0; m < metrics->len; m++) {
        const char *name = g_ptr_array_index(metrics, m);
        char *sd = g_strconcat(name, "_sd", NULL), *ci = g_strconcat(name, "_ci95", NULL);
        results_csv_quote(g, name);
        g_string_append_c(g, ',');
        results_csv_quote(g, sd);
        g_string_append_c(g, ',');
        results_csv_quote(g, ci);
        g_string_append_c(g, ',');
        g_free(sd);
        g_free(ci);
    }
    g_string_append(g, "status\n");
    for (guint c = 0; c < s->nconfigs; c++) {
        const struct sweep_point *p = sweep_config_point(s, c, 0);
        for (guint d = 0; d < s->dims->len; d++) {
            const struct sweep_dim *dim = g_ptr_array_index(s->dims, d);
            results_csv_quote(g, g_ptr_array_index(dim->values, p->idx[d]));
            g_string_append_c(g, ',');
        }
        guint done = 0;
        for (guint r = 0; r < s->replicates; r++)
            done += sweep_config_point(s, c, r)->state == SP_DONE;
        g_string_append_printf(g, "%u,", done);
        for (guint m = 0; m < metrics->len; m++) {
            metrics_stats st = sweep_config_stats(s, c, g_ptr_array_index(metrics, m));
            if (st.n) {
                stat_field(g, st.mean);
                g_string_append_c(g, ',');
                if (st.n > 1)
                    stat_field(g, st.sd);
                g_string_append_c(g, ',');
                if (st.n > 1)
                    stat_field(g, st.ci95);
                g_string_append_c(g, ',');
            } else {
                g_string_append(g, ",,,");
            }
        }
        g_string_append_printf(g, "%s\n", sweep_config_state(s, c));
    }
    char *path = g_build_filename(s->out, "sweep.csv", NULL);
    gboolean ok = sweep_write_file(path, g, err);
    g_free(path);
    g_string_free(g, TRUE);
    g_ptr_array_unref(metrics);
    return ok;
}
