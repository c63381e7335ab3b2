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
