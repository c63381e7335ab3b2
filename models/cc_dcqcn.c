/* DCQCN reaction point (shared/reference/models.md 1.3), lazily evaluated.
 *
 * Two styles share the code:
 *  - gated (ConnectX firmware, HPCC ns-3 "Mellanox"): alpha is updated every dce_tcp_rtt as
 *    alpha = (1-g)alpha + g*[CNP seen]; the rate is cut at most once per
 *    rate_reduce_monitor_period, when a CNP arrived during it.
 *  - paper (SIGCOMM 2015): each CNP cuts the rate at once and raises alpha; alpha decays
 *    by (1-g) every K without CNPs.
 * Increases: timer T (rpg_time_reset) and byte counter B (rpg_byte_reset) drive fast
 * recovery, additive and hyper increase with threshold F (rpg_threshold).
 * Between CNPs everything evolves in closed form; advance() replays the pending timer
 * expiries in time order. */
#include <math.h>
#include "models/cc.h"

static double max_rate(const struct cc_flow *f)
{
    return f->dcqcn->rpg_max_rate ? fmin((double)f->dcqcn->rpg_max_rate, f->line) : f->line;
}

static void dcqcn_init(struct cc_flow *f, const struct scenario *s, double line, simtime_t now)
{
    (void)now;
    f->line = line;
    f->dcqcn = &s->dcqcn;
    f->sc = s;
    f->rate = max_rate(f);
    struct dcqcn_state *d = &f->u.d;
    *d = (struct dcqcn_state){ 0 };
    d->rt = f->rate;
    d->alpha = s->dcqcn.initial_alpha_value / 1024.0;
    d->alpha_next = d->dec_next = d->inc_next = SIMTIME_NEVER;
}

/* Alpha ticks up to and including time t: the first tick consumes the CNP flag (gated
 * style), the rest are pure decay, applied in one step. */
static void alpha_to(struct cc_flow *f, simtime_t t)
{
    struct dcqcn_state *d = &f->u.d;
    const struct dcqcn_params *p = f->dcqcn;
    if (d->alpha_next == SIMTIME_NEVER || d->alpha_next > t)
        return;
    simtime_t K = p->dce_tcp_rtt;
    uint64_t ticks = (t - d->alpha_next) / K + 1;
    if (p->style == DCQCN_GATED) {
        d->alpha = (1 - p->g) * d->alpha + (d->cnp_alpha ? p->g : 0);
        d->cnp_alpha = false;
        ticks--;
    }
    if (ticks)
        d->alpha *= pow(1 - p->g, (double)ticks);
    d->alpha_next += ((t - d->alpha_next) / K + 1) * K;
}

static void clamp_rates(struct cc_flow *f)
{
    struct dcqcn_state *d = &f->u.d;
    double mx = max_rate(f), mn = (double)f->dcqcn->rpg_min_rate;
    if (d->rt > mx)
        d->rt = mx;
    if (f->rate > mx)
        f->rate = mx;
    if (f->rate < mn)
        f->rate = mn;
}

static void decrease(struct cc_flow *f, simtime_t t)
{
    struct dcqcn_state *d = &f->u.d;
    const struct dcqcn_params *p = f->dcqcn;
    if (p->clamp_tgt_rate || p->style == DCQCN_PAPER || (p->clamp_tgt_rate_after_time_inc && d->last_inc_timer))
        d->rt = f->rate;
    double cut = d->alpha / (double)(1u << (p->rpg_gd - 10)); /* alpha/2 for rpg_gd = 11 */
    double factor = 1 - cut;
    double floor = p->rpg_min_dec_fac / 100.0;
    if (factor < floor)
        factor = floor;
    f->rate *= factor;
    clamp_rates(f);
    d->t_stage = d->bc_stage = 0;
    d->bytes_since_inc = 0;
    d->last_inc_timer = false;
    d->inc_next = t + p->rpg_time_reset;
}

