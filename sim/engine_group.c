#include "sim/engine_group.h"
#include "sim/cpus.h"
#include "sim/progress.h"
#include "sim/mpi_comm.h"
#include "sim/reserve.h"
#include <glib.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

/* Events a thread may send to another engine now must be later than this (a window's end),
 * or, between windows (the global entity's turn), not earlier than the time it runs. */
static __thread simtime_t send_after;
static __thread bool send_at_or_after;

/* A sense-reversing barrier that spins, then yields: a window is short (micro- to
 * milliseconds of work), so sleeping in the kernel at every one would cost more than it.
 * With a core per worker it spins for up to BARRIER_SPIN_NS before it yields: yielding after
 * 2000 polls (a few microseconds) made sched_yield a tenth of bench/fabric.ini's samples on
 * 2 workers (43 000 windows, two barriers each; a system call is dear on a VM). With more
 * workers than CPUs a waiting worker holds a CPU another needs: after a few polls it sleeps
 * on a condition variable until the last one arrives. Yielding instead (sched_yield, which
 * the kernel's fair scheduler does not promise to honour) ran scenarios/allreduce-ring.ini
 * on 2 workers pinned to one CPU 6.7 times slower than on one worker. */
struct barrier {
    atomic_uint count;
    atomic_uint sense;
    unsigned n;
    bool oversubscribed;       /* more workers than the CPUs this process may use */
    GMutex lock;               /* oversubscribed: sense is set, and waited for, under it */
    GCond turned;
};

#define BARRIER_SLEEP_POLLS 64u

#define BARRIER_SPIN_NS 200000u

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static void barrier_wait(struct barrier *b, unsigned *local)
{
    unsigned s = *local ^= 1u;
    if (atomic_fetch_add_explicit(&b->count, 1, memory_order_acq_rel) == b->n - 1) {
        atomic_store_explicit(&b->count, 0, memory_order_relaxed);
        if (b->oversubscribed) /* under the lock: a waiter between its check and its wait misses no wake */
            g_mutex_lock(&b->lock);
        atomic_store_explicit(&b->sense, s, memory_order_release);
        if (b->oversubscribed) {
            g_cond_broadcast(&b->turned);
            g_mutex_unlock(&b->lock);
        }
        return;
    }
    double give_up = 0;
    for (unsigned spins = 0; atomic_load_explicit(&b->sense, memory_order_acquire) != s; spins++) {
        cpu_relax();
        if (b->oversubscribed && spins >= BARRIER_SLEEP_POLLS) {
            g_mutex_lock(&b->lock);
            while (atomic_load_explicit(&b->sense, memory_order_acquire) != s)
                g_cond_wait(&b->turned, &b->lock);
            g_mutex_unlock(&b->lock);
            return;
        }
        if (spins < 2000)
            continue;
        if (spins & 1023)
            continue;
        if (give_up == 0) {
            give_up = engine_wall_seconds() + BARRIER_SPIN_NS * 1e-9;
        } else if (engine_wall_seconds() > give_up) {
            sched_yield(); /* a long wait: let the writer threads, or anything else, run */
            give_up = 0;
        }
    }
}

struct run {
    struct engine_group *g;
    struct barrier bar;
    simtime_t stop;
    simtime_t *next;           /* per worker: its next event's time, published each window */
    simtime_t gnext;           /* the global entity's next event */
    bool quit;
    struct progress_line pr;
};

void engine_group_init(struct engine_group *g, struct engine **eng, uint32_t workers, const uint32_t *worker_of,
                       simtime_t quantum)
{
    *g = (struct engine_group){ .workers = workers, .eng = eng, .worker_of = worker_of,
                                .quantum = quantum ? quantum : 1, .busy_s = g_new0(double, workers) };
    for (uint32_t w = 0; w <= workers; w++) {
        if (!eng[w])
            continue; /* another rank's */
        eng[w]->grp = g;
        eng[w]->self = w;
        eng[w]->out = own_lines0(workers + 1, sizeof(struct engine_outbox)); /* written per event */
    }
}

void engine_group_init_mpi(struct engine_group *g, struct engine **eng, uint32_t workers, uint32_t rank,
                           const uint32_t *worker_of, simtime_t quantum)
{
    engine_group_init(g, eng, workers, worker_of, quantum);
    g->mpi = true;
    g->rank = rank;
}

void engine_group_free(struct engine_group *g)
{
    g_free(g->busy_s);
    g->busy_s = NULL;
    for (uint32_t w = 0; g->eng && w <= g->workers; w++) {
        struct engine *e = g->eng[w];
        if (!e)
            continue;
        for (uint32_t d = 0; e->out && d <= g->workers; d++)
            g_free(e->out[d].ev);
        g_aligned_free(e->out);
        e->out = NULL;
        e->grp = NULL;
    }
}

