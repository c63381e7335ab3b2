/* `rocesim run` and `rocesim check`: scenario -> simulation -> results folder. */
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "models/memory.h"
#include "models/net.h"
#include "models/workload.h"
#include "analysis/outcome.h"
#include "analysis/warnings.h"
#include "analysis/breakdown.h"
#include "analysis/layers.h"
#include "analysis/trace.h"
#include "analysis/pcap.h"
#include "analysis/plot.h"
#include "analysis/report.h"
#include "cli/commands.h"
#include "sim/interrupt.h"
#include "sim/results.h"
#include "cli/run.h"
#include "sim/units.h"
#include "sim/version.h"


/* ---------- small helpers ---------- */


/* The simulated transfers as the results contract sees them. */
static struct xfer_outcome *net_outcomes(const struct net *n)
{
    struct xfer_outcome *o = g_new0(struct xfer_outcome, n->nxfers ? n->nxfers : 1);
    for (uint32_t i = 0; i < n->nxfers; i++) {
        const struct xfer_rt *x = &n->xfers[i];
        o[i].state = x->state == XF_DONE ? OUTCOME_DONE : x->state == XF_POSTED ? OUTCOME_POSTED : OUTCOME_PENDING;
        o[i].start = x->start;
        o[i].end = x->end;
    }
    return o;
}

static simtime_t net_ideal_ps(const void *ctx, uint32_t src, uint32_t dst, uint64_t bytes)
{
    const struct net *n = ctx;
    return ideal_transfer_ps(n->sc, n->topo, src, dst, bytes);
}

static uint64_t peak_rss_bytes(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (uint64_t)ru.ru_maxrss * 1024;
}

/* Walks the first ECMP choice from src to dst, returning the link count and filling the
 * rates and delays of each link (at most 16). */
static uint32_t path_links(const struct topology *t, uint32_t src, uint32_t dst, uint64_t *rate, simtime_t *delay)
{
    uint32_t port = t->nodes[src].first_port, nl = 0;
    for (;;) {
        const struct topo_port *p = &t->ports[port];
        rate[nl] = p->rate_bps;
        delay[nl] = p->delay_ps;
        nl++;
        uint32_t node = t->ports[p->peer].node;
        if (node == dst || nl >= 16 || t->nodes[node].kind == NODE_HOST)
            return nl;
        uint32_t cnt;
        const uint16_t *hops = topology_routes(t, node, dst, &cnt);
        if (!cnt)
            return nl;
        port = t->nodes[node].first_port + hops[0];
    }
}

simtime_t ideal_transfer_ps(const struct scenario *sc, const struct topology *t, uint32_t src, uint32_t dst,
                            uint64_t bytes)
{
    uint64_t rate[16];
    simtime_t delay[16];
    uint32_t nl = path_links(t, src, dst, rate, delay);
    uint64_t npkts = (bytes + sc->mtu - 1) / sc->mtu;
    /* RETH on the first packet, ImmDt on the last (nic.c's framing) */
    uint64_t wire = bytes + npkts * (ROCE_HDR_BYTES + WIRE_EXTRA_BYTES) + ROCE_RETH_BYTES + ROCE_IMMDT_BYTES;
    uint64_t last_payload = bytes - (npkts - 1) * sc->mtu;
    uint64_t last_wire = last_payload + ROCE_HDR_BYTES + WIRE_EXTRA_BYTES + ROCE_IMMDT_BYTES +
                         (npkts == 1 ? ROCE_RETH_BYTES : 0);
    uint64_t bottleneck = rate[0];
    for (uint32_t i = 1; i < nl; i++)
        if (rate[i] < bottleneck)
            bottleneck = rate[i];
    /* the whole message at the bottleneck rate, then store-and-forward of the last packet
     * over the remaining hops, plus propagation on every link */
    simtime_t ideal = serialisation_ps(wire, bottleneck) + delay[0];
    for (uint32_t i = 1; i < nl; i++)
        ideal += serialisation_ps(last_wire, rate[i]) + delay[i];
    return ideal;
}

/* ---------- writing results ---------- */

/* One collective instance as nccl-tests reports it. */



static void write_topology(const struct topology *t, FILE *f)
{
    fprintf(f, "node,port,peer,peer_port,rate_bps,delay_ps\n");
    for (uint32_t i = 0; i < t->nports; i++) {
        const struct topo_port *p = &t->ports[i];
        const struct topo_port *q = &t->ports[p->peer];
        fprintf(f, "%s,%u,%s,%u,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT "\n", t->nodes[p->node].name, p->index,
                t->nodes[q->node].name, q->index, p->rate_bps, p->delay_ps);
    }
}

static void counter(FILE *f, uint64_t t_ns, const char *node, uint32_t port, const char *name, uint64_t v)
{
    fprintf(f, "%" G_GUINT64_FORMAT ",%s,%u,%s,%" G_GUINT64_FORMAT "\n", t_ns, node, port, name, v);
}

/* mlx5 names; durations in microseconds as the driver reports them. Written for the
 * lossless priorities, and for any priority that saw a pause. */
