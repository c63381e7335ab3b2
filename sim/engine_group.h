/* A parallel run: several engines, one per worker thread, each running the events of the
 * entities given to it, plus one for the global entity, with conservative synchronisation in
 * windows (DESIGN.md; Chandy-Misra-Bryant lookahead, here by barriers instead of null
 * messages). A window runs the events of times [t0, e] on every worker at once, t0 the
 * earliest pending and e = t0 + quantum - 1: an event a worker makes for another worker's
 * entity must be at least `quantum` after the event making it (the caller's lookahead: the
 * shortest delay between entities of different workers), so it is later than e. It waits in
 * an outbox and goes into its engine, with the key it was stamped with, after the window.
 * The global entity's events run alone, between windows: a window ends at the next of them,
 * and they see every entity's state as it is at their time, after all the entities' events
 * of that time, as they do in one engine. Since keys are stamped by origin (engine.h), every
 * engine runs its entities' events in the order one engine would: the results do not depend
 * on the number of workers nor on which entities share one. */
#ifndef ROCESIM_ENGINE_GROUP_H
#define ROCESIM_ENGINE_GROUP_H
#include <glib.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include "sim/engine.h"

/* events made by one engine for another during a window */
struct engine_outbox {
    struct event *ev;
    uint32_t len, cap;
};

struct engine_group {
    uint32_t workers;          /* node workers; engine `workers` is the global entity's */
    struct engine **eng;       /* workers + 1 */
    const uint32_t *worker_of; /* per entity (entities + 1, the global one last): its engine */
    simtime_t quantum;         /* window length: at most the smallest cross-worker delay */
    /* Called on the first thread between windows, before the global entity's events of time
     * `end` run (the last window ended at `end`): the caller merges what its workers
     * gathered. It may lower *stop. */
    void (*between)(void *ctx, simtime_t end, simtime_t *stop);
    /* Called on each worker's thread before it runs anything, with its index (the first
     * thread, which also runs the global entity, enters as `workers` around those events). */
    void (*enter)(void *ctx, uint32_t worker);
    /* Called on each thread before it runs a window (the first thread also before the global
     * entity's turn, with `workers`): what it sent in the last window has been taken. */
    void (*begin)(void *ctx, uint32_t worker);
    /* Called on the receiving thread for each event engine `from` made for it, before it is
     * inserted: the caller may rewrite the event (take a payload it left aside into its own
     * memory, say). */
    void (*receive)(void *ctx, uint32_t from, struct event *ev);
    void *ctx;
    /* An MPI run (mpi true): this process is worker `rank` of `workers` ranks, each running
     * its engine eng[rank] and a copy of the global entity's, eng[workers], which every rank
     * runs alike (the other engines are NULL here). An event crosses processes as it is: its
     * handler is an index, the same on every rank (each registers the same ones in the same
     * order, building the same model); pack
     * adds to what goes to rank `dest` after the window's events, unpack takes it at the
     * receiver before those events are inserted. between is called on every rank (it may
     * use collectives). */
    bool mpi;
    uint32_t rank;
    void (*pack)(void *ctx, uint32_t dest, GByteArray *buf);
    void (*unpack)(void *ctx, uint32_t from, const guint8 *data, size_t len);
    volatile sig_atomic_t *interrupt; /* stop soon after it becomes nonzero */
    bool progress;             /* progress on stderr */
    double (*work_done)(void *ctx); /* optional, with ctx: see engine_set_work_done */
    uint64_t windows;          /* windows run (a figure for the summary) */
    double *busy_s;            /* per worker: wall seconds spent running its events */
    double serial_s;           /* wall seconds of the global entity's turns */
};

/* Sets up a group over engines eng[0..workers] (each already engine_init'ed with the same
 * entities) and entity -> engine map. */
void engine_group_init(struct engine_group *g, struct engine **eng, uint32_t workers, const uint32_t *worker_of,
                       simtime_t quantum);
/* The same for rank `rank` of an MPI run of `workers` ranks: eng[rank] and eng[workers] are
 * this process's engines, the others NULL. */
void engine_group_init_mpi(struct engine_group *g, struct engine **eng, uint32_t workers, uint32_t rank,
                           const uint32_t *worker_of, simtime_t quantum);
void engine_group_free(struct engine_group *g);
/* Runs every engine's events up to and including `stop` (or until the global entity halts
 * its engine, or none are left), `workers` threads at once. Returns the time of the last
 * event run. */
simtime_t engine_group_run(struct engine_group *g, simtime_t stop);
/* For engine.c: an event stamped by e for an entity of another engine. */
void engine_group_send(struct engine *e, simtime_t t, struct engine_key k, uint32_t owner, uint32_t h, uint64_t arg);

#endif
