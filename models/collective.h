/* Collective builders: an NCCL-style collective -> transfers of the schedule DAG.
 *
 * One call appends one job: a start marker, then per iteration a begin marker, the data
 * transfers and an end marker; one sched_coll per iteration covers [begin, end].
 *
 * Time line of a job (markers are bytes == 0 transfers, see models/schedule.h):
 *   start marker     root at absolute `start`
 *   begin 0          after the start marker and every `after` transfer, + `compute`
 *   data of iter 0   roots of the iteration wait for begin 0 (delay 0)
 *   end 0            after every transfer of iteration 0 that nothing else waits for
 *   begin 1          after end 0, + `compute`  ... and so on.
 * So an iteration is a compute phase followed by the collective (a training step: forward and
 * backward produce the gradients, then they are reduced), every rank starts iteration i+1
 * `compute` after iteration i has finished on every rank, and with zero-time transfers the job
 * ends iterations * compute after it starts. A collective's measured time is end_i - begin_i.
 * Markers live on the job's first host (ranks[0]), round markers on the rank they describe.
 *
 * Sizes (`size` = S, as nccl-tests counts it, section 7.3 of the model reference):
 *   allreduce, broadcast, sendrecv: S = count * size, every byte of it is moved.
 *   allgather: S = N * sendcount * size (the gathered output); reducescatter: S = N * recvcount
 *   * size (the input); alltoall: S = N * count * size (one rank's send buffer, S/N to each
 *   peer). For these three S is rounded down to a multiple of N, as nccl-tests does
 *   (sendcount = count / nranks), and the rounded value is what sched_coll.bytes records.
 * Bytes are conserved exactly: uneven splits differ by at most one byte between pieces.
 *
 * Chunking: `chunk` is the size of one transfer (one RDMA message, one NCCL Simple-protocol
 * step of 512 KiB by default); no transfer is larger. Data is first split evenly over
 * `channels`, each channel being its own ring or tree on its own QPs.
 *
 * Ring (allreduce = reduce-scatter + all-gather, 2(N-1) steps; allgather and reducescatter
 * N-1 steps), following NCCL's runRing per channel: the channel's data is processed in loops
 * of N * RING_CHUNK_STEPS * chunk bytes (NCCL: N chunks of ALLREDUCE_CHUNKSTEPS steps); in a
 * loop every ring step moves one of the N segments on every edge, as k <= RING_CHUNK_STEPS
 * transfers ("slices"). Slice j of step s on edge r->r+1 waits for slice j of step s-1 on edge
 * r-1->r (the data it reduces or forwards), so slices pipeline through the ring; step 0 of the
 * next loop waits for the last slice of the loop's final step that rank r receives (NCCL's
 * kernel runs the loops one after the other and ends each with that receive).
 * Broadcast (ring): a chain from the root in ring order, chunk j forwarded as soon as it has
 * arrived.
 * Tree (allreduce): NCCL's double binary tree; channel c uses tree c % 2 (so `channels` must be
 * even), each tree gets half of the data; per chunk, an interior rank sends up once it has
 * received the chunk from its children, the root sends down once it has received from all of
 * its children, and an interior rank forwards down once the chunk came from its parent.
 * Halving-doubling (allreduce, N a power of two): log2 N rounds of recursive halving
 * (partner r ^ N/2, r ^ N/4, ... r ^ 1, each sending the half of its segment it gives away),
 * then log2 N rounds of recursive doubling in the reverse order.
 * Direct (alltoall): every rank sends S/N to each of the N-1 others, all at once.
 * Pairwise (alltoall): N-1 rounds, in round k rank r sends S/N to r+k mod N.
 * Round-based algorithms (halving-doubling, pairwise) start round k on a rank when that rank
 * has received all of round k-1 (a per-rank round marker, which also waits for the rank's
 * previous round marker so that a rank's rounds stay in order).
 * Sendrecv (direct): S from rank 0 to rank `peer`, chunked.
 *
 * In-flight bound: NCCL has NCCL_STEPS = 8 buffer slots per connection, so at most 8 steps in
 * flight. Here every transfer that is the k-th on its QP (in id order, within an iteration)
 * also depends on the (k-8)-th having finished, so at most 8 transfers of a QP are ready and
 * unfinished at any time. Transfers of a QP are added in program order and each one's
 * dependencies finish no earlier than its predecessor's, so a QP's transfers become ready in
 * id order (ties: by id) and the QP sends them in NCCL's order.
 *
 * QPs: every transfer of a job's channel c has qp = COLLECTIVE_QP(job, c), so (src, dst, qp)
 * is different per channel and per job. */
#ifndef ROCESIM_COLLECTIVE_H
#define ROCESIM_COLLECTIVE_H
#include <glib.h>
#include <stdint.h>
#include "models/schedule.h"
#include "sim/simtime.h"

#define COLLECTIVE_ERROR (collective_error_quark())
GQuark collective_error_quark(void);
enum { COLLECTIVE_ERROR_INVALID = 1 };

