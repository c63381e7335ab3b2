/* Discrete-event engine: events run in time order, ties broken as below. Two queues hold
 * the pending events. The near future (the next ENGINE_WHEEL_SLOTS slots of
 * 2^ENGINE_SLOT_BITS ps, about 4 us: a link's delay and a packet's serialisation) is a
 * timing wheel: an event is appended once to its slot's list of chunks, and when the wheel
 * reaches the slot its events are copied into one array (bucket 0), sorted (time, then the
 * order below) and run from there. Later events (timers) wait in a radix heap (Ahuja et al.)
 * with 4-bit digits: simulated time never goes backwards, so an event sits in the bucket
 * named by the highest hexadecimal digit in which its time differs from the last time taken
 * out, and by its own value of that digit; the heap hands its events over when the wheel
 * reaches their slot. The radix heap alone moved an event 3.2 times on bench/fabric.ini
 * (with as many reads to find each bucket's minimum); the wheel writes it once and copies it
 * once. No allocation per event (arrays and the chunk pool grow geometrically). Timers are
 * cancelled or moved lazily: a timer carries a generation number, and an entry whose
 * generation is stale is skipped.
 *
 * Equal times. Every event runs on an entity (its owner: a node of the fabric, or the
 * engine's global entity, numbered last) and was scheduled by one (its origin: the owner of
 * the event running then, or before the run the new event's own owner), which counts the
 * events it schedules (its sequence). At one time an owner runs its events:
 *   1. its own (origin = owner) before those others sent it: at a tie a port's departure
 *      comes before an arrival, which then sees the queue without the packet that left;
 *   2. then by the origins' turn at that time (a hash of origin and time), so simultaneous
 *      arrivals from different neighbours go in a fresh random order at every instant
 *      instead of the lowest-numbered node always first (a fixed order made symmetric HPCC
 *      flows unfair for 1.5 ms);
 *   3. then by the origin's sequence, so one origin's events keep their order (then by
 *      origin, where two turns are equal).
 * Owners run one after the other in number order (the global entity, which samples, last):
 * an owner's events at an instant cannot see another owner's, so this order changes nothing
 * but speed (each owner's state is touched together, in memory order). None of this depends
 * on how the other entities' events interleave, so it is the same whichever entities share a
 * worker: the partition-independent tie-break a parallel run (DESIGN.md: conservative
 * synchronisation, lookahead the smallest link delay between partitions) needs, used by the
 * sequential engine too. With one entity it is plain insertion order. */
#ifndef ROCESIM_ENGINE_H
#define ROCESIM_ENGINE_H
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sim/simtime.h"

typedef void (*event_fn)(void *ctx, uint64_t arg);

/* Where an event stands among those at its time on its owner: `key` is ENGINE_KEY_REMOTE
 * when origin != owner | the origin's turn at that time (23 bits of a hash of origin and
 * time; 0 for the owner's own events, which share one turn) << ENGINE_SEQ_BITS | the
 * origin's sequence number; then the origin. */
struct engine_key {
    uint64_t key;
    uint32_t origin;
};

/* 32 bytes, two to a cache line (an event is written into a wheel chunk, copied into the open
 * slot and once more when the slot is sorted; at 48 bytes, padding it to 64 cost 5-10 %,
 * docs/performance-history.md). What it runs is a handler: a (function, context) pair in the
 * engine's table (struct engine_handlers), named by the index in origin_h's top bits. */
struct event {
    simtime_t time;
    uint64_t key;
    uint64_t arg;
    uint32_t owner;            /* the entity the event runs on */
    uint32_t origin_h;         /* the entity that scheduled it | the handler << ENGINE_ORIGIN_BITS */
};
_Static_assert(sizeof(struct event) == 32, "an event is half a cache line");

#define ENGINE_SEQ_BITS 40
#define ENGINE_ORIGIN_BITS 24
#define ENGINE_MAX_ENTITIES (1u << ENGINE_ORIGIN_BITS) /* the global entity included */
#define ENGINE_MAX_HANDLERS (1u << (32 - ENGINE_ORIGIN_BITS))
#define ENGINE_KEY_REMOTE (1ull << 63) /* set when origin != owner */

static inline uint32_t event_origin(const struct event *ev) { return ev->origin_h & (ENGINE_MAX_ENTITIES - 1); }
static inline uint32_t event_handler(const struct event *ev) { return ev->origin_h >> ENGINE_ORIGIN_BITS; }

