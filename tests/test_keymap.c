/* sim/keymap.c: the map of 16-byte keys that numbers a fabric's QPs. What net_build relies on:
 * a key added once is found again with the value it was given, keys that differ in any one
 * word are different keys, nothing is lost when more keys come than were expected (the table
 * doubles), and a value changed through its pointer stays changed. */
#include "sim/keymap.h"
#include "tests/testutil.h"

static void key_of(uint32_t i, uint32_t k[4])
{
    /* QP-like keys: (src, dst, tag, sub) over a 64-host AllToAll with 2 tags and 2 subs */
    k[0] = i % 64;
    k[1] = (i / 64) % 64;
    k[2] = (i / 4096) % 2;
    k[3] = i / 8192;
}

static void test_values_found_again(void)
{
    struct keymap m;
    keymap_init(&m, 16384);
    uint64_t slots = m.mask + 1;
    uint32_t k[4];
    bool added;
    for (uint32_t i = 0; i < 16384; i++) { /* number the keys in order of first use */
        key_of(i, k);
        uint32_t *v = keymap_get_or_add(&m, k, &added);
        CU_ASSERT(added);
        CU_ASSERT_EQUAL(*v, 0);
        *v = i;
    }
    CU_ASSERT_EQUAL(m.len, 16384);
    CU_ASSERT_EQUAL(m.mask + 1, slots); /* the expected count fitted without growing */
    for (uint32_t i = 16384; i-- > 0;) {
        key_of(i, k);
        uint32_t *v = keymap_get_or_add(&m, k, &added);
        CU_ASSERT(!added);
        CU_ASSERT_EQUAL(*v, i);
    }
    CU_ASSERT_EQUAL(m.len, 16384);
    keymap_clear(&m);
    CU_ASSERT_PTR_NULL(m.slots);
}

static void test_every_word_counts(void)
{
    struct keymap m;
    keymap_init(&m, 0);
    bool added;
    uint32_t base[4] = { 7, 9, 11, 13 };
    *keymap_get_or_add(&m, base, &added) = 100;
    for (int w = 0; w < 4; w++) { /* one word changed: a new key; the base keeps its value */
        uint32_t k[4] = { 7, 9, 11, 13 };
        k[w] ^= 1u << 31;
        CU_ASSERT_EQUAL(*keymap_get_or_add(&m, k, &added), 0);
        CU_ASSERT(added);
        CU_ASSERT_EQUAL(*keymap_get_or_add(&m, base, &added), 100);
        CU_ASSERT(!added);
    }
    CU_ASSERT_EQUAL(m.len, 5);
    keymap_clear(&m);
}

static void test_grows_past_expectation(void)
{
    struct keymap m;
    keymap_init(&m, 1);
    uint64_t slots = m.mask + 1;
    uint32_t k[4];
    bool added;
    for (uint32_t i = 0; i < 100000; i++) {
        key_of(i, k);
        k[3] = i; /* all distinct */
        *keymap_get_or_add(&m, k, &added) = 3 * i + 1;
    }
    CU_ASSERT(m.mask + 1 > slots);
    CU_ASSERT((m.mask + 1) >= 2 * m.len); /* at most one key in two slots */
    CU_ASSERT_EQUAL(m.len, 100000);
    uint32_t wrong = 0;
    for (uint32_t i = 0; i < 100000; i++) {
        key_of(i, k);
        k[3] = i;
        wrong += *keymap_get_or_add(&m, k, &added) != 3 * i + 1 || added;
    }
    CU_ASSERT_EQUAL(wrong, 0);
    keymap_clear(&m);
}

static void test_counts_in_place(void)
{
    struct keymap m;
    keymap_init(&m, 4);
    bool added;
    uint32_t a[4] = { 1, 2, 3, 0 }, b[4] = { 2, 1, 3, 0 };
    for (int i = 0; i < 5; i++) /* a per-connection message counter, as net_build keeps it */
        ++*keymap_get_or_add(&m, a, &added);
    ++*keymap_get_or_add(&m, b, &added);
    CU_ASSERT_EQUAL(*keymap_get_or_add(&m, a, &added), 5);
    CU_ASSERT_EQUAL(*keymap_get_or_add(&m, b, &added), 1);
    CU_ASSERT_EQUAL(m.len, 2);
    keymap_clear(&m);
}

static CU_TestInfo tests[] = {
    { "a key is found again with its value", test_values_found_again },
    { "keys differing in any one word are different", test_every_word_counts },
    { "more keys than expected: the table doubles, nothing lost", test_grows_past_expectation },
    { "values change in place (a counter per key)", test_counts_in_place },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("keymap", tests)