/* One increase event; `timer` says whether the timer or the byte counter fired. */
static void increase(struct cc_flow *f, bool timer)
{
    struct dcqcn_state *d = &f->u.d;
    const struct dcqcn_params *p = f->dcqcn;
    uint32_t F = p->rpg_threshold;
    if (timer)
        d->t_stage++;
    else
        d->bc_stage++;
    d->last_inc_timer = timer;
    uint32_t hi = d->t_stage > d->bc_stage ? d->t_stage : d->bc_stage;
    uint32_t lo = d->t_stage < d->bc_stage ? d->t_stage : d->bc_stage;
    if (p->style == DCQCN_PAPER) {
        if (hi < F) {
            /* fast recovery: Rt unchanged */
        } else if (lo >= F) {
            d->rt += (double)(lo - F + 1) * (double)p->rpg_hai_rate; /* hyper increase */
        } else {
            d->rt += (double)p->rpg_ai_rate;                          /* additive increase */
        }
    } else {
        /* firmware style: stages count increase events of either kind; after F of them
         * additive, after more than F hyper (a constant step) */
        uint32_t stage = d->t_stage + d->bc_stage - 1; /* events before this one */
        if (stage < F) {
        } else if (stage == F) {
            d->rt += (double)p->rpg_ai_rate;
        } else {
            d->rt += (double)p->rpg_hai_rate;
        }
    }
    double mx = max_rate(f);
    if (d->rt > mx)
        d->rt = mx;
    f->rate = (d->rt + f->rate) / 2;
    clamp_rates(f);
    /* Within 0.1% of line rate with the target there: the limiter lets go (1e-3 of the
     * rate is below the additive step at any speed this simulator models). */
    if (d->rt >= mx && f->rate >= mx * (1 - 1e-3))
        f->rate = mx;
}

/* Back at full speed: the NIC releases the QP's rate limiter, and the next CNP starts a new
 * congestion episode (alpha from initial_alpha_value again), as ConnectX does. */
static bool release_if_recovered(struct cc_flow *f)
{
    struct dcqcn_state *d = &f->u.d;
    if (f->rate < max_rate(f) || d->rt < max_rate(f) || d->cnp_dec)
        return false;
    if (!f->dcqcn->release_at_line_rate) {
        d->inc_next = SIMTIME_NEVER; /* nothing left to increase; alpha keeps its history */
        return true;
    }
    d->active = false;
    d->alpha_next = d->dec_next = d->inc_next = SIMTIME_NEVER;
    d->t_stage = d->bc_stage = 0;
    d->bytes_since_inc = 0;
    d->cnp_alpha = false;
    return true;
}

static void dcqcn_advance(struct cc_flow *f, simtime_t now)
{
    struct dcqcn_state *d = &f->u.d;
    const struct dcqcn_params *p = f->dcqcn;
    if (!d->active)
        return;
    for (;;) {
        simtime_t next = d->dec_next < d->inc_next ? d->dec_next : d->inc_next;
        if (next > now)
            break;
        if (d->dec_next <= d->inc_next) {
            simtime_t t = d->dec_next;
            alpha_to(f, t); /* alpha updates at a tick run before a decrease at the same time */
            if (d->cnp_dec) {
                d->cnp_dec = false;
                decrease(f, t);
                d->dec_next = t + p->rate_reduce_monitor_period;
            } else {
                d->dec_next = SIMTIME_NEVER; /* re-armed by the next CNP */
            }
        } else {
            simtime_t t = d->inc_next;
            increase(f, true);
            d->inc_next = t + p->rpg_time_reset;
            if (release_if_recovered(f) && !d->active)
                return;
        }
    }
    alpha_to(f, now);
}

