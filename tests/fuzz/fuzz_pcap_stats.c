/* `rocesim pcap-stats` on one capture: the flows, PFC frames and rates it derives, and the
 * results folder it installs. A capture is refused as bad input or gives a folder with a
 * summary.json; writing never fails here (the disk is not full). */
#include "analysis/pcap_stats.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *path = fuzz_file("leaf0.pcap", data, size);
    char *out = g_build_filename(fuzz_dir(), "stats", NULL);
    char *files[] = { path, NULL };
    struct pcap_stats_opts o = { files, out, "1us", "100Gbps", FALSE };
    enum pcap_stats_outcome r = pcap_stats_run(&o);
    if (r == PCAP_STATS_WRITE_FAILED)
        abort();
    if (r == PCAP_STATS_OK) {
        char *sum = g_build_filename(out, "summary.json", NULL);
        if (!g_file_test(sum, G_FILE_TEST_IS_REGULAR))
            abort();
        g_free(sum);
    }
    rmtree(out);
    g_free(out);
    g_free(path);
    return 0;
}
