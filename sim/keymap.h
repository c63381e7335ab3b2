/* A map from 16-byte keys to 32-bit values, for tables of millions of entries built once and
 * only looked up (a QP per pair of hosts and channel): open addressing with linear probing
 * in one array of 20-byte slots, sized ahead from the expected count and doubled when more
 * come. A GHashTable of the 16.8 M QPs of a 4096-host AllToAll kept each key in a record of
 * its own and rehashed everything at each doubling; its growth alone was 7 % of the setup. */
#ifndef ROCESIM_KEYMAP_H
#define ROCESIM_KEYMAP_H
#include <stdbool.h>
#include <stdint.h>

struct keymap_slot {
    uint32_t key[4];
    uint32_t val;              /* KEYMAP_EMPTY in a free slot */
};

#define KEYMAP_EMPTY UINT32_MAX
#define KEYMAP_KEY_BYTES 16

struct keymap {
    struct keymap_slot *slots;
    uint64_t mask;             /* slots - 1, a power of two less one */
    uint64_t len;              /* keys held */
};

/* Room for `expect` keys without growing (0 is fine). */
void keymap_init(struct keymap *m, uint64_t expect);
/* The value of the KEYMAP_KEY_BYTES at key, added with value 0 when absent (*added tells
 * which). The pointer is valid until the next call that adds a key; the value must stay below
 * KEYMAP_EMPTY. Padding in a key struct must be zeroed: the bytes are compared. */
uint32_t *keymap_get_or_add(struct keymap *m, const void *key, bool *added);
void keymap_clear(struct keymap *m);
/* Starts loading the slot where a lookup of key begins: a caller that knows its keys some
 * lookups ahead hides their cache misses behind the lookups between. */
void keymap_prefetch(const struct keymap *m, const void *key);

#endif
