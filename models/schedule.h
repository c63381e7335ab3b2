/* The transfer DAG: the contract between workload generators, the simulated NIC and replay.
 *
 * A transfer is one RDMA message from src to dst. It becomes ready when every transfer it
 * depends on has finished; it starts `delay` after that (for a root, `delay` is its absolute
 * start time). It finishes when its last byte has been delivered in order at dst.
 * A transfer with bytes == 0 is a marker: it sends nothing and finishes at its start time.
 * Markers model compute phases and barriers (e.g. "rank r computes for 2 ms after its last
 * receive of iteration i").
 * Transfers with the same (src, dst, qp) share one queue pair: they are sent in the order
 * they become ready, on one UDP source port (hence one ECMP path).
 */
#ifndef ROCESIM_SCHEDULE_H
#define ROCESIM_SCHEDULE_H
#include <glib.h>
#include <stdint.h>
#include "sim/simtime.h"

#define SCHEDULE_NO_JOB UINT32_MAX

struct transfer {
    uint32_t src, dst;      /* host indices */
    uint64_t bytes;         /* message size; 0 = marker */
    uint8_t  prio;          /* 802.1p priority of the data */
    uint32_t qp;            /* QP tag, see above */
    uint32_t deps_off;      /* first dependency in schedule.deps */
    uint32_t ndeps;
    simtime_t delay;        /* after the last dependency finishes; absolute start for roots */
    uint32_t job;           /* index into schedule.jobs, or SCHEDULE_NO_JOB */
    uint32_t coll;          /* index into schedule.colls, or SCHEDULE_NO_JOB */
    uint16_t channel;       /* NCCL channel (informational; QP separation is by `qp`) */
};

/* One job (a [workload NAME] section). */
struct sched_job {
    char *name;             /* workload name */
    char *op;               /* "incast", "permutation", "flows", "allreduce", ... */
    char *algorithm;        /* "ring", "tree", ... or "" */
    uint32_t ranks;         /* number of participating hosts */
};

/* One collective instance: a job's iteration. Its transfers are [first, first+count). */
struct sched_coll {
    uint32_t job;
    uint32_t iteration;
    uint64_t bytes;         /* size as nccl-tests counts it */
    uint32_t first, count;
};

/* The largest transfer: 16 TiB keeps byte, packet and wire-time arithmetic far from
 * overflow (2^44 B x 8 x 10^12 ps at 1 Gb/s is still exact in 128 bits and ~4.5 years). */
#define SCHEDULE_MAX_TRANSFER_BYTES (1ull << 44)

struct schedule {
    GArray *transfers;      /* struct transfer */
    GArray *deps;           /* uint32_t transfer ids */
    GArray *jobs;           /* struct sched_job */
    GArray *colls;          /* struct sched_coll */
};

struct schedule *schedule_new(void);
void schedule_free(struct schedule *s);
/* Appends a job and returns its index. Strings are copied. */
uint32_t schedule_add_job(struct schedule *s, const char *name, const char *op,
                          const char *algorithm, uint32_t ranks);
/* Appends a transfer with the given dependencies and returns its id. */
uint32_t schedule_add(struct schedule *s, const struct transfer *t,
                      const uint32_t *deps, uint32_t ndeps);
static inline struct transfer *schedule_get(const struct schedule *s, uint32_t id)
{
    return &g_array_index(s->transfers, struct transfer, id);
}
static inline uint32_t schedule_count(const struct schedule *s) { return s->transfers->len; }
/* The transfers of job `job` that no other transfer of that job waits for, in id order: what a
 * workload declared `after` this job must wait for (for a collective job, the end marker of
 * its last iteration). Caller frees the array (uint32_t ids). */
GArray *schedule_job_sinks(const struct schedule *s, uint32_t job);
static inline const uint32_t *schedule_deps(const struct schedule *s, const struct transfer *t)
{
    /* no pointer arithmetic on the empty array's NULL data (undefined, even + 0) */
    return t->ndeps ? &g_array_index(s->deps, uint32_t, t->deps_off) : NULL;
}

#endif
