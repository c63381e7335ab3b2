/* LSD radix sorts of unsigned keys, 8 bits a pass, skipping a byte every key has alike:
 * linear in the number of keys (millions of FCTs; a tick's list of changed ports). */
#ifndef ROCESIM_RADIX_H
#define ROCESIM_RADIX_H
#include <stddef.h>
#include <stdint.h>

/* Sorts v[0..n) ascending; tmp has room for n keys. */
void radix_sort_u32(uint32_t *v, uint32_t *tmp, size_t n);
void radix_sort_u64(uint64_t *v, uint64_t *tmp, size_t n);

#endif
