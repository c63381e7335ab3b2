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
#include "analysis/metrics.h"
#include "analysis/warnings.h"
#include "analysis/breakdown.h"
#include "analysis/layers.h"
#include "analysis/trace.h"
#include "analysis/pcap.h"
#include "analysis/plot.h"
#include "analysis/report.h"
#include "cli/commands.h"
#include "sim/beside.h"
#include "sim/cpus.h"
#include "sim/interrupt.h"
#include "sim/mpi_comm.h"
#include "results_io/counters.h"
#include "results_io/folder.h"
#include "results_io/format.h"
#include "results_io/outcome.h"
#include "results_io/outcome_stream.h"
#include "results_io/samples.h"
#include "results_io/select.h"
#include "results_io/summary_run.h"
#include "results_io/topology_csv.h"
#include "cli/run.h"
#include "sim/units.h"
#include "sim/version.h"


/* ---------- small helpers ---------- */


/* Transfer id's outcome while the run may still go on (the transfers.csv stream): a state
 * seen done comes with its final times (models/net.h xfer_state_seen). */
static void net_outcome_seen(const void *src, uint32_t id, struct xfer_outcome *o)
{
    const struct xfer_rt *x = &((const struct net *)src)->xfers[id];
    enum xfer_state st = xfer_state_seen(x);
    o->state = st == XF_DONE ? OUTCOME_DONE : st == XF_POSTED ? OUTCOME_POSTED : OUTCOME_PENDING;
    o->start = st != XF_WAITING ? x->start : 0; /* set before the state that publishes it */
    o->end = st == XF_DONE ? x->end : 0;
}

/* transfers.csv's ideal times, from the stream's thread during the run and from several at
 * once after it (outcome_rows_write_all): each thread remembers its own last one, for one
 * run (a process may run several: tuning, tests) */
struct run_ideal {
    const struct net *n;
    uint64_t run;
};

static simtime_t net_ideal_ps(const void *ctx, uint32_t src, uint32_t dst, uint64_t bytes)
{
    static __thread struct {
        uint64_t run;
        struct ideal_memo memo;
    } mine;
    const struct run_ideal *r = ctx;
    if (mine.run != r->run)
        mine.run = r->run, mine.memo = (struct ideal_memo){ 0 };
    return ideal_transfer_memo_ps(&mine.memo, r->n->sc, r->n->topo, src, dst, bytes);
}

static uint64_t peak_rss_bytes(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (uint64_t)ru.ru_maxrss * 1024;
}

/* A number as metrics_format_kind writes it, into buf. */
static const char *human(metrics_kind kind, double v, char *buf, size_t len)
{
    char *t = metrics_format_kind(kind, v);
    g_strlcpy(buf, t, len);
    g_free(t);
    return buf;
}
#define human_bytes(v, buf, len) human(METRICS_KIND_BYTES, (double)(v), buf, len)
#define human_ns(v, buf, len) human(METRICS_KIND_TIME, (double)(v), buf, len)

/* A parallel run's line: how long each worker ran events inside the windows and how long the
 * global entity's turns took between them (summary.json's engine.partition), so that two
 * ways of running one scenario (threads, MPI ranks) can be compared by their busy times. */
static void print_workers(const struct net *n)
{
    struct net_partition_info p;
    net_partition_describe(n, &p);
    if (p.workers < 2 || !p.busy_s)
        return;
    char la[32];
    printf("  %-12s %u %s, %" G_GUINT64_FORMAT " windows of %s: inside them", "workers", p.workers,
           p.ranks ? "MPI ranks" : "threads", p.windows, human_ns(p.lookahead_ps / PS_PER_NS, la, sizeof la));
    if (p.workers <= 4) {
        for (uint32_t w = 0; w < p.workers; w++)
            printf("%s %.2f s", w ? (w + 1 == p.workers ? " and" : ",") : "", p.busy_s[w]);
        printf(" (estimated load");
        for (uint32_t w = 0; w < p.workers; w++)
            printf("%s %.1f%%", w ? "," : "", 100.0 * net_partition_load_share(&p, w));
        printf(")");
    } else {
        double lo = p.busy_s[0], hi = p.busy_s[0];
        for (uint32_t w = 1; w < p.workers; w++) {
            lo = MIN(lo, p.busy_s[w]);
            hi = MAX(hi, p.busy_s[w]);
        }
        printf(" %.2f-%.2f s a worker", lo, hi);
    }
    printf(", between them %.2f s\n", p.serial_s);
}

