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

static void timely_init(struct cc_flow *f, const struct scenario *s, double line, simtime_t now)
{
    (void)now;
    f->sc = s;
    f->line = line;
    f->rate = line;
    f->u.t = (struct timely_state){ 0 };
}

static void timely_on_ack(struct cc_flow *f, simtime_t now, const struct cc_ack *a)
{
    (void)now;
    struct timely_state *t = &f->u.t;
    const struct timely_params *p = &f->sc->timely;
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
    f->rate = fmin(f->line, fmax((double)p->min_rate, f->rate));
}

const struct cc_ops cc_timely_ops = { "timely", timely_init, cc_no_advance, cc_ignore_cnp, cc_ignore_send,
                                      timely_on_ack, cc_never_changes, false };
