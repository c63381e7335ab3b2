/* counters.csv (t_ns,node,port,counter,value): the counter names, as mlx5 and ethtool call
 * them, in one table for the simulator's rows and the replay's, and the one row writer. */
#ifndef ROCESIM_RESULTS_COUNTERS_H
#define ROCESIM_RESULTS_COUNTERS_H
#include <stdint.h>
#include <stdio.h>
#include "models/net.h"
#include "results_io/row.h"

enum results_counter {
    RC_NP_ECN_MARKED_ROCE_PACKETS, RC_NP_CNP_SENT, RC_RP_CNP_HANDLED,
    RC_OUT_OF_SEQUENCE, RC_PACKET_SEQ_ERR, RC_LOCAL_ACK_TIMEOUT_ERR, RC_DUPLICATE_REQUEST,
    RC_RETRANSMITTED_PACKETS, RC_TIMEOUTS, RC_NAKS_SENT, RC_NAKS_RECEIVED, RC_ICRC_ERRORS,
    RC_TX_BYTES, RC_TX_PACKETS, RC_RX_BYTES, RC_RX_PACKETS, RC_RX_DISCARDS_STALLED,
    RC_ECN_MARKED, RC_PFC_WD_STORMS, RC_PFC_WD_DROPS,
    RC_COUNT
};

/* Counters kept per priority: their name has the priority in it ("rx_prio3_pause"). */
enum results_prio_counter { RC_RX_PAUSE, RC_RX_PAUSE_DURATION, RC_TX_PAUSE, RC_TX_PAUSE_DURATION, RC_DROPS };

const char *results_counter_name(enum results_counter c);
/* The name of a per-priority counter into buf (at least 32 bytes); returns buf. */
const char *results_prio_counter_name(enum results_prio_counter c, int prio, char *buf, size_t len);
/* The name of a time-series counter of the simulated fabric. */
const char *results_net_counter_name(enum net_counter c);

/* One row, for node (a topology name) and its port number; tc keeps the time's text for the
 * next row (rows of one time come together: zero it before the first). */
void results_counter_row(FILE *f, struct row_text *tc, uint64_t t_ns, const char *node, uint32_t port,
                         const char *name, uint64_t v);
/* The same for a replay's host N, with a signed value (ethtool deltas) or a row whose port and
 * value are already text (the NIC sampler's rows). */
void results_counter_row_host_i64(FILE *f, uint64_t t_ns, uint32_t host, const char *name, int64_t v);
void results_counter_row_host_text(FILE *f, uint64_t t_ns, uint32_t host, const char *port, const char *name,
                                   const char *v);

/* The end-of-run rows of a simulated fabric at time end (every host's NIC counters, then every
 * switch port's; PFC durations in microseconds as mlx5 reports them). */
void results_net_counters(FILE *f, const struct net *n, simtime_t end);

#endif
