/* RoCEv2 NIC: RC transport (requester and responder of every QP), per-QP pacing at the
 * congestion-control rate, round robin between ready QPs, coalesced ACKs, NAK on PSN
 * sequence errors, go-back-N, retransmission timeout, and the DCQCN notification point. */
#include <math.h>
#include "models/net.h"
#include "sim/reserve.h"

/* UDP source port from the QP numbers, as rdma-core/the kernel derive RoCEv2 entropy:
 * fl = fold20(lqpn * rqpn), sport = 0xC000 | (fl[13:0] ^ fl[19:14]). */
uint16_t roce_udp_sport(uint32_t lqpn, uint32_t rqpn)
{
    uint64_t v = (uint64_t)lqpn * rqpn;
    v ^= v >> 20;
    v ^= v >> 40;
    uint32_t fl = (uint32_t)(v & 0xFFFFF);
    return (uint16_t)(0xC000 | ((fl & 0x3FFF) ^ ((fl & 0xFC000) >> 14)));
}

static void rto_fire(void *ctx, uint64_t arg);
static void wake_fire(void *ctx, uint64_t arg);


void nic_init_qp(struct net *n, uint32_t id, uint32_t src, uint32_t dst, uint8_t prio)
{
    struct qp_rt *q = &n->qps[id];
    q->src = src;
    q->dst = dst;
    q->prio = prio;
    uint32_t lqpn = n->hosts[src].next_qpn++, rqpn = n->hosts[dst].next_qpn++;
    q->sport = roce_udp_sport(lqpn, rqpn);
    n->qresp[id] = (struct qp_resp){ .src = src, .dst = dst, .lqpn = lqpn, .rqpn = rqpn, .sport = q->sport };
    q->msg_head = q->cur_msg = NONE32;
    n->rare[id] = (struct qp_rare){ .rate_logged = -1, .msg_tail = NONE32 };
    q->rate_stale = true;
    q->next_ready = NONE32;
    timer_lite_init(&q->rto);
    n->cc->init(&q->cc, n->sc, &n->cc_env[src], 0);
}

/* CNP moderation slots (models.md 1.2): QPs that share a slot share one min_time_between_cnps.
 * Per QP is DCQCN's per-flow NP; per port is [mstflint]'s "minimum time between CNPs from the
 * port"; per destination is one slot per (receiving host, data sender). Assigned once, so the
 * receive path only indexes an array. */
void nic_assign_cnp_slots(struct net *n)
{
    enum cnp_scope scope = n->np->cnp_scope;
    GHashTable *pairs = g_hash_table_new(g_int64_hash, g_int64_equal);
    gint64 *keys = g_new(gint64, n->nqps ? n->nqps : 1);
    uint32_t nslots = scope == CNP_PER_PORT ? n->topo->nhosts : 0;
    for (uint32_t i = 0; i < n->nqps; i++) {
        struct qp_resp *q = &n->qresp[i];
        if (scope == CNP_PER_QP) {
            q->cnp_slot = nslots++;
        } else if (scope == CNP_PER_PORT) {
            q->cnp_slot = q->dst;
        } else {
            keys[i] = ((gint64)q->dst << 32) | q->src;
            gpointer v;
            if (g_hash_table_lookup_extended(pairs, &keys[i], NULL, &v)) {
                q->cnp_slot = GPOINTER_TO_UINT(v);
            } else {
                q->cnp_slot = nslots++;
                g_hash_table_insert(pairs, &keys[i], GUINT_TO_POINTER(q->cnp_slot));
            }
        }
    }
    g_hash_table_unref(pairs);
    g_free(keys);
    n->cnp_last = g_new(simtime_t, nslots ? nslots : 1);
    huge_pages_hint(n->cnp_last, (size_t)nslots * sizeof *n->cnp_last); /* read per ECN mark */
    for (uint32_t i = 0; i < nslots; i++)
        n->cnp_last[i] = SIMTIME_NEVER;
}

/* ---------- ready FIFO, parked lists and pacing heap ---------- */

static void ready_push(struct net *n, struct host_rt *h, uint32_t id)
{
    struct qp_rt *q = &n->qps[id];
    q->state = QP_READY;
    q->next_ready = NONE32;
    h->ready_n[q->prio]++;
    if (h->ready_tail == NONE32)
        h->ready_head = id;
    else
        n->qps[h->ready_tail].next_ready = id;
    h->ready_tail = id;
}

