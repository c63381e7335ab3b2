#include "analysis/warnings.h"
#include <stdio.h>
#include "analysis/metrics.h"

static char *fmt_time(simtime_t ps)
{
    return metrics_format_kind(METRICS_KIND_TIME, (double)ps / PS_PER_NS);
}

static const char *node_name(const struct net *n, const struct port_rt *p)
{
    return n->topo->nodes[p->node].name;
}

/* The first histogram bin counted as above `bytes`: the first whose lower edge (the upper
 * edge of the bin before it) is at or above them, QHIST_BINS when none is. */
static unsigned first_bin_above(uint64_t bytes)
{
    unsigned b = 1;
    while (b < QHIST_BINS && qhist_bin_upper(b - 1) < bytes)
        b++;
    return b;
}

/* Time a switch port's queue spent in bins `first` and above, from its time-weighted depth
 * histogram. The histogram counts depths the port reached, so a port whose deepest queue
 * (max_q) falls in a lower bin has none there, and its histogram is not read: on the
 * 16384-host bench, 147 K histograms of 2 KB, read whole with an exp2 a bin, took 0.2 s
 * after the run (2026-12-07). */
static simtime_t time_above(const struct port_rt *p, uint64_t first)
{
    if (qhist_bin(p->max_q) < first)
        return 0;
    simtime_t t = 0;
    for (uint64_t b = first; b < QHIST_BINS; b++)
        t += p->hist->weight[b];
    return t;
}

/* The port with the largest time(port) among those whose time is at least share x end (NULL
 * when none is), with that time and how many such ports there are. */
static const struct port_rt *worst_port(const struct net *n, simtime_t (*time)(const struct port_rt *, uint64_t),
                                        uint64_t arg, double share, simtime_t end, simtime_t *worst_t, guint *count)
{
    const struct port_rt *worst = NULL;
    *worst_t = 0;
    *count = 0;
    for (uint32_t i = 0; i < n->topo->nports; i++) {
        const struct port_rt *p = &n->ports[i];
        simtime_t t = time(p, arg);
        if ((double)t < share * (double)end)
            continue;
        ++*count;
        if (t > *worst_t) {
            *worst_t = t;
            worst = p;
        }
    }
    return worst;
}

/* A switch port's time in bins `first` and above (0 for host ports and ports without a
 * histogram). */
static simtime_t switch_time_above(const struct port_rt *p, uint64_t first)
{
    return p->is_host || !p->hist ? 0 : time_above(p, first);
}

static void queue_above_kmax(const struct net *n, simtime_t end, GPtrArray *out)
{
    const struct scenario *sc = n->sc;
    if (!sc->ecn || !sc->ecn_kmax)
        return;
    uint64_t thr = (uint64_t)(WARN_QUEUE_KMAX * (double)sc->ecn_kmax);
    simtime_t worst_t;
    guint count;
    const struct port_rt *worst =
        worst_port(n, switch_time_above, first_bin_above(thr), WARN_QUEUE_SHARE, end, &worst_t, &count);
    if (!worst)
        return;
    char *t = fmt_time(worst_t), *k = metrics_format_kind(METRICS_KIND_BYTES, (double)thr);
    char *others = count > 1 ? g_strdup_printf(" (and %u more port%s)", count - 1, count > 2 ? "s" : "") : g_strdup("");
    g_ptr_array_add(out, g_strdup_printf("queue at %s:%u held above %.0f x Kmax (%s) for %s, %.0f%% of the run%s: ECN "
                                         "is not controlling it (PFC, or a slow congestion-control loop, is what "
                                         "bounds it)",
                                         node_name(n, worst), worst->local, WARN_QUEUE_KMAX, k, t,
                                         100.0 * (double)worst_t / (double)end, others));
    g_free(t);
    g_free(k);
    g_free(others);
}

/* A sender's time idle with data held back by congestion control, to the end of the run. */
static simtime_t host_cc_idle(const struct host_rt *hr, simtime_t end)
{
    simtime_t t = hr->cc_idle_ps;
    if (hr->cc_idle_since != SIMTIME_NEVER && end > hr->cc_idle_since)
        t += end - hr->cc_idle_since;
    return t;
}