static void pfc_counters(FILE *f, uint64_t t, const char *node, uint32_t port, const struct port_rt *p,
                         const struct scenario *sc)
{
    char c[48];
    for (int q = 0; q < NPRIO; q++) {
        if (!(sc->lossless_mask & (1u << q)) && !p->rx_pause[q] && !p->tx_pause[q])
            continue;
        snprintf(c, sizeof c, "rx_prio%d_pause", q);
        counter(f, t, node, port, c, p->rx_pause[q]);
        snprintf(c, sizeof c, "rx_prio%d_pause_duration", q);
        counter(f, t, node, port, c, p->rx_pause_dur[q] / PS_PER_US);
        snprintf(c, sizeof c, "tx_prio%d_pause", q);
        counter(f, t, node, port, c, p->tx_pause[q]);
        snprintf(c, sizeof c, "tx_prio%d_pause_duration", q);
        counter(f, t, node, port, c, p->tx_pause_dur[q] / PS_PER_US);
    }
}

static void write_counters(const struct net *n, FILE *f, simtime_t end)
{
    uint64_t t = end / PS_PER_NS;
    for (uint32_t h = 0; h < n->topo->nhosts; h++) {
        const struct host_rt *hr = &n->hosts[h];
        const struct port_rt *p = &n->ports[hr->port];
        const char *name = n->topo->nodes[h].name;
        counter(f, t, name, 0, "np_ecn_marked_roce_packets", hr->np_ecn_marked_roce_packets);
        counter(f, t, name, 0, "np_cnp_sent", hr->np_cnp_sent);
        counter(f, t, name, 0, "rp_cnp_handled", hr->rp_cnp_handled);
        counter(f, t, name, 0, "out_of_sequence", hr->out_of_sequence);
        counter(f, t, name, 0, "packet_seq_err", hr->packet_seq_err);
        counter(f, t, name, 0, "local_ack_timeout_err", hr->local_ack_timeout_err);
        counter(f, t, name, 0, "duplicate_request", hr->duplicate_request);
        counter(f, t, name, 0, "retransmitted_packets", hr->retransmitted_packets);
        counter(f, t, name, 0, "tx_bytes", p->tx_bytes);
        counter(f, t, name, 0, "tx_packets", p->tx_packets);
        counter(f, t, name, 0, "rx_bytes", hr->rx_bytes);
        counter(f, t, name, 0, "rx_discards_stalled", hr->rx_drops);
        pfc_counters(f, t, name, 0, p, n->sc);
    }
    for (uint32_t i = 0; i < n->topo->nports; i++) {
        const struct port_rt *p = &n->ports[i];
        if (p->is_host)
            continue;
        const char *name = n->topo->nodes[p->node].name;
        counter(f, t, name, p->local, "tx_bytes", p->tx_bytes);
        counter(f, t, name, p->local, "tx_packets", p->tx_packets);
        counter(f, t, name, p->local, "ecn_marked", p->ecn_marked);
        pfc_counters(f, t, name, p->local, p, n->sc);
        if (p->wd_storms) {
            counter(f, t, name, p->local, "pfc_wd_storms", p->wd_storms);
            counter(f, t, name, p->local, "pfc_wd_drops", p->wd_drops);
        }
        for (int q = 0; q < NPRIO; q++)
            if (p->drops[q]) {
                char cname[32];
                snprintf(cname, sizeof cname, "drops_prio%d", q);
                counter(f, t, name, p->local, cname, p->drops[q]);
            }
    }
}

static uint64_t port_p99(const struct port_rt *p)
{
    if (!p->hist)
        return 0;
    simtime_t total = 0;
    for (int b = 0; b < QHIST_BINS; b++)
        total += p->hist->weight[b];
    if (!total)
        return 0;
    simtime_t acc = 0;
    for (int b = 0; b < QHIST_BINS; b++) {
        acc += p->hist->weight[b];
        if ((double)acc >= 0.99 * (double)total) {
            /* the bin's upper edge, but never above the largest depth actually seen */
            uint64_t up = qhist_bin_upper((unsigned)b);
            return up < p->max_q ? up : p->max_q;
        }
    }
    return 0;
}

