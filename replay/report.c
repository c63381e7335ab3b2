/* Rank 0's results folder from every rank's report (see report.h). */
#include "replay/report.h"
#include <glib/gstdio.h>
#include <arpa/inet.h>
#include <string.h>
#include "models/cc.h"
#include "results_io/counters.h"
#include "results_io/folder.h"
#include "results_io/format.h"
#include "results_io/summary.h"

int64_t replay_to_rank0(const struct replay_clock *k, int r, int64_t t)
{
    double off = (double)k->off[r];
    if (k->off_after && k->at_after[r] != k->at[r]) {
        /* the offset drifts linearly between the two samples (taken on rank 0's clock) */
        double t0 = (double)t - off;
        double slope = (double)(k->off_after[r] - k->off[r]) / (double)(k->at_after[r] - k->at[r]);
        off += slope * (t0 - (double)k->at[r]);
    }
    return t - (int64_t)off;
}

/* A time interpolated between the two offset samples is off by at most the larger of their
 * two bounds: both count (the after-run sample is often the poorer one, taken under load). */
int64_t replay_clock_uncertainty(const struct replay_clock *k, int r)
{
    int64_t u = k->half[r];
    if (k->off_after && k->half_after)
        u = MAX(u, k->half_after[r]);
    return u;
}

/* The counters.csv names of struct xport_stats' fields, in its order. */
static const enum results_counter stat_names[] = {
    RC_TX_PACKETS, RC_TX_BYTES, RC_RX_PACKETS, RC_RX_BYTES, RC_RETRANSMITTED_PACKETS, RC_TIMEOUTS,
    RC_NAKS_SENT, RC_NAKS_RECEIVED, RC_DUPLICATE_REQUEST, RC_OUT_OF_SEQUENCE,
    RC_NP_ECN_MARKED_ROCE_PACKETS, RC_NP_CNP_SENT, RC_RP_CNP_HANDLED, RC_ICRC_ERRORS,
};
G_STATIC_ASSERT(sizeof(struct xport_stats) == G_N_ELEMENTS(stat_names) * sizeof(uint64_t));

struct parsed {
    const struct replay_report_hdr *h;
    JsonNode *info;     /* the rank's hostinfo object, or NULL */
    const struct replay_record *rec;
    size_t nrec;
};

static JsonNode *json_from_string_len(const char *t, size_t n)
{
    char *z = g_strndup(t, n);
    JsonNode *node = json_from_string(z, NULL);
    g_free(z);
    return node && JSON_NODE_HOLDS_OBJECT(node) ? node : (node ? (json_node_unref(node), NULL) : NULL);
}

static gboolean parse(GBytes *b, struct parsed *p)
{
    gsize n;
    const uint8_t *d = g_bytes_get_data(b, &n);
    if (n < sizeof *p->h)
        return FALSE;
    const struct replay_report_hdr *h = (const void *)d;
    size_t rest = n - sizeof *h, info = ((size_t)h->info_len + 7) / 8 * 8; /* padded */
    if (info > rest || (rest - info) % sizeof *p->rec)
        return FALSE;
    p->h = h;
    p->info = h->info_len ? json_from_string_len((const char *)(d + sizeof *h), h->info_len) : NULL;
    p->rec = (const void *)(d + sizeof *h + info);
    p->nrec = (rest - info) / sizeof *p->rec;
    return TRUE;
}

/* the schedule host rank r played */
#define HOST_OF(r) (c->rank_host ? c->rank_host[(r)] : (uint32_t)(r))

/* The ranks' reports merged on one time base: rank 0's clock, from schedule time 0. */
struct merged {
    const struct schedule *s;
    uint32_t n;
    int size;
    struct parsed *pr;             /* per rank; .h NULL: no report */
    struct xfer_outcome *o;
    uint64_t *landed;              /* bytes landed per transfer */
    int64_t *notify_at;            /* ps on the time base: when the receiver's notification came */
    GArray *notify_lat;            /* notification latencies (ns) of finished transfers */
    int64_t t0;                    /* rank 0 ns of schedule time 0 */
    uint64_t bytes_sched, bytes_landed, violations;
    int64_t unc;                   /* the largest clock uncertainty of a rank, ns */
};

