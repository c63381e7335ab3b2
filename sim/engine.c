#include "sim/engine.h"
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double engine_wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void engine_init(struct engine *e)
{
    *e = (struct engine){ 0 };
    e->stop = SIMTIME_NEVER;
}

void engine_free(struct engine *e)
{
    for (int i = 0; i < ENGINE_BUCKETS; i++)
        g_free(e->b[i].ev);
    *e = (struct engine){ 0 };
}

static inline int bucket_of(simtime_t t, simtime_t last)
{
    if (t == last)
        return 0;
    int level = (63 - __builtin_clzll(t ^ last)) >> 2;
    return 1 + level * 16 + (int)((t >> (4 * level)) & 15);
}

static inline void mark_nonempty(struct engine *e, int i)
{
    e->nonempty[(i - 1) >> 6] |= 1ull << ((i - 1) & 63);
}

/* The smallest non-empty bucket above 0 (the caller knows one exists). */
static inline int first_nonempty(const struct engine *e)
{
    for (int w = 0;; w++)
        if (e->nonempty[w])
            return 1 + w * 64 + __builtin_ctzll(e->nonempty[w]);
}

static inline void bucket_push(struct bucket *b, const struct event *ev)
{
    if (b->len == b->cap) {
        if (b->head > b->cap / 2) {
            /* reuse the consumed front before growing */
            memmove(b->ev, b->ev + b->head, (b->len - b->head) * sizeof *b->ev);
            b->len -= b->head;
            b->head = 0;
        } else {
            b->cap = b->cap ? b->cap * 2 : 64; /* amortised growth, not per event */
            b->ev = g_renew(struct event, b->ev, b->cap);
        }
    }
    b->ev[b->len++] = *ev;
}

/* Files every pending event again relative to a new, earlier `last`. Needed only when an
 * event is scheduled after a run stopped: peeking at the next event (later than the stop
 * time) has already moved `last` past `now`. Equal times share a bucket, so moving the
 * buckets' entries in order keeps same-time events in insertion order. */
static void rebase(struct engine *e, simtime_t last)
{
    struct event *all = g_new(struct event, e->n ? e->n : 1);
    size_t k = 0;
    for (int i = 0; i < ENGINE_BUCKETS; i++) {
        struct bucket *b = &e->b[i];
        for (uint32_t j = b->head; j < b->len; j++)
            all[k++] = b->ev[j];
        b->head = b->len = 0;
    }
    for (int w = 0; w < 4; w++)
        e->nonempty[w] = 0;
    e->last = last;
    for (size_t j = 0; j < k; j++) {
        int i = bucket_of(all[j].time, last);
        bucket_push(&e->b[i], &all[j]);
        if (i)
            mark_nonempty(e, i);
    }
    g_free(all);
}

void engine_at(struct engine *e, simtime_t t, event_fn fn, void *ctx, uint64_t arg)
{
    if (t < e->now)
        t = e->now; /* never schedule into the past */
    if (t < e->last)
        rebase(e, e->now);
    struct event ev = { t, fn, ctx, arg };
    int i = bucket_of(t, e->last);
    bucket_push(&e->b[i], &ev);
    if (i)
        mark_nonempty(e, i);
    e->n++;
}

/* Makes bucket 0 non-empty: the smallest non-empty bucket's minimum becomes `last` and its
 * entries move down, in order. Precondition: n > 0 and bucket 0 empty. */
static void refill(struct engine *e)
{
    int i = first_nonempty(e);
    struct bucket *src = &e->b[i];
    simtime_t min = SIMTIME_NEVER;
    for (uint32_t k = src->head; k < src->len; k++)
        if (src->ev[k].time < min)
            min = src->ev[k].time;
    e->last = min;
    e->nonempty[(i - 1) >> 6] &= ~(1ull << ((i - 1) & 63));
    /* every entry goes to a lower bucket (bucket 0 for those at `min`), so none lands back
     * in src while it is being read */
    for (uint32_t k = src->head; k < src->len; k++) {
        int j = bucket_of(src->ev[k].time, min);
        bucket_push(&e->b[j], &src->ev[k]);
        if (j)
            mark_nonempty(e, j);
    }
    src->head = src->len = 0;
}

/* The next event, without removing it; NULL when none is pending. */
static inline const struct event *peek(struct engine *e)
{
    if (e->n == 0)
        return NULL;
    struct bucket *b0 = &e->b[0];
    if (b0->head == b0->len) {
        b0->head = b0->len = 0;
        refill(e);
    }
    return &b0->ev[b0->head];
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
    const struct event *top;
    while (!e->halted && (top = peek(e)) && top->time <= stop) {
        struct event ev = *top;
        e->b[0].head++;
        e->n--;
        e->now = ev.time;
        ev.fn(ev.ctx, ev.arg);
        e->events++;
        if ((e->events & 0xfff) == 0 && e->interrupt && *e->interrupt)
            break;
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
