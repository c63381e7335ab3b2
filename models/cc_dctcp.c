/* DCTCP as a rate-based RoCE congestion control, as the HPCC ns-3 model implements it
 * (shared/reference/models.md 6.3). The receiver echoes ECN marks in its ACKs; once per window
 * of data (from one ACK of snd_nxt to the next) alpha <- (1-g) alpha + g F, F the fraction of
 * ECN-echo packets; on an ECN-echo outside CWR the rate is cut by alpha/2 and the sender
 * stays in CWR until the data in flight at the cut is acknowledged; each new window outside
 * CWR adds rate_ai. Switches should mark with a step (ecn_kmin = ecn_kmax, ecn_pmax = 1). */
#include <math.h>
#include "models/cc.h"

/* DCTCP, rate-based as in the HPCC ns-3 model (models.md 6.3) */
struct dctcp_params {
    double g;                        /* alpha gain */
    uint64_t rate_ai;                /* additive increase per window */
    uint64_t min_rate;
};

/* the HPCC ns-3 defaults (models.md 6.3) */
#define P(field) offsetof(struct dctcp_params, field)
static const struct cfg_key dctcp_keys[] = {
    { "dctcp", "g", CFG_DOUBLE, P(g), "0.0625", NULL, 0, 1, 0 },
    { "dctcp", "rate_ai", CFG_RATE, P(rate_ai), "615Mbps", NULL, 0, 0, 0 },
    { "dctcp", "min_rate", CFG_RATE, P(min_rate), "100Mbps", NULL, 0, 0, 0 },
    CFG_END,
};
#undef P

static void dctcp_init(struct cc_flow *f, const struct scenario *s, const struct cc_env *env, simtime_t now)
{
    (void)s;
    (void)now;
    f->env = env;
    f->rate = env->line;
    f->u.c = (struct dctcp_state){ .alpha = 1.0 };
}

static void dctcp_on_ack(struct cc_flow *f, simtime_t now, const struct cc_ack *a)
{
    (void)now;
    struct dctcp_state *c = &f->u.c;
    const struct dctcp_params *p = f->env->params;
    c->acked += a->acked_pkts;
    if (a->ece)
        c->marked += a->acked_pkts;
    if (c->in_cwr && a->ack_psn > c->cwr_end)
        c->in_cwr = false;
    if (a->ece && !c->in_cwr) {
        f->rate = fmax((double)p->min_rate, f->rate * (1 - c->alpha / 2));
        c->in_cwr = true;
        c->cwr_end = a->snd_nxt;
    }
    if (a->ack_psn > c->window_end) {
        /* a window of data has been acknowledged: update alpha, and grow if not cutting */
        if (c->acked) {
            double frac = (double)c->marked / (double)c->acked;
            c->alpha = (1 - p->g) * c->alpha + p->g * frac;
        }
        if (!c->in_cwr)
            f->rate = fmin(f->env->line, f->rate + (double)p->rate_ai);
        c->acked = c->marked = 0;
        c->window_end = a->snd_nxt;
    }
}

const struct cc_ops cc_dctcp_ops = {
    .name = "dctcp", .init = dctcp_init, .advance = cc_no_advance, .on_cnp = cc_ignore_cnp,
    .on_send = cc_ignore_send, .on_ack = dctcp_on_ack, .next_change = cc_never_changes,
    .section = "dctcp", .keys = dctcp_keys, .params_size = sizeof(struct dctcp_params),
};
