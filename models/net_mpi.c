/* An MPI run (`mpirun -np N rocesim run ...`): each rank is one worker of a parallel run
 * (models/net_parallel.c) in its own process, over sim/engine_group.h's MPI loop. What the
 * threads of one process share in memory goes through MPI instead, so that the results stay
 * those of one worker, byte for byte:
 *  - every rank builds the whole fabric and runs its part's nodes; the others' copies stay as
 *    built (only net_mine nodes are touched, the global entity's actions included);
 *  - the global entity (sampling ticks, deadlock checks, link faults, route convergence) runs
 *    on every rank alike, from what all ranks report between windows (completions, deadlock
 *    requests), so its events and their keys are the same everywhere;
 *  - packets crossing ranks travel with the window's events (net_wire, as between threads);
 *  - each rank samples its own nodes; rank 0 merges the rows of a tick by the order one
 *    process writes them (port, QP, host), and the PFC rows by (time, node);
 *  - at the end each rank sends the state of its nodes to rank 0, which writes the results. */
#include <math.h>
#include <string.h>
#include "models/net.h"
#include "models/schedule_meta.h"
#include "sim/engine_group.h"
#include "sim/reserve.h"
#include "sim/mpi_comm.h"
#include "sim/version.h"

/* A sampled value on its way to rank 0. */
struct row_rec {
    uint64_t key;
    uint64_t t_ns;
    uint64_t u;
    double d;
    uint32_t id, local;
    int32_t sub;
    uint32_t kind;
};

struct net_mpi {
    struct net_sample_hooks out; /* where rows go: rank 0's writer (the others' write nothing) */
    GByteArray *rows;          /* this tick's rows (struct row_rec), in key order */
    GByteArray *all;           /* rank 0: every rank's */
    size_t *lens;              /* per rank: its bytes in `all` */
};

static const char *const pfc_events[] = { "pause", "resume", "watchdog-storm", "watchdog-restore" };

/* A PFC row as it crosses processes: its event by number. */
struct pfc_rec {
    simtime_t t;
    uint64_t duration_ns;
    uint32_t port, node;
    int32_t prio;
    uint32_t event;
    uint32_t global;           /* made by the global entity's copy (else by the rank's worker) */
};

gboolean net_set_mpi(struct net *n, uint32_t rank, uint32_t ranks, GError **err)
{
    if (ranks > 1 && n->ooo) {
        /* its responder follows the sender's message list (nic.c), memory a thread shares
         * but another process does not have */
        g_set_error(err, SCENARIO_ERROR, 2,
                    "%s: [nic] receiver = ooo-place: an MPI run cannot split it (the responder reads its "
                    "sender's message list); run it on threads with --workers %u instead of mpirun",
                    n->sc->path, ranks);
        return FALSE;
    }
    n->ranks = ranks; /* for the partition's messages */
    if (!net_set_workers(n, ranks, err)) {
        n->ranks = 0;
        return FALSE;
    }
    if (ranks > 1) {
        n->rank = rank;
        n->worker_of = net_partition_worker_of(n->part);
        n->mpi = g_new0(struct net_mpi, 1);
        n->mpi->rows = g_byte_array_new();
        n->mpi->all = g_byte_array_new();
        n->mpi->lens = g_new0(size_t, ranks);
    }
    return TRUE;
}

/* ---------- before the run: every rank built the same model ---------- */

/* What the ranks must share, part by part, so that a difference is named. Each rank reads the
 * scenario, its --set and the files it names on its own machine, and runs its own build: a
 * rank that built another fabric or schedule would exchange events and packets that mean
 * something else there (a handler index, a port, a QP), and the results would be wrong
 * without a word. MD5 (GLib's fastest checksum): the digests catch accidents, not forgery. */
enum model_part { PART_PROGRAM, PART_SCENARIO, PART_TOPOLOGY, PART_SCHEDULE, PART_ENGINE, NPARTS };
#define PART_BYTES 16

/* What differs, and what to do about it. */
static const char *part_differs(enum model_part p)
{
    switch (p) {
    case PART_PROGRAM:
        return "its rocesim is another version or build (run the same build on every machine)";
    case PART_SCENARIO:
        return "its scenario differs (every rank reads the scenario, its --set and --seed itself: give every rank "
               "the same file and options)";
    case PART_TOPOLOGY:
        return "its topology differs (a [topology] file that is not the same on every machine)";
    case PART_SCHEDULE:
        return "its schedule differs (a schedule file that is not the same on every machine)";
    case PART_ENGINE:
    case NPARTS:
        break;
    }
    return "it registered other event handlers or timers (another build of rocesim)";
}

