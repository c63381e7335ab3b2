/* Priority flow control (IEEE 802.1Qbb) on every port, the PFC watchdog, and deadlock
 * detection. See shared/reference/models.md sections 3 and 4.
 *
 * Receiver side: a port whose ingress crosses XOFF asks its peer to pause by queueing a PFC
 * frame that goes out ahead of data, and refreshes it at half the pause time while still
 * congested; XON (time 0) when it drains. Transmitter side: a received frame stops the
 * priority after the frame in flight for quanta x 512 bit times, or until XON. */
#include <string.h>
#include "models/net.h"
#include "sim/mpi_comm.h"

static void pfc_expire_fire(void *ctx, uint64_t arg);
static void pfc_refresh_fire(void *ctx, uint64_t arg);
static void wd_fire(void *ctx, uint64_t arg);

void pfc_init_port(struct net *n, struct port_rt *p)
{
    timer_init_on(&p->pfc_expire, net_eng(n), p->node, pfc_expire_fire, p, 0);
    timer_init_on(&p->pfc_refresh, net_eng(n), p->node, pfc_refresh_fire, p, 0);
    timer_init_on(&p->wd_timer, net_eng(n), p->node, wd_fire, p, 0);
}

/* One pause quantum is 512 bit times at the port's speed. */
static simtime_t quanta_ps(const struct port_rt *p, uint32_t quanta)
{
    return serialisation_ps((uint64_t)quanta * 64, p->rate);
}

static const char *node_name(const struct net *n, const struct port_rt *p)
{
    return n->topo->nodes[p->node].name;
}

/* PFC events reach the hook in the order (time, node, then as the node made them), which
 * a parallel run can give too: they are kept per worker and handed over by pfc_rows_flush. */
static void log_event(struct net *n, struct port_rt *p, int prio, const char *event, simtime_t duration)
{
    if (!n->hooks.pfc)
        return;
    struct net_worker *w = net_wk(n);
    if (w->nrows == w->rows_cap) {
        w->rows_cap = w->rows_cap ? w->rows_cap * 2 : 1024; /* amortised */
        w->rows = g_renew(struct pfc_row, w->rows, w->rows_cap);
    }
    simtime_t now = net_now(n);
    w->rows[w->nrows++] = (struct pfc_row){ now, (uint32_t)(p - n->ports), p->node, prio, event, duration / PS_PER_NS };
    if (!net_self && w->nrows >= 1u << 16 && now > 0)
        pfc_rows_flush(n, now - 1); /* a sequential run's rows before now are all there */
}

/* (time, node, then the order the rows were handed over in) */
static int cmp_row(const void *a, const void *b)
{
    const struct pfc_row_ref *x = a, *y = b;
    if (x->r->t != y->r->t)
        return x->r->t < y->r->t ? -1 : 1;
    if (x->r->node != y->r->node)
        return x->r->node < y->r->node ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A sequential run's rows come in time order, at most a few nodes' rows of one time out of
 * node order: an insertion pass puts them right without qsort's calls and allocation (the
 * bench incast hands over 24 K rows in 4 K ticks); rows from several workers, or a window's
 * worth at once, far out of order, stop it after 8 moves a row and go to qsort. */
void pfc_rows_order(struct pfc_row_ref *v, size_t k)
{
    size_t moves = 0, limit = 8 * k;
    for (size_t i = 1; i < k; i++) {
        struct pfc_row_ref x = v[i];
        size_t j = i;
        for (; j > 0 && cmp_row(&v[j - 1], &x) > 0; j--) {
            v[j] = v[j - 1];
            if (++moves > limit) {
                v[j - 1] = x; /* v is a permutation again: sort it all */
                qsort(v, k, sizeof *v, cmp_row);
                return;
            }
        }
        v[j] = x;
    }
}

