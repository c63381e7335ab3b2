/* One rank of a replay: dependencies, timed starts, the transport, the control plane, and on
 * rank 0 the results folder (see replay.h). */
#define _GNU_SOURCE
#include "replay/replay.h"
#include <math.h>
#include <poll.h>
#include <time.h>
#include <arpa/inet.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include "replay/capture.h"
#include "replay/ctrl.h"
#include "replay/hostinfo.h"
#include "replay/report.h"
#include "replay/sampler.h"
#include "replay/udp.h"
#include "replay/verbs_xport.h"

G_DEFINE_QUARK(rocesim-replay-error-quark, replay_error)

#define MAX_POLL 1024
#define CLOCK_SAMPLES 32

struct timed {
    int64_t t;
    uint32_t id;
};

struct rank_state {
    const struct replay_config *c;
    const struct schedule *s;
    uint32_t me, n;
    struct xport *x;
    struct ctrl *ctrl;
    uint32_t *qp_of;               /* transfer -> QP index */
    uint32_t *dep_off, *dep_list;  /* dependents in CSR form */
    uint32_t *deps_left;
    int64_t *known;                /* latest dependency finish known here (local ns) */
    int64_t *posted;               /* local start time, or -1 */
    int64_t local_t0;              /* local time of schedule time 0 */
    GSequence *heap;               /* struct timed: pending starts */
    GByteArray *report;            /* struct replay_record... */
    uint32_t to_start, to_finish;  /* obligations left */
    int64_t last_event;
    char *abort_reason;
    uint32_t *notified_stamp;      /* dedupe notifications: host -> transfer id + 1 */
    guint8 *finished;              /* finished here */
    guint8 *known_done;            /* finished here, or notified */
    guint8 *acked;                 /* sent from here and acknowledged */
    struct hostinfo info;
    struct sampler smp;
    struct capture *cap;
    char *cap_path;                /* rank 0's capture file until it moves into the folder */
};

static uint32_t finish_host(const struct transfer *t) { return t->bytes ? t->dst : t->src; }

static void record(struct rank_state *r, uint32_t id, uint32_t kind, int64_t t, uint64_t v)
{
    struct replay_record rec = { id, kind, t, v };
    g_byte_array_append(r->report, (const guint8 *)&rec, sizeof rec);
}

/* Pending starts in time order (ties by transfer id, so the order is reproducible). */
static gint timed_cmp(gconstpointer a, gconstpointer b, gpointer unused)
{
    (void)unused;
    const struct timed *x = a, *y = b;
    return x->t != y->t ? (x->t < y->t ? -1 : 1) : (x->id > y->id) - (x->id < y->id);
}

static void heap_push(GSequence *h, struct timed e)
{
    g_sequence_insert_sorted(h, g_memdup2(&e, sizeof e), timed_cmp, NULL);
}

static const struct timed *heap_top(GSequence *h)
{
    return g_sequence_is_empty(h) ? NULL : g_sequence_get(g_sequence_get_begin_iter(h));
}

static struct timed heap_pop(GSequence *h)
{
    GSequenceIter *it = g_sequence_get_begin_iter(h);
    struct timed top = *(const struct timed *)g_sequence_get(it);
    g_sequence_remove(it);
    return top;
}

static void stop_with(struct rank_state *r, char *why)
{
    if (!r->abort_reason)
        r->abort_reason = why;
    else
        g_free(why);
}

static void dep_resolved(struct rank_state *r, uint32_t x, int64_t t)
{
    if (t > r->known[x])
        r->known[x] = t;
    if (--r->deps_left[x] == 0)
        heap_push(r->heap, (struct timed){ r->known[x] + (int64_t)(schedule_get(r->s, x)->delay / 1000), x });
}

