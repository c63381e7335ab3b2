/* HPCC (Li et al., SIGCOMM 2019) as HPCC ns-3 implements it (CC_MODE 3, single rate):
 * simulation/src/point-to-point/model/rdma-hw.cc, RdmaHw::HandleAckHp, UpdateRateHp and
 * FastReactHp; the window rule of rdma-queue-pair.cc GetWin (VAR_WIN). See
 * shared/reference/models.md 6.1.
 *
 * Every ACK echoes the INT stack its data packet collected. Per hop i, against the previous
 * ACK's record of that hop:
 *     tau = dts,  txRate = 8 dbytes / tau,
 *     u_i = txRate / B_i + min(qlen_i, qlen_i,prev) x R_max / (B_i x W)
 * U = max_i u_i (with that hop's tau, at most T), and the EWMA u <- (u (T - tau) + U tau) / T.
 * With c = u / eta: if c >= 1 or incStage >= maxStage, R = R_c / c + R_AI (incStage = 0), else
 * R = R_c + R_AI (incStage + 1); R is clamped to [R_min, R_max] and applied at once. Only the
 * first ACK past lastUpdateSeq (one per RTT) commits R_c = R and the stage and moves
 * lastUpdateSeq to snd_nxt; the other ACKs react from the committed R_c (FAST_REACT). The
 * very first ACK only stores the INT. The window is W x R / R_max (at least 1 byte).
 *
 * One guard ns-3 lacks: a hop whose timestamp did not move (tau = 0, which ns-3 turns into
 * an infinite rate) is left out of that ACK. MULTI_RATE (per-hop rates) and SAMPLE_FEEDBACK
 * are off in run.py and not modelled. */
#include <math.h>
#include "models/cc.h"
#include "models/cc_hpcc.h"

/* the values HPCC ns-3's run.py passes for "hp" (models.md 6.1); rate_ai and int_multi scale
 * with the host rate as run.py does (derived when absent) */
#define P(field) offsetof(struct hpcc_params, field)
static const struct cfg_key hpcc_keys[] = {
    { "hpcc", "eta", CFG_DOUBLE, P(eta), "0.95", NULL, 0.01, 1, 0 },
    { "hpcc", "max_stage", CFG_UINT, P(max_stage), "0", NULL, 0, 1000, 4 },
    { "hpcc", "rate_ai", CFG_RATE, P(rate_ai), NULL, NULL, 0, 0, 0 },
    /* 0: rate_ai as run.py; N: the HPCC paper's sizing for N flows per link (hpcc_derive) */
    { "hpcc", "expected_flows", CFG_UINT, P(expected_flows), "0", NULL, 0, 1000000, 4 },
    { "hpcc", "min_rate", CFG_RATE, P(min_rate), "1Gbps", NULL, 0, 0, 0 },
    { "hpcc", "fast_react", CFG_BOOL, P(fast_react), "on", NULL, 0, 0, 0 },
    { "hpcc", "var_win", CFG_BOOL, P(var_win), "on", NULL, 0, 0, 0 },
    { "hpcc", "int_multi", CFG_UINT, P(int_multi), NULL, NULL, 1, 1024, 4 },
    { "hpcc", "base_rtt", CFG_TIME, P(base_rtt), "0s", NULL, 0, 0, 0 },
    { "hpcc", "window", CFG_SIZE, P(window), "0B", NULL, 0, 0, 0 },
    { "hpcc", "global_t", CFG_BOOL, P(global_t), "on", NULL, 0, 0, 0 },
    CFG_END,
};
#undef P

struct hpcc_params *cc_hpcc_params(const struct scenario *s) { return cc_params(s, &cc_hpcc_ops); }

