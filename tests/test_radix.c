/* sim/radix.c against qsort: random keys, keys that differ only in one byte, all equal, the
 * extremes of each width; lengths 0, 1 and odd sizes. */
#include <stdlib.h>
#include <string.h>
#include "sim/radix.h"
#include "sim/rng.h"
#include "tests/testutil.h"

static int cmp32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* pattern 0: random; 1: only the second byte varies; 2: all equal; 3: extremes and zero */
static uint64_t key(struct rng *r, int pattern, size_t i)
{
    switch (pattern) {
    case 0:
        return rng_next(r);
    case 1:
        return 0x1234567812345678ull ^ ((rng_next(r) & 0xff) << 8);
    case 2:
        return 42;
    default:
        return i % 3 == 0 ? 0 : i % 3 == 1 ? ~0ull : rng_next(r);
    }
}

static void test_against_qsort(void)
{
    static const size_t lens[] = { 0, 1, 2, 3, 255, 1000, 4097 };
    struct rng r;
    rng_init(&r, 7, 0);
    int bad = 0;
    for (int pattern = 0; pattern < 4; pattern++)
        for (size_t li = 0; li < G_N_ELEMENTS(lens); li++) {
            size_t n = lens[li];
            uint32_t *a = g_new(uint32_t, n + 1), *b = g_new(uint32_t, n + 1), *t32 = g_new(uint32_t, n + 1);
            uint64_t *c = g_new(uint64_t, n + 1), *d = g_new(uint64_t, n + 1), *t64 = g_new(uint64_t, n + 1);
            for (size_t i = 0; i < n; i++) {
                c[i] = d[i] = key(&r, pattern, i);
                a[i] = b[i] = (uint32_t)(c[i] >> (pattern == 1 ? 0 : 17));
            }
            radix_sort_u32(a, t32, n);
            qsort(b, n, sizeof *b, cmp32);
            radix_sort_u64(c, t64, n);
            qsort(d, n, sizeof *d, cmp64);
            bad += n && memcmp(a, b, n * sizeof *a) != 0;
            bad += n && memcmp(c, d, n * sizeof *c) != 0;
            g_free(a);
            g_free(b);
            g_free(t32);
            g_free(c);
            g_free(d);
            g_free(t64);
        }
    CU_ASSERT_EQUAL(bad, 0);
}

/* sort_ids_u32 against qsort on distinct ids drawn from [0, bound): dense (the bitmap pass),
 * few in a big range (insertion), many in a bigger one (the radix); the bitmap is left zero. */
static void test_ids_against_qsort(void)
{
    static const struct { size_t n; uint32_t bound; } cases[] = {
        { 0, 10 }, { 1, 10 }, { 2, 2 }, { 24, 200 }, { 64, 64 }, { 130, 1000 }, { 5000, 70000 },
        { 10, 1000000 }, { 64, 1000000 }, { 300, 1000000 }, { 5000, 4000000 },
    };
    struct rng r;
    rng_init(&r, 11, 0);
    int bad = 0;
    for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
        size_t n = cases[c].n;
        uint32_t bound = cases[c].bound;
        size_t words = ((size_t)bound + 63) / 64;
        uint64_t *bits = g_new0(uint64_t, words), *seen = g_new0(uint64_t, words);
        uint32_t *v = g_new(uint32_t, n + 1), *w = g_new(uint32_t, n + 1), *tmp = g_new(uint32_t, n + 1);
        for (size_t i = 0; i < n;) { /* distinct: a sampler's list holds an id once */
            uint32_t x = (uint32_t)(rng_next(&r) % bound);
            if (seen[x >> 6] & (1ull << (x & 63)))
                continue;
            seen[x >> 6] |= 1ull << (x & 63);
            v[i] = w[i] = x;
            i++;
        }
        sort_ids_u32(v, tmp, bits, n, bound);
        qsort(w, n, sizeof *w, cmp32);
        bad += n && memcmp(v, w, n * sizeof *v) != 0;
        for (size_t i = 0; i < words; i++)
            bad += bits[i] != 0;
        g_free(bits);
        g_free(seen);
        g_free(v);
        g_free(w);
        g_free(tmp);
    }
    CU_ASSERT_EQUAL(bad, 0);
}

static CU_TestInfo tests[] = {
    { "u32 and u64 radix sorts agree with qsort", test_against_qsort },
    { "sorting distinct ids agrees with qsort", test_ids_against_qsort },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("radix", tests)
