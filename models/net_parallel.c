/* A parallel run of the fabric (sim/engine_group.h): the nodes are cut into groups, one per
 * worker thread, and the results are those of net_run, byte for byte, whatever the number of
 * workers. What keeps them so:
 *  - every event runs on its node's worker, in the engine's partition-independent order;
 *  - what several nodes' events write lives per worker (struct net_worker) and is merged
 *    between windows in an order that does not depend on the workers: counters are summed,
 *    sampler lists sorted, PFC rows ordered by (time, node);
 *  - a transfer's dependents on other hosts learn of its completion a path's latency later
 *    (net_notify_delay), at least the lookahead; the nodes of one server share a worker;
 *  - the global entity (sampling, deadlock detection, link faults) runs between windows;
 *  - the run ends one quantum after the last completion in both (net_all_done). */
#include <string.h>
#include "models/net.h"
#include "sim/engine_group.h"
#include "sim/reserve.h"

struct net_partition {
    uint32_t workers;
    uint32_t *worker_of;       /* per entity (nodes, then the global one) */
    uint64_t *load;            /* per worker: estimated packet-hops */
    uint32_t *nodes;           /* per worker: nodes */
    uint32_t units;            /* groups that must stay on one worker */
    uint32_t cut_links;        /* links between workers */
    uint64_t windows;
    double *busy_s;            /* per worker: wall seconds running events (after the run) */
    double serial_s;           /* the global entity's turns */
};

/* ---------- partition ---------- */

static uint32_t uf_find(uint32_t *up, uint32_t x)
{
    while (up[x] != x)
        x = up[x] = up[up[x]];
    return x;
}

static void uf_join(uint32_t *up, uint32_t a, uint32_t b)
{
    a = uf_find(up, a);
    b = uf_find(up, b);
    if (a != b)
        up[a < b ? b : a] = a < b ? a : b;
}

struct load_ctx {
    const struct net *n;
    uint64_t *load;
    uint64_t pkts;
};

/* What a packet costs a host (sending or receiving it, with its ACK, congestion control and
 * the QP scheduler) against a switch forwarding it: fitted to bench/large.ini on 2 workers,
 * where with equal weights the worker holding most hosts ran 81.6 s and the other 63.1 s, so
 * a host's share costs about 4 times a switch's. */
#define HOST_HOP_WEIGHT 4

static void add_hop(void *ctx, uint32_t port)
{
    struct load_ctx *c = ctx;
    const struct net *n = c->n;
    const struct port_rt *p = &n->ports[port];
    uint32_t H = n->topo->nhosts;
    c->load[p->node] += c->pkts * (p->node < H ? HOST_HOP_WEIGHT : 1);                /* sent */
    c->load[p->peer_node] += c->pkts * (p->peer_node < H ? HOST_HOP_WEIGHT : 1);      /* received */
}

/* Per node, a link toward the root of its group: the nodes of one server, which must share a
 * worker (g_free it). */
static uint32_t *server_groups(const struct topology *t)
{
    uint32_t *up = g_new(uint32_t, t->nnodes);
    for (uint32_t i = 0; i < t->nnodes; i++)
        up[i] = i;
    for (uint32_t i = 0; i < t->nports; i++) {
        uint32_t a = t->ports[i].node, b = t->ports[t->ports[i].peer].node;
        if (net_same_server(t, a, b))
            uf_join(up, a, b);
    }
    return up;
}

/* The PFC deadlock threshold is shorter than the lookahead of a parallel run: such a run
 * takes one worker (net_set_workers refuses more, net_workers_possible counts one). */
static bool deadlock_check_inside_lookahead(const struct net *n)
{
    const struct scenario *sc = n->sc;
    return sc->pfc && sc->deadlock_threshold && sc->deadlock_threshold < n->quantum;
}

uint32_t net_workers_possible(const struct net *n)
{
    if (deadlock_check_inside_lookahead(n))
        return 1; /* net_set_workers refuses more */
    uint32_t *up = server_groups(n->topo), units = 0;
    for (uint32_t i = 0; i < n->topo->nnodes; i++)
        units += uf_find(up, i) == i;
    g_free(up);
    return units;
}