void pfc_rows_flush(struct net *n, simtime_t upto)
{
    if (!n->hooks.pfc)
        return;
    if (n->mpi)
        net_mpi_pfc_gather(n, upto); /* every rank's rows are rank 0's to write */
    size_t total = 0;
    for (uint32_t w = 0; w < n->nctx; w++)
        total += n->wk[w].nrows;
    if (!total)
        return;
    if (total > n->pfc_order_cap) { /* amortised: kept from tick to tick */
        n->pfc_order_cap = (uint32_t)MAX(total, 2u * n->pfc_order_cap);
        g_free(n->pfc_order);
        n->pfc_order = g_new(struct pfc_row_ref, n->pfc_order_cap);
    }
    struct pfc_row_ref *v = n->pfc_order;
    size_t k = 0;
    for (uint32_t w = 0; w < n->nctx; w++) /* a worker's rows are in time order */
        for (uint32_t i = 0; i < n->wk[w].nrows && n->wk[w].rows[i].t <= upto; i++, k++)
            v[k] = (struct pfc_row_ref){ &n->wk[w].rows[i], k };
    pfc_rows_order(v, k);
    if (n->hooks.pfc_batch)
        n->hooks.pfc_batch(n->hooks.ctx, true);
    for (size_t i = 0; i < k; i++) {
        /* the name and local number from the node, not the port: a storm's rows name ports
         * all over the fabric, each a cache miss (16384 hosts: 210 MB of ports) */
        const struct pfc_row *r = v[i].r;
        const struct topo_node *nd = &n->topo->nodes[r->node];
        n->hooks.pfc(n->hooks.ctx, r->t / PS_PER_NS, r->port, nd->name, r->port - nd->first_port, r->prio, r->event,
                     r->duration_ns);
    }
    if (n->hooks.pfc_batch)
        n->hooks.pfc_batch(n->hooks.ctx, false);
    for (uint32_t w = 0; w < n->nctx; w++) {
        struct net_worker *wk = &n->wk[w];
        uint32_t i = 0;
        while (i < wk->nrows && wk->rows[i].t <= upto)
            i++;
        if (i == 0)
            continue; /* nothing handed over (rows may not even be allocated) */
        memmove(wk->rows, wk->rows + i, (size_t)(wk->nrows - i) * sizeof *wk->rows);
        wk->nrows -= i;
    }
}

/* ---------- receiver side: asking the peer to pause ---------- */

void pfc_request(struct net *n, struct port_rt *p, int prio, bool pause)
{
    uint8_t bit = (uint8_t)(1u << prio);
    if (pause == !!(p->pfc_want & bit))
        return;
    if (pause) {
        p->pfc_want |= bit;
        p->xoff_since[prio] = net_now(n);
    } else {
        p->pfc_want &= (uint8_t)~bit;
        p->tx_pause_dur[prio] += net_now(n) - p->xoff_since[prio];
    }
    p->pfc_pending |= bit;
    port_kick(n, p);
}

/* The PFC frame to send next on this port, if any: it goes out before any data. */
uint32_t pfc_next_frame(struct net *n, struct port_rt *p)
{
    if (!p->pfc_pending || p->down)
        return NONE32;
    uint32_t i = pkt_alloc(n);
    struct packet *pk = &n->pool[i];
    *pk = (struct packet){ 0 };
    pk->kind = PKT_PFC;
    pk->src = p->node;
    pk->dst = NONE32;
    pk->transfer = NONE32;
    pk->frame = PFC_FRAME_BYTES;
    pk->pfc_vector = p->pfc_pending;
    /* XOFF classes carry the pause time, XON classes zero: one frame carries one value per
     * class, so a mixed frame is split into two frames (XOFF first). */
    uint8_t xoff = p->pfc_pending & p->pfc_want;
    if (xoff) {
        pk->pfc_vector = xoff;
        pk->pfc_quanta = (uint16_t)n->sc->pfc_pause_quanta;
        p->pfc_pending &= (uint8_t)~xoff;
        net_st(n)->pause_frames++;
        for (int q = 0; q < NPRIO; q++)
            if (xoff & (1u << q))
                p->tx_pause[q]++;
        /* refresh at half the pause time while still congested */
        timer_set(&p->pfc_refresh, net_now(n) + quanta_ps(p, n->sc->pfc_pause_quanta) / 2);
    } else {
        pk->pfc_quanta = 0;
        p->pfc_pending = 0;
        net_st(n)->xon_frames++;
    }
    pk->sent_at = net_now(n);
    return i;
}