/* Each part is a checksum of its own, of one string or a few numbers. */
static void part_digest(const struct net *n, enum model_part p, guint8 out[PART_BYTES])
{
    GChecksum *c = g_checksum_new(G_CHECKSUM_MD5);
    char *text = NULL;
    uint64_t v[3] = { 0 };
    switch (p) {
    case PART_PROGRAM:
        text = g_strdup("rocesim " ROCESIM_VERSION);
        /* what crosses ranks as bytes (net_wire, engine_group.c) */
        v[0] = sizeof(struct event);
        v[1] = sizeof(struct packet);
        break;
    case PART_SCENARIO:
        text = g_key_file_to_data(n->sc->expanded, NULL, NULL);
        break;
    case PART_TOPOLOGY:
        text = topology_digest(n->topo);
        break;
    case PART_SCHEDULE:
        schedule_checksum(c, n->sched);
        break;
    case PART_ENGINE:
        v[0] = n->eng.hs->n;
        v[1] = n->eng.hs->ntimers;
        break;
    case NPARTS:
        break;
    }
    if (text)
        g_checksum_update(c, (const guchar *)text, -1);
    g_checksum_update(c, (const guchar *)v, sizeof v);
    g_free(text);
    gsize len = PART_BYTES;
    g_checksum_get_digest(c, out, &len);
    g_checksum_free(c);
}

gboolean net_mpi_same_model(const struct net *n, GError **err)
{
    if (!n->mpi)
        return TRUE;
    guint8 mine[NPARTS][PART_BYTES];
    for (int p = 0; p < NPARTS; p++)
        part_digest(n, (enum model_part)p, mine[p]);
    GByteArray *all = g_byte_array_new();
    mpi_comm_allgatherv(mine, sizeof mine, all, NULL);
    gboolean same = TRUE;
    if (all->len != n->ranks * sizeof mine)
        g_error("MPI: %u bytes of model digests from %u ranks", all->len, n->ranks);
    /* every rank finds the same first difference, so all fail alike and rank 0 says it */
    for (uint32_t r = 1; r < n->ranks && same; r++)
        for (int p = 0; p < NPARTS && same; p++)
            if (memcmp(all->data + r * sizeof mine + p * PART_BYTES, all->data + p * PART_BYTES, PART_BYTES)) {
                g_set_error(err, SCENARIO_ERROR, 2, "%s: MPI rank %u built a different model from rank 0's: %s",
                            n->sc->path, r, part_differs((enum model_part)p));
                same = FALSE;
            }
    g_byte_array_free(all, TRUE);
    return same;
}

void net_mpi_free(struct net *n)
{
    if (!n->mpi)
        return;
    g_byte_array_free(n->mpi->rows, TRUE);
    g_byte_array_free(n->mpi->all, TRUE);
    g_free(n->mpi->lens);
    g_free(n->mpi);
    n->mpi = NULL;
}

/* ---------- samples ---------- */

/* The rows of a tick reach rank 0 in the order one process writes them: queue rows by (port,
 * priority), then rates by QP, counters of switch ports by port, then the NICs' by host. */
enum row_kind { ROW_QUEUE, ROW_RATE, ROW_COUNTER };

static void keep_row(struct net *n, enum row_kind kind, uint64_t key, const struct row_rec *r)
{
    struct row_rec x = *r;
    x.key = (uint64_t)kind << 60 | key;
    x.kind = kind;
    g_byte_array_append(n->mpi->rows, (const guint8 *)&x, sizeof x);
}

static void rec_queue(void *ctx, uint64_t t, uint32_t port, const char *node, uint32_t local, int prio,
                      uint32_t bytes)
{
    (void)node;
    keep_row(ctx, ROW_QUEUE, (uint64_t)port << 3 | (uint64_t)prio,
             &(struct row_rec){ .t_ns = t, .u = bytes, .id = port, .local = local, .sub = prio });
}

static void rec_rate(void *ctx, uint64_t t, uint32_t flow, double rate)
{
    keep_row(ctx, ROW_RATE, flow, &(struct row_rec){ .t_ns = t, .d = rate, .id = flow });
}

