/* RoCEv2 and PFC frames as they appear on an Ethernet wire: building them from a simulated
 * `struct packet`, and parsing them back out of captures (simulated or from the lab).
 *
 * Layouts follow shared/reference/replay.md section 5 (IBTA RoCEv2 annex, Linux rxe, scapy's
 * contrib/roce.py). Frames are handled without their FCS, as pcap stores them.
 *
 * Addressing scheme of simulated frames (documented in one place, used by the parser to map
 * addresses back to hosts):
 *   host h  IPv4  (10 + (h >> 16)).((h >> 8) & 255).(h & 255).1   e.g. host 0 = 10.0.0.1,
 *                                                               host 258 = 10.1.2.1
 *           MAC   02:00:00:HH:HH:HH   (locally administered, 24-bit host index)
 *   port p of node n (source of PFC frames)
 *           MAC   06:NN:NN:NN:PP:PP   (locally administered, 24-bit node, 16-bit port)
 * RoCE frames carry the end hosts' MACs whatever hop they are captured on, so a trace of any
 * port names the two endpoints (a routed fabric would rewrite them per hop).
 */
#ifndef ROCESIM_FRAMES_H
#define ROCESIM_FRAMES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "models/int_hdr.h"
#include "models/packet.h"

#define ETH_HDR_BYTES      14u
#define VLAN_TAG_BYTES     4u
#define IPV4_HDR_BYTES     20u
#define IPV6_HDR_BYTES     40u
#define UDP_HDR_BYTES      8u
#define BTH_BYTES          12u
#define RETH_BYTES         16u
#define AETH_BYTES         4u
#define IMMDT_BYTES        4u
#define CNP_RESERVED_BYTES 16u
#define ICRC_BYTES         4u
#define FCS_BYTES          4u
#define ETH_MIN_FRAME      60u     /* without FCS */
#define PFC_FRAME_LEN      60u     /* without FCS: PFC_FRAME_BYTES (64) minus FCS */
/* Largest frame frame_build can produce: tagged headers + RETH + 64 KiB payload + pad + ICRC. */
#define FRAME_MAX_BYTES    (ETH_HDR_BYTES + VLAN_TAG_BYTES + IPV4_HDR_BYTES + UDP_HDR_BYTES + \
                            BTH_BYTES + RETH_BYTES + INT_HDR_BYTES + 65535u + 3u + ICRC_BYTES)

#define ETHERTYPE_IPV4     0x0800u
#define ETHERTYPE_IPV6     0x86DDu
#define ETHERTYPE_VLAN     0x8100u
#define ETHERTYPE_QINQ     0x88A8u
#define ETHERTYPE_MACCTRL  0x8808u
#define MACCTRL_PAUSE      0x0001u  /* 802.3x PAUSE */
#define MACCTRL_PFC        0x0101u  /* 802.1Qbb class-based flow control */

/* BTH opcodes used here (RC transport; UC adds 0x20, UD 0x60). */
#define BTH_OP_WRITE_FIRST  0x06u
#define BTH_OP_WRITE_MIDDLE 0x07u
#define BTH_OP_WRITE_LAST   0x08u
#define BTH_OP_WRITE_LAST_IMM 0x09u
#define BTH_OP_WRITE_ONLY   0x0Au
#define BTH_OP_WRITE_ONLY_IMM 0x0Bu
#define BTH_OP_ACK          0x11u
#define BTH_OP_CNP          0x81u   /* RoCEv2 CNP (native IB uses 0x80) */

/* AETH syndromes: 0x1F = ACK with the "invalid/unlimited" credit count (what an RC responder
 * without end-to-end credits sends; Wireshark shows opcode ACK, credit count 31);
 * 0x60 = NAK, PSN sequence error. */
#define AETH_ACK           0x1Fu
#define AETH_NAK_PSN_SEQ   0x60u

/* Link types the parser understands (pcap LINKTYPE_* values). */
#define LINKTYPE_ETHERNET   1u
#define LINKTYPE_LINUX_SLL  113u
#define LINKTYPE_LINUX_SLL2 276u

/* What the simulator knows about a packet beyond struct packet. Zero-initialise and fill
 * what you have; every field has a usable zero. */
struct frame_ctx {
    uint64_t msg_bytes;   /* RETH DMA length on FIRST/ONLY: the message (transfer) size.
                             RETH holds 32 bits: larger values saturate at 0xFFFFFFFF. */
    uint32_t msn;         /* AETH message sequence number on ACK/NAK */
    uint16_t ip_id;       /* IPv4 identification (the DF bit is set, so any value is valid) */
    uint16_t pfc_port;    /* PFC: port of node packet->src that sends the frame (its MAC = SA) */
    bool     vlan;        /* add an 802.1Q tag with PCP = packet->prio (PFC frames never) */
    uint16_t vlan_id;     /* its VID; 0 = priority-tagged */
    bool     imm;         /* DATA with PKT_F_LAST: WRITE LAST/ONLY WITH IMMEDIATE carrying
                             imm_data (how a replay marks the end of a transfer) */
    uint32_t imm_data;
    const struct int_stack *intd; /* HPCC INT stack of a DATA/ACK/NAK: INT_HDR_BYTES in HPCC ns-3's
                             layout (int_serialize) right after the BTH's extension headers
                             (RETH/AETH), where dissectors see the start of the payload */
};

/* Addresses of the scheme above. */
uint32_t frame_host_ipv4(uint32_t host);                       /* host byte order */
void frame_host_mac(uint32_t host, uint8_t mac[6]);
void frame_port_mac(uint32_t node, uint16_t port, uint8_t mac[6]);
/* The host whose address `ip` is under the scheme, or -1 if `ip` is not one of them. */
int64_t frame_ipv4_host(uint32_t ip);

