/* Building the run-time fabric, the packet pool, links (serialisation + propagation),
 * transfer dependencies, and the periodic sampler of queues, rates and counters (its samples
 * go to the caller's hooks, struct net_sample_hooks). */
#include "models/net.h"
#include <math.h>
#include <string.h>
#include "models/memory.h"
#include "sim/keymap.h"
#include "sim/fastmod.h"
#include "sim/radix.h"
#include "sim/reserve.h"
#include "sim/units.h"

/* The ticks; what changed since the last one is listed per worker (struct net_worker): a
 * tick touches only those ports, QPs and hosts, instead of sweeping them all through the
 * cache. */
struct sampler {
    struct timer counter_tick;
    struct timer tick;
    uint32_t *tmp;             /* sorting a list */
    uint64_t *bits;            /* sorting a list (sort_ids_u32), a bit per id, zero between */
};

__thread struct net_worker *net_self;

/* The DWRR quantum per weight unit: one jumbo frame (9216 B), so every visit can send. */
#define DWRR_QUANTUM_BYTES 9216
/* Knuth's multiplicative hash constant (2^32 / golden ratio): spreads switch numbers over the
 * 32-bit ECMP hash seeds. */
#define HASH_SEED_MULT 0x9e3779b1u

/* ---------- packet pool ---------- */

/* Room for NEED entries: doubles, so never per packet in steady state. */
void pkt_stack_reserve(struct pkt_stack *s, uint32_t need)
{
    if (need <= s->cap)
        return;
    uint32_t cap = s->cap ? s->cap : 4096;
    while (cap < need)
        cap = cap > UINT32_MAX / 2 ? UINT32_MAX : cap * 2;
    s->v = g_renew(uint32_t, s->v, cap);
    s->cap = cap;
}

/* Packets FIRST .. FIRST + COUNT - 1 onto an empty stack, FIRST on top: taken in ascending
 * order, as the pool's new packets always were. */
static void pkt_stack_push_range(struct pkt_stack *s, uint32_t first, uint32_t count)
{
    pkt_stack_reserve(s, count);
    for (uint32_t k = 0; k < count; k++)
        s->v[k] = first + count - 1 - k;
    s->n = count;
}

/* More free packets for worker w: the pool doubles in a sequential run; in a parallel one each
 * worker takes a slice of the reserved extent at a time (the only shared step, atomic). Never
 * per packet in steady state; in place, in the reserved extent, so that a packet pointer held
 * across this call stays valid (a PFC frame, an ACK or a CNP is sent while a received packet
 * is being handled). */
static void pool_grow(struct net *n, struct net_worker *w)
{
    uint32_t want = net_self ? 4096 : n->pool_cap;
    uint32_t old = __atomic_fetch_add(&n->pool_cap, want, __ATOMIC_RELAXED);
    if (old >= n->pool_max || want > n->pool_max - old) {
        if (old < n->pool_max)
            want = n->pool_max - old;
        else
            g_error("the packet pool is full: %u packets in flight or queued at once, the most that fit in "
                    "the memory limit", n->pool_max);
    }
    pkt_stack_push_range(&w->free, old, want);
}

uint32_t pkt_alloc(struct net *n)
{
    struct net_worker *w = net_wk(n);
    if (w->free.n == 0)
        pool_grow(n, w);
    uint32_t i = w->free.v[--w->free.n];
    /* the next allocation's packet, which its maker writes whole */
    if (w->free.n)
        __builtin_prefetch(&n->pool[w->free.v[w->free.n - 1]], 1);
    return i;
}

/* ---------- links ---------- */

static void port_tx_ready(void *ctx, uint64_t arg);

/* A packet arrives at the far end of a link (arg: the receiving port's index in the high 32
 * bits, the packet's in the low). Each packet on the wire has its own event, scheduled when
 * it leaves, while the packet is in the cache: chaining them (one event for the link's first
 * packet, which then schedules the next) read the next packet's arrival time at arrival, a
 * second cache miss per hop that cost 0.88 vs 1.08 M packet-hops/s on bench/large.ini. The
 * event names the receiving port, not the sender, so an arrival does not touch the sending
 * port at all. A link is FIFO: its arrival times only grow, so the events run in order. */
static void on_arrival(void *ctx, uint64_t arg)
{
    struct net *n = ctx;
    uint32_t i = (uint32_t)arg;
    struct port_rt *in = &n->ports[arg >> 32];
    if (in->tap)
        n->tap_fn(n, in->tap, &n->pool[i], n->ports[in->peer].local);
    if (in->is_host)
        nic_receive(n, in, i);
    else
        switch_receive(n, in, i);
}

/* The engine's prefetch hook (engine_set_prefetch). On bench/large.ini the 1M QPs, the
 * packets queued in 64 MB buffers and the ports are far larger than the caches, so nearly
 * every event starts with loads from memory, in chains: a port's timer leads to its host, the
 * host to its next QP; an arrival's packet to its QP or its egress port. Each event's chain
 * is started one link every three events: up[6] gets the lines its event names, up[3] the
 * lines those lead to, up[0] one link further. A link needs the time of a load from memory
 * between its stages. Every two events was best on 2026-12-04 (bench/scale.ini, 1.62-1.65 s
 * against 1.76 s), when an event took three times as long as now. On 2026-12-08 (AMD EPYC
 * VM, a load through 1 GiB 185-270 ns; pairs of interleaved runs of plain builds,
 * bench/large.ini to 150 us) every three events took 0.946 of the time of every two (median
 * of 20 pairs, every two run first) and 0.991 (16 pairs, run second): the order moved the
 * ratio as much as the spacing did, so about 3 %, at the edge of that VM's noise, but
 * faster on the median in both orders; (8, 4, 0), (7, 4, 1), (6, 4, 2) and (5, 3, 0)
 * were 1.01-1.04 of (6, 3, 0). On the Intel Xeon VM of 2026-12-07, where a load took half
 * as long, further stages made no difference (docs/performance-history.md). Reads only, but
 * for the egress port a switch arrival will take, which it keeps in the packet. */

static void prefetch_named(const struct net *n, const struct event *ev)
{
    if (event_handler(ev) == n->h_arrival) {
        __builtin_prefetch(&n->ports[ev->arg >> 32]);
        __builtin_prefetch(&n->pool[(uint32_t)ev->arg]);
    } else if (event_handler(ev) == n->h_tx_ready) {
        net_prefetch_bytes(&n->ports[timer_lite_index(ev->arg)], offsetof(struct port_rt, pp)); /* lines 0, 1 */
    } else if (!nic_prefetch_event(n, ev)) {
        const struct timer *t = engine_event_timer(net_eng((struct net *)n), ev);
        if (t)
            net_prefetch_bytes(t, sizeof *t);
    }
}

/* Inlined into each of net_prefetch's two calls, so that each is compiled for its `deep`: as
 * one function, the registers the light path's switch_prefetch_arrival needs were saved and
 * restored on every call, deep ones too (callgrind, bench/scale.ini: 6.585 G instructions as
 * one function, 6.315 G inlined; bench/large.ini to 150 us: 12.89 -> 12.46 G; fabric.ini
 * unchanged; 2026-12-07). */
