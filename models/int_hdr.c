/* HPCC's INT hop records, bit for bit as HPCC ns-3 int-header.h/.cc packs them. */
#include "models/int_hdr.h"

static const uint64_t rate_values[5] = { 25000000000ull, 50000000000ull, 100000000000ull, 200000000000ull,
                                         400000000000ull };

int int_rate_code(uint64_t bps)
{
    for (int i = 0; i < 5; i++)
        if (rate_values[i] == bps)
            return i;
    return -1;
}

#define MASK(bits) ((1ull << (bits)) - 1)
#define TIME_SHIFT  3u
#define BYTES_SHIFT (TIME_SHIFT + INT_TIME_BITS)
#define QLEN_SHIFT  (BYTES_SHIFT + INT_BYTES_BITS)

void int_push_hop(struct int_stack *s, uint64_t time_ns, uint64_t tx_bytes, uint64_t qlen, int rate_code,
                  uint32_t multi)
{
    uint64_t b = tx_bytes / ((uint64_t)INT_BYTE_UNIT * multi), q = qlen / ((uint64_t)INT_QLEN_UNIT * multi);
    s->hop[s->nhop % INT_MAX_HOP] = ((uint64_t)rate_code & 7u) | (time_ns & MASK(INT_TIME_BITS)) << TIME_SHIFT |
                                    (b & MASK(INT_BYTES_BITS)) << BYTES_SHIFT | (q & MASK(INT_QLEN_BITS)) << QLEN_SHIFT;
    s->nhop++;
}

uint64_t int_hop_rate(uint64_t h) { return rate_values[(h & 7u) < 5 ? (h & 7u) : 0]; }
uint64_t int_hop_time(uint64_t h) { return (h >> TIME_SHIFT) & MASK(INT_TIME_BITS); }
static uint64_t bytes_field(uint64_t h) { return (h >> BYTES_SHIFT) & MASK(INT_BYTES_BITS); }
uint64_t int_hop_bytes(uint64_t h, uint32_t multi) { return bytes_field(h) * INT_BYTE_UNIT * multi; }
uint64_t int_hop_qlen(uint64_t h, uint32_t multi) { return ((h >> QLEN_SHIFT) & MASK(INT_QLEN_BITS)) * INT_QLEN_UNIT * multi; }

uint64_t int_time_delta(uint64_t now, uint64_t prev)
{
    uint64_t a = int_hop_time(now), b = int_hop_time(prev);
    return a >= b ? a - b : a + (1ull << INT_TIME_BITS) - b;
}

uint64_t int_bytes_delta(uint64_t now, uint64_t prev, uint32_t multi)
{
    uint64_t a = bytes_field(now), b = bytes_field(prev);
    return (a >= b ? a - b : a + (1ull << INT_BYTES_BITS) - b) * INT_BYTE_UNIT * multi;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

void int_serialize(const struct int_stack *s, uint8_t out[INT_HDR_BYTES])
{
    for (unsigned j = 0; j < INT_MAX_HOP; j++) {
        put32(out + 8 * j, (uint32_t)s->hop[j]);
        put32(out + 8 * j + 4, (uint32_t)(s->hop[j] >> 32));
    }
    out[40] = (uint8_t)(s->nhop >> 8);
    out[41] = (uint8_t)s->nhop;
}
