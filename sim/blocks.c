/* Fixed-size records in blocks (see blocks.h). */
#include "sim/blocks.h"
#include <string.h>

void block_store_init(struct block_store *bs, size_t elem, guint per_block)
{
    *bs = (struct block_store){ g_ptr_array_new_with_free_func(g_free), elem, per_block ? per_block : 1, 0 };
}

void *block_store_take(struct block_store *bs)
{
    if (!bs->blocks->len || bs->used == bs->per_block) {
        g_ptr_array_add(bs->blocks, g_malloc_n(bs->per_block, bs->elem));
        bs->used = 0;
    }
    char *p = (char *)g_ptr_array_index(bs->blocks, bs->blocks->len - 1) + bs->used++ * bs->elem;
    memset(p, 0, bs->elem); /* a block kept by a reset holds old records */
    return p;
}

void block_store_reset(struct block_store *bs)
{
    if (bs->blocks->len > 1)
        g_ptr_array_remove_range(bs->blocks, 1, bs->blocks->len - 1);
    bs->used = 0;
}

void block_store_clear(struct block_store *bs)
{
    if (bs->blocks)
        g_ptr_array_free(bs->blocks, TRUE);
    bs->blocks = NULL;
}