static void pfc_refresh_fire(void *ctx, uint64_t arg)
{
    (void)arg;
    struct port_rt *p = ctx;
    if (!p->pfc_want)
        return;
    p->pfc_pending |= p->pfc_want;
    port_kick(p->net, p);
}

/* ---------- transmitter side: honouring received frames ---------- */

static void unpause(struct net *n, struct port_rt *p, int q)
{
    uint8_t bit = (uint8_t)(1u << q);
    if (!(p->paused & bit))
        return;
    p->paused &= (uint8_t)~bit;
    simtime_t d = net_now(n) - p->paused_since[q];
    p->rx_pause_dur[q] += d;
    net_st(n)->paused_ps += d;
    log_event(n, p, q, "resume", d);
}

static void rearm_expire(struct port_rt *p)
{
    simtime_t next = SIMTIME_NEVER;
    for (int q = 0; q < NPRIO; q++)
        if ((p->paused & (1u << q)) && p->pause_until[q] < next)
            next = p->pause_until[q];
    if (next == SIMTIME_NEVER)
        timer_cancel(&p->pfc_expire);
    else
        timer_set(&p->pfc_expire, next);
}

static void nic_unpark(struct net *n, struct port_rt *p);

static void pfc_expire_fire(void *ctx, uint64_t arg)
{
    (void)arg;
    struct port_rt *p = ctx;
    struct net *n = p->net;
    for (int q = 0; q < NPRIO; q++)
        if ((p->paused & (1u << q)) && p->pause_until[q] <= net_now(n))
            unpause(n, p, q);
    rearm_expire(p);
    nic_unpark(n, p);
    port_kick(n, p);
}

void pfc_receive(struct net *n, struct port_rt *in, uint32_t i)
{
    struct packet *pk = &n->pool[i];
    simtime_t now = net_now(n);
    bool honour = in->is_host ? n->sc->nic_pfc : n->sc->pfc;
    for (int q = 0; q < NPRIO; q++) {
        uint8_t bit = (uint8_t)(1u << q);
        if (!(pk->pfc_vector & bit))
            continue;
        if (pk->pfc_quanta) {
            in->rx_pause[q]++;
            if (!honour || (in->wd_active & bit))
                continue; /* PFC disabled here, or the watchdog ignores this queue */
            if (!(in->paused & bit)) {
                in->paused |= bit;
                in->paused_since[q] = now;
                log_event(n, in, q, "pause", 0);
                if (n->sc->pfc_watchdog && !in->is_host && !timer_armed(&in->wd_timer))
                    timer_set(&in->wd_timer, now + n->sc->pfc_watchdog);
                pfc_watch_deadlock(n);
            }
            in->pause_until[q] = now + quanta_ps(in, pk->pfc_quanta);
        } else {
            unpause(n, in, q);
        }
    }
    pkt_free(n, i);
    rearm_expire(in);
    nic_unpark(n, in);
    port_kick(n, in);
}

/* QPs parked on a priority that is no longer paused go back to the ready list, in the parked
 * list's order, spliced on at once: a QP keeps QP_PARKED until the scheduler pops it, which
 * treats it as ready (only QP_IDLE means "in no list"). Walking the list to relabel each QP
 * cost a cache miss per QP at every resume: 13 % of bench/large.ini, where a host's 1023 QPs
 * park and resume with every PFC pause. */
static void nic_unpark(struct net *n, struct port_rt *p)
{
    if (!p->is_host)
        return;
    struct host_rt *h = &n->hosts[p->node];
    for (int q = 0; q < NPRIO; q++) {
        if ((p->paused & (1u << q)) || h->parked_head[q] == NONE32)
            continue;
        if (h->ready_tail == NONE32)
            h->ready_head = h->parked_head[q];
        else
            n->qps[h->ready_tail].next_ready = h->parked_head[q];
        h->ready_tail = h->parked_tail[q];
        h->ready_n[q] += h->parked_n[q];
        h->parked_head[q] = h->parked_tail[q] = NONE32;
        h->parked_n[q] = 0;
    }
}