static inline __attribute__((always_inline)) void prefetch_led(const struct net *n, const struct event *ev,
                                                               bool deep)
{
    if (event_handler(ev) == n->h_arrival) {
        const struct port_rt *in = &n->ports[ev->arg >> 32];
        struct packet *pk = &n->pool[(uint32_t)ev->arg];
        if (in->is_host)
            nic_prefetch_arrival(n, pk, deep);
        else if (!deep)
            switch_prefetch_arrival(n, in, pk);
        return;
    }
    if (event_handler(ev) == n->h_wake) {
        nic_prefetch_wake(n, timer_lite_index(ev->arg), deep);
        return;
    }
    if (event_handler(ev) != n->h_tx_ready)
        return;
    const struct port_rt *p = &n->ports[timer_lite_index(ev->arg)];
    if (p->is_host) {
        if (deep)
            nic_prefetch_dequeue(n, &n->hosts[p->node]);
        else
            nic_prefetch_host(&n->hosts[p->node]);
    } else if (deep) {
        switch_prefetch_dequeue(n, p);
    } else {
        for (unsigned m = p->qmask; m; m &= m - 1)
            __builtin_prefetch(&n->pool[p->pp[__builtin_ctz(m)].q.head]);
    }
}

static void net_prefetch(void *ctx, const struct event *up, uint32_t count)
{
    const struct net *n = ctx;
    if (count > 6)
        prefetch_named(n, &up[6]);
    if (count > 3)
        prefetch_led(n, &up[3], false);
    prefetch_led(n, &up[0], true);
}

/* The whole hook pays where the state the events walk at random (ports, QPs and responders)
 * outgrows a core's share of the caches; below that its loads cost more than they hide
 * (bench/fabric.ini, whose state is 1 MB, at 20 ms: 2.45 s with the previous two-stage hook,
 * 2.35 s with none, 2.64 s with this one against 2.50 s; 2026-12-04). Transfers are not
 * counted: a packet reads its message's fields from its QP (qp_rt.cur_*), and a collective
 * touches its transfers one step at a time. Counted, the 256-host fabric's 12.5 MB of
 * AllReduce steps took it over the line with 1.6 MB of ports and QPs: 2.48-2.58 s at 6 ms
 * against 2.35-2.40 s with the light hook (interleaved runs, 2026-12-05). */
#define NET_PREFETCH_MIN_BYTES (8u << 20)

/* Below that, only the lines the event after next names, without loading anything: its
 * packet and port, or its timer (on bench/fabric.ini the packets and ports still miss the
 * level-2 cache; 1-3 % faster, interleaved minima, 2026-12-04). */
static void net_prefetch_light(void *ctx, const struct event *up, uint32_t count)
{
    if (count > 1)
        prefetch_named(ctx, &up[1]);
}

void net_install_prefetch_kind(struct net *n, struct engine *e, enum net_prefetch_kind k)
{
    engine_set_prefetch(e, k == NET_PREFETCH_DEEP ? net_prefetch : k == NET_PREFETCH_LIGHT ? net_prefetch_light : NULL,
                        n);
}

void net_install_prefetch(struct net *n, struct engine *e)
{
    uint64_t bytes = (uint64_t)n->topo->nports * sizeof(struct port_rt) +
                     (uint64_t)n->nqps * (sizeof(struct qp_rt) + sizeof(struct qp_resp));
    net_install_prefetch_kind(n, e, bytes >= NET_PREFETCH_MIN_BYTES ? NET_PREFETCH_DEEP : NET_PREFETCH_LIGHT);
}

/* Puts a packet on the wire now: the port is idle. */
void port_send_now(struct net *n, struct port_rt *p, uint32_t i)
{
    struct packet *pk = &n->pool[i];
    uint32_t wire = packet_wire_bytes(pk);
    simtime_t ser = p->ps_per_byte ? wire * p->ps_per_byte : serialisation_ps(wire, p->rate);
    simtime_t now = net_now(n);
    p->busy_until = now + ser;
    p->tx_bytes += pk->frame;
    p->tx_packets++;
    net_st(n)->packet_hops++;
    pk->arrive_at = now + ser + p->delay;
    pk->next = NONE32;
    pk->egress_hint = NONE32; /* the next switch's, if the prefetch hook finds it */
    if (p->tap)
        n->tap_fn(n, p->tap, pk, p->local);
    struct net_worker *w = net_self;
    uint32_t to;
    if (w && (to = n->worker_of[p->peer_node]) != w->index) {
        /* to another worker: a copy travels with the window's events and the receiver takes
         * it into its own pool (net_wire_receive); this one is free now */
        struct net_wire *wr = &w->wire[to];
        if (wr->n == wr->cap) {
            wr->cap = wr->cap ? wr->cap * 2 : 1024; /* amortised */
            wr->pkt = g_renew(struct packet, wr->pkt, wr->cap);
            if (n->intd)
                wr->intd = g_renew(struct int_stack, wr->intd, wr->cap);
        }
        wr->pkt[wr->n] = *pk;
        if (n->intd)
            wr->intd[wr->n] = n->intd[i];
        engine_at_h(net_eng(n), pk->arrive_at, p->peer_node, n->h_arrival, (uint64_t)p->peer << 32 | wr->n);
        wr->n++;
        pkt_free(n, i);
        return;
    }
    engine_at_h(net_eng(n), pk->arrive_at, p->peer_node, n->h_arrival, (uint64_t)p->peer << 32 | i);
}

void net_wire_begin(void *ctx, uint32_t w)
{
    struct net *n = ctx;
    for (uint32_t d = 0; d < n->nctx; d++)
        n->wk[w].wire[d].n = 0;
}

void net_wire_receive(void *ctx, uint32_t from, struct event *ev)
{
    struct net *n = ctx;
    if (event_handler(ev) != n->h_arrival)
        return;
    const struct net_wire *wr = &n->wk[from].wire[net_self->index];
    uint32_t slot = (uint32_t)ev->arg, i = pkt_alloc(n);
    n->pool[i] = wr->pkt[slot];
    if (n->intd)
        n->intd[i] = wr->intd[slot];
    ev->arg = (ev->arg >> 32) << 32 | i;
}

/* Runs port_tx_ready when the port's transmission ends. */
static inline void port_wake(struct net *n, struct port_rt *p)
{
    timer_lite_set_h(&p->txt, net_eng(n), p->busy_until, p->node, n->h_tx_ready, (uint32_t)(p - n->ports));
}

/* Starts the next transmission if the port is idle and has something to send. */
void port_kick(struct net *n, struct port_rt *p)
{
    simtime_t now = net_now(n);
    if (now < p->busy_until) {
        port_wake(n, p);
        return;
    }
    uint32_t i;
    bool more;
    if (p->down)
        return;
    if (p->pfc_pending && (i = pfc_next_frame(n, p)) != NONE32) { /* (the call only when one is due) */
        port_send_now(n, p, i);
        port_wake(n, p); /* whatever waited behind the PFC frame */
        return;
    }
    if (p->is_host) {
        struct host_rt *h = &n->hosts[p->node];
        i = nic_dequeue(n, h);
        if (i == NONE32)
            return;
        port_send_now(n, p, i);
        more = nic_has_work(n, h);
    } else {
        i = switch_dequeue(n, p);
        if (i == NONE32)
            return;
        port_send_now(n, p, i);
        more = (p->qmask & ~p->paused) != 0;
    }
    if (more)
        port_wake(n, p);
}