struct net_partition *net_partition_make(const struct net *n, uint32_t workers, GError **err)
{
    const struct topology *t = n->topo;
    uint32_t N = t->nnodes;
    uint32_t *up = server_groups(t);
    /* the work of each node: the packets of every QP along its ECMP path, sent and received */
    uint64_t *load = g_new0(uint64_t, N);
    uint64_t *qb = g_new0(uint64_t, n->nqps ? n->nqps : 1);
    net_qp_bytes(n, qb);
    uint32_t mtu = n->sc->mtu ? n->sc->mtu : 4096;
    for (uint32_t q = 0; q < n->nqps; q++) {
        if (!qb[q])
            continue;
        struct load_ctx c = { n, load, (qb[q] + mtu - 1) / mtu };
        net_qp_path(n, q, add_hop, &c);
    }
    g_free(qb);
    /* nodes in an order that keeps neighbours together: each switch with hosts, then its
     * hosts; the switches without hosts (spines) spread evenly among them, so that cutting
     * the order at equal load splits a symmetric fabric symmetrically whatever a host's
     * weight against a switch's: bench/large.ini's 32 leaves and 16 spines go 16 + 8 to
     * each of 2 workers (with the spines last, one worker held 18 leaves' hosts and the
     * other 14 and the spines: busy 29.3 s against 24.1 s on this session's VM) */
    uint32_t *order = g_new(uint32_t, N), k = 0;
    GArray **hosts_of = g_new0(GArray *, N);
    for (uint32_t h = 0; h < t->nhosts; h++) {
        uint32_t s = t->attach[h];
        if (!hosts_of[s])
            hosts_of[s] = g_array_new(FALSE, FALSE, sizeof(uint32_t));
        g_array_append_val(hosts_of[s], h);
    }
    uint32_t *core = g_new(uint32_t, N), cores = 0; /* the switches without hosts */
    for (uint32_t s = t->nhosts; s < N; s++)
        if (!hosts_of[s])
            core[cores++] = s;
    uint32_t edges = N - t->nhosts - cores;
    uint32_t edge_i = 0, core_i = 0;
    for (uint32_t s = t->nhosts; s < N; s++) {
        if (!hosts_of[s])
            continue;
        order[k++] = s;
        for (guint j = 0; j < hosts_of[s]->len; j++)
            order[k++] = g_array_index(hosts_of[s], uint32_t, j);
        /* after the i-th edge switch, the core switches up to i x cores / edges */
        for (uint64_t due = (uint64_t)++edge_i * cores / edges; core_i < due;)
            order[k++] = core[core_i++];
    }
    while (core_i < cores) /* no edge switch at all */
        order[k++] = core[core_i++];
    g_free(core);
    for (uint32_t h = 0; h < t->nhosts; h++)
        if (t->attach[h] < t->nhosts || t->attach[h] >= N) /* attached to no switch */
            order[k++] = h;
    for (uint32_t s = 0; s < N; s++)
        if (hosts_of[s])
            g_array_free(hosts_of[s], TRUE);
    g_free(hosts_of);
    /* units (a node and all it must share a worker with) in the order of their first node */
    uint32_t *unit_of_root = g_new(uint32_t, N);
    for (uint32_t i = 0; i < N; i++)
        unit_of_root[i] = UINT32_MAX;
    uint32_t units = 0;
    uint64_t *uload = g_new0(uint64_t, N);
    uint64_t total = 0;
    for (uint32_t j = 0; j < k; j++) {
        uint32_t r = uf_find(up, order[j]);
        if (unit_of_root[r] == UINT32_MAX)
            unit_of_root[r] = units++;
        uload[unit_of_root[r]] += load[order[j]] + 1;
        total += load[order[j]] + 1;
    }
    struct net_partition *p = NULL;
    if (units < workers) {
        const char *opt = n->ranks > 1 ? "mpirun -np" : "--workers"; /* an MPI run sets ranks first */
        g_set_error(err, SCENARIO_ERROR, 2,
                    "%s: %s %u: the fabric splits into at most %u part%s (a server's nodes stay "
                    "together); use %s %u or fewer",
                    n->sc->path, opt, workers, units, units == 1 ? "" : "s", opt, units);
        goto out;
    }
    /* contiguous runs of units with near-equal load: unit u goes to the worker its load's
     * midpoint falls in */
    uint32_t *worker_of_unit = g_new(uint32_t, units);
    uint64_t before = 0;
    uint32_t prev = 0;
    for (uint32_t u = 0; u < units; u++) {
        double mid = ((double)before + (double)uload[u] / 2) / (double)total;
        uint32_t w = (uint32_t)(mid * workers);
        if (w >= workers)
            w = workers - 1;
        if (w < prev)
            w = prev;
        /* no worker skipped: a unit heavier than a worker's share (a multi-GPU server) put the
         * next one two workers on, and scenarios/hot-rail.ini on 3 workers left one with no
         * node at all */
        if (w > prev + (u > 0))
            w = prev + (u > 0);
        /* leave at least one unit for each worker still to come */
        if (workers - 1 - w > units - 1 - u)
            w = workers - 1 - (units - 1 - u);
        worker_of_unit[u] = prev = w;
        before += uload[u];
    }
    p = g_new0(struct net_partition, 1);
    p->workers = workers;
    p->units = units;
    p->worker_of = g_new(uint32_t, N + 1);
    p->load = g_new0(uint64_t, workers);
    p->nodes = g_new0(uint32_t, workers);
    for (uint32_t i = 0; i < N; i++) {
        uint32_t w = worker_of_unit[unit_of_root[uf_find(up, i)]];
        p->worker_of[i] = w;
        p->load[w] += load[i];
        p->nodes[w]++;
    }
    p->worker_of[N] = workers;
    for (uint32_t i = 0; i < t->nports; i++)
        if (i < t->ports[i].peer && p->worker_of[t->ports[i].node] != p->worker_of[t->ports[t->ports[i].peer].node])
            p->cut_links++;
    g_free(worker_of_unit);
out:
    g_free(uload);
    g_free(unit_of_root);
    g_free(order);
    g_free(load);
    g_free(up);
    return p;
}