static uint32_t ready_pop(struct net *n, struct host_rt *h)
{
    uint32_t id = h->ready_head;
    h->ready_head = n->qps[id].next_ready;
    if (h->ready_head == NONE32)
        h->ready_tail = NONE32;
    else /* the NIC's next QP: it loads while other hosts' events run */
        net_prefetch_qp(n, h->ready_head);
    n->qps[id].state = QP_IDLE;
    h->ready_n[n->qps[id].prio]--;
    return id;
}

/* The pacing heap holds each QP's key beside its id: a comparison reads the heap, not the
 * QP (on bench/large.ini a NIC has 1023 paced QPs, each heap level a cache miss otherwise).
 * A QP's wake time does not change while it is in the heap. Ties go to the lower QP id. */
static inline bool heap_less(const struct pace_ent *a, const struct pace_ent *b)
{
    return a->at < b->at || (a->at == b->at && a->qp < b->qp);
}

static void heap_push(struct net *n, struct host_rt *h, uint32_t id, simtime_t wake_at)
{
    struct pace_ent e = { wake_at, id };
    /* the heaps lie side by side in one array (net.c build_qps): no overflow into the next */
    g_assert(h->heap_n < h->heap_cap);
    uint32_t i = h->heap_n++;
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (!heap_less(&e, &h->heap[parent]))
            break;
        h->heap[i] = h->heap[parent];
        i = parent;
    }
    h->heap[i] = e;
    n->qps[id].state = QP_PACED;
}

static uint32_t heap_pop(struct net *n, struct host_rt *h)
{
    uint32_t top = h->heap[0].qp;
    struct pace_ent last = h->heap[--h->heap_n];
    uint32_t i = 0, cnt = h->heap_n;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= cnt)
            break;
        if (c + 1 < cnt && heap_less(&h->heap[c + 1], &h->heap[c]))
            c++;
        if (!heap_less(&h->heap[c], &last))
            break;
        h->heap[i] = h->heap[c];
        i = c;
    }
    if (cnt)
        h->heap[i] = last;
    n->qps[top].state = QP_IDLE;
    return top;
}

static inline bool qp_has_data(const struct qp_rt *q) { return q->snd_nxt != q->psn_end; }

/* A window-limited CC (HPCC) stops the QP while its bytes in flight reach the window, as HPCC
 * ns-3 RdmaQueuePair::IsWinBound does; in flight counts whole MTUs per packet. */
static inline bool qp_window_full(const struct net *n, const struct qp_rt *q)
{
    return q->cc.win && q->snd_nxt > q->snd_una && (uint64_t)(q->snd_nxt - q->snd_una) * n->sc->mtu >= q->cc.win;
}

/* Makes a QP with data eligible for scheduling (if it is not already somewhere). */
static void qp_activate(struct net *n, uint32_t id)
{
    struct qp_rt *q = &n->qps[id];
    if (q->state != QP_IDLE || !qp_has_data(q))
        return;
    ready_push(n, &n->hosts[q->src], id);
}

bool nic_has_work(const struct net *n, const struct host_rt *h)
{
    (void)n;
    return h->ctrl.pkts || h->ready_head != NONE32 || h->heap_n;
}

/* ---------- requester ---------- */

/* Makes m (a posted transfer of the QP, or NONE32) the one the QP sends from next. */
static void qp_set_cur(struct net *n, struct qp_rt *q, uint32_t m)
{
    q->cur_msg = m;
    if (m == NONE32)
        return;
    q->cur_psn_first = n->xfers[m].psn_first;
    q->cur_npkts = n->xfers[m].npkts;
    /* every packet but the last carries an MTU (npkts = bytes / MTU rounded up; a message
     * posted has a byte or more: zero-byte transfers complete without one, xfer_start) */
    q->cur_last_payload = (uint32_t)(xfer_bytes(n, m) - (uint64_t)(q->cur_npkts - 1) * n->sc->mtu);
}

