/* In-band network telemetry as HPCC stamps it (HPCC ns-3 src/network/utils/int-header.h):
 * each switch egress pushes one 8-byte hop record (link-rate code 3 b, timestamp 24 b in ns,
 * transmitted bytes 20 b in units of 128 x multi, queue length 17 b in units of 80 x multi)
 * into the data packet; at most INT_MAX_HOP records, `nhop` counts pushes. The receiver
 * echoes the stack in its ACK.
 *
 * The stacks live in an array beside the packet pool (net.intd, indexed like net.pool), so
 * struct packet stays as small as it is without HPCC. */
#ifndef ROCESIM_INT_HDR_H
#define ROCESIM_INT_HDR_H
#include <stdbool.h>
#include <stdint.h>

#define INT_MAX_HOP   5u
#define INT_HDR_BYTES 42u   /* 5 x 8 B hops + 2 B nhop, HPCC ns-3 IntHeader::GetStaticSize() */
#define INT_TIME_BITS  24u
#define INT_BYTES_BITS 20u
#define INT_QLEN_BITS  17u
#define INT_BYTE_UNIT  128u
#define INT_QLEN_UNIT  80u

struct int_stack {
    uint64_t hop[INT_MAX_HOP]; /* packed as the ns-3 bitfield: rate | time << 3 | bytes << 27 | qlen << 47 */
    uint16_t nhop;
};

/* The 3-bit link-rate code of `bps` (25, 50, 100, 200, 400 Gb/s as in ns-3's lineRateValues),
 * or -1 if INT cannot encode that rate. */
int int_rate_code(uint64_t bps);
/* IntHeader::PushHop: writes hop nhop % INT_MAX_HOP and counts it. time in ns, bytes and qlen
 * in bytes (truncated to the units, and to the field widths as the bitfield does). */
void int_push_hop(struct int_stack *s, uint64_t time_ns, uint64_t tx_bytes, uint64_t qlen, int rate_code,
                  uint32_t multi);

/* Field readers of one packed hop (GetLineRate/GetTime/GetBytes/GetQlen and the deltas that
 * wrap at the field width, GetTimeDelta/GetBytesDelta). */
uint64_t int_hop_rate(uint64_t h);
uint64_t int_hop_time(uint64_t h);
uint64_t int_hop_bytes(uint64_t h, uint32_t multi);
uint64_t int_hop_qlen(uint64_t h, uint32_t multi);
uint64_t int_time_delta(uint64_t now, uint64_t prev);
uint64_t int_bytes_delta(uint64_t now, uint64_t prev, uint32_t multi);

/* IntHeader::Serialize: each hop as two big-endian 32-bit words (low word first, the layout of
 * the ns-3 union's buf[0], buf[1]), then nhop big-endian: INT_HDR_BYTES bytes. */
void int_serialize(const struct int_stack *s, uint8_t out[INT_HDR_BYTES]);

#endif
