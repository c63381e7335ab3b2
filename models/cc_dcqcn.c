/* DCQCN reaction point (shared/reference/models.md 1.3), lazily evaluated.
 *
 * Three styles share the state and the rules common to them; every rule names its source.
 *  - paper [DCQCN15, models.md 1.3.1]: each CNP cuts the rate at once, then raises alpha;
 *    alpha decays by (1-g) every K without CNPs.
 *  - gated [ConnectX firmware: mstflint field descriptions, models.md 1.3.3]: alpha is updated
 *    every dce_tcp_rtt as alpha = (1-g)alpha + g*[CNP seen]; the rate is cut at most once per
 *    rate_reduce_monitor_period, at the end of a period in which a CNP arrived.
 *  - hpcc [HPCC ns-3 RdmaHw::*Mlx, models.md 1.3.2]: gated, with the first CNP setting
 *    alpha = 1 and clearing the alpha flag, decrease checks 1 ns after the alpha ticks, a
 *    timer-only stage rule and no release at line rate.
 * Increases: timer T (rpg_time_reset) and byte counter B (rpg_byte_reset) drive fast
 * recovery, additive and hyper increase with threshold F (rpg_threshold).
 * Between events everything evolves in closed form; advance() replays the pending timer
 * expiries in time order. */
#include <math.h>
#include "models/cc.h"
#include "models/cc_dcqcn.h"

/* HPCC ns-3 ScheduleDecreaseRateMlx(q, 1): "add 1 ns to make sure rate decrease is after
 * alpha update" */
#define HPCC_DECREASE_OFFSET PS_PER_NS
/* The firmware's rate limiter lets go within 0.1% of line rate (the additive step is larger
 * than 1e-3 of the rate at every speed modelled), see release_if_recovered(). */
#define RELEASE_TOLERANCE 1e-3

static const struct dcqcn_params *dp(const struct cc_flow *f) { return f->env->params; }

static double max_rate(const struct cc_flow *f)
{
    double line = f->env->line;
    return dp(f)->rpg_max_rate ? fmin((double)dp(f)->rpg_max_rate, line) : line;
}

static void dcqcn_init(struct cc_flow *f, const struct scenario *s, const struct cc_env *env, simtime_t now)
{
    (void)s;
    (void)now;
    f->env = env;
    f->rate = max_rate(f);
    struct dcqcn_state *d = &f->u.d;
    *d = (struct dcqcn_state){ 0 };
    d->rt = f->rate;
    d->alpha = dp(f)->initial_alpha_value / 1024.0;
    d->alpha_next = d->dec_next = d->inc_next = SIMTIME_NEVER;
}

/* Alpha ticks up to and including time t: the first tick consumes the CNP flag (gated and
 * hpcc: UpdateAlphaMlx), the rest are pure decay, applied in one step. */
static void alpha_to(struct cc_flow *f, simtime_t t)
{
    struct dcqcn_state *d = &f->u.d;
    const struct dcqcn_params *p = dp(f);
    if (d->alpha_next == SIMTIME_NEVER || d->alpha_next > t)
        return;
    simtime_t K = p->dce_tcp_rtt;
    uint64_t ticks = (t - d->alpha_next) / K + 1;
    if (p->style != DCQCN_PAPER) {
        d->alpha = (1 - p->g) * d->alpha + (d->cnp_alpha ? p->g : 0);
        d->cnp_alpha = false;
        ticks--;
    }
    if (ticks)
        d->alpha *= ticks < DCQCN_DECAY_STEPS ? p->decay[ticks] : pow(1 - p->g, (double)ticks);
    d->alpha_next += ((t - d->alpha_next) / K + 1) * K;
}

static void clamp_rates(struct cc_flow *f)
{
    struct dcqcn_state *d = &f->u.d;
    double mx = max_rate(f), mn = (double)dp(f)->rpg_min_rate;
    if (d->rt > mx)
        d->rt = mx;
    if (f->rate > mx)
        f->rate = mx;
    if (f->rate < mn)
        f->rate = mn;
}

/* Does a decrease set Rt <- Rc? [mstflint] clamp_tgt_rate: "whenever a CNP is processed, the
 * target rate is updated to be the current rate"; clamp_tgt_rate_after_time_inc: "if the
 * transmission rate was increased due to the timer, and not only due to the byte counter". So
 * without either flag only a byte-counter increase since the last cut leads to a clamp; the
 * second flag adds timer increases. [ns3-rdma] rpr_cnm_received implements exactly that, and
 * HPCC ns-3 CheckRateDecreaseMlx (ClampTargetRate || rpTimeStage != 0) is the same rule without
 * a byte counter. The paper clamps on every CNP (its preset sets clamp_tgt_rate). */
