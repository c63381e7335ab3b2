/* The segmentation rule (see segment.h). */
#include "replay/segment.h"
#include "models/schedule_io.h"

uint64_t segment_packets(uint64_t bytes, uint32_t mtu)
{
    if (bytes == 0)
        return 1;
    /* messages are multiples of the MTU (2^31 is, for every IB MTU), so packets never
     * straddle a message boundary */
    return (bytes + mtu - 1) / mtu;
}

void segment_packet(uint64_t bytes, uint32_t mtu, uint64_t i, struct segment *s)
{
    uint64_t off = i * mtu;
    uint64_t payload = bytes > off ? MIN((uint64_t)mtu, bytes - off) : 0;
    uint64_t end = off + payload;
    uint64_t msg_off = off - off % SCHEDULE_MAX_MESSAGE;
    s->payload = (uint32_t)payload;
    s->first = off % SCHEDULE_MAX_MESSAGE == 0;
    s->last = end == bytes || end % SCHEDULE_MAX_MESSAGE == 0;
    s->imm = end == bytes;
    s->msg_bytes = MIN(bytes - msg_off, SCHEDULE_MAX_MESSAGE);
}

uint64_t segment_work_requests(uint64_t bytes, uint64_t max_msg)
{
    if (max_msg == 0 || max_msg > SCHEDULE_MAX_MESSAGE)
        max_msg = SCHEDULE_MAX_MESSAGE;
    return bytes == 0 ? 1 : (bytes + max_msg - 1) / max_msg;
}