/* The handlers events run, registered once (engine_handler) and shared by the engines of a
 * parallel run (engine_move_pending), so that an event keeps its meaning wherever it goes: in
 * an MPI run every rank builds the same model and so registers the same handlers in the same
 * order. Handler 0 fires struct timers: its events' argument is the timer's generation << 32 |
 * its index in `timers`. */
struct engine_handler {
    event_fn fn;
    void *ctx;
};
struct engine_handlers {
    struct engine_handler h[ENGINE_MAX_HANDLERS];
    uint32_t n;
    uint32_t refs;             /* engines sharing it */
    bool frozen;               /* a group is running: no registration (threads read it) */
    struct timer **timers;
    uint32_t ntimers, timers_cap;
} __attribute__((aligned(64))); /* lines of its own: every worker reads it for every event, and
                                  * a neighbour's writes on its lines would bounce them */

struct bucket {
    struct event *ev;
    uint32_t head, len, cap;   /* live entries are ev[head .. len) */
};

/* The radix heap's buckets: 1 + 16 L + d holds highest differing digit L, digit value d
 * (bucket 0 holds the wheel's open slot instead) */
#define ENGINE_BUCKETS (1 + 16 * 16)
/* The wheel: slots of 2^10 ps (bench/fabric.ini has about two events a nanosecond), 4096 of
 * them (a horizon of 4.2 us) */
#define ENGINE_SLOT_BITS 10
#define ENGINE_WHEEL_SLOTS 4096u
#define ENGINE_CHUNK 7         /* events in a chunk of a slot's list: 256 bytes */

/* A wheel slot's events are a list of chunks: an insert appends to the last chunk (its line
 * stays in the cache while the slot fills), taking the slot reads each chunk's lines in
 * order, and chunks come from one pool, so memory follows the events pending, not the
 * slots' peaks. */
struct wheel_chunk {
    struct event ev[ENGINE_CHUNK]; /* full but in a slot's last chunk (wheel_slot.len) */
    uint32_t next;             /* the slot's next chunk, or ENGINE_NONE */
    uint32_t next2;            /* the one after next: taking a slot loads two ahead */
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct wheel_chunk) == 256, "a chunk is four cache lines");

struct wheel_slot {
    uint32_t head, tail;       /* chunks; head ENGINE_NONE when the slot is empty */
    uint32_t before_tail;      /* the chunk whose next is tail, or ENGINE_NONE */
    uint32_t len;              /* events in the tail chunk: kept here, an insert reads no
                                * chunk line (the tail was written up to a link's delay ago,
                                * out of the caches on a large fabric) */
};

struct engine {
    /* b[0]: the open slot's events, sorted by time and order, consumed from its head (one
     * array for every slot, so it stays in the cache); b[1..]: the radix heap of the events
     * beyond the wheel */
    struct bucket b[ENGINE_BUCKETS];
    struct bucket late;        /* events of the open slot (or earlier) scheduled after it was
                                * sorted, in order: the run loop merges them with it */
    uint64_t nonempty[4];      /* bit i-1 set: bucket i (1..256) has entries */
    simtime_t last;            /* the radix heap's last time taken out */
    simtime_t far_min;         /* the radix heap's smallest time (SIMTIME_NEVER: empty) */
    size_t far_n;              /* events in the radix heap */
    uint64_t wheel_from;       /* the wheel holds slots wheel_from .. + ENGINE_WHEEL_SLOTS - 1
                                * (a slot: time >> ENGINE_SLOT_BITS); those before are open or done */
    struct wheel_slot *slot;   /* ENGINE_WHEEL_SLOTS, by slot number modulo their count */
    struct wheel_chunk *chunks; /* the pool: chunk_used of chunk_cap made */
    uint32_t *chunk_free;      /* a stack of free chunks (an array: popping reads no chunk) */
    uint32_t chunk_used, chunk_cap, nfree;
    uint64_t slot_bits[ENGINE_WHEEL_SLOTS / 64]; /* bit set: that slot has events */
    uint64_t slot_words;       /* bit w set: slot_bits[w] is not zero */
    size_t n;                  /* events pending */
    simtime_t now;
    simtime_t stop;          /* run no event later than this */
    uint64_t events;         /* events executed (stale timer entries not counted) */
    bool halted;             /* engine_halt() was called */
    bool progress;           /* print progress on stderr */
    volatile sig_atomic_t *interrupt; /* the run stops soon after *interrupt becomes nonzero */
    double wall_start;
    uint64_t *seq;             /* per entity: events it scheduled */
    uint32_t entities;         /* model entities 0 .. entities-1; `entities` is the global one */
    uint32_t cur;              /* owner of the event running, or ENGINE_NONE between events */
    struct engine_handlers *hs; /* what events run (shared in a parallel run) */
    uint8_t *scratch;          /* sorting a slot's events */
    uint32_t scratch_cap;      /* events it has room for */
    struct event *spare;       /* a sorted slot's events are gathered here, then swapped in */
    uint32_t spare_cap;
    /* a parallel run (sim/engine_group.h): the group, this engine's place in it, and the
     * events for other engines made during the current window, one array per engine */
    struct engine_group *grp;
    uint32_t self;
    struct engine_outbox *out;
    /* optional: warms the caches for the events that run next (engine_set_prefetch) */
    void (*prefetch)(void *ctx, const struct event *up, uint32_t count);
    void *prefetch_ctx;
    /* optional: the model's share of its work done, for the progress line (sim/progress.h) */
    double (*work_done)(void *ctx);
    void *work_ctx;
} __attribute__((aligned(64))); /* an engine's lines are its own: each event writes `now`, `cur`
                                 * and bucket 0's head, and a parallel run's engines run on
                                 * different cores (allocate with g_aligned_alloc0) */