/* Transfer d finished here at local time t: wake local dependents, notify remote ones. */
static void finish(struct rank_state *r, uint32_t d, int64_t t, uint64_t bytes)
{
    if (r->finished[d])
        return;
    r->finished[d] = 1;
    r->known_done[d] = 1;
    r->to_finish--;
    record(r, d, REC_END, t, bytes);
    for (uint32_t k = r->dep_off[d]; k < r->dep_off[d + 1]; k++) {
        uint32_t x = r->dep_list[k];
        uint32_t h = schedule_get(r->s, x)->src;
        if (h == r->me) {
            dep_resolved(r, x, t);
        } else if (r->notified_stamp[h] != d + 1) {
            r->notified_stamp[h] = d + 1;
            GError *e = NULL;
            if (!r->x->ops->notify(r->x->impl, h, d, &e)) {
                stop_with(r, g_strdup_printf("rank %u: %s", r->me, e->message));
                g_error_free(e);
            }
        }
    }
}

static void ev_landed(void *ctx, uint32_t xfer, uint64_t bytes, int64_t t)
{
    struct rank_state *r = ctx;
    r->last_event = t;
    if (xfer >= r->n || finish_host(schedule_get(r->s, xfer)) != r->me)
        return; /* not a transfer that lands here: ignore rather than trust it */
    finish(r, xfer, t, bytes);
}

static void ev_notified(void *ctx, uint32_t from, uint32_t d, int64_t t)
{
    struct rank_state *r = ctx;
    r->last_event = t;
    if (d >= r->n || finish_host(schedule_get(r->s, d)) != from)
        return;
    if (r->known_done[d])
        return; /* a duplicate */
    r->known_done[d] = 1;
    record(r, d, REC_NOTIFIED, t, from);
    for (uint32_t k = r->dep_off[d]; k < r->dep_off[d + 1]; k++) {
        uint32_t x = r->dep_list[k];
        if (schedule_get(r->s, x)->src == r->me)
            dep_resolved(r, x, t);
    }
}

static void ev_acked(void *ctx, uint32_t xfer, int64_t t)
{
    struct rank_state *r = ctx;
    r->last_event = t;
    if (xfer < r->n)
        r->acked[xfer] = 1;
    record(r, xfer, REC_ACKED, t, 0);
}

static void ev_failed(void *ctx, uint32_t xfer, const char *why)
{
    struct rank_state *r = ctx;
    const struct transfer *t = schedule_get(r->s, xfer);
    stop_with(r, g_strdup_printf("rank %u: transfer %u (host %u -> host %u, %" G_GUINT64_FORMAT
                                 " bytes): %s", r->me, xfer, t->src, t->dst, t->bytes, why));
}

static void ev_broken(void *ctx, const char *why)
{
    struct rank_state *r = ctx;
    stop_with(r, g_strdup_printf("rank %u: %s", r->me, why));
}

static void start(struct rank_state *r, uint32_t x, int64_t now)
{
    const struct transfer *t = schedule_get(r->s, x);
    r->posted[x] = now;
    r->to_start--;
    record(r, x, REC_START, now, 0);
    if (t->bytes == 0) {
        finish(r, x, now, 0);
        return;
    }
    GError *e = NULL;
    if (!r->x->ops->post(r->x->impl, r->qp_of[x], x, t->bytes, &e)) {
        stop_with(r, g_strdup_printf("rank %u: %s", r->me, e->message));
        g_error_free(e);
    }
}

/* Why this rank should stop now, or NULL: a transfer it sent not acknowledged within the
 * timeout, or nothing at all happening for that long while work is left. */