void nic_post(struct net *n, uint32_t xid)
{
    struct xfer_rt *x = &n->xfers[xid];
    struct qp_rt *q = &n->qps[x->qp];
    xfer_set_state(x, XF_POSTED);
    x->psn_first = q->psn_end;
    q->psn_end += x->npkts;
    x->next_on_qp = NONE32;
    struct qp_rare *r = &n->rare[x->qp];
    if (r->msg_tail == NONE32)
        q->msg_head = xid;
    else
        n->xfers[r->msg_tail].next_on_qp = xid;
    r->msg_tail = xid;
    if (q->cur_msg == NONE32)
        qp_set_cur(n, q, xid);
    if (n->ooo && n->ooo[x->qp].rx_msg == NONE32) /* every earlier transfer is complete at the responder */
        n->ooo[x->qp].rx_msg = xid;
    if (q->snd_una == q->snd_nxt)
        q->last_progress = net_now(n); /* nothing was outstanding: the timeout starts now */
    qp_activate(n, x->qp);
    port_kick(n, &n->ports[n->hosts[q->src].port]);
}

/* Builds the data packet for PSN snd_nxt of QP id. */
static uint32_t build_data(struct net *n, uint32_t id)
{
    struct qp_rt *q = &n->qps[id];
    uint32_t npkts = q->cur_npkts;
    uint32_t off = q->snd_nxt - q->cur_psn_first;
    uint32_t payload = off + 1 < npkts ? n->sc->mtu : q->cur_last_payload;
    uint32_t i = pkt_alloc(n);
    struct packet *pk = &n->pool[i];
    pk->kind = PKT_DATA;
    pk->qp = id;
    pk->psn = q->snd_nxt;
    pk->src = q->src;
    pk->dst = q->dst;
    pk->transfer = q->cur_msg;
    pk->payload = (uint16_t)payload;
    pk->flags = (off == 0 ? PKT_F_FIRST : 0) | (off + 1 == npkts ? PKT_F_LAST : 0);
    /* a message is WRITE FIRST..LAST, the last WITH IMMEDIATE (NCCL's net_ib posts its last
     * work request as RDMA_WRITE_WITH_IMM; the replay does the same): RETH on the first,
     * ImmDt on the last, both on an ONLY */
    pk->frame = (uint16_t)(payload + ROCE_HDR_BYTES + (off == 0 ? ROCE_RETH_BYTES : 0) +
                           (off + 1 == npkts ? ROCE_IMMDT_BYTES : 0));
    pk->sport = q->sport;
    pk->prio = q->prio;
    pk->ecn = ECN_ECT0;
    pk->dscp = 26;
    /* the destination QP number: only a capture's frames show it (a capture runs on one
     * worker, so the responder's line is no other core's) */
    pk->dst_qpn = n->tap_fn ? n->qresp[id].rqpn : 0;
    pk->sent_at = net_now(n);
    pk->pfc_vector = 0;
    pk->pfc_quanta = 0;
    if (n->intd) { /* an empty INT stack rides in the packet (HPCC ns-3: 42 bytes) */
        n->intd[i] = (struct int_stack){ .nhop = 0 };
        pk->frame += INT_HDR_BYTES;
    }
    if (q->snd_nxt < q->max_sent) {
        pk->flags |= PKT_F_RETX;
        n->hosts[q->src].retransmitted_packets++;
        net_st(n)->retransmitted_packets++;
    } else {
        q->max_sent = q->snd_nxt + 1;
    }
    q->snd_nxt++;
    if (off + 1 == npkts) /* the next message, posted by now or NONE32 (nic_post sets it) */
        qp_set_cur(n, q, n->xfers[q->cur_msg].next_on_qp);
    return i;
}

/* The QP's timer on its source host (a host's node index is its host index). */
static void set_rto(struct net *n, struct qp_rt *q, simtime_t when)
{
    timer_lite_set_h(&q->rto, net_eng(n), when, q->src, n->h_rto, (uint32_t)(q - n->qps));
}

static void arm_rto(struct net *n, struct qp_rt *q)
{
    if (!timer_lite_armed(&q->rto))
        set_rto(n, q, q->last_progress + n->sc->rto);
}

/* Go-back-N: resume sending at `psn` (>= snd_una). */
static void go_back(struct net *n, uint32_t id, uint32_t psn)
{
    struct qp_rt *q = &n->qps[id];
    if (psn < q->snd_una || psn > q->psn_end)
        return;
    uint32_t m = q->msg_head;
    while (m != NONE32 && n->xfers[m].psn_first + n->xfers[m].npkts <= psn)
        m = n->xfers[m].next_on_qp;
    qp_set_cur(n, q, m);
    q->snd_nxt = psn;
    qp_activate(n, id);
}

/* One timer per QP, re-armed lazily: it fires at last_progress + rto and only then checks
 * whether progress happened in between. */
