/* Discrete-event engine: events run in (time, insertion order). The queue is a radix heap
 * (Ahuja et al.) with 4-bit digits: simulated time never goes backwards, so an event sits in
 * the bucket named by the highest hexadecimal digit in which its time differs from the last
 * time taken out, and by its own value of that digit. Buckets are FIFO arrays and refilling a
 * bucket keeps their order; equal times always share a bucket, so events at the same
 * picosecond run in the order they were scheduled without a sequence number. Push is O(1);
 * an event moves down at most 16 levels (a few in practice). Events are stored inline (no
 * allocation per event; bucket arrays grow geometrically). Timers are cancelled or moved
 * lazily: a timer carries a generation number, and an entry whose generation is stale is
 * skipped. */
#ifndef ROCESIM_ENGINE_H
#define ROCESIM_ENGINE_H
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sim/simtime.h"

typedef void (*event_fn)(void *ctx, uint64_t arg);

struct event {
    simtime_t time;
    event_fn fn;
    void *ctx;
    uint64_t arg;
};

struct bucket {
    struct event *ev;
    uint32_t head, len, cap;   /* FIFO: live entries are ev[head .. len) */
};

/* bucket 0: time == last; bucket 1 + 16 L + d: highest differing digit L, digit value d */
#define ENGINE_BUCKETS (1 + 16 * 16)

struct engine {
    struct bucket b[ENGINE_BUCKETS];
    uint64_t nonempty[4];      /* bit i-1 set: bucket i (1..256) has entries */
    simtime_t last;            /* the time of the last event taken out */
    size_t n;                  /* events pending */
    simtime_t now;
    simtime_t stop;          /* run no event later than this */
    uint64_t events;         /* events executed (stale timer entries not counted) */
    bool halted;             /* engine_halt() was called */
    bool progress;           /* print progress on stderr */
    volatile sig_atomic_t *interrupt; /* the run stops soon after *interrupt becomes nonzero */
    double wall_start;
};

struct timer {
    uint64_t gen;
    simtime_t when;          /* SIMTIME_NEVER when not armed */
    event_fn fn;
    void *ctx;
    uint64_t arg;
    struct engine *eng;
};

void engine_init(struct engine *e);
void engine_free(struct engine *e);
/* Schedules fn(ctx, arg) at time t (>= now). */
void engine_at(struct engine *e, simtime_t t, event_fn fn, void *ctx, uint64_t arg);
static inline void engine_after(struct engine *e, simtime_t dt, event_fn fn, void *ctx, uint64_t arg)
{
    engine_at(e, e->now + dt, fn, ctx, arg);
}
/* Runs events up to and including time `stop`, or until none are left or engine_halt(). */
void engine_run(struct engine *e, simtime_t stop);
void engine_halt(struct engine *e);
double engine_wall_seconds(void);
static inline size_t engine_pending(const struct engine *e) { return e->n; }

/* fn(ctx, arg) runs when the timer fires. */
void timer_init(struct timer *t, struct engine *e, event_fn fn, void *ctx, uint64_t arg);
/* Arms (or moves) the timer to fire at time `when`. */
void timer_set(struct timer *t, simtime_t when);
void timer_cancel(struct timer *t);
static inline bool timer_armed(const struct timer *t) { return t->when != SIMTIME_NEVER; }

#endif