static char *late_transfer(struct rank_state *r, int64_t now)
{
    int64_t T = r->c->timeout_ns;
    for (uint32_t i = 0; i < r->n; i++) {
        const struct transfer *t = schedule_get(r->s, i);
        if (t->src == r->me && t->bytes && r->posted[i] >= 0 && !r->acked[i] &&
            now - r->posted[i] > T)
            return g_strdup_printf("rank %u: transfer %u (host %u -> host %u, %" G_GUINT64_FORMAT
                                   " bytes) not completed within the timeout of %.3f s", r->me, i,
                                   t->src, t->dst, t->bytes, (double)T / 1e9);
    }
    if (now - r->last_event <= T)
        return NULL;
    for (uint32_t i = 0; i < r->n; i++) {
        const struct transfer *t = schedule_get(r->s, i);
        if (t->src == r->me && r->posted[i] < 0) {
            const uint32_t *d = schedule_deps(r->s, t);
            for (uint32_t k = 0; k < t->ndeps; k++)
                if (!r->known_done[d[k]])
                    return g_strdup_printf("rank %u: nothing happened for %.3f s: transfer %u still "
                                           "waits for transfer %u (finishing at host %u)", r->me,
                                           (double)T / 1e9, i, d[k],
                                           finish_host(schedule_get(r->s, d[k])));
        }
        if (finish_host(t) == r->me && !r->finished[i] && t->src != r->me)
            return g_strdup_printf("rank %u: nothing happened for %.3f s: transfer %u from host %u "
                                   "has not arrived", r->me, (double)T / 1e9, i, t->src);
    }
    if (!r->x->ops->quiet(r->x->impl))
        return g_strdup_printf("rank %u: nothing acknowledged for %.3f s", r->me, (double)T / 1e9);
    return NULL;
}

static gboolean setup(struct rank_state *r, GError **err)
{
    const struct schedule *s = r->s;
    r->n = schedule_count(s);
    r->me = (uint32_t)r->c->rank;
    GArray *qps = g_array_new(FALSE, FALSE, sizeof(struct sched_qp));
    if (!schedule_derive_qps(s, qps, &r->qp_of, NULL, err)) {
        g_array_free(qps, TRUE);
        return FALSE;
    }
    g_array_free(qps, TRUE);
    /* the QP index of a v2 file is the tag itself, of a v1 file its derived index: both are
     * what schedule_derive_qps returns, in the order of s->qps */
    uint32_t n = r->n;
    r->dep_off = g_new0(uint32_t, n + 1);
    r->deps_left = g_new0(uint32_t, n ? n : 1);
    r->known = g_new0(int64_t, n ? n : 1);
    r->posted = g_new(int64_t, n ? n : 1);
    r->finished = g_new0(guint8, n ? n : 1);
    r->known_done = g_new0(guint8, n ? n : 1);
    r->acked = g_new0(guint8, n ? n : 1);
    r->notified_stamp = g_new0(uint32_t, (gsize)r->c->size);
    for (uint32_t i = 0; i < n; i++) {
        const struct transfer *t = schedule_get(s, i);
        const uint32_t *d = schedule_deps(s, t);
        for (uint32_t k = 0; k < t->ndeps; k++)
            r->dep_off[d[k] + 1]++;
        r->deps_left[i] = t->ndeps;
        r->posted[i] = -1;
        if (t->src == r->me)
            r->to_start++;
        if (finish_host(t) == r->me)
            r->to_finish++;
    }
    for (uint32_t i = 0; i < n; i++)
        r->dep_off[i + 1] += r->dep_off[i];
    r->dep_list = g_new(uint32_t, r->dep_off[n] ? r->dep_off[n] : 1);
    uint32_t *fill = g_memdup2(r->dep_off, sizeof(uint32_t) * (n + 1));
    for (uint32_t i = 0; i < n; i++) {
        const struct transfer *t = schedule_get(s, i);
        const uint32_t *d = schedule_deps(s, t);
        for (uint32_t k = 0; k < t->ndeps; k++)
            r->dep_list[fill[d[k]]++] = i;
    }
    g_free(fill);
    r->heap = g_sequence_new(g_free);
    r->report = g_byte_array_new();
    return TRUE;
}

static void teardown(struct rank_state *r)
{
    if (r->x)
        r->x->ops->free(r->x->impl);
    ctrl_free(r->ctrl);
    g_free(r->qp_of);
    g_free(r->dep_off);
    g_free(r->dep_list);
    g_free(r->deps_left);
    g_free(r->known);
    g_free(r->posted);
    g_free(r->finished);
    g_free(r->known_done);
    g_free(r->acked);
    g_free(r->notified_stamp);
    if (r->heap)
        g_sequence_free(r->heap);
    if (r->report)
        g_byte_array_unref(r->report);
    g_free(r->abort_reason);
    hostinfo_clear(&r->info);
    sampler_clear(&r->smp);
    capture_close(r->cap, NULL, NULL);
    if (r->cap_path)
        g_unlink(r->cap_path); /* moved into the folder, or not to be kept */
    g_free(r->cap_path);
}