/* Rank r's local time t (ns) on the common time base, in picoseconds. */
static simtime_t base_ps(const struct replay_clock *k, const struct merged *m, int r, int64_t t)
{
    return (simtime_t)MAX(0, replay_to_rank0(k, r, t) - m->t0) * 1000;
}

static void merge_reports(const struct replay_config *c, GBytes *const *reports, const struct replay_clock *k,
                          struct merged *m)
{
    const struct schedule *s = m->s = c->out_sched ? c->out_sched : c->sched;
    uint32_t n = m->n = schedule_count(s);
    int size = m->size = c->size;
    m->pr = g_new0(struct parsed, size);
    m->o = g_new0(struct xfer_outcome, n ? n : 1);
    m->landed = g_new0(uint64_t, n ? n : 1);
    m->notify_at = g_new0(int64_t, n ? n : 1);
    m->notify_lat = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    struct xfer_outcome *o = m->o;
    gboolean have_t0 = FALSE;
    for (int r = 0; r < size; r++)
        if (reports[r] && parse(reports[r], &m->pr[r]) && !have_t0) {
            m->t0 = replay_to_rank0(k, r, m->pr[r].h->local_t0);
            have_t0 = TRUE;
        }
    for (int r = 0; r < size; r++) {
        if (!m->pr[r].h)
            continue;
        for (size_t i = 0; i < m->pr[r].nrec; i++) {
            const struct replay_record *e = &m->pr[r].rec[i];
            if (e->id >= n)
                continue;
            if (e->kind == REC_START) {
                o[e->id].start = base_ps(k, m, r, e->t);
                if (o[e->id].state == OUTCOME_PENDING)
                    o[e->id].state = OUTCOME_POSTED;
            } else if (e->kind == REC_END) {
                o[e->id].end = base_ps(k, m, r, e->t);
                o[e->id].state = OUTCOME_DONE;
                m->landed[e->id] = e->v;
            } else if (e->kind == REC_NOTIFIED) {
                m->notify_at[e->id] = (int64_t)base_ps(k, m, r, e->t);
            }
        }
    }
    /* a transfer whose end is known is also started (its source's report may be missing) */
    for (uint32_t i = 0; i < n; i++) {
        const struct transfer *t = schedule_get(s, i);
        m->bytes_sched += t->bytes;
        m->bytes_landed += m->landed[i];
        if (o[i].state == OUTCOME_DONE && o[i].start > o[i].end)
            o[i].start = o[i].end;
        if (m->notify_at[i] && o[i].state == OUTCOME_DONE) {
            uint64_t l = (uint64_t)MAX(0, m->notify_at[i] - (int64_t)o[i].end) / 1000;
            g_array_append_val(m->notify_lat, l);
        }
    }
    /* dependency order on the common time base, allowing the clock uncertainty */
    for (int r = 0; r < size; r++)
        m->unc = MAX(m->unc, replay_clock_uncertainty(k, r));
    for (uint32_t i = 0; i < n; i++) {
        const struct transfer *t = schedule_get(s, i);
        const uint32_t *d = schedule_deps(s, t);
        if (o[i].state == OUTCOME_PENDING)
            continue;
        for (uint32_t j = 0; j < t->ndeps; j++)
            if (o[d[j]].state != OUTCOME_DONE ||
                (int64_t)(o[i].start / 1000) + 2 * m->unc < (int64_t)(o[d[j]].end / 1000))
                m->violations++;
    }
}

static void merged_clear(struct merged *m)
{
    for (int r = 0; r < m->size; r++)
        if (m->pr[r].info)
            json_node_unref(m->pr[r].info);
    g_free(m->pr);
    g_free(m->o);
    g_free(m->landed);
    g_free(m->notify_at);
    g_array_free(m->notify_lat, TRUE);
}

