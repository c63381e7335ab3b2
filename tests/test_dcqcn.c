/* DCQCN reaction point (models/cc_dcqcn.c) driven by hand: CNPs, lazy advance() and bytes
 * sent at chosen times, compared with rates and alpha worked out below from
 * shared/reference/models.md 1.3.1 (paper) and 1.3.2/1.3.3 (gated, ConnectX firmware).
 *
 * Notation: a0 = initial_alpha_value/1024; g = (1024 - dce_tcp_g)/1024; q = 1 - g.
 * connectx preset: g = 5/1024, q = 1019/1024 = 0.9951171875, a0 = 1023/1024, alpha tick
 * K = 1 us, decrease gate 4 us, T = 300 us, B = 32767 B, F = 1, R_AI = 5 Mb/s,
 * R_HAI = 50 Mb/s, R_min = 1 Mb/s, rpg_min_dec_fac = 50 %, clamp_tgt_rate off,
 * clamp_tgt_rate_after_time_inc on. Line rate 100 Gb/s throughout. */
#include <math.h>
#include <string.h>
#include "models/cc.h"
#include "models/cc_dcqcn.h"
#include "tests/cc_testutil.h"
#include "tests/testutil.h"

#define US(x) ((simtime_t)((x) * (double)PS_PER_US))
#define LINE 100e9

/* ---- helpers ---- */

/* tests/scenarios/dcqcn_unit.ini with "section.key=value" overrides, presets filled in. */
static struct scenario *load(const char *const *sets)
{
    return test_scenario_load("dcqcn_unit.ini", sets);
}

static const struct cc_ops *D = &cc_dcqcn_ops;

static void start(struct cc_flow *f, const struct scenario *s)
{
    memset(f, 0, sizeof *f);
    D->init(f, s, cc_test_env_for(s, D, LINE), 0);
}

/* relative tolerance 1e-9: the arithmetic is the same, only the order of float ops may differ */
#define ASSERT_RATE(actual, expected) CU_ASSERT_DOUBLE_EQUAL((actual), (expected), fabs(expected) * 1e-9 + 1e-3)
#define ASSERT_ALPHA(actual, expected) CU_ASSERT_DOUBLE_EQUAL((actual), (expected), 1e-12)

/* ---- gated style (connectx preset) ---- */

/* First CNP at 10 us: no immediate cut; the cut comes at the end of the monitor period
 * (14 us), using alpha as updated by the ticks at 11, 12, 13 and 14 us.
 *   tick 11 (CNP seen): alpha = q*a0 + g = 0.9951171875*0.9990234375 + 0.0048828125
 *                             = 0.99414825439 + 0.0048828125 = 0.99903106689
 *   ticks 12, 13, 14 (quiet): alpha *= q^3 = 0.98542779 -> a = 0.98446534340054
 *   Rc = 100e9 * (1 - a/2) = 100e9 * 0.50776732829973 = 50776732829.97 b/s
 * Rt stays at line rate (clamp_tgt_rate off, no timer increase yet). No CNP in (14, 18]:
 * no cut at 18 us; alpha keeps decaying: a*q^4 = 0.96537787569146. */
static void test_first_cnp_gated(void)
{
    struct scenario *s = load(NULL);
    struct cc_flow f;
    start(&f, s);
    CU_ASSERT_EQUAL(f.rate, LINE);
    CU_ASSERT_EQUAL(f.u.d.rt, LINE);
    CU_ASSERT_EQUAL(D->next_change(&f), SIMTIME_NEVER);
    D->advance(&f, US(5)); /* nothing happens before a CNP */
    CU_ASSERT_EQUAL(f.rate, LINE);

    D->on_cnp(&f, US(10));
    CU_ASSERT_EQUAL(f.rate, LINE);              /* gated: no cut yet */
    CU_ASSERT_EQUAL(D->next_change(&f), US(14));
    D->advance(&f, US(14) - 1);
    CU_ASSERT_EQUAL(f.rate, LINE);
    D->advance(&f, US(14));
    ASSERT_ALPHA(f.u.d.alpha, 0.98446534340054281);
    ASSERT_RATE(f.rate, 50776732829.972862);
    CU_ASSERT_EQUAL(f.u.d.rt, LINE);
    /* next events: the decrease check at 18 us, the increase timer at 14 + 300 us */
    CU_ASSERT_EQUAL(D->next_change(&f), US(18));
    CU_ASSERT_EQUAL(f.u.d.inc_next, US(314));

    D->advance(&f, US(18)); /* a period without CNP: no cut */
    ASSERT_RATE(f.rate, 50776732829.972862);
    ASSERT_ALPHA(f.u.d.alpha, 0.9653778756914646);
    CU_ASSERT_EQUAL(D->next_change(&f), US(314));
    scenario_free(s);
}

