/* One packet in flight. Packets live in a pool (struct net.pool) and are linked into
 * queues through `next`, so forwarding allocates nothing. */
#ifndef ROCESIM_PACKET_H
#define ROCESIM_PACKET_H
#include <stdint.h>
#include "sim/simtime.h"

enum pkt_kind {
    PKT_DATA = 0,   /* RoCEv2 RDMA WRITE (FIRST/MIDDLE/LAST/ONLY) */
    PKT_ACK,        /* RC ACK (opcode 0x11, AETH syndrome ACK) */
    PKT_NAK,        /* RC NAK, PSN sequence error (opcode 0x11, AETH syndrome 0x60) */
    PKT_CNP,        /* RoCEv2 CNP (opcode 0x81) */
    PKT_PFC,        /* 802.1Qbb PFC frame */
};

/* ECN codepoints in the IP header. */
enum { ECN_NOT_ECT = 0, ECN_ECT1 = 1, ECN_ECT0 = 2, ECN_CE = 3 };

/* flags */
#define PKT_F_FIRST   0x01  /* first packet of a message: carries RETH */
#define PKT_F_LAST    0x02  /* last packet of a message */
#define PKT_F_RETX    0x04  /* a retransmission */
#define PKT_F_ECE     0x08  /* ACK/NAK: ECN-echo, a CE mark arrived since the previous ACK */
#define PKT_F_CNP     0x10  /* ACK/NAK: the acknowledged packet was CE-marked (np_feedback = ack_flag) */

/* RoCEv2 framing (IPv4, no VLAN), see shared/reference/models.md section 5. */
#define ROCE_HDR_BYTES   62u   /* Eth 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4 */
#define ROCE_RETH_BYTES  16u
#define ROCE_IMMDT_BYTES 4u    /* ImmDt of WRITE LAST/ONLY WITH IMMEDIATE (IBTA 9.2, 5.1) */
#define WIRE_EXTRA_BYTES 20u   /* preamble+SFD 8 + inter-frame gap 12 */
#define ACK_FRAME_BYTES  66u   /* headers + AETH 4 */
#define CNP_FRAME_BYTES  78u   /* headers + 16 reserved */
#define PFC_FRAME_BYTES  64u   /* minimum Ethernet frame */
#define ROCE_UDP_DPORT   4791u

struct packet {
    uint32_t next;          /* queue link */
    uint32_t qp;            /* global QP index (sender side); PFC: unused */
    uint32_t psn;           /* 24-bit PSN (data: own PSN; ACK/NAK: acknowledged/expected) */
    uint32_t src, dst;      /* host indices (PFC: node that sent it) */
    uint32_t transfer;      /* schedule transfer id for data */
    uint16_t payload;       /* RoCE payload bytes (data) */
    uint16_t frame;         /* Ethernet frame bytes incl. FCS, excl. preamble/IFG */
    uint16_t sport;         /* UDP source port (ECMP entropy) */
    uint16_t in_port;       /* ingress port at the current switch (MMU accounting) */
    uint8_t  kind;          /* enum pkt_kind */
    uint8_t  prio;          /* 802.1p priority = queue */
    uint8_t  ecn;           /* IP ECN bits */
    uint8_t  dscp;          /* IP DSCP */
    uint8_t  flags;         /* PKT_F_* */
    uint8_t  pfc_vector;    /* PFC: class-enable vector */
    uint16_t pfc_quanta;    /* PFC: pause time in quanta for the enabled class(es); 0 = XON */
    uint32_t dst_qpn;       /* 24-bit destination QP number, as in BTH (frames only) */
    uint32_t egress_hint;   /* while on a link to a switch: the egress port (an index into the
                             * fabric's ports) the prefetch hook computed for it there, or
                             * NONE32 (switch_prefetch_arrival) */
    simtime_t sent_at;      /* data: when the NIC sent it; ACK/NAK: the data's time, echoed */
    simtime_t arrive_at;    /* while on a link: when its last bit reaches the far end */
};

/* Bytes a packet occupies on the wire: frame + preamble + IFG. */
static inline uint32_t packet_wire_bytes(const struct packet *p) { return p->frame + WIRE_EXTRA_BYTES; }

#endif
