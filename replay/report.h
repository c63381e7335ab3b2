/* What each rank reports to rank 0 at the end of a replay, and the results folder rank 0
 * writes from the reports (the simulator's format: transfers.csv, collectives.csv,
 * counters.csv, summary.json). */
#ifndef ROCESIM_REPLAY_REPORT_H
#define ROCESIM_REPLAY_REPORT_H
#include <stdint.h>
#include "replay/replay.h"
#include "replay/transport.h"

enum { REC_START = 1, REC_END, REC_NOTIFIED, REC_ACKED };

/* One event on the rank's own clock (CLOCK_MONOTONIC ns). */
struct replay_record {
    uint32_t id;        /* transfer */
    uint32_t kind;      /* REC_* */
    int64_t t;
    uint64_t v;         /* END: payload bytes that landed; NOTIFIED: host that sent it */
};

struct replay_report_hdr {
    uint32_t rank;
    uint32_t complete;  /* every obligation of the rank met */
    uint32_t info_len;  /* bytes of hostinfo JSON right after the header, zero-padded to a
                         * multiple of 8, then the records */
    uint32_t pad;
    int64_t local_t0;   /* the rank's clock at schedule time 0 */
    struct xport_stats stats;
};

/* Clock offsets measured by rank 0 (ctrl_clock_offsets), before and (when the run completed)
 * after the run; rank r's clock minus rank 0's. after may be NULL. */
struct replay_clock {
    const int64_t *off, *half, *at;
    const int64_t *off_after, *half_after, *at_after;
};

/* Rank r's local time t on rank 0's clock, the offset interpolated linearly between the two
 * estimates (or the first one alone). */
int64_t replay_to_rank0(const struct replay_clock *k, int r, int64_t t);

/* How far rank r's times on rank 0's clock can be off: the larger of the two samples'
 * half round trips (only the first when there is no after-run sample). */
int64_t replay_clock_uncertainty(const struct replay_clock *k, int r);

/* Writes c->out_dir from the reports (reports[r] NULL: rank r sent none), with the pcap file
 * capture_file (moved in as capture.pcap) when not NULL. */
gboolean replay_write_results(const struct replay_config *c, GBytes *const *reports,
                              const struct replay_clock *k, gboolean complete,
                              const char *reason, const char *capture_file, GError **err);

#endif