/* Four CNPs inside one monitor period (10, 11, 12, 13 us) give one cut at 14 us, with
 * alpha raised at each of the four ticks:
 *   alpha = 1 - q^4 (1 - a0) = 1 - 0.98062 * (1/1024) = 0.99904237174213
 *   Rc = 100e9 (1 - 0.99904237/2) = 50047881412.89 */
static void test_one_cut_per_period(void)
{
    struct scenario *s = load(NULL);
    struct cc_flow f;
    start(&f, s);
    for (int t = 10; t <= 13; t++) {
        D->on_cnp(&f, US(t));
        CU_ASSERT_EQUAL(f.rate, LINE);
    }
    D->advance(&f, US(14));
    ASSERT_ALPHA(f.u.d.alpha, 0.99904237174213417);
    ASSERT_RATE(f.rate, 50047881412.893288);
    scenario_free(s);
}

/* rpg_min_dec_fac = 80: one cut keeps at least 80 % of the rate (alpha/2 = 0.49 would cut
 * to 51 %): 100e9 -> 80e9, then 64e9. */
static void test_min_dec_fac_floor(void)
{
    const char *sets[] = { "dcqcn.rpg_min_dec_fac=80", NULL };
    struct scenario *s = load(sets);
    struct cc_flow f;
    start(&f, s);
    D->on_cnp(&f, 0);
    D->advance(&f, US(4));
    ASSERT_RATE(f.rate, 80e9);
    D->on_cnp(&f, US(5));
    D->advance(&f, US(8));
    ASSERT_RATE(f.rate, 64e9);
    scenario_free(s);
}

/* Rate never below rpg_min_rate: with rpg_min_rate = 60Gbps and no floor factor, the first
 * cut (to 50.78 Gb/s) stops at 60 Gb/s, and so does every later one. With the hpcc_ns3
 * preset (R_min = 1 Gb/s, no floor factor), a CNP every 4 us for 2 ms drives the rate down
 * geometrically to 1 Gb/s and no further. */
static void test_min_rate(void)
{
    const char *sets[] = { "dcqcn.rpg_min_dec_fac=0", "dcqcn.rpg_min_rate=60Gbps", NULL };
    struct scenario *s = load(sets);
    struct cc_flow f;
    start(&f, s);
    for (int t = 0; t < 40; t += 4) {
        D->on_cnp(&f, US(t));
        D->advance(&f, US(t + 4));
        CU_ASSERT_EQUAL(f.rate, 60e9);
    }
    scenario_free(s);

    const char *hp[] = { "nic.cc_preset=hpcc_ns3", NULL };
    s = load(hp);
    CU_ASSERT_EQUAL(cc_dcqcn_params(s)->rpg_min_rate, 1000000000);
    start(&f, s);
    double lowest = LINE;
    for (int t = 0; t < 2000; t += 4) {
        D->on_cnp(&f, US(t));
        D->advance(&f, US(t) + US(2));
        if (f.rate < lowest)
            lowest = f.rate;
    }
    CU_ASSERT_EQUAL(lowest, 1e9);
    CU_ASSERT_EQUAL(f.rate, 1e9);
    scenario_free(s);
}

/* Increase stages, gated style (connectx), with clamp_tgt_rate = on and the byte counter off.
 * The firmware rule [mstflint rpg_threshold, ns3-rdma rpr_active_select]: the timer stage
 * counts first; fast recovery while both stages are below F, additive increase once one has
 * reached F, hyper increase only once both have. With F = 1 and no byte counter every timer
 * event is an additive increase and hyper increase never comes.
 *   CNP 0 us  -> cut at 4 us with alpha a = 0.98446534 (as in test_first_cnp_gated):
 *                Rt = 100e9 (clamped to Rc before the cut), R1 = 50776732829.97
 *   CNP 5 us  -> tick 5 quiet (alpha = a q), ticks 6 (CNP), 7, 8:
 *                aB = (q * a q + g) q^2 = 0.97021312089097
 *                cut at 8 us: Rt = R1, R2 = R1 (1 - aB/2) = 26144606616.17
 *   timer at 308 us (T = 1, BC = 0): additive, Rt = R1 + 5e6, R3 = (Rt + R2)/2 = 38463169723.07
 *   608 us: Rt = R1 + 10e6, R4 = 44624951276.52
 *   908 us: Rt = R1 + 15e6, R5 = 47708342053.25
 *   1208 us: Rt = R1 + 20e6, R6 = 49252537441.61 */
