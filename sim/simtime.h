/* Simulated time: picoseconds in a uint64_t (about 213 days of simulated time). */
#ifndef ROCESIM_SIMTIME_H
#define ROCESIM_SIMTIME_H
#include <stdint.h>

typedef uint64_t simtime_t;

#define PS_PER_NS ((uint64_t)1000)
#define PS_PER_US ((uint64_t)1000000)
#define PS_PER_MS ((uint64_t)1000000000)
#define PS_PER_S  ((uint64_t)1000000000000)
#define SIMTIME_NEVER UINT64_MAX

/* Time to put `bytes` on a wire of `bps` bits per second, rounded up to a whole picosecond. */
static inline simtime_t serialisation_ps(uint64_t bytes, uint64_t bps)
{
    /* bytes*8e12 overflows above ~2.3 MB; split to stay exact for any size. */
    unsigned __int128 num = (unsigned __int128)bytes * 8u * PS_PER_S;
    unsigned __int128 t = (num + bps - 1) / bps;
    return t > SIMTIME_NEVER ? SIMTIME_NEVER : (simtime_t)t; /* saturates, never wraps */
}

#endif
