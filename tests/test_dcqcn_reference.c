/* Each DCQCN preset against a transcription of its reference's pseudo-code, written here
 * independently of models/cc_dcqcn.c: the references are event-driven (every timer is an
 * event in a queue with FIFO ties, as in ns-3), the model is lazy and closed-form. A scripted
 * sequence of CNPs and bytes sent drives both; rate, target rate and alpha must agree to 1e-9
 * at every sample point.
 *
 *  - hpcc_ns3: HPCC ns-3 rdma-hw.cc (models.md 1.3.2): cnp_received_mlx, UpdateAlphaMlx,
 *    CheckRateDecreaseMlx, RateIncEventTimerMlx and the three increase functions.
 *  - dcqcn_paper: models.md 1.3.1 [DCQCN15]: per-CNP cut, alpha timer K, timer T and byte
 *    counter B stages.
 *  - connectx: the firmware semantics of models.md 1.3.3 with the [mstflint] clamp and
 *    rpg_threshold rules: alpha ticks, a gated decrease, min_dec_fac, release at line rate. */
#include <math.h>
#include <string.h>
#include "models/cc.h"
#include "models/cc_dcqcn.h"
#include "tests/cc_testutil.h"
#include "tests/testutil.h"

#define US(x) ((simtime_t)((x) * (double)PS_PER_US))
#define LINE 100e9

/* ---- a tiny event queue: (time, insertion order), cancellable by generation ---- */

enum ev_kind { EV_CNP, EV_BYTES, EV_ALPHA, EV_DECREASE, EV_TIMER, EV_KINDS };
struct ev {
    simtime_t t;
    uint64_t seq;
    enum ev_kind kind;
    uint64_t arg;
    uint32_t gen;
};
struct evq {
    struct ev ev[4096];
    int n;
    uint64_t seq;
    uint32_t gen[EV_KINDS]; /* an event whose gen is stale was cancelled */
};

static void evq_at(struct evq *q, simtime_t t, enum ev_kind k, uint64_t arg)
{
    CU_ASSERT_FATAL(q->n < (int)G_N_ELEMENTS(q->ev));
    q->ev[q->n++] = (struct ev){ t, q->seq++, k, arg, q->gen[k] };
}

static void evq_cancel(struct evq *q, enum ev_kind k) { q->gen[k]++; }

/* Equal times run in insertion order, except that an alpha tick runs before a decrease check
 * (the convention HPCC ns-3 enforces with its 1 ns offset, and the model follows for the
 * firmware, whose order is not documented). */
static bool ev_before(const struct ev *a, const struct ev *b)
{
    if (a->t != b->t)
        return a->t < b->t;
    if ((a->kind == EV_ALPHA) != (b->kind == EV_ALPHA))
        return a->kind == EV_ALPHA;
    return a->seq < b->seq;
}

/* Removes and returns the earliest live event at or before `until`; false if none. */
static bool evq_pop(struct evq *q, simtime_t until, struct ev *out)
{
    for (;;) {
        int best = -1;
        for (int i = 0; i < q->n; i++)
            if (best < 0 || ev_before(&q->ev[i], &q->ev[best]))
                best = i;
        if (best < 0 || q->ev[best].t > until)
            return false;
        *out = q->ev[best];
        q->ev[best] = q->ev[--q->n];
        if (out->kind == EV_CNP || out->kind == EV_BYTES || out->gen == q->gen[out->kind])
            return true;
    }
}

/* ---- the reference reaction points ---- */

struct ref {
    const struct dcqcn_params *p;
    struct evq q;
    double rate, target, alpha;
    bool first, alpha_flag, dec_flag, limited;
    uint32_t t_stage, bc_stage;
    uint64_t bytes;
};

static void ref_init(struct ref *r, const struct dcqcn_params *p)
{
    memset(r, 0, sizeof *r);
    r->p = p;
    r->rate = r->target = LINE;
    r->first = true;
}