static void test_increase_timer_stages(void)
{
    const char *sets[] = { "dcqcn.clamp_tgt_rate=on", "dcqcn.rpg_byte_reset=0B", NULL };
    struct scenario *s = load(sets);
    const double R1 = 50776732829.972862;
    struct cc_flow f, jump;
    start(&f, s);
    D->on_cnp(&f, 0);
    D->advance(&f, US(4));
    CU_ASSERT_EQUAL(f.u.d.rt, LINE);
    ASSERT_RATE(f.rate, R1);
    D->on_cnp(&f, US(5));
    D->advance(&f, US(8));
    ASSERT_ALPHA(f.u.d.alpha, 0.97021312089096601);
    ASSERT_RATE(f.u.d.rt, R1);
    ASSERT_RATE(f.rate, 26144606616.165493);
    jump = f; /* a copy that is not touched until 1208 us */
    D->advance(&f, US(12));
    CU_ASSERT_EQUAL(D->next_change(&f), US(308));
    D->advance(&f, US(308) - 1);
    ASSERT_RATE(f.rate, 26144606616.165493);
    D->advance(&f, US(308));
    ASSERT_RATE(f.rate, 38463169723.069176);
    ASSERT_RATE(f.u.d.rt, R1 + 5e6);
    CU_ASSERT_EQUAL(D->next_change(&f), US(608));
    D->advance(&f, US(608));
    ASSERT_RATE(f.u.d.rt, R1 + 10e6);
    ASSERT_RATE(f.rate, 44624951276.521019);
    D->advance(&f, US(908));
    ASSERT_RATE(f.u.d.rt, R1 + 15e6);
    ASSERT_RATE(f.rate, 47708342053.246941);
    D->advance(&f, US(1208));
    ASSERT_RATE(f.u.d.rt, R1 + 20e6);
    ASSERT_RATE(f.rate, 49252537441.609901);
    /* lazy evaluation: one advance() over the same span gives the same state */
    D->advance(&jump, US(1208));
    ASSERT_RATE(jump.rate, f.rate);
    ASSERT_RATE(jump.u.d.rt, f.u.d.rt);
    ASSERT_ALPHA(jump.u.d.alpha, f.u.d.alpha);
    CU_ASSERT_EQUAL(jump.u.d.t_stage, f.u.d.t_stage);
    CU_ASSERT_EQUAL(D->next_change(&jump), D->next_change(&f));
    scenario_free(s);
}

/* The byte counter (B = 32767 B) counts from the first CNP, and a partial count carries over.
 * Same set-up as above (R1, R2; clamp on), then:
 *   10 us, 32766 B: nothing; +1 B: BC = 1 (T = 0): additive, Rt = R1 + 5e6, Rc = 38463169723.07
 *   40000 B: one event (7233 B carried): BC = 2: additive, Rt = R1 + 10e6, Rc = 44624951276.52
 *   timer 308 us: T = 1, BC = 2: both reached F = 1: hyper, i = min - F + 1 = 1:
 *       Rt = R1 + 60e6, Rc = 47730842053.25
 *   309 us, 25534 B (with the 7233 carried: one event): BC = 3, i = 1: Rt = R1 + 110e6,
 *       Rc = 49308787441.61
 *   timer 608 us: T = 2, BC = 3: i = 2: Rt = R1 + 210e6, Rc = 50147760135.79 */
