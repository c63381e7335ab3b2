/* Building a CSV row in a local buffer without printf: the time-series writers format
 * hundreds of thousands of rows a run, and printf's format parsing was most of their cost.
 * The text is the same as printf's %u / %s. A row that would not fit (a name longer than
 * ROW_MAX_NAME) is for the caller to write with fprintf instead. */
#ifndef ROCESIM_RESULTS_ROW_H
#define ROCESIM_RESULTS_ROW_H
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define ROW_MAX_NAME 200

struct row {
    size_t n;
    char b[2 * ROW_MAX_NAME + 160];
};

/* (not an initialiser: that would clear the whole buffer every row) */
static inline void row_begin(struct row *r)
{
    r->n = 0;
}

static inline void row_u64(struct row *r, uint64_t v)
{
    char t[20];
    int k = 0;
    do {
        t[k++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (k)
        r->b[r->n++] = t[--k];
}

/* v with 4 decimals, the text of printf's "%.4f" (which rounds the exact binary value, ties
 * to even): the scaled value is rounded here only when it is clearly not near a tie (its
 * error, under 1e-9 for v < 1e7, cannot move it across .5); otherwise printf decides. */
static inline void row_fixed4(struct row *r, double v)
{
    double y = v * 1e4;
    if (v >= 0 && y < 1e15) {
        double fl = (double)(uint64_t)y, frac = y - fl;
        if (frac < 0.5 - 1e-6 || frac > 0.5 + 1e-6) {
            uint64_t n = (uint64_t)fl + (frac > 0.5);
            row_u64(r, n / 10000);
            uint64_t d = n % 10000;
            r->b[r->n++] = '.';
            r->b[r->n++] = (char)('0' + d / 1000);
            r->b[r->n++] = (char)('0' + d / 100 % 10);
            r->b[r->n++] = (char)('0' + d / 10 % 10);
            r->b[r->n++] = (char)('0' + d % 10);
            return;
        }
    }
    r->n += (size_t)snprintf(r->b + r->n, sizeof r->b - r->n, "%.4f", v);
}

/* s must be at most ROW_MAX_NAME bytes (row_fits). */
static inline void row_str(struct row *r, const char *s, size_t len)
{
    memcpy(r->b + r->n, s, len);
    r->n += len;
}

static inline void row_ch(struct row *r, char c)
{
    r->b[r->n++] = c;
}

static inline int row_fits(size_t a, size_t b)
{
    return a <= ROW_MAX_NAME && b <= ROW_MAX_NAME;
}

/* "t_ns,node,port," : how every time-series row starts (node at most ROW_MAX_NAME bytes). */
static inline void row_head(struct row *r, uint64_t t_ns, const char *node, size_t node_len, uint64_t port)
{
    r->n = 0;
    row_u64(r, t_ns);
    row_ch(r, ',');
    row_str(r, node, node_len);
    row_ch(r, ',');
    row_u64(r, port);
    row_ch(r, ',');
}

static inline void row_put(const struct row *r, FILE *f)
{
    fwrite_unlocked(r->b, 1, r->n, f);
}

#endif