static gboolean hpcc_derive(void *params, struct scenario *s, GKeyFile *kf, GError **err)
{
    struct hpcc_params *p = params;
    /* run.py: RATE_AI = 10 Mb/s x BW/25G, INT_MULTI = BW/25G. With expected_flows = N the
     * HPCC paper's W_AI = W_init (1 - eta) / N in rate form, R_AI = C (1 - eta) / N: N flows'
     * additive steps together fill the headroom that eta leaves (the sizing as we recall it
     * from HPCC19's parameter discussion; see README "HPCC"). */
    if (!g_key_file_has_key(kf, "hpcc", "rate_ai", NULL))
        p->rate_ai = p->expected_flows
                         ? (uint64_t)llround((double)s->host_rate * (1 - p->eta) / p->expected_flows)
                         : (uint64_t)((unsigned __int128)10000000u * s->host_rate / 25000000000ULL);
    if (!g_key_file_has_key(kf, "hpcc", "int_multi", NULL))
        p->int_multi = s->host_rate / 25000000000ULL ? (uint32_t)(s->host_rate / 25000000000ULL) : 1;
    if (cc_ops_for(s->cc) != &cc_hpcc_ops)
        return TRUE;
    /* HPCC reacts to the INT of every packet and its window can be smaller than a few packets:
     * it needs an ACK per packet (L2_ACK_INTERVAL 1), or a small window waits for a timeout */
    if (!g_key_file_has_key(kf, "nic", "ack_every", NULL)) {
        s->ack_every = 1;
    } else if (s->ack_every != 1) {
        char *v = g_strdup_printf("%u", s->ack_every);
        scenario_key_error(err, s, "nic", "ack_every", v,
                           "cc = hpcc needs an ACK per packet (its INT feedback, HPCC ns-3 L2_ACK_INTERVAL 1): "
                           "expected 1");
        g_free(v);
        return FALSE;
    }
    return TRUE;
}

/* third.cc: a path's base RTT is 2 x its one-way propagation + the serialisation of one MTU
 * payload on each of its hops; its window the BDP at the path's slowest rate. `hops` is 2
 * (hosts under one leaf) or 4 (across the spines). */
static void path_rtt(const struct scenario *s, int hops, simtime_t *T, uint64_t *W)
{
    uint64_t bw = s->host_rate;
    simtime_t prop = 2 * s->host_link_delay, tx = 2 * serialisation_ps(s->mtu, s->host_rate);
    if (hops == 4) {
        prop += 2 * s->link_delay;
        tx += 2 * serialisation_ps(s->mtu, s->fabric_rate);
        if (s->fabric_rate < bw)
            bw = s->fabric_rate;
    }
    *T = cc_hpcc_params(s)->base_rtt ? cc_hpcc_params(s)->base_rtt : 2 * prop + tx;
    *W = cc_hpcc_params(s)->window ? cc_hpcc_params(s)->window : (uint64_t)((double)*T * (double)bw / 8e12);
    if (*W == 0)
        *W = 1;
}

bool hpcc_fabric_rtt(const struct scenario *s, simtime_t *T, uint64_t *W, const char **why)
{
    /* GLOBAL_T 1 (run.py): every QP uses the fabric's largest base RTT and BDP */
    if (!cc_hpcc_params(s)->base_rtt && s->topo != TOPO_LEAF_SPINE) {
        *why = "[hpcc] base_rtt must be set when the topology comes from a file";
        return false;
    }
    path_rtt(s, s->leaves > 1 && s->spines > 0 ? 4 : 2, T, W);
    return true;
}

static void hpcc_use_path(struct cc_flow *f, const struct scenario *s, uint32_t src, uint32_t dst)
{
    if (cc_hpcc_params(s)->global_t || s->topo != TOPO_LEAF_SPINE)
        return;
    simtime_t T;
    uint64_t W;
    path_rtt(s, src / s->hosts_per_leaf == dst / s->hosts_per_leaf ? 2 : 4, &T, &W);
    f->u.h.base_rtt_ns = (double)T / PS_PER_NS;
    f->u.h.win_max = W;
    f->win = W; /* at line rate, as a new QP starts */
}

static const struct hpcc_params *hp(const struct cc_flow *f) { return f->env->params; }

static void set_window(struct cc_flow *f)
{
    const struct hpcc_state *h = &f->u.h;
    if (!hp(f)->var_win) {
        f->win = h->win_max;
        return;
    }
    /* integer bit rates, as ns-3's DataRate */
    unsigned __int128 w = (unsigned __int128)h->win_max * (uint64_t)f->rate / (uint64_t)f->env->line;
    f->win = w ? (uint64_t)w : 1;
}

static void hpcc_init(struct cc_flow *f, const struct scenario *s, const struct cc_env *env, simtime_t now)
{
    (void)now;
    double line = env->line;
    f->env = env;
    f->rate = line;
    f->u.h = (struct hpcc_state){ .u = 1, .cur_rate = line };
    simtime_t T = 1;
    uint64_t W = 1;
    const char *why = NULL;
    if (hpcc_fabric_rtt(s, &T, &W, &why)) { /* hpcc_validate has refused the scenario otherwise */
        f->u.h.base_rtt_ns = (double)T / PS_PER_NS;
        f->u.h.win_max = W;
    }
    set_window(f);
}