static char *summary_json(const struct net *n, const struct run_figures *fig, simtime_t end)
{
    const struct scenario *sc = n->sc;
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "rocesim_version");
    json_builder_add_string_value(b, ROCESIM_VERSION);
    json_builder_set_member_name(b, "scenario");
    json_builder_begin_object(b);
    gsize ng;
    char **groups = g_key_file_get_groups(sc->expanded, &ng);
    for (gsize g = 0; g < ng; g++) {
        json_builder_set_member_name(b, groups[g]);
        json_builder_begin_object(b);
        gsize nk;
        char **keys = g_key_file_get_keys(sc->expanded, groups[g], &nk, NULL);
        for (gsize k = 0; k < nk; k++) {
            char *v = g_key_file_get_value(sc->expanded, groups[g], keys[k], NULL);
            json_builder_set_member_name(b, keys[k]);
            json_builder_add_string_value(b, v);
            g_free(v);
        }
        g_strfreev(keys);
        json_builder_end_object(b);
    }
    g_strfreev(groups);
    json_builder_end_object(b);

    /* per-port figures for switch ports that carried traffic */
    uint64_t max_q = 0, p99_q = 0;
    double max_paused_fraction = 0;
    double secs = (double)end / PS_PER_S;
    json_builder_set_member_name(b, "ports");
    json_builder_begin_array(b);
    for (uint32_t i = 0; i < n->topo->nports; i++) {
        const struct port_rt *p = &n->ports[i];
        if (p->is_host || p->tx_packets == 0)
            continue;
        uint64_t p99 = port_p99(p);
        uint64_t drops = 0;
        for (int q = 0; q < NPRIO; q++)
            drops += p->drops[q];
        if (p->max_q > max_q)
            max_q = p->max_q;
        if (p99 > p99_q)
            p99_q = p99;
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "node");
        json_builder_add_string_value(b, n->topo->nodes[p->node].name);
        outcome_json_int(b, "port", p->local);
        json_builder_set_member_name(b, "peer");
        json_builder_add_string_value(b, n->topo->nodes[n->ports[p->peer].node].name);
        outcome_json_int(b, "max_queue_bytes", p->max_q);
        outcome_json_int(b, "p99_queue_bytes", p99);
        outcome_json_int(b, "tx_bytes", p->tx_bytes);
        outcome_json_dbl(b, "utilisation", secs > 0 ? (double)p->tx_wire_bytes * 8 / ((double)p->rate * secs) : 0);
        outcome_json_int(b, "ecn_marked", p->ecn_marked);
        outcome_json_int(b, "drops", drops);
        simtime_t paused = 0;
        uint64_t pauses = 0;
        for (int q = 0; q < NPRIO; q++) {
            if (p->rx_pause_dur[q] > paused)
                paused = p->rx_pause_dur[q];
            pauses += p->rx_pause[q];
        }
        double pf = end ? (double)paused / (double)end : 0;
        if (pf > max_paused_fraction)
            max_paused_fraction = pf;
        outcome_json_int(b, "pause_frames_received", pauses);
        outcome_json_dbl(b, "paused_fraction", pf);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    /* host ports can be paused too (by their leaf) */
    for (uint32_t i = 0; i < n->topo->nports; i++) {
        const struct port_rt *p = &n->ports[i];
        for (int q = 0; q < NPRIO; q++)
            if (end && (double)p->rx_pause_dur[q] / (double)end > max_paused_fraction)
                max_paused_fraction = (double)p->rx_pause_dur[q] / (double)end;
    }

    json_builder_set_member_name(b, "metrics");
    json_builder_begin_object(b);
    outcome_json_transfer_metrics(b, fig);
    outcome_json_int(b, "drops", n->st.drops);
    outcome_json_int(b, "drops_lossless", n->st.drops_lossless);
    outcome_json_int(b, "ecn_marked", n->st.ecn_marked);
    outcome_json_int(b, "cnp_sent", n->st.cnp_sent);
    outcome_json_int(b, "cnp_handled", n->st.cnp_handled);
    outcome_json_int(b, "retransmitted_packets", n->st.retransmitted_packets);
    outcome_json_int(b, "timeouts", n->st.timeouts);
    outcome_json_int(b, "max_queue_bytes", max_q);
    outcome_json_int(b, "p99_queue_bytes", p99_q);
    outcome_json_collective_metrics(b, fig);
    outcome_json_int(b, "pause_frames", n->st.pause_frames);
    outcome_json_int(b, "paused_ns", n->st.paused_ps / PS_PER_NS);
    /* the worst link's share of the run paused (one priority); paused_fraction is the old name */
    outcome_json_dbl(b, "worst_link_paused_fraction", max_paused_fraction);
    outcome_json_dbl(b, "paused_fraction", max_paused_fraction);
    outcome_json_int(b, "pfc_watchdog_storms", n->st.wd_storms);
    outcome_json_int(b, "deadlock", n->deadlocked ? 1 : 0);
    for (int q = 0; q < NPRIO; q++)
        if (n->st.drops_prio[q] || (sc->lossless_mask & (1u << q))) {
            char k[32];
            snprintf(k, sizeof k, "drops_prio%d", q);
            outcome_json_int(b, k, n->st.drops_prio[q]);
        }
    outcome_json_job_metrics(b, n->sched, fig);
    json_builder_end_object(b);

    outcome_json_jobs(b, n->sched, fig);

    json_builder_set_member_name(b, "warnings");
    json_builder_begin_array(b);
    for (guint i = 0; i < fig->warnings->len; i++)
        json_builder_add_string_value(b, g_ptr_array_index(fig->warnings, i));
    json_builder_end_array(b);

    json_builder_set_member_name(b, "engine");
    json_builder_begin_object(b);
    outcome_json_int(b, "events", n->eng.events);
    outcome_json_dbl(b, "events_per_s", fig->wall_s > 0 ? (double)n->eng.events / fig->wall_s : 0);
    outcome_json_int(b, "packet_hops", n->st.packet_hops);
    outcome_json_dbl(b, "packet_hops_per_s", fig->wall_s > 0 ? (double)n->st.packet_hops / fig->wall_s : 0);
    outcome_json_int(b, "sim_time_ns", end / PS_PER_NS);
    outcome_json_dbl(b, "wall_s", fig->wall_s);
    outcome_json_int(b, "peak_rss_bytes", fig->peak_rss);
    json_builder_end_object(b);
    json_builder_end_object(b);

    return outcome_json_text(b);
}

