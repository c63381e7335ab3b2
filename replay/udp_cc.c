/* Per-QP congestion control and CNP moderation of the UDP transport (see udp_cc.h). */
#include "replay/udp_cc.h"
#include <math.h>

/* [DCQCN15] NP: "no CNP was sent for that flow in the last N = 50 us" (models.md 1.2) */
#define DCQCN15_N_NS 50000

const struct cc_ops *udp_cc_for(const struct scenario *sc, const char **why)
{
    const struct cc_ops *ops = sc ? cc_ops_for(sc->cc) : &cc_none_ops;
    /* an algorithm that learns from ACKs would need what these ACKs do not carry */
    if (ops->on_ack != cc_ignore_ack) {
        *why = "the udp transport's ACKs carry no ECN-echo, RTT echo or INT, which it reacts "
               "to: expected none or dcqcn (any [nic] cc_preset)";
        return NULL;
    }
    return ops;
}

simtime_t udp_cc_ps(const struct udp_cc *cc, int64_t ns)
{
    return ns <= cc->epoch_ns ? 0 : (simtime_t)(ns - cc->epoch_ns) * PS_PER_NS;
}

int64_t udp_cc_ns(const struct udp_cc *cc, simtime_t ps)
{
    if (ps == SIMTIME_NEVER)
        return INT64_MAX;
    return cc->epoch_ns + (int64_t)((ps + PS_PER_NS - 1) / PS_PER_NS); /* never early */
}

/* now on the algorithm's clock, never before a time it was already given */
static simtime_t qp_time(const struct udp_cc *cc, struct udp_cc_qp *q, int64_t now)
{
    if (now < q->seen)
        now = q->seen;
    q->seen = now;
    return udp_cc_ps(cc, now);
}

void udp_cc_qp_init(const struct udp_cc *cc, struct udp_cc_qp *q, int64_t now)
{
    *q = (struct udp_cc_qp){ .seen = now, .env = cc_env_make(cc->sc, cc->ops, cc->line_bps) };
    cc->ops->init(&q->f, cc->sc, &q->env, udp_cc_ps(cc, now));
    q->min_rate = q->f.rate;
}

double udp_cc_rate(const struct udp_cc *cc, struct udp_cc_qp *q, int64_t now)
{
    cc->ops->advance(&q->f, qp_time(cc, q, now));
    if (q->f.rate < q->min_rate)
        q->min_rate = q->f.rate;
    return q->f.rate;
}

double udp_cc_ready_at(const struct udp_cc *cc, struct udp_cc_qp *q, int64_t now)
{
    if (cc->line_bps <= 0 || !q->last_wire)
        return -INFINITY;
    double rate = udp_cc_rate(cc, q, now);
    return rate > 0 ? q->paced_at + (double)q->last_wire * 8e9 / rate : INFINITY;
}

double udp_cc_ready_at_last(const struct udp_cc *cc, const struct udp_cc_qp *q)
{
    if (cc->line_bps <= 0 || !q->last_wire)
        return -INFINITY;
    return q->f.rate > 0 ? q->paced_at + (double)q->last_wire * 8e9 / q->f.rate : INFINITY;
}

void udp_cc_sent(const struct udp_cc *cc, struct udp_cc_qp *q, int64_t now, double slot,
                 uint32_t frame, uint32_t wire)
{
    cc->ops->on_send(&q->f, qp_time(cc, q, now), frame);
    q->paced_at = isfinite(slot) ? MAX(slot, (double)now - UDP_PACE_CREDIT_NS) : (double)now;
    q->last_wire = wire;
}

void udp_cc_notified(const struct udp_cc *cc, struct udp_cc_qp *q, int64_t now)
{
    q->cnp_handled++;
    cc->ops->on_cnp(&q->f, qp_time(cc, q, now));
    if (q->f.rate < q->min_rate)
        q->min_rate = q->f.rate;
}

int64_t udp_cc_next_change(const struct udp_cc *cc, const struct udp_cc_qp *q)
{
    return udp_cc_ns(cc, cc->ops->next_change(&q->f));
}

void udp_np_init(struct udp_np *np, const struct dcqcn_params *p, uint32_t nqps, uint32_t nhosts)
{
    *np = (struct udp_np){ .gap_ns = DCQCN15_N_NS, .scope = CNP_PER_QP };
    if (p) {
        np->gap_ns = (int64_t)((p->min_time_between_cnps + PS_PER_NS - 1) / PS_PER_NS);
        np->scope = p->cnp_scope;
        np->ack_flag = p->np_feedback == NP_ACK_FLAG;
    }
    /* models/nic.c nic_assign_cnp_slots: per QP, per receiving port (this host: one), or per
     * (receiving port, sender) */
    np->nslots = np->scope == CNP_PER_QP ? nqps : np->scope == CNP_PER_PORT ? 1 : nhosts;
    if (!np->nslots)
        np->nslots = 1;
    np->last = g_new0(int64_t, np->nslots);
    np->sent = g_new0(gboolean, np->nslots);
}

void udp_np_clear(struct udp_np *np)
{
    g_free(np->last);
    g_free(np->sent);
    np->last = NULL;
    np->sent = NULL;
}

uint32_t udp_np_slot(const struct udp_np *np, uint32_t qp_index, uint32_t peer)
{
    uint32_t s = np->scope == CNP_PER_QP ? qp_index : np->scope == CNP_PER_PORT ? 0 : peer;
    return s < np->nslots ? s : 0;
}

gboolean udp_np_take(struct udp_np *np, uint32_t slot, int64_t now)
{
    if (np->ack_flag)
        return TRUE; /* HPCC ns-3: every CE packet's ACK carries the flag, unmoderated */
    if (np->sent[slot] && now - np->last[slot] < np->gap_ns)
        return FALSE;
    np->sent[slot] = TRUE;
    np->last[slot] = now;
    return TRUE;
}
