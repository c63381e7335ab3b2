/* The ideal completion time (see ideal.h). */
#include "models/ideal.h"
#include "models/packet.h"

#include <string.h>

#define IDEAL_MAX_LINKS 16

/* Walks the first ECMP choice from src to dst, returning the link count and filling the
 * rates and delays of each link (at most IDEAL_MAX_LINKS). */
static uint32_t path_links(const struct topology *t, uint32_t src, uint32_t dst, uint64_t *rate, simtime_t *delay)
{
    uint32_t port = t->nodes[src].first_port, nl = 0;
    for (;;) {
        const struct topo_port *p = &t->ports[port];
        rate[nl] = p->rate_bps;
        delay[nl] = p->delay_ps;
        nl++;
        uint32_t node = t->ports[p->peer].node;
        if (node == dst || nl >= IDEAL_MAX_LINKS || t->nodes[node].kind == NODE_HOST)
            return nl;
        uint32_t cnt;
        const uint16_t *hops = topology_routes(t, node, dst, &cnt);
        if (!cnt)
            return nl;
        port = t->nodes[node].first_port + hops[0];
    }
}

simtime_t ideal_path_ps(uint32_t mtu, const uint64_t *rate, const simtime_t *delay, uint32_t nl, uint64_t bytes)
{
    uint64_t npkts = (bytes + mtu - 1) / mtu;
    /* RETH on the first packet, ImmDt on the last (nic.c's framing) */
    uint64_t wire = bytes + npkts * (ROCE_HDR_BYTES + WIRE_EXTRA_BYTES) + ROCE_RETH_BYTES + ROCE_IMMDT_BYTES;
    uint64_t last_payload = bytes - (npkts - 1) * mtu;
    uint64_t last_wire = last_payload + ROCE_HDR_BYTES + WIRE_EXTRA_BYTES + ROCE_IMMDT_BYTES +
                         (npkts == 1 ? ROCE_RETH_BYTES : 0);
    uint64_t bottleneck = rate[0];
    for (uint32_t i = 1; i < nl; i++)
        if (rate[i] < bottleneck)
            bottleneck = rate[i];
    /* the whole message at the bottleneck rate, then store-and-forward of the last packet
     * over the remaining hops, plus propagation on every link */
    simtime_t ideal = serialisation_ps(wire, bottleneck) + delay[0];
    for (uint32_t i = 1; i < nl; i++)
        ideal += serialisation_ps(last_wire, rate[i]) + delay[i];
    return ideal;
}

simtime_t ideal_transfer_ps(const struct scenario *sc, const struct topology *t, uint32_t src, uint32_t dst,
                            uint64_t bytes)
{
    uint64_t rate[IDEAL_MAX_LINKS];
    simtime_t delay[IDEAL_MAX_LINKS];
    uint32_t nl = path_links(t, src, dst, rate, delay);
    return ideal_path_ps(sc->mtu, rate, delay, nl, bytes);
}

/* The path from src is its link, then the first choices from switch a toward switch b (which
 * depend only on a and b without per-host routes, topology_routes), then b's link to dst:
 * the same key, the same links. */
simtime_t ideal_transfer_memo_ps(struct ideal_memo *m, const struct scenario *sc, const struct topology *t,
                                 uint32_t src, uint32_t dst, uint64_t bytes)
{
    if (t->host_off)
        return ideal_transfer_ps(sc, t, src, dst, bytes);
    const struct topo_port *first = &t->ports[t->nodes[src].first_port];
    uint32_t a = t->ports[first->peer].node, b = t->attach[dst];
    const struct topo_port *last = &t->ports[t->nodes[b].first_port + t->attach_port[dst]];
    const struct ideal_key k = { .t = t, .bytes = bytes, .src_rate = first->rate_bps, .dst_rate = last->rate_bps,
                                 .src_delay = first->delay_ps, .dst_delay = last->delay_ps, .mtu = sc->mtu,
                                 .a = a, .b = b, .zero = 0 };
    _Static_assert(sizeof k == 8 + 5 * 8 + 4 * 4, "struct ideal_key has no padding");
    if (memcmp(&m->key, &k, sizeof k)) {
        m->key = k;
        m->ps = ideal_transfer_ps(sc, t, src, dst, bytes);
    }
    return m->ps;
}