static char *human_bytes(uint64_t b, char *buf, size_t len)
{
    if (b >= 1000000000)
        snprintf(buf, len, "%.2f GB", b / 1e9);
    else if (b >= 1000000)
        snprintf(buf, len, "%.2f MB", b / 1e6);
    else if (b >= 1000)
        snprintf(buf, len, "%.1f KB", b / 1e3);
    else
        snprintf(buf, len, "%" G_GUINT64_FORMAT " B", b);
    return buf;
}

static char *human_ns(uint64_t ns, char *buf, size_t len)
{
    if (ns >= 1000000)
        snprintf(buf, len, "%.3f ms", ns / 1e6);
    else if (ns >= 1000)
        snprintf(buf, len, "%.2f us", ns / 1e3);
    else
        snprintf(buf, len, "%" G_GUINT64_FORMAT " ns", ns);
    return buf;
}

static void print_summary(const struct net *n, const struct run_figures *fig, const char *dir)
{
    const struct scenario *sc = n->sc;
    const struct topology *t = n->topo;
    char a[32], b[32], c[32], d[32];
    printf("rocesim %s  %s  (seed %" G_GUINT64_FORMAT ")\n", ROCESIM_VERSION, sc->name, sc->seed);
    if (t->servers)
        printf("  %-12s %u servers x %u GPUs, %u NICs each, %s, %u switches (inside servers included), %.2f:1 "
               "oversubscription\n", "fabric", t->servers, t->gpus_per_server, t->nics_per_server,
               t->rails ? "rail-optimised" : sc->topo == TOPO_FATTREE ? "fat-tree" : "leaf-spine", t->nnodes - t->nhosts,
               t->oversubscription);
    else if (sc->topo == TOPO_LEAF_SPINE)
        printf("  %-12s %u hosts, %u switches, %s hosts, %s fabric, %.2f:1 oversubscription\n", "fabric", t->nhosts,
               t->nnodes - t->nhosts, units_format_rate(sc->host_rate, a, sizeof a),
               units_format_rate(sc->fabric_rate, b, sizeof b), t->oversubscription);
    else
        printf("  %-12s %u hosts, %u switches, %u links (edge list %s)\n", "fabric", t->nhosts, t->nnodes - t->nhosts,
               t->nports / 2, sc->edges_file);
    printf("  %-12s cc=%s%s%s, ecn %s (Kmin %s, Kmax %s, Pmax %.2f), pfc %s\n", "settings",
           n->cc->name, n->cc == &cc_dcqcn_ops ? "/" : "", n->cc == &cc_dcqcn_ops ? sc->cc_preset : "",
           sc->ecn ? "on" : "off", units_format_size(sc->ecn_kmin, c, sizeof c), units_format_size(sc->ecn_kmax, d, sizeof d),
           sc->ecn_pmax, sc->pfc ? "on" : "off");
    printf("  %-12s %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " completed, %s, last at %s\n", "transfers", fig->done,
           fig->nxfers, human_bytes(fig->bytes, a, sizeof a), human_ns(fig->completion / PS_PER_NS, b, sizeof b));
    if (fig->done) {
        printf("  %-12s p50 %s   p99 %s   max %s\n", "FCT", human_ns(fig->fct_p50, a, sizeof a),
               human_ns(fig->fct_p99, b, sizeof b), human_ns(fig->fct_max, c, sizeof c));
        printf("  %-12s p50 %.2f   p99 %.2f   max %.2f   (FCT / ideal)\n", "slowdown", fig->sd_p50, fig->sd_p99,
               fig->sd_max);
    }
    printf("  %-12s ECN marks %" G_GUINT64_FORMAT ", CNPs %" G_GUINT64_FORMAT ", drops %" G_GUINT64_FORMAT
           ", retransmitted %" G_GUINT64_FORMAT ", timeouts %" G_GUINT64_FORMAT "\n",
           "congestion", n->st.ecn_marked, n->st.cnp_sent, n->st.drops, n->st.retransmitted_packets, n->st.timeouts);
    if (sc->pfc || n->st.pause_frames) {
        simtime_t worst = 0;
        for (uint32_t i = 0; i < t->nports; i++)
            for (int q = 0; q < NPRIO; q++)
                if (n->ports[i].rx_pause_dur[q] > worst)
                    worst = n->ports[i].rx_pause_dur[q];
        simtime_t end = n->last_event_time;
        printf("  %-12s %" G_GUINT64_FORMAT " pause frames, paused %s summed over ports, worst link %.1f%% of the "
               "run%s\n", "pfc", n->st.pause_frames, human_ns(n->st.paused_ps / PS_PER_NS, a, sizeof a),
               end ? 100.0 * (double)worst / (double)end : 0.0, n->st.drops_lossless ? ", LOSSLESS DROPS" : "");
    }
    const struct port_rt *busiest = NULL;
    for (uint32_t i = 0; i < t->nports; i++)
        if (!n->ports[i].is_host && (!busiest || n->ports[i].max_q > busiest->max_q))
            busiest = &n->ports[i];
    if (busiest && busiest->max_q)
        printf("  %-12s %s:%u -> %s, max queue %s, p99 %s\n", "busiest port", t->nodes[busiest->node].name,
               busiest->local, t->nodes[n->ports[busiest->peer].node].name, human_bytes(busiest->max_q, a, sizeof a),
               human_bytes(port_p99(busiest), b, sizeof b));
    /* the most utilised switch links: where the bandwidth went */
    const struct port_rt *top[3] = { NULL, NULL, NULL };
    double secs = (double)fig->end / PS_PER_S;
    for (uint32_t i = 0; i < t->nports && secs > 0; i++) {
        const struct port_rt *p = &n->ports[i];
        if (p->is_host || !p->tx_wire_bytes)
            continue;
        for (int k = 0; k < 3; k++)
            if (!top[k] || p->tx_wire_bytes * (double)top[k]->rate > top[k]->tx_wire_bytes * (double)p->rate) {
                for (int m = 2; m > k; m--)
                    top[m] = top[m - 1];
                top[k] = p;
                break;
            }
    }
    if (top[0]) {
        printf("  %-12s", "busiest links");
        for (int k = 0; k < 3 && top[k]; k++)
            printf("%s %s:%u->%s %.1f%%", k ? "," : "", t->nodes[top[k]->node].name, top[k]->local,
                   t->nodes[n->ports[top[k]->peer].node].name,
                   100.0 * (double)top[k]->tx_wire_bytes * 8 / ((double)top[k]->rate * secs));
        printf("  (utilisation over the run)\n");
    }
    for (guint i = 0; i < fig->warnings->len; i++)
        printf("  WARNING      %s\n", (const char *)g_ptr_array_index(fig->warnings, i));
    outcome_print_collectives(n->sched, fig);
    printf("results in %s/\n", dir);
    /* the engine figures close the output: the line benchmarks and logs look for */
    printf("engine: %" G_GUINT64_FORMAT " events (%.2f M/s), %" G_GUINT64_FORMAT " packet-hops (%.2f M/s), "
           "sim %s, wall %.2f s, peak RSS %s\n",
           n->eng.events, fig->wall_s > 0 ? n->eng.events / fig->wall_s / 1e6 : 0, n->st.packet_hops,
           fig->wall_s > 0 ? n->st.packet_hops / fig->wall_s / 1e6 : 0, human_ns(fig->end / PS_PER_NS, a, sizeof a),
           fig->wall_s, human_bytes(fig->peak_rss, c, sizeof c));
}

