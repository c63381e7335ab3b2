/* The simulated fabric at run time: ports with their queues, switches, NICs, QPs and
 * transfers, all in flat arrays indexed by small integers. Built once from the scenario,
 * topology and schedule; nothing is allocated while packets move (the packet pool and the
 * event heap grow geometrically if they must). */
#ifndef ROCESIM_NET_H
#define ROCESIM_NET_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "models/cc.h"
#include "models/cc_dcqcn.h"
#include "models/mmu.h"
#include "models/packet.h"
#include "models/schedule.h"
#include "models/topology.h"
#include "sim/engine.h"
#include "sim/rng.h"
#include "models/scenario.h"

#define NPRIO 8
#define NONE32 UINT32_MAX

/* A FIFO of packets linked through packet.next. 16 bytes: the eight of a port share two
 * cache lines (switch buffers are limited to 4 GiB, so 32-bit byte counts suffice). */
struct pktq {
    uint32_t head, tail;
    uint32_t pkts;
    uint32_t bytes;            /* frame bytes (buffer occupancy) */
};

/* Time-weighted histogram of a port's queue depth (1/8-octave bins) for percentiles. */
#define QHIST_BINS 256
struct qhist {
    simtime_t weight[QHIST_BINS];
};

struct net;

/* One priority's per-packet state at a port: its egress queue and DWRR deficit (the port as
 * sender) and its ingress accounting (the port as receiver). 32 bytes, two to a cache line: a
 * switch hop touches one of them at each of its two ports, where the three arrays apart were
 * two to three lines each (bench/large.ini, 2026-12-05: see the README's performance notes). */
struct port_prio {
    struct pktq q;
    int32_t deficit;           /* DWRR */
    struct mmu_ingress in;     /* ingress (port, priority) buffer use (switch ports) */
};
_Static_assert(sizeof(struct port_prio) == 32, "struct port_prio is half a cache line");

/* Fields are ordered by how often the packet path touches them, in whole cache lines (the
 * struct is line-aligned): line 0 every packet at both ends (an arrival reads nothing else of
 * its receiving port but the priority's accounting), line 1 the sender's: its timer, clock and
 * counters; then the eight priorities; the rest is read per packet only with PFC frames,
 * watchdog drops or ECN marks. On bench/scale.ini a switch hop read seven lines of its two
 * ports, five since 2026-12-06 (the timer in the sender's line as a timer_lite, whose event
 * names the port: no `net` pointer or handler in the port). */
struct port_rt {
    /* line 0 */
    uint32_t node, local, peer;
    uint32_t peer_node;        /* the node at the far end: it owns this link's arrivals */
    bool is_host;
    bool down;                 /* link-down fault */
    bool dirty;                /* queue changed since the last sample */
    bool cnt_dirty;            /* ECN counter changed since the last counter sample */
    uint8_t paused;            /* PFC: priorities the peer asked this port not to send */
    uint8_t pfc_want;          /* PFC: priorities this port asks its peer to pause (XOFF) */
    uint8_t pfc_pending;       /* classes to signal in the next PFC frame */
    uint8_t wd_active;         /* watchdog: priorities whose PFC is ignored and queue dropped */
    uint8_t rr;                /* DWRR: the data priority whose turn it is */
    bool rr_granted;           /* DWRR: it has had its quantum for this turn */
    uint8_t qmask;             /* egress queues holding packets (bit q: pp[q].q.pkts > 0) */
    uint32_t qbytes;           /* bytes in all egress queues: choosing a queue and sampling
                                * read this line, not the queues' (port_q_push, _pop) */
    void *tap;                 /* packet capture on this port (both directions), or NULL */
    struct mmu_port mmu;       /* ingress buffer settings and XOFF state (switch ports) */
    /* line 1 */
    struct timer_lite txt;     /* fires port_tx_ready when the port can send again */
    uint64_t ps_per_byte;      /* serialisation time of a byte when exact, else 0 */
    simtime_t busy_until;      /* end of the current transmission */
    simtime_t delay;
    uint64_t tx_bytes, tx_packets; /* frames sent (the wire's bytes: port_tx_wire_bytes) */
    uint64_t max_q;            /* max total egress occupancy seen */
    /* lines 2-5 */
    struct port_prio pp[NPRIO];
    uint64_t ecn_marked;

    struct net *net;           /* owner, for the PFC timers' handlers */
    uint64_t rate;             /* bits/s: serialisation reads it only when ps_per_byte is 0 */

