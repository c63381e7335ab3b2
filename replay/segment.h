/* The segmentation rule of schedule_io.h, packet by packet: a transfer of `bytes` is a run of
 * RDMA WRITE messages of at most SCHEDULE_MAX_MESSAGE bytes, each split into packets of `mtu`
 * payload bytes; only the transfer's last packet carries the immediate. */
#ifndef ROCESIM_REPLAY_SEGMENT_H
#define ROCESIM_REPLAY_SEGMENT_H
#include <stdbool.h>
#include <stdint.h>

struct segment {
    uint32_t payload;     /* bytes in this packet */
    bool first, last;     /* of its message: FIRST carries the RETH, LAST asks for an ACK */
    bool imm;             /* the transfer's last packet: WRITE ... WITH IMMEDIATE */
    uint64_t msg_bytes;   /* the RETH DMA length of the packet's message */
};

/* Packets of a transfer (a zero-byte transfer, a notification, is one empty packet). */
uint64_t segment_packets(uint64_t bytes, uint32_t mtu);
/* Packet i (0-based, < segment_packets) of a transfer. */
void segment_packet(uint64_t bytes, uint32_t mtu, uint64_t i, struct segment *s);
/* Work requests a NIC gets for the transfer (one per message), max_msg = the port's
 * max_msg_sz capped at SCHEDULE_MAX_MESSAGE. */
uint64_t segment_work_requests(uint64_t bytes, uint64_t max_msg);

#endif
