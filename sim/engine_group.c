#include "sim/engine_group.h"
#include <glib.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

/* Events a thread may send to another engine now must be later than this (a window's end),
 * or, between windows (the global entity's turn), not earlier than the time it runs. */
static __thread simtime_t send_after;
static __thread bool send_at_or_after;

/* A sense-reversing barrier that spins, then yields: a window is short (micro- to
 * milliseconds of work), so sleeping in the kernel at every one would cost more than it. */
struct barrier {
    atomic_uint count;
    atomic_uint sense;
    unsigned n;
};

static void barrier_wait(struct barrier *b, unsigned *local)
{
    unsigned s = *local ^= 1u;
    if (atomic_fetch_add_explicit(&b->count, 1, memory_order_acq_rel) == b->n - 1) {
        atomic_store_explicit(&b->count, 0, memory_order_relaxed);
        atomic_store_explicit(&b->sense, s, memory_order_release);
        return;
    }
    for (unsigned spins = 0; atomic_load_explicit(&b->sense, memory_order_acquire) != s; spins++)
        if (spins > 2000)
            sched_yield(); /* more workers than cores, or a long wait */
}

struct run {
    struct engine_group *g;
    struct barrier bar;
    simtime_t stop;
    simtime_t *next;           /* per worker: its next event's time, published each window */
    simtime_t gnext;           /* the global entity's next event */
    bool quit;
    double last_progress;
    bool shown;
};

void engine_group_init(struct engine_group *g, struct engine **eng, uint32_t workers, const uint32_t *worker_of,
                       simtime_t quantum)
{
    *g = (struct engine_group){ .workers = workers, .eng = eng, .worker_of = worker_of,
                                .quantum = quantum ? quantum : 1, .busy_s = g_new0(double, workers) };
    for (uint32_t w = 0; w <= workers; w++) {
        eng[w]->grp = g;
        eng[w]->self = w;
        eng[w]->out = g_new0(struct engine_outbox, workers + 1);
    }
}

void engine_group_free(struct engine_group *g)
{
    g_free(g->busy_s);
    g->busy_s = NULL;
    for (uint32_t w = 0; g->eng && w <= g->workers; w++) {
        struct engine *e = g->eng[w];
        for (uint32_t d = 0; e->out && d <= g->workers; d++)
            g_free(e->out[d].ev);
        g_free(e->out);
        e->out = NULL;
        e->grp = NULL;
    }
}

void engine_group_send(struct engine *e, simtime_t t, struct engine_key k, uint32_t owner, event_fn fn, void *ctx,
                       uint64_t arg)
{
    if (send_at_or_after ? t < send_after : t <= send_after)
        g_error("an event for entity %u at %" G_GUINT64_FORMAT " ps crosses workers inside the window ending at "
                "%" G_GUINT64_FORMAT " ps: the lookahead (%" G_GUINT64_FORMAT " ps) is more than the delay between "
                "them", owner, t, send_after, e->grp->quantum);
    struct engine_outbox *o = &e->out[e->grp->worker_of[owner]];
    if (o->len == o->cap) {
        o->cap = o->cap ? o->cap * 2 : 256; /* amortised, not per event */
        o->ev = g_renew(struct event, o->ev, o->cap);
    }
    o->ev[o->len++] = (struct event){ t, k.key, fn, ctx, arg, owner, k.origin };
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
            engine_insert(dst, ev->time, (struct engine_key){ ev->key, ev->origin }, ev->owner, ev->fn, ev->ctx,
                          ev->arg);
        }
        o->len = 0;
    }
}

static void show_progress(struct run *r, simtime_t now)
{
    double w = engine_wall_seconds();
    if (w - r->last_progress < 0.25)
        return;
    r->last_progress = w;
    double pct = r->stop != SIMTIME_NEVER && r->stop ? 100.0 * (double)now / (double)r->stop : 0;
    fprintf(stderr, "\r  sim %10.3f us  %5.1f%% of stop  %u workers  ", (double)now / PS_PER_US, pct,
            r->g->workers);
    r->shown = true;
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
        show_progress(r, end);
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
        end = tmin == SIMTIME_NEVER || tmin > SIMTIME_NEVER - g->quantum ? SIMTIME_NEVER : tmin + g->quantum - 1;
        if (r->gnext < end)
            end = r->gnext;
        if (r->stop < end)
            end = r->stop;
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

simtime_t engine_group_run(struct engine_group *g, simtime_t stop)
{
    struct run r = { .g = g, .stop = stop, .next = g_new(simtime_t, g->workers), .last_progress = engine_wall_seconds() };
    r.bar.n = g->workers;
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
    if (r.shown)
        fprintf(stderr, "\r%72s\r", "");
    simtime_t last = 0;
    for (uint32_t w = 0; w <= g->workers; w++)
        if (g->eng[w]->now > last)
            last = g->eng[w]->now;
    g_free(th);
    g_free(args);
    g_free(r.next);
    return last;
}
