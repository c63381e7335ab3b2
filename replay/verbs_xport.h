/* The verbs transport: the schedule on a RoCE NIC through the table of verbs.h.
 *
 * One RC QP per schedule QP (attributes from verbs_plan.h: traffic class DSCP << 2, SL = the
 * priority, the flow label that gives the simulator's UDP source port, path MTU, timeout 14,
 * retry 7) plus one control RC QP per peer host for notifications (zero-byte WRITE WITH
 * IMMEDIATE). One PD, one CQ (with completion timestamps when the device has a timestamp
 * mask), one SRQ for every QP. A transfer is posted as RDMA WRITEs of at most
 * min(port max_msg_sz, SCHEDULE_MAX_MESSAGE) bytes, the last WRITE WITH IMMEDIATE carrying the
 * transfer id, only that one signalled. The receiver's landing buffer of a QP (the largest
 * message the QP carries) is the only memory registered with remote write; nothing has remote
 * read. Every message of a QP lands at the start of its buffer: the data is not looked at.
 *
 * Setting up takes two steps around the control plane's exchange: verbs_xport_new creates the
 * resources and returns this host's endpoints (QPN, PSN, GID, landing address and rkey of each
 * QP end), verbs_xport_connect takes every host's and brings the QPs to RTS. */
#ifndef ROCESIM_REPLAY_VERBS_XPORT_H
#define ROCESIM_REPLAY_VERBS_XPORT_H
#include <netinet/in.h>
#include "models/schedule.h"
#include "replay/transport.h"
#include "replay/verbs.h"

struct verbs_config {
    uint32_t me, nhosts;
    const struct schedule *sched;     /* with qps */
    const uint32_t *qp_of;            /* transfer -> QP index (schedule_derive_qps) */
    uint8_t dscp[8];                  /* DSCP of each priority */
    uint32_t mtu;                     /* path MTU bytes */
    const struct verbs_fns *fns;
    const char *device;               /* NULL: the first */
    int gid_index;                    /* -1: the RoCE v2 GID of addr */
    struct in_addr addr;              /* this host's IPv4 */
    uint8_t port;                     /* 0: 1 */
    int64_t poll_ns;                  /* CQ polling interval (0: 10 us) */
};

struct xport *verbs_xport_new(const struct verbs_config *c, const struct xport_events *ev,
                              GBytes **endpoints, GError **err);
/* ep[h]: host h's endpoints (from verbs_xport_new there). */
gboolean verbs_xport_connect(struct xport *x, GBytes *const *ep, GError **err);

#endif
