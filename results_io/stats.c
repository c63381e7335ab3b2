/* Percentiles, CDFs and collective bandwidths (see stats.h). */
#include "results_io/stats.h"
#include "sim/radix.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- statistics -------------------------------------------------------------------------- */

/* A radix sort (sim/radix.c): a run's millions of FCTs sort in linear time (qsort of 33 M
 * values took seconds, most of the output time of a 4096-rank ring AllReduce). */
static void radix_u64(uint64_t *v, size_t n)
{
    uint64_t *tmp = g_new(uint64_t, n);
    radix_sort_u64(v, tmp, n);
    g_free(tmp);
}

void stats_sort_u64(uint64_t *v, size_t n)
{
    if (n > 256)
        radix_u64(v, n);
    else if (n > 1)
        qsort(v, n, sizeof *v, stats_cmp_u64);
}

/* A double's bits as a key whose unsigned order is the numbers' order (NaN-free): a
 * non-negative number gets its sign bit set, a negative one all its bits flipped. */
static inline uint64_t dbl_key(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u >> 63 ? ~u : u | 1ull << 63;
}

static inline double key_dbl(uint64_t k)
{
    uint64_t u = k >> 63 ? k & ~(1ull << 63) : ~k;
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

void stats_sort(double *v, size_t n)
{
    if (n <= 256) {
        if (n > 1)
            qsort(v, n, sizeof *v, stats_cmp_dbl);
        return;
    }
    uint64_t *k = (uint64_t *)v; /* same size: the keys replace the values in place */
    G_STATIC_ASSERT(sizeof(double) == sizeof(uint64_t));
    for (size_t i = 0; i < n; i++)
        k[i] = dbl_key(v[i]);
    radix_u64(k, n);
    for (size_t i = 0; i < n; i++)
        v[i] = key_dbl(k[i]);
}

/* The 1-based nearest rank of percentile p among n > 0 values. p*n/100 is often an integer
 * that floating point lands just above (99.9 * 1000); the tolerance keeps such ranks exact
 * instead of rounding up one rank too far. */
static size_t nearest_rank(size_t n, double p)
{
    if (p <= 0)
        return 1;
    if (p >= 100)
        return n;
    double x = p * (double)n / 100.0;
    double r = ceil(x - 1e-9 * fmax(1.0, x));
    size_t rank = r < 1 ? 1 : (size_t)r;
    return rank > n ? n : rank;
}

static void swap_u64(uint64_t *a, uint64_t *b)
{
    uint64_t t = *a;
    *a = *b;
    *b = t;
}

/* Reorders v[0..n) so that v[k] is the value a sort would put there, nothing before it is
 * larger and nothing after it smaller (Hoare's FIND with a median-of-three pivot; after 64
 * partitions without converging, the rest is sorted: linear in practice, n log n at worst). */
static void select_u64(uint64_t *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    for (int rounds = 0; hi > lo; rounds++) {
        if (rounds == 64 || hi - lo < 16) {
            stats_sort_u64(v + lo, hi - lo + 1);
            return;
        }
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < v[lo])
            swap_u64(&v[mid], &v[lo]);
        if (v[hi] < v[lo])
            swap_u64(&v[hi], &v[lo]);
        if (v[hi] < v[mid])
            swap_u64(&v[hi], &v[mid]);
        uint64_t pivot = v[mid];
        size_t i = lo, j = hi;
        while (i <= j) { /* Hoare: equal keys split between both sides */
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                swap_u64(&v[i], &v[j]);
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        /* now v[lo..j] <= pivot <= v[i..hi], and v(j..i) == pivot */
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return;
    }
}

void stats_percentiles_u64(uint64_t *v, size_t n, const double *ps, size_t np, uint64_t *out)
{
    size_t from = 0; /* every value from `from` on is >= those before it */
    for (size_t i = 0; i < np; i++) {
        if (!n) {
            out[i] = 0;
            continue;
        }
        size_t r = nearest_rank(n, ps[i]) - 1;
        if (r < from) /* ps not ascending: start over */
            from = 0;
        select_u64(v + from, n - from, r - from);
        out[i] = v[r];
        from = r;
    }
}

void stats_percentiles(double *v, size_t n, const double *ps, size_t np, double *out)
{
    uint64_t *k = (uint64_t *)v; /* as stats_sort: order-preserving keys in place */
    for (size_t i = 0; i < n; i++)
        k[i] = dbl_key(v[i]);
    uint64_t *kout = g_new(uint64_t, np ? np : 1);
    stats_percentiles_u64(k, n, ps, np, kout);
    for (size_t i = 0; i < np; i++)
        out[i] = n ? key_dbl(kout[i]) : NAN;
    for (size_t i = 0; i < n; i++)
        v[i] = key_dbl(k[i]);
    g_free(kout);
}

double stats_percentile(const double *sorted, size_t n, double p)
{
    return n ? sorted[nearest_rank(n, p) - 1] : NAN;
}

uint64_t stats_percentile_u64(const uint64_t *sorted, size_t n, double p)
{
    return n ? sorted[nearest_rank(n, p) - 1] : 0;
}

int stats_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int stats_cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double stats_mean(const double *v, size_t n)
{
    if (n == 0)
        return NAN;
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    return s / (double)n;
}

GArray *stats_cdf(const double *sorted, size_t n, size_t max_points)
{
    GArray *a = g_array_new(FALSE, FALSE, sizeof(stats_point));
    if (n == 0)
        return a;
    if (max_points < 2)
        max_points = 2;
    if (n <= max_points) {
        for (size_t i = 0; i < n; i++) {
            stats_point p = { sorted[i], (double)(i + 1) / (double)n };
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
        stats_point p = { sorted[rank - 1], (double)rank / (double)n };
        g_array_append_val(a, p);
    }
    return a;
}

double stats_busbw_factor(const char *op, unsigned ranks)
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

double stats_algbw_GBps(double bytes, double time_ns)
{
    return time_ns > 0 ? bytes / time_ns : NAN;
}