/* HPCC ns-3, Mellanox DCQCN (CC_MODE 1) */
static void hpcc_event(struct ref *r, const struct ev *e)
{
    const struct dcqcn_params *p = r->p;
    switch (e->kind) {
    case EV_CNP: /* cnp_received_mlx */
        r->alpha_flag = true;
        r->dec_flag = true;
        if (r->first) {
            r->alpha = 1;
            r->alpha_flag = false;
            evq_at(&r->q, e->t + p->dce_tcp_rtt, EV_ALPHA, 0);
            evq_at(&r->q, e->t + p->rate_reduce_monitor_period + PS_PER_NS, EV_DECREASE, 0);
            r->first = false; /* RateOnFirstCnp = 1.0: rate and target unchanged */
        }
        break;
    case EV_ALPHA: /* UpdateAlphaMlx */
        r->alpha = (1 - p->g) * r->alpha + (r->alpha_flag ? p->g : 0);
        r->alpha_flag = false;
        evq_at(&r->q, e->t + p->dce_tcp_rtt, EV_ALPHA, 0);
        break;
    case EV_DECREASE: /* CheckRateDecreaseMlx */
        evq_at(&r->q, e->t + p->rate_reduce_monitor_period, EV_DECREASE, 0);
        if (r->dec_flag) {
            if (p->clamp_tgt_rate || r->t_stage != 0)
                r->target = r->rate;
            r->rate = fmax((double)p->rpg_min_rate, r->rate * (1 - r->alpha / 2));
            r->t_stage = 0;
            r->dec_flag = false;
            evq_cancel(&r->q, EV_TIMER);
            evq_at(&r->q, e->t + p->rpg_time_reset, EV_TIMER, 0);
        }
        break;
    case EV_TIMER: /* RateIncEventTimerMlx: reschedule, increase by stage, stage++ */
        evq_at(&r->q, e->t + p->rpg_time_reset, EV_TIMER, 0);
        if (r->t_stage < p->rpg_threshold) {
            r->rate = r->rate / 2 + r->target / 2;
        } else {
            r->target = fmin(r->target + (double)(r->t_stage == p->rpg_threshold ? p->rpg_ai_rate : p->rpg_hai_rate),
                             LINE);
            r->rate = r->rate / 2 + r->target / 2;
        }
        r->t_stage++;
        break;
    default:
        break;
    }
}

/* One increase event of the paper and of the firmware: the event's counter counts first;
 * fast recovery while both stages are below F, additive once one reached F, hyper
 * (i = min - F + 1 steps of R_HAI) once both have. */
static void stage_increase(struct ref *r, bool timer)
{
    const struct dcqcn_params *p = r->p;
    uint32_t F = p->rpg_threshold;
    if (timer)
        r->t_stage++;
    else
        r->bc_stage++;
    uint32_t hi = MAX(r->t_stage, r->bc_stage), lo = MIN(r->t_stage, r->bc_stage);
    if (hi >= F && lo < F)
        r->target += (double)p->rpg_ai_rate;
    else if (lo >= F)
        r->target += (double)(lo - F + 1) * (double)p->rpg_hai_rate;
    r->target = fmin(r->target, LINE);
    r->rate = fmax((r->target + r->rate) / 2, (double)p->rpg_min_rate);
}

/* Bytes sent: a byte-counter event per B bytes since the last cut, once congestion began. */
static void byte_events(struct ref *r, uint64_t bytes, void (*on_event)(struct ref *))
{
    if (r->first || !r->p->rpg_byte_reset)
        return;
    r->bytes += bytes;
    while (r->bytes >= r->p->rpg_byte_reset) {
        r->bytes -= r->p->rpg_byte_reset;
        if (r->limited)
            on_event(r);
    }
}

static void paper_byte_event(struct ref *r) { stage_increase(r, false); }

/* [DCQCN15] / models.md 1.3.1 */
static void paper_event(struct ref *r, const struct ev *e)
{
    const struct dcqcn_params *p = r->p;
    switch (e->kind) {
    case EV_CNP:
        if (r->first) {
            r->alpha = p->initial_alpha_value / 1024.0;
            r->first = false;
        }
        r->limited = true;
        r->target = r->rate;                     /* Rt <- Rc */
        r->rate = fmax(r->rate * (1 - r->alpha / 2), (double)p->rpg_min_rate);
        r->alpha = (1 - p->g) * r->alpha + p->g; /* then alpha */
        r->t_stage = r->bc_stage = 0;
        r->bytes = 0;
        evq_cancel(&r->q, EV_TIMER);
        evq_at(&r->q, e->t + p->rpg_time_reset, EV_TIMER, 0);
        evq_cancel(&r->q, EV_ALPHA);
        evq_at(&r->q, e->t + p->dce_tcp_rtt, EV_ALPHA, 0);
        break;
    case EV_ALPHA: /* K without a CNP */
        r->alpha *= 1 - p->g;
        evq_at(&r->q, e->t + p->dce_tcp_rtt, EV_ALPHA, 0);
        break;
    case EV_TIMER:
        stage_increase(r, true);
        evq_at(&r->q, e->t + p->rpg_time_reset, EV_TIMER, 0);
        break;
    case EV_BYTES:
        byte_events(r, e->arg, paper_byte_event);
        break;
    default:
        break;
    }
}

/* ConnectX firmware: back within 0.1% of line rate with the target there, the rate limiter is
 * released; the next CNP starts a new episode. */
static void cx_increase(struct ref *r, bool timer)
{
    stage_increase(r, timer);
    if (r->target >= LINE && r->rate >= LINE * (1 - 1e-3))
        r->rate = LINE;
    if (r->rate >= LINE && r->target >= LINE && !r->dec_flag) {
        r->first = true;
        r->limited = false;
        evq_cancel(&r->q, EV_ALPHA);
        evq_cancel(&r->q, EV_DECREASE);
        evq_cancel(&r->q, EV_TIMER);
    }
}

