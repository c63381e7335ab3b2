/* sim/fastmod.h: a % d by multiplication (Lemire, Kaser and Kurz 2019). The reference is C's
 * % operator: every divisor up to past FASTMOD_MAX (the table's end and the division beyond
 * it), against the numerators where a remainder wraps (multiples of d and their neighbours),
 * the ends of the 32-bit range, and a million pseudo-random ones. */
#include "sim/fastmod.h"
#include "tests/testutil.h"

static void test_matches_the_remainder(void)
{
    GRand *rng = g_rand_new_with_seed(42);
    uint64_t wrong = 0, checked = 0;
    for (uint32_t d = 1; d <= FASTMOD_MAX + 8; d++) {
        const uint32_t edge[] = { 0, 1, d - 1, d, d + 1, UINT32_MAX, UINT32_MAX - 1, UINT32_MAX / d * d,
                                  UINT32_MAX / d * d - 1, 0x80000000u, 0x7fffffffu };
        for (size_t k = 0; k < G_N_ELEMENTS(edge); k++, checked++)
            wrong += fastmod_u32(edge[k], d) != edge[k] % d;
        for (uint32_t m = 0; m < 4096; m++, checked += 3) { /* around the first multiples */
            uint32_t a = m * d;
            wrong += fastmod_u32(a, d) != a % d;
            wrong += fastmod_u32(a + 1, d) != (a + 1) % d;
            wrong += a && fastmod_u32(a - 1, d) != (a - 1) % d;
        }
        for (int r = 0; r < 16384; r++, checked++) {
            uint32_t a = g_rand_int(rng);
            wrong += fastmod_u32(a, d) != a % d;
        }
    }
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT(checked > 1000000);
    g_rand_free(rng);
}

static CU_TestInfo tests[] = {
    { "equals a % d for every divisor up to FASTMOD_MAX + 8", test_matches_the_remainder },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("fastmod", tests)