/* ---------- watchdog ---------- */

/* Drops everything queued on (port, prio) as a storm-containing watchdog does. */
static void wd_flush(struct net *n, struct port_rt *p, int q)
{
    uint32_t dropped = switch_drop_queue(n, p, q);
    p->wd_drops += dropped;
    net_st(n)->wd_drops += dropped;
}

static void wd_fire(void *ctx, uint64_t arg)
{
    (void)arg;
    struct port_rt *p = ctx;
    struct net *n = p->net;
    simtime_t now = net_now(n), next = SIMTIME_NEVER;
    for (int q = 0; q < NPRIO; q++) {
        uint8_t bit = (uint8_t)(1u << q);
        if (p->wd_active & bit) {
            if (p->wd_until[q] <= now) {
                p->wd_active &= (uint8_t)~bit; /* restored: PFC honoured again */
                log_event(n, p, q, "watchdog-restore", 0);
            } else if (p->wd_until[q] < next) {
                next = p->wd_until[q];
            }
            continue;
        }
        if (!(p->paused & bit))
            continue;
        simtime_t due = p->paused_since[q] + n->sc->pfc_watchdog;
        if (due <= now && p->pp[q].q.pkts) {
            /* storm: paused for the whole detection window with packets waiting */
            p->wd_storms++;
            net_st(n)->wd_storms++;
            log_event(n, p, q, "watchdog-storm", now - p->paused_since[q]);
            unpause(n, p, q);
            p->wd_active |= bit;
            p->wd_until[q] = now + n->sc->pfc_watchdog_restore;
            wd_flush(n, p, q);
            if (p->wd_until[q] < next)
                next = p->wd_until[q];
        } else if (due > now && due < next) {
            next = due;
        } else if (due <= now && now + n->sc->pfc_watchdog < next) {
            next = now + n->sc->pfc_watchdog;
        }
    }
    rearm_expire(p);
    if (next != SIMTIME_NEVER)
        timer_set(&p->wd_timer, next);
    port_kick(n, p);
}

/* ---------- deadlock detection ---------- */

/* A queue (port, prio) waits on the queues of the next switch that hold packets which
 * entered through the port at the far end of its link; a cycle of such waits among queues
 * paused for longer than the threshold is a deadlock. Checked periodically while pauses
 * exist; the graph is built only then, never per packet. */
struct wf_node {
    uint32_t port;
    int prio;
};

static bool queue_waiting(struct net *n, const struct port_rt *p, int q, simtime_t now)
{
    return !p->is_host && (p->paused & (1u << q)) && p->pp[q].q.pkts &&
           now - p->paused_since[q] >= n->sc->deadlock_threshold;
}

/* The wait-for graph's vertices and edges as the check sees them: the queues waiting (paused
 * past the threshold with packets) and, for each, the ingress ports its packets came in by.
 * Built from this process's nodes; an MPI run's ranks put theirs together. */
struct wait_set {
    uint8_t *waiting;          /* per (port, prio) */
    GHashTable *holds;         /* (port * NPRIO + prio) << 32 | in_port, as 64-bit keys */
    bool any_paused;
};

struct wait_rec {
    uint32_t port;
    int32_t prio;
    uint32_t in_port;          /* UINT32_MAX: the queue itself */
};

static void wait_add(struct wait_set *w, const struct wait_rec *r)
{
    size_t v = (size_t)r->port * NPRIO + (size_t)r->prio;
    if (r->in_port == UINT32_MAX) {
        w->waiting[v] = 1;
        return;
    }
    gint64 *k = g_new(gint64, 1);
    *k = (gint64)((uint64_t)v << 32 | r->in_port);
    g_hash_table_add(w->holds, k);
}

