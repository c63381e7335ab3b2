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

#endif