static void rto_fire(void *ctx, uint64_t arg)
{
    struct net *n = ctx;
    uint32_t id = timer_lite_index(arg);
    struct qp_rt *q = &n->qps[id];
    if (!timer_lite_due(&q->rto, arg))
        return;
    if (q->snd_una >= q->max_sent)
        return; /* nothing in flight */
    simtime_t due = q->last_progress + n->sc->rto;
    if (net_now(n) < due) {
        set_rto(n, q, due);
        return;
    }
    n->hosts[q->src].local_ack_timeout_err++;
    net_st(n)->timeouts++;
    q->last_progress = net_now(n);
    go_back(n, id, q->snd_una);
    set_rto(n, q, net_now(n) + n->sc->rto);
    port_kick(n, &n->ports[n->hosts[q->src].port]);
}

/* ---------- sending ---------- */

/* After a congestion-control call that may have changed the QP's rate from `before`: lists
 * the QP for the next rates.csv row. This equals comparing the rate with the one last written
 * (qp_rare, a line no packet reads): every call that changes a rate is followed by this, so a
 * QP not listed still has the rate written at the last tick, unless it is stale (nothing
 * written yet, or a gap row). */
static inline void rate_check(struct net *n, struct qp_rt *q, double before)
{
    if (q->cc.rate != before || q->rate_stale)
        sampler_rate_changed(n, (uint32_t)(q - n->qps));
}

/* A QP's pacing slot: when it may send next (its last packet's start plus that packet's time
 * at the current rate), and when to look at it again if that is later than now (the slot, or
 * an earlier change of the rate). Kept in the pacing heap's entry, not in the QP. */
struct pace_slot {
    simtime_t next_avail;
    simtime_t wake_at;
};

/* The QP's pacing slot at its current rate (a rate change moves the slot, as a hardware rate
 * limiter does), its congestion control already at `now`. Returns whether the QP may send
 * now; if not, s->wake_at says when to look again. */
static bool qp_slot(struct net *n, const struct qp_rt *q, simtime_t now, struct pace_slot *s)
{
    /* rounded to the nearest picosecond (the rate is a double only in CC arithmetic) */
    s->next_avail = q->sent_any ? q->last_tx + (simtime_t)((double)q->last_wire * 8e12 / q->cc.rate + 0.5) : now;
    if (s->next_avail <= now)
        return true;
    simtime_t change = n->cc->next_change(&q->cc);
    s->wake_at = change < s->next_avail ? change : s->next_avail;
    if (s->wake_at <= now)
        s->wake_at = s->next_avail;
    return false;
}

/* Brings the QP's congestion control up to `now`, then its pacing slot (qp_slot). */
static bool qp_pace(struct net *n, struct qp_rt *q, simtime_t now, struct pace_slot *s)
{
    double before = q->cc.rate;
    n->cc->advance(&q->cc, now);
    rate_check(n, q, before);
    return qp_slot(n, q, now, s);
}

static void paced_to_ready(struct net *n, struct host_rt *h, simtime_t now)
{
    while (h->heap_n && h->heap[0].at <= now) {
        uint32_t id = heap_pop(n, h);
        ready_push(n, h, id);
    }
}

/* True when every priority with a QP in the ready FIFO is paused: the NIC then sends no data
 * and leaves the FIFO as it is, as a NIC's scheduler holds a paused traffic class's queues in
 * place (the QPs go on in the same order when it resumes). Looking at each QP to park it
 * instead cost a cache miss per QP at every pause: on bench/large.ini, where a host's 1023
 * QPs share one priority, 13 pops for each dequeue. */
static bool ready_all_paused(const struct host_rt *h, unsigned paused)
{
    for (int p = 0; p < NPRIO; p++)
        if (h->ready_n[p] && !(paused & (1u << p)))
            return false;
    return true;
}

