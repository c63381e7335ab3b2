/* sim/blocks.c: records of one size in blocks that never move. What the tables built on it
 * rely on: a record stays where it was while more are taken (a hash table holds pointers to
 * them), every record comes zeroed, also after a reset reuses the first block, and records
 * do not overlap. */
#include "sim/blocks.h"
#include "tests/testutil.h"

struct rec {
    uint64_t a, b;
    uint32_t c;
};

static void test_records_stay_and_come_zeroed(void)
{
    struct block_store bs;
    block_store_init(&bs, sizeof(struct rec), 4); /* four a block: ten records span three */
    struct rec *r[10];
    for (uint32_t i = 0; i < 10; i++) {
        r[i] = block_store_take(&bs);
        CU_ASSERT(r[i]->a == 0 && r[i]->b == 0 && r[i]->c == 0);
        r[i]->a = i;
        r[i]->b = ~(uint64_t)i;
        r[i]->c = 7 * i;
    }
    CU_ASSERT_EQUAL(bs.blocks->len, 3);
    for (uint32_t i = 0; i < 10; i++) { /* nothing moved, nothing overlapped */
        CU_ASSERT_EQUAL(r[i]->a, i);
        CU_ASSERT_EQUAL(r[i]->b, ~(uint64_t)i);
        CU_ASSERT_EQUAL(r[i]->c, 7 * i);
    }
    /* within a block, consecutive records are one record apart */
    CU_ASSERT_EQUAL((char *)r[1] - (char *)r[0], (ptrdiff_t)sizeof(struct rec));
    block_store_reset(&bs);
    CU_ASSERT_EQUAL(bs.blocks->len, 1);
    for (uint32_t i = 0; i < 6; i++) { /* the kept block held records 0-3: zeroed again */
        struct rec *x = block_store_take(&bs);
        CU_ASSERT(x->a == 0 && x->b == 0 && x->c == 0);
        x->a = 100 + i;
    }
    CU_ASSERT_EQUAL(bs.blocks->len, 2);
    block_store_clear(&bs);
    CU_ASSERT_PTR_NULL(bs.blocks);
}

static CU_TestInfo tests[] = {
    { "records stay in place, come zeroed, also after a reset", test_records_stay_and_come_zeroed },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("blocks", tests)