    /* PFC, transmitter side */
    simtime_t pause_until[NPRIO];
    simtime_t paused_since[NPRIO];
    struct timer pfc_expire;   /* earliest pause_until */
    /* PFC, receiver side */
    simtime_t xoff_since[NPRIO];
    struct timer pfc_refresh;  /* re-sends XOFF before the peer's timer runs out */
    /* PFC watchdog (switch egress queues) */
    simtime_t wd_until[NPRIO];
    struct timer wd_timer;
    uint64_t wd_storms, wd_drops;
    /* PFC counters, mlx5 names: rx/tx_prioN_pause (frames), *_duration */
    uint64_t rx_pause[NPRIO], tx_pause[NPRIO];
    simtime_t rx_pause_dur[NPRIO], tx_pause_dur[NPRIO];
    /* statistics and sampling */
    uint64_t ecn_sampled;
    uint64_t drops[NPRIO];
    uint64_t q_sampled;        /* total occupancy at the last sample */
    simtime_t q_sampled_at;
    uint32_t q_sampled_prio[NPRIO];
    uint8_t q_sampled_mask;    /* queues sampled non-empty (q_sampled_prio[q] > 0) */
    struct qhist *hist;        /* switch ports only */
} __attribute__((aligned(64)));
_Static_assert(offsetof(struct port_rt, mmu) + sizeof(struct mmu_port) <= 64 &&
                   offsetof(struct port_rt, txt) == 64 && offsetof(struct port_rt, max_q) + 8 <= 128 &&
                   offsetof(struct port_rt, pp) == 128,
               "struct port_rt's per-packet fields moved across cache lines");

/* Wire bytes sent: each frame's bytes and its preamble and gap (packet_wire_bytes). */
static inline uint64_t port_tx_wire_bytes(const struct port_rt *p)
{
    return p->tx_bytes + p->tx_packets * WIRE_EXTRA_BYTES;
}

/* The share of the link's capacity the port sent over `secs` (0 when secs is not positive). */
static inline double port_utilisation(const struct port_rt *p, double secs)
{
    return secs > 0 ? (double)port_tx_wire_bytes(p) * 8 / ((double)p->rate * secs) : 0;
}

/* A flowlet table entry: the egress its flow took and when the flow last passed. */
struct flowlet {
    simtime_t last;
    uint32_t key;              /* the flow's hash, to tell flows apart in a shared slot */
    uint16_t hop;              /* index into the route's next-hop list */
};
#define FLOWLET_SLOTS 4096u

struct switch_rt {
    uint32_t node;
    uint32_t hash_seed;
    struct rng rng;
    struct rng lb_rng;         /* spraying and flowlet picks (separate from ECN marking) */
    struct flowlet *flowlets;  /* FLOWLET_SLOTS entries, only with load_balance = flowlet */
    struct mmu mmu;
    uint64_t drops;
    bool no_ecn;               /* inside a server: NVLink and PCIe do not mark */
} __attribute__((aligned(64))); /* written per packet: neighbours may be on other cores */

enum qp_state { QP_IDLE = 0, QP_READY, QP_PACED, QP_PARKED };

/* A QP's requester, at its source: what a data packet sent, an ACK received or a CNP reads
 * and writes, in three cache lines. Every packet a NIC sends on a large fabric loads its QP
 * from memory (bench/large.ini: 1023 QPs a NIC, taken in turn), so what no packet needs lives
 * apart: the QP numbers in qp_resp, the last transfer and the last rate written in qp_rare,
 * the pacing slot in the pacing heap (nic.c pace_slot), the algorithm's settings and the line
 * rate in the port's cc_env. */
struct qp_rt {
    uint32_t src, dst;
    uint8_t prio;
    uint8_t state;
    uint16_t sport;
    uint32_t psn_end;          /* PSN after the last posted packet */
    uint32_t snd_nxt, snd_una, max_sent;
    uint32_t msg_head, cur_msg; /* transfer ids (linked through xfer_rt.next_on_qp) */
    /* cur_msg's first PSN, packets and last packet's payload (nic.c qp_set_cur): a data packet
     * reads them here, not from its transfer and the schedule, two cache misses per packet on a
     * large fabric */
    uint32_t cur_psn_first, cur_npkts, cur_last_payload;
    simtime_t last_tx;         /* when the last data packet started */
    uint32_t last_wire;        /* its wire bytes */
    bool sent_any;
    bool rate_dirty;           /* listed for the next rates.csv sample */
    bool rate_unsampled;       /* not among the sampled flows: its rate changes are not listed */
    bool rate_stale;           /* no rate written since the start or the last gap row: the next
                                * look lists it, changed or not (nic.c rate_check) */
    simtime_t last_progress;   /* last ACK progress (retransmission timeout) */
    struct timer_lite rto;     /* fires rto_fire (nic.c) on the source host */
    uint32_t next_ready;       /* link in the NIC's ready FIFO or parked list */
    struct cc_flow cc;
} __attribute__((aligned(64))); /* a QP's lines are its own: neighbours may run on other cores */
_Static_assert(offsetof(struct qp_rt, cc) == 88, "struct qp_rt's own fields grew");
_Static_assert(sizeof(struct qp_rt) == 192, "struct qp_rt grew past three cache lines");

/* What of a QP no packet reads (net.rare, beside net.qps): the sampling tick reads the rate it
 * last wrote, and posting a transfer or completing the last one the list's tail. */
struct qp_rare {
    double rate_logged;        /* -1: none yet; NAN: a gap row (nothing to send) */
    uint32_t msg_tail;
};

/* A QP's responder, at its destination (net.qresp, beside net.qps): the destination's events
 * write it on every packet and the source's write the requester on every packet, so the two
 * halves live apart (in a parallel run they are often on two cores; one cache line for both
 * moved between them at every packet). It repeats the identities an ACK carries. */