uint32_t nic_dequeue(struct net *n, struct host_rt *h)
{
    struct port_rt *port = &n->ports[h->port];
    simtime_t now = net_now(n);
    if (h->cc_idle_since != SIMTIME_NEVER) { /* the port is about to send, or look again */
        h->cc_idle_ps += now - h->cc_idle_since;
        h->cc_idle_since = SIMTIME_NEVER;
    }
    if (h->ctrl.pkts && !(port->paused & (1u << n->pool[h->ctrl.head].prio)))
        return pktq_pop(n, &h->ctrl);
    paced_to_ready(n, h, now);
    if (port->paused && ready_all_paused(h, port->paused))
        goto idle;
    while (h->ready_head != NONE32) {
        uint32_t id = ready_pop(n, h);
        struct qp_rt *q = &n->qps[id];
        if (!qp_has_data(q) || qp_window_full(n, q))
            continue; /* a full window: the ACK that opens it activates the QP again */
        if (port->paused & (1u << q->prio)) {
            /* parked, in order, until the priority resumes */
            q->state = QP_PARKED;
            q->next_ready = NONE32;
            if (h->parked_head[q->prio] == NONE32)
                h->parked_head[q->prio] = id;
            else
                n->qps[h->parked_tail[q->prio]].next_ready = id;
            h->parked_tail[q->prio] = id;
            h->parked_n[q->prio]++;
            continue;
        }
        struct pace_slot slot;
        if (!qp_pace(n, q, now, &slot)) {
            heap_push(n, h, id, slot.wake_at);
            continue;
        }
        uint32_t i = build_data(n, id);
        struct packet *pk = &n->pool[i];
        uint32_t wire = packet_wire_bytes(pk);
        double before = q->cc.rate;
        n->cc->on_send(&q->cc, now, pk->frame);
        q->last_tx = now;
        q->last_wire = wire;
        q->sent_any = true;
        rate_check(n, q, before);
        arm_rto(n, q);
        if (qp_has_data(q) && !qp_window_full(n, q)) {
            /* a QP slower than the port waits in the pacing heap; one at line rate stays ready */
            /* its CC is at `now` since the qp_pace above, and on_send makes no change due
             * by now (cc.h): the slot alone (another advance was 1.0 % of all instructions on
             * bench/fabric.ini at 2 ms, cachegrind) */
            bool now_ok = qp_slot(n, q, now, &slot);
            simtime_t ser = port->ps_per_byte ? wire * port->ps_per_byte : serialisation_ps(wire, port->rate);
            if (!now_ok && slot.next_avail > now + ser)
                heap_push(n, h, id, slot.wake_at);
            else
                ready_push(n, h, id);
        }
        return i;
    }
idle:
    if (h->heap_n) {
        /* idle with data that congestion control holds back */
        h->cc_idle_since = now;
        timer_lite_set_h(&h->wake, net_eng(n), h->heap[0].at, h->node, n->h_wake, (uint32_t)(h - n->hosts));
    }
    return NONE32;
}

static void wake_fire(void *ctx, uint64_t arg)
{
    struct net *n = ctx;
    struct host_rt *h = &n->hosts[timer_lite_index(arg)];
    if (timer_lite_due(&h->wake, arg))
        port_kick(n, &n->ports[h->port]);
}

void nic_prefetch_host(const struct host_rt *h)
{
    __builtin_prefetch(&h->ctrl);
    __builtin_prefetch(&h->ready_head);
    __builtin_prefetch(&h->heap_n);
}

void nic_prefetch_dequeue(const struct net *n, const struct host_rt *h)
{
    if (h->heap_n) /* a paced QP whose slot has come goes first when none is ready */
        net_prefetch_qp(n, h->heap[0].qp);
    if (h->ready_head != NONE32) /* the packet's message is in the QP (qp_set_cur) */
        net_prefetch_qp(n, h->ready_head);
}

void nic_prefetch_wake(const struct net *n, uint32_t host, bool deep)
{
    if (host >= n->topo->nhosts)
        return;
    const struct host_rt *h = &n->hosts[host];
    if (!deep) {
        nic_prefetch_host(h);
        if (h->heap_n)
            __builtin_prefetch(h->heap);
        return;
    }
    nic_prefetch_dequeue(n, h);
}

void nic_register_handlers(struct net *n)
{
    n->h_rto = engine_handler(net_eng(n), rto_fire, n);
    n->h_wake = engine_handler(net_eng(n), wake_fire, n);
}

bool nic_prefetch_event(const struct net *n, const struct event *ev)
{
    if (event_handler(ev) == n->h_wake) { /* the host's timer */
        if (timer_lite_index(ev->arg) < n->topo->nhosts)
            __builtin_prefetch(&n->hosts[timer_lite_index(ev->arg)].wake);
        return true;
    }
    if (event_handler(ev) != n->h_rto)
        return false;
    if (timer_lite_index(ev->arg) < n->nqps) /* the QP, from the event alone */
        net_prefetch_qp(n, timer_lite_index(ev->arg));
    return true;
}