void engine_group_send(struct engine *e, simtime_t t, struct engine_key k, uint32_t owner, uint32_t h, uint64_t arg)
{
    struct engine_group *g = e->grp;
    if (g->mpi) {
        /* every rank runs the global entity alike: what it makes for an entity is made on
         * that entity's rank too, and an event for it would have to reach every rank */
        uint32_t to = g->worker_of[owner];
        if (e->self == g->workers && to != g->rank)
            g_error("the global entity made an event for entity %u of MPI rank %u: its events may touch only "
                    "the entities of their own rank", owner, to);
        if (to == g->workers)
            g_error("entity %u made an event for the global entity: an MPI run has a copy of it on every rank",
                    e->cur);
    }
    if (send_at_or_after ? t < send_after : t <= send_after)
        g_error("an event for entity %u at %" G_GUINT64_FORMAT " ps crosses workers inside the window ending at "
                "%" G_GUINT64_FORMAT " ps: the lookahead (%" G_GUINT64_FORMAT " ps) is more than the delay between "
                "them", owner, t, send_after, g->quantum);
    struct engine_outbox *o = &e->out[g->worker_of[owner]];
    if (o->len == o->cap) {
        o->cap = o->cap ? o->cap * 2 : 256; /* amortised, not per event */
        o->ev = g_renew(struct event, o->ev, o->cap);
    }
    o->ev[o->len++] = (struct event){ t, k.key, arg, owner, k.origin | h << ENGINE_ORIGIN_BITS };
}

/* Moves the events every engine made for engine w into it, source by source: one origin's
 * events stay in the order they were stamped. */
static void drain_into(struct engine_group *g, uint32_t w)
{
    struct engine *dst = g->eng[w];
    for (uint32_t j = 0; j <= g->workers; j++) {
        if (j == w)
            continue;
        struct engine_outbox *o = &g->eng[j]->out[w];
        for (uint32_t i = 0; i < o->len; i++) {
            struct event *ev = &o->ev[i];
            if (g->receive)
                g->receive(g->ctx, j, ev);
            engine_insert_event(dst, ev);
        }
        o->len = 0;
    }
}

/* Events run by every engine of a threaded run. */
static uint64_t events_run(const struct engine_group *g)
{
    uint64_t n = 0;
    for (uint32_t w = 0; w <= g->workers; w++)
        n += g->eng[w]->events;
    return n;
}

/* The progress line after a window (a threaded run's workers wait at the barrier meanwhile,
 * so their counts hold still; an MPI run has only its own, so it shows no event rate). */
static void show_progress(const struct engine_group *g, struct progress_line *pl, simtime_t now, simtime_t stop)
{
    if (progress_due(pl))
        progress_show(pl, now, stop, g->work_done ? g->work_done(g->ctx) : -1, g->mpi ? UINT64_MAX : events_run(g),
                      g->workers);
}

/* The end of the window that starts at t0: a quantum less a picosecond later, at the global
 * entity's next event or at the stop, whichever comes first. */
static simtime_t window_end(const struct engine_group *g, simtime_t tmin, simtime_t gnext, simtime_t stop)
{
    simtime_t end =
        tmin == SIMTIME_NEVER || tmin > SIMTIME_NEVER - g->quantum ? SIMTIME_NEVER : tmin + g->quantum - 1;
    if (gnext < end)
        end = gnext;
    return stop < end ? stop : end;
}

/* The global entity's turn after the window that ended at `end` (first thread only). */
static void serial_phase(struct run *r, simtime_t end)
{
    struct engine_group *g = r->g;
    struct engine *ge = g->eng[g->workers];
    if (g->enter)
        g->enter(g->ctx, g->workers);
    send_after = end;
    send_at_or_after = true;
    drain_into(g, g->workers);
    if (g->begin)
        g->begin(g->ctx, g->workers);
    if (g->between)
        g->between(g->ctx, end, &r->stop);
    engine_run(ge, end < r->stop ? end : r->stop);
    r->gnext = engine_next_time(ge);
    if (ge->halted || (g->interrupt && *g->interrupt))
        r->quit = true;
    if (g->progress)
        show_progress(g, &r->pr, end, r->stop);
    if (g->enter)
        g->enter(g->ctx, 0);
}