static void wait_set_build(struct net *n, struct wait_set *w, simtime_t now)
{
    uint32_t np = n->topo->nports;
    w->waiting = g_new0(uint8_t, (size_t)np * NPRIO);
    w->holds = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    w->any_paused = false;
    GArray *mine = g_array_new(FALSE, FALSE, sizeof(struct wait_rec));
    /* a queue's packets came in by a few ports: each is recorded once (seen[in] == the
     * queue's stamp), not once per packet (the bench incast's 25 MB queue made every check
     * 25 K hash-set insertions, 5 % of the run) */
    uint32_t *seen = NULL, seen_cap = 0, stamp = 0;
    for (uint32_t s = 0; s < np; s++) {
        const struct port_rt *p = &n->ports[s];
        if (!net_mine(n, p->node))
            continue;
        w->any_paused |= p->paused != 0;
        for (int q = 0; q < NPRIO; q++) {
            if (!queue_waiting(n, p, q, now))
                continue;
            struct wait_rec r = { s, q, UINT32_MAX };
            g_array_append_val(mine, r);
            uint32_t ports = n->topo->nodes[p->node].nports;
            if (ports > seen_cap) {
                seen = g_renew(uint32_t, seen, ports);
                memset(seen + seen_cap, 0, (ports - seen_cap) * sizeof *seen);
                seen_cap = ports;
            }
            stamp++;
            for (uint32_t i = p->pp[q].q.head; i != NONE32; i = n->pool[i].next) {
                r.in_port = n->pool[i].in_port;
                if (r.in_port < seen_cap) {
                    if (seen[r.in_port] == stamp)
                        continue;
                    seen[r.in_port] = stamp;
                }
                g_array_append_val(mine, r);
            }
        }
    }
    g_free(seen);
    if (n->mpi) { /* every rank builds the same set */
        uint64_t any = w->any_paused;
        mpi_comm_allreduce_u64(&any, 1, MPI_COMM_MAX);
        w->any_paused = any != 0;
        GByteArray *all = g_byte_array_new();
        mpi_comm_allgatherv(mine->data, (size_t)mine->len * sizeof(struct wait_rec), all, NULL);
        for (size_t k = 0; k + sizeof(struct wait_rec) <= all->len; k += sizeof(struct wait_rec)) {
            struct wait_rec r;
            memcpy(&r, all->data + k, sizeof r);
            wait_add(w, &r);
        }
        g_byte_array_free(all, TRUE);
    } else {
        for (guint k = 0; k < mine->len; k++)
            wait_add(w, &g_array_index(mine, struct wait_rec, k));
    }
    g_array_free(mine, TRUE);
}

static bool holds_from(const struct wait_set *w, uint32_t port, int prio, uint32_t in_local)
{
    gint64 k = (gint64)(((uint64_t)port * NPRIO + (uint64_t)prio) << 32 | in_local);
    return g_hash_table_contains(w->holds, &k);
}

static void deadlock_fire(void *ctx, uint64_t arg);

void pfc_init_deadlock(struct net *n)
{
    timer_init(&n->deadlock_timer, &n->eng, deadlock_fire, n, 0);
}

void pfc_watch_deadlock(struct net *n)
{
    if (timer_armed(&n->deadlock_timer))
        return;
    simtime_t at = net_now(n) + n->sc->deadlock_threshold;
    if (!net_self) {
        timer_set(&n->deadlock_timer, at);
        return;
    }
    /* A worker of a parallel run: the global entity's timer is armed between windows, by the
     * first request in the window (net_parallel.c), with the key it gets here, as if set now. */
    struct net_worker *w = net_wk(n);
    if (!w->dl_req) {
        w->dl_req = true;
        w->dl_at = at;
        w->dl_call = net_now(n);
        w->dl_owner = net_eng(n)->cur;
        w->dl_key = engine_stamp(net_eng(n), engine_global(net_eng(n)), at);
    }
}

