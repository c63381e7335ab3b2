/* The frame parser alone: byte 0 picks the link type, bytes 1-2 how much of the frame was
 * not captured (orig_len - cap_len). */
#include "analysis/frames.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    static const uint32_t linktypes[] = { LINKTYPE_ETHERNET, LINKTYPE_LINUX_SLL, LINKTYPE_LINUX_SLL2, 0 };
    uint32_t lt = linktypes[data[0] % 4];
    uint32_t extra = (uint32_t)data[1] << 8 | data[2];
    /* an exact-size copy, so reading past cap_len is an ASan error */
    uint32_t cap = (uint32_t)(size - 3);
    uint8_t *frame = g_malloc(cap ? cap : 1);
    memcpy(frame, data + 3, cap);
    struct frame_info info;
    memset(&info, 0, sizeof info);
    if (frame_parse(lt, frame, cap, cap + extra, &info) < 0 && !info.error[0])
        abort(); /* a malformed frame always says why */
    if (frame_parse(lt, frame, cap, cap + extra, &info) == 0 && info.payload > cap + extra)
        abort();
    g_free(frame);
    return 0;
}
