/* Congestion control for the UDP transport, with the simulator's own code: the reaction
 * point runs models/cc.h's algorithm per QP (initialised at the host's line rate, advanced
 * before its rate is read, told of every datagram sent and every CNP received), and the
 * notification point moderates CNPs as models/nic.c does (models.md 1.2: at most one per
 * min_time_between_cnps per cnp_scope slot, or with np_feedback = ack_flag a CNP-flagged ACK
 * for every CE-marked datagram).
 *
 * The replay's clock is CLOCK_MONOTONIC ns; the cc code's is simtime_t ps from the
 * transport's creation: udp_cc_ps() is the one conversion. */
#ifndef ROCESIM_REPLAY_UDP_CC_H
#define ROCESIM_REPLAY_UDP_CC_H
#include <glib.h>
#include <stdint.h>
#include "models/cc.h"
#include "models/cc_dcqcn.h"

/* One host's choice: the algorithm, the scenario whose [dcqcn] knobs it reads, the line
 * rate every QP starts at. */
struct udp_cc {
    const struct cc_ops *ops;     /* &cc_none_ops: every QP stays at line rate */
    const struct scenario *sc;    /* NULL only with cc_none_ops */
    double line_bps;
    int64_t epoch_ns;             /* CLOCK_MONOTONIC ns of simtime 0 */
};

/* Idle time earns at most this much burst (ns), for a QP and for the host: a late wake-up
 * (ranks share CPUs) is made up for instead of lost. */
#define UDP_PACE_CREDIT_NS 1000000.0

/* One QP's reaction point and pacing. It does not move once initialised: f points at env. */
struct udp_cc_qp {
    struct cc_flow f;
    struct cc_env env;            /* the scenario's settings and the line rate */
    uint64_t cnp_handled;         /* CNPs (or CNP-flagged ACKs) given to the algorithm */
    double min_rate;              /* lowest rate read */
    double paced_at;              /* ns: when its last packet's pacing slot began */
    uint32_t last_wire;           /* that packet's wire bytes (0: none sent yet) */
    int64_t seen;                 /* latest time given: the algorithm's clock never goes back
                                   * (a CNP is dated when read, after the service's `now`) */
};

/* The algorithm the UDP transport runs for scenario sc (NULL: none): only those that need
 * nothing from ACKs (none, and the CNP-driven DCQCN in every style and preset), because this
 * transport's ACKs carry no ECN-echo, RTT echo or INT. NULL with *why for the others. */
const struct cc_ops *udp_cc_for(const struct scenario *sc, const char **why);

simtime_t udp_cc_ps(const struct udp_cc *cc, int64_t ns);
int64_t udp_cc_ns(const struct udp_cc *cc, simtime_t ps);

void udp_cc_qp_init(const struct udp_cc *cc, struct udp_cc_qp *q, int64_t now);
/* The QP's pacing rate at `now` (bit/s), its timers brought up to now first. */
double udp_cc_rate(const struct udp_cc *cc, struct udp_cc_qp *q, int64_t now);
/* When the QP may send its next packet (ns) at its rate now: its last packet's slot plus that
 * packet's wire time at the rate (models/nic.c next_avail, re-paced when the rate changed).
 * -INFINITY: at once (nothing sent yet, or no line rate: unpaced). */
double udp_cc_ready_at(const struct udp_cc *cc, struct udp_cc_qp *q, int64_t now);
/* The same at the rate last read, without advancing (for a wake-up time). */
double udp_cc_ready_at_last(const struct udp_cc *cc, const struct udp_cc_qp *q);
/* A packet of `frame` bytes (`wire` with preamble, gap and FCS) left at `now` in the slot
 * that began at `slot` (udp_cc_ready_at's value). */
void udp_cc_sent(const struct udp_cc *cc, struct udp_cc_qp *q, int64_t now, double slot,
                 uint32_t frame, uint32_t wire);
/* A CNP (or CNP-flagged ACK) for this QP arrived at `now`. */
void udp_cc_notified(const struct udp_cc *cc, struct udp_cc_qp *q, int64_t now);
/* When the rate may next change by itself (ns), or INT64_MAX. */
int64_t udp_cc_next_change(const struct udp_cc *cc, const struct udp_cc_qp *q);

/* The notification point of one host: which receiving QPs share a moderation slot. */
struct udp_np {
    int64_t gap_ns;               /* min_time_between_cnps */
    gboolean ack_flag;            /* np_feedback = ack_flag: flag the ACK, no CNP packet */
    enum cnp_scope scope;
    int64_t *last;                /* per slot: when its last CNP went out */
    gboolean *sent;               /* per slot: one has */
    uint32_t nslots;
};

/* From the scenario's [dcqcn] (NULL: [DCQCN15]'s NP, 50 us per QP, CNP packets), for a host
 * receiving on nqps QPs from nhosts hosts. */
void udp_np_init(struct udp_np *np, const struct dcqcn_params *p, uint32_t nqps, uint32_t nhosts);
void udp_np_clear(struct udp_np *np);
/* The slot of receiving QP `qp_index` whose sender is host `peer`. */
uint32_t udp_np_slot(const struct udp_np *np, uint32_t qp_index, uint32_t peer);
/* A CE-marked datagram arrived at `now` in `slot`: TRUE when a CNP goes out for it (and the
 * slot's window restarts). Always TRUE with ack_flag. */
gboolean udp_np_take(struct udp_np *np, uint32_t slot, int64_t now);

#endif