struct qp_resp {
    uint32_t src, dst;
    uint32_t lqpn, rqpn;
    uint16_t sport;
    bool nak_sent;
    bool ce_since_ack;         /* ECN-echo for the next ACK */
    uint32_t epsn;
    uint32_t unacked;
    uint32_t cnp_slot;         /* index into net.cnp_last: the CNP moderation scope it shares */
    simtime_t last_nak;
} __attribute__((aligned(64)));

/* Responder state of out-of-order placement ([nic] receiver = ooo-place), one per QP, kept
 * beside the QPs: the PSNs received past epsn, a ring of nbits bits (a power of two, allocated
 * at the first gap), and the oldest transfer not yet complete at the responder. */
struct ooo_rx {
    uint64_t *bits;
    uint32_t nbits;
    uint32_t rx_msg;
};

/* An entry of a NIC's pacing heap: a QP and when to look at it again (nic.c pace_slot). */
struct pace_ent {
    simtime_t at;
    uint32_t qp;
};

/* A host's NIC, in whole lines (line-aligned): line 0 what sending a packet reads (the
 * control queue, the ready FIFO's ends, the pacing heap's head, whether CC holds the link
 * idle) and what receiving one checks first; line 1 the ready FIFO's counts and the
 * counters a packet bumps at either end; the rest is read per packet only on pauses,
 * pacing wake-ups, faults and errors. On bench/scale.ini a packet read four or five of its
 * two hosts' lines; it reads these two at each end. */
struct host_rt {
    /* line 0 */
    uint32_t node, port;       /* node index, global port index */
    struct pktq ctrl;          /* ACK, NAK, CNP */
    uint32_t ready_head, ready_tail;
    struct pace_ent *heap;     /* pacing heap of QPs keyed by their wake time (nic.c) */
    uint32_t heap_n, heap_cap;
    /* the link idle while QPs with data wait for their pacing slot (held back by CC) */
    simtime_t cc_idle_since;   /* SIMTIME_NEVER when not in that state */
    bool stalled;
    bool cnt_dirty;            /* one of the sampled counters changed since the last sample */
    /* line 1 */
    uint32_t ready_n[NPRIO] __attribute__((aligned(64))); /* QPs in the ready FIFO, by priority */
    uint64_t rx_bytes;
    /* mlx5-named counters */
    uint64_t np_ecn_marked_roce_packets, np_cnp_sent, rp_cnp_handled;
    /* the rest */
    uint64_t out_of_sequence, packet_seq_err, local_ack_timeout_err, duplicate_request;
    uint64_t retransmitted_packets;
    struct pktq rxq;           /* received while the NIC is stalled (fault) */
    uint64_t rx_xoff;          /* backlog that makes the NIC send XOFF */
    uint64_t rx_drops;
    simtime_t cc_idle_ps;
    uint32_t parked_head[NPRIO], parked_tail[NPRIO];
    uint32_t parked_n[NPRIO];
    struct timer_lite wake;    /* earliest paced QP (its event carries the host's index) */
    uint32_t next_qpn;
    uint64_t sampled[3];       /* counters at the last time-series sample */
} __attribute__((aligned(64))); /* a host's lines are its own: neighbours may run on other cores */
_Static_assert(offsetof(struct host_rt, cnt_dirty) < 64 && offsetof(struct host_rt, ready_n) == 64 &&
                   offsetof(struct host_rt, rp_cnp_handled) + 8 <= 128,
               "struct host_rt's per-packet fields moved across cache lines");

enum xfer_state { XF_WAITING = 0, XF_POSTED, XF_DONE };

struct xfer_rt {
    uint32_t deps_left;
    uint32_t qp;
    uint32_t next_on_qp;
    uint32_t psn_first, npkts;
    /* split_data_on_qps: a schedule transfer's parts follow the schedule's transfers in
     * net.xfers. For a transfer, its first part (NONE32: not split); for a part, its transfer */
    uint32_t split;
    simtime_t start, end;
    uint8_t state;
};

/* A transfer's state is also read while the run goes on, by the thread that writes
 * transfers.csv beside it (results_io/outcome_stream.h): the run publishes it with these, so
 * that a transfer seen done has its final start and end. */
static inline void xfer_set_state(struct xfer_rt *x, enum xfer_state st)
{
    __atomic_store_n(&x->state, (uint8_t)st, __ATOMIC_RELEASE);
}
static inline enum xfer_state xfer_state_seen(const struct xfer_rt *x)
{
    return (enum xfer_state)__atomic_load_n(&x->state, __ATOMIC_ACQUIRE);
}

struct net_stats {
    uint64_t packet_hops;
    uint64_t pause_frames;        /* PFC frames carrying an XOFF */
    uint64_t xon_frames;
    simtime_t paused_ps;          /* total time transmitters were paused (all ports, prios) */
    uint64_t wd_storms, wd_drops;
    uint64_t drops, drops_lossless, drops_prio[NPRIO];
    uint64_t ecn_marked;
    uint64_t cnp_sent, cnp_handled;
    uint64_t retransmitted_packets, timeouts;
    uint64_t transfers_done;
    uint64_t bytes_delivered;     /* payload taken in order (or placed) at responders, once per PSN */
};

struct sampler;

/* A PFC event for the pfc hook, kept until the rows of its time are complete (the hook gets
 * them by time, then node, then in the order the node made them: the same for any workers). */