static void worker_loop(struct run *r, uint32_t w)
{
    struct engine_group *g = r->g;
    struct engine *me = g->eng[w];
    unsigned sense = 0;
    simtime_t end = 0;
    bool first = true;
    if (g->enter)
        g->enter(g->ctx, w);
    for (;;) {
        if (w == 0 && !first) {
            double t_serial = engine_wall_seconds();
            serial_phase(r, end);
            g->serial_s += engine_wall_seconds() - t_serial;
        }
        first = false;
        barrier_wait(&r->bar, &sense);
        drain_into(g, w);
        r->next[w] = engine_next_time(me);
        barrier_wait(&r->bar, &sense);
        /* every thread decides the same from what all published */
        simtime_t tmin = SIMTIME_NEVER;
        for (uint32_t k = 0; k < g->workers; k++)
            if (r->next[k] < tmin)
                tmin = r->next[k];
        simtime_t t0 = tmin < r->gnext ? tmin : r->gnext;
        if (r->quit || t0 == SIMTIME_NEVER || t0 > r->stop)
            break;
        end = window_end(g, tmin, r->gnext, r->stop);
        send_after = end;
        send_at_or_after = false;
        if (g->begin)
            g->begin(g->ctx, w);
        double t_run = engine_wall_seconds();
        engine_run(me, end);
        g->busy_s[w] += engine_wall_seconds() - t_run;
        if (w == 0)
            g->windows++;
        barrier_wait(&r->bar, &sense);
    }
}

struct thread_arg {
    struct run *r;
    uint32_t w;
};

static gpointer thread_main(gpointer p)
{
    struct thread_arg *a = p;
    worker_loop(a->r, a->w);
    return NULL;
}

/* ---------- an MPI run: one worker per rank ---------- */

/* An event crosses processes as it is (32 bytes, its handler an index every rank reads
 * alike, engine_group.h); the ranks run one program on one machine type. */

/* This rank's events for the others (and what pack adds) out; theirs for it in, with the
 * global entity's for it, which it made here. */
static void mpi_exchange(struct engine_group *g, GByteArray **send, GByteArray **recv)
{
    uint32_t P = g->workers;
    struct engine *me = g->eng[g->rank];
    for (uint32_t d = 0; d < P; d++) {
        g_byte_array_set_size(send[d], 0);
        if (d == g->rank)
            continue;
        struct engine_outbox *o = &me->out[d];
        uint64_t nev = o->len;
        g_byte_array_append(send[d], (const guint8 *)&nev, sizeof nev);
        g_byte_array_append(send[d], (const guint8 *)o->ev, o->len * (guint)sizeof *o->ev);
        o->len = 0;
        if (g->pack)
            g->pack(g->ctx, d, send[d]);
    }
    mpi_comm_alltoallv(send, recv);
    for (uint32_t s = 0; s < P; s++) {
        if (s == g->rank)
            continue;
        const guint8 *data = recv[s]->data;
        uint64_t nev;
        if (recv[s]->len < sizeof nev)
            g_error("MPI rank %u sent %u bytes in a window: not rocesim's exchange", s, recv[s]->len);
        memcpy(&nev, data, sizeof nev);
        size_t evbytes = sizeof nev + nev * sizeof(struct event);
        if (evbytes > recv[s]->len)
            g_error("MPI rank %u sent %" G_GUINT64_FORMAT " events in %u bytes", s, nev, recv[s]->len);
        if (g->unpack)
            g->unpack(g->ctx, s, data + evbytes, recv[s]->len - evbytes);
        for (uint64_t i = 0; i < nev; i++) {
            struct event ev;
            memcpy(&ev, data + sizeof nev + i * sizeof ev, sizeof ev);
            if (event_handler(&ev) >= me->hs->n)
                g_error("MPI rank %u sent an event of handler %u, of %u here: the ranks built different models", s,
                        event_handler(&ev), me->hs->n);
            if (g->receive)
                g->receive(g->ctx, s, &ev);
            engine_insert_event(me, &ev);
        }
    }
    struct engine_outbox *o = &g->eng[P]->out[g->rank]; /* the global entity's, made here */
    for (uint32_t i = 0; i < o->len; i++) {
        struct event *ev = &o->ev[i];
        if (g->receive)
            g->receive(g->ctx, P, ev);
        engine_insert_event(me, ev);
    }
    o->len = 0;
}

/* The loop of worker_loop and serial_phase on one rank: the windows are decided alike on
 * every rank from an all-reduce of the next event times, the global entity runs on each
 * between windows (its copies stay equal: they see the same merged state). An interrupt on
 * any rank ends them all, and is then set on each (*g->interrupt). */