static bool clamps_target(const struct dcqcn_params *p, const struct dcqcn_state *d)
{
    if (p->clamp_tgt_rate)
        return true;
    if (p->clamp_tgt_rate_after_time_inc)
        return d->bc_stage != 0 || d->t_stage != 0;
    return d->bc_stage != 0;
}

static void decrease(struct cc_flow *f, simtime_t t)
{
    struct dcqcn_state *d = &f->u.d;
    const struct dcqcn_params *p = dp(f);
    if (clamps_target(p, d))
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
    d->inc_next = t + p->rpg_time_reset;
}

/* How much one increase event raises Rt; `timer` says whether the timer or the byte counter
 * fired. Updates the stage counters. */
static double increase_step(const struct dcqcn_params *p, struct dcqcn_state *d, bool timer)
{
    uint32_t F = p->rpg_threshold;
    if (p->style == DCQCN_HPCC) {
        /* RateIncEventMlx: the stage before this event picks the phase, then it counts up;
         * hyper increase is a constant step */
        uint32_t stage = d->t_stage + d->bc_stage;
        if (timer)
            d->t_stage++;
        else
            d->bc_stage++;
        return stage < F ? 0 : stage == F ? (double)p->rpg_ai_rate : (double)p->rpg_hai_rate;
    }
    /* [DCQCN15] / [ns3-rdma] rpr_fast_*, rpr_active_select, rpr_hyper_increase: the event's
     * counter counts first; fast recovery while both are below F, additive increase once one
     * has reached F, hyper increase only once both have (mstflint rpg_threshold), with
     * i = min(T, BC) - F + 1 steps. With the byte counter off, BC stays 0: no hyper increase. */
    if (timer)
        d->t_stage++;
    else
        d->bc_stage++;
    uint32_t hi = d->t_stage > d->bc_stage ? d->t_stage : d->bc_stage;
    uint32_t lo = d->t_stage < d->bc_stage ? d->t_stage : d->bc_stage;
    if (hi < F)
        return 0;
    if (lo < F)
        return (double)p->rpg_ai_rate;
    return (double)(lo - F + 1) * (double)p->rpg_hai_rate;
}

static void increase(struct cc_flow *f, bool timer)
{
    struct dcqcn_state *d = &f->u.d;
    const struct dcqcn_params *p = dp(f);
    double mx = max_rate(f);
    d->rt = fmin(d->rt + increase_step(p, d, timer), mx);
    f->rate = (d->rt + f->rate) / 2;
    clamp_rates(f);
    if (p->release_at_line_rate && d->rt >= mx && f->rate >= mx * (1 - RELEASE_TOLERANCE))
        f->rate = mx;
}

/* Back at full speed with nothing pending. With release_at_line_rate (ConnectX) the NIC
 * releases the QP's rate limiter, and the next CNP starts a new congestion episode (alpha
 * from initial_alpha_value again). Otherwise (the paper, HPCC ns-3) the timers keep running,
 * but every increase leaves Rc = Rt = line and the next decrease resets the stages, so they
 * are not evaluated any more; alpha keeps its history. */
static bool release_if_recovered(struct cc_flow *f)
{
    struct dcqcn_state *d = &f->u.d;
    if (f->rate < max_rate(f) || d->rt < max_rate(f) || d->cnp_dec)
        return false;
    if (!dp(f)->release_at_line_rate) {
        d->inc_next = SIMTIME_NEVER;
        return true;
    }
    d->active = false;
    d->alpha_next = d->dec_next = d->inc_next = SIMTIME_NEVER;
    d->t_stage = d->bc_stage = 0;
    d->bytes_since_inc = 0;
    d->cnp_alpha = false;
    return true;
}

/* At equal times the event armed earlier runs first, as in an event queue with FIFO ties
 * (HPCC ns-3): the increase timer for time X was armed at X - T, the decrease check at X - P. */
static bool timer_runs_first(const struct dcqcn_params *p, const struct dcqcn_state *d)
{
    if (d->inc_next != d->dec_next)
        return d->inc_next < d->dec_next;
    return p->rpg_time_reset > p->rate_reduce_monitor_period;
}

