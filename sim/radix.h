/* LSD radix sorts of unsigned keys, 8 bits a pass, skipping a byte every key has alike:
 * linear in the number of keys (millions of FCTs; a tick's list of changed ports). */
#ifndef ROCESIM_RADIX_H
#define ROCESIM_RADIX_H
#include <stddef.h>
#include <stdint.h>

/* Sorts v[0..n) ascending; tmp has room for n keys. */
void radix_sort_u32(uint32_t *v, uint32_t *tmp, size_t n);
void radix_sort_u64(uint64_t *v, uint64_t *tmp, size_t n);

/* Sorts v[0..n), distinct ids below bound (a tick's list of what changed), by whichever is
 * cheapest for n against bound: insertion for a few, a pass over a bitmap of bound bits when
 * the ids are dense in it (bits: (bound + 63) / 64 words, all zero, left zero), else the radix
 * (tmp: room for n). */
void sort_ids_u32(uint32_t *v, uint32_t *tmp, uint64_t *bits, size_t n, uint32_t bound);

#endif