const uint32_t *net_partition_worker_of(const struct net_partition *p)
{
    return p->worker_of;
}

void net_partition_free(struct net_partition *p)
{
    if (!p)
        return;
    g_free(p->worker_of);
    g_free(p->load);
    g_free(p->nodes);
    g_free(p->busy_s);
    g_free(p);
}

/* ---------- the run ---------- */

static void enter(void *ctx, uint32_t w)
{
    struct net *n = ctx;
    net_self = &n->wk[w];
}

/* Between windows, on the first thread: what the workers gathered in the window that ended. */
static void between(void *ctx, simtime_t end, simtime_t *stop)
{
    struct net *n = ctx;
    if (!n->finished) {
        uint64_t done = 0;
        simtime_t last = 0;
        for (uint32_t w = 0; w < n->nctx; w++) {
            done += n->wk[w].done;
            last = MAX(last, n->wk[w].last_done);
        }
        if (done == n->nxfers)
            net_all_done(n, last, stop);
    }
    /* the deadlock check: armed by the request a single engine would have seen first */
    struct net_worker *first = NULL;
    for (uint32_t w = 0; w < n->nctx; w++) {
        struct net_worker *wk = &n->wk[w];
        if (wk->dl_req && (!first || wk->dl_call < first->dl_call ||
                           (wk->dl_call == first->dl_call && wk->dl_owner < first->dl_owner)))
            first = wk;
    }
    if (first && !timer_armed(&n->deadlock_timer))
        timer_set_stamped(&n->deadlock_timer, n->wk[n->nworkers].eng, first->dl_at, first->dl_key);
    for (uint32_t w = 0; w < n->nctx; w++)
        n->wk[w].dl_req = false;
    pfc_rows_flush(n, end);
}

gboolean net_set_workers(struct net *n, uint32_t workers, GError **err)
{
    net_partition_free(n->part);
    n->part = NULL;
    if (workers <= 1)
        return TRUE;
    const struct scenario *sc = n->sc;
    if (deadlock_check_inside_lookahead(n)) {
        g_set_error(err, SCENARIO_ERROR, 2,
                    "%s: [switch] deadlock_threshold (%" G_GUINT64_FORMAT " ps) is shorter than the lookahead of "
                    "a parallel run (the shortest link delay, %" G_GUINT64_FORMAT " ps); %s",
                    sc->path, sc->deadlock_threshold, n->quantum,
                    n->ranks > 1 ? "run it without mpirun" : "use --workers 1");
        return FALSE;
    }
    n->part = net_partition_make(n, workers, err);
    return n->part != NULL;
}

