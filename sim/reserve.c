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

/* huge_array0's arrays start one line into their allocation, and that line holds its length:
 * 0 when it came from malloc, else the mapping's. From HUGE_ARRAY_MAP bytes up an array is a
 * mapping of its own, which the kernel hands out zeroed as it is first touched: zeroing it
 * here as well wrote the 4096-host AllToAll's 4.3 GB of QPs once more than needed (0.5 s of
 * its setup, 2026-12-07). Below, malloc, whose memory may have been used. */
#define HUGE_ARRAY_MAP ((size_t)HUGE_PAGE)
#define HUGE_ARRAY_HEAD ((size_t)64)

void *huge_array0(size_t n, size_t elem)
{
    if (!n)
        n = 1;
    if (elem && n > (SIZE_MAX - HUGE_ARRAY_HEAD) / elem)
        g_error("huge_array0: %zu elements of %zu bytes overflow the address space", n, elem);
    size_t bytes = HUGE_ARRAY_HEAD + n * elem;
    uint8_t *base;
    if (bytes >= HUGE_ARRAY_MAP) {
        /* a reservation of exactly its extent: zero-filled as touched, huge pages asked for */
        if (!(base = reserve_array(1, bytes)))
            g_error("huge_array0: failed to map %zu bytes", bytes); /* as g_new aborts */
        *(size_t *)base = bytes;
    } else {
        base = g_aligned_alloc0(1, bytes, 64);
    }
    return base + HUGE_ARRAY_HEAD;
}

void huge_array_free(void *p)
{
    if (!p)
        return;
    uint8_t *base = (uint8_t *)p - HUGE_ARRAY_HEAD;
    size_t mapped = *(size_t *)base;
    if (mapped)
        reserve_release(base, 1, mapped);
    else
        g_aligned_free(base);
}

void *own_lines0(size_t n, size_t elem)
{
    size_t bytes = ((n ? n : 1) * elem + 63) & ~(size_t)63;
    return g_aligned_alloc0(1, bytes, 64);
}
