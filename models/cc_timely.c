/* TIMELY (Mittal et al., SIGCOMM 2015) as in the HPCC ns-3 model (shared/reference/models.md
 * 6.2): every ACK carries an RTT sample (the data packet's send time is echoed); the
 * difference between consecutive RTTs is smoothed, normalised by the minimum RTT into a
 * gradient, and once per RTT the rate is:
 *   raised by rate_ai (rate_hai after 5 consecutive raises) when rtt < t_low or the gradient
 *     is not positive,
 *   cut by beta (1 - t_high/rtt) when rtt > t_high,
 *   cut by beta x gradient otherwise. */
#include <math.h>
#include "models/cc.h"

struct timely_params {
    double alpha, beta;              /* RTT-difference EWMA weight, decrease factor */
    simtime_t t_low, t_high, min_rtt;
    uint64_t rate_ai, rate_hai, min_rate;
};

/* the HPCC ns-3 defaults (models.md 6.2); the steps scale with the host rate as its run.py
 * does (NULL defaults: derived) */
#define P(field) offsetof(struct timely_params, field)
static const struct cfg_key timely_keys[] = {
    { "timely", "alpha", CFG_DOUBLE, P(alpha), "0.875", NULL, 0, 1, 0 },
    { "timely", "beta", CFG_DOUBLE, P(beta), "0.8", NULL, 0, 1, 0 },
    { "timely", "t_low", CFG_TIME, P(t_low), "50us", NULL, 0, 0, 0 },
    { "timely", "t_high", CFG_TIME, P(t_high), "500us", NULL, 0, 0, 0 },
    { "timely", "min_rtt", CFG_TIME, P(min_rtt), "20us", NULL, 0, 0, 0 },
    { "timely", "rate_ai", CFG_RATE, P(rate_ai), NULL, NULL, 0, 0, 0 },
    { "timely", "rate_hai", CFG_RATE, P(rate_hai), NULL, NULL, 0, 0, 0 },
    { "timely", "min_rate", CFG_RATE, P(min_rate), "100Mbps", NULL, 0, 0, 0 },
    CFG_END,
};
#undef P

static gboolean timely_derive(void *params, struct scenario *s, GKeyFile *kf, GError **err)
{
    (void)err;
    struct timely_params *p = params;
    /* 10 Mb/s per 10 Gb/s of host rate, hyper increase 5x that */
    if (!g_key_file_has_key(kf, "timely", "rate_ai", NULL))
        p->rate_ai = 10000000ULL * (s->host_rate / 10000000000ULL ? s->host_rate / 10000000000ULL : 1);
    if (!g_key_file_has_key(kf, "timely", "rate_hai", NULL))
        p->rate_hai = 5 * p->rate_ai;
    return TRUE;
}

static void timely_init(struct cc_flow *f, const struct scenario *s, const struct cc_env *env, simtime_t now)
{
    (void)s;
    (void)now;
    f->env = env;
    f->rate = env->line;
    f->u.t = (struct timely_state){ 0 };
}

static void timely_on_ack(struct cc_flow *f, simtime_t now, const struct cc_ack *a)
{
    (void)now;
    struct timely_state *t = &f->u.t;
    const struct timely_params *p = f->env->params;
    double rtt = (double)a->rtt;
    if (t->prev_rtt) {
        double diff = rtt - (double)t->prev_rtt;
        t->rtt_diff = (1 - p->alpha) * t->rtt_diff + p->alpha * diff;
    }
    t->prev_rtt = a->rtt;
    if (a->ack_psn <= t->update_end)
        return; /* one decision per RTT: wait until the data sent after the last one is acked */
    t->update_end = a->snd_nxt;
    double gradient = t->rtt_diff / (double)p->min_rtt;
    if (a->rtt < p->t_low || (a->rtt <= p->t_high && gradient <= 0)) {
        t->increases++;
        f->rate += (double)(t->increases >= 5 ? p->rate_hai : p->rate_ai);
    } else if (a->rtt > p->t_high) {
        t->increases = 0;
        f->rate *= 1 - p->beta * (1 - (double)p->t_high / rtt);
    } else {
        t->increases = 0;
        f->rate *= fmax(0, 1 - p->beta * gradient);
    }
    f->rate = fmin(f->env->line, fmax((double)p->min_rate, f->rate));
}

const struct cc_ops cc_timely_ops = {
    .name = "timely", .init = timely_init, .advance = cc_no_advance, .on_cnp = cc_ignore_cnp,
    .on_send = cc_ignore_send, .on_ack = timely_on_ack, .next_change = cc_never_changes,
    .section = "timely", .keys = timely_keys, .params_size = sizeof(struct timely_params),
    .derive = timely_derive,
};
