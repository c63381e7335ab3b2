/* The ideal completion time of a transfer on an idle fabric (the denominator of slowdown):
 * the message with its RoCEv2 framing (models/packet.h) at the bottleneck rate, then
 * store-and-forward of the last packet over the remaining links, plus propagation on every
 * link. Physics, shared by `run`, `check`, the breakdown and `replay`. */
#ifndef ROCESIM_IDEAL_H
#define ROCESIM_IDEAL_H
#include <stdint.h>
#include "models/topology.h"
#include "models/scenario.h"
#include "sim/simtime.h"

/* Over an explicit path of nlinks links (rate in bit/s, delay in ps), first link first. */
simtime_t ideal_path_ps(uint32_t mtu, const uint64_t *rate, const simtime_t *delay, uint32_t nlinks, uint64_t bytes);
/* Over the first ECMP choice from src to dst in t (at most 16 links), with sc's MTU. */
simtime_t ideal_transfer_ps(const struct scenario *sc, const struct topology *t, uint32_t src, uint32_t dst,
                            uint64_t bytes);

/* The last transfer's ideal, kept for the next one whose path has the same links: the same
 * switches at its two ends, host links of the same rate and delay, the same size. A
 * collective's rows mostly do (an AllToAll's each host's to the 32 hosts of a leaf in turn):
 * walking each of bench/scale-alltoall.ini's 16.8 M paths was 45 % of writing
 * transfers.csv (2026-12-07). For one thread at a time; zero it before the first use. */
struct ideal_key {
    const struct topology *t;
    uint64_t bytes;
    uint64_t src_rate, dst_rate;  /* the first link's and the last's */
    simtime_t src_delay, dst_delay;
    uint32_t mtu, a, b;           /* a, b: the switches the two hosts hang off */
    uint32_t zero;                /* no padding: keys compare whole (memcmp) */
};
struct ideal_memo {
    struct ideal_key key;
    simtime_t ps;
};
/* ideal_transfer_ps, through m */
simtime_t ideal_transfer_memo_ps(struct ideal_memo *m, const struct scenario *sc, const struct topology *t,
                                 uint32_t src, uint32_t dst, uint64_t bytes);

#endif
