/* Event engine: ordering by (time, insertion) with one entity and by (time, origin, sequence)
 * with several, the same order for any partition of the entities over engines, against a sorted reference with many random
 * events; timers (cancel, move earlier/later, re-arm); run limits (stop time, empty heap,
 * halt); the `events` count, which must not include stale timer entries. */
#include <string.h>
#include "sim/engine.h"
#include "sim/engine_group.h"
#include "sim/rng.h"
#include "tests/testutil.h"

/* ---- a recorder: each event appends (time it ran at, its tag) ---- */

struct rec {
    struct engine *e;
    simtime_t *at;
    uint64_t *tag;
    size_t n, cap;
};

static void rec_init(struct rec *r, struct engine *e, size_t cap)
{
    r->e = e;
    r->at = g_new(simtime_t, cap);
    r->tag = g_new(uint64_t, cap);
    r->n = 0;
    r->cap = cap;
}

static void rec_free(struct rec *r)
{
    g_free(r->at);
    g_free(r->tag);
}

static void on_rec(void *ctx, uint64_t tag)
{
    struct rec *r = ctx;
    CU_ASSERT_FATAL(r->n < r->cap);
    r->at[r->n] = r->e->now;
    r->tag[r->n] = tag;
    r->n++;
}

/* ---- ordering ---- */

static void test_equal_time_insertion_order(void)
{
    struct engine e;
    engine_init(&e);
    struct rec r;
    rec_init(&r, &e, 1000);
    /* 300 events at t=7ns scheduled interleaved with events at 5 and 9 ns */
    for (uint64_t i = 0; i < 300; i++) {
        engine_at(&e, 7000, on_rec, &r, 1000 + i);
        if (i % 3 == 0)
            engine_at(&e, 9000, on_rec, &r, 2000 + i);
        if (i % 5 == 0)
            engine_at(&e, 5000, on_rec, &r, i);
    }
    engine_run(&e, SIMTIME_NEVER);
    CU_ASSERT_EQUAL_FATAL(r.n, 60 + 300 + 100);
    /* t=5ns: tags 0,5,10,... in insertion order */
    for (size_t k = 0; k < 60; k++) {
        CU_ASSERT_EQUAL(r.at[k], 5000);
        CU_ASSERT_EQUAL(r.tag[k], 5 * k);
    }
    for (size_t k = 0; k < 300; k++) {
        CU_ASSERT_EQUAL(r.at[60 + k], 7000);
        CU_ASSERT_EQUAL(r.tag[60 + k], 1000 + k);
    }
    for (size_t k = 0; k < 100; k++) {
        CU_ASSERT_EQUAL(r.at[360 + k], 9000);
        CU_ASSERT_EQUAL(r.tag[360 + k], 2000 + 3 * k);
    }
    CU_ASSERT_EQUAL(e.events, 460);
    CU_ASSERT_EQUAL(e.n, 0);
    rec_free(&r);
    engine_free(&e);
}

struct ref_ev {
    simtime_t t;
    uint64_t idx;
};