/* ---------- packet capture ([output] pcap) ---------- */

static void pcap_tap(struct net *n, void *tap, const struct packet *p, uint32_t sender_local)
{
    struct frame_ctx ctx = { .pfc_port = (uint16_t)sender_local };
    if (p->kind == PKT_DATA) {
        ctx.msg_bytes = xfer_bytes(n, p->transfer); /* a part's, when split over QPs */
        ctx.imm = p->flags & PKT_F_LAST;           /* WRITE LAST/ONLY WITH IMMEDIATE */
        ctx.imm_data = p->transfer;                /* the transfer id, as the replay sends */
    }
    if (n->intd && p->kind != PKT_CNP && p->kind != PKT_PFC)
        ctx.intd = &n->intd[p - n->pool];
    pcap_writer_packet(tap, n->eng.now, p, &ctx);
}

/* Opens one pcap per listed port ("leaf0:17,host3"): FILE names node-port.pcap. */
static gboolean open_captures(struct net *n, const struct results_dir *rd, GPtrArray *writers, GError **err)
{
    const struct scenario *sc = n->sc;
    if (!*sc->pcap)
        return TRUE;
    char **items = g_strsplit(sc->pcap, ",", -1);
    gboolean ok = TRUE;
    for (int i = 0; items[i] && ok; i++) {
        char *item = g_strstrip(items[i]);
        char *colon = strchr(item, ':');
        if (colon)
            *colon = 0;
        int64_t node = topology_find_node(n->topo, item);
        guint64 port = 0;
        char *end = NULL;
        if (colon)
            port = g_ascii_strtoull(colon + 1, &end, 10);
        if (node < 0 || (colon && (!colon[1] || *end)) || port >= n->topo->nodes[node].nports) {
            if (colon)
                *colon = ':';
            scenario_key_error(err, sc, "output", "pcap", sc->pcap,
                               "'%s' is not a port: expected NODE:PORT such as leaf0:17, or a host such as host3", item);
            ok = FALSE;
            break;
        }
        struct port_rt *p = &n->ports[n->topo->nodes[node].first_port + port];
        if (p->tap)
            continue;
        char *name = g_strdup_printf("%s-%u.pcap", item, (unsigned)port);
        char *path = g_build_filename(rd->tmp, name, NULL);
        struct pcap_writer *w = pcap_writer_open(path, sc->pcap_snaplen, err);
        g_free(path);
        g_free(name);
        if (!w) {
            ok = FALSE;
            break;
        }
        p->tap = w;
        g_ptr_array_add(writers, w);
    }
    g_strfreev(items);
    n->tap_fn = pcap_tap;
    return ok;
}

