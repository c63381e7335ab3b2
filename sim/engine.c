#include "sim/engine.h"
#include <glib.h>
#include "sim/engine_group.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* the engine whose run loop is on this thread's stack (several run at once in a parallel run) */
static __thread struct engine *running;

struct engine *engine_running(void) { return running; }

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
    e->cur = ENGINE_NONE;
    e->seq = g_new0(uint64_t, 1);
}

void engine_free(struct engine *e)
{
    for (int i = 0; i < ENGINE_BUCKETS; i++)
        g_free(e->b[i].ev);
    g_free(e->late.ev);
    g_free(e->seq);
    g_free(e->scratch);
    *e = (struct engine){ 0 };
}

void engine_set_entities(struct engine *e, uint32_t n)
{
    if (e->n || n >= ENGINE_MAX_ENTITIES)
        g_error("engine_set_entities(%u): %s", n, e->n ? "events are already scheduled" : "too many entities");
    g_free(e->seq);
    e->seq = g_new0(uint64_t, (gsize)n + 1);
    e->entities = n;
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

/* Bucket 0 holds the events at time `last`, in order and consumed from its head. Ties come
 * in batches (a refill moves every event of the new minimum time at once; measured: 8 a
 * batch on average on bench/fabric.ini, at most 218, and 31 on bench/scale.ini), while an
 * event scheduled at the current time goes in one by one, and rarely (fewer than 1 in 30).
 * So a batch is sorted once, stably: by insertion for a few events; else (order, index)
 * records by insertion, by a merge or, above a thousand, by a radix sort over the bytes that
 * differ; a late event is put in place.
 *
 * The order: by owner, then the key's high half (remote flag, turn), then origin, then the
 * key's low half (the sequence). Owner first is what matters for speed (each owner's state
 * is touched once per batch, in memory order) and nothing else (an owner's events at an
 * instant do not see another's). The sequence decides only between events of one origin,
 * and those are in their bucket in sequence order already (stamped and appended together,
 * and buckets keep order), so the radix sort, being stable, leaves it out. */
struct srec {
    uint64_t hi;               /* owner << 32 | key >> 32 */
    uint32_t origin, idx;
};

static inline uint64_t order_hi(const struct event *a) { return (uint64_t)a->owner << 32 | a->key >> 32; }

static inline bool ev_before(const struct event *a, const struct event *b)
{
    uint64_t ha = order_hi(a), hb = order_hi(b);
    if (ha != hb)
        return ha < hb;
    if (a->origin != b->origin)
        return a->origin < b->origin;
    return (uint32_t)a->key < (uint32_t)b->key;
}

static void insertion_sort(struct event *v, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) {
        struct event x = v[i];
        uint32_t j = i;
        for (; j > 0 && ev_before(&x, &v[j - 1]); j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

/* LSD radix sort of n records (stable): the origin's bytes, then the high half's, least
 * significant first; a byte that every record has alike (vary_* clear) is skipped. The result
 * is in *out (x or y). */
static void radix_sort(struct srec *x, struct srec *y, uint32_t n, uint64_t vary_h, uint32_t vary_g, struct srec **out)
{
    for (int pass = 0; pass < 12; pass++) {
        bool hi = pass >= 4;
        int shift = 8 * (hi ? pass - 4 : pass);
        if (!(((hi ? vary_h : vary_g) >> shift) & 0xff))
            continue;
#define RADIX_DIGIT(r) ((unsigned)((hi ? (r).hi : (r).origin) >> shift) & 0xff)
        uint32_t cnt[257] = { 0 };
        for (uint32_t i = 0; i < n; i++)
            cnt[RADIX_DIGIT(x[i]) + 1]++;
        for (int d = 0; d < 256; d++)
            cnt[d + 1] += cnt[d];
        for (uint32_t i = 0; i < n; i++)
            y[cnt[RADIX_DIGIT(x[i])]++] = x[i];
#undef RADIX_DIGIT
        struct srec *t = x;
        x = y;
        y = t;
    }
    *out = x;
}

/* Up to this many records a batch is sorted by insertion: a batch comes out of its bucket
 * nearly in order (its events were appended as they were scheduled), so the moves are few,
 * where the merge below always makes log2(n) passes. bench/fabric.ini: 6.25-6.29 s with the
 * merge from 17 records, 5.99-6.02 with insertion to 128 (interleaved runs, 2026-12-04). */
#define SORT0_INSERTION_MAX 128

static void sort0(struct engine *e)
{
    struct bucket *b = &e->b[0];
    uint32_t n = b->len - b->head;
    struct event *v = b->ev + b->head;
    if (n < 2)
        return;
    if (n <= 16) {
        insertion_sort(v, n);
        return;
    }
    if (e->scratch_cap < n) {
        e->scratch_cap = n * 2;
        e->scratch = g_renew(uint8_t, e->scratch, (gsize)e->scratch_cap * (2 * sizeof(struct srec) + sizeof(struct event)));
    }
    struct srec *x = (struct srec *)e->scratch, *y = x + e->scratch_cap;
    struct event *tmp = (struct event *)(y + e->scratch_cap);
    uint64_t or_h = 0, and_h = ~0ull;
    uint32_t or_g = 0, and_g = ~0u;
    bool sorted = true;
    for (uint32_t i = 0; i < n; i++) {
        x[i] = (struct srec){ order_hi(&v[i]), v[i].origin, i };
        or_h |= x[i].hi;
        and_h &= x[i].hi;
        or_g |= v[i].origin;
        and_g &= v[i].origin;
        if (i && sorted && ev_before(&v[i], &v[i - 1]))
            sorted = false;
    }
    if (sorted)
        return;
    if (n <= SORT0_INSERTION_MAX) { /* stable: a record moves only past greater ones */
        for (uint32_t i = 1; i < n; i++) {
            struct srec r = x[i];
            uint32_t j = i;
            for (; j > 0 && (r.hi < x[j - 1].hi || (r.hi == x[j - 1].hi && r.origin < x[j - 1].origin)); j--)
                x[j] = x[j - 1];
            x[j] = r;
        }
    } else if (n <= 1024) {
        /* bottom-up merge sort of the records: stable, and without the radix passes' 256
         * counters, which cost more than the records below a thousand */
        for (uint32_t w = 1; w < n; w *= 2) {
            for (uint32_t lo = 0; lo < n; lo += 2 * w) {
                uint32_t mid = MIN(lo + w, n), hi = MIN(lo + 2 * w, n), i = lo, j = mid, k = lo;
                while (i < mid && j < hi)
                    y[k++] = (x[j].hi < x[i].hi || (x[j].hi == x[i].hi && x[j].origin < x[i].origin)) ? x[j++] : x[i++];
                while (i < mid)
                    y[k++] = x[i++];
                while (j < hi)
                    y[k++] = x[j++];
            }
            struct srec *t = x;
            x = y;
            y = t;
        }
    } else {
        radix_sort(x, y, n, or_h ^ and_h, or_g ^ and_g, &x);
    }
    for (uint32_t i = 0; i < n; i++)
        tmp[i] = v[x[i].idx];
    memcpy(v, tmp, (size_t)n * sizeof *v);
}

/* An event at time `last` scheduled while bucket 0 is being consumed: into its place in the
 * late list, a second sorted run beside bucket 0 that the run loop merges with it. Kept
 * apart because a batch can be huge (a million dependents learning of one completion at one
 * instant) and each of its events may schedule one for now: placed in bucket 0, every one
 * would move the rest of the batch. The late list holds only what is scheduled for now and
 * not yet run, a few events. */
static void insert0(struct engine *e, const struct event *ev)
{
    struct bucket *b = &e->late;
    bucket_push(b, ev); /* room at the end (this may move the live entries to the front) */
    uint32_t lo = b->head, hi = b->len - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ev_before(&b->ev[mid], ev))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < b->len - 1) {
        memmove(b->ev + lo + 1, b->ev + lo, (size_t)(b->len - 1 - lo) * sizeof *b->ev);
        b->ev[lo] = *ev;
    }
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


/* Files every pending event again relative to a new, earlier `last`. Needed only when an
 * event is scheduled after a run stopped: peeking at the next event (later than the stop
 * time) has already moved `last` past `now`. The new bucket 0 is sorted by key again. */
static void rebase(struct engine *e, simtime_t last)
{
    struct event *all = g_new(struct event, e->n ? e->n : 1);
    size_t k = 0;
    for (int i = 0; i <= ENGINE_BUCKETS; i++) {
        struct bucket *b = i < ENGINE_BUCKETS ? &e->b[i] : &e->late;
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
    sort0(e);
    g_free(all);
}

/* The turn of an origin at time t: 23 bits of splitmix64's finaliser over (origin, t), a
 * fresh random order of the origins at every instant (equal turns fall back to the
 * sequence, then the origin). */
static inline uint64_t turn_of(uint32_t origin, simtime_t t)
{
    uint64_t z = t * 0x9e3779b97f4a7c15ull ^ ((uint64_t)origin + 1) * 0xd6e8feb86659fd93ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (z ^ (z >> 31)) >> 41;
}

struct engine_key engine_stamp(struct engine *e, uint32_t owner, simtime_t t)
{
    /* the origin: the entity running now, or before the run the new event's owner */
    uint32_t origin = e->cur != ENGINE_NONE ? e->cur : owner;
    if (t < e->now)
        t = e->now; /* as engine_insert will */
    if (e->seq[origin] >> ENGINE_SEQ_BITS)
        g_error("entity %u scheduled 2^%d events", origin, ENGINE_SEQ_BITS);
    uint64_t k = (origin != owner ? ENGINE_KEY_REMOTE : 0) | turn_of(origin, t) << ENGINE_SEQ_BITS | e->seq[origin]++;
    return (struct engine_key){ k, origin };
}

void engine_insert(struct engine *e, simtime_t t, struct engine_key k, uint32_t owner, event_fn fn, void *ctx,
                   uint64_t arg)
{
    if (t < e->now)
        t = e->now; /* never schedule into the past */
    if (t < e->last)
        rebase(e, e->now);
    struct event ev = { t, k.key, fn, ctx, arg, owner, k.origin };
    int i = bucket_of(t, e->last);
    if (i) {
        bucket_push(&e->b[i], &ev);
        mark_nonempty(e, i);
    } else {
        insert0(e, &ev);
    }
    e->n++;
}

void engine_at_on(struct engine *e, simtime_t t, uint32_t owner, event_fn fn, void *ctx, uint64_t arg)
{
    struct engine_key k = engine_stamp(e, owner, t);
    if (e->grp && e->grp->worker_of[owner] != e->self) { /* another worker's entity */
        engine_group_send(e, t < e->now ? e->now : t, k, owner, fn, ctx, arg);
        return;
    }
    engine_insert(e, t, k, owner, fn, ctx, arg);
}

/* The smallest time in bucket i (non-empty, above 0). */
static simtime_t bucket_min(const struct engine *e, int i)
{
    const struct bucket *src = &e->b[i];
    simtime_t min = SIMTIME_NEVER;
    for (uint32_t k = src->head; k < src->len; k++)
        if (src->ev[k].time < min)
            min = src->ev[k].time;
    return min;
}

/* Makes bucket 0 non-empty: bucket i's minimum `min` becomes `last` and its entries move
 * down, in order. Precondition: bucket 0 empty, i the smallest non-empty bucket. */
static void refill(struct engine *e, int i, simtime_t min)
{
    struct bucket *src = &e->b[i];
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
    sort0(e);
}

/* The next event at or before `stop`, without removing it (*from: the bucket that holds it);
 * NULL when there is none. A later one is left where it is: `last` does not move past the
 * stop time, so events scheduled between two runs (a parallel run's windows) need no rebase. */
static inline const struct event *peek(struct engine *e, simtime_t stop, struct bucket **from)
{
    if (e->n == 0)
        return NULL;
    struct bucket *b0 = &e->b[0], *late = &e->late;
    if (late->head < late->len) { /* at time `last`, like bucket 0's */
        if (b0->head == b0->len || ev_before(&late->ev[late->head], &b0->ev[b0->head])) {
            *from = late;
            return late->ev[late->head].time <= stop ? &late->ev[late->head] : NULL;
        }
    } else if (late->len) {
        late->head = late->len = 0;
    }
    if (b0->head == b0->len) {
        b0->head = b0->len = 0;
        int i = first_nonempty(e);
        simtime_t min = bucket_min(e, i);
        if (min > stop)
            return NULL;
        refill(e, i, min);
    }
    *from = b0;
    return b0->ev[b0->head].time <= stop ? &b0->ev[b0->head] : NULL;
}

simtime_t engine_next_time(struct engine *e)
{
    if (e->n == 0)
        return SIMTIME_NEVER;
    if (e->late.head < e->late.len)
        return e->late.ev[e->late.head].time;
    struct bucket *b0 = &e->b[0];
    if (b0->head < b0->len)
        return b0->ev[b0->head].time;
    return bucket_min(e, first_nonempty(e));
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
    struct engine *outer = running;
    running = e;
    e->wall_start = engine_wall_seconds();
    double last_wall = e->wall_start;
    uint64_t last_events = e->events;
    bool shown = false;
    const struct event *top;
    struct bucket *from;
    /* e->stop, not `stop`: an event may bring the end forward (net.c: the last transfer) */
    while (!e->halted && (top = peek(e, e->stop, &from))) {
        struct event ev = *top;
        from->head++;
        e->n--;
        e->now = ev.time;
        e->cur = ev.owner;
        if (e->prefetch && from->head < from->len)
            e->prefetch(e->prefetch_ctx, &from->ev[from->head],
                        from->head + 1 < from->len ? &from->ev[from->head + 1] : NULL);
        ev.fn(ev.ctx, ev.arg);
        e->cur = ENGINE_NONE;
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
    running = outer;
    if (shown)
        fprintf(stderr, "\r%72s\r", "");
}

void engine_halt(struct engine *e) { e->halted = true; }

void engine_set_prefetch(struct engine *e, void (*fn)(void *ctx, const struct event *next, const struct event *after),
                         void *ctx)
{
    e->prefetch = fn;
    e->prefetch_ctx = ctx;
}

/* Stale heap entries (moved or cancelled timers) are skipped here; they are not counted as
 * events because nothing happened. */
static void timer_fire(void *ctx, uint64_t gen)
{
    struct timer *t = ctx;
    if (gen != t->gen) {
        running->events--;
        return;
    }
    t->when = SIMTIME_NEVER;
    t->fn(t->ctx, t->arg);
}

const struct timer *engine_event_timer(const struct event *ev)
{
    return ev->fn == timer_fire ? ev->ctx : NULL;
}

void timer_init_on(struct timer *t, struct engine *e, uint32_t owner, event_fn fn, void *ctx, uint64_t arg)
{
    *t = (struct timer){ 0, SIMTIME_NEVER, fn, ctx, arg, e, owner };
}

void timer_set(struct timer *t, simtime_t when)
{
    if (t->when == when)
        return;
    t->gen++;
    t->when = when;
    /* scheduled by the engine running now, which in a parallel run may be another worker's
     * than the one the timer was made with (it routes the event to the timer's owner) */
    engine_at_on(running ? running : t->eng, when, t->owner == ENGINE_NONE ? t->eng->entities : t->owner, timer_fire, t, t->gen);
}

void timer_lite_set(struct timer_lite *t, struct engine *e, simtime_t when, uint32_t owner, event_fn fn, void *ctx,
                    uint32_t index)
{
    if (t->when == when)
        return;
    t->gen++; /* 32 bits: a stale event would pass for the latest only if its timer were set
               * 2^32 times while it waited */
    t->when = when;
    engine_at_on(running ? running : e, when, owner, fn, ctx, (uint64_t)t->gen << 32 | index);
}

bool timer_lite_due(struct timer_lite *t, uint64_t arg)
{
    if ((uint32_t)(arg >> 32) != t->gen) {
        running->events--; /* moved since: nothing happens */
        return false;
    }
    t->when = SIMTIME_NEVER;
    return true;
}

void timer_set_stamped(struct timer *t, struct engine *e, simtime_t when, struct engine_key k)
{
    t->gen++;
    t->when = when;
    engine_insert(e, when, k, t->owner == ENGINE_NONE ? e->entities : t->owner, timer_fire, t, t->gen);
}

void engine_move_pending(struct engine *from, struct engine **to, const uint32_t *engine_of)
{
    for (int i = 0; i <= ENGINE_BUCKETS; i++) {
        struct bucket *b = i < ENGINE_BUCKETS ? &from->b[i] : &from->late;
        for (uint32_t j = b->head; j < b->len; j++) {
            const struct event *ev = &b->ev[j];
            if (!to[engine_of[ev->owner]])
                continue; /* another process's (an MPI run): it has its own copy */
            engine_insert(to[engine_of[ev->owner]], ev->time, (struct engine_key){ ev->key, ev->origin }, ev->owner,
                          ev->fn, ev->ctx, ev->arg);
        }
        b->head = b->len = 0;
    }
    for (int w = 0; w < 4; w++)
        from->nonempty[w] = 0;
    from->n = 0;
}

void timer_cancel(struct timer *t)
{
    if (t->when == SIMTIME_NEVER)
        return;
    t->gen++;
    t->when = SIMTIME_NEVER;
}