static void test_byte_counter(void)
{
    const char *sets[] = { "dcqcn.clamp_tgt_rate=on", NULL };
    struct scenario *s = load(sets);
    const double R1 = 50776732829.972862;
    struct cc_flow f;
    start(&f, s);
    D->on_send(&f, 0, 10000000); /* before any CNP: no effect */
    CU_ASSERT_EQUAL(f.rate, LINE);
    CU_ASSERT_FALSE(f.u.d.active);
    D->on_cnp(&f, 0);
    D->advance(&f, US(4));
    D->on_cnp(&f, US(5));
    D->advance(&f, US(8));
    ASSERT_RATE(f.rate, 26144606616.165493);
    D->on_send(&f, US(10), 32766);
    ASSERT_RATE(f.rate, 26144606616.165493);
    D->on_send(&f, US(10), 1);
    ASSERT_RATE(f.u.d.rt, R1 + 5e6);
    ASSERT_RATE(f.rate, 38463169723.069176);
    D->on_send(&f, US(10), 40000);
    ASSERT_RATE(f.u.d.rt, R1 + 10e6);
    ASSERT_RATE(f.rate, 44624951276.521019);
    CU_ASSERT_EQUAL(f.u.d.bytes_since_inc, 7233);
    D->advance(&f, US(308));
    ASSERT_RATE(f.u.d.rt, R1 + 60e6);
    ASSERT_RATE(f.rate, 47730842053.246941);
    D->on_send(&f, US(309), 25533);
    ASSERT_RATE(f.rate, 47730842053.246941);
    D->on_send(&f, US(309), 1);
    ASSERT_RATE(f.u.d.rt, R1 + 110e6);
    ASSERT_RATE(f.rate, 49308787441.609901);
    D->advance(&f, US(608));
    ASSERT_RATE(f.u.d.rt, R1 + 210e6);
    ASSERT_RATE(f.rate, 50147760135.791382);
    scenario_free(s);
}

/* Target clamp [mstflint]: without a flag, a decrease sets Rt <- Rc only after a byte-counter
 * increase; clamp_tgt_rate_after_time_inc adds timer increases; clamp_tgt_rate always.
 * connectx defaults (after_time_inc on):
 *   CNP 0 -> cut at 4 us: no increase yet, Rt stays 100e9, R1 = 50776732829.97
 *   CNP 5 -> cut at 8 us: Rt still 100e9, R2 = R1 (1 - aB/2) = 26144606616.17
 *   timer 308 us: additive, Rt = min(100e9 + 5e6, line) = 100e9, R3 = (100e9 + R2)/2
 *       = 63072303308.08
 *   CNP 310 us -> cut at 312 us, the end of the monitor period it falls in (the checks stay
 *       on the 4 us grid of the first CNP); a timer increase came before: Rt = R3.
 *       alpha: aB at 8 us, 302 quiet ticks (9..310), tick 311 with the CNP, 312 quiet:
 *       aC = (q^303 aB + g) q = 0.22395386797121
 *       R4 = R3 (1 - aC/2) = 56009660164.23
 *   bytes 32767 at 320 us: additive, Rt = R3 + 5e6, R5 = (Rt + R4)/2 = 59543481736.16
 *   CNP 330 us -> cut at 332 us: a byte-counter increase came before: Rt = R5.
 * Both flags off: the timer increase at 308 us does not clamp (Rt stays 100e9 at 312 us); the
 * byte-counter increase at 320 us does. */
static void test_clamp_semantics(void)
{
    const double R3 = 63072303308.082748, R5 = 59543481736.158089;
    for (int flags_off = 0; flags_off <= 1; flags_off++) {
        const char *off[] = { "dcqcn.clamp_tgt_rate_after_time_inc=off", NULL };
        struct scenario *s = load(flags_off ? off : NULL);
        struct cc_flow f;
        start(&f, s);
        D->on_cnp(&f, 0);
        D->advance(&f, US(4));
        D->on_cnp(&f, US(5));
        D->advance(&f, US(8));
        CU_ASSERT_EQUAL(f.u.d.rt, LINE);
        ASSERT_RATE(f.rate, 26144606616.165493);
        D->advance(&f, US(308));
        ASSERT_RATE(f.rate, R3);
        D->on_cnp(&f, US(310));
        D->advance(&f, US(311));
        ASSERT_RATE(f.rate, R3); /* not cut before the grid point */
        D->advance(&f, US(312));
        ASSERT_ALPHA(f.u.d.alpha, 0.22395386797121253);
        ASSERT_RATE(f.rate, 56009660164.23343);
        if (flags_off) {
            CU_ASSERT_EQUAL(f.u.d.rt, LINE);
        } else {
            ASSERT_RATE(f.u.d.rt, R3);
            D->on_send(&f, US(320), 32767);
            ASSERT_RATE(f.u.d.rt, R3 + 5e6);
            ASSERT_RATE(f.rate, R5);
            D->on_cnp(&f, US(330));
            D->advance(&f, US(332));
            ASSERT_RATE(f.u.d.rt, R5);
            CU_ASSERT(f.rate < R5);
        }
        scenario_free(s);
    }
    /* flags off, a byte-counter increase then a CNP: clamped */
    const char *off[] = { "dcqcn.clamp_tgt_rate_after_time_inc=off", NULL };
    struct scenario *s = load(off);
    struct cc_flow f;
    start(&f, s);
    D->on_cnp(&f, 0);
    D->advance(&f, US(4));
    D->on_send(&f, US(5), 32767); /* additive toward Rt = 100e9: Rc = (100e9 + R1)/2 */
    double rc = (LINE + 50776732829.972862) / 2;
    ASSERT_RATE(f.rate, rc);
    D->on_cnp(&f, US(6));
    D->advance(&f, US(8));
    ASSERT_RATE(f.u.d.rt, rc);
    scenario_free(s);
}

