/* What the verbs transport programs into each RC QP and checks before it starts, computed
 * without a device (replay.md sections 1-2), and the CQE clock:
 *   traffic class = DSCP << 2 (mlx5 takes DSCP = tclass >> 2), service level = priority,
 *   flow label chosen so mlx5 sends from the schedule's UDP source port (never 0),
 *   path MTU from the schedule, refused above the port's active MTU, timeout 14 (4.096 us x
 *   2^14 = 67 ms), retry 7, rnr_retry 7, min_rnr_timer 12, hop limit 64;
 *   landing buffers are the only memory with remote write (REMOTE_WRITE needs LOCAL_WRITE),
 *   never remote read; RLIMIT_MEMLOCK and max_qp checked with a clear message;
 *   CQE timestamps: HCA ticks extended across counter wrap, converted with two
 *   (raw clock, host ns) pairs from ibv_query_rt_values_ex. */
#ifndef ROCESIM_REPLAY_VERBS_PLAN_H
#define ROCESIM_REPLAY_VERBS_PLAN_H
#include <glib.h>
#include <infiniband/verbs.h>
#include <stdint.h>
#include "models/schedule.h"

struct verbs_qp_plan {
    uint8_t traffic_class, sl, hop_limit;
    uint32_t flow_label;
    enum ibv_mtu path_mtu;
    uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
    unsigned int access_flags;   /* the QP's qp_access_flags (IBV_ACCESS_*) */
    unsigned int landing_mr_flags, source_mr_flags;
};

/* The IB MTU enum of `bytes` (256..4096, powers of two), or 0. */
enum ibv_mtu verbs_mtu_enum(uint32_t bytes);
gboolean verbs_plan_qp(const struct sched_qp *q, uint8_t dscp, uint32_t mtu, enum ibv_mtu active_mtu,
                       gboolean receiver, struct verbs_qp_plan *p, GError **err);
/* memlock_limit: RLIMIT_MEMLOCK soft limit (RLIM_INFINITY allowed); need: bytes to register. */
gboolean verbs_preflight(uint64_t memlock_limit, uint64_t need, int max_qp, int qps, GError **err);

/* A CQE tick counter of `mask` bits-wide extended to 64 bits: feed every reading in order. */
struct tick_clock {
    uint64_t mask, last, high;
    gboolean started;
};
uint64_t tick_extend(struct tick_clock *c, uint64_t raw);
/* Host ns of extended ticks `t`, by the line through (t0, ns0) and (t1, ns1); with one pair
 * (t1 == t0) the nominal rate hca_khz is used. */
int64_t tick_to_host_ns(uint64_t t, uint64_t t0, int64_t ns0, uint64_t t1, int64_t ns1, uint64_t hca_khz);

#endif
