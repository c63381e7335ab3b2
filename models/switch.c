/* Output-queued switch with a shared buffer: ECMP, flowlet, per-packet spraying or adaptive
 * forwarding, RED-style ECN marking at
 * enqueue or dequeue, strict priority for control classes above DWRR between data classes,
 * tail drop when the buffer is full. */
#include <string.h>
#include "models/net.h"
#include "sim/fastmod.h"

/* MurmurHash3 x86_32 over the 12-byte key (sip, dip, sport | dport << 16), as the HPCC ns-3
 * switch hashes it; the per-switch seed avoids hash polarisation between tiers. */
static inline uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

uint32_t ecmp_hash(uint32_t sip, uint32_t dip, uint16_t sport, uint16_t dport, uint32_t seed)
{
    const uint32_t c1 = 0xcc9e2d51, c2 = 0x1b873593;
    uint32_t words[3] = { sip, dip, (uint32_t)sport | ((uint32_t)dport << 16) };
    uint32_t h = seed;
    for (int i = 0; i < 3; i++) {
        uint32_t k = words[i] * c1;
        k = rotl32(k, 15) * c2;
        h ^= k;
        h = rotl32(h, 13) * 5 + 0xe6546b64;
    }
    h ^= 12;
    h ^= h >> 16;
    h *= 0x85ebca6b;
    h ^= h >> 13;
    h *= 0xc2b2ae35;
    h ^= h >> 16;
    return h;
}

double ecn_mark_probability(uint64_t q, uint64_t kmin, uint64_t kmax, double pmax)
{
    if (q <= kmin)
        return 0;
    if (q > kmax)
        return 1;
    return pmax * (double)(q - kmin) / (double)(kmax - kmin);
}

static inline void maybe_mark(struct net *n, struct switch_rt *sw, struct port_rt *out,
                              struct packet *pk, uint64_t qbytes)
{
    const struct scenario *sc = n->sc;
    if (pk->kind != PKT_DATA || pk->ecn == ECN_NOT_ECT || pk->ecn == ECN_CE || sw->no_ecn)
        return;
    if (qbytes <= sc->ecn_kmin)
        return;
    double p = ecn_mark_probability(qbytes, sc->ecn_kmin, sc->ecn_kmax, sc->ecn_pmax);
    if (p >= 1 || rng_uniform(&sw->rng) < p) {
        pk->ecn = ECN_CE;
        out->ecn_marked++;
        net_st(n)->ecn_marked++;
        sampler_counters_changed(n, out, NONE32);
    }
}

/* The flow's hash at switch sw: what ECMP and flowlets pick a hop by. */
static inline uint32_t flow_hash(const struct switch_rt *sw, const struct packet *pk)
{
    return ecmp_hash(pk->src, pk->dst, pk->sport, ROCE_UDP_DPORT, sw->hash_seed);
}

/* The next hop among `cnt` equal-cost ones ([switch] load_balance):
 *   ecmp      MurmurHash3 of the flow, as before;
 *   flowlet   the flow keeps its hop while its packets come closer than flowlet_gap; after a
 *             longer gap it takes a random one (LetFlow, Vanini et al., NSDI 2017), from a
 *             table of FLOWLET_SLOTS entries indexed by the flow hash, as switches keep it;
 *   spray     a random hop per packet;
 *   adaptive  per packet, the egress with the fewest queued bytes (all priorities), a random
 *             one among equals (idle uplinks are the common case). */