struct net_idlist {
    uint32_t *v;
    uint32_t n;
};
enum net_list { LS_QUEUE_PORTS, LS_RATE_QPS, LS_CNT_PORTS, LS_CNT_HOSTS, LS_COUNT };

struct pfc_row {
    simtime_t t;
    uint32_t port, node;
    int32_t prio;
    const char *event;
    uint64_t duration_ns;
};

/* A row to hand over and its place in the hand-over (pfc_rows_flush's order). */
struct pfc_row_ref {
    const struct pfc_row *r;
    uint64_t seq;
};

/* Packet indices, taken from the top (net_worker.free). */
struct pkt_stack {
    uint32_t *v;
    uint32_t n, cap;
};

/* What the events running on one thread write that other threads' events also write: one
 * per worker of a parallel run (models/net_parallel.c), one for a sequential run. Summed or
 * merged between windows, or at the end. */
struct net_worker {
    struct engine *eng;
    struct net_stats st;
    /* its free packets (a packet is freed where it ends), last freed on top: a stack of pool
     * indices, so that taking one reads this array and not the packet, whose line is cold
     * when it was freed long ago (a parallel run's drain takes a window's crossing packets
     * in a row: down a list linked through the packets, each waited for the one before) */
    struct pkt_stack free;
    /* ports, QPs, ports and hosts whose samples changed since the last tick (enum net_list) */
    struct net_idlist ls[LS_COUNT];
    struct pfc_row *rows;
    uint32_t nrows, rows_cap;
    uint64_t done;                /* transfers completed here, the last one at last_done */
    simtime_t last_done;
    /* the first request in the window to arm the deadlock check, with the key it got */
    bool dl_req;
    simtime_t dl_at, dl_call;
    uint32_t dl_owner;
    struct engine_key dl_key;
    /* a parallel run: its index, and the packets it put on links to other workers' nodes in
     * this window, per destination worker (taken by the receivers between windows, so the
     * packet's memory stays with one core) */
    uint32_t index;
    struct net_wire *wire;
} __attribute__((aligned(64))); /* each worker's counters on lines of their own */

struct net_wire {
    struct packet *pkt;
    struct int_stack *intd;       /* beside them when the CC reads INT */
    uint32_t n, cap;
};

/* n->wk holds `count` contexts (64-byte aligned), the first `keep` kept from the old array. */
void net_workers_resize(struct net *n, uint32_t keep, uint32_t count);

/* The worker context of the thread running a parallel run's events, else NULL. */
extern __thread struct net_worker *net_self;

/* The congestion counters sampled over time: a switch port's ECN marks, a NIC's notification
 * and reaction point counters (results_io/counters.c names them as mlx5 does). */
enum net_counter { NET_CNT_ECN_MARKED, NET_CNT_NP_ECN_MARKED, NET_CNT_NP_CNP_SENT, NET_CNT_RP_CNP_HANDLED };

/* Where the run's samples go, set by the caller before net_run (results_io/samples.c writes them
 * as queues.csv, rates.csv, counters.csv and pfc.csv); models hold no file. A NULL member
 * drops that kind. `port` is the global port index (into net.ports), `local` its number at
 * `node`. Called in simulated-time order; nothing is allocated per call. */
struct net_sample_hooks {
    void *ctx;
    /* the egress queue of one priority of a port, when it changed since the last sample */
    void (*queue)(void *ctx, uint64_t t_ns, uint32_t port, const char *node, uint32_t local, int prio,
                  uint32_t bytes);
    /* a QP's congestion-control rate when it changed; NAN when it has nothing left to send */
    void (*rate)(void *ctx, uint64_t t_ns, uint32_t flow, double rate_gbps);
    /* a cumulative congestion counter when it changed (a host's at its NIC port, local 0) */
    void (*counter)(void *ctx, uint64_t t_ns, uint32_t port, const char *node, uint32_t local,
                    enum net_counter which, uint64_t value);
    /* a PFC event at the port that received the frame: pause, resume (with its duration),
     * watchdog-storm, watchdog-restore */
    void (*pfc)(void *ctx, uint64_t t_ns, uint32_t port, const char *node, uint32_t local, int prio,
                const char *event, uint64_t duration_ns);
    /* around each sampling tick (begin true, then false): lets the caller time the sampling */
    void (*tick)(void *ctx, bool begin);
    /* around each hand-over of PFC rows (pfc_rows_flush; begin true, then false), inside a
     * tick or not: lets the caller time a batch whole, not row by row (a PFC storm at 16384
     * hosts hands over 7 M rows, and two clock reads a row were 5 % of its run) */
    void (*pfc_batch)(void *ctx, bool begin);
    /* the QPs whose rate is sampled (nonzero), or NULL for all: the model does not even list
     * the others' rate changes (bench/large.ini samples 58 K of its 1 M QPs, and listing the
     * rest cost a tick three of each QP's four lines) */
    const uint8_t *flows;
};

