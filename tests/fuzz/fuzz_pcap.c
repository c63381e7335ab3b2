/* pcap files: the reader, and the frame parser on every record it returns. */
#include "analysis/frames.h"
#include "analysis/pcap.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *path = fuzz_file("in.pcap", data, size);
    GError *err = NULL;
    struct pcap_reader *r = pcap_reader_open(path, &err);
    if (!r) {
        if (!err || !*err->message)
            abort();
        g_error_free(err);
        g_free(path);
        return 0;
    }
    struct pcap_record rec;
    int rc;
    uint64_t n = 0;
    while ((rc = pcap_reader_next(r, &rec, &err)) == 1 && n++ < 100000) {
        if (rec.cap_len > PCAP_MAX_SNAPLEN || rec.cap_len > rec.orig_len)
            abort(); /* the reader refuses impossible lengths */
        struct frame_info info;
        frame_parse(pcap_reader_linktype(r), rec.data, rec.cap_len, rec.orig_len, &info);
    }
    if (rc < 0)
        g_clear_error(&err);
    pcap_reader_close(r);
    g_free(path);
    return 0;
}