/* counters.csv: each rank's transport statistics and the NIC's own (ethtool -S) as deltas
 * over the run, at its end, then the NIC counters sampled during the run. */
static void write_counters(FILE *f, const struct replay_config *c, const struct replay_clock *k,
                           const struct merged *m, uint64_t end_ns)
{
    fputs(RESULTS_COUNTERS_HEADER "\n", f);
    for (int r = 0; r < m->size; r++) {
        if (!m->pr[r].h)
            continue;
        const uint64_t *v = (const uint64_t *)&m->pr[r].h->stats;
        for (size_t i = 0; i < G_N_ELEMENTS(stat_names); i++)
            results_counter_row_host_i64(f, end_ns, HOST_OF(r), results_counter_name(stat_names[i]),
                                         (int64_t)v[i]);
        JsonObject *io = m->pr[r].info ? json_node_get_object(m->pr[r].info) : NULL;
        JsonObject *cn = io && json_object_has_member(io, "counters") ? json_object_get_object_member(io, "counters") : NULL;
        GList *names = cn ? json_object_get_members(cn) : NULL;
        for (GList *l = names; l; l = l->next)
            results_counter_row_host_i64(f, end_ns, HOST_OF(r), l->data, json_object_get_int_member(cn, l->data));
        g_list_free(names);
        /* the NIC's counters sampled during the run (sampler.h): local time -> time base */
        const char *smp = io && json_object_has_member(io, "samples") ? json_object_get_string_member(io, "samples") : NULL;
        /* line by line: g_strsplit on megabytes of rows (a NIC sampled every millisecond for
         * seconds) calls strstr once a line, and ASan's strstr measures the whole rest of
         * the text each time: 80 s and more for 11 MB */
        for (const char *l = smp; l && *l;) {
            const char *e = strchr(l, '\n');
            char *line = e ? g_strndup(l, (gsize)(e - l)) : g_strdup(l);
            char **fl = g_strsplit(line, ",", 4);
            if (g_strv_length(fl) == 4)
                results_counter_row_host_text(f, (uint64_t)(base_ps(k, m, r, g_ascii_strtoll(fl[0], NULL, 10)) / 1000),
                                              HOST_OF(r), fl[1], fl[2], fl[3]);
            g_strfreev(fl);
            g_free(line);
            l = e ? e + 1 : l + strlen(l);
        }
    }
}