/* Every rank's error of a setup step (NULL: none) to every rank: FALSE with all of them in
 * *err when any rank failed, so no rank goes on alone. */
static gboolean gather_errors(struct rank_state *r, const char *mine, GError **err)
{
    GBytes **st = NULL;
    if (!ctrl_allgather(r->ctrl, mine ? mine : "", mine ? MIN(strlen(mine), 255) : 0, &st, err))
        return FALSE;
    GString *bad = g_string_new(NULL);
    for (int k = 0; k < r->c->size; k++) {
        gsize l;
        const char *m = g_bytes_get_data(st[k], &l);
        if (l)
            g_string_append_printf(bad, "%srank %d: %.*s", bad->len ? "; " : "", k, (int)l, m);
        g_bytes_unref(st[k]);
    }
    g_free(st);
    gboolean ok = bad->len == 0;
    if (!ok)
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_RUN, "%s", bad->str);
    g_string_free(bad, TRUE);
    return ok;
}

/* What every rank reads on its own machine and must share with rank 0: the schedule (and the
 * --subset of its hosts the ranks play), the host map, and the options that shape the traffic.
 * A rank with another schedule would post and wait for other messages, one with another map
 * send to other addresses: the replay would hang to its timeout or measure something else.
 * MD5 (GLib's fastest checksum) catches accidents, not forgery. */
enum input_part { IN_SCHEDULE, IN_HOSTMAP, IN_OPTIONS, NINPUTS };
#define INPUT_BYTES 16

static void input_digest(const struct replay_config *c, enum input_part p, guint8 out[INPUT_BYTES])
{
    GChecksum *k = g_checksum_new(G_CHECKSUM_MD5);
    switch (p) {
    case IN_SCHEDULE:
        schedule_checksum(k, c->sched);
        if (c->rank_host)
            g_checksum_update(k, (const guchar *)c->rank_host, (gssize)(c->size * sizeof *c->rank_host));
        break;
    case IN_HOSTMAP:
        g_checksum_update(k, (const guchar *)c->addr, (gssize)(c->size * sizeof *c->addr));
        break;
    case IN_OPTIONS: {
        uint64_t v[] = { c->mtu, c->rate_bps, c->window, c->cc_line_bps, (uint64_t)c->rto_ns,
                         (uint64_t)c->timeout_ns, (uint64_t)c->start_delay_ns, c->udp_port, c->test_ce_every };
        double drop = c->drop;
        g_checksum_update(k, (const guchar *)v, sizeof v);
        g_checksum_update(k, (const guchar *)&drop, sizeof drop);
        g_checksum_update(k, (const guchar *)(c->transport ? c->transport : "udp"), -1);
        g_checksum_update(k, (const guchar *)(c->cc ? c->cc->name : "none"), -1);
        if (c->scenario) { /* its knobs drive the cc and the NP */
            char *text = g_key_file_to_data(c->scenario->expanded, NULL, NULL);
            g_checksum_update(k, (const guchar *)text, -1);
            g_free(text);
        }
        break;
    }
    case NINPUTS:
        break;
    }
    gsize len = INPUT_BYTES;
    g_checksum_get_digest(k, out, &len);
    g_checksum_free(k);
}

/* Every rank's inputs against rank 0's: FALSE (a bad input, exit 2) naming the first rank and
 * part that differ, the same on every rank. */
