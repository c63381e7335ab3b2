#include "sim/radix.h"
#include <string.h>

/* One body for both widths. */
#define RADIX_SORT(name, T)                                                                    \
    void name(T *v, T *tmp, size_t n)                                                          \
    {                                                                                          \
        T or_ = 0, and_ = (T)~(T)0;                                                            \
        for (size_t i = 0; i < n; i++) {                                                       \
            or_ |= v[i];                                                                       \
            and_ &= v[i];                                                                      \
        }                                                                                      \
        T *src = v, *dst = tmp;                                                                \
        for (unsigned shift = 0; shift < 8 * sizeof(T); shift += 8) {                          \
            if (!(((or_ ^ and_) >> shift) & 0xff))                                             \
                continue;                                                                      \
            size_t cnt[257] = { 0 };                                                           \
            for (size_t i = 0; i < n; i++)                                                     \
                cnt[((src[i] >> shift) & 0xff) + 1]++;                                         \
            for (int d = 0; d < 256; d++)                                                      \
                cnt[d + 1] += cnt[d];                                                          \
            for (size_t i = 0; i < n; i++)                                                     \
                dst[cnt[(src[i] >> shift) & 0xff]++] = src[i];                                 \
            T *t = src;                                                                        \
            src = dst;                                                                         \
            dst = t;                                                                           \
        }                                                                                      \
        if (src != v)                                                                          \
            memcpy(v, src, n * sizeof *v);                                                     \
    }

RADIX_SORT(radix_sort_u32, uint32_t)
RADIX_SORT(radix_sort_u64, uint64_t)

void sort_ids_u32(uint32_t *v, uint32_t *tmp, uint64_t *bits, size_t n, uint32_t bound)
{
    if (n < 2)
        return;
    size_t words = ((size_t)bound + 63) / 64;
    if (words <= 4 * n) { /* a word per four ids at most: scanning them costs less than sorting */
        for (size_t i = 0; i < n; i++)
            bits[v[i] >> 6] |= 1ull << (v[i] & 63);
        size_t k = 0;
        for (size_t w = 0; k < n; w++) {
            uint64_t m = bits[w];
            if (!m)
                continue;
            bits[w] = 0;
            for (; m; m &= m - 1)
                v[k++] = (uint32_t)(w * 64 + (unsigned)__builtin_ctzll(m));
        }
        return;
    }
    if (n <= 64) { /* a few ids in a big range */
        for (size_t i = 1; i < n; i++) {
            uint32_t x = v[i];
            size_t j = i;
            for (; j > 0 && v[j - 1] > x; j--)
                v[j] = v[j - 1];
            v[j] = x;
        }
        return;
    }
    radix_sort_u32(v, tmp, n);
}