struct net {
    struct engine eng;
    /* the engine's handlers of the model's hot events (net_register_handlers) */
    uint32_t h_arrival, h_tx_ready, h_rto, h_wake, h_xfer_start, h_dep_learned;
    const struct scenario *sc;
    const struct topology *topo;
    struct topo_routes *converged; /* after a link failure: routes without the failed links */
    const struct schedule *sched;
    const struct cc_ops *cc;
    struct cc_env *cc_env;        /* per host: the settings and its port's line rate, which its
                                   * QPs' congestion control reads (struct cc_flow.env) */
    const struct dcqcn_params *np; /* the notification point's settings ([dcqcn] CNP keys) */

    struct packet *pool;
    uint32_t pool_cap;            /* packets made (free stacks: net_worker.free) */
    uint32_t pool_max;            /* the reserved extent (sim/reserve.h): the pool never moves */
    uint32_t links_down;          /* links now down (link-down faults) */
    /* INT stacks beside the pool (same index), only when the CC reads telemetry (HPCC): the
     * hot struct packet does not carry them */
    struct int_stack *intd;
    int8_t *port_rate_code;       /* INT link-rate code of each port */
    uint32_t int_multi;           /* INT unit multiplier of the algorithm's settings */

    struct port_rt *ports;
    struct switch_rt *switches;   /* indexed by node - nhosts */
    struct host_rt *hosts;        /* indexed by node (hosts are 0..H-1) */
    struct pace_ent *pace_heaps;  /* every host's pacing heap, one after another */
    struct qp_rt *qps;
    struct qp_resp *qresp;        /* the responders, same index */
    struct qp_rare *rare;         /* the rest of each QP, same index */
    uint32_t nqps;
    simtime_t *cnp_last;          /* NP: when the last CNP of each moderation slot went out */
    struct xfer_rt *xfers;
    uint32_t nxfers, npackets_xfers;
    uint64_t *part_bytes;         /* split messages: bytes of part nxfers + k */
    uint32_t nparts;              /* split messages: parts, in xfers after the transfers */
    uint32_t *parts_left;         /* split messages: parts of transfer i not yet complete */
    struct ooo_rx *ooo;           /* per QP, only with receiver = ooo-place */
    uint32_t *dep_off, *dep_list; /* dependents of each transfer (CSR) */

    uint8_t ctrl_prio_mask;       /* priorities served with strict priority */
    uint32_t dwrr_quantum[NPRIO];

    struct net_stats st;          /* the run's (summed over workers at its end) */
    struct net_worker *wk;        /* wk[0]: a sequential run's; workers + 1 in a parallel one */
    uint32_t nworkers;            /* 1, or a parallel run's workers */
    uint32_t nctx;                /* worker contexts: 1, or workers + 1 (the global entity's) */
    struct net_partition *part;   /* a parallel run's partition, or NULL */
    const uint32_t *worker_of;    /* a parallel run: each node's worker */
    simtime_t quantum;            /* the lookahead: the shortest link delay (see net_quantum) */
    struct sampler *sampler;      /* time series state (NULL without queue/rate/counter hooks) */
    struct net_sample_hooks hooks; /* where samples and PFC events go (all NULL: nowhere) */
    struct pfc_row_ref *pfc_order; /* pfc_rows_flush's order of the rows it hands over */
    uint32_t pfc_order_cap;
    /* capture hook: called for every packet sent or received on a port with a tap;
     * `sender_local` is the sending port's number at its node */
    void (*tap_fn)(struct net *n, void *tap, const struct packet *p, uint32_t sender_local);
    /* an MPI run (models/net_mpi.c): this process's rank of `ranks` (0 otherwise), and what
     * its sampler and PFC rows wait to hand to rank 0 */
    uint32_t rank, ranks;
    uint64_t bytes_expected;      /* payload this process's hosts receive (net_work_done) */
    struct net_mpi *mpi;
    struct timer deadlock_timer;
    bool deadlocked;
    char *deadlock_report;        /* the cycle, for summary.json and stderr */
    simtime_t last_event_time;
    bool finished;
};

/* The next hops of switch `node` toward host `dst`: the topology's, or, once the routing has
 * converged after a link failure, those that avoid the failed links. Static (edge-list)
 * routes stay as configured. */
static inline const uint16_t *net_routes(const struct net *n, uint32_t node, uint32_t dst, uint32_t *count)
{
    const struct topology *t = n->topo;
    if (!n->converged || t->host_off || node == t->attach[dst])
        return topology_routes(t, node, dst, count);
    size_t idx = (size_t)(node - t->nhosts) * t->nswitches + (t->attach[dst] - t->nhosts);
    *count = n->converged->route_cnt[idx];
    return &n->converged->route_ports[n->converged->route_off[idx]];
}

/* The routes are the topology's and every link is up: the one routing state in which an
 * egress chosen earlier (switch_prefetch_arrival's, kept in the packet) is still the one
 * switch_receive would choose, whatever failed and recovered in between. */
static inline bool net_routes_pristine(const struct net *n)
{
    return !n->links_down && !n->converged;
}

/* The global index of port p's node's first port (ports of a node are consecutive): from the
 * port itself, not the topology's node record, another cache line on a large fabric. */
static inline uint32_t net_first_port(const struct net *n, const struct port_rt *p)
{
    return (uint32_t)(p - n->ports) - p->local;
}

/* Starts loading every cache line of the `bytes` at p (a hint, for large fabrics: see
 * net_prefetch in net.c). */
