/* What the replay core asks of a transport (UDP datagrams, or verbs on a RoCE NIC): post a
 * transfer on one of the schedule's QPs, send a zero-byte notification to a host, and report
 * back when transfers land, are acknowledged, or fail. One transport instance is one host. */
#ifndef ROCESIM_REPLAY_TRANSPORT_H
#define ROCESIM_REPLAY_TRANSPORT_H
#include <glib.h>
#include <poll.h>
#include <stdint.h>

struct xport_events {
    void *ctx;
    /* transfer `xfer` was delivered in order here (its last message's immediate arrived) */
    void (*landed)(void *ctx, uint32_t xfer, uint64_t bytes, int64_t t_ns);
    /* a notification from host `from`: transfer `xfer` finished there */
    void (*notified)(void *ctx, uint32_t from, uint32_t xfer, int64_t t_ns);
    /* the sender's completion of transfer `xfer` (every byte acknowledged) */
    void (*acked)(void *ctx, uint32_t xfer, int64_t t_ns);
    /* transfer `xfer` cannot complete (retries exceeded, peer unreachable) */
    void (*failed)(void *ctx, uint32_t xfer, const char *why);
    /* this host cannot go on, though none of its own transfers failed (an ACK or CNP it
     * must send was refused: its peers' transfers would only time out) */
    void (*broken)(void *ctx, const char *why);
};

/* Counters a transport keeps; names are those of counters.csv. */
struct xport_stats {
    uint64_t tx_packets, tx_bytes, rx_packets, rx_bytes;
    uint64_t retransmitted_packets, timeouts, naks_sent, naks_received;
    uint64_t duplicates, out_of_sequence, ce_received, cnp_sent, cnp_received, icrc_errors;
};

struct xport {
    const struct xport_ops *ops;
    void *impl;
};

struct xport_ops {
    const char *name;
    /* queue transfer xfer (bytes > 0) on schedule QP qp (this host is its source) */
    gboolean (*post)(void *impl, uint32_t qp, uint32_t xfer, uint64_t bytes, GError **err);
    /* tell `host` that transfer xfer finished here */
    gboolean (*notify)(void *impl, uint32_t host, uint32_t xfer, GError **err);
    /* fds to wait on; returns the count */
    int (*pollfds)(void *impl, struct pollfd *fds, int max);
    /* the next time (CLOCK_MONOTONIC ns) the transport must run even without input, or
     * INT64_MAX */
    int64_t (*next_due)(void *impl);
    /* reads input, runs timers, sends what it may; events are delivered from here */
    void (*service)(void *impl, int64_t now);
    /* TRUE when nothing posted is still unacknowledged */
    gboolean (*quiet)(void *impl);
    void (*stats)(void *impl, struct xport_stats *st);
    /* optional: the congestion control's figures at `now` as JSON object text (g_free) */
    char *(*cc_json)(void *impl, int64_t now);
    void (*free)(void *impl);
};

#endif