static void port_tx_ready(void *ctx, uint64_t arg)
{
    struct net *n = ctx;
    struct port_rt *p = &n->ports[timer_lite_index(arg)];
    if (timer_lite_due(&p->txt, arg))
        port_kick(n, p);
}

/* ---------- transfers ---------- */

static void xfer_start(void *ctx, uint64_t id)
{
    struct net *n = ctx;
    struct xfer_rt *x = &n->xfers[id];
    x->start = net_now(n);
    const struct transfer *t = schedule_get(n->sched, (uint32_t)id);
    if (t->bytes == 0) {
        xfer_finished(n, (uint32_t)id);
        return;
    }
    if (x->split != NONE32) { /* split over the connection's QPs */
        for (uint32_t k = 0; k < n->parts_left[id]; k++) {
            n->xfers[x->split + k].start = net_now(n);
            nic_post(n, x->split + k);
        }
        return;
    }
    nic_post(n, (uint32_t)id);
}

/* One of transfer d's dependencies is known to have completed at d's sender. */
static void dependency_met(struct net *n, uint32_t d)
{
    if (--n->xfers[d].deps_left == 0) {
        const struct transfer *t = schedule_get(n->sched, d);
        engine_at_h(net_eng(n), net_now(n) + t->delay, n->hosts[t->src].node, n->h_xfer_start, d);
    }
}

static void dependency_learned(void *ctx, uint64_t d)
{
    dependency_met(ctx, (uint32_t)d);
}

/* The one-way latency from host a to host b: the link delays along the route (its first
 * next hop at each switch), as a small notification (NCCL's flag write, the replay's
 * zero-byte WRITE WITH IMMEDIATE) would take. At least the lookahead between two hosts that
 * a parallel run may give to different workers. */
simtime_t net_notify_delay(const struct net *n, uint32_t a, uint32_t b)
{
    const struct topology *t = n->topo;
    uint32_t port = n->hosts[a].port;
    simtime_t d = 0;
    for (int hop = 0; hop < 64; hop++) {
        d += n->ports[port].delay;
        uint32_t node = n->ports[port].peer_node;
        if (node == n->hosts[b].node || node < t->nhosts)
            return d;
        uint32_t cnt;
        const uint16_t *hops = net_routes(n, node, b, &cnt);
        if (!cnt)
            return d;
        port = t->nodes[node].first_port + hops[0];
    }
    return d;
}

void xfer_finished(struct net *n, uint32_t id)
{
    struct xfer_rt *x = &n->xfers[id];
    if (x->state == XF_DONE)
        return;
    x->end = net_now(n);
    xfer_set_state(x, XF_DONE); /* after its end */
    if (id >= n->nxfers) { /* one part of a split message */
        if (--n->parts_left[x->split] == 0)
            xfer_finished(n, x->split);
        return;
    }
    struct net_worker *w = net_wk(n);
    w->done++;
    w->last_done = net_now(n);
    const struct transfer *t = schedule_get(n->sched, id);
    uint32_t here = t->bytes ? t->dst : t->src; /* the host that saw it complete */
    for (uint32_t k = n->dep_off[id]; k < n->dep_off[id + 1]; k++) {
        uint32_t d = n->dep_list[k];
        uint32_t src = schedule_get(n->sched, d)->src;
        if (src == here)
            dependency_met(n, d);
        else /* the dependent's sender learns of it a path's latency later */
            engine_at_h(net_eng(n), net_now(n) + net_notify_delay(n, here, src), n->hosts[src].node,
                        n->h_dep_learned, d);
    }
    if (!net_self && w->done == n->nxfers)
        net_all_done(n, w->last_done, &n->eng.stop); /* a parallel run checks between windows */
}

void net_all_done(struct net *n, simtime_t last, simtime_t *stop)
{
    /* The run goes on for the lookahead less a picosecond: a parallel run cannot stop at the
     * instant of the last completion (its workers are inside a window then, which ends at
     * most that much later), so a sequential run, which could, does the same. */
    n->finished = true;
    n->last_event_time = last;
    if (last + (n->quantum - 1) < *stop)
        *stop = last + (n->quantum - 1);
}

/* ---------- sampling ---------- */

unsigned qhist_bin(uint64_t bytes)
{
    if (bytes == 0)
        return 0;
    /* 1/8-octave bins: bin = 8*log2(bytes) + 1, capped */
    double b = 8.0 * log2((double)bytes) + 1;
    return b >= QHIST_BINS - 1 ? QHIST_BINS - 1 : (unsigned)b;
}

uint64_t qhist_bin_upper(unsigned bin)
{
    if (bin == 0)
        return 0;
    return (uint64_t)ceil(exp2((double)bin / 8.0));
}

static void hist_account(struct port_rt *p, simtime_t now)
{
    if (p->hist && now > p->q_sampled_at)
        p->hist->weight[qhist_bin(p->q_sampled)] += now - p->q_sampled_at;
    p->q_sampled_at = now;
}

void sampler_queue_changed(struct net *n, struct port_rt *p)
{
    if (p->qbytes > p->max_q)
        p->max_q = p->qbytes;
    if (p->dirty || !n->sampler)
        return;
    p->dirty = true;
    struct net_idlist *l = &net_wk(n)->ls[LS_QUEUE_PORTS];
    l->v[l->n++] = (uint32_t)(p - n->ports);
}

void sampler_rate_changed(struct net *n, uint32_t qp)
{
    struct qp_rt *q = &n->qps[qp];
    if (q->rate_dirty || q->rate_unsampled || !n->sampler)
        return;
    q->rate_dirty = true;
    struct net_idlist *l = &net_wk(n)->ls[LS_RATE_QPS];
    l->v[l->n++] = qp;
}

/* How many ids list k can hold: ports, QPs, ports, hosts. */
static uint32_t list_bound(const struct net *n, enum net_list k)
{
    return k == LS_RATE_QPS ? n->nqps : k == LS_CNT_HOSTS ? n->topo->nhosts : n->topo->nports;
}

/* The entries of every worker's list k, in the first worker's list, in ascending order: a
 * tick writes its rows by port, QP or host number, whichever worker's events changed them. */
static struct net_idlist *gather(struct net *n, enum net_list k)
{
    struct net_idlist *all = &n->wk[0].ls[k];
    for (uint32_t w = 1; w < n->nctx; w++) {
        struct net_idlist *l = &n->wk[w].ls[k];
        memcpy(all->v + all->n, l->v, (size_t)l->n * sizeof *l->v);
        all->n += l->n;
        l->n = 0;
    }
    sort_ids_u32(all->v, n->sampler->tmp, n->sampler->bits, all->n, list_bound(n, k));
    return all;
}

