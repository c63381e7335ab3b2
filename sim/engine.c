#include "sim/engine.h"
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

double engine_wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void engine_init(struct engine *e, size_t cap)
{
    *e = (struct engine){ 0 };
    e->cap = cap ? cap : 1024;
    e->heap = g_new(struct event, e->cap);
    e->stop = SIMTIME_NEVER;
}

void engine_free(struct engine *e)
{
    g_free(e->heap);
    e->heap = NULL;
    e->n = e->cap = 0;
}

static inline bool before(const struct event *a, const struct event *b)
{
    return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

void engine_at(struct engine *e, simtime_t t, event_fn fn, void *ctx, uint64_t arg)
{
    if (t < e->now)
        t = e->now; /* never schedule into the past */
    if (e->n == e->cap) {
        e->cap *= 2; /* amortised growth, not per event */
        e->heap = g_renew(struct event, e->heap, e->cap);
    }
    struct event ev = { t, e->seq++, fn, ctx, arg };
    size_t i = e->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 4;
        if (!before(&ev, &e->heap[parent]))
            break;
        e->heap[i] = e->heap[parent];
        i = parent;
    }
    e->heap[i] = ev;
}

static void pop_top(struct engine *e, struct event *out)
{
    struct event *h = e->heap;
    *out = h[0];
    struct event last = h[--e->n];
    size_t n = e->n, i = 0;
    for (;;) {
        size_t c = 4 * i + 1;
        if (c >= n)
            break;
        size_t best = c;
        size_t end = c + 4 < n ? c + 4 : n;
        for (size_t k = c + 1; k < end; k++)
            if (before(&h[k], &h[best]))
                best = k;
        if (!before(&h[best], &last))
            break;
        h[i] = h[best];
        i = best;
    }
    h[i] = last;
}

static void show_progress(struct engine *e, double now_wall, double *last_wall, uint64_t *last_events)
{
    double dt = now_wall - *last_wall;
    double rate = dt > 0 ? (double)(e->events - *last_events) / dt : 0;
    double pct = e->stop != SIMTIME_NEVER && e->stop > 0 ? 100.0 * (double)e->now / (double)e->stop : 0;
    fprintf(stderr, "\r  sim %10.3f us  %5.1f%% of stop  %6.2f M events/s  ",
            (double)e->now / PS_PER_US, pct, rate / 1e6);
    *last_wall = now_wall;
    *last_events = e->events;
}

void engine_run(struct engine *e, simtime_t stop)
{
    e->stop = stop;
    e->halted = false;
    e->wall_start = engine_wall_seconds();
    double last_wall = e->wall_start;
    uint64_t last_events = e->events;
    bool shown = false;
    while (e->n > 0 && !e->halted) {
        if (e->heap[0].time > stop)
            break;
        struct event ev;
        pop_top(e, &ev);
        e->now = ev.time;
        ev.fn(ev.ctx, ev.arg);
        e->events++;
        if (e->progress && (e->events & 0x3ffff) == 0) {
            double w = engine_wall_seconds();
            if (w - last_wall >= 0.25) {
                show_progress(e, w, &last_wall, &last_events);
                shown = true;
            }
        }
    }
    if (shown)
        fprintf(stderr, "\r%72s\r", "");
}

void engine_halt(struct engine *e) { e->halted = true; }

/* Stale heap entries (moved or cancelled timers) are skipped here; they are not counted as
 * events because nothing happened. */
static void timer_fire(void *ctx, uint64_t gen)
{
    struct timer *t = ctx;
    if (gen != t->gen) {
        t->eng->events--;
        return;
    }
    t->when = SIMTIME_NEVER;
    t->fn(t->ctx, t->arg);
}

void timer_init(struct timer *t, struct engine *e, event_fn fn, void *ctx, uint64_t arg)
{
    *t = (struct timer){ 0, SIMTIME_NEVER, fn, ctx, arg, e };
}

void timer_set(struct timer *t, simtime_t when)
{
    if (t->when == when)
        return;
    t->gen++;
    t->when = when;
    engine_at(t->eng, when, timer_fire, t, t->gen);
}

void timer_cancel(struct timer *t)
{
    if (t->when == SIMTIME_NEVER)
        return;
    t->gen++;
    t->when = SIMTIME_NEVER;
}