static void deadlock_fire(void *ctx, uint64_t arg)
{
    (void)arg;
    struct net *n = ctx;
    simtime_t now = net_now(n);
    uint32_t np = n->topo->nports;
    struct wait_set ws;
    wait_set_build(n, &ws, now);
    /* colour per (port, prio): 0 unvisited, 1 on stack, 2 done */
    uint8_t *colour = g_new0(uint8_t, (size_t)np * NPRIO);
    struct wf_node *stack = g_new(struct wf_node, (size_t)np * NPRIO + 1);
    uint32_t *next_port = g_new0(uint32_t, (size_t)np * NPRIO + 1); /* DFS: next edge to try per depth */
    bool found = false;
    uint32_t depth = 0, cycle_start = 0;
    for (uint32_t s = 0; s < np && !found; s++)
        for (int sq = 0; sq < NPRIO && !found; sq++) {
            if (colour[(size_t)s * NPRIO + sq] || !ws.waiting[(size_t)s * NPRIO + sq])
                continue;
            /* iterative DFS over the wait-for graph */
            depth = 0;
            stack[depth++] = (struct wf_node){ s, sq };
            colour[(size_t)s * NPRIO + sq] = 1;
            next_port[0] = 0;
            while (depth && !found) {
                struct wf_node top = stack[depth - 1];
                const struct port_rt *p = &n->ports[top.port];
                const struct port_rt *peer = &n->ports[p->peer];
                const struct topo_node *nd = &n->topo->nodes[peer->node];
                bool pushed = false;
                if (!peer->is_host) {
                    for (uint32_t k = next_port[depth - 1]; k < nd->nports; k++) {
                        uint32_t gp = nd->first_port + k;
                        size_t ci = (size_t)gp * NPRIO + top.prio;
                        if (!ws.waiting[ci] || !holds_from(&ws, gp, top.prio, peer->local))
                            continue;
                        next_port[depth - 1] = k + 1;
                        if (colour[ci] == 1) {
                            /* back edge: the cycle is the stack from that node up */
                            for (uint32_t d = 0; d < depth; d++)
                                if (stack[d].port == gp && stack[d].prio == top.prio)
                                    cycle_start = d;
                            found = true;
                            break;
                        }
                        if (colour[ci] == 0) {
                            colour[ci] = 1;
                            next_port[depth] = 0;
                            stack[depth++] = (struct wf_node){ gp, top.prio };
                            pushed = true;
                            break;
                        }
                    }
                }
                if (!found && !pushed) {
                    colour[(size_t)top.port * NPRIO + top.prio] = 2;
                    depth--;
                }
            }
        }
    g_free(next_port);
    if (found) {
        GString *g = g_string_new("PFC deadlock: cyclic buffer dependency among paused queues: ");
        for (uint32_t d = cycle_start; d < depth; d++) {
            const struct port_rt *p = &n->ports[stack[d].port];
            g_string_append_printf(g, "%s:%u prio %d -> ", node_name(n, p), p->local, stack[d].prio);
        }
        const struct port_rt *p0 = &n->ports[stack[cycle_start].port];
        g_string_append_printf(g, "%s:%u (each paused for at least %.0f us, detected at %.3f us)", node_name(n, p0),
                               p0->local, (double)n->sc->deadlock_threshold / PS_PER_US, (double)now / PS_PER_US);
        n->deadlocked = true;
        n->deadlock_report = g_string_free(g, FALSE);
        n->last_event_time = now;
        engine_halt(net_eng(n));
    } else if (ws.any_paused && !n->finished) {
        timer_set(&n->deadlock_timer, now + n->sc->deadlock_threshold / 2);
    }
    g_free(ws.waiting);
    g_hash_table_destroy(ws.holds);
    g_free(colour);
    g_free(stack);
}

void pfc_finish(struct net *n)
{
    for (uint32_t i = 0; i < n->topo->nports; i++) {
        struct port_rt *p = &n->ports[i];
        for (int q = 0; q < NPRIO; q++) {
            if (p->paused & (1u << q)) {
                /* a pause that began after the last completion (the run's tail) counts 0 */
                simtime_t end = MAX(n->last_event_time, p->paused_since[q]);
                simtime_t d = end - p->paused_since[q];
                p->rx_pause_dur[q] += d;
                n->st.paused_ps += d;
                p->paused_since[q] = end;
            }
            if (p->pfc_want & (1u << q)) {
                simtime_t end = MAX(n->last_event_time, p->xoff_since[q]);
                p->tx_pause_dur[q] += end - p->xoff_since[q];
                p->xoff_since[q] = end;
            }
        }
    }
}