static void rec_counter(void *ctx, uint64_t t, uint32_t port, const char *node, uint32_t local, enum net_counter c,
                        uint64_t v)
{
    (void)node;
    struct net *n = ctx;
    /* a NIC's counters come at its host's port, after every switch port's, by host */
    uint64_t at = c == NET_CNT_ECN_MARKED ? port : 1ull << 40 | n->ports[port].node;
    keep_row(n, ROW_COUNTER, at << 2 | (uint64_t)c,
             &(struct row_rec){ .t_ns = t, .u = v, .id = port, .local = local, .sub = (int32_t)c });
}

static void write_row(struct net *n, const struct row_rec *r)
{
    const struct net_sample_hooks *h = &n->mpi->out;
    const char *node = r->kind == ROW_RATE ? NULL : n->topo->nodes[n->ports[r->id].node].name;
    if (r->kind == ROW_QUEUE && h->queue)
        h->queue(h->ctx, r->t_ns, r->id, node, r->local, r->sub, (uint32_t)r->u);
    else if (r->kind == ROW_RATE && h->rate)
        h->rate(h->ctx, r->t_ns, r->id, r->d);
    else if (r->kind == ROW_COUNTER && h->counter)
        h->counter(h->ctx, r->t_ns, r->id, node, r->local, (enum net_counter)r->sub, r->u);
}

/* Rank 0 merges the ranks' rows of one tick (each rank's in key order, the keys of two
 * ranks never equal: they name different ports, QPs or hosts). */
static void rows_flush(struct net *n)
{
    struct net_mpi *m = n->mpi;
    mpi_comm_gatherv(m->rows->data, m->rows->len, m->all, m->lens);
    g_byte_array_set_size(m->rows, 0);
    if (n->rank != 0)
        return;
    uint32_t P = n->ranks;
    size_t *at = g_new(size_t, P), *lim = g_new(size_t, P), off = 0;
    for (uint32_t r = 0; r < P; r++) {
        at[r] = off;
        lim[r] = off += m->lens[r];
    }
    for (;;) {
        const struct row_rec *best = NULL;
        uint32_t from = 0;
        for (uint32_t r = 0; r < P; r++) {
            if (at[r] >= lim[r])
                continue;
            const struct row_rec *x = (const struct row_rec *)(m->all->data + at[r]);
            if (!best || x->key < best->key) {
                best = x;
                from = r;
            }
        }
        if (!best)
            break;
        struct row_rec r;
        memcpy(&r, best, sizeof r);
        write_row(n, &r);
        at[from] += sizeof r;
    }
    g_free(at);
    g_free(lim);
}

/* Around a tick: its end sends the tick's rows (a collective: every rank's copy of the
 * global entity ticks alike); rank 0's own tick hook brackets the writing. */
static void rec_tick(void *ctx, bool begin)
{
    struct net *n = ctx;
    const struct net_sample_hooks *h = &n->mpi->out;
    if (begin && h->tick)
        h->tick(h->ctx, true);
    if (begin)
        return;
    rows_flush(n);
    if (h->tick)
        h->tick(h->ctx, false);
}

/* PFC rows are merged before the hook is called (pfc_rows_flush): only the context differs */
static void pfc_passthrough(void *ctx, uint64_t t, uint32_t port, const char *node, uint32_t local, int prio,
                            const char *event, uint64_t duration_ns)
{
    const struct net_sample_hooks *h = &((struct net *)ctx)->mpi->out;
    h->pfc(h->ctx, t, port, node, local, prio, event, duration_ns);
}

/* a batch of PFC rows is handed over on rank 0 only, with no collective: passed through */
static void pfc_batch_passthrough(void *ctx, bool begin)
{
    const struct net_sample_hooks *h = &((struct net *)ctx)->mpi->out;
    h->pfc_batch(h->ctx, begin);
}

void net_mpi_wrap_hooks(struct net *n, struct net_sample_hooks *h)
{
    n->mpi->out = *h;
    h->ctx = n;
    h->queue = h->queue ? rec_queue : NULL;
    h->rate = h->rate ? rec_rate : NULL;
    h->counter = h->counter ? rec_counter : NULL;
    h->tick = rec_tick;
    h->pfc = n->mpi->out.pfc ? pfc_passthrough : NULL;
    h->pfc_batch = n->mpi->out.pfc_batch ? pfc_batch_passthrough : NULL;
}