/* Back to line rate: after the first cut (R1, Rt = 100e9) the distance to line rate is
 * D0 = 100e9 a/2 = 49223267170.03; each byte-counter event (additive, with Rt capped at line
 * rate) halves it. After 8 byte-counter
 * events D0/256 = 192278387 b/s is still above 0.1 % of line rate (1e8): the QP stays
 * limited; the 9th (D0/512 = 96139194 < 1e8) releases it at exactly 100e9. The next CNP
 * starts a new episode with alpha from initial_alpha_value: the cut at +4 us is R1 again. */
static void test_release_to_line_rate(void)
{
    struct scenario *s = load(NULL);
    const double R1 = 50776732829.972862, D0 = 49223267170.027138;
    struct cc_flow f;
    start(&f, s);
    D->on_cnp(&f, 0);
    D->advance(&f, US(4));
    ASSERT_RATE(f.rate, R1);
    D->on_send(&f, US(5), 8 * 32767);
    ASSERT_RATE(f.rate, LINE - D0 / 256);
    CU_ASSERT(f.u.d.active);
    D->on_send(&f, US(5), 32767);
    CU_ASSERT_EQUAL(f.rate, LINE);
    CU_ASSERT_FALSE(f.u.d.active);
    CU_ASSERT_EQUAL(D->next_change(&f), SIMTIME_NEVER);
    D->advance(&f, US(10000));
    CU_ASSERT_EQUAL(f.rate, LINE);
    D->on_send(&f, US(10000), 1000000);
    CU_ASSERT_EQUAL(f.rate, LINE);
    /* a new congestion episode */
    D->on_cnp(&f, US(10000));
    CU_ASSERT_EQUAL(f.rate, LINE);
    D->advance(&f, US(10004));
    ASSERT_ALPHA(f.u.d.alpha, 0.98446534340054281);
    ASSERT_RATE(f.rate, R1);
    scenario_free(s);
}

/* release_at_line_rate = off (the hpcc_ns3 and dcqcn_paper presets): back at line rate the QP
 * keeps its DCQCN state, so a CNP long after recovery cuts with the decayed alpha, not with
 * the initial one. Alpha at 4 us is 0.98446534340054281; quiet ticks 5..10000 (9996), the
 * CNP at 10000 us marks tick 10001, quiet 10002..10004, cut at 10004 us (grid 0 + k 4 us):
 *   a = ((a4 q^9996) q + g) q^3 = 0.004811..., R = 100e9 (1 - a/2)
 * Without the release there is no snap to line rate either: 9 byte events leave the gap
 * D0/512 (see test_release_to_line_rate); each further one halves it, and once it is below
 * half an ulp of 100e9 (2^-17 b/s; D0/512 = 9.6e7 needs 43 more halvings) Rc is line rate. */
static void test_keep_state_without_release(void)
{
    const char *sets[] = { "dcqcn.release_at_line_rate=off", NULL };
    struct scenario *s = load(sets);
    struct cc_flow f;
    start(&f, s);
    D->on_cnp(&f, 0);
    D->advance(&f, US(4));
    D->on_send(&f, US(5), 9 * 32767);
    ASSERT_RATE(f.rate, LINE - 49223267170.027138 / 512);
    CU_ASSERT(f.rate < LINE);
    D->on_send(&f, US(5), 64 * 32767);
    CU_ASSERT_EQUAL(f.rate, LINE);
    CU_ASSERT(f.u.d.active);
    D->advance(&f, US(9)); /* the decrease check at 8 us finds no CNP and stops */
    CU_ASSERT_EQUAL(D->next_change(&f), SIMTIME_NEVER);
    D->on_cnp(&f, US(10000));
    D->advance(&f, US(10003));
    CU_ASSERT_EQUAL(f.rate, LINE);
    D->advance(&f, US(10004));
    ASSERT_ALPHA(f.u.d.alpha, 0.0048116356038008234);
    ASSERT_RATE(f.rate, 99759418219.80995);
    scenario_free(s);
}

