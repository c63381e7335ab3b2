/* Many small records of one size, allocated in blocks that never move and freed together:
 * for tables of millions of entries built once (a QP per pair of hosts), where one malloc and
 * one free per entry cost more than the table (and the frees' consolidation even more). */
#ifndef ROCESIM_BLOCKS_H
#define ROCESIM_BLOCKS_H
#include <glib.h>
#include <stddef.h>

struct block_store {
    GPtrArray *blocks;
    size_t elem;               /* bytes per record */
    guint per_block;           /* records per block */
    guint used;                /* records taken from the last block */
};

void block_store_init(struct block_store *bs, size_t elem, guint per_block);
/* A zeroed record; valid until block_store_reset() or block_store_clear(). */
void *block_store_take(struct block_store *bs);
/* Every record taken so far is given back (one block is kept for what comes next). */
void block_store_reset(struct block_store *bs);
void block_store_clear(struct block_store *bs);

#endif