static gboolean close_captures(struct net *n, GPtrArray *writers, GError **err)
{
    gboolean ok = TRUE;
    for (guint i = 0; i < writers->len; i++) {
        GError *e = NULL;
        if (!pcap_writer_close(g_ptr_array_index(writers, i), &e)) {
            if (ok)
                g_propagate_error(err, e);
            else
                g_error_free(e);
            ok = FALSE;
        }
    }
    g_ptr_array_set_size(writers, 0);
    for (uint32_t i = 0; i < n->topo->nports; i++)
        n->ports[i].tap = NULL;
    return ok;
}

/* ---------- the run ---------- */

/* What the run's results need a reader to know: transfers left unfinished, HPCC on paths that
 * change, lossless drops, the analyses' warnings, watchdog storms, a deadlock. */
static void run_warnings(const struct net *n, const struct xfer_outcome *outcomes, simtime_t end,
                         struct run_figures *fig)
{
    const struct scenario *sc = n->sc;
    if (fig->done < fig->nxfers) {
        char s[32];
        if (n->deadlocked)
            g_ptr_array_add(fig->warnings, g_strdup_printf("%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
                                                          " transfers did not complete: the run stopped at the deadlock",
                                                          fig->nxfers - fig->done, fig->nxfers));
        else
            g_ptr_array_add(fig->warnings, g_strdup_printf("%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
                                                          " transfers did not complete by stop = %s",
                                                          fig->nxfers - fig->done, fig->nxfers,
                                                          units_format_time(sc->stop, s, sizeof s)));
    }
    if (n->cc->int_unit && sc->lb != LB_ECMP)
        g_ptr_array_add(fig->warnings,
                        g_strdup_printf("cc = %s with load_balance = %s: HPCC compares each hop's INT record with the "
                                        "previous ACK's record of the same hop, which assumes one path per QP; packets "
                                        "that change path mix the counters of different ports",
                                        n->cc->name, sc->lb == LB_FLOWLET ? "flowlet" : sc->lb == LB_SPRAY ? "spray" : "adaptive"));
    if (n->st.drops_lossless)
        g_ptr_array_add(fig->warnings,
                        g_strdup_printf("%" G_GUINT64_FORMAT " packets dropped on a lossless priority: "
                                        "the PFC headroom did not absorb what arrived after XOFF",
                                        n->st.drops_lossless));
    warnings_for_run(n, outcomes, end, fig->warnings);
    if (n->st.wd_storms)
        g_ptr_array_add(fig->warnings,
                        g_strdup_printf("PFC watchdog: %" G_GUINT64_FORMAT " pause storms detected, %" G_GUINT64_FORMAT
                                        " packets dropped while PFC was disabled on those queues",
                                        n->st.wd_storms, n->st.wd_drops));
    if (n->deadlocked) {
        g_ptr_array_add(fig->warnings, g_strdup(n->deadlock_report));
        fprintf(stderr, "rocesim: %s\n", n->deadlock_report);
    }
}

/* Multi-GPU servers: results per layer and per rail, where each collective's time went, and
 * the timeline trace (both read the pause intervals back from the folder's pfc.csv). */
static gboolean write_server_files(const struct net *n, struct results_dir *rd, simtime_t end,
                                   struct run_figures *fig, GError **err)
{
    const struct topology *topo = n->topo;
    FILE *f;
    FILE *fr = NULL;
    if (!(f = results_open(rd, "layers.csv", err)))
        return FALSE;
    if (topo->rails && !(fr = results_open(rd, "rails.csv", err))) {
        fclose(f);
        return FALSE;
    }
    layers_write(n, end, f, fr, fig->warnings);
    if (!results_close(f, "layers.csv", err) || (fr && !results_close(fr, "rails.csv", err)))
        return FALSE;
    char *pfc_path = g_build_filename(rd->tmp, "pfc.csv", NULL);
    if (n->sched->colls->len) {
        if (!(f = results_open(rd, "collectives_breakdown.csv", err))) {
            g_free(pfc_path);
            return FALSE;
        }
        breakdown_write(n, ideal_transfer_ps, pfc_path, f);
        if (!results_close(f, "collectives_breakdown.csv", err)) {
            g_free(pfc_path);
            return FALSE;
        }
    }
    f = results_open(rd, "trace.json", err);
    gboolean traced = f && trace_write(n, pfc_path, f, err);
    g_free(pfc_path);
    if (!traced) {
        if (f)
            fclose(f);
        return FALSE;
    }
    return results_close(f, "trace.json", err);
}