/* summary.json's "replay" object: status, transport, clocks and every rank's host. */
static void summary_replay(JsonBuilder *b, const struct replay_config *c, const struct replay_clock *k,
                           const struct merged *m, gboolean complete, const char *reason)
{
    json_builder_set_member_name(b, "replay");
    json_builder_begin_object(b);
    outcome_json_str(b, "status", complete ? "complete" : "incomplete");
    if (!complete) {
        outcome_json_str(b, "reason", reason ? reason : "a rank sent no report");
    }
    outcome_json_str(b, "transport", c->transport);
    outcome_json_str(b, "schedule", c->schedule_path ? c->schedule_path : "");
    outcome_json_int(b, "ranks", (uint64_t)m->size);
    outcome_json_int(b, "mtu", c->mtu);
    outcome_json_int(b, "rate_bps", c->rate_bps);
    outcome_json_int(b, "timeout_ns", (uint64_t)c->timeout_ns);
    outcome_json_str(b, "timeout_source", c->timeout_given ? "--timeout" : "default");
    if (c->transport && !strcmp(c->transport, "udp")) {
        outcome_json_int(b, "rto_ns", (uint64_t)c->rto_ns);
        outcome_json_str(b, "rto_source", c->rto_given ? "--rto" : "default");
    }
    if (c->cc_source) {
        json_builder_set_member_name(b, "cc");
        json_builder_add_string_value(b, c->cc ? c->cc->name : "none");
        json_builder_set_member_name(b, "cc_source");
        json_builder_add_string_value(b, c->cc_source);
    }
    outcome_json_int(b, "clock_uncertainty_ns", (uint64_t)m->unc);
    json_builder_set_member_name(b, "hosts");
    json_builder_begin_array(b);
    for (int r = 0; r < m->size; r++) {
        char ip[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &c->addr[r], ip, sizeof ip);
        json_builder_begin_object(b);
        outcome_json_int(b, "rank", (uint64_t)r);
        outcome_json_str(b, "address", ip);
        json_builder_set_member_name(b, "clock_offset_ns");
        json_builder_add_int_value(b, k->off[r]);
        outcome_json_int(b, "clock_uncertainty_ns", (uint64_t)replay_clock_uncertainty(k, r));
        if (k->off_after) {
            json_builder_set_member_name(b, "clock_offset_after_ns");
            json_builder_add_int_value(b, k->off_after[r]);
        }
        json_builder_set_member_name(b, "reported");
        json_builder_add_boolean_value(b, m->pr[r].h != NULL);
        if (m->pr[r].info) {
            /* the udp transport's reaction points travel with the host's info */
            JsonNode *nic = json_node_copy(m->pr[r].info);
            JsonObject *no = json_node_get_object(nic);
            JsonNode *cc = json_object_has_member(no, "cc") ? json_object_dup_member(no, "cc") : NULL;
            if (cc)
                json_object_remove_member(no, "cc");
            /* the sampled rows are counters.csv's (docs/results-format.md): a copy here made
             * summary.json as big as that file, 11 MB for a NIC sampled every ms for 7 s */
            if (json_object_has_member(no, "samples"))
                json_object_remove_member(no, "samples");
            json_builder_set_member_name(b, "nic");
            json_builder_add_value(b, nic);
            if (cc) {
                json_builder_set_member_name(b, "cc");
                json_builder_add_value(b, cc);
            }
        }
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
}

/* summary.json's "metrics": the transfers' and collectives' figures and the transports'. */
static void summary_metrics(JsonBuilder *b, const struct merged *m, struct run_figures *fig, gboolean complete)
{
    json_builder_set_member_name(b, "metrics");
    json_builder_begin_object(b);
    outcome_json_transfer_metrics(b, fig);
    struct xport_stats tot = { 0 };
    for (int r = 0; r < m->size; r++)
        if (m->pr[r].h) {
            const uint64_t *v = (const uint64_t *)&m->pr[r].h->stats;
            uint64_t *t = (uint64_t *)&tot;
            for (size_t i = 0; i < G_N_ELEMENTS(stat_names); i++)
                t[i] += v[i];
        }
    outcome_json_int(b, "bytes_scheduled", m->bytes_sched);
    outcome_json_int(b, "bytes_landed", m->bytes_landed);
    outcome_json_int(b, "dependency_violations", m->violations);
    outcome_json_int(b, "ecn_marked", tot.ce_received);
    outcome_json_int(b, "cnp_sent", tot.cnp_sent);
    outcome_json_int(b, "cnp_handled", tot.cnp_received);
    outcome_json_int(b, "retransmitted_packets", tot.retransmitted_packets);
    outcome_json_int(b, "timeouts", tot.timeouts);
    outcome_json_int(b, "naks_sent", tot.naks_sent);
    g_array_sort(m->notify_lat, stats_cmp_u64);
    outcome_json_int(b, "notifications", m->notify_lat->len);
    if (m->notify_lat->len) {
        const uint64_t *l = (const uint64_t *)m->notify_lat->data;
        outcome_json_int(b, "notify_latency_p50_ns", stats_percentile_u64(l, m->notify_lat->len, 50));
        outcome_json_int(b, "notify_latency_max_ns", l[m->notify_lat->len - 1]);
    }
    outcome_json_collective_metrics(b, fig);
    outcome_json_int(b, "complete", complete ? 1 : 0);
    outcome_json_job_metrics(b, m->s, fig);
    json_builder_end_object(b);
}

/* The lab's DCQCN knobs as scenario fragments (one per host that has them), and the capture. */
static gboolean write_lab_files(const struct results_dir *rd, const struct replay_config *c, const struct merged *m,
                                const char *capture_file, GError **err)
{
    gboolean ok = TRUE;
    for (int r = 0; ok && r < m->size; r++) {
        JsonObject *io = m->pr[r].info ? json_node_get_object(m->pr[r].info) : NULL;
        if (!io || !json_object_has_member(io, "scenario_fragment"))
            continue;
        char *name = g_strdup_printf("nic-knobs-host%u.ini", HOST_OF(r));
        char *fp = g_build_filename(rd->tmp, name, NULL);
        ok = g_file_set_contents(fp, json_object_get_string_member(io, "scenario_fragment"), -1, err);
        g_free(fp);
        g_free(name);
    }
    if (ok && capture_file) {
        /* the capture goes in with the rest (pcap-stats lab/capture.pcap) */
        char *fp = g_build_filename(rd->tmp, "capture.pcap", NULL), *data = NULL;
        gsize len = 0;
        if (g_rename(capture_file, fp) != 0) /* another file system: copy */
            ok = g_file_get_contents(capture_file, &data, &len, err) &&
                 g_file_set_contents(fp, data, (gssize)len, err);
        g_free(data);
        g_free(fp);
    }
    return ok;
}

gboolean replay_write_results(const struct replay_config *c, GBytes *const *reports,
                              const struct replay_clock *k, gboolean complete,
                              const char *reason, const char *capture_file, GError **err)
{
    struct merged m = { 0 };
    merge_reports(c, reports, k, &m);
    struct results_dir rd = { 0 };
    struct run_figures fig = { .warnings = g_ptr_array_new_with_free_func(g_free) };
    gboolean ok = results_begin(&rd, c->out_dir, err);
    FILE *f = NULL;
    if (ok && (ok = (f = results_open(&rd, RESULTS_TRANSFERS, err)) != NULL)) {
        outcome_write_transfers(f, m.s, m.o, c->ideal, c->ideal_ctx, &fig);
        ok = results_close(f, RESULTS_TRANSFERS, err);
    }
    if (ok && m.s->colls->len && (ok = (f = results_open(&rd, RESULTS_COLLECTIVES, err)) != NULL)) {
        outcome_write_collectives(f, m.s, m.o, &fig);
        ok = results_close(f, RESULTS_COLLECTIVES, err);
    }
    if (ok && (ok = (f = results_open(&rd, RESULTS_COUNTERS, err)) != NULL)) {
        write_counters(f, c, k, &m, fig.completion / 1000);
        ok = results_close(f, RESULTS_COUNTERS, err);
    }
    if (!complete)
        g_ptr_array_add(fig.warnings, g_strdup_printf("incomplete replay: %s",
                                                      reason ? reason : "a rank sent no report"));
    if (m.bytes_landed != m.bytes_sched)
        g_ptr_array_add(fig.warnings, g_strdup_printf("%" G_GUINT64_FORMAT " bytes landed of %"
                                                      G_GUINT64_FORMAT " scheduled",
                                                      m.bytes_landed, m.bytes_sched));
    if (ok) {
        JsonBuilder *b = summary_begin();
        summary_replay(b, c, k, &m, complete, reason);
        summary_metrics(b, &m, &fig, complete);
        outcome_json_jobs(b, m.s, &fig);
        summary_warnings(b, fig.warnings);
        ok = summary_write(rd.tmp, b, err);
    }
    ok = ok && write_lab_files(&rd, c, &m, capture_file, err);
    if (ok)
        ok = results_commit(&rd, err);
    else
        results_abort(&rd);
    if (ok) {
        outcome_print_collectives(m.s, &fig);
        printf("replay %s: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " transfers, %"
               G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " bytes, fct p50 %" G_GUINT64_FORMAT
               " ns p99 %" G_GUINT64_FORMAT " ns -> %s/\n", complete ? "complete" : "INCOMPLETE",
               fig.done, fig.nxfers, m.bytes_landed, m.bytes_sched, fig.fct_p50, fig.fct_p99,
               c->out_dir);
    }
    run_figures_clear(&fig);
    merged_clear(&m);
    return ok;
}
