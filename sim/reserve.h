/* Arrays that grow in place: their largest extent is reserved as address space up front
 * (MAP_NORESERVE: no memory is committed until a page is touched), so growing never moves
 * them and pointers into them stay valid. And large fixed arrays backed by huge pages. */
#ifndef ROCESIM_RESERVE_H
#define ROCESIM_RESERVE_H
#include <stddef.h>
#include <stdint.h>

/* Reserves room for MAX elements of ELEM bytes, zero-filled as pages are first touched;
 * NULL when the address space cannot be reserved. Asks for transparent huge pages. */
void *reserve_array(size_t elem, uint64_t max);
void reserve_release(void *base, size_t elem, uint64_t max);

/* N zeroed elements of ELEM bytes, 64-byte aligned, whose 2 MB-aligned part is backed by
 * transparent huge pages where the kernel allows it (madvise mode, Debian's default): the
 * models' per-QP and per-port arrays are walked at random, and on a large fabric a 4 KB
 * page per access misses the TLB as well as the caches. Free with huge_array_free(). */
void *huge_array0(size_t n, size_t elem);
void huge_array_free(void *p); /* NULL is fine */

/* Asks for transparent huge pages over the 2 MB-aligned part of [p, p + bytes): for a large
 * array walked at random that comes from malloc (and may move when it grows). Only pages not
 * yet touched become huge ones; a hint, without effect where the kernel has no THP. */
void huge_pages_hint(void *p, size_t bytes);

/* N zeroed elements of ELEM bytes on cache lines no other allocation shares (64-byte
 * aligned, rounded up to whole lines): for what one thread of a parallel run writes at every
 * event while another writes its neighbour. Free with g_aligned_free(). */
void *own_lines0(size_t n, size_t elem);

#endif