#define ENGINE_NONE UINT32_MAX

struct timer {
    simtime_t when;          /* SIMTIME_NEVER when not armed */
    uint32_t gen;            /* 32 bits: a stale event passes for the latest only if the timer
                              * was set 2^32 times while it waited */
    uint32_t index;          /* in the engine's handlers' `timers` */
    event_fn fn;
    void *ctx;
    uint64_t arg;
    struct engine *eng;
    uint32_t owner;          /* the entity it fires on (ENGINE_NONE: the global one) */
};

void engine_init(struct engine *e);
void engine_free(struct engine *e);
/* Declares model entities 0 .. n-1 (before any event is scheduled); the global entity is
 * then n. Without it there is only the global entity. */
void engine_set_entities(struct engine *e, uint32_t n);
static inline uint32_t engine_global(const struct engine *e) { return e->entities; }
/* The index of handler (fn, ctx), registered if it is new (a linear search: hot paths keep
 * the index). Not while a parallel run runs: register before. */
uint32_t engine_handler(struct engine *e, event_fn fn, void *ctx);
/* Schedules handler h's fn(ctx, arg) at time t (>= now), to run on entity `owner`. */
void engine_at_h(struct engine *e, simtime_t t, uint32_t owner, uint32_t h, uint64_t arg);
/* The same for (fn, ctx), found or registered through engine_handler. */
static inline void engine_at_on(struct engine *e, simtime_t t, uint32_t owner, event_fn fn, void *ctx, uint64_t arg)
{
    engine_at_h(e, t, owner, engine_handler(e, fn, ctx), arg);
}
/* The key the next event scheduled now for `owner` at time t gets (and counts it). With
 * engine_insert, an event made by one engine and run by another (a parallel run's
 * cross-partition event) keeps the key it would have had in a sequential run. */
struct engine_key engine_stamp(struct engine *e, uint32_t owner, simtime_t t);
void engine_insert_h(struct engine *e, simtime_t t, struct engine_key k, uint32_t owner, uint32_t h, uint64_t arg);
/* An event made by another engine (or moved from one), inserted as it is: key, origin and
 * handler kept. */
void engine_insert_event(struct engine *e, const struct event *ev);
static inline void engine_insert(struct engine *e, simtime_t t, struct engine_key k, uint32_t owner, event_fn fn,
                                 void *ctx, uint64_t arg)
{
    engine_insert_h(e, t, k, owner, engine_handler(e, fn, ctx), arg);
}
/* The same on the entity of the event running now (the global entity before the run). */
static inline void engine_at(struct engine *e, simtime_t t, event_fn fn, void *ctx, uint64_t arg)
{
    engine_at_on(e, t, e->cur == ENGINE_NONE ? e->entities : e->cur, fn, ctx, arg);
}
static inline void engine_after(struct engine *e, simtime_t dt, event_fn fn, void *ctx, uint64_t arg)
{
    engine_at(e, e->now + dt, fn, ctx, arg);
}
/* Runs events up to and including time `stop`, or until none are left or engine_halt(). */
void engine_run(struct engine *e, simtime_t stop);
void engine_halt(struct engine *e);
/* A hook the engine calls before each event with the events that run after it, when they
 * are already known (the rest of the same slot's batch): up[0] runs after the current one,
 * up[1] after up[0] and so on, `count` of them (1 to ENGINE_PREFETCH_DEPTH). It must not
 * change what any event does (it may keep what it computed for an event, for that event's
 * handler to take instead of computing it again): on a large fabric an event's state (its
 * packet, port, QP) is usually out of the caches and reached through a chain of loads, so
 * the hook starts each event's chain a few events ahead, up to ENGINE_PREFETCH_DEPTH.
 * Results do not depend on it. */
