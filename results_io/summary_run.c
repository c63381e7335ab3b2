/* The simulated run's summary.json (see summary_run.h). */
#include "results_io/summary_run.h"
#include "results_io/counters.h"
#include "results_io/json_text.h"
#include "results_io/summary.h"

#include <string.h>

/* The histogram is read once, into its running sums, and only up to the bin of the deepest
 * queue seen (the bins above hold nothing): a port's 2 KB were read twice (perf put 4 ms of
 * the 4096-host bench's 18 ms summary in this function). */
uint64_t results_port_p99(const struct port_rt *p)
{
    if (!p->hist)
        return 0;
    int top = (int)qhist_bin(p->max_q);
    simtime_t acc[QHIST_BINS], total = 0;
    for (int b = 0; b <= top; b++)
        acc[b] = total += p->hist->weight[b];
    if (!total)
        return 0;
    for (int b = 0; b <= top; b++) {
        if ((double)acc[b] >= 0.99 * (double)total) {
            /* the bin's upper edge, but never above the largest depth actually seen */
            uint64_t up = qhist_bin_upper((unsigned)b);
            return up < p->max_q ? up : p->max_q;
        }
    }
    return 0;
}

/* How the run was split over workers: "workers" 1 for a sequential run. These figures, like
 * the wall-clock ones, are all that differs between runs of one scenario on different worker
 * counts. */
static void summary_partition(JsonBuilder *b, const struct net *n)
{
    struct net_partition_info p;
    net_partition_describe(n, &p);
    outcome_json_int(b, "workers", p.workers);
    outcome_json_dbl(b, "lookahead_ns", (double)p.lookahead_ps / PS_PER_NS);
    if (p.workers < 2)
        return;
    json_builder_set_member_name(b, "partition");
    json_builder_begin_object(b);
    /* "threads": workers inside one process; "mpi": one worker per rank of an mpirun */
    json_builder_set_member_name(b, "transport");
    json_builder_add_string_value(b, p.ranks ? "mpi" : "threads");
    outcome_json_int(b, "units", p.units);
    outcome_json_int(b, "cut_links", p.cut_links);
    outcome_json_int(b, "windows", p.windows);
    outcome_json_dbl(b, "serial_s", p.serial_s);
    json_builder_set_member_name(b, "per_worker");
    json_builder_begin_array(b);
    for (uint32_t w = 0; w < p.workers; w++) {
        json_builder_begin_object(b);
        outcome_json_int(b, "nodes", p.nodes[w]);
        outcome_json_dbl(b, "load_share", net_partition_load_share(&p, w));
        if (p.busy_s)
            outcome_json_dbl(b, "busy_s", p.busy_s[w]); /* the rest of the wall time: waiting */
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
}

/* A node's name as a JSON string, quoted once for all its ports (names[node], made on first
 * use) */
static const char *quoted_name(const struct net *n, char **names, uint32_t node)
{
    if (!names[node])
        names[node] = json_text_quote(n->topo->nodes[node].name);
    return names[node];
}

/* a port's place in the text and what ranks it among the busiest */
struct busy {
    uint64_t max_q;
    double utilisation;
    size_t from, to;
};

/* b into the list of the k busiest, most first, behind its equals (a stable sort's order) */
static void busiest_offer(GArray *a, guint k, const struct busy *b)
{
    guint i = a->len;
    for (; i > 0; i--) {
        const struct busy *o = &g_array_index(a, struct busy, i - 1);
        if (results_port_busier((double)b->max_q, b->utilisation, (double)o->max_q, o->utilisation) >= 0)
            break;
    }
    if (i >= k)
        return;
    g_array_insert_vals(a, i, b, 1);
    if (a->len > k)
        g_array_set_size(a, k);
}

void summary_run_text(struct summary_run *sr, const struct net *n, const struct run_figures *fig, simtime_t end,
                      guint busiest)
{
    const struct scenario *sc = n->sc;
    JsonBuilder *b = summary_begin();
    summary_scenario(b, sc->expanded);
    GString *doc = summary_text_open(summary_text(b));
    *sr = (struct summary_run){ .text = doc, .busiest = g_array_new(FALSE, FALSE, sizeof(struct busy)) };

    /* per-port figures for switch ports that carried traffic, written as text (json_text.h:
     * 65 K ports at 16384 hosts) */
    uint64_t max_q = 0, p99_q = 0;
    double max_paused_fraction = 0;
    double secs = (double)end / PS_PER_S;
    char **names = g_new0(char *, n->topo->nnodes);
    struct json_text j;
    summary_text_member(doc, "ports");
    json_text_init(&j, doc, 1);
    sr->ports_from = json_text_length(&j);
    json_text_begin_array(&j, NULL);
    for (uint32_t i = 0; i < n->topo->nports; i++) {
        const struct port_rt *p = &n->ports[i];
        if (p->is_host || p->tx_packets == 0)
            continue;
        struct busy rank = { p->max_q, port_utilisation(p, secs), json_text_length(&j), 0 };
        uint64_t p99 = results_port_p99(p);
        uint64_t drops = 0;
        for (int q = 0; q < NPRIO; q++)
            drops += p->drops[q];
        if (p->max_q > max_q)
            max_q = p->max_q;
        if (p99 > p99_q)
            p99_q = p99;
        json_text_begin_object(&j, NULL);
        json_text_quoted(&j, "node", quoted_name(n, names, p->node));
        json_text_int(&j, "port", p->local);
        json_text_quoted(&j, "peer", quoted_name(n, names, n->ports[p->peer].node));
        json_text_int(&j, "max_queue_bytes", (int64_t)p->max_q);
        json_text_int(&j, "p99_queue_bytes", (int64_t)p99);
        json_text_int(&j, "tx_bytes", (int64_t)p->tx_bytes);
        json_text_dbl(&j, "utilisation", rank.utilisation);
        json_text_int(&j, "ecn_marked", (int64_t)p->ecn_marked);
        json_text_int(&j, "drops", (int64_t)drops);
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
        json_text_int(&j, "pause_frames_received", (int64_t)pauses);
        json_text_dbl(&j, "paused_fraction", pf);
        json_text_end_object(&j);
        rank.to = json_text_length(&j);
        busiest_offer(sr->busiest, busiest, &rank);
        sr->ports++;
    }
    json_text_end_array(&j);
    sr->ports_to = json_text_length(&j);
    for (uint32_t k = 0; k < n->topo->nnodes; k++)
        g_free(names[k]);
    g_free(names);
    /* host ports can be paused too (by their leaf) */
    for (uint32_t i = 0; i < n->topo->nports; i++) {
        const struct port_rt *p = &n->ports[i];
        for (int q = 0; q < NPRIO; q++)
            if (end && (double)p->rx_pause_dur[q] / (double)end > max_paused_fraction)
                max_paused_fraction = (double)p->rx_pause_dur[q] / (double)end;
    }

    /* the rest through json-glib, after the ports */
    b = json_builder_new();
    json_builder_begin_object(b);
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
            outcome_json_int(b, results_prio_counter_name(RC_DROPS, q, k, sizeof k), n->st.drops_prio[q]);
        }
    outcome_json_job_metrics(b, n->sched, fig);
    json_builder_end_object(b);

    outcome_json_jobs(b, n->sched, fig);

    summary_warnings(b, fig->warnings);
    summary_text_members(doc, summary_text(b));
}