static inline void net_prefetch_bytes(const void *p, size_t bytes)
{
    for (uintptr_t a = (uintptr_t)p & ~(uintptr_t)63; a < (uintptr_t)p + bytes; a += 64)
        __builtin_prefetch((const void *)a);
}

/* Starts loading a QP's state. */
static inline void net_prefetch_qp(const struct net *n, uint32_t id)
{
    net_prefetch_bytes(&n->qps[id], sizeof(struct qp_rt));
}

/* Gives an engine that runs this fabric's events the fabric's prefetch hook (net.c): the
 * deep one when its ports and QPs take 8 MB or more, else the light one. */
void net_install_prefetch(struct net *n, struct engine *e);
/* The same with the hook chosen (the tests check that none changes a result). */
enum net_prefetch_kind { NET_PREFETCH_NONE, NET_PREFETCH_LIGHT, NET_PREFETCH_DEEP };
void net_install_prefetch_kind(struct net *n, struct engine *e, enum net_prefetch_kind k);
struct net *net_build(const struct scenario *sc, const struct topology *topo,
                      const struct schedule *sched, GError **err);
void net_free(struct net *n);
/* Runs to completion or to the scenario's stop time. */
void net_run(struct net *n);
/* A run on `workers` threads (models/net_parallel.c), with the same results as net_run: splits
 * the fabric (after net_build, before the sampler and captures are attached); FALSE with a
 * message when it cannot be split so. net_run_workers then runs it (net_run for one). */
gboolean net_set_workers(struct net *n, uint32_t workers, GError **err);
/* The most workers net_set_workers accepts for this fabric: one per group of nodes that must
 * share a worker (a server's), or 1 when the deadlock check is shorter than the lookahead. */
uint32_t net_workers_possible(const struct net *n);
void net_run_workers(struct net *n);
/* For the progress line (engine_set_work_done): the payload delivered so far over what this
 * process's hosts are to receive, or -1 when they receive nothing. */
double net_work_done(void *ctx);
/* Counts what they are to receive and installs net_work_done; net_run_workers calls it when
 * the engine shows progress. */
void net_progress_install(struct net *n);
/* How a parallel run split the fabric (for summary.json); workers 1 for a sequential run. */
struct net_partition_info {
    uint32_t workers, units, cut_links;
    uint32_t ranks;            /* an MPI run: its ranks (one worker each), else 0 */
    uint64_t windows;
    simtime_t lookahead_ps;
    const uint64_t *load;      /* per worker: estimated packet-hops (sent and received) */
    uint64_t load_total;       /* their sum */
    const uint32_t *nodes;     /* per worker: nodes */
    const double *busy_s;      /* per worker: wall seconds running events (NULL before the run) */
    double serial_s;           /* wall seconds of the global entity's turns between windows */
};
void net_partition_describe(const struct net *n, struct net_partition_info *out);
/* Worker w's share of the estimated load (summary.json's load_share, the summary table's). */
static inline double net_partition_load_share(const struct net_partition_info *p, uint32_t w)
{
    return p->load_total ? (double)p->load[w] / (double)p->load_total : 0;
}
void net_partition_free(struct net_partition *p);
/* For both: the sampler's first ticks; the end figures, summed over workers. */
void net_start_sampler(struct net *n);
void net_run_end(struct net *n, simtime_t last, size_t pending);
void net_worker_lists(struct net *n, struct net_worker *w);
/* A parallel run's hooks (models/net.c): a window begins (worker w's wires are empty again);
 * an event from worker `from` arrives (a packet on a wire becomes the receiver's). */
void net_wire_begin(void *ctx, uint32_t w);
void net_wire_receive(void *ctx, uint32_t from, struct event *ev);
simtime_t net_quantum(const struct topology *t);
/* Whether nodes a and b are inside the same multi-GPU server (never split between workers). */
bool net_same_server(const struct topology *t, uint32_t a, uint32_t b);
static inline bool net_in_server(const struct topo_node *x)
{
    return x->layer != LAYER_FABRIC && x->layer != LAYER_LEAF && x->layer != LAYER_SPINE && x->layer != LAYER_AGG;
}

/* Headroom of a port for one lossless priority: [switch] headroom, or from the IEEE
 * bounds, the MTU and the cable (models.md 3.3). */
uint64_t net_port_headroom(const struct scenario *sc, uint64_t rate, simtime_t delay);
/* The bytes switch `node`'s reserves and PFC headroom set apart from its buffer
 * (mmu_set_apart, as mmu_init counts them, from the topology alone: for rocesim check). */
uint64_t net_switch_reserved(const struct scenario *sc, const struct topology *t, uint32_t node);
/* A warning (g_free it) when some fabric switch's reserves and headroom take its whole buffer,
 * naming the one that needs the most and how many there are; NULL when none. */
char *net_buffer_warning(const struct scenario *sc, const struct topology *t);

/* An MPI run (models/net_mpi.c), one worker per rank: the fabric split as by net_set_workers,
 * each rank running its part and a copy of the global entity. FALSE with a message when it
 * cannot be split so. net_run_workers then runs it; after net_flush_samples and pfc_finish,
 * net_mpi_gather brings every rank's nodes to rank 0, which alone writes results. */