static void sample_tick(void *ctx, uint64_t arg)
{
    (void)arg;
    struct net *n = ctx;
    struct sampler *s = n->sampler;
    simtime_t now = net_now(n);
    uint64_t t_ns = now / PS_PER_NS;
    if (n->hooks.tick)
        n->hooks.tick(n->hooks.ctx, true);
    pfc_rows_flush(n, now); /* every node's rows of this time are there: this entity runs last */
    struct net_idlist *dp = gather(n, LS_QUEUE_PORTS);
    for (uint32_t k = 0; k < dp->n; k++) {
        struct port_rt *p = &n->ports[dp->v[k]];
        p->dirty = false;
        /* a queue neither holding packets nor sampled non-empty is 0 and was 0: not read */
        for (unsigned m = p->qmask | p->q_sampled_mask; m; m &= m - 1) {
            int q = __builtin_ctz(m);
            if (p->pp[q].q.bytes != p->q_sampled_prio[q]) {
                if (n->hooks.queue)
                    n->hooks.queue(n->hooks.ctx, t_ns, dp->v[k], n->topo->nodes[p->node].name, p->local, q,
                                   p->pp[q].q.bytes);
                p->q_sampled_prio[q] = p->pp[q].q.bytes;
            }
        }
        p->q_sampled_mask = p->qmask;
        hist_account(p, now);
        p->q_sampled = p->qbytes;
    }
    dp->n = 0;
    struct net_idlist *dq = gather(n, LS_RATE_QPS);
    for (uint32_t k = 0; k < dq->n; k++) {
        struct qp_rt *q = &n->qps[dq->v[k]];
        struct qp_rare *r = &n->rare[dq->v[k]];
        q->rate_dirty = false;
        if (q->msg_head == NONE32) {
            /* nothing left to send: the flow's line ends (an empty rate), until it has work */
            if (r->rate_logged >= 0) {
                if (n->hooks.rate)
                    n->hooks.rate(n->hooks.ctx, t_ns, dq->v[k], NAN);
                r->rate_logged = NAN;
                q->rate_stale = true;
            }
        } else if (q->cc.rate != r->rate_logged) {
            if (n->hooks.rate)
                n->hooks.rate(n->hooks.ctx, t_ns, dq->v[k], q->cc.rate / 1e9);
            r->rate_logged = q->cc.rate;
            q->rate_stale = false;
        }
    }
    dq->n = 0;
    if (!n->finished)
        timer_set(&s->tick, now + n->sc->queue_sample);
    if (n->hooks.tick)
        n->hooks.tick(n->hooks.ctx, false);
}

/* Congestion counters over time (cumulative, given to the hook when they changed): ECN marks
 * per switch port, and the NIC's notification/reaction point counters. */
static void counter_row(const struct net *n, uint64_t t, uint32_t port, const char *node, uint32_t local,
                        enum net_counter c, uint64_t v)
{
    if (n->hooks.counter)
        n->hooks.counter(n->hooks.ctx, t, port, node, local, c, v);
}

void sampler_counters_changed(struct net *n, struct port_rt *p, uint32_t host)
{
    if (!n->sampler)
        return;
    struct net_worker *w = net_wk(n);
    if (p && !p->cnt_dirty) {
        p->cnt_dirty = true;
        w->ls[LS_CNT_PORTS].v[w->ls[LS_CNT_PORTS].n++] = (uint32_t)(p - n->ports);
    }
    if (host != NONE32 && !n->hosts[host].cnt_dirty) {
        n->hosts[host].cnt_dirty = true;
        w->ls[LS_CNT_HOSTS].v[w->ls[LS_CNT_HOSTS].n++] = host;
    }
}

static void counter_tick(void *ctx, uint64_t arg)
{
    (void)arg;
    struct net *n = ctx;
    struct sampler *s = n->sampler;
    uint64_t t = net_now(n) / PS_PER_NS;
    if (n->hooks.tick)
        n->hooks.tick(n->hooks.ctx, true);
    /* rows in port order, then host order, as a sweep over all of them would write them */
    struct net_idlist *cp = gather(n, LS_CNT_PORTS);
    for (uint32_t k = 0; k < cp->n; k++) {
        struct port_rt *p = &n->ports[cp->v[k]];
        p->cnt_dirty = false;
        if (p->ecn_marked != p->ecn_sampled) {
            counter_row(n, t, cp->v[k], n->topo->nodes[p->node].name, p->local, NET_CNT_ECN_MARKED, p->ecn_marked);
            p->ecn_sampled = p->ecn_marked;
        }
    }
    cp->n = 0;
    struct net_idlist *ch = gather(n, LS_CNT_HOSTS);
    for (uint32_t k = 0; k < ch->n; k++) {
        uint32_t h = ch->v[k];
        struct host_rt *hr = &n->hosts[h];
        const char *name = n->topo->nodes[h].name;
        hr->cnt_dirty = false;
        if (hr->np_ecn_marked_roce_packets != hr->sampled[0])
            counter_row(n, t, hr->port, name, 0, NET_CNT_NP_ECN_MARKED, hr->sampled[0] = hr->np_ecn_marked_roce_packets);
        if (hr->np_cnp_sent != hr->sampled[1])
            counter_row(n, t, hr->port, name, 0, NET_CNT_NP_CNP_SENT, hr->sampled[1] = hr->np_cnp_sent);
        if (hr->rp_cnp_handled != hr->sampled[2])
            counter_row(n, t, hr->port, name, 0, NET_CNT_RP_CNP_HANDLED, hr->sampled[2] = hr->rp_cnp_handled);
    }
    ch->n = 0;
    if (!n->finished)
        timer_set(&s->counter_tick, net_now(n) + n->sc->counter_sample);
    if (n->hooks.tick)
        n->hooks.tick(n->hooks.ctx, false);
}

/* Room for every id in worker w's lists. */
void net_worker_lists(struct net *n, struct net_worker *w)
{
    for (int k = 0; k < LS_COUNT; k++) {
        uint32_t cap = list_bound(n, (enum net_list)k);
        w->ls[k].v = g_new(uint32_t, cap ? cap : 1);
    }
}

void net_workers_resize(struct net *n, uint32_t keep, uint32_t count)
{
    struct net_worker *w = g_aligned_alloc0(count, sizeof *w, 64);
    if (keep)
        memcpy(w, n->wk, keep * sizeof *w);
    g_aligned_free(n->wk);
    n->wk = w;
}

void net_attach_sampler(struct net *n, const struct net_sample_hooks *h)
{
    n->hooks = *h;
    if (n->mpi) /* every rank's rows to rank 0's hooks (models/net_mpi.c) */
        net_mpi_wrap_hooks(n, &n->hooks);
    for (uint32_t i = 0; h->flows && i < n->nqps; i++)
        n->qps[i].rate_unsampled = !h->flows[i];
    if (n->sampler || (!h->queue && !h->rate && !h->counter))
        return;
    struct sampler *s = g_new0(struct sampler, 1);
    timer_init(&s->counter_tick, net_eng(n), counter_tick, n, 0);
    timer_init(&s->tick, net_eng(n), sample_tick, n, 0);
    uint32_t most = 0; /* the longest list */
    for (int k = 0; k < LS_COUNT; k++)
        most = MAX(most, list_bound(n, (enum net_list)k));
    s->tmp = g_new(uint32_t, most ? most : 1);
    s->bits = g_new0(uint64_t, most / 64 + 1);
    n->sampler = s;
    net_worker_lists(n, &n->wk[0]);
}

/* Closes the histograms at the end of the run. */
void net_flush_samples(struct net *n)
{
    if (n->sampler) {
        sample_tick(n, 0);
        counter_tick(n, 0);
    }
    for (uint32_t i = 0; i < n->topo->nports; i++)
        hist_account(&n->ports[i], n->last_event_time);
}

