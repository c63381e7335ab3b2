/* Address-space reservations (see reserve.h). */
#include "sim/reserve.h"
#include <sys/mman.h>

void *reserve_array(size_t elem, uint64_t max)
{
    if (!elem || !max || max > SIZE_MAX / elem)
        return NULL;
    void *p = mmap(NULL, elem * max, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void reserve_release(void *base, size_t elem, uint64_t max)
{
    if (base)
        munmap(base, elem * max);
}