static void no_queue(void *c, uint64_t t, uint32_t p, const char *nd, uint32_t l, int q, uint32_t b)
{
    (void)c, (void)t, (void)p, (void)nd, (void)l, (void)q, (void)b;
}
static void no_rate(void *c, uint64_t t, uint32_t f, double r) { (void)c, (void)t, (void)f, (void)r; }
static void no_counter(void *c, uint64_t t, uint32_t p, const char *nd, uint32_t l, enum net_counter w, uint64_t v)
{
    (void)c, (void)t, (void)p, (void)nd, (void)l, (void)w, (void)v;
}
static void no_pfc(void *c, uint64_t t, uint32_t p, const char *nd, uint32_t l, int q, const char *e, uint64_t d)
{
    (void)c, (void)t, (void)p, (void)nd, (void)l, (void)q, (void)e, (void)d;
}

void net_mpi_sink_hooks(struct net_sample_hooks *h)
{
    *h = (struct net_sample_hooks){ .queue = no_queue, .rate = no_rate, .counter = no_counter, .pfc = no_pfc };
}

/* ---------- PFC rows ---------- */

static uint32_t pfc_event_no(const char *e)
{
    for (uint32_t i = 0; i < G_N_ELEMENTS(pfc_events); i++)
        if (!strcmp(e, pfc_events[i]))
            return i;
    g_error("PFC event \"%s\" has no number for an MPI run", e);
}

static void take_rows(GByteArray *out, struct net_worker *w, simtime_t upto, uint32_t global)
{
    uint32_t i = 0;
    for (; i < w->nrows && w->rows[i].t <= upto; i++) {
        const struct pfc_row *r = &w->rows[i];
        struct pfc_rec x = { r->t, r->duration_ns, r->port, r->node, r->prio, pfc_event_no(r->event), global };
        g_byte_array_append(out, (const guint8 *)&x, sizeof x);
    }
    if (i) {
        memmove(w->rows, w->rows + i, (size_t)(w->nrows - i) * sizeof *w->rows);
        w->nrows -= i;
    }
}

static void put_row(struct net_worker *w, const struct pfc_rec *x)
{
    if (w->nrows == w->rows_cap) {
        w->rows_cap = w->rows_cap ? w->rows_cap * 2 : 1024; /* amortised */
        w->rows = g_renew(struct pfc_row, w->rows, w->rows_cap);
    }
    w->rows[w->nrows++] = (struct pfc_row){ x->t, x->port, x->node, x->prio, pfc_events[x->event], x->duration_ns };
}

/* The rows of time <= upto of every rank, into rank 0's copies of the workers' contexts (the
 * global entity's copies' rows all into its own, in time order), where pfc_rows_flush finds
 * them as a single process's. */
void net_mpi_pfc_gather(struct net *n, simtime_t upto)
{
    struct net_mpi *m = n->mpi;
    uint32_t P = n->ranks;
    GByteArray *mine = g_byte_array_new();
    if (n->rank != 0) {
        take_rows(mine, &n->wk[n->rank], upto, 0);
        take_rows(mine, &n->wk[P], upto, 1);
    }
    mpi_comm_gatherv(mine->data, mine->len, m->all, m->lens);
    g_byte_array_free(mine, TRUE);
    if (n->rank != 0)
        return;
    /* the workers' rows into their contexts; the global entity's copies' rows (each rank's
     * in time order) merged with rank 0's own by time, stably */
    struct net_worker glob = { 0 };
    size_t off = 0;
    for (uint32_t r = 0; r < P; off += m->lens[r], r++)
        for (size_t k = 0; k < m->lens[r]; k += sizeof(struct pfc_rec)) {
            struct pfc_rec x;
            memcpy(&x, m->all->data + off + k, sizeof x);
            put_row(x.global ? &glob : &n->wk[r], &x);
        }
    if (glob.nrows) {
        struct net_worker *gw = &n->wk[P];
        struct pfc_row *own = gw->rows, *merged = g_new(struct pfc_row, gw->nrows + glob.nrows);
        uint32_t i = 0, j = 0, k = 0;
        while (i < gw->nrows || j < glob.nrows)
            merged[k++] = j == glob.nrows || (i < gw->nrows && own[i].t <= glob.rows[j].t) ? own[i++] : glob.rows[j++];
        g_free(own);
        gw->rows = merged;
        gw->nrows = gw->rows_cap = k;
    }
    g_free(glob.rows);
}

