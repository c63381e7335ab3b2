/* Seeded random streams, one per component (switch, workload, ...), so adding randomness in
 * one place does not shift the numbers every other component sees. xoshiro256** seeded
 * through splitmix64 from (scenario seed, stream id). */
#ifndef ROCESIM_RNG_H
#define ROCESIM_RNG_H
#include <stdint.h>

struct rng {
    uint64_t s[4];
};

void rng_init(struct rng *r, uint64_t seed, uint64_t stream);
uint64_t rng_next(struct rng *r);
/* Uniform in [0, 1). */
static inline double rng_uniform(struct rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }
/* Uniform integer in [0, n). */
uint64_t rng_below(struct rng *r, uint64_t n);

/* Stable stream ids for components. */
enum { RNG_STREAM_SWITCH = 1u << 20, RNG_STREAM_WORKLOAD = 2u << 20, RNG_STREAM_NIC = 3u << 20,
       RNG_STREAM_LB = 4u << 20 };

#endif