static uint32_t pick_hop(struct net *n, struct switch_rt *sw, const struct packet *pk, uint32_t first,
                         const uint16_t *hops, uint32_t cnt)
{
    enum lb_kind lb = n->sc->lb;
    if (lb == LB_SPRAY)
        return (uint32_t)rng_below(&sw->lb_rng, cnt);
    uint32_t h = flow_hash(sw, pk);
    if (lb == LB_ECMP)
        return fastmod_u32(h, cnt);
    if (lb == LB_FLOWLET) {
        struct flowlet *f = &sw->flowlets[h % FLOWLET_SLOTS];
        simtime_t now = net_now(n);
        if (f->last == SIMTIME_NEVER || f->key != h || now - f->last > n->sc->flowlet_gap || f->hop >= cnt) {
            f->hop = (uint16_t)rng_below(&sw->lb_rng, cnt);
            f->key = h;
        }
        f->last = now;
        return f->hop;
    }
    uint32_t best = fastmod_u32(h, cnt), best_bytes = UINT32_MAX, ties = 0;
    for (uint32_t c = 0; c < cnt; c++) {
        const struct port_rt *p = &n->ports[first + hops[c]];
        if (p->down)
            continue;
        uint32_t b = p->qbytes;
        if (b < best_bytes) {
            best = c;
            best_bytes = b;
            ties = 1;
        } else if (b == best_bytes && rng_below(&sw->lb_rng, ++ties) == 0) {
            best = c; /* a uniform pick among equally short queues (reservoir sampling) */
        }
    }
    return best;
}

/* Prefetch hint (net_prefetch): the lines switch_receive will read for packet pk arriving on
 * `in`: the switch, the ingress accounting and, where the egress follows from the packet alone
 * (ECMP or a single next hop), the egress port's first two lines and its queue. On a large
 * fabric the ports (16 k on bench/scale.ini) are far larger than the caches. Every arrival
 * reads the port's second line too: port_kick its busy_until, the sampler its max_q. Without
 * its prefetch, half of on_arrival's samples sat on that load (perf, bench/scale.ini); with
 * it, bench/scale.ini ran 8 % faster and bench/large.ini at 300 us 3-4 % on a 2-core Intel
 * Xeon VM (interleaved runs, 2026-12-07), and made no difference on an AMD EPYC VM the same
 * day.
 * The egress is kept in the packet (egress_hint, cleared when a port sends it), and
 * switch_receive takes it instead of looking up the route and hashing the flow again, both
 * only while the routes are pristine (net_routes_pristine: a link that fails or recovers, or
 * routes that converge, between this hook and the arrival would change the port): the
 * same port, so no result changes (bench/scale.ini, callgrind: 6.616 G instructions without
 * it, 6.585 G with it; the light hook of small fabrics keeps nothing). It writes nothing
 * else. */
void switch_prefetch_arrival(const struct net *n, const struct port_rt *in, struct packet *pk)
{
    const struct switch_rt *sw = &n->switches[in->node - n->topo->nhosts];
    __builtin_prefetch(sw);
    if (pk->kind == PKT_PFC)
        return;
    port_prio_prefetch_in(in, pk->prio);
    uint32_t cnt;
    const uint16_t *hops = net_routes(n, in->node, pk->dst, &cnt);
    if (cnt == 0 || (cnt > 1 && n->sc->lb != LB_ECMP))
        return;
    uint32_t choice = cnt == 1 ? 0 : fastmod_u32(flow_hash(sw, pk), cnt);
    uint32_t egress = net_first_port(n, in) + hops[choice];
    if (net_routes_pristine(n)) /* only then is it still the port at the arrival */
        pk->egress_hint = egress;
    const struct port_rt *out = &n->ports[egress];
    net_prefetch_bytes(out, offsetof(struct port_rt, pp)); /* lines 0, 1 */
    __builtin_prefetch(&out->pp[pk->prio & (NPRIO - 1)]);
}

/* The ingress accounting that releasing each head packet charges back (mmu_release). */
void switch_prefetch_dequeue(const struct net *n, const struct port_rt *p)
{
    uint32_t first = net_first_port(n, p);
    for (unsigned m = p->qmask; m; m &= m - 1) {
        int q = __builtin_ctz(m);
        const struct packet *pk = &n->pool[p->pp[q].q.head];
        port_prio_prefetch_in(&n->ports[first + pk->in_port], q);
    }
}