/* ---------- the run ---------- */

static void enter(void *ctx, uint32_t w)
{
    struct net *n = ctx;
    net_self = &n->wk[w];
}

/* A request to arm the deadlock check (struct net_worker's dl_*), as ranks exchange it. */
struct dl_request {
    uint64_t req;
    simtime_t at, call;
    uint64_t key;
    uint32_t owner, origin;
};

/* What each rank tells the others between windows. */
struct window_report {
    uint64_t done;
    simtime_t last_done;
    struct dl_request dl[2];   /* the rank's worker's deadlock request, then its global entity's */
};

static void between(void *ctx, simtime_t end, simtime_t *stop)
{
    struct net *n = ctx;
    uint32_t P = n->ranks;
    struct window_report mine = { 0 };
    struct net_worker *ws[2] = { &n->wk[n->rank], &n->wk[P] };
    for (int k = 0; k < 2; k++) {
        mine.done += ws[k]->done;
        mine.last_done = MAX(mine.last_done, ws[k]->last_done);
        if (ws[k]->dl_req)
            mine.dl[k] = (struct dl_request){ 1, ws[k]->dl_at, ws[k]->dl_call, ws[k]->dl_key.key, ws[k]->dl_owner,
                                              ws[k]->dl_key.origin };
        ws[k]->dl_req = false;
    }
    GByteArray *all = g_byte_array_new();
    mpi_comm_allgatherv(&mine, sizeof mine, all, NULL);
    const struct window_report *rep = (const struct window_report *)all->data;
    if (!n->finished) {
        uint64_t done = 0;
        simtime_t last = 0;
        for (uint32_t r = 0; r < P; r++) {
            done += rep[r].done;
            last = MAX(last, rep[r].last_done);
        }
        if (done == n->nxfers)
            net_all_done(n, last, stop);
    }
    /* the first request, in the order the threads' contexts are looked at: workers, then
     * the global entity */
    const struct dl_request *first = NULL;
    for (int k = 0; k < 2; k++)
        for (uint32_t r = 0; r < P; r++) {
            const struct dl_request *d = &rep[r].dl[k];
            if (d->req && (!first || d->call < first->call || (d->call == first->call && d->owner < first->owner)))
                first = d;
        }
    if (first && !timer_armed(&n->deadlock_timer))
        timer_set_stamped(&n->deadlock_timer, n->wk[P].eng, first->at,
                          (struct engine_key){ first->key, first->origin });
    g_byte_array_free(all, TRUE);
    pfc_rows_flush(n, end);
}

/* The packets this rank put on links to rank `dest`'s nodes in the window. */
static void pack(void *ctx, uint32_t dest, GByteArray *buf)
{
    struct net *n = ctx;
    const struct net_wire *wr = &n->wk[n->rank].wire[dest];
    uint64_t cnt = wr->n;
    g_byte_array_append(buf, (const guint8 *)&cnt, sizeof cnt);
    g_byte_array_append(buf, (const guint8 *)wr->pkt, wr->n * (guint)sizeof *wr->pkt);
    if (n->intd)
        g_byte_array_append(buf, (const guint8 *)wr->intd, wr->n * (guint)sizeof *wr->intd);
}

/* ... arriving here: into this process's copy of the sender's wire, where net_wire_receive
 * takes them as from a thread. */
static void unpack(void *ctx, uint32_t from, const guint8 *data, size_t len)
{
    struct net *n = ctx;
    struct net_wire *wr = &n->wk[from].wire[n->rank];
    uint64_t cnt;
    size_t each = sizeof *wr->pkt + (n->intd ? sizeof *wr->intd : 0);
    if (len < sizeof cnt)
        g_error("MPI rank %u sent no packet count", from);
    memcpy(&cnt, data, sizeof cnt);
    if (len != sizeof cnt + cnt * each)
        g_error("MPI rank %u sent %zu bytes for %" G_GUINT64_FORMAT " packets", from, len, cnt);
    if (cnt > wr->cap) {
        wr->cap = (uint32_t)cnt;
        wr->pkt = g_renew(struct packet, wr->pkt, wr->cap);
        if (n->intd)
            wr->intd = g_renew(struct int_stack, wr->intd, wr->cap);
    }
    wr->n = (uint32_t)cnt;
    if (!cnt)
        return; /* nothing crossed (the arrays may not be there yet) */
    memcpy(wr->pkt, data + sizeof cnt, cnt * sizeof *wr->pkt);
    if (n->intd)
        memcpy(wr->intd, data + sizeof cnt + cnt * sizeof *wr->pkt, cnt * sizeof *wr->intd);
}