static void bottleneck_idle(const struct net *n, simtime_t end, GPtrArray *out)
{
    if (n->cc == &cc_none_ops)
        return;
    uint32_t H = n->topo->nhosts;
    /* per receiver: the span its transfers were in progress, its senders, the busiest one */
    simtime_t *from = g_new(simtime_t, H), *to = g_new0(simtime_t, H), *held = g_new0(simtime_t, H);
    uint32_t *first_src = g_new(uint32_t, H);
    gboolean *shared = g_new0(gboolean, H);
    for (uint32_t h = 0; h < H; h++) {
        from[h] = SIMTIME_NEVER;
        first_src[h] = UINT32_MAX;
    }
    const uint32_t nx = schedule_count(n->sched);
    for (uint32_t i = 0; i < nx; i++) {
        const struct transfer *t = schedule_get(n->sched, i);
        if (!t->bytes)
            continue;
        /* the longest any of d's senders sat idle with data held back by CC */
        simtime_t x = host_cc_idle(&n->hosts[t->src], end);
        if (x > held[t->dst])
            held[t->dst] = x;
        const struct xfer_rt *xr = &n->xfers[i];
        if (xr->state == XF_WAITING)
            continue;
        uint32_t d = t->dst;
        simtime_t e = xr->state == XF_DONE ? xr->end : end;
        if (xr->start < from[d])
            from[d] = xr->start;
        if (e > to[d])
            to[d] = e;
        if (first_src[d] == UINT32_MAX)
            first_src[d] = t->src;
        else if (first_src[d] != t->src)
            shared[d] = TRUE;
    }
    guint count = 0;
    uint32_t worst = UINT32_MAX;
    double worst_share = 0;
    simtime_t worst_idle = 0;
    for (uint32_t d = 0; d < H; d++) {
        if (!shared[d] || to[d] <= from[d])
            continue;
        /* the switch port toward d carries d's traffic */
        const struct port_rt *down = &n->ports[n->ports[n->hosts[d].port].peer];
        simtime_t span = to[d] - from[d];
        simtime_t busy = (simtime_t)((double)port_tx_wire_bytes(down) * 8.0 * PS_PER_S / (double)down->rate);
        simtime_t idle = busy < span ? span - busy : 0;
        double share = (double)idle / (double)span;
        if (share < WARN_CC_IDLE_SHARE || (double)held[d] < WARN_CC_IDLE_SHARE * (double)span)
            continue;
        count++;
        if (share > worst_share) {
            worst_share = share;
            worst = d;
            worst_idle = idle;
        }
    }
    if (count) {
        const struct port_rt *down = &n->ports[n->ports[n->hosts[worst].port].peer];
        char *t = fmt_time(worst_idle);
        char *others = count > 1 ? g_strdup_printf(" (and %u more receivers)", count - 1) : g_strdup("");
        g_ptr_array_add(out, g_strdup_printf("the bottleneck %s:%u -> %s sat idle %s, %.0f%% of the time its transfers "
                                             "were in progress, while their senders had data that congestion control "
                                             "held back%s: the control loop under-uses the link (see the rate plot)",
                                             node_name(n, down), down->local, n->topo->nodes[worst].name, t,
                                             100 * worst_share, others));
        g_free(t);
        g_free(others);
    }
    g_free(from);
    g_free(to);
    g_free(held);
    g_free(first_src);
    g_free(shared);
}

static void lossy_drops(const struct net *n, GPtrArray *out)
{
    const struct scenario *sc = n->sc;
    for (int q = 0; q < NPRIO; q++) {
        if (!n->st.drops_prio[q] || (sc->pfc && (sc->lossless_mask & (1u << q))))
            continue;
        const char *what = q == sc->ack_priority && q == sc->cnp_priority ? " (ACKs and CNPs)"
                           : q == sc->ack_priority                       ? " (ACKs)"
                           : q == sc->cnp_priority                       ? " (CNPs)"
                           : q == sc->data_priority                      ? " (data)"
                                                                         : "";
        g_ptr_array_add(out, g_strdup_printf("%" G_GUINT64_FORMAT " packets dropped on lossy priority %d%s: lost "
                                             "ACKs and CNPs mean retransmissions and congestion notifications that "
                                             "never arrive",
                                             n->st.drops_prio[q], q, what));
    }
}

/* The longest a port was paused on any one priority. */
static simtime_t longest_pause(const struct port_rt *p, uint64_t unused)
{
    (void)unused;
    simtime_t t = 0;
    for (int q = 0; q < NPRIO; q++)
        if (p->rx_pause_dur[q] > t)
            t = p->rx_pause_dur[q];
    return t;
}

static void long_pauses(const struct net *n, simtime_t end, GPtrArray *out)
{
    simtime_t worst_t;
    guint count;
    const struct port_rt *worst = worst_port(n, longest_pause, 0, WARN_PAUSED_SHARE, end, &worst_t, &count);
    if (!worst)
        return;
    char *t = fmt_time(worst_t);
    char *others = count > 1 ? g_strdup_printf("; %u links paused over %.0f%%", count, 100 * WARN_PAUSED_SHARE)
                             : g_strdup("");
    g_ptr_array_add(out, g_strdup_printf("%s:%u (toward %s) was paused by PFC for %s, %.0f%% of the run%s: what "
                                         "shares its links waits too (head-of-line blocking)",
                                         node_name(n, worst), worst->local, node_name(n, &n->ports[worst->peer]), t,
                                         100.0 * (double)worst_t / (double)end, others));
    g_free(t);
    g_free(others);
}

void warnings_for_run(const struct net *n, simtime_t end, GPtrArray *out)
{
    if (!end)
        return;
    char *overcommit = net_buffer_warning(n->sc, n->topo); /* the configuration first */
    if (overcommit)
        g_ptr_array_add(out, overcommit);
    queue_above_kmax(n, end, out);
    bottleneck_idle(n, end, out);
    lossy_drops(n, out);
    long_pauses(n, end, out);
}