gboolean net_set_mpi(struct net *n, uint32_t rank, uint32_t ranks, GError **err);
void net_run_mpi(struct net *n);
void net_mpi_gather(struct net *n);
/* Whether every rank built the same model as rank 0 (program, scenario, topology, schedule,
 * handlers), compared by digests; else an error naming the first rank and part that differ,
 * the same on every rank. Collective: every rank calls it before the run. */
gboolean net_mpi_same_model(const struct net *n, GError **err);
void net_mpi_free(struct net *n);
/* Hooks for the ranks but 0: they write nothing, their samples go to rank 0. */
void net_mpi_sink_hooks(struct net_sample_hooks *h);
/* For an MPI run's sampler (net_attach_sampler): hooks that keep each tick's rows and, at the
 * tick's end, hand every rank's to rank 0's hooks *h (saved) in the order one process writes
 * them; and the PFC rows of all ranks to rank 0 before a flush (pfc_rows_flush). */
void net_mpi_wrap_hooks(struct net *n, struct net_sample_hooks *h);
void net_mpi_pfc_gather(struct net *n, simtime_t upto);
/* Whether this process runs node `node`'s events (every node but in an MPI run). */
static inline bool net_mine(const struct net *n, uint32_t node)
{
    return n->ranks <= 1 || n->worker_of[node] == n->rank;
}
/* The partition of net_set_workers, for `workers` workers or ranks. */
struct net_partition *net_partition_make(const struct net *n, uint32_t workers, GError **err);
const uint32_t *net_partition_worker_of(const struct net_partition *p); /* per node, then the global entity */
/* The figures of a run on the partition, for net_partition_describe. */
void net_partition_ran(struct net *n, uint64_t windows, const double *busy_s, double serial_s);

/* The worker context of the events running now, their engine and their counters. */
static inline struct net_worker *net_wk(struct net *n) { return net_self ? net_self : n->wk; }
static inline struct engine *net_eng(struct net *n) { return net_self ? net_self->eng : &n->eng; }
static inline simtime_t net_now(struct net *n) { return net_eng(n)->now; }
static inline struct net_stats *net_st(struct net *n) { return &net_wk(n)->st; }

/* packet pool */
uint32_t pkt_alloc(struct net *n);
void pkt_stack_reserve(struct pkt_stack *s, uint32_t need);
static inline void pkt_free(struct net *n, uint32_t i)
{
    struct pkt_stack *s = &net_wk(n)->free;
    if (s->n == s->cap)
        pkt_stack_reserve(s, s->n + 1);
    s->v[s->n++] = i;
}
static inline struct packet *pkt(struct net *n, uint32_t i) { return &n->pool[i]; }

/* queues */
static inline void pktq_push(struct net *n, struct pktq *q, uint32_t i)
{
    n->pool[i].next = NONE32;
    if (q->tail == NONE32)
        q->head = i;
    else
        n->pool[q->tail].next = i;
    q->tail = i;
    q->pkts++;
    q->bytes += n->pool[i].frame;
}
static inline uint32_t pktq_pop(struct net *n, struct pktq *q)
{
    uint32_t i = q->head;
    q->head = n->pool[i].next;
    if (q->head == NONE32)
        q->tail = NONE32;
    q->pkts--;
    q->bytes -= n->pool[i].frame;
    return i;
}

/* Starts loading what a packet's ingress accounting at port p reads and writes (mmu_admit,
 * mmu_release and the PFC checks): the port's buffer settings and XOFF state, and the
 * priority's counters. A hint for the prefetch hook; reads nothing. */
static inline void port_prio_prefetch_in(const struct port_rt *p, int prio)
{
    __builtin_prefetch(&p->mmu);
    __builtin_prefetch(&p->pp[prio & (NPRIO - 1)]);
}

/* A switch port's egress queue q, keeping the port's summary (qmask, qbytes) with it. */
static inline void port_q_push(struct net *n, struct port_rt *p, int q, uint32_t i)
{
    pktq_push(n, &p->pp[q].q, i);
    p->qmask |= (uint8_t)(1u << q);
    p->qbytes += n->pool[i].frame;
}
static inline uint32_t port_q_pop(struct net *n, struct port_rt *p, int q)
{
    uint32_t i = pktq_pop(n, &p->pp[q].q);
    if (!p->pp[q].q.pkts)
        p->qmask &= (uint8_t)~(1u << q);
    p->qbytes -= n->pool[i].frame;
    return i;
}

/* ports and links (models/net.c) */
void port_kick(struct net *n, struct port_rt *p);
void port_send_now(struct net *n, struct port_rt *p, uint32_t pkt);

/* switch (models/switch.c) */
void switch_receive(struct net *n, struct port_rt *in, uint32_t pkt);
/* Prefetch hints (net_prefetch): what a packet's arrival at a switch reads (and the egress
 * port, where it follows from the packet alone, kept in the packet for switch_receive); what
 * a switch port's next dequeue reads behind its head packets (reads only). */