void net_qp_path(const struct net *n, uint32_t qp, void (*fn)(void *ctx, uint32_t port), void *ctx)
{
    /* the responder's copy of the QP's identity: a line of its own, where the requester's is
     * one of three (a walk of every QP read one line in three of the 4096-host AllToAll's
     * 3.2 GB of requesters: a third of net_qp_path's perf samples sat on that load) */
    const struct qp_resp *q = &n->qresp[qp];
    const struct topology *t = n->topo;
    uint32_t port = n->hosts[q->src].port;
    for (int hop = 0; hop < 64; hop++) {
        fn(ctx, port);
        /* the topology's ports (32 bytes each), not the fabric's (1280): select.c's walks took
         * 3.2 s of the 4096-host AllToAll's setup, most of it on these two loads */
        uint32_t node = t->ports[t->ports[port].peer].node;
        if (node < t->nhosts)
            return;
        uint32_t cnt;
        const uint16_t *hops = net_routes(n, node, q->dst, &cnt);
        if (!cnt)
            return;
        uint32_t c = cnt > 1 ? fastmod_u32(ecmp_hash(q->src, q->dst, q->sport, ROCE_UDP_DPORT,
                                                     n->switches[node - t->nhosts].hash_seed), cnt) : 0;
        port = t->nodes[node].first_port + hops[c];
    }
}

void net_qp_bytes(const struct net *n, uint64_t *qp_bytes)
{
    for (uint32_t i = 0; i < n->nxfers; i++) {
        const struct xfer_rt *x = &n->xfers[i];
        if (x->split == NONE32) {
            if (x->qp != NONE32) /* markers (0 bytes) have no QP */
                qp_bytes[x->qp] += xfer_bytes(n, i);
            continue;
        }
        for (uint32_t k = 0; k < n->parts_left[i]; k++)
            qp_bytes[n->xfers[x->split + k].qp] += xfer_bytes(n, x->split + k);
    }
}

/* ---------- construction ---------- */

uint64_t net_port_headroom(const struct scenario *sc, uint64_t rate, simtime_t delay)
{
    if (sc->headroom)
        return sc->headroom;
    /* cable length at 5 ns/m in fibre, or the link's propagation delay as configured */
    simtime_t prop = sc->cable_length_m >= 0 ? (simtime_t)(sc->cable_length_m * 5000.0) : delay;
    uint32_t max_frame = sc->mtu + ROCE_HDR_BYTES + ROCE_RETH_BYTES + ROCE_IMMDT_BYTES + WIRE_EXTRA_BYTES;
    return pfc_headroom_bytes(rate, prop, max_frame);
}

/* A switch's MMU settings, from [switch] (the same for every switch). */
static struct mmu_config mmu_config_of(const struct scenario *sc)
{
    return (struct mmu_config){ .buffer = sc->buffer, .reserve = sc->reserve, .xon_offset = sc->xon_offset,
                                .xoff_static = sc->xoff, .alpha = sc->pfc_alpha, .egress_alpha = sc->egress_alpha,
                                .lossless = sc->lossless_mask, .pfc = sc->pfc };
}

uint64_t net_switch_reserved(const struct scenario *sc, const struct topology *t, uint32_t node)
{
    const struct topo_node *nd = &t->nodes[node];
    uint64_t headroom = 0;
    for (uint32_t k = 0; k < nd->nports; k++) {
        const struct topo_port *p = &t->ports[nd->first_port + k];
        headroom += net_port_headroom(sc, p->rate_bps, p->delay_ps);
    }
    struct mmu_config mc = mmu_config_of(sc);
    return mmu_set_apart(&mc, nd->nports, headroom);
}

char *net_buffer_warning(const struct scenario *sc, const struct topology *t)
{
    uint32_t count = 0, worst = 0;
    uint64_t worst_r = 0;
    for (uint32_t node = t->nhosts; node < t->nnodes; node++) {
        if (net_in_server(&t->nodes[node]))
            continue; /* NVLink and PCIe switches: not the fabric's buffers */
        uint64_t r = net_switch_reserved(sc, t, node);
        if (r < sc->buffer)
            continue;
        if (!count++ || r > worst_r) {
            worst = node;
            worst_r = r;
        }
    }
    if (!count)
        return NULL;
    char need[32], buf[32], res[32];
    units_format_size(worst_r, need, sizeof need);
    units_format_size(sc->buffer, buf, sizeof buf);
    units_format_size(sc->reserve, res, sizeof res);
    char *others = count > 1 ? g_strdup_printf(" (%u switches in all)", count) : g_strdup("");
    char *w = g_strdup_printf("%s: the reserves and PFC headroom of its %u ports need %s, its buffer is %s%s: no "
                              "shared buffer is left, so every lossless queue pauses its peer once past its %s "
                              "reserve, and the switch holds more than its buffer could; raise [switch] buffer above "
                              "%s, or lower [switch] headroom or reserve",
                              t->nodes[worst].name, t->nodes[worst].nports, need, buf, others, res, need);
    g_free(others);
    return w;
}

struct qp_key {
    uint32_t src, dst, tag;
    uint32_t sub;              /* which of the connection's qps_per_connection QPs */
};
G_STATIC_ASSERT(sizeof(struct qp_key) == KEYMAP_KEY_BYTES);

/* A QP found while scanning the transfers: its key and the priority of its first transfer. */
struct qp_found {
    struct qp_key key;
    uint8_t prio;
};

/* The QP of `key`, created (in order of first use) if new. */
static uint32_t qp_for(struct keymap *qpmap, GArray *qpinit, const struct qp_key *key, uint8_t prio)
{
    bool added;
    uint32_t *id = keymap_get_or_add(qpmap, key, &added);
    if (added) {
        *id = qpinit->len;
        struct qp_found f = { *key, prio };
        g_array_append_val(qpinit, f);
    }
    return *id;
}

/* The pool's extent: a power of two of packets, at most what the memory limit holds (and
 * below NONE32); the INT stacks beside it when the algorithm reads INT. */
static gboolean reserve_pool(struct net *n)
{
    uint64_t fit = memory_limit() / sizeof(struct packet);
    n->pool_max = 1u << 16;
    while (n->pool_max < (1u << 31) && 2 * (uint64_t)n->pool_max <= fit)
        n->pool_max *= 2;
    n->pool = reserve_array(sizeof(struct packet), n->pool_max);
    if (n->pool && n->cc->int_unit)
        n->intd = reserve_array(sizeof(struct int_stack), n->pool_max);
    return n->pool && (n->intd || !n->cc->int_unit);
}

static void release_pool(struct net *n)
{
    reserve_release(n->pool, sizeof(struct packet), n->pool_max);
    reserve_release(n->intd, sizeof(struct int_stack), n->pool_max);
    n->pool = NULL;
    n->intd = NULL;
}