/* Plots and report.html for the installed folder at out. A missing gnuplot or a plot that
 * cannot be drawn is a warning; a failed write (disk full) fails the run even with --quiet:
 * false then, the figures it cut short removed, the data files complete. */
static gboolean draw_report(const struct run_options *o, const struct scenario *sc, const char *out)
{
    char *warn = NULL;
    GError *perr = NULL;
    gboolean drawn = (o->no_plots || !sc->plots) ? report_write(out, &perr) : report_results(out, &warn, &perr);
    if (!drawn) {
        gboolean io = perr->domain == G_FILE_ERROR || (perr->domain == PLOT_ERROR && perr->code == PLOT_ERROR_IO);
        fprintf(stderr, "rocesim: %sreport not written: %s\n", io ? "" : "warning: ", perr->message);
        g_error_free(perr);
        if (io) {
            g_free(warn);
            return FALSE;
        }
    }
    if (warn && !o->quiet)
        fprintf(stderr, "rocesim: warning: %s\n", warn);
    g_free(warn);
    return TRUE;
}

int run_scenario(const struct run_options *o)
{
    GError *err = NULL;
    struct scenario *sc = scenario_load(o->scenario, (const char *const *)o->sets, &err);
    if (!sc) {
        fprintf(stderr, "rocesim: %s\n", err->message);
        g_error_free(err);
        return 2;
    }
    int rc = 2;
    struct topology *topo = NULL;
    struct schedule *sched = NULL;
    struct net *n = NULL;
    struct results_dir rd = { 0 };
    FILE *fq = NULL, *fr = NULL, *fp = NULL, *fc = NULL;
    struct run_figures fig = { .warnings = g_ptr_array_new_with_free_func(g_free) };
    GPtrArray *captures = g_ptr_array_new();
    struct xfer_outcome *outcomes = NULL;
    const char *out = o->out_dir ? o->out_dir : sc->out_dir;

    /* refused before the run: an existing file or foreign folder is the user's data */
    if (!results_check_target(out, &err))
        goto fail;
    if (!(topo = topology_build(sc, &err)) || !(sched = workload_build_all(sc, topo, &err)) ||
        !(n = net_build(sc, topo, sched, &err)))
        goto fail;
    rc = 1;
    interrupt_catch();
    if (!results_begin(&rd, out, &err))
        goto fail;
    n->eng.interrupt = &interrupt_signal;
    if (!(fq = results_open(&rd, "queues.csv", &err)) || !(fr = results_open(&rd, "rates.csv", &err)) ||
        !(fp = results_open(&rd, "pfc.csv", &err)) || !(fc = results_open(&rd, "counters.csv", &err)))
        goto fail;
    fprintf(fc, "t_ns,node,port,counter,value\n");
    fprintf(fq, "t_ns,node,port,prio,bytes\n");
    fprintf(fr, "t_ns,flow,rate_gbps\n");
    fprintf(fp, "t_ns,node,port,prio,event,duration_ns\n");
    n->pfc_csv = fp;
    net_attach_sampler(n, fq, fr, fc);
    if (!open_captures(n, &rd, captures, &err))
        goto fail;
    n->eng.progress = !o->quiet && isatty(STDERR_FILENO);

    double w0 = engine_wall_seconds();
    net_run(n);
    if (interrupt_signal)
        goto interrupted;
    fig.wall_s = engine_wall_seconds() - w0;
    net_flush_samples(n);
    pfc_finish(n);
    if (!close_captures(n, captures, &err))
        goto fail;
    simtime_t end = n->last_event_time;
    fig.end = end;
    fig.peak_rss = peak_rss_bytes();

    n->pfc_csv = NULL;
    gboolean closed = results_close(fq, "queues.csv", &err) && results_close(fr, "rates.csv", &err) &&
                      results_close(fp, "pfc.csv", &err);
    fq = fr = fp = NULL;
    if (!closed)
        goto fail;

    FILE *f;
    if (!(f = results_open(&rd, "transfers.csv", &err)))
        goto fail;
    outcomes = net_outcomes(n);
    outcome_write_transfers(f, n->sched, outcomes, net_ideal_ps, n, &fig);
    if (!results_close(f, "transfers.csv", &err))
        goto fail;
    run_warnings(n, outcomes, end, &fig);
    if (n->sched->colls->len) {
        if (!(f = results_open(&rd, "collectives.csv", &err)))
            goto fail;
        outcome_write_collectives(f, n->sched, outcomes, &fig);
        if (!results_close(f, "collectives.csv", &err))
            goto fail;
    }
    write_counters(n, fc, end);
    closed = results_close(fc, "counters.csv", &err);
    fc = NULL;
    if (!closed)
        goto fail;
    if (!(f = results_open(&rd, "topology.csv", &err)))
        goto fail;
    write_topology(topo, f);
    if (!results_close(f, "topology.csv", &err))
        goto fail;
    if (topo->servers && !write_server_files(n, &rd, end, &fig, &err))
        goto fail;
    char *json = summary_json(n, &fig, end);
    char *jp = g_build_filename(rd.tmp, "summary.json", NULL);
    gboolean ok = g_file_set_contents(jp, json, -1, &err);
    g_free(jp);
    g_free(json);
    if (!ok)
        goto fail;
    if (interrupt_signal)
        goto interrupted;
    if (!results_commit(&rd, &err))
        goto fail;
    interrupt_release(); /* the folder is complete: a signal from here on just ends the process */
    if (!o->quiet)
        print_summary(n, &fig, out);
    /* plots and the report come after the folder is in place */
    if (!draw_report(o, sc, out)) {
        rc = 1;
        goto done;
    }
    rc = n->deadlocked ? 3 : 0;
    goto done;
interrupted:
    g_set_error(&err, G_FILE_ERROR, G_FILE_ERROR_INTR, "interrupted by %s: %s not written",
                interrupt_name(interrupt_signal), out);
fail:
    if (n)
        close_captures(n, captures, NULL);
    if (fq)
        fclose(fq);
    if (fr)
        fclose(fr);
    if (fp)
        fclose(fp);
    if (fc)
        fclose(fc);
    results_abort(&rd);
    fprintf(stderr, "rocesim: %s\n", err ? err->message : "run failed");
    if (err && err->domain == G_FILE_ERROR && err->code == G_FILE_ERROR_EXIST)
        rc = 2; /* an output path that is not ours is a bad command line */
    if (err)
        g_error_free(err);
    interrupt_release(); /* dies of a signal caught during the run, now that nothing is left */
done:
    run_figures_clear(&fig);
    g_ptr_array_unref(captures);
    g_free(outcomes);
    net_free(n);
    schedule_free(sched);
    topology_free(topo);
    scenario_free(sc);
    return rc;
}