void switch_prefetch_arrival(const struct net *n, const struct port_rt *in, struct packet *pk);
void switch_prefetch_dequeue(const struct net *n, const struct port_rt *p);
uint32_t switch_dequeue(struct net *n, struct port_rt *p);
uint32_t switch_drop_queue(struct net *n, struct port_rt *p, int q);
double ecn_mark_probability(uint64_t qbytes, uint64_t kmin, uint64_t kmax, double pmax);
uint32_t ecmp_hash(uint32_t sip, uint32_t dip, uint16_t sport, uint16_t dport, uint32_t seed);

/* NIC (models/nic.c) */
void nic_init_qp(struct net *n, uint32_t qp, uint32_t src, uint32_t dst, uint8_t prio);
void nic_assign_cnp_slots(struct net *n);
/* Registers the NIC's event handlers with the engine (net_register_handlers). */
void nic_register_handlers(struct net *n);
void nic_receive(struct net *n, struct port_rt *in, uint32_t pkt);
uint32_t nic_dequeue(struct net *n, struct host_rt *h);
bool nic_has_work(const struct net *n, const struct host_rt *h);
/* Prefetch hints (net_prefetch), reads only: a host's NIC state that a dequeue reads first;
 * what the next dequeue reads behind it (its QPs); a pacing wake-up timer's host (deep: its
 * QPs); a QP's retransmission event (not a struct timer: timer_lite), returning whether ev was
 * one; a packet arriving at its host: the QP or responder and transfer (deep: what those lead
 * to). */
void nic_prefetch_host(const struct host_rt *h);
void nic_prefetch_dequeue(const struct net *n, const struct host_rt *h);
void nic_prefetch_wake(const struct net *n, uint32_t host, bool deep);
bool nic_prefetch_event(const struct net *n, const struct event *ev);
void nic_prefetch_arrival(const struct net *n, const struct packet *pk, bool deep);
void nic_post(struct net *n, uint32_t xfer);
uint16_t roce_udp_sport(uint32_t lqpn, uint32_t rqpn);

/* transfers (models/net.c) */
void xfer_finished(struct net *n, uint32_t xfer);
simtime_t net_notify_delay(const struct net *n, uint32_t from_host, uint32_t to_host);
/* Every transfer is complete, the last at `last`: the run ends at last + quantum - 1. */
void net_all_done(struct net *n, simtime_t last, simtime_t *stop);
/* Bytes of a transfer, or of one part of a split message. */
static inline uint64_t xfer_bytes(const struct net *n, uint32_t id)
{
    return id < n->nxfers ? schedule_get(n->sched, id)->bytes : n->part_bytes[id - n->nxfers];
}

/* PFC (models/pfc.c) */
void pfc_init_port(struct net *n, struct port_rt *p);
void pfc_request(struct net *n, struct port_rt *p, int prio, bool pause);
uint32_t pfc_next_frame(struct net *n, struct port_rt *p);
void pfc_receive(struct net *n, struct port_rt *in, uint32_t pkt);
void pfc_finish(struct net *n);       /* closes open pause intervals at the end */
void pfc_watch_deadlock(struct net *n);
void pfc_init_deadlock(struct net *n);
/* Hands the PFC events of times <= upto, of every worker, to the pfc hook (in order). */
void pfc_rows_flush(struct net *n, simtime_t upto);
/* Puts v[0..k) in pfc.csv's order: time, node, then seq (the hand-over order). */
void pfc_rows_order(struct pfc_row_ref *v, size_t k);

/* faults (models/fault.c) */
gboolean faults_schedule(struct net *n, GError **err);
/* Registers the faults' event handlers with the engine (net_register_handlers). */
void faults_register_handlers(struct net *n);
/* The keys a [fault NAME] may have, per kind (models/fault.c). */
extern const struct cfg_kind fault_kinds[];
bool nic_rx_stalled(struct net *n, struct host_rt *h, uint32_t pkt);
void nic_rx_drain(struct net *n, struct host_rt *h);

/* The egress ports (global indices) a QP's packets leave by, from its NIC port to the last
 * switch port before its destination, on the fabric as built: the ECMP hash path (with other
 * load balancing modes, the path ECMP would take stands in for the ones they spread over). */
void net_qp_path(const struct net *n, uint32_t qp, void (*fn)(void *ctx, uint32_t port), void *ctx);
/* The bytes the schedule puts on each QP (qp_bytes has nqps entries, zeroed by the caller). */
void net_qp_bytes(const struct net *n, uint64_t *qp_bytes);

/* Samples go to h's functions while the run goes (copied; call before net_run). */
void net_attach_sampler(struct net *n, const struct net_sample_hooks *h);
/* writes the last samples and closes the queue-depth histograms at the end of the run */
void net_flush_samples(struct net *n);
/* upper edge in bytes of a queue-depth histogram bin */
uint64_t qhist_bin_upper(unsigned bin);
/* the bin a queue depth of `bytes` is counted in (non-decreasing in bytes) */
unsigned qhist_bin(uint64_t bytes);

/* time series hooks (sim/results or NULL) */
void sampler_queue_changed(struct net *n, struct port_rt *p);
void sampler_rate_changed(struct net *n, uint32_t qp);
/* a congestion counter of port p (or NULL) and/or host (or NONE32) changed */
void sampler_counters_changed(struct net *n, struct port_rt *p, uint32_t host);

#endif