/* Builds the frame of `p` (DATA, ACK, NAK, CNP or PFC) into buf, writing at most `cap` bytes
 * (a snap length cuts the frame exactly as a capture would), and returns the frame's full
 * length without FCS, or 0 for an unknown kind. ctx may be NULL (all zero).
 * For RoCE frames the length is p->frame - FCS_BYTES when the payload is a multiple of 4;
 * otherwise the BTH pad (PadCnt) adds 1-3 bytes, as a real NIC does, and the VLAN tag adds 4.
 * Payload bytes are zeros; the ICRC is computed in O(headers + log payload), so framing costs
 * the same for a 4 KiB packet as for a 64-byte one. Allocates nothing. */
size_t frame_build(const struct packet *p, const struct frame_ctx *ctx, uint8_t *buf, size_t cap);

/* RFC 791 header checksum of `len` bytes (the checksum field must be zero, or the result is 0
 * when it is already correct). */
uint16_t ipv4_checksum(const uint8_t *hdr, size_t len);

/* zlib-compatible CRC-32 (reflected, poly 0xEDB88320, init/final ~0): crc32(0, NULL, 0) == 0. */
uint32_t crc32_update(uint32_t crc, const uint8_t *buf, size_t len);
/* The CRC-32 of the data that gave `crc` followed by n zero bytes, in O(log n). */
uint32_t crc32_zeros(uint32_t crc, size_t n);

/* The RoCEv2 invariant CRC of an IP packet: `l3` is the IPv4 (or IPv6) header onwards, `len`
 * runs up to (not including) the ICRC. Returns the CRC value; on the wire it is stored
 * little-endian (rxe writes the CPU-order u32; scapy reverses the big-endian pack). */
uint32_t roce_icrc(const uint8_t *l3, size_t len);

/* ---- parsing ---- */

enum frame_type {
    FRAME_OTHER = 0,   /* well-formed, but neither RoCEv2 nor MAC control (ARP, TCP, LLDP...) */
    FRAME_ROCE,        /* UDP to port 4791 with a BTH */
    FRAME_PFC,         /* MAC control, opcode 0x0101 */
    FRAME_PAUSE,       /* MAC control, opcode 0x0001 (802.3x, all priorities) */
};

/* Where a RoCE packet sits in its message. */
enum msg_pos { MSG_NONE = 0, MSG_FIRST, MSG_MIDDLE, MSG_LAST, MSG_ONLY };

enum icrc_state {
    ICRC_UNCHECKED = 0, /* not all of the packet was captured (snap length) */
    ICRC_OK,
    ICRC_BAD,
};

struct frame_info {
    enum frame_type type;
    uint32_t cap_len, orig_len;
    uint32_t wire_len;      /* L2 frame bytes with FCS as sent (from the IP length for IP
                               frames, so correct for truncated captures and FCS-less ones) */
    /* L2 */
    uint8_t  dst_mac[6], src_mac[6];
    uint8_t  vlan_tags;     /* 802.1Q/802.1ad tags skipped */
    uint8_t  pcp;           /* PCP of the outer tag (0 if untagged) */
    uint16_t vid;
    /* L3/L4 (RoCE) */
    uint8_t  ip_version;    /* 4 or 6 */
    uint8_t  src_ip[16], dst_ip[16];  /* IPv4 in the first 4 bytes, network order */
    uint8_t  dscp, ecn, ttl;
    uint16_t ip_id;
    uint32_t ip_len;        /* IPv4 total length / IPv6 40 + payload length */
    uint16_t sport, dport, udp_len;
    /* BTH */
    uint8_t  opcode, se, migreq, padcnt, tver, fecn, becn, ackreq;
    uint16_t pkey;
    uint32_t dest_qp, psn;
    enum msg_pos pos;       /* MSG_NONE for ACK, CNP, READ request... */
    bool     is_data;       /* carries message payload (SEND/WRITE/READ response) */
    bool     is_cnp;
    bool     ext_truncated; /* snap length cut the extension headers: RETH/AETH/ImmDt unset */
    bool     has_reth, has_aeth, has_imm;
    uint64_t reth_va;
    uint32_t reth_rkey, reth_dma_len;
    uint8_t  aeth_syndrome;
    uint32_t aeth_msn;
    uint32_t imm;
    uint32_t payload;       /* message payload bytes (without pad and ICRC) */
    enum icrc_state icrc;
    /* MAC control */
    uint16_t macc_opcode;
    uint16_t pfc_vector;
    uint16_t pfc_time[8];   /* PFC: per priority; PAUSE: time in pfc_time[0] */
    /* Set when frame_parse fails: what is wrong and at which byte of the frame. */
    char     error[128];
};

/* Parses one captured frame: `data` holds the first `cap_len` of its `orig_len` bytes, with
 * link type `linktype` (LINKTYPE_*). Headers must be captured; payload need not be (the
 * lengths come from the IP and UDP headers). Returns 0 (type set, FRAME_OTHER for traffic
 * that is none of ours) or -1 for a malformed frame, with info->error saying why. The ICRC
 * is verified when the whole packet was captured. */
int frame_parse(uint32_t linktype, const uint8_t *data, uint32_t cap_len, uint32_t orig_len,
                struct frame_info *info);

/* Writes the IP address of a parsed frame ("10.0.0.1", "fe80::1") into out (>= 46 bytes). */
void frame_ip_str(const struct frame_info *info, bool src, char *out, size_t outlen);

#endif