static void print_summary(const struct net *n, const struct run_figures *fig, const struct sample_selection *sel,
                          const char *dir)
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
    printf("  %-12s %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " completed, %s", "transfers", fig->done, fig->nxfers,
           human_bytes(fig->bytes, a, sizeof a));
    if (fig->done)
        printf(", last at %s", human_ns(fig->completion / PS_PER_NS, b, sizeof b));
    putchar('\n');
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
               human_bytes(results_port_p99(busiest), b, sizeof b));
    /* the most utilised switch links: where the bandwidth went */
    const struct port_rt *top[3] = { NULL, NULL, NULL };
    double secs = (double)fig->end / PS_PER_S;
    for (uint32_t i = 0; i < t->nports && secs > 0; i++) {
        const struct port_rt *p = &n->ports[i];
        if (p->is_host || !port_tx_wire_bytes(p))
            continue;
        for (int k = 0; k < 3; k++)
            if (!top[k] || port_tx_wire_bytes(p) * (double)top[k]->rate > port_tx_wire_bytes(top[k]) * (double)p->rate) {
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
                   100.0 * port_utilisation(top[k], secs));
        printf("  (utilisation over the run)\n");
    }
    for (guint i = 0; i < fig->warnings->len; i++)
        printf("  WARNING      %s\n", (const char *)g_ptr_array_index(fig->warnings, i));
    outcome_print_collectives(n->sched, fig);
    if (sel->port || sel->scale != 1) {
        char q[32];
        printf("  %-12s %u of %u ports (sample_ports = %s), every %s (sample_scale %u)%s\n", "sampled",
               sel->port ? sel->nports : t->nports, t->nports, sc->sample_ports,
               units_format_time(sc->queue_sample, q, sizeof q), sel->scale, sc->compress ? ", gzip" : "");
    }
    print_workers(n);
    printf("results in %s/\n", dir);
    /* the engine figures close the output: the line benchmarks and logs look for */
    printf("engine: %" G_GUINT64_FORMAT " events (%.2f M/s), %" G_GUINT64_FORMAT " packet-hops (%.2f M/s), "
           "sim %s, wall %.2f s, output %.2f s (%.1f%% of the run and its writing), setup %.2f s, peak RSS %s\n",
           n->eng.events, fig->wall_s > 0 ? n->eng.events / fig->wall_s / 1e6 : 0, n->st.packet_hops,
           fig->wall_s > 0 ? n->st.packet_hops / fig->wall_s / 1e6 : 0, human_ns(fig->end / PS_PER_NS, a, sizeof a),
           fig->wall_s, fig->output_s, 100 * fig->output_share, fig->setup_s, human_bytes(fig->peak_rss, c, sizeof c));
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

/* The ports of [output] pcap ("leaf0:17,host3"), checked before the run: a bad one is bad
 * input (exit 2). NULL without captures or on an error (*err set). */
static GArray *capture_ports(const struct net *n, GError **err)
{
    const struct scenario *sc = n->sc;
    char *bad = NULL;
    GArray *refs = *sc->pcap ? select_parse_ports(n->topo, sc->pcap, &bad) : NULL;
    if (*sc->pcap && !refs)
        scenario_key_error(err, sc, "output", "pcap", sc->pcap,
                           "'%s' is not a port: expected NODE:PORT such as leaf0:17, or a host such as host3", bad);
    g_free(bad);
    return refs;
}