/* rate_to_set_on_first_cnp = 40Gbps: the first CNP sets Rc = Rt = 40 Gb/s at once, the gated
 * cut follows at 4 us: 40e9 (1 - a/2) = 20310693131.99. rpg_max_rate = 50Gbps caps the
 * starting rate. */
static void test_first_cnp_rate_and_max_rate(void)
{
    const char *sets[] = { "dcqcn.rate_to_set_on_first_cnp=40Gbps", NULL };
    struct scenario *s = load(sets);
    struct cc_flow f;
    start(&f, s);
    D->on_cnp(&f, 0);
    CU_ASSERT_EQUAL(f.rate, 40e9);
    CU_ASSERT_EQUAL(f.u.d.rt, 40e9);
    D->advance(&f, US(4));
    ASSERT_RATE(f.rate, 40e9 * (1 - 0.98446534340054281 / 2));
    scenario_free(s);

    const char *cap[] = { "dcqcn.rpg_max_rate=50Gbps", NULL };
    s = load(cap);
    start(&f, s);
    CU_ASSERT_EQUAL(f.rate, 50e9);
    CU_ASSERT_EQUAL(f.env->line, LINE);
    scenario_free(s);
}

/* ---- paper style (dcqcn_paper preset): g = 1/256, K = 55 us, T = 55 us, B = 10 MB, F = 5,
 * R_AI = 40 Mb/s, R_HAI = 200 Mb/s, R_min = 100 Mb/s, Rt <- Rc on every CNP ---- */

/* Each CNP cuts at once with the alpha it finds, then raises alpha:
 *   CNP 0: alpha = 1 (initial 1024/1024); Rt = 100e9, Rc = 100e9 (1 - 1/2) = 50e9;
 *          alpha = (1-g) 1 + g = 1
 *   55 us: timer, fast recovery Rc = (100 + 50)/2 = 75e9; alpha tick: alpha = 255/256
 *   110 us: Rc = (100 + 75)/2 = 87.5e9; alpha = (255/256)^2 = 0.99220275878906
 *   CNP 120 us: Rt = 87.5e9, Rc = 87.5e9 (1 - 0.99220276/2) = 44091129302.98;
 *          alpha = (255/256)^3 + 1/256 = 0.99223321676254 */
static void test_paper_cut_and_alpha(void)
{
    const char *sets[] = { "nic.cc_preset=dcqcn_paper", NULL };
    struct scenario *s = load(sets);
    CU_ASSERT_EQUAL_FATAL(cc_dcqcn_params(s)->style, DCQCN_PAPER);
    struct cc_flow f;
    start(&f, s);
    D->on_cnp(&f, 0);
    CU_ASSERT_EQUAL(f.rate, 50e9);
    CU_ASSERT_EQUAL(f.u.d.rt, LINE);
    ASSERT_ALPHA(f.u.d.alpha, 1.0);
    CU_ASSERT_EQUAL(D->next_change(&f), US(55));
    D->advance(&f, US(55));
    ASSERT_RATE(f.rate, 75e9);
    ASSERT_ALPHA(f.u.d.alpha, 255.0 / 256);
    D->advance(&f, US(110));
    ASSERT_RATE(f.rate, 87.5e9);
    ASSERT_ALPHA(f.u.d.alpha, 0.9922027587890625);
    D->on_cnp(&f, US(120));
    ASSERT_RATE(f.u.d.rt, 87.5e9);
    ASSERT_RATE(f.rate, 44091129302.978516);
    ASSERT_ALPHA(f.u.d.alpha, 0.99223321676254272);
    /* the timers restart at the CNP */
    CU_ASSERT_EQUAL(f.u.d.inc_next, US(175));
    CU_ASSERT_EQUAL(f.u.d.alpha_next, US(175));
    scenario_free(s);
}