void switch_receive(struct net *n, struct port_rt *in, uint32_t i)
{
    struct packet *pk = &n->pool[i];
    struct switch_rt *sw = &n->switches[in->node - n->topo->nhosts];
    if (pk->kind == PKT_PFC) {
        pfc_receive(n, in, i);
        return;
    }
    uint8_t prio = pk->prio;
    struct port_rt *out;
    if (pk->egress_hint != NONE32 && net_routes_pristine(n)) {
        out = &n->ports[pk->egress_hint]; /* the prefetch hook's (switch_prefetch_arrival) */
    } else {
        uint32_t cnt;
        const uint16_t *hops = net_routes(n, in->node, pk->dst, &cnt);
        uint32_t first = net_first_port(n, in);
        uint32_t choice = 0;
        if (cnt > 1)
            choice = pick_hop(n, sw, pk, first, hops, cnt);
        /* a link that is down is skipped: the next member of the ECMP group takes its flows
         * (looked at only while a link is down: a port is a cache miss on a large fabric) */
        for (uint32_t k = 0; n->links_down && k < cnt && n->ports[first + hops[choice]].down; k++)
            choice = (choice + 1) % cnt;
        if (cnt == 0 || (n->links_down && n->ports[first + hops[choice]].down)) {
            net_st(n)->drops++;
            net_st(n)->drops_prio[prio]++;
            in->drops[prio]++;
            pkt_free(n, i);
            return;
        }
        out = &n->ports[first + hops[choice]];
    }
    if (out->wd_active & (1u << prio)) {
        /* the watchdog drops what arrives for a queue it has taken out of PFC */
        out->wd_drops++;
        out->drops[prio]++;
        net_st(n)->wd_drops++;
        net_st(n)->drops++;
        net_st(n)->drops_prio[prio]++;
        pkt_free(n, i);
        return;
    }
    enum mmu_verdict v = mmu_admit(&sw->mmu, &in->mmu, &in->pp[prio].in, prio, pk->frame, out->pp[prio].q.bytes);
    if (v != MMU_ACCEPT) {
        out->drops[prio]++;
        sw->drops++;
        net_st(n)->drops++;
        net_st(n)->drops_prio[prio]++;
        if (v == MMU_DROP_LOSSLESS)
            net_st(n)->drops_lossless++;
        pkt_free(n, i);
        return;
    }
    if (mmu_should_pause(&sw->mmu, &in->mmu, &in->pp[prio].in, prio)) {
        in->mmu.xoff_sent |= (uint8_t)(1u << prio);
        pfc_request(n, in, prio, true);
    }
    pk->in_port = (uint16_t)in->local;
    if (n->sc->ecn && n->sc->ecn_mark == MARK_ENQUEUE)
        maybe_mark(n, sw, out, pk, out->pp[prio].q.bytes);
    port_q_push(n, out, prio, i);
    sampler_queue_changed(n, out);
    port_kick(n, out);
}

/* Strict priority for control classes (highest first), then DWRR over data classes. */
static int pick_queue(struct net *n, struct port_rt *p)
{
    uint8_t ready = p->qmask & (uint8_t)~p->paused;
    if (!ready)
        return -1;
    uint8_t ctrl = ready & n->ctrl_prio_mask;
    if (ctrl)
        return 31 - __builtin_clz(ctrl);
    uint8_t data = ready & (uint8_t)~n->ctrl_prio_mask;
    if (!(data & (data - 1))) {
        /* one data queue backlogged: it has the link; keep it at the start of a fresh turn so
         * DWRR resumes fairly when another queue fills */
        int q = 31 - __builtin_clz(data);
        p->rr = (uint8_t)q;
        p->pp[q].deficit = n->dwrr_quantum[q];
        p->rr_granted = true;
        return q;
    }
    /* DWRR (Shreedhar-Varghese): the queue whose turn it is gets its quantum once per visit
     * and sends while its head fits the deficit; then the turn moves on. An empty queue
     * forfeits its deficit. */
    for (int step = 0; step < 2 * NPRIO + 2; step++) {
        int q = p->rr;
        if (ready & (1u << q)) {
            if (!p->rr_granted) {
                p->pp[q].deficit += n->dwrr_quantum[q];
                p->rr_granted = true;
            }
            if ((uint64_t)p->pp[q].deficit >= n->pool[p->pp[q].q.head].frame)
                return q;
        } else {
            p->pp[q].deficit = 0;
        }
        p->rr = (uint8_t)((p->rr + 1) % NPRIO);
        p->rr_granted = false;
    }
    return 31 - __builtin_clz(ready); /* unreachable with quantum >= max frame */
}

