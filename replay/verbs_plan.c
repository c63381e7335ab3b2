/* QP attributes, preflight checks and the CQE clock of the verbs transport (see verbs_plan.h). */
#include "replay/verbs_plan.h"
#include <sys/resource.h>
#include "replay/replay.h"

enum ibv_mtu verbs_mtu_enum(uint32_t bytes)
{
    switch (bytes) {
    case 256: return IBV_MTU_256;
    case 512: return IBV_MTU_512;
    case 1024: return IBV_MTU_1024;
    case 2048: return IBV_MTU_2048;
    case 4096: return IBV_MTU_4096;
    default: return 0;
    }
}

gboolean verbs_plan_qp(const struct sched_qp *q, uint8_t dscp, uint32_t mtu, enum ibv_mtu active_mtu,
                       gboolean receiver, struct verbs_qp_plan *p, GError **err)
{
    enum ibv_mtu m = verbs_mtu_enum(mtu);
    if (!m) {
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_INPUT,
                    "path MTU %u is not an InfiniBand MTU (256, 512, 1024, 2048 or 4096)", mtu);
        return FALSE;
    }
    if (m > active_mtu) {
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_INPUT,
                    "path MTU %u is above the port's active MTU %u (raise the netdev MTU: "
                    "active MTU = netdev MTU - 96, rounded down)", mtu, 128u << active_mtu);
        return FALSE;
    }
    *p = (struct verbs_qp_plan){
        .traffic_class = (uint8_t)(dscp << 2), .sl = q->prio, .hop_limit = 64,
        .flow_label = roce_flow_label_for_sport(q->sport), .path_mtu = m,
        .timeout = 14, .retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 12,
        /* only the side that receives WRITEs opens its memory, and never for reads */
        .access_flags = receiver ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE : 0,
        .landing_mr_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
        .source_mr_flags = 0, /* local read is always allowed */
    };
    return TRUE;
}

gboolean verbs_preflight(uint64_t memlock_limit, uint64_t need, int max_qp, int qps, GError **err)
{
    if (memlock_limit != (uint64_t)RLIM_INFINITY && need > memlock_limit) {
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_RUN,
                    "the buffers need %" G_GUINT64_FORMAT " bytes of locked memory, RLIMIT_MEMLOCK "
                    "allows %" G_GUINT64_FORMAT " (ulimit -l unlimited, or memlock in "
                    "/etc/security/limits.conf)", need, memlock_limit);
        return FALSE;
    }
    if (qps > max_qp) {
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_RUN,
                    "this host needs %d QPs, the device allows %d (max_qp)", qps, max_qp);
        return FALSE;
    }
    return TRUE;
}

uint64_t tick_extend(struct tick_clock *c, uint64_t raw)
{
    raw &= c->mask;
    if (c->started && raw < c->last)
        c->high += c->mask + 1; /* the counter wrapped since the last reading */
    c->started = TRUE;
    c->last = raw;
    return c->high + raw;
}

int64_t tick_to_host_ns(uint64_t t, uint64_t t0, int64_t ns0, uint64_t t1, int64_t ns1, uint64_t hca_khz)
{
    double dt = (double)t - (double)t0;
    double ns_per_tick = t1 != t0 ? (double)(ns1 - ns0) / ((double)t1 - (double)t0)
                                  : 1e6 / (double)hca_khz;
    return ns0 + (int64_t)(dt * ns_per_tick);
}