/* Paper stages: timer and byte counter count separately; fast recovery while both < F,
 * additive once one reaches F, hyper (i = min(T, BC) - F + 1) once both have.
 *   CNP 0: Rc = 50e9, Rt = 100e9; CNP 1 us: Rt = 50e9, Rc = 25e9 (alpha still 1)
 *   50 MB sent at 2 us = 5 byte events:
 *     BC 1-4 fast recovery: 37.5, 43.75, 46.875, 48.4375 (e9)
 *     BC 5 (T 0): additive: Rt = 50.04e9, Rc = (50.04 + 48.4375)/2 = 49.23875e9
 *   timer (from the CNP at 1 us) at 56, 111, 166, 221 us: T 1-4, additive each:
 *     Rt 50.08, 50.12, 50.16, 50.20; Rc 49.659375, 49.8896875, 50.02484375, 50.112421875
 *   276 us: T 5, BC 5: hyper i = 1: Rt = 50.40, Rc = 50.2562109375
 *   10 MB at 280 us: BC 6, min = 5: i = 1: Rt = 50.60, Rc = 50.42810546875
 *   331 us: T 6, min = 6: i = 2: Rt = 51.00, Rc = 50.714052734375 */
static void test_paper_stages(void)
{
    const char *sets[] = { "nic.cc_preset=dcqcn_paper", NULL };
    struct scenario *s = load(sets);
    struct cc_flow f;
    start(&f, s);
    D->on_cnp(&f, 0);
    D->on_cnp(&f, US(1));
    CU_ASSERT_EQUAL(f.u.d.rt, 50e9);
    CU_ASSERT_EQUAL(f.rate, 25e9);
    D->on_send(&f, US(2), 50000000);
    ASSERT_RATE(f.u.d.rt, 50.04e9);
    ASSERT_RATE(f.rate, 49.23875e9);
    CU_ASSERT_EQUAL(f.u.d.bc_stage, 5);
    static const double rt[] = { 50.08e9, 50.12e9, 50.16e9, 50.20e9, 50.40e9 };
    static const double rc[] = { 49.659375e9, 49.8896875e9, 50.02484375e9, 50.112421875e9, 50.2562109375e9 };
    for (int i = 0; i < 5; i++) {
        D->advance(&f, US(56 + 55 * i));
        ASSERT_RATE(f.u.d.rt, rt[i]);
        ASSERT_RATE(f.rate, rc[i]);
    }
    D->on_send(&f, US(280), 10000000);
    ASSERT_RATE(f.u.d.rt, 50.60e9);
    ASSERT_RATE(f.rate, 50.42810546875e9);
    D->advance(&f, US(331));
    ASSERT_RATE(f.u.d.rt, 51.00e9);
    ASSERT_RATE(f.rate, 50.714052734375e9);
    scenario_free(s);
}

/* Paper style: CNPs 1 us apart halve the rate (alpha stays 1) down to R_min = 100 Mb/s:
 * 100e9 / 2^10 = 97.7e6 would be below it. */
static void test_paper_min_rate(void)
{
    const char *sets[] = { "nic.cc_preset=dcqcn_paper", NULL };
    struct scenario *s = load(sets);
    struct cc_flow f;
    start(&f, s);
    double expect = LINE;
    for (int i = 0; i < 12; i++) {
        D->on_cnp(&f, US(i));
        expect = fmax(expect / 2, 100e6);
        ASSERT_RATE(f.rate, expect);
        CU_ASSERT(f.rate >= 100e6);
    }
    CU_ASSERT_EQUAL(f.rate, 100e6);
    scenario_free(s);
}

/* cc=none: the rate is the line rate whatever happens, CNPs included (the NIC counts them). */
static void test_cc_none(void)
{
    struct scenario *s = load(NULL);
    const struct cc_ops *n = cc_ops_for(CC_ID_none);
    CU_ASSERT_PTR_EQUAL(cc_ops_for(CC_ID_dcqcn), &cc_dcqcn_ops);
    struct cc_flow f;
    memset(&f, 0, sizeof f);
    n->init(&f, s, cc_test_env_for(s, n, LINE), 0);
    n->on_cnp(&f, US(1));
    n->advance(&f, US(100));
    n->on_send(&f, US(100), 1000000);
    CU_ASSERT_EQUAL(f.rate, LINE);
    CU_ASSERT_EQUAL(n->next_change(&f), SIMTIME_NEVER);
    scenario_free(s);
}

/* The contract the NIC's pacing relies on (cc.h, nic.c nic_dequeue): after advance(t),
 * on_send(t) leaves no change due by t, so advancing again at t changes nothing. Over a
 * congestion episode of every preset, with byte-counter increases and the release at line
 * rate among the sends. */