void net_partition_ran(struct net *n, uint64_t windows, const double *busy_s, double serial_s)
{
    struct net_partition *p = n->part;
    p->windows = windows;
    g_free(p->busy_s);
    p->busy_s = g_memdup2(busy_s, p->workers * sizeof *busy_s);
    p->serial_s = serial_s;
}

double net_work_done(void *ctx)
{
    const struct net *n = ctx;
    if (!n->bytes_expected)
        return -1;
    uint64_t got = 0;
    for (uint32_t w = 0; w < n->nctx; w++)
        got += n->wk[w].st.bytes_delivered;
    return (double)got / (double)n->bytes_expected;
}

void net_progress_install(struct net *n)
{
    n->bytes_expected = 0;
    for (uint32_t i = 0; i < schedule_count(n->sched); i++) {
        const struct transfer *t = schedule_get(n->sched, i);
        if (net_mine(n, n->hosts[t->dst].node))
            n->bytes_expected += t->bytes;
    }
    engine_set_work_done(&n->eng, net_work_done, n);
}

void net_run_workers(struct net *n)
{
    struct net_partition *p = n->part;
    if (n->eng.progress) /* (a pass over every transfer: only on a terminal) */
        net_progress_install(n);
    if (!p) {
        net_run(n);
        return;
    }
    if (n->ranks > 1) {
        net_run_mpi(n);
        return;
    }
    const struct scenario *sc = n->sc;
    uint32_t workers = p->workers;
    /* the contexts: the first keeps the packets and lists made while building */
    net_workers_resize(n, 1, workers + 1);
    struct engine **eng = g_new(struct engine *, workers + 1);
    for (uint32_t w = 0; w <= workers; w++) {
        eng[w] = g_aligned_alloc0(1, sizeof(struct engine), 64);
        engine_init(eng[w]);
        net_install_prefetch(n, eng[w]);
        engine_set_entities(eng[w], n->topo->nnodes);
        memcpy(eng[w]->seq, n->eng.seq, ((size_t)n->topo->nnodes + 1) * sizeof *eng[w]->seq);
        n->wk[w].eng = eng[w];
        if (w && n->sampler)
            net_worker_lists(n, &n->wk[w]);
        n->wk[w].index = w;
        n->wk[w].wire = own_lines0(workers + 1, sizeof(struct net_wire)); /* written per event */
    }
    n->worker_of = p->worker_of;
    n->nworkers = workers;
    n->nctx = workers + 1;
    net_start_sampler(n);
    engine_move_pending(&n->eng, eng, p->worker_of);
    struct engine_group g;
    engine_group_init(&g, eng, workers, p->worker_of, n->quantum);
    g.between = between;
    g.enter = enter;
    g.begin = net_wire_begin;
    g.receive = net_wire_receive;
    g.ctx = n;
    g.interrupt = n->eng.interrupt;
    g.progress = n->eng.progress;
    g.work_done = net_work_done;
    simtime_t last = engine_group_run(&g, sc->stop);
    net_self = NULL;
    net_partition_ran(n, g.windows, g.busy_s, g.serial_s);
    size_t pending = 0;
    n->eng.events = 0;
    for (uint32_t w = 0; w <= workers; w++) {
        n->eng.events += eng[w]->events;
        pending += eng[w]->n;
        if (eng[w]->halted)
            n->eng.halted = true;
    }
    n->eng.now = last;
    engine_group_free(&g);
    for (uint32_t w = 0; w <= workers; w++) {
        engine_free(eng[w]);
        g_aligned_free(eng[w]);
        n->wk[w].eng = w ? NULL : &n->eng;
    }
    g_free(eng);
    net_run_end(n, last, pending);
}

void net_partition_describe(const struct net *n, struct net_partition_info *out)
{
    const struct net_partition *p = n->part;
    *out = (struct net_partition_info){ .workers = p ? p->workers : 1, .lookahead_ps = n->quantum };
    if (!p)
        return;
    out->ranks = n->ranks > 1 ? n->ranks : 0;
    out->units = p->units;
    out->cut_links = p->cut_links;
    out->windows = p->windows;
    out->load = p->load;
    for (uint32_t w = 0; w < p->workers; w++)
        out->load_total += p->load[w];
    out->nodes = p->nodes;
    out->busy_s = p->busy_s;
    out->serial_s = p->serial_s;
}