static gboolean agree_inputs(struct rank_state *r, GError **err)
{
    guint8 mine[NINPUTS][INPUT_BYTES];
    for (int p = 0; p < NINPUTS; p++)
        input_digest(r->c, (enum input_part)p, mine[p]);
    GBytes **all = NULL;
    if (!ctrl_allgather(r->ctrl, mine, sizeof mine, &all, err))
        return FALSE;
    gboolean same = TRUE;
    gsize l0;
    const guint8 *root = g_bytes_get_data(all[0], &l0);
    for (int k = 1; k < r->c->size; k++) {
        gsize l;
        const guint8 *d = g_bytes_get_data(all[k], &l);
        for (int p = 0; same && p < NINPUTS; p++)
            if (l != sizeof mine || l0 != sizeof mine || memcmp(d + p * INPUT_BYTES, root + p * INPUT_BYTES, INPUT_BYTES)) {
                if (p == IN_SCHEDULE)
                    g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_INPUT,
                                "MPI rank %d's schedule differs from rank 0's (each rank reads %s on its own machine: "
                                "give every rank the same file and --subset)", k, r->c->schedule_path);
                else if (p == IN_HOSTMAP)
                    g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_INPUT,
                                "MPI rank %d's host map differs from rank 0's (each rank reads --hosts on its own "
                                "machine: give every rank the same map)", k);
                else
                    g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_INPUT,
                                "MPI rank %d's options differ from rank 0's (--mtu, --rate, --window, --cc, --rto, "
                                "--timeout, --udp-port, --transport, --scenario and its --set must be the same on "
                                "every rank)", k);
                same = FALSE;
            }
    }
    for (int k = 0; k < r->c->size; k++)
        g_bytes_unref(all[k]);
    g_free(all);
    return same;
}

/* JSON object text obj with member name = the JSON text value added. */
static char *with_member(const char *obj, const char *name, const char *value)
{
    JsonNode *o = json_from_string(obj, NULL), *v = json_from_string(value, NULL);
    if (!o || !JSON_NODE_HOLDS_OBJECT(o) || !v) {
        if (o)
            json_node_unref(o);
        if (v)
            json_node_unref(v);
        return g_strdup(obj);
    }
    json_object_set_member(json_node_get_object(o), name, v);
    char *text = json_to_string(o, FALSE);
    json_node_unref(o);
    return text;
}

/* The rank's report: header then records. */
static GBytes *make_report(struct rank_state *r, gboolean complete)
{
    char *rows = sampler_end(&r->smp, ctrl_now_ns());
    char *info = hostinfo_end(&r->info, rows);
    g_free(rows);
    if (r->x->ops->cc_json) {
        char *cc = r->x->ops->cc_json(r->x->impl, ctrl_now_ns());
        char *both = with_member(info, "cc", cc);
        g_free(cc);
        g_free(info);
        info = both;
    }
    struct replay_report_hdr h = { .rank = r->me, .complete = complete, .local_t0 = r->local_t0,
                                   .info_len = (uint32_t)strlen(info) };
    r->x->ops->stats(r->x->impl, &h.stats);
    GByteArray *b = g_byte_array_new();
    g_byte_array_append(b, (const guint8 *)&h, sizeof h);
    g_byte_array_append(b, (const guint8 *)info, h.info_len);
    g_free(info);
    static const guint8 zeros[8];
    g_byte_array_append(b, zeros, (8 - h.info_len % 8) % 8); /* records stay 8-byte aligned */
    g_byte_array_append(b, r->report->data, r->report->len);
    return g_byte_array_free_to_bytes(b);
}

int64_t replay_default_timeout_ns(const struct schedule *s, uint64_t rate_bps)
{
    uint32_t n = schedule_count(s), nhosts = 0;
    for (uint32_t i = 0; i < n; i++)
        nhosts = MAX(nhosts, MAX(schedule_get(s, i)->src, schedule_get(s, i)->dst) + 1);
    uint64_t *bytes = g_new0(uint64_t, nhosts ? nhosts : 1), busiest = 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct transfer *t = schedule_get(s, i);
        bytes[t->src] += t->bytes;
        if (t->dst != t->src)
            bytes[t->dst] += t->bytes;
    }
    for (uint32_t h = 0; h < nhosts; h++)
        busiest = MAX(busiest, bytes[h]);
    g_free(bytes);
    double ns = rate_bps ? 2.0 * (double)busiest * 8e9 / (double)rate_bps : 0.0;
    return ns > (double)REPLAY_TIMEOUT_FLOOR_NS ? (int64_t)ceil(ns) : REPLAY_TIMEOUT_FLOOR_NS;
}

