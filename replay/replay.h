/* Replaying a schedule on real hosts: one process per schedule host, a transport for the data
 * (udp.h, or verbs), a control plane for the rest (ctrl.h). The results folder is the
 * simulator's (analysis/outcome.h), written by rank 0 on one time base.
 *
 * Semantics are the simulator's (models/schedule.h): a transfer starts `delay` after its last
 * dependency finished, where "finished" is known to the transfer's source either at once (the
 * dependency landed on, or was a marker of, the same host) or when a notification from the
 * dependency's receiver arrives (its latency is recorded). Roots start `delay` after the
 * common start. A marker finishes at its start time on its source host. */
#ifndef ROCESIM_REPLAY_H
#define ROCESIM_REPLAY_H
#include <glib.h>
#include <netinet/in.h>
#include "results_io/outcome.h"
#include "models/schedule.h"

struct verbs_fns;
struct cc_ops;
struct scenario;

#define REPLAY_ERROR (replay_error_quark())
GQuark replay_error_quark(void);
enum {
    REPLAY_ERROR_INPUT = 1,   /* bad schedule, map or option: exit 2 */
    REPLAY_ERROR_NO_DEVICE,   /* verbs without an RDMA device: exit 3 */
    REPLAY_ERROR_RUN,         /* setup or run failed: exit 1 */
};

enum replay_status { REPLAY_COMPLETE = 0, REPLAY_INCOMPLETE };

struct replay_config {
    const struct schedule *sched;     /* validated, with qps; host h = rank h */
    const struct schedule *out_sched; /* --subset: the same transfers in the schedule's own host
                                       * numbering, for the results (NULL: sched) */
    const uint32_t *rank_host;        /* --subset: the schedule host of each rank (NULL: rank) */
    const char *schedule_path;
    int rank, size;                   /* this process = schedule host `rank` */
    struct in_addr *addr;             /* IPv4 of each schedule host */
    const char *ctrl_addr;            /* rank 0's control address */
    uint16_t ctrl_port, udp_port;
    uint32_t mtu;
    uint64_t rate_bps;
    uint32_t window;
    double drop;                      /* udp fault injection (udp.h) */
    const struct cc_ops *cc;          /* udp: congestion control per QP (NULL: none) */
    const struct scenario *scenario;  /* udp: its [dcqcn] knobs for the cc and the NP (NULL: none) */
    uint64_t cc_line_bps;             /* udp: the QPs' line rate (0: rate_bps) */
    const char *cc_source;            /* where the cc and its knobs came from, for summary.json */
    uint32_t test_ce_every;           /* udp, TESTS ONLY: CE-mark every Nth data packet (udp.h) */
    int64_t rto_ns;                   /* udp: retransmission timeout */
    gboolean rto_given;               /* udp: rto_ns is --rto's, not udp_default_rto_ns's */
    int64_t timeout_ns;               /* a transfer not completed within it stops the run */
    gboolean timeout_given;           /* timeout_ns is --timeout's, not replay_default_timeout_ns's */
    int64_t start_delay_ns;           /* from the start barrier to time 0 of the schedule */
    outcome_ideal_fn ideal;
    const void *ideal_ctx;
    const char *out_dir;              /* written by rank 0 */
    const char *transport;            /* "udp" or "verbs" */
    const struct verbs_fns *verbs;    /* verbs: the table (NULL: libibverbs) */
    const char *device;               /* verbs: RDMA device (NULL: the first) */
    int gid_index;                    /* verbs: -1 for the RoCE v2 GID of this host's address */
    const char *netdev;               /* this rank's netdev from the map (NULL, "-", "lo": none) */
    const char *net_root, *debugfs_root; /* sysfs roots (NULL: /sys/class/net, /sys/kernel/debug) */
    const char *ib_root;              /* NULL: /sys/class/infiniband */
    int64_t sample_interval_ns;       /* NIC counters into counters.csv (0: start and end only) */
    const char *capture_iface;        /* rank 0 captures there into capture.pcap (NULL: no) */
    volatile int *stop;               /* set by a signal handler: stop as if timed out */
};

/* The --timeout when none is given: REPLAY_TIMEOUT_FLOOR_NS, or, when longer, twice the time
 * the busiest host's link takes at rate_bps to carry the payload of every transfer it sends or
 * receives: a transfer posted with all of them can wait behind that much. rate_bps 0: the
 * floor. */
#define REPLAY_TIMEOUT_FLOOR_NS 30000000000LL
int64_t replay_default_timeout_ns(const struct schedule *s, uint64_t rate_bps);

/* Runs this rank's part. On rank 0, writes the results folder (complete or not) and sets
 * *status; FALSE with *err when the replay could not run or its results not be written. */
gboolean replay_run(const struct replay_config *c, enum replay_status *status, GError **err);

#endif