static void dcqcn_on_cnp(struct cc_flow *f, simtime_t now)
{
    struct dcqcn_state *d = &f->u.d;
    const struct dcqcn_params *p = f->dcqcn;
    f->cnp_handled++;
    dcqcn_advance(f, now);
    if (!d->active) {
        d->active = true;
        d->alpha = p->initial_alpha_value / 1024.0;
        if (p->rate_to_set_on_first_cnp) {
            f->rate = fmin((double)p->rate_to_set_on_first_cnp, max_rate(f));
            d->rt = f->rate;
        }
        d->alpha_next = now + p->dce_tcp_rtt;
        if (p->style == DCQCN_GATED) {
            d->cnp_alpha = d->cnp_dec = true;
            d->dec_grid = now;
            d->dec_next = now + p->rate_reduce_monitor_period;
            return;
        }
    }
    if (p->style == DCQCN_PAPER) {
        decrease(f, now);
        d->alpha = (1 - p->g) * d->alpha + p->g;
        d->alpha_next = now + p->dce_tcp_rtt; /* the alpha timer restarts at each CNP */
        return;
    }
    d->cnp_alpha = true;
    d->cnp_dec = true;
    if (d->dec_next == SIMTIME_NEVER) {
        /* the decrease checks run on a fixed grid from the first CNP; the cut happens at the
         * end of the monitor period this CNP falls in */
        simtime_t P = p->rate_reduce_monitor_period;
        d->dec_next = P ? d->dec_grid + ((now - d->dec_grid) / P + 1) * P : now;
    }
}

static void dcqcn_on_send(struct cc_flow *f, simtime_t now, uint32_t bytes)
{
    struct dcqcn_state *d = &f->u.d;
    const struct dcqcn_params *p = f->dcqcn;
    (void)now;
    if (!d->active || p->rpg_byte_reset == 0)
        return;
    d->bytes_since_inc += bytes;
    while (d->active && d->bytes_since_inc >= p->rpg_byte_reset) {
        d->bytes_since_inc -= p->rpg_byte_reset;
        if (f->rate >= max_rate(f) && d->rt >= max_rate(f))
            continue; /* nothing to recover: the counter just wraps */
        increase(f, false);
        release_if_recovered(f);
    }
}

static simtime_t dcqcn_next_change(const struct cc_flow *f)
{
    const struct dcqcn_state *d = &f->u.d;
    if (!d->active)
        return SIMTIME_NEVER;
    return d->dec_next < d->inc_next ? d->dec_next : d->inc_next;
}

const struct cc_ops cc_dcqcn_ops = { "dcqcn", dcqcn_init, dcqcn_advance, dcqcn_on_cnp, dcqcn_on_send,
                                     cc_ignore_ack, dcqcn_next_change };

void cc_ignore_cnp(struct cc_flow *f, simtime_t now) { (void)now; f->cnp_handled++; }
void cc_ignore_send(struct cc_flow *f, simtime_t now, uint32_t b) { (void)f; (void)now; (void)b; }
void cc_ignore_ack(struct cc_flow *f, simtime_t now, const struct cc_ack *a) { (void)f; (void)now; (void)a; }
void cc_no_advance(struct cc_flow *f, simtime_t now) { (void)f; (void)now; }
simtime_t cc_never_changes(const struct cc_flow *f) { (void)f; return SIMTIME_NEVER; }

static void none_init(struct cc_flow *f, const struct scenario *s, double line, simtime_t now)
{
    (void)now;
    f->sc = s;
    f->line = line;
    f->rate = line;
}
const struct cc_ops cc_none_ops = { "none", none_init, cc_no_advance, cc_ignore_cnp, cc_ignore_send, cc_ignore_ack,
                                    cc_never_changes };

const struct cc_ops *cc_ops_for(enum cc_kind kind)
{
    switch (kind) {
    case CC_DCQCN:
        return &cc_dcqcn_ops;
    case CC_DCTCP:
        return &cc_dctcp_ops;
    case CC_TIMELY:
        return &cc_timely_ops;
    default:
        return &cc_none_ops;
    }
}
