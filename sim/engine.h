/* Discrete-event engine: events run in (time, insertion order). The queue is a radix heap
 * (Ahuja et al.): simulated time never goes backwards, so an event sits in the bucket of the
 * highest bit in which its time differs from the last time taken out; buckets are FIFO
 * arrays, and refilling a bucket keeps their order, so events at the same picosecond run in
 * the order they were scheduled without storing a sequence number. Push is O(1); each event
 * moves between buckets a few times at most. Events are stored inline (no allocation per
 * event; bucket arrays grow geometrically). Timers are cancelled or moved lazily: a timer
 * carries a generation number, and an entry whose generation is stale is skipped. */
#ifndef ROCESIM_ENGINE_H
#define ROCESIM_ENGINE_H
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

#define ENGINE_BUCKETS 65

struct engine {
    struct bucket b[ENGINE_BUCKETS];
    uint64_t nonempty;         /* bit i-1 set: bucket i (1..64) has entries */
    simtime_t last;            /* the time of the last event taken out */
    size_t n;                  /* events pending */
    simtime_t now;
    simtime_t stop;          /* run no event later than this */
    uint64_t events;         /* events executed (stale timer entries not counted) */
    bool halted;             /* engine_halt() was called */
    bool progress;           /* print progress on stderr */
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

void engine_init(struct engine *e, size_t initial_capacity);
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