/* ---------- command line ---------- */

static gboolean parse_common(int *argc, char ***argv, const char *usage, const char *summary, GOptionEntry *extra,
                             struct run_options *o, GError **err)
{
    GOptionEntry entries[] = {
        { "output", 'o', 0, G_OPTION_ARG_FILENAME, &o->out_dir, "Results folder (default: [output] dir, else results/NAME)", "DIR" },
        { "set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->sets, "Override a scenario key, e.g. switch.ecn_kmin=50KB (repeatable)", "SECTION.KEY=VALUE" },
        { "seed", 0, 0, G_OPTION_ARG_STRING, &o->seed, "Random seed (same as --set scenario.seed=N)", "N" },
        { "quiet", 'q', 0, G_OPTION_ARG_NONE, &o->quiet, "Print nothing but errors", NULL },
        { "no-plots", 0, 0, G_OPTION_ARG_NONE, &o->no_plots, "Do not draw plots", NULL },
        { "max-memory", 0, 0, G_OPTION_ARG_STRING, &o->max_memory,
          "Refuse a scenario estimated to need more memory (default: this machine's)", "SIZE" },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    GOptionContext *ctx = g_option_context_new(usage);
    g_option_context_set_summary(ctx, summary);
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (extra)
        g_option_context_add_main_entries(ctx, extra, NULL);
    gboolean ok = g_option_context_parse(ctx, argc, argv, err);
    g_option_context_free(ctx);
    if (!ok)
        return FALSE;
    if (*argc != 2) {
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "expected exactly one scenario file (see --help)");
        return FALSE;
    }
    o->scenario = (*argv)[1];
    if (!run_set_max_memory(o->max_memory, err))
        return FALSE;
    if (o->seed) {
        char *end;
        g_ascii_strtoull(o->seed, &end, 10);
        if (!*o->seed || *end) {
            g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--seed '%s': expected a whole number", o->seed);
            return FALSE;
        }
        GStrvBuilder *sb = g_strv_builder_new();
        if (o->sets)
            g_strv_builder_addv(sb, (const char **)o->sets);
        char *s = g_strdup_printf("scenario.seed=%s", o->seed);
        g_strv_builder_add(sb, s);
        g_free(s);
        g_strfreev(o->sets);
        o->sets = g_strv_builder_end(sb);
        g_strv_builder_unref(sb);
    }
    return TRUE;
}

gboolean run_set_max_memory(const char *text, GError **err)
{
    uint64_t b = 0;
    char *why = NULL;
    if (text && (!units_parse_size(text, &b, &why) || b == 0)) {
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--max-memory '%s': %s", text,
                    why ? why : "expected a positive size such as 8GiB");
        g_free(why);
        return FALSE;
    }
    memory_set_limit(b);
    return TRUE;
}

void run_options_clear(struct run_options *o)
{
    g_free(o->max_memory);
    g_free(o->out_dir);
    g_strfreev(o->sets);
    g_free(o->seed);
}

int cmd_run(int argc, char **argv)
{
    struct run_options o = { 0 };
    GError *err = NULL;
    if (!parse_common(&argc, &argv, "SCENARIO", "Simulate a scenario and write a results folder.", NULL, &o, &err)) {
        fprintf(stderr, "rocesim run: %s\n", err->message);
        g_error_free(err);
        run_options_clear(&o);
        return 2;
    }
    int rc = run_scenario(&o);
    run_options_clear(&o);
    return rc;
}