uint32_t switch_dequeue(struct net *n, struct port_rt *p)
{
    int q = pick_queue(n, p);
    if (q < 0)
        return NONE32;
    uint32_t i = port_q_pop(n, p, q);
    /* the queue's next head leaves at this port's next turn, a serialisation from now: in a
     * deep queue it was written long ago and is out of the caches (the incast bench waited
     * on it in 88 % of switch_dequeue's samples) */
    if (p->pp[q].q.head != NONE32)
        __builtin_prefetch(&n->pool[p->pp[q].q.head]);
    struct packet *pk = &n->pool[i];
    if (!(n->ctrl_prio_mask & (1u << q))) {
        p->pp[q].deficit -= pk->frame;
        if (p->pp[q].q.pkts == 0)
            p->pp[q].deficit = 0;
    }
    struct switch_rt *sw = &n->switches[p->node - n->topo->nhosts];
    struct port_rt *in = &n->ports[net_first_port(n, p) + pk->in_port];
    mmu_release(&sw->mmu, &in->pp[q].in, pk->frame);
    if (mmu_may_resume(&sw->mmu, &in->mmu, &in->pp[q].in, q)) {
        in->mmu.xoff_sent &= (uint8_t)~(1u << q);
        pfc_request(n, in, q, false);
    }
    if (n->sc->ecn && n->sc->ecn_mark == MARK_DEQUEUE)
        maybe_mark(n, sw, p, pk, p->pp[q].q.bytes);
    if (n->intd && pk->kind == PKT_DATA) {
        /* HPCC ns-3 SwitchNode::SwitchNotifyDequeue: the egress stamps its clock (ns), the bytes
         * it sent before this packet and the bytes still queued on the port (all queues) */
        int_push_hop(&n->intd[i], net_now(n) / PS_PER_NS, p->tx_bytes, p->qbytes,
                     n->port_rate_code[p - n->ports], n->int_multi);
    }
    sampler_queue_changed(n, p);
    return i;
}

/* Drops everything waiting in egress queue (p, q): the MMU gives the bytes back to their
 * ingress ports, which may resume their upstream. Returns the number of packets dropped.
 * Used when a link goes down and by the PFC watchdog. */
uint32_t switch_drop_queue(struct net *n, struct port_rt *p, int q)
{
    struct switch_rt *sw = &n->switches[p->node - n->topo->nhosts];
    uint32_t dropped = 0;
    while (p->pp[q].q.pkts) {
        uint32_t i = port_q_pop(n, p, q);
        struct packet *pk = &n->pool[i];
        struct port_rt *in = &n->ports[net_first_port(n, p) + pk->in_port];
        mmu_release(&sw->mmu, &in->pp[q].in, pk->frame);
        if (mmu_may_resume(&sw->mmu, &in->mmu, &in->pp[q].in, q)) {
            in->mmu.xoff_sent &= (uint8_t)~(1u << q);
            pfc_request(n, in, q, false);
        }
        pkt_free(n, i);
        dropped++;
    }
    p->drops[q] += dropped;
    net_st(n)->drops += dropped;
    net_st(n)->drops_prio[q] += dropped;
    sampler_queue_changed(n, p);
    return dropped;
}