static void cx_byte_event(struct ref *r) { cx_increase(r, false); }

static void cx_event(struct ref *r, const struct ev *e)
{
    const struct dcqcn_params *p = r->p;
    switch (e->kind) {
    case EV_CNP:
        r->dec_flag = true;
        r->alpha_flag = true;
        if (r->first) {
            r->first = false;
            r->limited = true;
            r->alpha = p->initial_alpha_value / 1024.0;
            r->t_stage = r->bc_stage = 0;
            r->bytes = 0;
            evq_at(&r->q, e->t + p->dce_tcp_rtt, EV_ALPHA, 0);
            evq_at(&r->q, e->t + p->rate_reduce_monitor_period, EV_DECREASE, 0);
        }
        break;
    case EV_ALPHA: /* every dce_tcp_rtt: alpha = g*cnp + (1-g)*alpha */
        r->alpha = (1 - p->g) * r->alpha + (r->alpha_flag ? p->g : 0);
        r->alpha_flag = false;
        evq_at(&r->q, e->t + p->dce_tcp_rtt, EV_ALPHA, 0);
        break;
    case EV_DECREASE: /* every rate_reduce_monitor_period, if a CNP came in it */
        evq_at(&r->q, e->t + p->rate_reduce_monitor_period, EV_DECREASE, 0);
        if (r->dec_flag) {
            bool clamp = p->clamp_tgt_rate || r->bc_stage != 0 ||
                         (p->clamp_tgt_rate_after_time_inc && r->t_stage != 0);
            if (clamp)
                r->target = r->rate;
            double factor = fmax(1 - r->alpha / 2, p->rpg_min_dec_fac / 100.0);
            r->rate = fmax(r->rate * factor, (double)p->rpg_min_rate);
            r->t_stage = r->bc_stage = 0;
            r->bytes = 0;
            r->dec_flag = false;
            evq_cancel(&r->q, EV_TIMER);
            evq_at(&r->q, e->t + p->rpg_time_reset, EV_TIMER, 0);
        }
        break;
    case EV_TIMER:
        evq_at(&r->q, e->t + p->rpg_time_reset, EV_TIMER, 0);
        cx_increase(r, true);
        break;
    case EV_BYTES:
        byte_events(r, e->arg, cx_byte_event);
        break;
    default:
        break;
    }
}

/* ---- the comparison ---- */

/* Script times are whole nanoseconds chosen never to coincide with a timer of either side
 * (the order of equal-time events is a separate rule, tested in test_dcqcn.c). */
struct step {
    uint64_t t_ns;
    enum ev_kind kind; /* EV_CNP or EV_BYTES */
    uint64_t bytes;
};

/* "preset" or "preset,section.key=value" */
static struct scenario *load_preset(const char *preset)
{
    char **parts = g_strsplit(preset, ",", 2);
    char *set = g_strdup_printf("nic.cc_preset=%s", parts[0]);
    const char *sets[] = { set, parts[1], NULL };
    struct scenario *s = test_scenario_load("dcqcn_unit.ini", sets);
    g_free(set);
    g_strfreev(parts);
    return s;
}

/* Drives the model and the reference through the script, then compares them every 0.5 us up
 * to `end_us`. Returns how many samples had the QP rate-limited (so a script that never
 * exercises the algorithm fails). */
