/* The UDP transport: the schedule over UDP sockets carrying RoCEv2 datagrams (the UDP payload
 * of the frames analysis/frames.c builds: BTH with PSN and WRITE opcodes, RETH, immediate,
 * ICRC), to destination port 4791 by default.
 *
 * Reliability is the RC transport's: the receiver ACKs every 16th in-order packet and every
 * message's last, answers a PSN gap with one NAK (sequence error) and a duplicate with an ACK;
 * the sender goes back N on a NAK or after the retransmission timeout, and gives up after
 * `retry` timeouts without progress (IBV_WC_RETRY_EXC_ERR on a NIC). Sending is paced at
 * rate_bps per host (wire bytes, as the NIC would), at most `window` packets in flight per QP,
 * and each QP at its own rate: the rate its congestion control (udp_cc.h, the simulator's
 * algorithm) gives it, line_bps without one.
 * A CE-marked datagram makes the receiver a notification point: a CNP to the sender, moderated
 * by the scenario's [dcqcn] min_time_between_cnps and cnp_scope (without a scenario, one per
 * QP per 50 us), or with np_feedback = ack_flag a CNP flag in the datagram's ACK.
 * Each QP sends from its own UDP source port (the schedule's sport) when that port can be
 * bound, so ECMP switches spread flows as in the simulation.
 * Notifications travel on a control QP per host pair as zero-byte WRITE ONLY WITH IMMEDIATE.
 */
#ifndef ROCESIM_REPLAY_UDP_H
#define ROCESIM_REPLAY_UDP_H
#include <netinet/in.h>
#include "models/cc.h"
#include "models/schedule.h"
#include "replay/transport.h"

struct udp_config {
    uint32_t me, nhosts;
    const struct schedule *sched;     /* its qps say who talks to whom */
    const struct in_addr *addr;       /* IPv4 of every host */
    uint16_t port;                    /* destination (and listening) UDP port */
    uint32_t mtu;                     /* payload bytes per packet */
    uint64_t rate_bps;                /* 0: unpaced */
    uint32_t window;                  /* packets in flight per QP */
    int64_t rto_ns;
    int retry;
    gboolean entropy_ports;           /* send each QP from its sport */
    double drop;                      /* fault injection: drop this fraction of the data
                                       * packets sent (seeded per host, reproducible) */
    const struct cc_ops *cc;          /* reaction point per data QP (NULL: none) */
    const struct scenario *scenario;  /* [dcqcn] knobs of the cc and the NP (NULL: none) */
    uint64_t line_bps;                /* every QP's line rate (0: rate_bps) */
    uint32_t test_ce_every;           /* TESTS ONLY: mark every Nth data packet of a QP CE
                                       * at the sender, a CE source where no switch marks */
};

/* The retransmission timeout when none is given (--rto): UDP_RTO_FLOOR_NS, ample at 1 Gbit/s
 * and up, or, when longer, twice the time a host's link takes at rate_bps to carry a full
 * window of the largest data packets on every QP it sends or receives on, for the busiest
 * host of the schedule. An ACK can wait behind that much: its data behind the sender's other
 * windows paced out and the receiver's queued, the ACK itself behind what its own host
 * receives. rate_bps 0 (unpaced): the floor. */
#define UDP_RTO_FLOOR_NS 20000000LL
int64_t udp_default_rto_ns(const struct schedule *s, uint32_t mtu, uint32_t window, uint64_t rate_bps);

struct xport *udp_xport_new(const struct udp_config *c, const struct xport_events *ev,
                            GError **err);

/* Initial PSN of the QP whose sender-side number is qpn (both ends compute it, so a UDP replay
 * needs no exchange; a verbs replay exchanges random ones). */
uint32_t udp_initial_psn(uint32_t qpn);
/* 24-bit serial difference a - b in -2^23..2^23-1. */
int32_t psn_diff(uint32_t a, uint32_t b);

#endif