#define ENGINE_PREFETCH_DEPTH 7
void engine_set_prefetch(struct engine *e, void (*fn)(void *ctx, const struct event *up, uint32_t count), void *ctx);
/* The share of the model's work done (0..1, negative when it cannot tell), which the
 * progress line shows with the time left; called at most every quarter of a second. */
void engine_set_work_done(struct engine *e, double (*fn)(void *ctx), void *ctx);
/* For a prefetch hook: the timer an event fires, or NULL when it is not a timer's. */
static inline const struct timer *engine_event_timer(const struct engine *e, const struct event *ev)
{
    return event_handler(ev) == 0 ? e->hs->timers[(uint32_t)ev->arg] : NULL;
}
/* The time of the next pending event, SIMTIME_NEVER when none (nothing is taken out). */
simtime_t engine_next_time(struct engine *e);
/* The engine running an event on this thread now, or NULL between runs. */
struct engine *engine_running(void);
double engine_wall_seconds(void);
static inline size_t engine_pending(const struct engine *e) { return e->n; }

/* fn(ctx, arg) runs on entity `owner` when the timer fires. */
void timer_init_on(struct timer *t, struct engine *e, uint32_t owner, event_fn fn, void *ctx, uint64_t arg);
/* A timer of the global entity. */
static inline void timer_init(struct timer *t, struct engine *e, event_fn fn, void *ctx, uint64_t arg)
{
    timer_init_on(t, e, ENGINE_NONE, fn, ctx, arg);
}
/* Arms (or moves) the timer to fire at time `when`. */
void timer_set(struct timer *t, simtime_t when);
void timer_cancel(struct timer *t);
/* Arms the timer with a key stamped earlier (engine_stamp), on engine e. */
void timer_set_stamped(struct timer *t, struct engine *e, simtime_t when, struct engine_key k);
/* Moves every pending event of `from` (before it ran) to to[engine_of[owner]], keys kept
 * (dropped where that is NULL); copy the sequence counters (seq) too, so that keys go on
 * where they were. */
void engine_move_pending(struct engine *from, struct engine **to, const uint32_t *engine_of);
static inline bool timer_armed(const struct timer *t) { return t->when != SIMTIME_NEVER; }

/* A timer of 12 bytes, for state there are millions of (a QP's retransmission timer: a
 * struct timer is 56 bytes, 40 of them the same in every QP). Its handler, context and
 * owner come with each set instead of living in it; the event's argument carries the index
 * the handler finds the timer by, and the handler first asks timer_lite_due whether the
 * event is the timer's latest (as timer_fire does for a struct timer: a stale one is not
 * counted as an event). The same calls as a struct timer's make the same events, in the
 * same order. */
struct timer_lite {
    simtime_t when;            /* SIMTIME_NEVER when not armed */
    uint32_t gen;
} __attribute__((packed, aligned(4))); /* 12 bytes: a field of 4 can follow without a hole */
static inline void timer_lite_init(struct timer_lite *t)
{
    t->when = SIMTIME_NEVER;
    t->gen = 0;
}
static inline bool timer_lite_armed(const struct timer_lite *t) { return t->when != SIMTIME_NEVER; }
/* Arms (or moves) it to fire handler h's fn(ctx, arg) at `when` on entity `owner`, scheduled
 * by the engine running now (e before the run); timer_lite_index(arg) is `index`. */
void timer_lite_set_h(struct timer_lite *t, struct engine *e, simtime_t when, uint32_t owner, uint32_t h,
                      uint32_t index);
static inline void timer_lite_set(struct timer_lite *t, struct engine *e, simtime_t when, uint32_t owner, event_fn fn,
                                  void *ctx, uint32_t index)
{
    timer_lite_set_h(t, e, when, owner, engine_handler(e, fn, ctx), index);
}
/* In the handler, first: whether the event is t's latest (then t is disarmed). */
bool timer_lite_due(struct timer_lite *t, uint64_t arg);
static inline uint32_t timer_lite_index(uint64_t arg) { return (uint32_t)arg; }

#endif