static int compare(const char *preset, void (*ref_event)(struct ref *, const struct ev *), const struct step *steps,
                   int nsteps, double end_us)
{
    struct scenario *s = load_preset(preset);
    struct cc_flow f;
    memset(&f, 0, sizeof f);
    cc_dcqcn_ops.init(&f, s, cc_test_env_for(s, &cc_dcqcn_ops, LINE), 0);
    struct ref *r = g_new(struct ref, 1);
    ref_init(r, cc_dcqcn_params(s));
    for (int i = 0; i < nsteps; i++)
        evq_at(&r->q, steps[i].t_ns * PS_PER_NS, steps[i].kind, steps[i].bytes);
    int next = 0, limited = 0, bad = 0;
    for (double t_us = 0; t_us <= end_us; t_us += 0.5) {
        simtime_t t = US(t_us);
        struct ev e;
        /* script steps at or before t, in order, interleaved with the reference's timers */
        while (evq_pop(&r->q, t, &e)) {
            if (e.kind == EV_CNP || e.kind == EV_BYTES) {
                CU_ASSERT_EQUAL_FATAL(e.t, steps[next].t_ns * PS_PER_NS);
                if (e.kind == EV_CNP)
                    cc_dcqcn_ops.on_cnp(&f, e.t);
                else {
                    cc_dcqcn_ops.advance(&f, e.t);
                    cc_dcqcn_ops.on_send(&f, e.t, (uint32_t)e.arg);
                }
                next++;
            }
            ref_event(r, &e);
        }
        cc_dcqcn_ops.advance(&f, t);
        if (f.rate < LINE)
            limited++;
        bool ok = fabs(f.rate - r->rate) <= 1e-9 * LINE && fabs(f.u.d.rt - r->target) <= 1e-9 * LINE &&
                  (!f.u.d.active || fabs(f.u.d.alpha - r->alpha) <= 1e-9);
        if (!ok && bad++ < 3)
            printf("\n    %s at %.1f us: rate %.6f vs %.6f, target %.6f vs %.6f, alpha %.12f vs %.12f ", preset, t_us,
                   f.rate / 1e9, r->rate / 1e9, f.u.d.rt / 1e9, r->target / 1e9, f.u.d.alpha, r->alpha);
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(next, nsteps);
    g_free(r);
    scenario_free(s);
    return limited;
}

/* Persistent marking for a while (a CNP-flagged ACK every 0.73 us), quiet long enough for the
 * timer to go through fast recovery, additive and hyper increase, then a second episode. */
static void test_hpcc_ns3(void)
{
    struct step st[400];
    int n = 0;
    for (uint64_t t = 10300; t < 60000; t += 730)
        st[n++] = (struct step){ t, EV_CNP, 0 };
    for (uint64_t t = 1500200; t < 1520000; t += 930)
        st[n++] = (struct step){ t, EV_CNP, 0 };
    st[n++] = (struct step){ 2900450, EV_CNP, 0 };
    CU_ASSERT(compare("hpcc_ns3", hpcc_event, st, n, 6000) > 1000);
}

/* CNPs spaced by the paper's 50 us, bytes at 100 Gb/s (1 MB every 80 us), then recovery
 * through the timer and the 10 MB byte counter into hyper increase. */
static void test_dcqcn_paper(void)
{
    struct step st[400];
    int n = 0;
    for (uint64_t t = 5100; t < 400000; t += 50300)
        st[n++] = (struct step){ t, EV_CNP, 0 };
    for (uint64_t t = 401700; t < 4000000; t += 80000)
        st[n++] = (struct step){ t, EV_BYTES, 1000000 };
    st[n++] = (struct step){ 4100350, EV_CNP, 0 };
    CU_ASSERT(compare("dcqcn_paper", paper_event, st, n, 6000) > 1000);
}

/* ConnectX: CNPs every 2.33 us for 40 us; bytes in 9000-byte bursts as a 100G sender would
 * send them, with CNPs between byte-counter increases (a clamp after a byte increase); a quiet
 * spell where only the timer increases, then a CNP (a clamp after a timer increase, by
 * clamp_tgt_rate_after_time_inc); recovery to line rate (release) and a new episode. The same
 * script with clamp_tgt_rate_after_time_inc off must agree as well. */
static void connectx_script(const char *variant)
{
    struct step st[1600];
    int n = 0;
    for (uint64_t t = 3300; t < 43000; t += 2330)
        st[n++] = (struct step){ t, EV_CNP, 0 };
    for (uint64_t t = 50050; t < 500000; t += 2500) {
        st[n++] = (struct step){ t, EV_BYTES, 9000 };
        if (t == 120050 || t == 250050)
            st[n++] = (struct step){ t + 720, EV_CNP, 0 };
    }
    st[n++] = (struct step){ 900130, EV_CNP, 0 };
    for (uint64_t t = 1200050; t < 3000000; t += 2500)
        st[n++] = (struct step){ t, EV_BYTES, 9000 };
    st[n++] = (struct step){ 3500150, EV_CNP, 0 };
    st[n++] = (struct step){ 3503400, EV_CNP, 0 };
    CU_ASSERT(n <= (int)G_N_ELEMENTS(st));
    CU_ASSERT(compare(variant, cx_event, st, n, 5000) > 1000);
}

static void test_connectx(void) { connectx_script("connectx"); }
static void test_connectx_no_flags(void) { connectx_script("connectx,dcqcn.clamp_tgt_rate_after_time_inc=off"); }
static void test_connectx_clamp_always(void) { connectx_script("connectx,dcqcn.clamp_tgt_rate=on"); }

static CU_TestInfo tests[] = {
    { "hpcc_ns3 = HPCC ns-3 RdmaHw::*Mlx, event by event", test_hpcc_ns3 },
    { "dcqcn_paper = the SIGCOMM 2015 reaction point", test_dcqcn_paper },
    { "connectx = the firmware's documented semantics", test_connectx },
    { "connectx without clamp flags", test_connectx_no_flags },
    { "connectx with clamp_tgt_rate", test_connectx_clamp_always },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("dcqcn against reference transcriptions", tests)