/* The packet pool, and the INT link-rate codes when the algorithm reads INT. */
static gboolean build_pool(struct net *n, GError **err)
{
    const struct scenario *sc = n->sc;
    const struct topology *topo = n->topo;
    n->pool_cap = 1 << 16;
    if (!reserve_pool(n)) {
        g_set_error(err, SCENARIO_ERROR, 1, "%s: cannot reserve address space for the packet pool", sc->path);
        return FALSE;
    }
    pkt_stack_push_range(&n->wk[0].free, 0, n->pool_cap);
    if (n->cc->int_unit) { /* the algorithm reads INT: stamp it beside the packet pool */
        n->int_multi = n->cc->int_unit(cc_params(sc, n->cc));
        n->port_rate_code = g_new(int8_t, topo->nports);
        for (uint32_t i = 0; i < topo->nports; i++) {
            n->port_rate_code[i] = (int8_t)int_rate_code(topo->ports[i].rate_bps);
            if (n->port_rate_code[i] < 0) {
                g_set_error(err, SCENARIO_ERROR, 1,
                            "%s: [nic] cc = %s: a link runs at %" G_GUINT64_FORMAT " bit/s, but HPCC's INT header "
                            "encodes only 25, 50, 100, 200 and 400 Gb/s (int-header.h lineRateValues)",
                            sc->path, n->cc->name, topo->ports[i].rate_bps);
                return FALSE;
            }
        }
    }
    return TRUE;
}

static void build_ports(struct net *n)
{
    const struct scenario *sc = n->sc;
    const struct topology *topo = n->topo;
    n->ports = huge_array0(topo->nports, sizeof(struct port_rt));
    for (uint32_t i = 0; i < topo->nports; i++) {
        struct port_rt *p = &n->ports[i];
        const struct topo_port *tp = &topo->ports[i];
        p->net = n;
        p->node = tp->node;
        p->local = tp->index;
        if (topo->nodes[tp->node].first_port + tp->index != i) /* net_first_port relies on it */
            g_error("topology: port %u is not port %u of its node", i, tp->index);
        p->peer = tp->peer;
        p->peer_node = topo->ports[tp->peer].node;
        p->rate = tp->rate_bps;
        p->delay = tp->delay_ps;
        p->is_host = topo->nodes[tp->node].kind == NODE_HOST;
        p->ps_per_byte = (8 * PS_PER_S) % p->rate == 0 ? 8 * PS_PER_S / p->rate : 0;
        for (int q = 0; q < NPRIO; q++)
            p->pp[q].q.head = p->pp[q].q.tail = NONE32;
        timer_lite_init(&p->txt);
        pfc_init_port(n, p);
        if (!p->is_host)
            p->hist = g_new0(struct qhist, 1);
        p->mmu.headroom_size = net_port_headroom(sc, p->rate, p->delay);
        /* faster ports get a larger share, as the reference halves the shift per doubling */
        p->mmu.alpha = sc->pfc_alpha * (double)p->rate / (double)sc->host_rate;
    }
}

static void build_switches(struct net *n)
{
    const struct scenario *sc = n->sc;
    const struct topology *topo = n->topo;
    uint32_t nsw = topo->nnodes - topo->nhosts;
    n->switches = g_aligned_alloc0(nsw ? nsw : 1, sizeof(struct switch_rt), 64);
    for (uint32_t s = 0; s < nsw; s++) {
        struct switch_rt *w = &n->switches[s];
        w->node = topo->nhosts + s;
        rng_init(&w->rng, sc->seed, RNG_STREAM_SWITCH + w->node);
        rng_init(&w->lb_rng, sc->seed, RNG_STREAM_LB + w->node);
        if (sc->lb == LB_FLOWLET) {
            w->flowlets = g_new(struct flowlet, FLOWLET_SLOTS);
            for (uint32_t k = 0; k < FLOWLET_SLOTS; k++)
                w->flowlets[k] = (struct flowlet){ .last = SIMTIME_NEVER };
        }
        w->hash_seed = (uint32_t)(w->node * HASH_SEED_MULT) ^ (uint32_t)sc->seed;
        w->no_ecn = topo->nodes[w->node].layer >= LAYER_GPU && topo->nodes[w->node].layer <= LAYER_NIC;
        struct mmu_config mc = mmu_config_of(sc);
        const struct topo_node *nd = &topo->nodes[w->node];
        /* mmu_init reads the ports' headroom sizes; gather them contiguously */
        struct mmu_port *mp = g_new0(struct mmu_port, nd->nports);
        for (uint32_t k = 0; k < nd->nports; k++)
            mp[k] = n->ports[nd->first_port + k].mmu;
        mmu_init(&w->mmu, &mc, mp, nd->nports);
        g_free(mp);
    }
    n->ctrl_prio_mask = (uint8_t)((1u << sc->cnp_priority) | (1u << sc->ack_priority));
    for (int q = 0; q < NPRIO; q++)
        n->dwrr_quantum[q] = DWRR_QUANTUM_BYTES * sc->dwrr_weight[q];
}

static void build_hosts(struct net *n)
{
    const struct scenario *sc = n->sc;
    const struct topology *topo = n->topo;
    n->hosts = own_lines0(topo->nhosts, sizeof(struct host_rt));
    for (uint32_t h = 0; h < topo->nhosts; h++) {
        struct host_rt *hr = &n->hosts[h];
        hr->node = h;
        hr->port = topo->nodes[h].first_port;
        hr->ctrl.head = hr->ctrl.tail = NONE32;
        hr->rxq.head = hr->rxq.tail = NONE32;
        hr->ready_head = hr->ready_tail = NONE32;
        for (int q = 0; q < NPRIO; q++)
            hr->parked_head[q] = hr->parked_tail[q] = NONE32;
        hr->next_qpn = 0x100;
        hr->cc_idle_since = SIMTIME_NEVER;
        timer_lite_init(&hr->wake);
        /* the NIC pauses its link when its receive buffer has less than one headroom left */
        uint64_t hdrm = n->ports[hr->port].mmu.headroom_size;
        hr->rx_xoff = sc->nic_rx_buffer > hdrm ? sc->nic_rx_buffer - hdrm : sc->nic_rx_buffer / 2;
    }
}

/* How many transfers ahead build_transfers starts loading a QP's map slot: the map of a
 * 4096-host AllToAll's 16.8 M QPs is 640 MB, and each lookup missed the caches and the TLB
 * (1.8-2.1 s of its setup, 2026-12-07); with one connection one QP, a transfer's key is known
 * from the schedule alone. */
#define QP_LOOKUP_AHEAD 16

/* The transfers and the QPs they use (returned, in QP order), split messages' parts after
 * the schedule's transfers; NULL with *err for a transfer the fabric cannot carry. */
