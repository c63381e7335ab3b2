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

/* How many decimal digits v has: the bit length times log10(2) (1233/4096), less one when v is
 * under that power of ten (the count-digits method of Hacker's Delight, 2nd ed., 11-4). */
static inline unsigned row_digits(uint64_t v)
{
    static const uint64_t pow10[20] = { 1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u,
                                        100000000u, 1000000000u, 10000000000u, 100000000000u,
                                        1000000000000u, 10000000000000u, 100000000000000u,
                                        1000000000000000u, 10000000000000000u, 100000000000000000u,
                                        1000000000000000000u, 10000000000000000000u };
    uint64_t w = v | 1; /* 0 has one digit, as 1 */
    unsigned t = (unsigned)((64 - __builtin_clzll(w)) * 1233) >> 12;
    return t + 1 - (w < pow10[t]);
}

/* Written from its last digit back, two digits a step: one division by 100 per pair instead
 * of a division by 10 per digit and a reversal (row_u64 was half of the time series' rows). */
static inline void row_u64(struct row *r, uint64_t v)
{
    static const char pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                   "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                   "8081828384858687888990919293949596979899";
    unsigned len = row_digits(v);
    char *p = r->b + r->n + len;
    while (v >= 100) {
        unsigned d = (unsigned)(v % 100);
        v /= 100;
        p -= 2;
        memcpy(p, pairs + 2 * d, 2);
    }
    if (v >= 10) {
        p -= 2;
        memcpy(p, pairs + 2 * v, 2);
    } else {
        p[-1] = (char)('0' + v);
    }
    r->n += len;
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

/* A number's text kept while the number stays the same: the rows of a sampling tick all start
 * with its time. len 0: nothing kept yet. */
struct row_text {
    uint64_t v;
    size_t len;
    char b[20];
};

/* Starts a row with v's text, formatted only when v is not the one c keeps. */
static inline void row_begin_u64(struct row *r, struct row_text *c, uint64_t v)
{
    if (c->len == 0 || c->v != v) {
        r->n = 0;
        row_u64(r, v);
        memcpy(c->b, r->b, sizeof c->b); /* (all 20: a fixed-size copy is a few moves) */
        c->v = v;
        c->len = r->n;
        return;
    }
    memcpy(r->b, c->b, sizeof c->b);
    r->n = c->len;
}

/* "t_ns,node,port," : how every time-series row starts (node at most ROW_MAX_NAME bytes), with
 * t_ns's text kept in tc for the rows after it (row_begin_u64). */
static inline void row_head(struct row *r, struct row_text *tc, uint64_t t_ns, const char *node, size_t node_len,
                            uint64_t port)
{
    row_begin_u64(r, tc, t_ns);
    row_ch(r, ',');
    row_str(r, node, node_len);
    row_ch(r, ',');
    row_u64(r, port);
    row_ch(r, ',');
}

/* Into f's buffer directly when the row fits there, as glibc's own putc_unlocked does with
 * the same public fields of its FILE: a call to fwrite_unlocked and its generic copy cost
 * about as much as formatting the row (perf, bench incast: 1 % of the run). */
static inline void row_put(const struct row *r, FILE *f)
{
#ifdef __GLIBC__
    if (f->_IO_write_ptr && (size_t)(f->_IO_write_end - f->_IO_write_ptr) >= r->n) {
        memcpy(f->_IO_write_ptr, r->b, r->n);
        f->_IO_write_ptr += r->n;
        return;
    }
#endif
    fwrite_unlocked(r->b, 1, r->n, f);
}

#endif
