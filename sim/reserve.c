/* Address-space reservations and huge-page arrays (see reserve.h). */
#include "sim/reserve.h"
#include <glib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_PAGE ((uintptr_t)2 << 20)

/* A hint: without THP support (or under a sanitizer's allocator) the memory stays in 4 KB
 * pages and nothing else changes. */
void huge_pages_hint(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    uintptr_t hi = ((uintptr_t)p + bytes) & ~(HUGE_PAGE - 1);
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

void *reserve_array(size_t elem, uint64_t max)
{
    if (!elem || !max || max > SIZE_MAX / elem)
        return NULL;
    void *p = mmap(NULL, elem * max, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    huge_pages_hint(p, elem * max);
    return p;
}

void reserve_release(void *base, size_t elem, uint64_t max)
{
    if (base)
        munmap(base, elem * max);
}

void *huge_array0(size_t n, size_t elem)
{
    if (!n)
        n = 1;
    void *p = g_aligned_alloc(n, elem, 64); /* aborts like g_new when it cannot */
    /* before the first touch: a page touched in 4 KB stays 4 KB until khugepaged */
    huge_pages_hint(p, n * elem);
    memset(p, 0, n * elem);
    return p;
}

void *own_lines0(size_t n, size_t elem)
{
    size_t bytes = ((n ? n : 1) * elem + 63) & ~(size_t)63;
    return g_aligned_alloc0(1, bytes, 64);
}