#define NCCL_STEPS 8                    /* buffer slots per connection: the in-flight bound */
#define NCCL_STEP_BYTES (512u * 1024u)  /* 4 MiB Simple buffer / NCCL_STEPS: default chunk */
#define RING_CHUNK_STEPS 4              /* NCCL ALLREDUCE_CHUNKSTEPS: slices per ring step */
#define COLLECTIVE_MAX_CHANNELS 64      /* NCCL MAXCHANNELS (32 in older versions) */
#define COLLECTIVE_DEFAULT_CHANNELS 2   /* see collective_spec_init */
#define COLLECTIVE_DEFAULT_PRIO 3       /* the usual lossless RoCE priority */
#define COLLECTIVE_TREE_ARITY 3         /* NCCL_MAX_TREE_ARITY: 2 in the binary tree + 1 in the server */
/* Refuse jobs that would need more transfers than this (about 50 GB of schedule). */
#define COLLECTIVE_MAX_TRANSFERS (1u << 30)

/* The QP tag of a job's channel. Same layout as models/workload.c's (workload index << 20) |
 * tag, so tags of different jobs never meet: jobs < 4096, channels < 2^20. */
#define COLLECTIVE_QP_JOB_SHIFT 20
#define COLLECTIVE_QP(job, channel) (((uint32_t)(job) << COLLECTIVE_QP_JOB_SHIFT) | (uint32_t)(channel))

enum collective_op {
    COLL_ALLREDUCE,
    COLL_ALLGATHER,
    COLL_REDUCESCATTER,
    COLL_BROADCAST,
    COLL_ALLTOALL,
    COLL_SENDRECV,
};

enum collective_algo {
    COLL_ALGO_RING,
    COLL_ALGO_TREE,
    COLL_ALGO_HALVING_DOUBLING,
    COLL_ALGO_DIRECT,
    COLL_ALGO_PAIRWISE,
};

struct collective_spec {
    const char *name;               /* workload name, used in the job and in error messages */
    enum collective_op op;
    enum collective_algo algorithm;
    const uint32_t *ranks;          /* host ids in ring order: ranks[i] is rank i */
    uint32_t nranks;
    uint64_t size;                  /* S in bytes, as nccl-tests counts it (see above) */
    uint64_t chunk;                 /* bytes per transfer, >= 1 */
    uint32_t channels;              /* parallel rings/trees, 1..COLLECTIVE_MAX_CHANNELS */
    uint32_t root;                  /* broadcast: rank index of the root */
    uint32_t peer;                  /* sendrecv: rank index of the receiver; rank 0 sends */
    uint32_t iterations;            /* >= 1 */
    simtime_t compute;              /* compute phase before every iteration */
    simtime_t start;                /* absolute time the job starts */
    uint8_t prio;                   /* 802.1p priority, 0..7 */
    const uint32_t *ring_order;     /* ring: per channel, the nranks rank indices in ring order
                                     * (channels x nranks), or NULL for 0..n-1 on every channel */
    const int *tree_parent;         /* tree: per channel, each rank's parent (-1: root) and up to */
    const int *tree_child;          /* COLLECTIVE_TREE_ARITY children (-1: none), or NULL for the
                                     * double binary tree (channels x nranks [x arity]) */
    const uint32_t *after;          /* transfers the first iteration waits for (may repeat) */
    uint32_t nafter;
};

/* Defaults: allreduce, ring, chunk = 512 KiB (one NCCL step), channels = 2 (NCCL's topology
 * search typically gives two channels per NIC for inter-node rings, and the double binary tree
 * needs one channel per tree), iterations 1, compute 0, start 0, root 0, peer 1, prio 3.
 * Pointers (name, ranks, after) are left NULL for the caller. */
/* The chunk NCCL would use for a tree AllReduce of `size` bytes (the default when a tree
 * workload does not set `chunk`). */
uint64_t collective_tree_chunk(uint64_t size, uint32_t channels, uint32_t nranks);
void collective_spec_init(struct collective_spec *spec);

/* Appends the job described by spec to s (see the top of this file). On error s is unchanged
 * and err says which key is wrong and why, prefixed with "[workload NAME]". The new job is the
 * last in s->jobs; schedule_job_sinks() gives what a later workload's `after` waits for. */
gboolean collective_build(struct schedule *s, const struct collective_spec *spec, GError **err);

/* Names as they appear in scenario files and in the schedule's job lines. */
const char *collective_op_name(enum collective_op op);
const char *collective_algo_name(enum collective_algo algo);
/* Parse a name; on failure err lists the accepted names. `key` names the scenario key. */
gboolean collective_op_parse(const char *s, const char *key, enum collective_op *op,
                             GError **err);
gboolean collective_algo_parse(const char *s, const char *key, enum collective_algo *algo,
                               GError **err);
/* What NCCL would use by default: ring, except alltoall and sendrecv (direct). */
enum collective_algo collective_default_algo(enum collective_op op);

/* NCCL's double binary tree (graph/trees.cc) over ranks 0..n-1: tree 0 is the in-order binary
 * tree rooted at 0, tree 1 its mirror n-1-r (n even) or its shift by one rank (n odd).
 * Gives rank's parent (-1 at the root) and up to two children (-1 where absent). */
void collective_dtree(uint32_t n, int tree, uint32_t rank, int *parent, int child[2]);

#endif
