/* Statistics over the replicates of a sweep's configurations (sim/sweep.h): the same
 * metrics_stats that `compare` uses, so a sweep and a comparison judge noise alike. */
#ifndef ROCESIM_SWEEP_STATS_H
#define ROCESIM_SWEEP_STATS_H
#include "analysis/metrics.h"
#include "tune/sweep.h"

/* A metric over the finished runs of configuration c (n = 0 when none has it). */
metrics_stats sweep_config_stats(const struct sweep *s, guint c, const char *metric);
/* A quantile (0..100) of a metric over the finished runs of configuration c; NAN if none. */
double sweep_config_quantile(const struct sweep *s, guint c, const char *metric, double q);
/* "ok" when every run finished, else the worst of its runs' states ("failed", "deadlock",
 * "not run", "invalid"). */
const char *sweep_config_state(const struct sweep *s, guint c);
/* A mean to the precision its 95% confidence half-width supports: rounded at the half-width's
 * second significant digit, e.g. 1236660.75 with 352000 -> "1240000"; 0.012345 with 0.0045 ->
 * "0.0123". sweep_format_ci rounds the half-width itself the same way ("350000", "0.0045"). */
char *sweep_format_mean(double mean, double ci95);
char *sweep_format_ci(double ci95);
/* Writes DIR/sweep.csv with one row per configuration: the varied keys, replicates, then
 * METRIC (mean), METRIC_sd and METRIC_ci95 for every metric, and the status. */
gboolean sweep_write_config_csv(struct sweep *s, GError **err);

#endif
