/* Arrays that grow in place: their largest extent is reserved as address space up front
 * (MAP_NORESERVE: no memory is committed until a page is touched), so growing never moves
 * them and pointers into them stay valid. */
#ifndef ROCESIM_RESERVE_H
#define ROCESIM_RESERVE_H
#include <stddef.h>
#include <stdint.h>

/* Reserves room for MAX elements of ELEM bytes, zero-filled as pages are first touched;
 * NULL when the address space cannot be reserved. */
void *reserve_array(size_t elem, uint64_t max);
void reserve_release(void *base, size_t elem, uint64_t max);

#endif