void net_run_mpi(struct net *n)
{
    uint32_t P = n->ranks, me = n->rank;
    net_workers_resize(n, 1, P + 1);
    if (me != 0) { /* the packets made while building are this rank's worker's */
        n->wk[me].free = n->wk[0].free;
        n->wk[0].free = (struct pkt_stack){ 0 };
    }
    struct engine **eng = g_new0(struct engine *, P + 1);
    for (uint32_t w = 0; w <= P; w++) {
        if (w && n->sampler)
            net_worker_lists(n, &n->wk[w]);
        n->wk[w].index = w;
        n->wk[w].wire = own_lines0(P + 1, sizeof(struct net_wire)); /* written per event */
        if (w != me && w != P)
            continue;
        eng[w] = g_aligned_alloc0(1, sizeof(struct engine), 64);
        engine_init(eng[w]);
        net_install_prefetch(n, eng[w]);
        engine_set_entities(eng[w], n->topo->nnodes);
        memcpy(eng[w]->seq, n->eng.seq, ((size_t)n->topo->nnodes + 1) * sizeof *eng[w]->seq);
        n->wk[w].eng = eng[w];
    }
    n->nworkers = P;
    n->nctx = P + 1;
    net_start_sampler(n);
    engine_move_pending(&n->eng, eng, n->worker_of); /* the other ranks' events stay theirs */
    struct engine_group g;
    engine_group_init_mpi(&g, eng, P, me, n->worker_of, n->quantum);
    g.between = between;
    g.enter = enter;
    g.begin = net_wire_begin;
    g.receive = net_wire_receive;
    g.pack = pack;
    g.unpack = unpack;
    g.ctx = n;
    g.interrupt = n->eng.interrupt;
    g.progress = n->eng.progress;
    g.work_done = net_work_done;
    simtime_t last = engine_group_run(&g, n->sc->stop);
    net_self = NULL;
    /* the figures every rank agrees on */
    uint64_t v[3] = { last, eng[me]->n + (me == 0 ? eng[P]->n : 0), eng[me]->events + (me == 0 ? eng[P]->events : 0) };
    mpi_comm_allreduce_u64(v, 1, MPI_COMM_MAX);
    mpi_comm_allreduce_u64(v + 1, 2, MPI_COMM_SUM);
    mpi_comm_allreduce_f64(g.busy_s, (int)P, MPI_COMM_SUM); /* each rank has its own entry */
    net_partition_ran(n, g.windows, g.busy_s, g.serial_s);
    n->eng.events = v[2];
    n->eng.halted = eng[P]->halted;
    n->eng.now = v[0];
    engine_group_free(&g);
    for (uint32_t w = 0; w <= P; w++) {
        if (eng[w]) {
            engine_free(eng[w]);
            g_aligned_free(eng[w]);
        }
        n->wk[w].eng = w ? NULL : &n->eng;
    }
    g_free(eng);
    net_run_end(n, v[0], v[1]);
}

/* ---------- the end: every rank's nodes to rank 0 ---------- */

typedef uint32_t (*owner_fn)(const struct net *n, uint32_t i);
static uint32_t port_owner(const struct net *n, uint32_t i) { return n->worker_of[n->ports[i].node]; }
static uint32_t switch_owner(const struct net *n, uint32_t i) { return n->worker_of[n->switches[i].node]; }
static uint32_t host_owner(const struct net *n, uint32_t i) { return n->worker_of[n->hosts[i].node]; }
static uint32_t qp_owner(const struct net *n, uint32_t i) { return n->worker_of[n->hosts[n->qps[i].src].node]; }
static uint32_t resp_owner(const struct net *n, uint32_t i)
{
    return n->worker_of[n->hosts[n->qresp[i].dst].node];
}

/* What points into this process's memory stays rank 0's own. */
static void keep_port(void *dst, const void *local)
{
    struct port_rt *p = dst;
    const struct port_rt *l = local;
    p->net = l->net;
    p->tap = l->tap;
    p->hist = l->hist; /* its weights come apart */
    p->pfc_expire = l->pfc_expire;
    p->pfc_refresh = l->pfc_refresh;
    p->wd_timer = l->wd_timer;
}

