/* Discrete-event engine: a 4-ary min-heap of inline events keyed by (time, insertion
 * sequence), so events at the same picosecond run in the order they were scheduled.
 * Timers are cancelled or moved lazily: a timer carries a generation number, and a heap
 * entry whose generation is stale is skipped when it comes up. */
#ifndef ROCESIM_ENGINE_H
#define ROCESIM_ENGINE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sim/simtime.h"

typedef void (*event_fn)(void *ctx, uint64_t arg);

struct event {
    simtime_t time;
    uint64_t seq;
    event_fn fn;
    void *ctx;
    uint64_t arg;
};

struct engine {
    struct event *heap;
    size_t n, cap;
    uint64_t seq;
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

/* fn(ctx, arg) runs when the timer fires. */
void timer_init(struct timer *t, struct engine *e, event_fn fn, void *ctx, uint64_t arg);
/* Arms (or moves) the timer to fire at time `when`. */
void timer_set(struct timer *t, simtime_t when);
void timer_cancel(struct timer *t);
static inline bool timer_armed(const struct timer *t) { return t->when != SIMTIME_NEVER; }

#endif
