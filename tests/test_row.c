/* results_io/row.h, the row builder behind every time-series and transfers.csv row: its text
 * must be printf's, byte for byte (the results files were printf's before it, and results are
 * compared byte for byte). References: snprintf with %" PRIu64 " and %.4f. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "results_io/row.h"
#include "sim/rng.h"
#include "tests/testutil.h"

static int u64_differs(uint64_t v)
{
    char want[32];
    snprintf(want, sizeof want, "%" PRIu64, v);
    struct row r;
    row_begin(&r);
    row_ch(&r, '<');
    row_u64(&r, v);
    row_ch(&r, '>');
    char got[40];
    snprintf(got, sizeof got, "<%s>", want);
    int bad = r.n != strlen(got) || memcmp(r.b, got, r.n) != 0;
    bad += row_digits(v) != strlen(want);
    if (bad)
        fprintf(stderr, "\n  %s: row gave %.*s\n", want, (int)r.n, r.b);
    return bad;
}

/* every power of ten and its neighbours (where the digit count changes), the extremes, and
 * random values of every length */
static void test_u64_as_printf(void)
{
    int bad = u64_differs(0) + u64_differs(UINT64_MAX) + u64_differs(UINT64_MAX - 1);
    uint64_t p = 1;
    for (int d = 0; d < 20; d++, p *= 10) {
        bad += u64_differs(p) + u64_differs(p - 1) + u64_differs(p + 1);
        if (d < 19)
            bad += u64_differs(p * 10 - 1);
    }
    for (int b = 0; b < 64; b++) /* the digit count is estimated from the bit length */
        bad += u64_differs(1ull << b) + u64_differs((1ull << b) - 1);
    struct rng r;
    rng_init(&r, 5, 0);
    for (int i = 0; i < 20000; i++)
        bad += u64_differs(rng_next(&r) >> (rng_next(&r) % 64));
    CU_ASSERT_EQUAL(bad, 0);
}

/* row_begin_u64 keeps the last number's text: the same number twice, then another, then the
 * first again, each must read as printf's; a fresh cache (len 0) holds nothing, even for 0. */
static void test_kept_text(void)
{
    static const uint64_t seq[] = { 0, 0, 42, 42, 1234567890123ull, 7, 42, 0 };
    struct row_text c = { 0 };
    int bad = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(seq); i++) {
        struct row r;
        row_begin_u64(&r, &c, seq[i]);
        row_ch(&r, ',');
        char want[32];
        int len = snprintf(want, sizeof want, "%" PRIu64 ",", seq[i]);
        bad += r.n != (size_t)len || memcmp(r.b, want, r.n) != 0;
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/* %.4f: values on a 1e-4 grid, halfway between two grid points (printf rounds the binary
 * value: the fast path must leave those to it), rates in Gb/s as DCQCN leaves them */
static void test_fixed4_as_printf(void)
{
    struct rng r;
    rng_init(&r, 9, 0);
    int bad = 0;
    for (int i = 0; i < 30000; i++) {
        double v;
        switch (i % 3) {
        case 0: v = (double)(rng_next(&r) % 100000000) / 1e4; break;
        case 1: v = ((double)(rng_next(&r) % 10000000) + 0.5) / 1e4; break;
        default: v = 400.0 * (double)(rng_next(&r) >> 11) / 9007199254740992.0; break;
        }
        char want[64];
        snprintf(want, sizeof want, "%.4f", v);
        struct row row;
        row_begin(&row);
        row_fixed4(&row, v);
        bad += row.n != strlen(want) || memcmp(row.b, want, row.n) != 0;
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/* Rows of 1 to 300 bytes put into a stream whose buffer is 100 bytes (so rows meet its end
 * at every offset, and some are longer than it): the file holds exactly the rows, in order. */
static void test_put_rows_across_buffer_ends(void)
{
    FILE *f = tmpfile();
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    static char sbuf[100];
    setvbuf(f, sbuf, _IOFBF, sizeof sbuf);
    GString *want = g_string_new(NULL);
    struct rng g;
    rng_init(&g, 11, 0);
    for (int i = 0; i < 2000; i++) {
        struct row r;
        row_begin(&r);
        size_t len = 1 + rng_next(&g) % (i % 10 == 0 ? 300 : 60);
        for (size_t k = 0; k < len; k++)
            row_ch(&r, (char)('a' + (i + k) % 26));
        g_string_append_len(want, r.b, (gssize)r.n);
        row_put(&r, f);
    }
    CU_ASSERT_EQUAL(fflush(f), 0);
    long size = ftell(f);
    CU_ASSERT_EQUAL(size, (long)want->len);
    rewind(f);
    char *got = g_malloc(want->len + 1);
    CU_ASSERT_EQUAL(fread(got, 1, want->len + 1, f), want->len);
    CU_ASSERT(memcmp(got, want->str, want->len) == 0);
    g_free(got);
    g_string_free(want, TRUE);
    fclose(f);
}

static CU_TestInfo tests[] = {
    { "integers as printf writes them", test_u64_as_printf },
    { "a kept number's text", test_kept_text },
    { "four decimals as printf writes them", test_fixed4_as_printf },
    { "rows put into a stream come out whole and in order", test_put_rows_across_buffer_ends },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("row", tests)