gboolean replay_run(const struct replay_config *c, enum replay_status *status, GError **err)
{
    struct rank_state r = { .c = c, .s = c->sched };
    gboolean ok = FALSE;
    GBytes **reports = NULL;
    int size = c->size;
    *status = REPLAY_INCOMPLETE;
    if (!setup(&r, err))
        goto out;
    /* each exchange on the control plane may take --timeout, at least 5 s */
    r.ctrl = ctrl_connect(c->rank, size, c->ctrl_addr, c->ctrl_port, MAX(c->timeout_ns, 5000000000LL), err);
    if (!r.ctrl || !agree_inputs(&r, err))
        goto out;
    struct xport_events ev = { &r, ev_landed, ev_notified, ev_acked, ev_failed, ev_broken };
    GError *xe = NULL;
    GBytes *ep = NULL;
    if (c->transport && !strcmp(c->transport, "verbs")) {
        struct verbs_config vc = { .me = r.me, .nhosts = (uint32_t)size, .sched = r.s,
                                   .qp_of = r.qp_of, .mtu = c->mtu,
                                   .fns = c->verbs ? c->verbs : verbs_real(), .device = c->device,
                                   .gid_index = c->gid_index, .addr = c->addr[r.me] };
        for (int p = 0; p < 8; p++) /* the writer's rule when a v1 file has no meta dscp */
            vc.dscp[p] = r.s->meta.present ? r.s->meta.dscp[p] : (uint8_t)(8 * p);
        r.x = verbs_xport_new(&vc, &ev, &ep, &xe);
    } else {
        struct udp_config uc = { .me = r.me, .nhosts = (uint32_t)size, .sched = r.s, .addr = c->addr,
                                 .port = c->udp_port, .mtu = c->mtu, .rate_bps = c->rate_bps,
                                 .window = c->window, .rto_ns = c->rto_ns, .retry = 7,
                                 .entropy_ports = TRUE, .drop = c->drop, .cc = c->cc,
                                 .scenario = c->scenario, .line_bps = c->cc_line_bps,
                                 .test_ce_every = c->test_ce_every };
        r.x = udp_xport_new(&uc, &ev, &xe);
    }
    if (!xe && c->rank == 0 && c->capture_iface) {
        /* next to the folder-to-be, so it can be renamed into it */
        r.cap_path = g_strdup_printf("%s.capture-XXXXXX", c->out_dir);
        int fd = g_mkstemp(r.cap_path);
        if (fd < 0)
            g_set_error(&xe, REPLAY_ERROR, REPLAY_ERROR_RUN, "--capture: %s: %s", r.cap_path, g_strerror(errno));
        else
            close(fd);
        if (fd >= 0)
            r.cap = capture_open(c->capture_iface, r.cap_path, c->transport && !strcmp(c->transport, "verbs")
                                 ? 4791 : c->udp_port, &xe);
    }
    /* every rank says whether its transport came up before anyone starts */
    gboolean up = gather_errors(&r, xe ? xe->message : NULL, err);
    g_clear_error(&xe);
    if (up && ep) {
        /* verbs: every host's QP ends, then every QP to RTS, then everyone says it is */
        GBytes **eps = NULL;
        gsize l;
        const void *d = g_bytes_get_data(ep, &l);
        up = ctrl_allgather(r.ctrl, d, l, &eps, err);
        if (up) {
            verbs_xport_connect(r.x, eps, &xe);
            for (int k = 0; k < size; k++)
                g_bytes_unref(eps[k]);
            g_free(eps);
            up = gather_errors(&r, xe ? xe->message : NULL, err);
            g_clear_error(&xe);
        }
    }
    if (ep)
        g_bytes_unref(ep);
    if (!up)
        goto out;

    /* clocks, then a common start: rank 0 names time 0 on its clock, each rank maps it */
    int64_t *off = g_new0(int64_t, size), *half = g_new0(int64_t, size), *at = g_new0(int64_t, size);
    int64_t *off2 = g_new0(int64_t, size), *half2 = g_new0(int64_t, size), *at2 = g_new0(int64_t, size);
    if (!ctrl_clock_offsets(r.ctrl, CLOCK_SAMPLES, off, half, at, err))
        goto out_clk;
    int64_t plan[2] = { 0, 0 };
    if (c->rank == 0)
        plan[0] = ctrl_now_ns() + c->start_delay_ns;
    GBytes **pl = NULL;
    /* rank 0 sends everyone [t0, off[0..size)] */
    GByteArray *pb = g_byte_array_new();
    if (c->rank == 0) {
        g_byte_array_append(pb, (const guint8 *)plan, sizeof plan[0]);
        g_byte_array_append(pb, (const guint8 *)off, (guint)(sizeof(int64_t) * size));
    }
    gboolean got = ctrl_allgather(r.ctrl, pb->data, pb->len, &pl, err);
    g_byte_array_unref(pb);
    if (!got)
        goto out_clk;
    gsize pl_len;
    const int64_t *p0 = g_bytes_get_data(pl[0], &pl_len);
    r.local_t0 = p0[0] + p0[1 + c->rank];
    for (int k = 0; k < size; k++)
        g_bytes_unref(pl[k]);
    g_free(pl);

    hostinfo_begin(&r.info, c->netdev, c->net_root, c->debugfs_root);
    sampler_begin(&r.smp, c->ib_root, c->device, 1, c->netdev, c->sample_interval_ns, ctrl_now_ns());
    sampler_run(&r.smp);
    for (uint32_t i = 0; i < r.n; i++) {
        const struct transfer *t = schedule_get(r.s, i);
        if (t->src == r.me && t->ndeps == 0)
            heap_push(r.heap, (struct timed){ r.local_t0 + (int64_t)(t->delay / 1000), i });
    }
    r.last_event = r.local_t0;

    /* the run */
    gboolean sent_done = FALSE, fin = FALSE, aborting = FALSE;
    int64_t grace_until = INT64_MAX, last_scan = 0;
    reports = g_new0(GBytes *, size);
    int ndone = 0;
    char *final_reason = NULL;
    while (!fin) {
        int64_t now = ctrl_now_ns();
        while (heap_top(r.heap) && heap_top(r.heap)->t <= now && !aborting) {
            struct timed e = heap_pop(r.heap);
            start(&r, e.id, MAX(now, e.t));
            r.last_event = now;
        }
        r.x->ops->service(r.x->impl, now);
        capture_pump(r.cap);
        if (!aborting && c->stop && *c->stop)
            stop_with(&r, g_strdup_printf("rank %u: stopped by a signal", r.me));
        /* the scan is O(transfers): every 10 ms is soon enough for a timeout in seconds */
        if (!aborting && !r.abort_reason && now > r.local_t0 && now - last_scan >= 10000000) {
            last_scan = now;
            r.abort_reason = late_transfer(&r, now);
        }
        struct ctrl_msg m;
        while (ctrl_next(r.ctrl, &m)) {
            if (m.ev == CTRL_ABORT && !r.abort_reason) {
                gsize l;
                const char *t = g_bytes_get_data(m.data, &l);
                r.abort_reason = g_strndup(t, l);
            } else if (m.ev == CTRL_LOST) {
                if (c->rank == 0) {
                    if (!reports[m.from])
                        stop_with(&r, g_strdup_printf("rank %d went away (its control connection "
                                                      "closed) before finishing", m.from));
                } else {
                    stop_with(&r, g_strdup("rank 0 (the control rank) went away"));
                    fin = TRUE;
                }
            } else if (m.ev == CTRL_DONE && c->rank == 0 && m.from > 0 && m.from < size &&
                       !reports[m.from]) {
                reports[m.from] = g_bytes_ref(m.data);
                ndone++;
            } else if (m.ev == CTRL_FIN) {
                fin = TRUE;
            }
            if (m.data)
                g_bytes_unref(m.data);
        }
        if (r.abort_reason && !aborting) {
            aborting = TRUE;
            final_reason = g_strdup(r.abort_reason);
            ctrl_send_abort(r.ctrl, r.abort_reason);
            grace_until = now + MIN(c->timeout_ns, 5000000000LL);
        }
        gboolean done_here = r.to_start == 0 && r.to_finish == 0 && r.x->ops->quiet(r.x->impl);
        if (!sent_done && (done_here || aborting)) {
            sent_done = TRUE;
            GBytes *rep = make_report(&r, done_here && !aborting);
            if (c->rank == 0) {
                reports[0] = rep;
                ndone++;
            } else {
                gsize l;
                const void *d = g_bytes_get_data(rep, &l);
                ctrl_send_done(r.ctrl, d, l, NULL);
                g_bytes_unref(rep);
                if (aborting)
                    fin = TRUE; /* rank 0 has what we know; nothing more to wait for */
            }
        }
        if (c->rank == 0 && (ndone == size || now > grace_until)) {
            ctrl_send_fin(r.ctrl);
            fin = TRUE;
        }
        if (c->rank != 0 && aborting && now > grace_until)
            fin = TRUE;
        if (fin)
            break;
        /* sleep until input, the next start, the transport's next timer, or 20 ms */
        struct pollfd fds[MAX_POLL];
        int nf = r.x->ops->pollfds(r.x->impl, fds, MAX_POLL);
        nf += ctrl_pollfds(r.ctrl, fds + nf, MAX_POLL - nf);
        if (r.cap && nf < MAX_POLL && capture_fd(r.cap) >= 0)
            fds[nf++] = (struct pollfd){ .fd = capture_fd(r.cap), .events = POLLIN };
        int64_t due = MIN(r.x->ops->next_due(r.x->impl), now + 20000000);
        if (heap_top(r.heap) && !aborting)
            due = MIN(due, heap_top(r.heap)->t);
        if (due > now) {
            int64_t w = due - now;
            struct timespec ts = { (time_t)(w / 1000000000), (long)(w % 1000000000) };
            ppoll(fds, (nfds_t)nf, &ts, NULL);
        }
    }

    gboolean complete = !aborting && !r.abort_reason;
    if (c->rank == 0) {
        /* drift: a second estimate after the run; one that failed part way is not used */
        gboolean drift = complete && ctrl_clock_offsets(r.ctrl, CLOCK_SAMPLES, off2, half2, at2, NULL);
        struct replay_clock clk = { off, half, at, drift ? off2 : NULL, half2, at2 };
        for (int k = 0; k < size; k++)
            if (!reports[k])
                complete = FALSE;
        if (r.cap) {
            uint64_t pk = 0, dr = 0;
            capture_close(r.cap, &pk, &dr);
            r.cap = NULL;
            printf("capture on %s: %" G_GUINT64_FORMAT " frames, %" G_GUINT64_FORMAT " dropped by "
                   "the kernel or interface\n", c->capture_iface, pk, dr);
        }
        ok = replay_write_results(c, reports, &clk, complete, final_reason, r.cap_path, err);
        *status = complete ? REPLAY_COMPLETE : REPLAY_INCOMPLETE;
    } else {
        if (complete)
            ctrl_clock_offsets(r.ctrl, CLOCK_SAMPLES, NULL, NULL, NULL, NULL);
        if (!complete && final_reason)
            g_printerr("rocesim replay: %s\n", final_reason);
        *status = complete ? REPLAY_COMPLETE : REPLAY_INCOMPLETE;
        ok = TRUE;
    }
    g_free(final_reason);
out_clk:
    g_free(off);
    g_free(half);
    g_free(at);
    g_free(off2);
    g_free(half2);
    g_free(at2);
out:
    if (reports) {
        for (int k = 0; k < size; k++)
            if (reports[k])
                g_bytes_unref(reports[k]);
        g_free(reports);
    }
    teardown(&r);
    return ok;
}
