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
    char *defaults;         /* "key = value" lines of the keys the scenario left to their
                             * defaults, as the builder resolved them (rocesim check prints them) */
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

/* One queue pair: the identity both ends of a replay agree on, and the simulator's choice of
 * QP numbers and UDP source port (ECMP entropy) for it. QPs are numbered in the order their
 * first transfer with bytes > 0 appears; each host hands out QP numbers from 0x100 up, the
 * requester's first, as the simulated NIC does. */
struct sched_qp {
    uint32_t src, dst;
    uint8_t  prio;          /* every transfer on the QP has this priority */
    uint16_t sport;         /* UDP source port the simulator uses (0xC000..0xFFFF) */
    uint32_t lqpn, rqpn;    /* the simulator's QP numbers at src and dst */
};

/* What a schedule file says about the fabric it came from (v2 "meta" lines). */
struct sched_meta {
    gboolean present;       /* FALSE: a v1 file or an in-memory schedule without a scenario */
    uint32_t hosts;
    uint32_t mtu;           /* RoCE payload bytes per packet */
    uint64_t host_rate_bps;
    uint8_t  dscp[8];       /* DSCP of the data of each priority */
    char    *topology;      /* digest of the topology ("sha256:" + 64 hex digits) */
};

/* QP index of a marker (bytes == 0): it uses no QP. */
#define SCHEDULE_NO_QP UINT32_MAX

struct schedule {
    GArray *transfers;      /* struct transfer */
    GArray *deps;           /* uint32_t transfer ids */
    GArray *jobs;           /* struct sched_job */
    GArray *colls;          /* struct sched_coll */
    GArray *qps;            /* struct sched_qp, filled by schedule_derive_qps */
    struct sched_meta meta;
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
/* Feeds the schedule to a checksum field by field (struct transfer has padding): its
 * transfers, dependencies and jobs, so that two processes that each read a schedule can tell
 * whether they read the same one (an MPI run's ranks, a replay's). */
void schedule_checksum(GChecksum *c, const struct schedule *s);
/* Fills qps (struct sched_qp; usually s->qps) from the transfers' (src, dst, qp) groups and
 * returns, in qp_of (one entry per transfer, caller frees; may be NULL), each transfer's QP
 * index or SCHEDULE_NO_QP for markers. FALSE with *err when two transfers of one QP have
 * different priorities (a QP has one service level), naming both; *bad (may be NULL) is then
 * the later transfer. */
gboolean schedule_derive_qps(const struct schedule *s, GArray *qps, uint32_t **qp_of, uint32_t *bad,
                             GError **err);
/* Gives every QP of qps its QP numbers at both ends as the simulator does (each host counts
 * from 0x100 in QP order, the requester's end first): a v2 file's qp lines carry the ports,
 * the numbers follow from the order. */
void schedule_number_qps(GArray *qps);
/* The mlx5 flow label that makes the NIC send on UDP source port `sport` (0xC000..0xFFFF):
 * mlx5 computes sport = 0xC000 | (fl[13:0] ^ fl[19:14]), and a label of 0 means "hash the QP
 * numbers", so 0xC000 is reached with fl = 0x4001 instead. */
uint32_t roce_flow_label_for_sport(uint16_t sport);
/* What mlx5 does with a flow label (the inverse of the above for labels != 0). */
uint16_t roce_sport_of_flow_label(uint32_t fl);
static inline const uint32_t *schedule_deps(const struct schedule *s, const struct transfer *t)
{
    /* no pointer arithmetic on the empty array's NULL data (undefined, even + 0) */
    return t->ndeps ? &g_array_index(s->deps, uint32_t, t->deps_off) : NULL;
}

#endif