static void keep_switch(void *dst, const void *local)
{
    ((struct switch_rt *)dst)->flowlets = ((const struct switch_rt *)local)->flowlets;
}

static void keep_host(void *dst, const void *local)
{
    struct host_rt *h = dst;
    const struct host_rt *l = local;
    h->heap = l->heap;
    h->heap_n = l->heap_n;
    h->heap_cap = l->heap_cap;
    h->wake = l->wake;
}

static void keep_qp(void *dst, const void *local)
{
    struct qp_rt *q = dst;
    const struct qp_rt *l = local;
    q->cc.env = l->cc.env;
}

/* Rank 0 takes each element of an array from the rank that owns it, as records (index, then
 * the element's bytes). */
static void gather_owned(struct net *n, void *base, size_t size, uint32_t count, owner_fn owner,
                         void (*keep)(void *dst, const void *local))
{
    GByteArray *mine = g_byte_array_new(), *all = g_byte_array_new();
    for (uint32_t i = 0; n->rank != 0 && i < count; i++)
        if (owner(n, i) == n->rank) {
            g_byte_array_append(mine, (const guint8 *)&i, sizeof i);
            g_byte_array_append(mine, (const guint8 *)base + (size_t)i * size, (guint)size);
        }
    mpi_comm_gatherv(mine->data, mine->len, all, NULL);
    if (n->rank == 0) {
        void *local = g_malloc(size);
        for (size_t k = 0; k + sizeof(uint32_t) + size <= all->len; k += sizeof(uint32_t) + size) {
            uint32_t i;
            memcpy(&i, all->data + k, sizeof i);
            void *el = (guint8 *)base + (size_t)i * size;
            memcpy(local, el, size);
            memcpy(el, all->data + k + sizeof i, size);
            if (keep)
                keep(el, local);
        }
        g_free(local);
    }
    g_byte_array_free(mine, TRUE);
    g_byte_array_free(all, TRUE);
}

/* The host where transfer (or part) i completes: its receiver, or for an empty one (a
 * marker) its sender; a part's, its transfer's. */
static uint32_t done_host(const struct net *n, uint32_t i)
{
    uint32_t id = i < n->nxfers ? i : n->xfers[i].split;
    const struct transfer *t = schedule_get(n->sched, id);
    return t->bytes ? t->dst : t->src;
}

static uint32_t xfer_src_owner(const struct net *n, uint32_t i)
{
    uint32_t id = i < n->nxfers ? i : n->xfers[i].split;
    return n->worker_of[n->hosts[schedule_get(n->sched, id)->src].node];
}

struct xfer_end {
    uint32_t i;
    uint32_t state;
    simtime_t end;
};

/* A transfer is written where it starts (its sender's rank) and where it completes: rank 0
 * takes the first's record, then the second's completion. */
struct xfer_start {
    uint32_t i;
    struct xfer_rt x;
};

struct parts_left {
    uint32_t i, left;
};

static uint32_t done_owner(const struct net *n, uint32_t i) { return n->worker_of[n->hosts[done_host(n, i)].node]; }

static const guint8 *records(const guint8 *p, GArray *out, uint64_t count)
{
    g_array_append_vals(out, p, (guint)count);
    return p + count * g_array_get_element_size(out);
}