static void dcqcn_advance(struct cc_flow *f, simtime_t now)
{
    struct dcqcn_state *d = &f->u.d;
    const struct dcqcn_params *p = dp(f);
    if (!d->active)
        return;
    while (d->dec_next <= now || d->inc_next <= now) {
        if (d->inc_next <= now && timer_runs_first(p, d)) {
            simtime_t t = d->inc_next;
            increase(f, true);
            d->inc_next = t + p->rpg_time_reset;
            if (release_if_recovered(f) && !d->active)
                return;
            continue;
        }
        simtime_t t = d->dec_next;
        alpha_to(f, t); /* alpha ticks at or before a decrease run before it */
        if (d->cnp_dec) {
            d->cnp_dec = false;
            decrease(f, t);
            d->dec_next = t + p->rate_reduce_monitor_period;
        } else {
            d->dec_next = SIMTIME_NEVER; /* re-armed by the next CNP */
        }
    }
    alpha_to(f, now);
}

static void first_cnp(struct cc_flow *f, simtime_t now)
{
    struct dcqcn_state *d = &f->u.d;
    const struct dcqcn_params *p = dp(f);
    d->active = true;
    d->alpha = p->initial_alpha_value / 1024.0;
    if (p->rate_to_set_on_first_cnp) {
        f->rate = fmin((double)p->rate_to_set_on_first_cnp, max_rate(f));
        d->rt = f->rate;
    }
    d->alpha_next = now + p->dce_tcp_rtt;
    if (p->style == DCQCN_PAPER)
        return;
    /* the decrease checks run on a fixed grid from the first CNP */
    d->dec_grid = now + (p->style == DCQCN_HPCC ? HPCC_DECREASE_OFFSET : 0);
    d->dec_next = d->dec_grid + p->rate_reduce_monitor_period;
    d->cnp_dec = true;
    /* cnp_received_mlx clears the alpha flag on the first CNP; the firmware counts it */
    d->cnp_alpha = p->style != DCQCN_HPCC;
}

static void dcqcn_on_cnp(struct cc_flow *f, simtime_t now)
{
    struct dcqcn_state *d = &f->u.d;
    const struct dcqcn_params *p = dp(f);
    dcqcn_advance(f, now);
    bool first = !d->active;
    if (first)
        first_cnp(f, now);
    if (p->style == DCQCN_PAPER) {
        decrease(f, now);
        d->alpha = (1 - p->g) * d->alpha + p->g;
        d->alpha_next = now + p->dce_tcp_rtt; /* the alpha timer restarts at each CNP */
        return;
    }
    if (first)
        return;
    d->cnp_alpha = true;
    d->cnp_dec = true;
    if (d->dec_next == SIMTIME_NEVER) {
        /* the cut happens at the end of the monitor period this CNP falls in */
        simtime_t P = p->rate_reduce_monitor_period;
        d->dec_next = P ? d->dec_grid + ((now - d->dec_grid) / P + 1) * P : now;
    }
}

static void dcqcn_on_send(struct cc_flow *f, simtime_t now, uint32_t bytes)
{
    struct dcqcn_state *d = &f->u.d;
    const struct dcqcn_params *p = dp(f);
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

const struct cc_ops cc_dcqcn_ops = {
    .name = "dcqcn", .init = dcqcn_init, .advance = dcqcn_advance, .on_cnp = dcqcn_on_cnp,
    .on_send = dcqcn_on_send, .on_ack = cc_ignore_ack, .next_change = dcqcn_next_change, .uses_cnp = true,
    .section = "dcqcn", .keys = cc_dcqcn_keys, .params_size = sizeof(struct dcqcn_params),
    .derive = cc_dcqcn_derive, .validate = cc_dcqcn_validate,
};

void cc_ignore_cnp(struct cc_flow *f, simtime_t now) { (void)f; (void)now; }
void cc_ignore_send(struct cc_flow *f, simtime_t now, uint32_t b) { (void)f; (void)now; (void)b; }
void cc_ignore_ack(struct cc_flow *f, simtime_t now, const struct cc_ack *a) { (void)f; (void)now; (void)a; }
void cc_no_advance(struct cc_flow *f, simtime_t now) { (void)f; (void)now; }
simtime_t cc_never_changes(const struct cc_flow *f) { (void)f; return SIMTIME_NEVER; }

static void none_init(struct cc_flow *f, const struct scenario *s, const struct cc_env *env, simtime_t now)
{
    (void)s;
    (void)now;
    f->env = env;
    f->rate = env->line;
}
const struct cc_ops cc_none_ops = { .name = "none", .init = none_init, .advance = cc_no_advance,
                                    .on_cnp = cc_ignore_cnp, .on_send = cc_ignore_send, .on_ack = cc_ignore_ack,
                                    .next_change = cc_never_changes };
