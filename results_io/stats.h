/* The statistics behind every number the results report: nearest-rank percentiles, empirical
 * CDFs, and nccl-tests' algorithm and bus bandwidth. One definition for run, replay,
 * pcap-stats, compare, plot, report and sweep. */
#ifndef ROCESIM_RESULTS_STATS_H
#define ROCESIM_RESULTS_STATS_H
#include <glib.h>
#include <stddef.h>
#include <stdint.h>

/* ---- statistics -------------------------------------------------------------------------- */

/* Sort ascending (NaN-free input expected); linear time for large arrays. */
void stats_sort(double *v, size_t n);
void stats_sort_u64(uint64_t *v, size_t n);

/* Nearest-rank percentile of an ascending array: the smallest value such that at least p% of
 * the values are <= it, i.e. sorted[ceil(p/100 * n) - 1], with p <= 0 giving the minimum and
 * p >= 100 the maximum. Always returns one of the values (no interpolation), so p99 of a run
 * is a latency that some transfer really had. NAN when n == 0. */
double stats_percentile(const double *sorted, size_t n, double p);

double stats_mean(const double *v, size_t n);   /* NAN when n == 0 */

/* One point of an empirical CDF: y = fraction of values <= x. */
typedef struct {
    double x, y;
} stats_point;

/* Empirical CDF of an ascending array as a GArray of stats_point: (sorted[i], (i+1)/n).
 * With more than max_points values (max_points >= 2), points are taken at evenly spaced ranks
 * and the first and last are always kept, so the extremes survive. Empty array when n == 0. */
GArray *stats_cdf(const double *sorted, size_t n, size_t max_points);

/* Bus-bandwidth factor of a collective, as nccl-tests defines it: busbw = algbw * factor.
 * allreduce 2(n-1)/n; allgather, reducescatter, alltoall (n-1)/n; broadcast, reduce,
 * sendrecv 1. NAN for an unknown op or ranks == 0. */
double stats_busbw_factor(const char *op, unsigned ranks);

/* Algorithm bandwidth in GB/s (1e9 B/s): bytes / time. Bytes per ns is exactly GB/s. */
double stats_algbw_GBps(double bytes, double time_ns);

/* The same nearest-rank percentile of an ascending uint64_t array (0 when n == 0). */
uint64_t stats_percentile_u64(const uint64_t *sorted, size_t n, double p);
/* The nearest-rank percentiles ps[0..np) (ascending) of an array in any order, in linear
 * time (selection, not a sort): the values stats_percentile would give after stats_sort; v
 * is reordered. NAN, or 0, for each when n == 0. */
void stats_percentiles(double *v, size_t n, const double *ps, size_t np, double *out);
void stats_percentiles_u64(uint64_t *v, size_t n, const double *ps, size_t np, uint64_t *out);
/* qsort comparators, ascending. */
int stats_cmp_u64(const void *a, const void *b);
int stats_cmp_dbl(const void *a, const void *b);

#endif
