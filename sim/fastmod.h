/* a % d without a division instruction, for the small divisors of ECMP groups: a switch
 * takes one remainder per packet (hash % members) and a 32-bit div was a measurable part of
 * a hop. Lemire, Kaser and Kurz, "Faster Remainder by Direct Computation" (Software:
 * Practice and Experience, 2019), theorem 1 with N = 32, F = 64: with c = floor(2^64 / d) + 1,
 * a % d = ((c * a mod 2^64) * d) >> 64, exactly, for every 32-bit a and d. The constants of
 * d = 1 .. FASTMOD_MAX are computed by the compiler; larger d takes the division. */
#ifndef ROCESIM_SIM_FASTMOD_H
#define ROCESIM_SIM_FASTMOD_H
#include <stdint.h>

#define FASTMOD_MAX 64u
#define FASTMOD_C(d) (UINT64_MAX / (d) + 1) /* d = 1: 0 (2^64 mod 2^64), and a % 1 = 0 */
#define FASTMOD_C4(d) FASTMOD_C(d), FASTMOD_C(d + 1), FASTMOD_C(d + 2), FASTMOD_C(d + 3)
#define FASTMOD_C16(d) FASTMOD_C4(d), FASTMOD_C4(d + 4), FASTMOD_C4(d + 8), FASTMOD_C4(d + 12)
static const uint64_t fastmod_c[FASTMOD_MAX + 1] = {
    0, FASTMOD_C16(1u), FASTMOD_C16(17u), FASTMOD_C16(33u), FASTMOD_C16(49u)
};
#undef FASTMOD_C16
#undef FASTMOD_C4

static inline uint32_t fastmod_u32(uint32_t a, uint32_t d)
{
    if (d > FASTMOD_MAX)
        return a % d;
    uint64_t low = fastmod_c[d] * a;
    return (uint32_t)(((unsigned __int128)low * d) >> 64);
}

#endif