void nic_prefetch_arrival(const struct net *n, const struct packet *pk, bool deep)
{
    if (pk->qp >= n->nqps)
        return;
    if (deep) {
        /* a CE mark makes the responder look up its CNP moderation slot */
        if (pk->kind == PKT_DATA && pk->ecn == ECN_CE && n->cnp_last)
            __builtin_prefetch(&n->cnp_last[n->qresp[pk->qp].cnp_slot]);
        return;
    }
    if (pk->kind == PKT_DATA) {
        __builtin_prefetch(&n->qresp[pk->qp]);
        __builtin_prefetch(&n->hosts[pk->dst].rx_bytes);
    } else {
        net_prefetch_qp(n, pk->qp);
    }
    /* a message's last packet completes its transfer (xfer_finished); an ACK moves its QP's
     * first message, most often the transfer of the data it acknowledges */
    if (pk->transfer < n->nxfers && (pk->kind != PKT_DATA || (pk->flags & PKT_F_LAST))) {
        __builtin_prefetch(&n->xfers[pk->transfer]);
        if (pk->kind == PKT_DATA) {
            __builtin_prefetch(schedule_get(n->sched, pk->transfer));
            __builtin_prefetch(&n->dep_off[pk->transfer]);
        }
    }
}

/* ---------- control packets ---------- */

/* Queues a control packet and kicks the port, which may put it on the wire (and a capture)
 * at once: everything the packet says is set before. `sent_at` is an ACK's echoed time. */
static void send_ctrl(struct net *n, uint32_t from, uint32_t to, enum pkt_kind kind, uint32_t qp, uint32_t psn,
                      uint8_t prio, uint8_t flags, simtime_t sent_at, uint32_t echo_int, uint32_t transfer)
{
    uint32_t i = pkt_alloc(n);
    struct packet *pk = &n->pool[i];
    const struct qp_resp *q = &n->qresp[qp];
    *pk = (struct packet){ 0 };
    pk->kind = (uint8_t)kind;
    pk->qp = qp;
    pk->psn = psn;
    pk->src = from;
    pk->dst = to;
    pk->transfer = transfer; /* an ACK's: its data's, a hint for the prefetch hook only */
    pk->frame = kind == PKT_CNP ? CNP_FRAME_BYTES : ACK_FRAME_BYTES;
    pk->sport = q->sport;
    pk->prio = prio;
    pk->ecn = ECN_NOT_ECT;
    pk->dscp = kind == PKT_CNP ? 48 : 26;
    pk->dst_qpn = q->lqpn;
    pk->flags = flags;
    pk->sent_at = sent_at;
    if (echo_int != NONE32) { /* the ACK echoes the data packet's INT stack (HPCC ns-3 ReceiveUdp) */
        n->intd[i] = n->intd[echo_int];
        pk->frame += INT_HDR_BYTES;
    }
    struct host_rt *h = &n->hosts[from];
    pktq_push(n, &h->ctrl, i);
    port_kick(n, &n->ports[h->port]);
}

/* An ACK for data packet `data`: it echoes the data's send time (the sender's RTT sample) and
 * whether a CE-marked packet arrived since the previous ACK (ECN-echo, for DCTCP). `cnp` sets
 * the CNP flag of the HPCC ns-3 feedback path (np_feedback = ack_flag). */
static void send_ack(struct net *n, struct qp_resp *q, const struct packet *data, enum pkt_kind kind, uint32_t psn,
                     bool cnp)
{
    uint8_t flags = (q->ce_since_ack ? PKT_F_ECE : 0) | (cnp ? PKT_F_CNP : 0);
    if (cnp) {
        n->hosts[q->dst].np_cnp_sent++;
        net_st(n)->cnp_sent++;
    }
    q->ce_since_ack = false;
    send_ctrl(n, q->dst, q->src, kind, data->qp, psn, n->sc->ack_priority, flags, data->sent_at,
              n->intd ? (uint32_t)(data - n->pool) : NONE32, data->transfer);
}

/* A CE-marked packet at the notification point with np_feedback = cnp: a CNP unless one went
 * out within min_time_between_cnps in the QP's moderation slot [DCQCN15 NP, mstflint]. */
static void np_send_cnp(struct net *n, struct qp_resp *q, uint32_t qp)
{
    simtime_t now = net_now(n), *last = &n->cnp_last[q->cnp_slot];
    if (*last != SIMTIME_NEVER && now - *last < n->np->min_time_between_cnps)
        return;
    *last = now;
    n->hosts[q->dst].np_cnp_sent++;
    net_st(n)->cnp_sent++;
    send_ctrl(n, q->dst, q->src, PKT_CNP, qp, 0, n->sc->cnp_priority, 0, now, NONE32, NONE32);
}