static void gather_xfers(struct net *n)
{
    uint32_t total = n->nxfers + n->nparts;
    GArray *st = g_array_new(FALSE, FALSE, sizeof(struct xfer_start));
    GArray *en = g_array_new(FALSE, FALSE, sizeof(struct xfer_end));
    GArray *pl = g_array_new(FALSE, FALSE, sizeof(struct parts_left));
    for (uint32_t i = 0; i < total; i++) {
        if (n->rank != 0 && xfer_src_owner(n, i) == n->rank) {
            struct xfer_start r = { .i = i, .x = n->xfers[i] };
            g_array_append_val(st, r);
        }
        if (done_owner(n, i) == n->rank && n->xfers[i].state == XF_DONE) {
            struct xfer_end e = { i, n->xfers[i].state, n->xfers[i].end };
            g_array_append_val(en, e);
        }
        if (i < n->nxfers && n->parts_left && n->xfers[i].split != NONE32 && done_owner(n, i) == n->rank) {
            struct parts_left r = { i, n->parts_left[i] };
            g_array_append_val(pl, r);
        }
    }
    uint64_t hdr[3] = { st->len, en->len, pl->len };
    GByteArray *mine = g_byte_array_new(), *all = g_byte_array_new();
    g_byte_array_append(mine, (const guint8 *)hdr, sizeof hdr);
    g_byte_array_append(mine, (const guint8 *)st->data, st->len * (guint)sizeof(struct xfer_start));
    g_byte_array_append(mine, (const guint8 *)en->data, en->len * (guint)sizeof(struct xfer_end));
    g_byte_array_append(mine, (const guint8 *)pl->data, pl->len * (guint)sizeof(struct parts_left));
    size_t *lens = g_new0(size_t, n->ranks);
    mpi_comm_gatherv(mine->data, mine->len, all, lens);
    if (n->rank == 0) {
        g_array_set_size(st, 0);
        g_array_set_size(en, 0);
        g_array_set_size(pl, 0);
        size_t off = 0;
        for (uint32_t r = 0; r < n->ranks; off += lens[r], r++) {
            memcpy(hdr, all->data + off, sizeof hdr);
            const guint8 *p = records(all->data + off + sizeof hdr, st, hdr[0]);
            p = records(p, en, hdr[1]);
            records(p, pl, hdr[2]);
        }
        /* every sender's record first, then every completion (rank 0's own among them) */
        for (guint k = 0; k < st->len; k++) {
            const struct xfer_start *r = &g_array_index(st, struct xfer_start, k);
            n->xfers[r->i] = r->x;
        }
        for (guint k = 0; k < en->len; k++) {
            const struct xfer_end *e = &g_array_index(en, struct xfer_end, k);
            n->xfers[e->i].state = (uint8_t)e->state;
            n->xfers[e->i].end = e->end;
        }
        for (guint k = 0; k < pl->len; k++) {
            const struct parts_left *r = &g_array_index(pl, struct parts_left, k);
            n->parts_left[r->i] = r->left;
        }
    }
    g_array_free(st, TRUE);
    g_array_free(en, TRUE);
    g_array_free(pl, TRUE);
    g_byte_array_free(mine, TRUE);
    g_byte_array_free(all, TRUE);
    g_free(lens);
}

void net_mpi_gather(struct net *n)
{
    if (!n->mpi)
        return;
    const struct topology *t = n->topo;
    gather_owned(n, n->ports, sizeof *n->ports, t->nports, port_owner, keep_port);
    gather_owned(n, n->switches, sizeof *n->switches, t->nnodes - t->nhosts, switch_owner, keep_switch);
    gather_owned(n, n->hosts, sizeof *n->hosts, t->nhosts, host_owner, keep_host);
    gather_owned(n, n->qps, sizeof *n->qps, n->nqps, qp_owner, keep_qp);
    gather_owned(n, n->qresp, sizeof *n->qresp, n->nqps, resp_owner, NULL);
    gather_xfers(n);
    /* the queue-depth histograms of switch ports */
    GByteArray *mine = g_byte_array_new(), *all = g_byte_array_new();
    for (uint32_t i = 0; n->rank != 0 && i < t->nports; i++)
        if (n->ports[i].hist && port_owner(n, i) == n->rank) {
            g_byte_array_append(mine, (const guint8 *)&i, sizeof i);
            g_byte_array_append(mine, (const guint8 *)n->ports[i].hist, sizeof *n->ports[i].hist);
        }
    mpi_comm_gatherv(mine->data, mine->len, all, NULL);
    size_t rec = sizeof(uint32_t) + sizeof(struct qhist);
    for (size_t k = 0; n->rank == 0 && k + rec <= all->len; k += rec) {
        uint32_t i;
        memcpy(&i, all->data + k, sizeof i);
        memcpy(n->ports[i].hist, all->data + k + sizeof i, sizeof(struct qhist));
    }
    g_byte_array_free(mine, TRUE);
    g_byte_array_free(all, TRUE);
    /* the counters: each rank's are its nodes' and its copy of the global entity's, which
     * touches only its own nodes */
    G_STATIC_ASSERT(sizeof(struct net_stats) % sizeof(uint64_t) == 0);
    mpi_comm_allreduce_u64((uint64_t *)&n->st, (int)(sizeof n->st / sizeof(uint64_t)), MPI_COMM_SUM);
}
