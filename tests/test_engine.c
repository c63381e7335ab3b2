/* Event engine: ordering by (time, insertion), against a sorted reference with many random
 * events; timers (cancel, move earlier/later, re-arm); run limits (stop time, empty heap,
 * halt); the `events` count, which must not include stale timer entries. */
#include <string.h>
#include "sim/engine.h"
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

static CU_TestInfo tests[] = {
    { "equal times run in insertion order", test_equal_time_insertion_order },
    { "20000 random events match a sorted reference", test_random_against_sorted_reference },
    { "events scheduled while running keep the order", test_events_scheduled_while_running },
    { "extreme times; events added after an early stop", test_extreme_times },
    { "timer: cancel never fires", test_timer_cancel },
    { "timer: move earlier fires once at the new time", test_timer_move_earlier },
    { "timer: move later fires once at the new time", test_timer_move_later },
    { "timer: moved back and forth by events", test_timer_moved_while_running },
    { "timer: re-arm after firing and from its callback", test_timer_rearm },
    { "run stops at the stop time, later events pending", test_run_stops_at_stop_time },
    { "run stops when no events are left", test_run_stops_when_empty },
    { "engine_halt stops after the current event", test_halt },
    { "events count excludes stale timer entries", test_event_count_excludes_stale },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("engine", tests)