/* ---------- receiving ---------- */

static void responder_data_ooo(struct net *n, struct packet *pk, bool flag_ack);

static void responder_data(struct net *n, struct packet *pk)
{
    struct qp_resp *q = &n->qresp[pk->qp];
    struct host_rt *h = &n->hosts[q->dst];
    /* HPCC ns-3 ReceiveUdp: with L2_ACK_INTERVAL 1 every packet is acknowledged, and a CE mark
     * sets the CNP flag of that very ACK (or NAK); so a CE packet is acknowledged at once */
    bool flag_ack = false;
    h->rx_bytes += pk->payload;
    if (pk->ecn == ECN_CE) {
        h->np_ecn_marked_roce_packets++;
        sampler_counters_changed(n, NULL, q->dst);
        q->ce_since_ack = true;
        if (n->cc->uses_cnp) {
            if (n->np->np_feedback == NP_ACK_FLAG)
                flag_ack = true;
            else
                np_send_cnp(n, q, pk->qp);
        }
    }
    if (n->sc->rx_order == RX_OOO_PLACE) {
        responder_data_ooo(n, pk, flag_ack);
        return;
    }
    if (pk->psn == q->epsn) {
        q->epsn++;
        q->nak_sent = false;
        net_st(n)->bytes_delivered += pk->payload;
        bool last = pk->flags & PKT_F_LAST;
        if (last)
            xfer_finished(n, pk->transfer);
        if (++q->unacked >= n->sc->ack_every || last || flag_ack) {
            q->unacked = 0;
            send_ack(n, q, pk, PKT_ACK, q->epsn - 1, flag_ack);
        }
    } else if (pk->psn > q->epsn) {
        h->out_of_sequence++;
        /* one NAK per expected PSN, repeated after nak_interval if the retransmission is
         * lost too (as the HPCC ns-3 receiver does) instead of waiting for the timeout */
        if (!q->nak_sent || net_now(n) - q->last_nak >= n->sc->nak_interval) {
            q->nak_sent = true;
            q->last_nak = net_now(n);
            send_ack(n, q, pk, PKT_NAK, q->epsn, flag_ack);
        }
    } else {
        h->duplicate_request++;
        if (pk->flags & PKT_F_LAST) /* re-acknowledge so a sender that lost the ACK moves on */
            send_ack(n, q, pk, PKT_ACK, q->epsn - 1, false);
    }
}

/* ---------- out-of-order placement ---------- */

static inline bool ooo_test(const struct ooo_rx *o, uint32_t epsn, uint32_t psn)
{
    if (!o->bits || psn - epsn >= o->nbits)
        return false;
    uint32_t b = psn & (o->nbits - 1);
    return o->bits[b >> 6] >> (b & 63) & 1;
}

static void ooo_set(struct ooo_rx *o, uint32_t epsn, uint32_t psn)
{
    uint32_t need = psn - epsn + 1;
    if (need > o->nbits) {
        /* grow the ring and re-place the PSNs it held (rare: a deeper reordering than before) */
        uint32_t n = o->nbits ? o->nbits : 1024;
        while (n < need)
            n *= 2;
        uint64_t *nb = g_new0(uint64_t, n / 64);
        for (uint32_t k = 1; k < o->nbits; k++)
            if (ooo_test(o, epsn, epsn + k)) {
                uint32_t b = (epsn + k) & (n - 1);
                nb[b >> 6] |= 1ull << (b & 63);
            }
        g_free(o->bits);
        o->bits = nb;
        o->nbits = n;
    }
    uint32_t b = psn & (o->nbits - 1);
    o->bits[b >> 6] |= 1ull << (b & 63);
}

/* A responder that places packets wherever they fall in the message (as RC NICs with
 * adaptive-routing support do) instead of discarding past a gap: it keeps which PSNs beyond
 * epsn have arrived, moves epsn over every run that becomes contiguous, completes the
 * transfers epsn has passed, and acknowledges cumulatively; it never NAKs. */