gboolean summary_run_write(const struct results_dir *rd, struct summary_run *sr, const struct net *n,
                           const struct run_figures *fig, simtime_t end, GError **err)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    outcome_json_int(b, "events", n->eng.events);
    outcome_json_dbl(b, "events_per_s", fig->wall_s > 0 ? (double)n->eng.events / fig->wall_s : 0);
    outcome_json_int(b, "packet_hops", n->st.packet_hops);
    outcome_json_dbl(b, "packet_hops_per_s", fig->wall_s > 0 ? (double)n->st.packet_hops / fig->wall_s : 0);
    outcome_json_int(b, "sim_time_ns", end / PS_PER_NS);
    outcome_json_dbl(b, "wall_s", fig->wall_s);
    outcome_json_dbl(b, "setup_s", fig->setup_s);
    outcome_json_int(b, "peak_rss_bytes", fig->peak_rss);
    outcome_json_dbl(b, "output_s", fig->output_s);
    outcome_json_dbl(b, "output_share", fig->output_share);
    outcome_json_dbl(b, "output_stream_s", fig->output_stream_s);
    summary_partition(b, n);
    return summary_write_with(rd->tmp, sr->text, "engine", b, err);
}

/* text from the first c at or after `from` (a value's text begins with its separator) */
static const char *from_char(const GString *text, size_t from, char c)
{
    const char *t = memchr(text->str + from, c, text->len - from);
    if (!t)
        g_error("summary_run_digest: no '%c' where a port's text begins", c);
    return t;
}

results_summary *summary_run_digest(const struct summary_run *sr, const char *path, GError **err)
{
    const GString *t = sr->text;
    GString *d = g_string_sized_new(sr->ports_from + (t->len - sr->ports_to) + 256 * sr->busiest->len);
    const char *open = from_char(t, sr->ports_from, '[');
    g_string_append_len(d, t->str, open - t->str + 1);
    for (guint i = 0; i < sr->busiest->len; i++) {
        const struct busy *b = &g_array_index(sr->busiest, struct busy, i);
        const char *obj = from_char(t, b->from, '{');
        if (i)
            g_string_append_c(d, ',');
        g_string_append_len(d, obj, t->str + b->to - obj);
    }
    g_string_append_c(d, ']');
    g_string_append_len(d, t->str + sr->ports_to, (gssize)(t->len - sr->ports_to));
    results_summary *s = results_summary_parse(path, d->str, d->len, err);
    g_string_free(d, TRUE);
    if (s)
        s->ports_total = sr->ports;
    return s;
}

void summary_run_clear(struct summary_run *sr)
{
    if (sr->text)
        g_string_free(sr->text, TRUE);
    if (sr->busiest)
        g_array_free(sr->busiest, TRUE);
    *sr = (struct summary_run){ 0 };
}

