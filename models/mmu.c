#include "models/mmu.h"
#include "sim/simtime.h"

uint64_t mmu_set_apart(const struct mmu_config *cfg, uint32_t nports, uint64_t headroom_sum)
{
    uint64_t lossless = cfg->pfc ? (uint64_t)__builtin_popcount(cfg->lossless) : 0;
    return (uint64_t)nports * MMU_NPRIO * cfg->reserve + lossless * headroom_sum;
}

void mmu_init(struct mmu *m, const struct mmu_config *cfg, struct mmu_port *ports, uint32_t nports)
{
    m->cfg = *cfg;
    uint64_t headroom = 0;
    for (uint32_t i = 0; i < nports; i++)
        headroom += ports[i].headroom_size;
    uint64_t reserved = mmu_set_apart(cfg, nports, headroom);
    m->shared_cap = cfg->buffer > reserved ? cfg->buffer - reserved : 0;
    m->shared_used = 0;
    m->used = 0;
}

uint64_t mmu_threshold(const struct mmu *m, const struct mmu_port *p)
{
    if (m->cfg.xoff_static)
        return m->cfg.xoff_static;
    uint64_t free = m->shared_cap > m->shared_used ? m->shared_cap - m->shared_used : 0;
    return (uint64_t)((double)free * p->alpha);
}

static bool lossless(const struct mmu *m, int prio)
{
    return m->cfg.pfc && (m->cfg.lossless & (1u << prio));
}

enum mmu_verdict mmu_admit(struct mmu *m, const struct mmu_port *p, struct mmu_ingress *in, int prio, uint32_t size,
                           uint64_t egress_bytes)
{
    /* what fits in the guaranteed reserve goes there; a frame that crosses its end is split,
     * the rest is charged beyond it (the reserve drains last, so it is full whenever shared
     * or headroom bytes exist) */
    uint64_t res_free = in->reserve < m->cfg.reserve ? m->cfg.reserve - in->reserve : 0;
    uint64_t to_res = size < res_free ? size : res_free;
    uint64_t rest = size - to_res;
    if (lossless(m, prio)) {
        uint64_t thr = mmu_threshold(m, p);
        bool past = rest && (in->shared + rest > thr || m->shared_used + rest > m->shared_cap);
        if (past && in->headroom + rest > p->headroom_size)
            return MMU_DROP_LOSSLESS; /* past XOFF and the headroom is full */
        in->reserve += to_res;
        if (past) {
            in->headroom += rest; /* arrived after XOFF: the PAUSE is on its way */
        } else {
            in->shared += rest;
            m->shared_used += rest;
        }
        m->used += size;
        return MMU_ACCEPT;
    }
    /* lossy: limited per egress queue by a share of the free shared pool */
    if (rest) {
        uint64_t free = m->shared_cap > m->shared_used ? m->shared_cap - m->shared_used : 0;
        if (rest > free || (double)(egress_bytes + size) > m->cfg.egress_alpha * (double)free)
            return MMU_DROP;
    }
    in->reserve += to_res;
    in->shared += rest;
    m->shared_used += rest;
    m->used += size;
    return MMU_ACCEPT;
}

void mmu_release(struct mmu *m, struct mmu_ingress *in, uint32_t size)
{
    uint64_t left = size;
    uint64_t take = left < in->headroom ? left : in->headroom;
    in->headroom -= take;
    left -= take;
    take = left < in->shared ? left : in->shared;
    in->shared -= take;
    m->shared_used -= take;
    left -= take;
    take = left < in->reserve ? left : in->reserve;
    in->reserve -= take;
    m->used -= size;
}

bool mmu_should_pause(const struct mmu *m, const struct mmu_port *p, const struct mmu_ingress *in, int prio)
{
    if (!lossless(m, prio) || (p->xoff_sent & (1u << prio)))
        return false;
    return in->headroom > 0 || in->shared >= mmu_threshold(m, p);
}

bool mmu_may_resume(const struct mmu *m, const struct mmu_port *p, const struct mmu_ingress *in, int prio)
{
    if (!(p->xoff_sent & (1u << prio)))
        return false;
    if (in->headroom > 0)
        return false;
    return in->shared == 0 || in->shared + m->cfg.xon_offset <= mmu_threshold(m, p);
}

/* IEEE 802.3 interface and response delay upper bounds in bit times (models.md 3.3). */
struct delay_row {
    uint64_t max_bps;
    uint64_t d_intf, d_resp;
};
static const struct delay_row delay_rows[] = {
    { 10000000000ull, 8192, 30720 },
    { 25000000000ull, 6144, 40960 },
    { 40000000000ull, 24576, 60416 },
    { 100000000000ull, 122880, 201728 },
    /* 400G: the reference gives only D_resp; D_intf taken as the 100G bound */
    { UINT64_MAX, 122880, 463360 },
};

uint64_t pfc_headroom_bytes(uint64_t rate_bps, uint64_t prop_delay_ps, uint32_t max_frame_wire)
{
    const struct delay_row *r = delay_rows;
    while (rate_bps > r->max_bps)
        r++;
    /* round trip of the cable: the frames still arriving while the PAUSE travels upstream */
    uint64_t prop = (uint64_t)((unsigned __int128)2 * prop_delay_ps * rate_bps / 8 / PS_PER_S);
    const uint64_t pfc_frame_wire = 84;
    return max_frame_wire + pfc_frame_wire + prop + (r->d_intf + r->d_resp) / 8 + max_frame_wire;
}