static void responder_data_ooo(struct net *n, struct packet *pk, bool flag_ack)
{
    struct qp_resp *q = &n->qresp[pk->qp];
    struct ooo_rx *o = &n->ooo[pk->qp];
    struct host_rt *h = &n->hosts[q->dst];
    uint32_t psn = pk->psn;
    if (psn < q->epsn || ooo_test(o, q->epsn, psn)) {
        h->duplicate_request++;
        if (pk->flags & PKT_F_LAST && q->epsn)
            send_ack(n, q, pk, PKT_ACK, q->epsn - 1, false);
        return;
    }
    net_st(n)->bytes_delivered += pk->payload;
    if (psn != q->epsn) {
        h->out_of_sequence++;
        ooo_set(o, q->epsn, psn);
    } else {
        q->epsn++;
        while (ooo_test(o, q->epsn, q->epsn)) {
            uint32_t b = q->epsn & (o->nbits - 1);
            o->bits[b >> 6] &= ~(1ull << (b & 63));
            q->epsn++;
        }
    }
    bool done = false;
    while (o->rx_msg != NONE32 && n->xfers[o->rx_msg].psn_first + n->xfers[o->rx_msg].npkts <= q->epsn) {
        uint32_t x = o->rx_msg;
        o->rx_msg = n->xfers[x].next_on_qp;
        xfer_finished(n, x);
        done = true;
    }
    if ((++q->unacked >= n->sc->ack_every || done || flag_ack) && q->epsn) {
        q->unacked = 0;
        send_ack(n, q, pk, PKT_ACK, q->epsn - 1, flag_ack);
    }
}

/* A congestion notification at the reaction point: a CNP, or a CNP-flagged ACK. */
static void rp_notified(struct net *n, uint32_t id)
{
    struct qp_rt *q = &n->qps[id];
    double before = q->cc.rate;
    n->cc->on_cnp(&q->cc, net_now(n));
    n->hosts[q->src].rp_cnp_handled++;
    sampler_counters_changed(n, NULL, q->src);
    net_st(n)->cnp_handled++;
    rate_check(n, q, before);
}

static void requester_ack(struct net *n, struct packet *pk)
{
    uint32_t id = pk->qp;
    struct qp_rt *q = &n->qps[id];
    uint32_t acked = pk->kind == PKT_ACK ? pk->psn + 1 : pk->psn;
    if (acked > q->snd_una && acked <= q->psn_end) {
        struct cc_ack a = { .rtt = net_now(n) - pk->sent_at, .acked_pkts = acked - q->snd_una, .ack_psn = acked,
                            .snd_nxt = q->snd_nxt, .ece = pk->flags & PKT_F_ECE,
                            .intd = n->intd ? &n->intd[pk - n->pool] : NULL };
        double before = q->cc.rate;
        n->cc->on_ack(&q->cc, net_now(n), &a);
        rate_check(n, q, before);
        q->snd_una = acked;
        q->last_progress = net_now(n);
        while (q->msg_head != NONE32) {
            struct xfer_rt *x = &n->xfers[q->msg_head];
            if (x->psn_first + x->npkts > q->snd_una)
                break;
            q->msg_head = x->next_on_qp;
        }
        if (q->msg_head == NONE32) {
            n->rare[id].msg_tail = NONE32;
            sampler_rate_changed(n, id); /* its rate line ends here (rates.csv gap row) */
        }
        if (q->snd_nxt < q->snd_una) /* an ACK beyond a go-back point */
            go_back(n, id, q->snd_una);
        if (q->cc.win) { /* the window may have opened */
            qp_activate(n, id);
            port_kick(n, &n->ports[n->hosts[q->src].port]);
        }
    }
    if (pk->kind == PKT_NAK) {
        n->hosts[q->src].packet_seq_err++;
        go_back(n, id, pk->psn);
        port_kick(n, &n->ports[n->hosts[q->src].port]);
    }
    if (pk->flags & PKT_F_CNP)
        rp_notified(n, id);
}

void nic_receive(struct net *n, struct port_rt *in, uint32_t i)
{
    struct packet *pk = &n->pool[i];
    if (pk->kind == PKT_PFC) {
        pfc_receive(n, in, i);
        return;
    }
    if (nic_rx_stalled(n, &n->hosts[in->node], i))
        return; /* held (or dropped) until the receive pipeline runs again */
    switch (pk->kind) {
    case PKT_DATA:
        responder_data(n, pk);
        break;
    case PKT_ACK:
    case PKT_NAK:
        requester_ack(n, pk);
        break;
    case PKT_CNP:
        rp_notified(n, pk->qp);
        break;
    case PKT_PFC:
        break;
    }
    pkt_free(n, i);
}