/* Opens one pcap per port of refs (may be NULL: none): files named NODE-PORT.pcap. */
static gboolean open_captures(struct net *n, const struct results_dir *rd, GArray *refs, GPtrArray *writers,
                              GError **err)
{
    const struct scenario *sc = n->sc;
    if (!refs)
        return TRUE;
    gboolean ok = TRUE;
    for (guint i = 0; i < refs->len && ok; i++) {
        const struct port_ref *r = &g_array_index(refs, struct port_ref, i);
        struct port_rt *p = &n->ports[n->topo->nodes[r->node].first_port + r->port];
        if (p->tap)
            continue;
        char *name = g_strdup_printf("%s-%u.pcap", n->topo->nodes[r->node].name, r->port);
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

/* The analyses' warnings (analysis/warnings.c) read only the fabric's final state, and on a
 * collective of millions of transfers they walk every one (the 4096-host AllToAll's 16.8 M:
 * 0.2 s, 2026-12-07), so from RUN_ANALYSIS_THREAD_MIN transfers they run on a thread of their
 * own while transfers.csv's rows are written; run_warnings puts them in their place. */
#define RUN_ANALYSIS_THREAD_MIN 16384u
struct run_analysis {
    const struct net *n;
    simtime_t end;
    GPtrArray *warnings;
    struct beside work;
};

static gpointer run_analysis_main(gpointer data)
{
    struct run_analysis *a = data;
    warnings_for_run(a->n, a->end, a->warnings);
    return NULL;
}

static void run_analysis_start(struct run_analysis *a, const struct net *n, simtime_t end)
{
    *a = (struct run_analysis){ n, end, g_ptr_array_new_with_free_func(g_free), { NULL } };
    beside_start(&a->work, "warnings", run_analysis_main, a, schedule_count(n->sched) >= RUN_ANALYSIS_THREAD_MIN);
}

/* joined before the fabric goes, on every path (run_warnings has taken the warnings on the
 * path that reaches it; a failure joins before it touches the fabric) */
static void run_analysis_clear(struct run_analysis *a)
{
    beside_join(&a->work);
    if (a->warnings)
        g_ptr_array_unref(a->warnings);
    a->warnings = NULL;
}

/* What the run's results need a reader to know: transfers left unfinished, HPCC on paths that
 * change, lossless drops, the analyses' warnings (taken from `analysis`, joined), watchdog
 * storms, a deadlock. */
static void run_warnings(const struct net *n, struct run_analysis *analysis, struct run_figures *fig)
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
    beside_join(&analysis->work);
    g_ptr_array_extend_and_steal(fig->warnings, analysis->warnings); /* frees the emptied array */
    analysis->warnings = NULL;
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

/* The end-of-run counters, the closing of the time series and topology.csv: written on a
 * thread of their own while the run's thread makes summary.json's text, on a fabric of
 * thousands of ports about as long (bench/scale.ini, 4096 hosts: 9.7 ms of files and 11 ms
 * of summary of the 24 ms written after the run, 2026-12-07). Nothing here is read by the
 * summary. */
struct side_files {
    const struct net *n;
    const struct results_dir *rd;
    struct sample_writer *sw;
    simtime_t end;
    gboolean ok;
    GError *err;
};

static gpointer side_files_main(gpointer data)
{
    struct side_files *s = data;
    FILE *f;
    results_net_counters(s->sw->counters, s->n, s->end);
    s->ok = sample_writer_close(s->sw, &s->err) && (f = results_open(s->rd, RESULTS_TOPOLOGY, &s->err)) != NULL;
    if (s->ok) {
        results_write_topology(f, s->n->topo);
        s->ok = results_close(f, RESULTS_TOPOLOGY, &s->err);
    }
    return NULL;
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
    char *pfc_path = g_build_filename(rd->tmp, RESULTS_PFC, NULL);
    if (n->sched->colls->len) {
        if (!(f = results_open(rd, "collectives_breakdown.csv", err))) {
            g_free(pfc_path);
            return FALSE;
        }
        breakdown_write(n, pfc_path, f);
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

/* On a terminal, what the run does while nothing else shows: building a fabric of 16.8 M QPs
 * or writing a 1 GB transfers.csv takes tens of seconds. One line, overwritten, then cleared
 * (clear_stage) before anything else is printed. */
static void G_GNUC_PRINTF(2, 3) show_stage(bool on, const char *fmt, ...)
{
    if (!on)
        return;
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\r  %-68s", what);
}

static void clear_stage(bool on)
{
    if (on)
        fprintf(stderr, "\r%72s\r", "");
}

/* Plots and report.html for the installed folder at out (saying so on a terminal: stages),
 * report.html from the digest of the summary the run wrote there. A missing gnuplot or a plot
 * that cannot be drawn is a warning; a failed write (disk full) fails the run even with
 * --quiet: false then, the figures it cut short removed, the data files complete. */
static gboolean draw_report(const struct run_options *o, const struct scenario *sc, const char *out,
                            const struct summary_run *summary, bool stages)
{
    char *warn = NULL;
    GError *perr = NULL;
    bool plots = !o->no_plots && sc->plots;
    char *path = g_build_filename(out, RESULTS_SUMMARY, NULL);
    results_summary *digest = summary_run_digest(summary, path, &perr);
    g_free(path);
    show_stage(stages && plots, "drawing the plots ...");
    gboolean drawn = digest && (plots ? report_results(out, digest, &warn, &perr)
                                      : report_write_summary(out, digest, &perr));
    clear_stage(stages && plots);
    results_summary_free(digest);
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
        bool root_failed = false;
        if (o->ranks > 1) { /* the others wait for this rank's word */
            bool root_ok;
            mpi_comm_all_ok(false, &root_ok);
            root_failed = !root_ok;
        }
        if (o->rank == 0 || !root_failed)
            fprintf(stderr, "rocesim: %s\n", err->message);
        g_error_free(err);
        return 2;
    }
    int rc = 2;
    struct topology *topo = NULL;
    struct schedule *sched = NULL;
    struct net *n = NULL;
    struct results_dir rd = { 0 };
    struct sample_writer sw = { 0 };
    struct sample_selection sel = { 0 };
    struct summary_run summary = { 0 }; /* summary.json's text, kept for the report's digest */
    struct run_ideal ideal = { 0 };
    static uint64_t runs; /* atomic: tuning runs scenarios on several threads */
    GArray *capture_refs = NULL;
    struct run_figures fig = { .warnings = g_ptr_array_new_with_free_func(g_free) };
    GPtrArray *captures = g_ptr_array_new();
    FILE *xf = NULL;                  /* transfers.csv, */
    struct outcome_rows *xrows = NULL; /* its rows, */
    struct outcome_stream *xstream = NULL; /* written during the run by a thread (one process) */
    struct run_analysis analysis = { 0 }; /* the warnings, found beside the rows */
    const char *out = o->out_dir ? o->out_dir : sc->out_dir;
    /* An MPI run: every rank builds and runs; rank 0 alone writes (and speaks). The ranks
     * agree before the run that all could start, so that one's error ends them all. */
    bool mpi = o->ranks > 1, writer = !mpi || o->rank == 0, agreed = !mpi;

    bool stages = writer && !o->quiet && isatty(STDERR_FILENO);

    /* refused before the run: an existing file or foreign folder is the user's data */
    if (writer && !results_check_target(out, &err))
        goto fail;
    /* one line a step: bench/scale-alltoall.ini's schedule, fabric and sampled ports take about
     * 2.7, 3.5 and 1.3 s (2026-12-07) */
    double s0 = engine_wall_seconds(); /* the setup, for setup_s */
    show_stage(stages, "building the topology ...");
    if (!(topo = topology_build(sc, &err)))
        goto fail;
    show_stage(stages, "building the schedule ...");
    if (!(sched = workload_build_all(sc, topo, &err)))
        goto fail;
    show_stage(stages, "building the fabric: %u hosts, the QPs of %u transfers ...", topo->nhosts,
               schedule_count(sched));
    if (!(n = net_build(sc, topo, sched, &err)))
        goto fail;
    show_stage(stages, "choosing the ports to sample ...");
    if (!sample_selection_build(&sel, n, &err))
        goto fail;
    if (!(capture_refs = capture_ports(n, &err)) && err)
        goto fail;
    uint32_t workers = o->workers;
    if (o->workers_auto && !mpi) {
        /* a capture writes one file in time order: one worker (asked for by number, refused) */
        uint32_t cpus = cpus_available();
        uint32_t fit = capture_refs && capture_refs->len ? 1 : net_workers_possible(n);
        workers = MIN(MIN(cpus, fit), RUN_MAX_WORKERS);
    }
    if ((workers > 1 || mpi) && capture_refs && capture_refs->len) {
        if (mpi)
            g_set_error(&err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "%s: [output] pcap: packet capture runs in one process only; run it without mpirun or "
                        "drop the capture", sc->path);
        else
            g_set_error(&err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "%s: [output] pcap: packet capture runs on one worker only; drop --workers %u or the capture",
                        sc->path, workers);
        goto fail;
    }
    if (mpi ? !net_set_mpi(n, o->rank, o->ranks, &err) : !net_set_workers(n, workers, &err))
        goto fail;
    /* ranks that share one machine count against its CPUs online, whatever mpirun's binding */
    uint32_t cpus = mpi ? cpus_online() : cpus_available(), sharing = mpi ? (uint32_t)mpi_comm_node_size() : workers;
    if (!o->quiet && (mpi ? o->rank == 0 : workers > 1) && sharing > cpus)
        fprintf(stderr,
                "rocesim: warning: %u %s on %s%u CPU%s: they take turns, so the run is slower than on %u%s "
                "(the results are the same%s)\n",
                sharing, mpi ? "MPI ranks" : "workers", mpi ? "this machine's " : "", cpus, cpus == 1 ? "" : "s",
                cpus, mpi ? " ranks" : "", mpi ? "" : "; --workers auto takes one per CPU");
    sample_selection_apply_scale(&sel, sc);
    rc = 1;
    interrupt_catch();
    if (writer && !results_begin(&rd, out, &err))
        goto fail;
    n->eng.interrupt = &interrupt_signal;
    if (writer && !sample_writer_open(&sw, &rd, sc->compress == 1, &sel, &err))
        goto fail;
    struct net_sample_hooks hooks;
    if (writer)
        sample_writer_hooks(&sw, &hooks);
    else {
        net_mpi_sink_hooks(&hooks);
        hooks.flows = sel.flow; /* the other ranks list the flows rank 0's writer samples */
    }
    net_attach_sampler(n, &hooks);
    if (!open_captures(n, &rd, capture_refs, captures, &err))
        goto fail;
    if (writer) {
        if (!(xf = results_open(&rd, RESULTS_TRANSFERS, &err)))
            goto fail;
        ideal = (struct run_ideal){ n, __atomic_add_fetch(&runs, 1, __ATOMIC_RELAXED) };
        xrows = outcome_rows_begin(xf, n->sched, net_ideal_ps, &ideal, &fig);
        /* an MPI run's transfers are on their ranks until the gather after the run */
        if (!mpi)
            xstream = outcome_stream_start(xrows, net_outcome_seen, n);
    }
    n->eng.progress = !o->quiet && isatty(STDERR_FILENO);
    if (!agreed) {
        agreed = true;
        if (!mpi_comm_all_ok(true, NULL)) {
            rc = 2; /* another rank could not start: rank 0 says why, or that rank does */
            if (writer)
                g_set_error(&err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "the run did not start");
            goto quiet_fail;
        }
        if (!net_mpi_same_model(n, &err)) {
            rc = 2;
            if (!writer)
                g_clear_error(&err); /* the same error on every rank: rank 0 says it */
            goto quiet_fail;
        }
    }

    clear_stage(stages); /* the engine's progress line takes over */
    double w0 = engine_wall_seconds();
    fig.setup_s = w0 - s0;
    net_run_workers(n);
    if (interrupt_signal) /* in an MPI run, set on every rank when one was interrupted */
        goto interrupted;
    fig.wall_s = engine_wall_seconds() - w0;
    net_flush_samples(n);
    pfc_finish(n);
    net_mpi_gather(n);
    if (!writer) {
        rc = n->deadlocked ? 3 : 0;
        goto done;
    }
    if (!close_captures(n, captures, &err))
        goto fail;
    simtime_t end = n->last_event_time;
    fig.end = end;
    fig.peak_rss = peak_rss_bytes();
    n->hooks = (struct net_sample_hooks){ 0 };
    uint64_t written0 = results_clock_ns(); /* the writing after the run, for output_s */
    show_stage(stages, "writing the results ...");
    run_analysis_start(&analysis, n, end); /* beside the rows, which take longest */

    fig.output_stream_s = outcome_stream_stop(xstream);
    xstream = NULL;
    if (!outcome_rows_failed(xrows)) /* a full disk: the error comes at the close */
        outcome_rows_write_all(xrows, net_outcome_seen, n, cpus_available()); /* the rows the stream left */
    outcome_rows_end(xrows);
    xrows = NULL;
    FILE *f = xf;
    xf = NULL;
    if (!results_close(f, RESULTS_TRANSFERS, &err))
        goto fail;
    run_warnings(n, &analysis, &fig);
    if (n->sched->colls->len) {
        if (!(f = results_open(&rd, RESULTS_COLLECTIVES, &err)))
            goto fail;
        outcome_write_collectives_from(f, n->sched, net_outcome_seen, n, &fig);
        if (!results_close(f, RESULTS_COLLECTIVES, &err))
            goto fail;
    }
    struct side_files side = { .n = n, .rd = &rd, .sw = &sw, .end = end };
    struct beside side_work;
    beside_start(&side_work, "results", side_files_main, &side, true);
    if (topo->servers) { /* they read pfc.csv back, which the side files close */
        beside_join(&side_work);
        if (!side.ok || !write_server_files(n, &rd, end, &fig, &err)) {
            if (!side.ok)
                g_propagate_error(&err, side.err);
            goto fail;
        }
    }
    summary_run_text(&summary, n, &fig, end, REPORT_PORTS); /* all of summary.json but its engine figures */
    beside_join(&side_work);
    if (!side.ok) {
        g_propagate_error(&err, side.err);
        goto fail;
    }
    double after_s = (double)(results_clock_ns() - written0) / 1e9;
    fig.output_s = (double)sw.output_ns / 1e9 + after_s;
    fig.output_share = fig.wall_s + after_s > 0 ? fig.output_s / (fig.wall_s + after_s) : 0;
    if (!summary_run_write(&rd, &summary, n, &fig, end, &err))
        goto fail;
    if (interrupt_signal)
        goto interrupted;
    if (!results_commit(&rd, &err))
        goto fail;
    interrupt_release(); /* the folder is complete: a signal from here on just ends the process */
    clear_stage(stages);
    if (!o->quiet)
        print_summary(n, &fig, &sel, out);
    /* plots and the report come after the folder is in place */
    if (!draw_report(o, sc, out, &summary, stages)) {
        rc = 1;
        goto done;
    }
    rc = n->deadlocked ? 3 : 0;
    goto done;
interrupted:
    clear_stage(stages);
    g_set_error(&err, G_FILE_ERROR, G_FILE_ERROR_INTR, "interrupted by %s: %s not written",
                interrupt_name(interrupt_signal), out);
fail:
    clear_stage(stages);
    if (!agreed) { /* the other ranks wait for this one's word before the run */
        agreed = true;
        bool root_ok;
        mpi_comm_all_ok(false, &root_ok);
        if (!writer && !root_ok)
            g_clear_error(&err); /* the same error, which rank 0 says */
    }
quiet_fail:
    clear_stage(stages);
    beside_join(&analysis.work); /* it reads the fabric, which the captures' closing writes */
    outcome_stream_stop(xstream);
    xstream = NULL;
    outcome_rows_abort(xrows); /* no percentiles of 33 M FCTs for a run that failed */
    xrows = NULL;
    if (xf)
        fclose(xf);
    xf = NULL;
    if (n)
        close_captures(n, captures, NULL);
    sample_writer_abort(&sw);
    results_abort(&rd);
    if (!writer && err && err->domain == G_FILE_ERROR && err->code == G_FILE_ERROR_INTR)
        g_clear_error(&err); /* rank 0 says it */
    if (writer)
        fprintf(stderr, "rocesim: %s\n", err ? err->message : "run failed");
    else if (err)
        fprintf(stderr, "rocesim (MPI rank %u): %s\n", o->rank, err->message);
    if (err && err->domain == G_FILE_ERROR && err->code == G_FILE_ERROR_EXIST)
        rc = 2; /* an output path that is not ours is a bad command line */
    if (err)
        g_error_free(err);
    interrupt_release(); /* dies of a signal caught during the run, now that nothing is left */
done:
    run_analysis_clear(&analysis); /* joined before the fabric goes */
    summary_run_clear(&summary);
    run_figures_clear(&fig);
    sample_selection_clear(&sel);
    if (capture_refs)
        g_array_free(capture_refs, TRUE);
    g_ptr_array_unref(captures);
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
        { "workers", 'j', 0, G_OPTION_ARG_STRING, &o->workers_s,
          "Simulate on N threads, with results identical to one (default 1; auto: one per CPU this "
          "process may use, as many as the fabric splits into)", "N|auto" },
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
    if (o->workers_s && !strcmp(o->workers_s, "auto")) {
        o->workers_auto = TRUE;
    } else if (o->workers_s) {
        char *end;
        guint64 w = g_ascii_strtoull(o->workers_s, &end, 10);
        if (!*o->workers_s || *end || w < 1 || w > RUN_MAX_WORKERS) {
            g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--workers '%s': expected a whole number from 1 to %d, or auto", o->workers_s,
                        RUN_MAX_WORKERS);
            return FALSE;
        }
        o->workers = (uint32_t)w;
    }
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
    g_free(o->workers_s);
    g_free(o->max_memory);
    g_free(o->out_dir);
    g_strfreev(o->sets);
    g_free(o->seed);
}

int cmd_run(int argc, char **argv)
{
    struct run_options o = { 0 };
    GError *err = NULL;
    /* `mpirun -np N rocesim run ...`: N ranks, one worker each (models/net_mpi.c) */
    int rank = 0, ranks = 0;
    if (mpi_comm_launched()) {
        mpi_comm_init(&rank, &ranks);
        memory_set_copies((uint32_t)mpi_comm_node_size()); /* each rank builds the whole fabric */
    }
    int rc = 2;
    if (!parse_common(&argc, &argv, "SCENARIO", "Simulate a scenario and write a results folder.", NULL, &o, &err)) {
    } else if (ranks > 1 && (o.workers > 1 || o.workers_auto)) {
        g_set_error(&err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--workers %s under mpirun: an MPI run has one worker per rank; drop --workers or mpirun",
                    o.workers_s);
    } else {
        o.rank = (uint32_t)rank;
        o.ranks = ranks > 1 ? (uint32_t)ranks : 0;
        rc = run_scenario(&o);
    }
    if (err) { /* the same on every rank: rank 0 says it */
        if (rank == 0)
            fprintf(stderr, "rocesim run: %s\n", err->message);
        g_error_free(err);
    }
    run_options_clear(&o);
    mpi_comm_finalize();
    return rc;
}