static void test_send_leaves_nothing_due(void)
{
    const char *presets[] = { "nic.cc_preset=connectx", "nic.cc_preset=dcqcn_paper", "nic.cc_preset=hpcc_ns3" };
    for (size_t k = 0; k < G_N_ELEMENTS(presets); k++) {
        const char *sets[] = { presets[k], NULL };
        struct scenario *s = load(sets);
        struct cc_flow f;
        start(&f, s);
        D->on_cnp(&f, 0);
        bool was_active = false, released = false;
        for (simtime_t t = US(1); t <= US(3000); t += US(7)) {
            if (t == US(50) || t == US(400))
                D->on_cnp(&f, t);
            D->advance(&f, t);
            bool active = f.u.d.active;
            was_active |= active;
            D->on_send(&f, t, 40000); /* past rpg_byte_reset: increases by the byte counter */
            released |= active && !f.u.d.active;
            CU_ASSERT(D->next_change(&f) > t);
            struct cc_flow before = f;
            D->advance(&f, t);
            CU_ASSERT(memcmp(&before, &f, sizeof f) == 0);
        }
        CU_ASSERT(was_active);
        if (k == 0)
            CU_ASSERT(released); /* connectx releases at line rate, here by a send */
        scenario_free(s);
    }
}

/* Alpha over a long quiet gap, in one lazy step: after the cut of test_first_cnp_gated, alpha
 * at 18 us is 0.9653778756914646; n quiet ticks later it is that times q^n (models.md 1.3.3:
 * alpha = (1-g) alpha every K without a CNP), whether n is inside the table of q^k that
 * cc_dcqcn_derive fills (512 steps) or beyond it, and the same as n steps of one tick. */
static void test_alpha_long_gap(void)
{
    struct scenario *s = load(NULL);
    const double q = 1019.0 / 1024.0;
    for (int n = 1; n <= DCQCN_DECAY_STEPS + 88; n++) { /* every entry of the table, and past it */
        struct cc_flow f;
        start(&f, s);
        D->on_cnp(&f, US(10));
        D->advance(&f, US(14));
        D->advance(&f, US(18));
        D->advance(&f, US(18 + n));
        ASSERT_ALPHA(f.u.d.alpha, 0.9653778756914646 * pow(q, n));
    }
    const int gaps[] = { 1, 100, 511, 512, 513, 2000 };
    for (size_t i = 0; i < G_N_ELEMENTS(gaps); i++) {
        struct cc_flow f, g;
        start(&f, s);
        start(&g, s);
        struct cc_flow *both[] = { &f, &g };
        for (int k = 0; k < 2; k++) {
            D->on_cnp(both[k], US(10));
            D->advance(both[k], US(14));
            D->advance(both[k], US(18));
        }
        D->advance(&f, US(18 + gaps[i])); /* one step of gaps[i] ticks */
        for (int t = 1; t <= gaps[i]; t++) /* one tick at a time */
            D->advance(&g, US(18 + t));
        ASSERT_ALPHA(f.u.d.alpha, 0.9653778756914646 * pow(q, gaps[i]));
        ASSERT_ALPHA(f.u.d.alpha, g.u.d.alpha);
    }
    scenario_free(s);
}

static CU_TestInfo tests[] = {
    { "gated: first CNP cuts at the end of the period", test_first_cnp_gated },
    { "gated: several CNPs in a period, one cut", test_one_cut_per_period },
    { "gated: rpg_min_dec_fac floor", test_min_dec_fac_floor },
    { "rate never below rpg_min_rate", test_min_rate },
    { "gated: timer stages FR, AI, HAI; lazy = stepped", test_increase_timer_stages },
    { "gated: byte counter stages and carry", test_byte_counter },
    { "clamp_tgt_rate / clamp_tgt_rate_after_time_inc", test_clamp_semantics },
    { "release at line rate; next CNP uses initial alpha", test_release_to_line_rate },
    { "release_at_line_rate=off keeps alpha across episodes", test_keep_state_without_release },
    { "rate_to_set_on_first_cnp and rpg_max_rate", test_first_cnp_rate_and_max_rate },
    { "paper: immediate cut per CNP and alpha update", test_paper_cut_and_alpha },
    { "paper: FR / AI / hyper stages with i", test_paper_stages },
    { "paper: rate floor", test_paper_min_rate },
    { "cc=none keeps line rate", test_cc_none },
    { "on_send leaves nothing due: a second advance at once changes nothing", test_send_leaves_nothing_due },
    { "gated: alpha over a long quiet gap, inside and beyond the decay table", test_alpha_long_gap },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("dcqcn", tests)