static simtime_t run_mpi(struct engine_group *g, simtime_t stop)
{
    uint32_t P = g->workers, self = g->rank;
    struct engine *me = g->eng[self], *ge = g->eng[P];
    GByteArray **send = g_new(GByteArray *, P), **recv = g_new(GByteArray *, P);
    for (uint32_t d = 0; d < P; d++) {
        send[d] = g_byte_array_new();
        recv[d] = g_byte_array_new();
    }
    struct progress_line pr = { 0 };
    if (g->progress && self == 0)
        progress_start(&pr, UINT64_MAX);
    simtime_t end = 0, gnext = engine_next_time(ge);
    bool first = true, halted = false;
    if (g->enter)
        g->enter(g->ctx, self);
    for (;;) {
        if (!first) {
            double t_serial = engine_wall_seconds();
            if (g->enter)
                g->enter(g->ctx, P);
            send_after = end;
            send_at_or_after = true;
            if (g->begin)
                g->begin(g->ctx, P);
            if (g->between)
                g->between(g->ctx, end, &stop);
            engine_run(ge, end < stop ? end : stop);
            gnext = engine_next_time(ge);
            halted = ge->halted;
            if (g->progress && self == 0)
                show_progress(g, &pr, end, stop);
            if (g->enter)
                g->enter(g->ctx, self);
            g->serial_s += engine_wall_seconds() - t_serial;
        }
        first = false;
        mpi_exchange(g, send, recv);
        /* the earliest event of any rank, and the highest signal any caught (as a minimum) */
        uint64_t sig = g->interrupt ? (uint64_t)*g->interrupt : 0;
        uint64_t v[2] = { engine_next_time(me), UINT64_MAX - sig };
        mpi_comm_allreduce_u64(v, 2, MPI_COMM_MIN);
        sig = UINT64_MAX - v[1];
        if (sig && g->interrupt && !*g->interrupt)
            *g->interrupt = (sig_atomic_t)sig;
        simtime_t t0 = v[0] < gnext ? v[0] : gnext;
        if (halted || sig || t0 == SIMTIME_NEVER || t0 > stop)
            break;
        end = window_end(g, v[0], gnext, stop);
        send_after = end;
        send_at_or_after = false;
        if (g->begin)
            g->begin(g->ctx, self);
        double t_run = engine_wall_seconds();
        engine_run(me, end);
        g->busy_s[self] += engine_wall_seconds() - t_run;
        g->windows++;
    }
    progress_end(&pr);
    for (uint32_t d = 0; d < P; d++) {
        g_byte_array_free(send[d], TRUE);
        g_byte_array_free(recv[d], TRUE);
    }
    g_free(send);
    g_free(recv);
    return me->now > ge->now ? me->now : ge->now;
}

static simtime_t run_threads(struct engine_group *g, simtime_t stop);

/* The handlers are frozen while the group runs: the threads read the table, and an MPI run's
 * ranks must register alike, before (engine_group.h). */
static void freeze_handlers(struct engine_group *g, bool on)
{
    for (uint32_t w = 0; w <= g->workers; w++)
        if (g->eng[w])
            g->eng[w]->hs->frozen = on;
}

simtime_t engine_group_run(struct engine_group *g, simtime_t stop)
{
    freeze_handlers(g, true);
    simtime_t last = g->mpi ? run_mpi(g, stop) : run_threads(g, stop);
    freeze_handlers(g, false);
    return last;
}

static simtime_t run_threads(struct engine_group *g, simtime_t stop)
{
    struct run r = { .g = g, .stop = stop, .next = g_new(simtime_t, g->workers) };
    if (g->progress)
        progress_start(&r.pr, events_run(g));
    r.bar.n = g->workers;
    r.bar.oversubscribed = g->workers > cpus_available();
    g_mutex_init(&r.bar.lock);
    g_cond_init(&r.bar.turned);
    r.gnext = engine_next_time(g->eng[g->workers]);
    struct thread_arg *args = g_new(struct thread_arg, g->workers);
    GThread **th = g_new0(GThread *, g->workers);
    for (uint32_t w = 1; w < g->workers; w++) {
        args[w] = (struct thread_arg){ &r, w };
        th[w] = g_thread_new("rocesim-worker", thread_main, &args[w]);
    }
    worker_loop(&r, 0);
    for (uint32_t w = 1; w < g->workers; w++)
        g_thread_join(th[w]);
    progress_end(&r.pr);
    simtime_t last = 0;
    for (uint32_t w = 0; w <= g->workers; w++)
        if (g->eng[w]->now > last)
            last = g->eng[w]->now;
    g_free(th);
    g_free(args);
    g_free(r.next);
    g_mutex_clear(&r.bar.lock);
    g_cond_clear(&r.bar.turned);
    return last;
}