static GArray *build_transfers(struct net *n, GError **err)
{
    const struct scenario *sc = n->sc;
    const struct topology *topo = n->topo;
    const struct schedule *sched = n->sched;
    n->nxfers = schedule_count(sched);
    n->xfers = g_new0(struct xfer_rt, n->nxfers ? n->nxfers : 1);
    huge_pages_hint(n->xfers, n->nxfers * sizeof *n->xfers); /* each message reads its transfer */
    n->dep_off = g_new0(uint32_t, n->nxfers + 1);
    /* a QP per transfer at most, when every connection has one QP */
    struct keymap qpmap;
    keymap_init(&qpmap, n->nxfers);
    GArray *qpinit = g_array_new(FALSE, FALSE, sizeof(struct qp_found));
    /* multi-QP connections: messages seen per connection, and the per-QP parts of split
     * messages (kept after the schedule's transfers in n->xfers) */
    struct keymap conn_msgs;
    keymap_init(&conn_msgs, 0);
    GArray *parts = g_array_new(FALSE, FALSE, sizeof(struct xfer_rt));
    GArray *part_bytes = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    uint32_t nxfers_all = n->nxfers;
    for (uint32_t i = 0; i < n->nxfers; i++) {
        const struct transfer *t = schedule_get(sched, i);
        if (sc->qps_per_connection == 1 && i + QP_LOOKUP_AHEAD < n->nxfers) {
            const struct transfer *ahead = schedule_get(sched, i + QP_LOOKUP_AHEAD);
            keymap_prefetch(&qpmap, &(struct qp_key){ ahead->src, ahead->dst, ahead->qp, 0 });
        }
        if (t->src >= topo->nhosts || t->dst >= topo->nhosts) {
            g_set_error(err, SCENARIO_ERROR, 1, "transfer %u: host %u does not exist (the fabric has %u hosts)",
                        i, t->src >= topo->nhosts ? t->src : t->dst, topo->nhosts);
            goto fail;
        }
        struct xfer_rt *x = &n->xfers[i];
        x->deps_left = t->ndeps;
        x->next_on_qp = NONE32;
        x->qp = NONE32;
        x->split = NONE32;
        const uint32_t *deps = schedule_deps(sched, t);
        for (uint32_t k = 0; k < t->ndeps; k++)
            n->dep_off[deps[k] + 1]++;
        if (t->bytes == 0)
            continue;
        if (t->src == t->dst) {
            g_set_error(err, SCENARIO_ERROR, 1, "transfer %u: source and destination are both host %u", i, t->src);
            goto fail;
        }
        x->npkts = (uint32_t)((t->bytes + sc->mtu - 1) / sc->mtu);
        uint32_t nq = sc->qps_per_connection;
        if (nq > 1 && sc->split_data_on_qps) {
            /* NCCL_IB_SPLIT_DATA_ON_QPS=1 (net_ib.cc ncclIbMultiSend): every message is cut into
             * chunks of DIVUP(DIVUP(size, nqps), 128) x 128 bytes, one per QP; the message is done
             * when all are */
            uint64_t chunk = (t->bytes + nq - 1) / nq;
            chunk = (chunk + 127) / 128 * 128;
            if (!n->parts_left)
                n->parts_left = g_new0(uint32_t, n->nxfers);
            x->split = nxfers_all;
            for (uint32_t k = 0; k * chunk < t->bytes; k++) {
                uint64_t b = t->bytes - k * chunk < chunk ? t->bytes - k * chunk : chunk;
                struct qp_key key = { t->src, t->dst, t->qp, k };
                struct xfer_rt part = { .split = i, .next_on_qp = NONE32, .qp = qp_for(&qpmap, qpinit, &key, t->prio),
                                        .npkts = (uint32_t)((b + sc->mtu - 1) / sc->mtu) };
                g_array_append_val(parts, part);
                g_array_append_val(part_bytes, b);
                n->parts_left[i]++;
                nxfers_all++;
            }
            continue;
        }
        /* NCCL_IB_SPLIT_DATA_ON_QPS=0: the connection's messages take its QPs in turn */
        uint32_t sub = 0;
        if (nq > 1) {
            struct qp_key ck = { t->src, t->dst, t->qp, 0 };
            bool added;
            uint32_t *cnt = keymap_get_or_add(&conn_msgs, &ck, &added);
            sub = *cnt % nq;
            ++*cnt;
        }
        struct qp_key key = { t->src, t->dst, t->qp, sub };
        x->qp = qp_for(&qpmap, qpinit, &key, t->prio);
    }
    keymap_clear(&qpmap);
    keymap_clear(&conn_msgs);
    n->nparts = parts->len;
    if (parts->len) {
        n->xfers = g_renew(struct xfer_rt, n->xfers, nxfers_all);
        memcpy(n->xfers + n->nxfers, parts->data, parts->len * sizeof(struct xfer_rt));
    }
    g_array_free(parts, TRUE);
    n->part_bytes = (uint64_t *)(void *)g_array_free(part_bytes, FALSE);
    return qpinit;
fail:
    keymap_clear(&qpmap);
    keymap_clear(&conn_msgs);
    g_array_free(parts, TRUE);
    g_array_free(part_bytes, TRUE);
    g_array_free(qpinit, TRUE);
    return NULL;
}

/* Who depends on each transfer (CSR lists from the schedule's dependency lists). */
static void build_dependents(struct net *n)
{
    const struct schedule *sched = n->sched;
    for (uint32_t i = 0; i < n->nxfers; i++)
        n->dep_off[i + 1] += n->dep_off[i];
    n->dep_list = g_new(uint32_t, n->dep_off[n->nxfers] ? n->dep_off[n->nxfers] : 1);
    uint32_t *fill = g_new0(uint32_t, n->nxfers ? n->nxfers : 1);
    for (uint32_t i = 0; i < n->nxfers; i++) {
        const struct transfer *t = schedule_get(sched, i);
        const uint32_t *deps = schedule_deps(sched, t);
        for (uint32_t k = 0; k < t->ndeps; k++)
            n->dep_list[n->dep_off[deps[k]] + fill[deps[k]]++] = i;
    }
    g_free(fill);
}

static void build_qps(struct net *n, GArray *qpinit)
{
    const struct scenario *sc = n->sc;
    const struct topology *topo = n->topo;
    n->nqps = qpinit->len;
    /* cache-line aligned: each QP's lines belong to it alone */
    n->qps = huge_array0(n->nqps, sizeof(struct qp_rt));
    n->qresp = huge_array0(n->nqps, sizeof(struct qp_resp));
    n->rare = g_new(struct qp_rare, n->nqps ? n->nqps : 1);
    /* every QP of a host shares its settings block and line rate */
    n->cc_env = g_new(struct cc_env, topo->nhosts ? topo->nhosts : 1);
    for (uint32_t h = 0; h < topo->nhosts; h++)
        n->cc_env[h] = cc_env_make(sc, n->cc, (double)n->ports[n->hosts[h].port].rate);
    if (sc->rx_order == RX_OOO_PLACE) {
        n->ooo = g_new0(struct ooo_rx, n->nqps ? n->nqps : 1);
        for (uint32_t q = 0; q < n->nqps; q++)
            n->ooo[q].rx_msg = NONE32;
    }
    /* the pacing heaps, one per host, in one array on huge pages: a packet sent sifts its
     * QP through one, a cache line per level of a 1023-QP heap on bench/large.ini */
    uint32_t *per_host = g_new0(uint32_t, topo->nhosts);
    for (uint32_t q = 0; q < n->nqps; q++)
        per_host[g_array_index(qpinit, struct qp_found, q).key.src]++;
    uint64_t nheap = 0;
    for (uint32_t h = 0; h < topo->nhosts; h++) {
        n->hosts[h].heap_cap = per_host[h] ? per_host[h] : 1;
        nheap += n->hosts[h].heap_cap;
    }
    g_free(per_host);
    n->pace_heaps = huge_array0(nheap, sizeof(struct pace_ent));
    for (uint32_t h = 0, at = 0; h < topo->nhosts; h++) {
        n->hosts[h].heap = n->pace_heaps + at;
        at += n->hosts[h].heap_cap;
    }
    for (uint32_t q = 0; q < n->nqps; q++) {
        /* a QP sends on the priority of its first transfer (a QP has one service level) */
        const struct qp_found *f = &g_array_index(qpinit, struct qp_found, q);
        nic_init_qp(n, q, f->key.src, f->key.dst, f->prio);
        if (n->cc->init_path)
            n->cc->init_path(&n->qps[q].cc, sc, f->key.src, f->key.dst);
    }
    g_array_free(qpinit, TRUE);
    nic_assign_cnp_slots(n);
}