/* UpdateRateHp(fast_react) for one ACK. */
static void update_rate(struct cc_flow *f, const struct cc_ack *a, bool fast)
{
    struct hpcc_state *h = &f->u.h;
    const struct hpcc_params *p = hp(f);
    const struct int_stack *ih = a->intd;
    uint32_t multi = p->int_multi;
    if (h->last_update_seq == 0) { /* first RTT: keep the INT as the reference sample */
        h->last_update_seq = a->snd_nxt;
        for (uint32_t i = 0; i < ih->nhop && i < INT_MAX_HOP; i++)
            h->hop[i] = ih->hop[i];
        return;
    }
    if (ih->nhop <= INT_MAX_HOP) {
        double U = 0, T = h->base_rtt_ns;
        uint64_t dt = 0;
        bool updated = false;
        for (uint32_t i = 0; i < ih->nhop; i++) {
            uint64_t tau = int_time_delta(ih->hop[i], h->hop[i]);
            if (tau == 0)
                continue;
            double B = (double)int_hop_rate(ih->hop[i]);
            double tx_rate = (double)int_bytes_delta(ih->hop[i], h->hop[i], multi) * 8 / (tau * 1e-9);
            uint64_t q = int_hop_qlen(ih->hop[i], multi), q_prev = int_hop_qlen(h->hop[i], multi);
            double u = tx_rate / B + (double)(q < q_prev ? q : q_prev) * f->env->line / B / (double)h->win_max;
            if (u > U) {
                U = u;
                dt = tau;
            }
            h->hop[i] = ih->hop[i];
            updated = true;
        }
        if (updated) {
            double tau = (double)dt > T ? T : (double)dt;
            h->u = (h->u * (T - tau) + U * tau) / T;
            double c = h->u / p->eta, r;
            uint32_t stage;
            if (c >= 1 || h->inc_stage >= p->max_stage) {
                r = h->cur_rate / c + (double)p->rate_ai;
                stage = 0;
            } else {
                r = h->cur_rate + (double)p->rate_ai;
                stage = h->inc_stage + 1;
            }
            r = fmax(r, (double)p->min_rate);
            r = fmin(r, f->env->line);
            f->rate = r;
            set_window(f);
            if (!fast) {
                h->cur_rate = r;
                h->inc_stage = stage;
            }
        }
    }
    if (!fast && a->snd_nxt > h->last_update_seq)
        h->last_update_seq = a->snd_nxt;
}

static void hpcc_on_ack(struct cc_flow *f, simtime_t now, const struct cc_ack *a)
{
    (void)now;
    if (!a->intd)
        return; /* an ACK without telemetry (none in an HPCC run) */
    if (a->ack_psn > f->u.h.last_update_seq)
        update_rate(f, a, false);
    else if (hp(f)->fast_react)
        update_rate(f, a, true);
}

static uint32_t hpcc_int_unit(const void *params) { return ((const struct hpcc_params *)params)->int_multi; }

/* A fabric that gives no base RTT needs [hpcc] base_rtt (checked only when HPCC runs). */
static gboolean hpcc_validate(const void *params, const struct scenario *s, GError **err)
{
    (void)params;
    simtime_t T;
    uint64_t W;
    const char *why = NULL;
    if (cc_ops_for(s->cc) == &cc_hpcc_ops && !hpcc_fabric_rtt(s, &T, &W, &why)) {
        g_set_error(err, SCENARIO_ERROR, 1, "%s: %s", s->path, why);
        return FALSE;
    }
    return TRUE;
}

const struct cc_ops cc_hpcc_ops = {
    .name = "hpcc", .init = hpcc_init, .advance = cc_no_advance, .on_cnp = cc_ignore_cnp,
    .on_send = cc_ignore_send, .on_ack = hpcc_on_ack, .next_change = cc_never_changes,
    .init_path = hpcc_use_path, .int_unit = hpcc_int_unit,
    .section = "hpcc", .keys = hpcc_keys, .params_size = sizeof(struct hpcc_params),
    .derive = hpcc_derive, .validate = hpcc_validate,
};