static int cmp_ref(const void *a, const void *b)
{
    const struct ref_ev *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* 20000 events at random times (few distinct values, so many ties) against a sorted copy. */
static void test_random_against_sorted_reference(void)
{
    enum { N = 20000 };
    struct engine e;
    engine_init(&e);
    struct rec r;
    rec_init(&r, &e, N);
    struct ref_ev *ref = g_new(struct ref_ev, N);
    struct rng g;
    rng_init(&g, 42, 7);
    for (uint64_t i = 0; i < N; i++) {
        simtime_t t = rng_below(&g, 2) ? rng_below(&g, 500) : rng_below(&g, 1000000000000ull);
        ref[i] = (struct ref_ev){ t, i };
        engine_at(&e, t, on_rec, &r, i);
    }
    qsort(ref, N, sizeof *ref, cmp_ref);
    engine_run(&e, SIMTIME_NEVER);
    CU_ASSERT_EQUAL_FATAL(r.n, N);
    size_t bad = 0;
    for (size_t k = 0; k < N; k++)
        if (r.at[k] != ref[k].t || r.tag[k] != ref[k].idx)
            bad++;
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(e.events, N);
    CU_ASSERT_EQUAL(e.now, ref[N - 1].t);
    g_free(ref);
    rec_free(&r);
    engine_free(&e);
}

/* Events that schedule more events while the heap is being drained: the order seen must
 * still be by (time, scheduling order), and nothing may run before `now`. */
struct chain {
    struct engine *e;
    struct rng g;
    uint64_t next_tag, scheduled, ran, bad_order, in_past;
    simtime_t last_t;
    uint64_t last_tag;
};

static void on_chain(void *ctx, uint64_t tag)
{
    struct chain *c = ctx;
    simtime_t now = c->e->now;
    if (c->ran && (now < c->last_t || (now == c->last_t && tag < c->last_tag)))
        c->bad_order++;
    c->last_t = now;
    c->last_tag = tag;
    c->ran++;
    unsigned k = (unsigned)rng_below(&c->g, 3);
    for (unsigned i = 0; i < k && c->scheduled < 50000; i++) {
        simtime_t dt = rng_below(&c->g, 4) == 0 ? 0 : rng_below(&c->g, 1000);
        engine_at(c->e, now + dt, on_chain, c, c->next_tag++);
        c->scheduled++;
    }
    /* asking for a time in the past runs at `now`, never earlier */
    if (rng_below(&c->g, 50) == 0 && now > 10 && c->scheduled < 50000) {
        engine_at(c->e, now - 10, on_chain, c, c->next_tag++);
        c->scheduled++;
        c->in_past++;
    }
}

static void test_events_scheduled_while_running(void)
{
    struct engine e;
    engine_init(&e);
    struct chain c = { .e = &e };
    rng_init(&c.g, 3, 1);
    for (int i = 0; i < 100; i++) {
        engine_at(&e, rng_below(&c.g, 100), on_chain, &c, c.next_tag++);
        c.scheduled++;
    }
    engine_run(&e, SIMTIME_NEVER);
    CU_ASSERT(c.scheduled > 1000);
    CU_ASSERT(c.in_past > 0);
    CU_ASSERT_EQUAL(c.ran, c.scheduled);
    CU_ASSERT_EQUAL(c.bad_order, 0);
    CU_ASSERT_EQUAL(e.events, c.scheduled);
    engine_free(&e);
}

/* The near-future wheel and the radix heap behind it: delays at a slot's edges
 * (2^ENGINE_SLOT_BITS ps) and at the wheel's horizon (ENGINE_WHEEL_SLOTS slots), a few far
 * beyond it, zero delays, and runs stopped at arbitrary times with events scheduled between
 * two runs (what a parallel run's windows do). With one entity the order must be (time,
 * scheduling order) exactly, and no event may run after the stop time of its run. */
struct edge {
    struct engine *e;
    struct rng g;
    uint64_t next_tag, scheduled, ran, bad_order, late_run;
    simtime_t last_t, stop;
    uint64_t last_tag;
};

static simtime_t edge_delay(struct rng *g)
{
    const simtime_t W = 1ull << ENGINE_SLOT_BITS, H = W * ENGINE_WHEEL_SLOTS;
    const simtime_t edges[] = { 0, 1, W - 1, W, W + 1, 2 * W - 1, H - W, H - 1, H, H + 1, H + W, 2 * H };
    switch (rng_below(g, 4)) {
    case 0:
        return edges[rng_below(g, G_N_ELEMENTS(edges))];
    case 1:
        return rng_below(g, 3 * H);
    case 2:
        return rng_below(g, 40) == 0 ? rng_below(g, 20 * H) : rng_below(g, 4 * W);
    default:
        return rng_below(g, 2 * W);
    }
}

static void on_edge(void *ctx, uint64_t tag)
{
    struct edge *c = ctx;
    simtime_t now = c->e->now;
    if (c->ran && (now < c->last_t || (now == c->last_t && tag < c->last_tag)))
        c->bad_order++;
    if (now > c->stop)
        c->late_run++;
    c->last_t = now;
    c->last_tag = tag;
    c->ran++;
    for (unsigned i = 0, k = (unsigned)rng_below(&c->g, 3); i < k && c->scheduled < 60000; i++) {
        engine_at(c->e, now + edge_delay(&c->g), on_edge, c, c->next_tag++);
        c->scheduled++;
    }
}

static void test_wheel_edges_and_windows(void)
{
    struct engine e;
    engine_init(&e);
    struct edge c = { .e = &e, .stop = SIMTIME_NEVER };
    rng_init(&c.g, 11, 5);
    /* the first slot's events out of order, before any slot has opened */
    const simtime_t first[] = { 700, 3, 3, (1ull << ENGINE_SLOT_BITS) - 1, 0 };
    for (size_t i = 0; i < G_N_ELEMENTS(first); i++) {
        engine_at(&e, first[i], on_edge, &c, c.next_tag++);
        c.scheduled++;
    }
    for (int i = 0; i < 200; i++) {
        engine_at(&e, edge_delay(&c.g), on_edge, &c, c.next_tag++);
        c.scheduled++;
    }
    /* windows of random length; between two, events at or after `now` from outside */
    simtime_t end = 0;
    while (engine_pending(&e)) {
        end += rng_below(&c.g, 16ull << ENGINE_SLOT_BITS);
        c.stop = end;
        engine_run(&e, c.stop);
        CU_ASSERT(e.now <= c.stop);
        if (engine_pending(&e)) {
            CU_ASSERT(engine_next_time(&e) > c.stop);
            if (c.scheduled < 60000 && rng_below(&c.g, 2)) {
                engine_at(&e, e.now + rng_below(&c.g, 3ull << ENGINE_SLOT_BITS), on_edge, &c, c.next_tag++);
                c.scheduled++;
            }
        }
    }
    CU_ASSERT(c.scheduled >= 60000);
    CU_ASSERT_EQUAL(c.ran, c.scheduled);
    CU_ASSERT_EQUAL(c.bad_order, 0);
    CU_ASSERT_EQUAL(c.late_run, 0);
    engine_free(&e);
}

/* One origin's events for one owner at one instant run in the order it scheduled them, also
 * when the earlier ones waited beyond the wheel's horizon (in the radix heap) and the later
 * ones in the wheel: the slot then receives them later-first, and only the key's sequence
 * puts them back. */
struct seqo {
    struct engine *e;
    uint64_t *tag;
    uint32_t n, per_send;
};

static void seqo_hit(void *ctx, uint64_t tag)
{
    struct seqo *q = ctx;
    CU_ASSERT_FATAL(q->n < 2 * q->per_send);
    q->tag[q->n++] = tag;
}

static void seqo_send(void *ctx, uint64_t first)
{
    struct seqo *q = ctx;
    for (uint64_t k = 0; k < q->per_send; k++)
        engine_at_on(q->e, 10000000, 1, seqo_hit, q, first + k); /* 10 us */
}

/* Events run in their tags' order, of 2 x per_send. */
static uint32_t seqo_in_order(uint32_t per_send)
{
    struct engine e;
    engine_init(&e);
    engine_set_entities(&e, 2);
    struct seqo q = { .e = &e, .tag = g_new(uint64_t, 2 * per_send), .per_send = per_send };
    engine_at_on(&e, 0, 0, seqo_send, &q, 0);             /* 10 us ahead: beyond the horizon */
    engine_at_on(&e, 9000000, 0, seqo_send, &q, per_send); /* 1 us ahead: into the wheel */
    engine_run(&e, SIMTIME_NEVER);
    CU_ASSERT_EQUAL(q.n, 2 * per_send);
    uint32_t in_order = 0;
    for (uint32_t k = 0; k < q.n; k++)
        in_order += q.tag[k] == k;
    g_free(q.tag);
    engine_free(&e);
    return in_order;
}

/* 40 events: sorted by insertion of records; 200: by a merge; 6000: the radix sort leaves one
 * run of 6000 equal prefixes, later-first, too disordered for its insertion pass (9 million
 * moves), which hands over to a merge. */
static void test_one_origin_across_heap_and_wheel(void)
{
    const uint32_t per_send[] = { 20, 100, 3000 };
    for (size_t k = 0; k < G_N_ELEMENTS(per_send); k++)
        CU_ASSERT_EQUAL(seqo_in_order(per_send[k]), 2 * per_send[k]);
}

/* ---- timers ---- */

struct tctx {
    struct engine *e;
    struct timer *t;
    int fired;
    simtime_t at[8];
    int rearm;          /* re-arm from inside the callback this many times */
    simtime_t period;
};

static void on_timer(void *ctx, uint64_t arg)
{
    struct tctx *c = ctx;
    CU_ASSERT_EQUAL(arg, 77);
    CU_ASSERT_FALSE(timer_armed(c->t)); /* disarmed before the callback runs */
    if (c->fired < 8)
        c->at[c->fired] = c->e->now;
    c->fired++;
    if (c->rearm > 0) {
        c->rearm--;
        timer_set(c->t, c->e->now + c->period);
    }
}

static void test_timer_cancel(void)
{
    struct engine e;
    engine_init(&e);
    struct timer t;
    struct tctx c = { .e = &e, .t = &t };
    timer_init(&t, &e, on_timer, &c, 77);
    CU_ASSERT_FALSE(timer_armed(&t));
    timer_set(&t, 1000);
    CU_ASSERT(timer_armed(&t));
    timer_cancel(&t);
    CU_ASSERT_FALSE(timer_armed(&t));
    timer_cancel(&t); /* cancelling twice is harmless */
    engine_run(&e, SIMTIME_NEVER);
    CU_ASSERT_EQUAL(c.fired, 0);
    CU_ASSERT_EQUAL(e.events, 0); /* the stale heap entry is not an event */
    CU_ASSERT_EQUAL(e.n, 0);
    engine_free(&e);
}

static void test_timer_move_earlier(void)
{
    struct engine e;
    engine_init(&e);
    struct timer t;
    struct tctx c = { .e = &e, .t = &t };
    timer_init(&t, &e, on_timer, &c, 77);
    timer_set(&t, 5000);
    timer_set(&t, 2000);
    CU_ASSERT_EQUAL(t.when, 2000);
    engine_run(&e, SIMTIME_NEVER);
    CU_ASSERT_EQUAL(c.fired, 1);
    CU_ASSERT_EQUAL(c.at[0], 2000);
    CU_ASSERT_EQUAL(e.events, 1);
    engine_free(&e);
}

static void test_timer_move_later(void)
{
    struct engine e;
    engine_init(&e);
    struct timer t;
    struct tctx c = { .e = &e, .t = &t };
    timer_init(&t, &e, on_timer, &c, 77);
    timer_set(&t, 2000);
    timer_set(&t, 9000);
    timer_set(&t, 9000); /* same time again: still one firing */
    engine_run(&e, SIMTIME_NEVER);
    CU_ASSERT_EQUAL(c.fired, 1);
    CU_ASSERT_EQUAL(c.at[0], 9000);
    CU_ASSERT_EQUAL(e.events, 1);
    CU_ASSERT_EQUAL(e.now, 9000);
    engine_free(&e);
}

/* Moving a timer from inside another event, back and forth, while the run is going. */
static void mover(void *ctx, uint64_t when)
{
    struct tctx *c = ctx;
    timer_set(c->t, when);
}

static void test_timer_moved_while_running(void)
{
    struct engine e;
    engine_init(&e);
    struct timer t;
    struct tctx c = { .e = &e, .t = &t };
    timer_init(&t, &e, on_timer, &c, 77);
    timer_set(&t, 10000);
    engine_at(&e, 1000, mover, &c, 50000);  /* later */
    engine_at(&e, 2000, mover, &c, 3000);   /* earlier than the original */
    engine_at(&e, 2500, mover, &c, 20000);  /* later again */
    engine_run(&e, SIMTIME_NEVER);
    CU_ASSERT_EQUAL(c.fired, 1);
    CU_ASSERT_EQUAL(c.at[0], 20000);
    CU_ASSERT_EQUAL(e.events, 4); /* three movers and one firing */
    engine_free(&e);
}

static void test_timer_rearm(void)
{
    struct engine e;
    engine_init(&e);
    struct timer t;
    struct tctx c = { .e = &e, .t = &t };
    timer_init(&t, &e, on_timer, &c, 77);
    /* after firing, set again from outside */
    timer_set(&t, 1000);
    engine_run(&e, SIMTIME_NEVER);
    CU_ASSERT_EQUAL(c.fired, 1);
    CU_ASSERT_FALSE(timer_armed(&t));
    timer_set(&t, 4000);
    CU_ASSERT(timer_armed(&t));
    engine_run(&e, SIMTIME_NEVER);
    CU_ASSERT_EQUAL(c.fired, 2);
    CU_ASSERT_EQUAL(c.at[1], 4000);
    /* periodic: re-armed from its own callback, 3 more times, 500 ps apart */
    c.rearm = 3;
    c.period = 500;
    timer_set(&t, 5000);
    engine_run(&e, SIMTIME_NEVER);
    CU_ASSERT_EQUAL(c.fired, 6);
    CU_ASSERT_EQUAL(c.at[2], 5000);
    CU_ASSERT_EQUAL(c.at[3], 5500);
    CU_ASSERT_EQUAL(c.at[4], 6000);
    CU_ASSERT_EQUAL(c.at[5], 6500);
    CU_ASSERT_EQUAL(e.events, 6);
    /* re-arming at the very time it last fired (the same `when` value as before firing)
     * must still fire: the timer is disarmed after it fires */
    timer_set(&t, 6500);
    engine_run(&e, SIMTIME_NEVER);
    CU_ASSERT_EQUAL(c.fired, 7);
    engine_free(&e);
}

/* timer_lite: the QP's 12-byte timer. Its handler finds it by the event's index and asks
 * timer_lite_due first; it must behave as a struct timer: one firing at the latest time
 * set, stale entries not counted as events, disarmed before the handler runs, and ties in
 * the order the timers were set (the engine's insertion order for one origin). */
struct lctx {
    struct engine *e;
    struct timer_lite t[3];
    int fired;
    simtime_t at[8];
    uint32_t who[8];
};

static void on_lite(void *ctx, uint64_t arg)
{
    struct lctx *c = ctx;
    uint32_t i = timer_lite_index(arg);
    CU_ASSERT_FATAL(i < 3);
    if (!timer_lite_due(&c->t[i], arg))
        return;
    CU_ASSERT_FALSE(timer_lite_armed(&c->t[i]));
    if (c->fired < 8) {
        c->at[c->fired] = c->e->now;
        c->who[c->fired] = i;
    }
    c->fired++;
}

static void lite_set(struct lctx *c, uint32_t i, simtime_t when)
{
    timer_lite_set(&c->t[i], c->e, when, engine_global(c->e), on_lite, c, i);
}

static void lite_mover(void *ctx, uint64_t when)
{
    lite_set(ctx, 2, when);
}

static void test_timer_lite(void)
{
    struct engine e;
    engine_init(&e);
    struct lctx c = { .e = &e };
    for (int i = 0; i < 3; i++)
        timer_lite_init(&c.t[i]);
    CU_ASSERT_EQUAL(sizeof(struct timer_lite), 12);
    CU_ASSERT_FALSE(timer_lite_armed(&c.t[0]));
    lite_set(&c, 0, 5000);
    CU_ASSERT(timer_lite_armed(&c.t[0]));
    lite_set(&c, 0, 2000);             /* earlier: fires at 2000 only */
    lite_set(&c, 1, 9000);
    lite_set(&c, 1, 9000);             /* the same time again: no second entry */
    lite_set(&c, 1, 3000);             /* earlier */
    lite_set(&c, 2, 4000);
    engine_at(&e, 1000, lite_mover, &c, 20000); /* moved later from an event */
    engine_run(&e, SIMTIME_NEVER);
    CU_ASSERT_EQUAL(c.fired, 3);
    CU_ASSERT(c.at[0] == 2000 && c.who[0] == 0);
    CU_ASSERT(c.at[1] == 3000 && c.who[1] == 1);
    CU_ASSERT(c.at[2] == 20000 && c.who[2] == 2);
    CU_ASSERT_EQUAL(e.events, 4);      /* the mover and three firings; 4 stale entries skipped */
    CU_ASSERT_EQUAL(e.n, 0);
    /* re-armed at the time it last fired: fires (it was disarmed); ties in the order set */
    lite_set(&c, 2, 30000);
    lite_set(&c, 1, 30000);
    lite_set(&c, 0, 30000);
    lite_set(&c, 2, 20000 + 20000);    /* moved: now after the other two */
    lite_set(&c, 2, 30000);            /* and back: last in the tie, set last */
    engine_run(&e, SIMTIME_NEVER);
    CU_ASSERT_EQUAL(c.fired, 6);
    CU_ASSERT(c.at[3] == 30000 && c.who[3] == 1);
    CU_ASSERT(c.at[4] == 30000 && c.who[4] == 0);
    CU_ASSERT(c.at[5] == 30000 && c.who[5] == 2);
    CU_ASSERT_EQUAL(e.events, 7);
    engine_free(&e);
}

/* ---- run limits ---- */

static void test_run_stops_at_stop_time(void)
{
    struct engine e;
    engine_init(&e);
    struct rec r;
    rec_init(&r, &e, 16);
    engine_at(&e, 100, on_rec, &r, 1);
    engine_at(&e, 200, on_rec, &r, 2);   /* exactly at the stop time: runs */
    engine_at(&e, 201, on_rec, &r, 3);   /* after: stays pending */
    engine_at(&e, 5000, on_rec, &r, 4);
    engine_run(&e, 200);
    CU_ASSERT_EQUAL(r.n, 2);
    CU_ASSERT_EQUAL(e.now, 200);
    CU_ASSERT_EQUAL(e.n, 2);
    CU_ASSERT_EQUAL(e.events, 2);
    /* continuing runs the rest, in order */
    engine_run(&e, SIMTIME_NEVER);
    CU_ASSERT_EQUAL_FATAL(r.n, 4);
    CU_ASSERT_EQUAL(r.tag[2], 3);
    CU_ASSERT_EQUAL(r.at[2], 201);
    CU_ASSERT_EQUAL(r.tag[3], 4);
    CU_ASSERT_EQUAL(e.n, 0);
    CU_ASSERT_EQUAL(e.events, 4);
    rec_free(&r);
    engine_free(&e);
}

static void test_run_stops_when_empty(void)
{
    struct engine e;
    engine_init(&e);
    struct rec r;
    rec_init(&r, &e, 4);
    engine_run(&e, SIMTIME_NEVER); /* nothing at all */
    CU_ASSERT_EQUAL(e.events, 0);
    CU_ASSERT_EQUAL(e.now, 0);
    engine_at(&e, 300, on_rec, &r, 1);
    engine_run(&e, 1000000);
    CU_ASSERT_EQUAL(r.n, 1);
    CU_ASSERT_EQUAL(e.n, 0);
    CU_ASSERT_EQUAL(e.now, 300); /* the clock stays at the last event, not the stop time */
    rec_free(&r);
    engine_free(&e);
}

static void halter(void *ctx, uint64_t arg)
{
    struct rec *r = ctx;
    on_rec(r, arg);
    engine_halt(r->e);
}

static void test_halt(void)
{
    struct engine e;
    engine_init(&e);
    struct rec r;
    rec_init(&r, &e, 8);
    engine_at(&e, 10, on_rec, &r, 1);
    engine_at(&e, 20, halter, &r, 2);
    engine_at(&e, 20, on_rec, &r, 3); /* same time, after the halt: must not run */
    engine_at(&e, 30, on_rec, &r, 4);
    engine_run(&e, SIMTIME_NEVER);
    CU_ASSERT_EQUAL(r.n, 2);
    CU_ASSERT(e.halted);
    CU_ASSERT_EQUAL(e.now, 20);
    CU_ASSERT_EQUAL(e.n, 2);
    /* a new run clears the halt and carries on */
    engine_run(&e, SIMTIME_NEVER);
    CU_ASSERT_EQUAL_FATAL(r.n, 4);
    CU_ASSERT_EQUAL(r.tag[2], 3);
    CU_ASSERT_EQUAL(r.tag[3], 4);
    CU_ASSERT_FALSE(e.halted);
    rec_free(&r);
    engine_free(&e);
}

/* An event may bring the run's end forward (the fabric does when its last transfer ends):
 * the events after the new stop time do not run, even those of the same 1024 ps slot, which
 * the run loop takes in a row. */
static void stopper(void *ctx, uint64_t arg)
{
    struct rec *r = ctx;
    on_rec(r, arg);
    r->e->stop = r->e->now;
}

static void test_stop_brought_forward(void)
{
    struct engine e;
    engine_init(&e);
    struct rec r;
    rec_init(&r, &e, 8);
    engine_at(&e, 10, on_rec, &r, 1);
    engine_at(&e, 20, stopper, &r, 2);
    engine_at(&e, 20, on_rec, &r, 3); /* the same time: still due */
    engine_at(&e, 21, on_rec, &r, 4); /* the same slot, after the new stop */
    engine_at(&e, 900, on_rec, &r, 5);
    engine_run(&e, SIMTIME_NEVER);
    CU_ASSERT_EQUAL_FATAL(r.n, 3);
    CU_ASSERT_EQUAL(r.tag[2], 3);
    CU_ASSERT_EQUAL(e.now, 20);
    CU_ASSERT_EQUAL(e.n, 2);
    CU_ASSERT_EQUAL(e.events, 3);
    engine_run(&e, SIMTIME_NEVER);
    CU_ASSERT_EQUAL_FATAL(r.n, 5);
    CU_ASSERT_EQUAL(r.tag[3], 4);
    CU_ASSERT_EQUAL(r.tag[4], 5);
    rec_free(&r);
    engine_free(&e);
}

/* A signal sets the interrupt flag; the run stops within the 4096 events after it (the
 * loop's look at the flag), whether the events share a slot or not, and leaves the rest
 * pending. */
static volatile sig_atomic_t flag;
static void raiser(void *ctx, uint64_t arg)
{
    on_rec(ctx, arg);
    flag = 1;
}

static void test_interrupt_stops_soon(void)
{
    for (int same_slot = 0; same_slot < 2; same_slot++) {
        struct engine e;
        engine_init(&e);
        struct rec r;
        rec_init(&r, &e, 20000);
        flag = 0;
        e.interrupt = &flag;
        for (uint64_t i = 0; i < 20000; i++)
            engine_at(&e, same_slot ? 0 : i * 5000, i == 100 ? raiser : on_rec, &r, i);
        engine_run(&e, SIMTIME_NEVER);
        CU_ASSERT(r.n > 100);
        CU_ASSERT(r.n <= 101 + 4096);
        CU_ASSERT_EQUAL(e.events, r.n);
        CU_ASSERT_EQUAL(e.n, 20000 - r.n);
        rec_free(&r);
        engine_free(&e);
    }
}

/* Stale timer entries are skipped without counting: 3 plain events, a timer moved twice
 * (3 heap entries, 1 firing) and a cancelled timer (1 heap entry, 0 firings) = 4 events. */
static void test_event_count_excludes_stale(void)
{
    struct engine e;
    engine_init(&e);
    struct rec r;
    rec_init(&r, &e, 8);
    struct timer t1, t2;
    struct tctx c1 = { .e = &e, .t = &t1 }, c2 = { .e = &e, .t = &t2 };
    timer_init(&t1, &e, on_timer, &c1, 77);
    timer_init(&t2, &e, on_timer, &c2, 77);
    engine_at(&e, 1, on_rec, &r, 1);
    engine_at(&e, 2, on_rec, &r, 2);
    engine_at(&e, 3, on_rec, &r, 3);
    timer_set(&t1, 10);
    timer_set(&t1, 20);
    timer_set(&t1, 5);
    timer_set(&t2, 15);
    timer_cancel(&t2);
    CU_ASSERT_EQUAL(e.n, 7);
    engine_run(&e, SIMTIME_NEVER);
    CU_ASSERT_EQUAL(c1.fired, 1);
    CU_ASSERT_EQUAL(c1.at[0], 5);
    CU_ASSERT_EQUAL(c2.fired, 0);
    CU_ASSERT_EQUAL(r.n, 3);
    CU_ASSERT_EQUAL(e.events, 4);
    CU_ASSERT_EQUAL(e.n, 0);
    rec_free(&r);
    engine_free(&e);
}

/* Times far apart (the whole 64-bit range), and events added after a run stopped at its
 * stop time that fall before the events still pending (what a windowed run does: run to
 * the window's end, take in events from elsewhere, run on). They must run first, in time
 * order, and the clock must never go backwards. */
static void test_extreme_times(void)
{
    struct engine e;
    engine_init(&e);
    struct rec r;
    rec_init(&r, &e, 16);
    engine_at(&e, UINT64_MAX - 1, on_rec, &r, 6);
    engine_at(&e, 1ull << 63, on_rec, &r, 5);
    engine_at(&e, 1ull << 40, on_rec, &r, 4);
    engine_at(&e, 3, on_rec, &r, 1);
    engine_run(&e, 1000);
    CU_ASSERT_EQUAL(r.n, 1);
    /* now = 3; new events between now and the pending ones go first */
    engine_at(&e, 10, on_rec, &r, 2);
    engine_at(&e, 1ull << 20, on_rec, &r, 3);
    engine_run(&e, SIMTIME_NEVER);
    CU_ASSERT_EQUAL_FATAL(r.n, 6);
    for (size_t k = 0; k < 6; k++) {
        CU_ASSERT_EQUAL(r.tag[k], k + 1);
        if (k)
            CU_ASSERT(r.at[k] >= r.at[k - 1]); /* time never goes backwards */
    }
    CU_ASSERT_EQUAL(r.at[5], UINT64_MAX - 1);
    CU_ASSERT_EQUAL(e.n, 0);
    rec_free(&r);
    engine_free(&e);
}


/* ---- the tie-break: own events first, then turns by (origin, time), then sequence ---- */

struct ent_rec {
    struct engine *e;
    uint32_t owner[4096];
    uint64_t tag[4096];
    int n;
    bool reverse;             /* the senders schedule in the other order */
};

static void on_ent(void *ctx, uint64_t tag)
{
    struct ent_rec *r = ctx;
    CU_ASSERT_FATAL(r->n < 4096);
    r->owner[r->n] = r->e->cur;
    r->tag[r->n++] = tag;
    if (tag == 4) /* entity 1's own event at 50 ns */
        engine_at_on(r->e, 50000, 1, on_ent, r, 22);
    if (tag == 10 || tag == 11) /* entities 2 and 0 send to entity 1 at 50 ns */
        engine_at_on(r->e, 50000, 1, on_ent, r, tag + 10);
    if (tag >= 1000 && tag < 3000) /* entity 0 or 1 sends to entity 2 at the same time + 1 ns */
        engine_at_on(r->e, r->e->now + 1000, 2, on_ent, r, tag + 10000);
}

static void run_ties(struct ent_rec *r, bool reverse)
{
    struct engine e;
    engine_init(&e);
    engine_set_entities(&e, 3);
    CU_ASSERT_EQUAL(engine_global(&e), 3);
    *r = (struct ent_rec){ .e = &e, .reverse = reverse };
    /* tag k+1 on entity own[k]; reversed, entity 2's two keep their order (one origin's
     * events run in the order it scheduled them, by design) */
    const uint32_t own[] = { 2, 0, 2, 1 };
    const int order[2][4] = { { 0, 1, 2, 3 }, { 3, 1, 0, 2 } };
    for (int k = 0; k < 4; k++) {
        int j = order[reverse][k];
        engine_at_on(&e, 7000, own[j], on_ent, r, (uint64_t)j + 1);
    }
    engine_at_on(&e, 9000, reverse ? 0 : 2, on_ent, r, reverse ? 11 : 10);
    engine_at_on(&e, 9000, reverse ? 2 : 0, on_ent, r, reverse ? 10 : 11);
    /* 1000 times at which entities 0 and 1 both send to entity 2 */
    for (uint64_t t = 0; t < 1000; t++) {
        engine_at_on(&e, 100000 + t * 1000, reverse ? 1 : 0, on_ent, r, (reverse ? 2000 : 1000) + t);
        engine_at_on(&e, 100000 + t * 1000, reverse ? 0 : 1, on_ent, r, (reverse ? 1000 : 2000) + t);
    }
    engine_run(&e, SIMTIME_NEVER);
    CU_ASSERT_EQUAL(e.cur, ENGINE_NONE);
    engine_free(&e);
}

static int pos_of(const struct ent_rec *r, uint64_t tag)
{
    for (int k = 0; k < r->n; k++)
        if (r->tag[k] == tag)
            return k;
    return -1;
}

/* Before the run an event's origin is its owner; during it, the entity of the event that
 * scheduled it. At equal times: an entity's own events before those sent to it, one origin's
 * events in the order it scheduled them, and between origins a turn that varies with time
 * (fair over many ties), the same whatever order the events were scheduled in. */
static void test_equal_time_tie_break(void)
{
    static struct ent_rec a, b;
    run_ties(&a, false);
    run_ties(&b, true);
    CU_ASSERT_EQUAL_FATAL(a.n, 4 + 2 + 3 + 2000 + 2000);
    CU_ASSERT_EQUAL_FATAL(b.n, a.n);
    /* the same order whichever way the events were scheduled */
    int same = 0;
    for (int k = 0; k < a.n; k++)
        same += a.tag[k] == b.tag[k] && a.owner[k] == b.owner[k];
    CU_ASSERT_EQUAL(same, a.n);
    /* entity 2's two events at 7 ns in the order it scheduled them */
    CU_ASSERT(pos_of(&a, 1) < pos_of(&a, 3));
    /* 50 ns: entity 1's own event before the two sent to it */
    CU_ASSERT(pos_of(&a, 22) < pos_of(&a, 20));
    CU_ASSERT(pos_of(&a, 22) < pos_of(&a, 21));
    /* entity 0 first in about half of the 1000 ties at entity 2 (binomial: sd 16); a fixed
     * order by entity number would give 0 or 1000 */
    int zero_first = 0;
    for (uint64_t t = 0; t < 1000; t++)
        zero_first += pos_of(&a, 11000 + t) < pos_of(&a, 12000 + t);
    CU_ASSERT(zero_first > 400 && zero_first < 600);
}

/* A toy system of 6 entities that message each other with a delay of at least LOOK (and
 * themselves with any delay, zero included), with many equal times. Each entity's behaviour
 * depends only on what it received, in the order it received it (its state seeds its own
 * choices). Run on one engine, and as a conservative parallel run on 2 and 3 engines: each
 * window runs every engine up to (window start + LOOK - 1), then the events bound for other
 * engines are inserted there with the keys they were stamped with. Every entity must see the
 * same events in the same order. */
enum { TOY_ENT = 6, TOY_LOOK = 5, TOY_MAX = 4000 };

struct toy;
struct toy_out {
    simtime_t t;
    struct engine_key key;
    uint64_t arg;
    uint32_t owner;
};

struct toy_eng {
    struct engine e;
    struct toy *sys;
    GArray *out;              /* struct toy_out for other engines */
};

struct toy {
    struct toy_eng eng[3];
    int part[TOY_ENT];        /* the engine owning each entity */
    uint64_t state[TOY_ENT];  /* a hash of what the entity saw, in order */
    uint32_t seen[TOY_ENT];
};

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static void toy_fire(void *ctx, uint64_t arg);

static void toy_send(struct toy_eng *te, uint32_t to, simtime_t t, uint64_t arg)
{
    struct toy *sys = te->sys;
    struct toy_eng *dst = &sys->eng[sys->part[to]];
    if (dst == te) {
        engine_at_on(&te->e, t, to, toy_fire, te, arg);
    } else {
        struct toy_out o = { t, engine_stamp(&te->e, to, t), arg, to };
        g_array_append_val(te->out, o);
    }
}

static void toy_fire(void *ctx, uint64_t arg)
{
    struct toy_eng *te = ctx;
    struct toy *sys = te->sys;
    uint32_t me = te->e.cur;
    CU_ASSERT_FATAL(me < TOY_ENT && sys->part[me] == te - sys->eng);
    uint64_t h = sys->state[me] = mix(mix(sys->state[me], te->e.now), arg);
    if (++sys->seen[me] > TOY_MAX / TOY_ENT)
        return;
    simtime_t now = te->e.now;
    /* to itself: 0..2 ps later; to another: LOOK..LOOK+2 ps later (ties are common) */
    toy_send(te, me, now + (h >> 8) % 3, h & 0xffff);
    if ((h >> 20) % 3 != 0) {
        uint32_t to = (uint32_t)((me + 1 + (h >> 24) % (TOY_ENT - 1)) % TOY_ENT);
        toy_send(te, to, now + TOY_LOOK + (h >> 32) % 3, (h >> 40) & 0xffff);
    }
}

static void toy_run(struct toy *sys, int nengines, const int *part)
{
    memset(sys, 0, sizeof *sys);
    memcpy(sys->part, part, sizeof sys->part);
    for (int k = 0; k < nengines; k++) {
        engine_init(&sys->eng[k].e);
        engine_set_entities(&sys->eng[k].e, TOY_ENT);
        sys->eng[k].sys = sys;
        sys->eng[k].out = g_array_new(FALSE, FALSE, sizeof(struct toy_out));
    }
    /* each entity starts with two events at t = 0 and 1 (scheduled by whoever owns it) */
    for (uint32_t x = 0; x < TOY_ENT; x++)
        for (uint64_t k = 0; k < 2; k++)
            engine_at_on(&sys->eng[part[x]].e, k, x, toy_fire, &sys->eng[part[x]], 100 * x + k);
    for (simtime_t w = 0;; w += TOY_LOOK) {
        bool any = false;
        for (int k = 0; k < nengines; k++)
            engine_run(&sys->eng[k].e, w + TOY_LOOK - 1);
        for (int k = 0; k < nengines; k++) {
            GArray *o = sys->eng[k].out;
            for (guint i = 0; i < o->len; i++) {
                struct toy_out *m = &g_array_index(o, struct toy_out, i);
                CU_ASSERT(m->t >= w + TOY_LOOK); /* the lookahead held */
                struct toy_eng *dst = &sys->eng[part[m->owner]];
                engine_insert(&dst->e, m->t, m->key, m->owner, toy_fire, dst, m->arg);
            }
            g_array_set_size(o, 0);
        }
        for (int k = 0; k < nengines; k++)
            any |= engine_pending(&sys->eng[k].e) > 0;
        if (!any)
            break;
    }
    for (int k = 0; k < nengines; k++) {
        engine_free(&sys->eng[k].e);
        g_array_unref(sys->eng[k].out);
    }
}

static void test_partitions_see_the_same_order(void)
{
    static struct toy one, two, three, other;
    const int p1[TOY_ENT] = { 0, 0, 0, 0, 0, 0 };
    const int p2[TOY_ENT] = { 0, 1, 0, 1, 0, 1 };
    const int p3[TOY_ENT] = { 2, 0, 1, 1, 0, 2 };
    const int p2b[TOY_ENT] = { 1, 1, 1, 0, 0, 0 };
    toy_run(&one, 1, p1);
    toy_run(&two, 2, p2);
    toy_run(&three, 3, p3);
    toy_run(&other, 2, p2b);
    uint32_t total = 0;
    for (int x = 0; x < TOY_ENT; x++) {
        total += one.seen[x];
        CU_ASSERT(one.seen[x] > 100);
        CU_ASSERT_EQUAL(two.seen[x], one.seen[x]);
        CU_ASSERT_EQUAL(three.seen[x], one.seen[x]);
        CU_ASSERT_EQUAL(other.seen[x], one.seen[x]);
        CU_ASSERT_EQUAL(two.state[x], one.state[x]);
        CU_ASSERT_EQUAL(three.state[x], one.state[x]);
        CU_ASSERT_EQUAL(other.state[x], one.state[x]);
    }
    CU_ASSERT(total > TOY_MAX);
}

/* ---- the same toy on an engine group (sim/engine_group.c), with a global entity ---- */

/* Entities as above, found through engine_running() (the group routes events across
 * engines); the global entity wakes every GTICK ps, folds every entity's state into a trace
 * (it must see each as it is after all of that instant's events, none later) and sends an
 * entity an event for the same instant. A timer of an entity is moved by that entity only. */
enum { GTICK = 7, GTRACE = 2000 };

struct gtoy {
    uint64_t state[TOY_ENT];
    uint32_t seen[TOY_ENT];
    uint64_t trace[GTRACE];
    uint32_t ntrace;
    struct timer tm[TOY_ENT];
    uint32_t timer_fired[TOY_ENT];
};

static void gtoy_fire(void *ctx, uint64_t arg);

static void gtoy_timer(void *ctx, uint64_t x)
{
    struct gtoy *g = ctx;
    struct engine *e = engine_running();
    CU_ASSERT_EQUAL(e->cur, (uint32_t)x);
    g->timer_fired[x]++;
    g->state[x] = mix(g->state[x], e->now ^ 0x5555);
}

static void gtoy_fire(void *ctx, uint64_t arg)
{
    struct gtoy *g = ctx;
    struct engine *e = engine_running();
    uint32_t me = e->cur;
    CU_ASSERT_FATAL(me < TOY_ENT);
    uint64_t h = g->state[me] = mix(mix(g->state[me], e->now), arg);
    if (++g->seen[me] > TOY_MAX / TOY_ENT)
        return;
    engine_at_on(e, e->now + (h >> 8) % 3, me, gtoy_fire, g, h & 0xffff);
    if ((h >> 20) % 3 != 0) {
        uint32_t to = (uint32_t)((me + 1 + (h >> 24) % (TOY_ENT - 1)) % TOY_ENT);
        engine_at_on(e, e->now + TOY_LOOK + (h >> 32) % 3, to, gtoy_fire, g, (h >> 40) & 0xffff);
    }
    if (!timer_armed(&g->tm[me]))
        timer_set(&g->tm[me], e->now + 1 + (h >> 48) % 4);
    else if (((h >> 52) & 15) == 0) /* moved before it fires, now and then */
        timer_set(&g->tm[me], e->now + 2);
}

static void gtoy_tick(void *ctx, uint64_t arg)
{
    (void)arg;
    struct gtoy *g = ctx;
    struct engine *e = engine_running();
    CU_ASSERT_EQUAL(e->cur, engine_global(e));
    uint64_t h = e->now;
    for (int x = 0; x < TOY_ENT; x++)
        h = mix(h, g->state[x]);
    if (g->ntrace < GTRACE)
        g->trace[g->ntrace++] = h;
    uint32_t to = (uint32_t)((e->now / GTICK) % TOY_ENT);
    engine_at_on(e, e->now, to, gtoy_fire, g, h & 0xff); /* for now: runs after this tick */
    if (e->now < 3000)
        engine_at_on(e, e->now + GTICK, engine_global(e), gtoy_tick, g, 0);
}

/* Builds the toy on a setup engine (as net_build does), then runs it alone (workers 0) or on
 * a group of `workers` engines with the entity -> engine map `part`. Returns events run. */
static uint64_t gtoy_run(struct gtoy *g, uint32_t workers, const uint32_t *part)
{
    memset(g, 0, sizeof *g);
    struct engine setup;
    engine_init(&setup);
    engine_set_entities(&setup, TOY_ENT);
    for (uint32_t x = 0; x < TOY_ENT; x++) {
        timer_init_on(&g->tm[x], &setup, x, gtoy_timer, g, x);
        for (uint64_t k = 0; k < 2; k++)
            engine_at_on(&setup, k, x, gtoy_fire, g, 100 * x + k);
    }
    engine_at_on(&setup, 0, engine_global(&setup), gtoy_tick, g, 0);
    uint64_t events = 0;
    if (!workers) {
        engine_run(&setup, SIMTIME_NEVER);
        events = setup.events;
    } else {
        struct engine *eng[4];
        uint32_t map[TOY_ENT + 1];
        memcpy(map, part, TOY_ENT * sizeof *map);
        map[TOY_ENT] = workers;
        for (uint32_t w = 0; w <= workers; w++) {
            eng[w] = g_aligned_alloc0(1, sizeof(struct engine), 64);
            engine_init(eng[w]);
            engine_set_entities(eng[w], TOY_ENT);
            memcpy(eng[w]->seq, setup.seq, (TOY_ENT + 1) * sizeof *setup.seq);
        }
        engine_move_pending(&setup, eng, map);
        struct engine_group grp;
        engine_group_init(&grp, eng, workers, map, TOY_LOOK);
        engine_group_run(&grp, SIMTIME_NEVER);
        CU_ASSERT(grp.windows > 100);
        engine_group_free(&grp);
        for (uint32_t w = 0; w <= workers; w++) {
            events += eng[w]->events;
            CU_ASSERT_EQUAL(engine_pending(eng[w]), 0);
            engine_free(eng[w]);
            g_aligned_free(eng[w]);
        }
    }
    engine_free(&setup);
    return events;
}

static void test_group_matches_one_engine(void)
{
    static struct gtoy one, two, three, skew;
    const uint32_t p2[TOY_ENT] = { 0, 1, 0, 1, 0, 1 };
    const uint32_t p3[TOY_ENT] = { 2, 0, 1, 1, 0, 2 };
    const uint32_t p2b[TOY_ENT] = { 1, 1, 1, 1, 1, 0 };
    uint64_t e1 = gtoy_run(&one, 0, NULL);
    CU_ASSERT_EQUAL(gtoy_run(&two, 2, p2), e1);
    CU_ASSERT_EQUAL(gtoy_run(&three, 3, p3), e1);
    CU_ASSERT_EQUAL(gtoy_run(&skew, 2, p2b), e1);
    CU_ASSERT(one.ntrace > 400);
    CU_ASSERT_EQUAL(two.ntrace, one.ntrace);
    CU_ASSERT_EQUAL(three.ntrace, one.ntrace);
    CU_ASSERT_EQUAL(skew.ntrace, one.ntrace);
    CU_ASSERT(memcmp(two.trace, one.trace, sizeof one.trace) == 0);
    CU_ASSERT(memcmp(three.trace, one.trace, sizeof one.trace) == 0);
    CU_ASSERT(memcmp(skew.trace, one.trace, sizeof one.trace) == 0);
    for (int x = 0; x < TOY_ENT; x++) {
        CU_ASSERT(one.seen[x] > 100);
        CU_ASSERT(one.timer_fired[x] >= 3); /* timers fire too (5 to 8 here), not only move */
        CU_ASSERT_EQUAL(two.state[x], one.state[x]);
        CU_ASSERT_EQUAL(three.state[x], one.state[x]);
        CU_ASSERT_EQUAL(skew.state[x], one.state[x]);
        CU_ASSERT_EQUAL(three.timer_fired[x], one.timer_fired[x]);
    }
}

/* Many events for one instant, each scheduling one more for that instant (a million
 * dependents learning of one completion at once): the late ones run in the tie-break's
 * order, and without moving the rest of the batch for each (that took minutes). */
struct late {
    uint32_t *order;
    uint32_t ran;
};

static void late_second(void *ctx, uint64_t x)
{
    struct late *l = ctx;
    l->order[l->ran++] = (uint32_t)x | 0x80000000u;
}

static void late_first(void *ctx, uint64_t x)
{
    struct late *l = ctx;
    l->order[l->ran++] = (uint32_t)x;
    struct engine *e = engine_running();
    engine_at_on(e, e->now, e->cur, late_second, l, x);
}

static void test_late_events_in_a_big_batch(void)
{
    enum { N = 200000, OWNERS = 1000 };
    struct engine e;
    engine_init(&e);
    engine_set_entities(&e, OWNERS);
    struct late l = { g_new(uint32_t, 2 * N), 0 };
    /* all from the global entity (before the run: its own events), owners ascending */
    for (uint32_t x = 0; x < N; x++)
        engine_at_on(&e, 10, x % OWNERS, late_first, &l, x);
    engine_run(&e, SIMTIME_NEVER);
    CU_ASSERT_EQUAL_FATAL(l.ran, 2 * N);
    /* owner by owner (ascending); within one, its events by sequence: the N/OWNERS first
     * ones in the order they were scheduled, then the late ones they made, in that order */
    uint32_t bad = 0, per = N / OWNERS;
    for (uint32_t o = 0; o < OWNERS; o++)
        for (uint32_t k = 0; k < per; k++) {
            uint32_t x = o + k * OWNERS;
            bad += l.order[2 * per * o + k] != x;
            bad += l.order[2 * per * o + per + k] != (x | 0x80000000u);
        }
    CU_ASSERT_EQUAL(bad, 0);
    g_free(l.order);
    engine_free(&e);
}

/* ---- a batch of ties, sorted by each of the engine's three sorts ---- */

struct batch {
    struct engine e;
    uint32_t n;               /* entities that each send one event into the batch */
    bool late_first;          /* which end of the range schedules first */
    uint32_t *owner, *origin; /* per executed batch event */
    uint32_t ran;
};

static void batch_hit(void *ctx, uint64_t origin)
{
    struct batch *b = ctx;
    b->owner[b->ran] = b->e.cur;
    b->origin[b->ran++] = (uint32_t)origin;
}

/* entity x, at a time that depends on x and the run, sends to owner (x * 7) % 97 at 5 ns */
static void batch_send(void *ctx, uint64_t x)
{
    struct batch *b = ctx;
    engine_at_on(&b->e, 5000, (uint32_t)((x * 7) % 97), batch_hit, b, x);
}

static void run_batch(struct batch *b, uint32_t n, bool late_first)
{
    engine_init(&b->e);
    engine_set_entities(&b->e, n);
    b->n = n;
    b->owner = g_new(uint32_t, n);
    b->origin = g_new(uint32_t, n);
    b->ran = 0;
    for (uint32_t x = 0; x < n; x++) {
        uint32_t slot = x % 100;
        engine_at_on(&b->e, late_first ? 99 - slot : slot, x, batch_send, b, x);
    }
    engine_run(&b->e, SIMTIME_NEVER);
    engine_free(&b->e);
}

/* n events at one instant arrive in two different insertion orders (their senders run at
 * different times in the two runs); whichever sort the batch size picks (insertion of the
 * events up to 16, above that the radix sort of records, one pass or several), they must run
 * in the same order, owners ascending. */
static void test_batch_sorts_agree(void)
{
    const uint32_t sizes[] = { 12, 100, 200, 500, 3000 };
    for (size_t k = 0; k < G_N_ELEMENTS(sizes); k++) {
        struct batch a, b;
        run_batch(&a, sizes[k], false);
        run_batch(&b, sizes[k], true);
        CU_ASSERT_EQUAL(a.ran, sizes[k]);
        CU_ASSERT_EQUAL(b.ran, sizes[k]);
        uint32_t same = 0, ascending = 0;
        for (uint32_t i = 0; i < a.ran && i < b.ran; i++) {
            same += a.owner[i] == b.owner[i] && a.origin[i] == b.origin[i];
            ascending += i == 0 || a.owner[i] >= a.owner[i - 1];
        }
        CU_ASSERT_EQUAL(same, sizes[k]);
        CU_ASSERT_EQUAL(ascending, sizes[k]);
        g_free(a.owner);
        g_free(a.origin);
        g_free(b.owner);
        g_free(b.origin);
    }
}

/* n events in one slot of the wheel (2^ENGINE_SLOT_BITS ps) at random times on random
 * owners, scheduled before the run (each its owner's own, so the header's rule is: time,
 * then owner, then the order they were scheduled in): run against that order computed by
 * qsort. The sizes cross the sorts' paths: a slot of two chunks copied into the bucket and
 * sorted there (14), one of three chunks or more sorted where it lies (15 on: insertion of
 * the gathered events up to 16, above that records in one radix pass, bins sorted again,
 * several levels). */
struct slot_ref {
    simtime_t t;
    uint32_t owner;
    uint32_t idx;
};

static int cmp_slot_ref(const void *a, const void *b)
{
    const struct slot_ref *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->owner != y->owner)
        return x->owner < y->owner ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

struct slot_run {
    struct engine e;
    uint32_t *owner, *idx;
    uint32_t ran;
};

static void slot_hit(void *ctx, uint64_t idx)
{
    struct slot_run *r = ctx;
    r->owner[r->ran] = r->e.cur;
    r->idx[r->ran++] = (uint32_t)idx;
}

static void test_random_slot_against_reference(void)
{
    const uint32_t sizes[] = { 14, 15, 16, 17, 60, 128, 300, 2048, 3000, 60000 };
    const uint32_t owners[] = { 1, 5, 1000, 100000 };
    struct rng g;
    rng_init(&g, 9, 4);
    for (size_t k = 0; k < G_N_ELEMENTS(sizes); k++) {
        for (size_t o = 0; o < G_N_ELEMENTS(owners); o++) {
            uint32_t n = sizes[k];
            struct slot_run r = { .owner = g_new(uint32_t, n), .idx = g_new(uint32_t, n) };
            struct slot_ref *ref = g_new(struct slot_ref, n);
            engine_init(&r.e);
            engine_set_entities(&r.e, owners[o]);
            simtime_t slot = (simtime_t)1000 << ENGINE_SLOT_BITS; /* slot 1000, 1 us */
            /* half the runs at few distinct times, for ties of time and owner */
            uint64_t spread = k % 2 ? 1ull << ENGINE_SLOT_BITS : 7;
            for (uint32_t i = 0; i < n; i++) {
                ref[i] = (struct slot_ref){ slot + rng_below(&g, spread),
                                            (uint32_t)rng_below(&g, owners[o]), i };
                engine_at_on(&r.e, ref[i].t, ref[i].owner, slot_hit, &r, i);
            }
            qsort(ref, n, sizeof *ref, cmp_slot_ref);
            engine_run(&r.e, SIMTIME_NEVER);
            CU_ASSERT_EQUAL(r.ran, n);
            uint32_t bad = 0;
            for (uint32_t i = 0; i < n && i < r.ran; i++)
                bad += r.owner[i] != ref[i].owner || r.idx[i] != ref[i].idx;
            CU_ASSERT_EQUAL(bad, 0);
            engine_free(&r.e);
            g_free(r.owner);
            g_free(r.idx);
            g_free(ref);
        }
    }
}

/* ---- handlers: the table an event's handler index names ---- */

static void on_rec_b(void *ctx, uint64_t tag) { on_rec(ctx, tag | 1u << 20); }

/* A pair is registered once (handler 0 is the timers'), and an event runs its own pair's
 * function and context. */
static void test_handlers_registered_once(void)
{
    struct engine e;
    engine_init(&e);
    struct rec r1, r2;
    rec_init(&r1, &e, 8);
    rec_init(&r2, &e, 8);
    uint32_t a = engine_handler(&e, on_rec, &r1), b = engine_handler(&e, on_rec, &r2),
             c = engine_handler(&e, on_rec_b, &r1);
    CU_ASSERT(a != 0 && b != 0 && c != 0);
    CU_ASSERT(a != b && a != c && b != c);
    CU_ASSERT_EQUAL(engine_handler(&e, on_rec, &r1), a);
    CU_ASSERT_EQUAL(engine_handler(&e, on_rec_b, &r1), c);
    engine_at_h(&e, 10, engine_global(&e), c, 3);
    engine_at(&e, 20, on_rec, &r2, 4);
    engine_at_h(&e, 30, engine_global(&e), a, 5);
    engine_run(&e, SIMTIME_NEVER);
    CU_ASSERT_EQUAL(r1.n, 2);
    CU_ASSERT_EQUAL(r2.n, 1);
    if (r1.n == 2 && r2.n == 1) {
        CU_ASSERT_EQUAL(r1.tag[0], 3 | 1u << 20);
        CU_ASSERT_EQUAL(r1.tag[1], 5);
        CU_ASSERT_EQUAL(r2.tag[0], 4);
    }
    rec_free(&r1);
    rec_free(&r2);
    engine_free(&e);
}

/* The handler shares a word with the origin and must not take part in the order: events of
 * one time, owner and key from origins 1..n run by origin (engine.h, rule 3's last resort)
 * whatever their handlers, given here the other way round (a higher handler for a lower
 * origin). Both the insertion sort (up to 16 events) and the prefix sort (more). */
struct order_log {
    uint32_t ran[40];
    uint32_t n;
};
struct order_ctx {
    struct order_log *log;
};

static void on_order(void *ctx, uint64_t origin)
{
    struct order_ctx *c = ctx;
    CU_ASSERT_FATAL(c->log->n < 40);
    c->log->ran[c->log->n++] = (uint32_t)origin;
}

static void test_handler_not_in_order(void)
{
    for (uint32_t n = 2; n <= 40; n += 38) {
        struct engine e;
        engine_init(&e);
        engine_set_entities(&e, 64);
        struct order_log log = { .n = 0 };
        struct order_ctx ctxs[40];
        uint32_t h[40];
        for (uint32_t k = 0; k < n; k++) { /* a context each: n handlers, rising */
            ctxs[k].log = &log;
            h[k] = engine_handler(&e, on_order, &ctxs[k]);
            CU_ASSERT(k == 0 || h[k] > h[k - 1]);
        }
        uint64_t key = ENGINE_KEY_REMOTE | 5ull << ENGINE_SEQ_BITS | 9; /* one key for all */
        for (uint32_t o = n; o >= 1; o--) /* origin o gets the (n - o)-th handler */
            engine_insert_h(&e, 1000, (struct engine_key){ key, o }, 0, h[n - o], o);
        engine_run(&e, SIMTIME_NEVER);
        CU_ASSERT_EQUAL(log.n, n);
        for (uint32_t i = 0; i < log.n; i++)
            CU_ASSERT_EQUAL(log.ran[i], i + 1);
        engine_free(&e);
    }
}

static CU_TestInfo tests[] = {
    { "equal times run in insertion order", test_equal_time_insertion_order },
    { "equal times: own events first, fair turns, per-origin order", test_equal_time_tie_break },
    { "a batch of ties: insertion and radix sorts agree", test_batch_sorts_agree },
    { "random events in one slot on random owners match a sorted reference", test_random_slot_against_reference },
    { "1, 2 and 3 engines with windows give every entity the same order", test_partitions_see_the_same_order },
    { "an engine group on 2 and 3 threads, with a global entity and timers, runs as one engine", test_group_matches_one_engine },
    { "200000 events at one instant, each scheduling one more for it: in order", test_late_events_in_a_big_batch },
    { "20000 random events match a sorted reference", test_random_against_sorted_reference },
    { "events scheduled while running keep the order", test_events_scheduled_while_running },
    { "delays at the wheel's slot edges and horizon, windows: in order", test_wheel_edges_and_windows },
    { "one origin's ties in its order, from the radix heap and the wheel", test_one_origin_across_heap_and_wheel },
    { "extreme times; events added after an early stop", test_extreme_times },
    { "timer: cancel never fires", test_timer_cancel },
    { "timer: move earlier fires once at the new time", test_timer_move_earlier },
    { "timer: move later fires once at the new time", test_timer_move_later },
    { "timer: moved back and forth by events", test_timer_moved_while_running },
    { "timer: re-arm after firing and from its callback", test_timer_rearm },
    { "run stops at the stop time, later events pending", test_run_stops_at_stop_time },
    { "run stops when no events are left", test_run_stops_when_empty },
    { "engine_halt stops after the current event", test_halt },
    { "an event that brings the stop time forward ends the run", test_stop_brought_forward },
    { "the interrupt flag stops the run within 4096 events", test_interrupt_stops_soon },
    { "events count excludes stale timer entries", test_event_count_excludes_stale },
    { "timer_lite: latest time only, stale entries uncounted, ties in the order set", test_timer_lite },
    { "handlers: a pair registered once, each event runs its own", test_handlers_registered_once },
    { "handlers: not part of the order of ties", test_handler_not_in_order },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("engine", tests)