/* Every handler the model schedules, registered once in one order: an MPI run's ranks then
 * agree on their indices (sim/engine_group.h), and a parallel run registers nothing while it
 * runs. The hot ones are kept by index. */
static void net_register_handlers(struct net *n)
{
    struct engine *e = net_eng(n);
    n->h_arrival = engine_handler(e, on_arrival, n);
    n->h_tx_ready = engine_handler(e, port_tx_ready, n);
    n->h_xfer_start = engine_handler(e, xfer_start, n);
    n->h_dep_learned = engine_handler(e, dependency_learned, n);
    nic_register_handlers(n);
    faults_register_handlers(n);
}

struct net *net_build(const struct scenario *sc, const struct topology *topo,
                      const struct schedule *sched, GError **err)
{
    if (topo->nnodes >= ENGINE_MAX_ENTITIES) { /* the nodes and the global entity */
        g_set_error(err, SCENARIO_ERROR, 1, "%s: the fabric has %u nodes; a run takes at most %u", sc->path,
                    topo->nnodes, ENGINE_MAX_ENTITIES - 1);
        return NULL;
    }
    struct net *n = g_aligned_alloc0(1, sizeof(struct net), 64); /* its engine is aligned */
    n->sc = sc;
    n->topo = topo;
    n->sched = sched;
    n->cc = cc_ops_for(sc->cc);
    n->np = cc_dcqcn_params(sc);
    engine_init(net_eng(n));
    /* the engine's entities are the nodes (hosts, switches); sampling, deadlock detection and
     * faults that change routes run on its global entity */
    engine_set_entities(net_eng(n), topo->nnodes);
    net_register_handlers(n);
    net_workers_resize(n, 0, 1);
    n->wk[0].eng = &n->eng;
    n->nworkers = n->nctx = 1;
    n->quantum = net_quantum(topo);
    pfc_init_deadlock(n);
    if (!build_pool(n, err)) {
        net_free(n);
        return NULL;
    }
    build_ports(n);
    build_switches(n);
    build_hosts(n);
    GArray *qpinit = build_transfers(n, err);
    if (!qpinit) {
        net_free(n);
        return NULL;
    }
    build_dependents(n);
    build_qps(n, qpinit);
    net_install_prefetch(n, net_eng(n));
    for (uint32_t i = 0; i < n->nxfers; i++) {
        const struct transfer *t = schedule_get(sched, i);
        if (t->ndeps == 0)
            engine_at_h(net_eng(n), t->delay, n->hosts[t->src].node, n->h_xfer_start, i);
    }
    if (n->nxfers == 0)
        n->finished = true;
    if (!faults_schedule(n, err)) {
        net_free(n);
        return NULL;
    }
    return n;
}

void net_start_sampler(struct net *n)
{
    if (n->sampler) {
        timer_set(&n->sampler->tick, 0);
        timer_set(&n->sampler->counter_tick, n->sc->counter_sample);
    }
}

void net_run(struct net *n)
{
    net_start_sampler(n);
    engine_run(&n->eng, n->sc->stop);
    net_run_end(n, n->eng.now, n->eng.n);
}

void net_run_end(struct net *n, simtime_t last, size_t pending)
{
    if (!n->finished && !n->deadlocked)
        n->last_event_time = last < n->sc->stop && pending == 0 ? last : n->sc->stop;
    /* the workers' counters: every member of net_stats is a 64-bit count */
    G_STATIC_ASSERT(sizeof(struct net_stats) % sizeof(uint64_t) == 0);
    uint64_t *sum = (uint64_t *)&n->st;
    memset(&n->st, 0, sizeof n->st);
    for (uint32_t w = 0; w < n->nctx; w++) {
        const uint64_t *v = (const uint64_t *)&n->wk[w].st;
        for (size_t i = 0; i < sizeof n->st / sizeof *sum; i++)
            sum[i] += v[i];
        n->st.transfers_done += n->wk[w].done;
    }
    pfc_rows_flush(n, SIMTIME_NEVER);
}

/* The lookahead: the shortest delay of a link between two nodes a parallel run may give to
 * different workers (every link but those inside one multi-GPU server), or of any link when
 * there are none. A packet sent over a link arrives at least this much later. */
simtime_t net_quantum(const struct topology *t)
{
    simtime_t cut = SIMTIME_NEVER, any = SIMTIME_NEVER;
    for (uint32_t i = 0; i < t->nports; i++) {
        const struct topo_port *p = &t->ports[i];
        uint32_t a = p->node, b = t->ports[p->peer].node;
        any = MIN(any, p->delay_ps);
        if (!net_same_server(t, a, b))
            cut = MIN(cut, p->delay_ps);
    }
    simtime_t q = cut != SIMTIME_NEVER ? cut : any;
    return q == SIMTIME_NEVER || q == 0 ? 1 : q;
}

bool net_same_server(const struct topology *t, uint32_t a, uint32_t b)
{
    const struct topo_node *x = &t->nodes[a], *y = &t->nodes[b];
    return t->servers && net_in_server(x) && net_in_server(y) && x->server == y->server;
}

void net_free(struct net *n)
{
    if (!n)
        return;
    engine_free(net_eng(n));
    release_pool(n);
    g_free(n->port_rate_code);
    if (n->switches)
        for (uint32_t s = 0; s < n->topo->nnodes - n->topo->nhosts; s++)
            g_free(n->switches[s].flowlets);
    if (n->ports)
        for (uint32_t i = 0; i < n->topo->nports; i++)
            g_free(n->ports[i].hist);
    huge_array_free(n->ports);
    g_aligned_free(n->switches);
    huge_array_free(n->pace_heaps);
    g_aligned_free(n->hosts);
    for (uint32_t q = 0; n->ooo && q < n->nqps; q++)
        g_free(n->ooo[q].bits);
    g_free(n->ooo);
    huge_array_free(n->qps);
    huge_array_free(n->qresp);
    g_free(n->rare);
    g_free(n->cc_env);
    g_free(n->part_bytes);
    g_free(n->parts_left);
    g_free(n->cnp_last);
    topology_routes_free(n->converged);
    g_free(n->xfers);
    g_free(n->dep_off);
    g_free(n->dep_list);
    g_free(n->deadlock_report);
    net_mpi_free(n);
    for (uint32_t w = 0; n->wk && w < n->nctx; w++) {
        for (int k = 0; k < LS_COUNT; k++)
            g_free(n->wk[w].ls[k].v);
        g_free(n->wk[w].rows);
        g_free(n->wk[w].free.v);
        for (uint32_t d = 0; n->wk[w].wire && d < n->nctx; d++) {
            g_free(n->wk[w].wire[d].pkt);
            g_free(n->wk[w].wire[d].intd);
        }
        g_aligned_free(n->wk[w].wire);
    }
    g_aligned_free(n->wk);
    net_partition_free(n->part);
    g_free(n->pfc_order);
    if (n->sampler) {
        g_free(n->sampler->tmp);
        g_free(n->sampler->bits);
        g_free(n->sampler);
    }
    g_aligned_free(n);
}
