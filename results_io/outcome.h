/* The results contract's transfer and collective rows, shared by `run` and `replay`.
 *
 * transfers.csv   id,src,dst,bytes,prio,start_ns,end_ns,fct_ns,ideal_ns,slowdown
 *                 (one row per transfer with bytes > 0; unfinished ones have no end)
 * collectives.csv job,op,algorithm,ranks,bytes,iteration,start_ns,end_ns,time_us,algbw_GBps,
 *                 busbw_GBps (nccl-tests definitions: algbw = bytes / time in 1e9 B/s,
 *                 busbw = algbw x the operation's factor)
 * Percentiles are nearest-rank (results_io/stats.h). */
#ifndef ROCESIM_OUTCOME_H
#define ROCESIM_OUTCOME_H
#include <json-glib/json-glib.h>
#include <stdbool.h>
#include <stdio.h>
#include "models/schedule.h"
#include "results_io/stats.h"

enum outcome_state { OUTCOME_PENDING = 0, OUTCOME_POSTED, OUTCOME_DONE };

/* One transfer: posted at `start` (valid from POSTED on), landed at `end` (DONE only), both
 * on the run's one time base in picoseconds. */
struct xfer_outcome {
    uint8_t state;
    simtime_t start, end;
};

struct coll_result {
    uint32_t job, iteration, ranks;
    uint64_t bytes;
    simtime_t start, end;
    bool done;
    double time_us, algbw, busbw;
};

/* The transfers of one job (every job kind: incast, permutation, collectives, ...). */
struct job_xfers {
    uint64_t n, done;
    simtime_t first_start, last_end; /* over its posted / completed transfers */
    GArray *fct_ns, *slowdown;       /* uint64_t / double of the completed ones (empty if all) */
    gboolean all;                    /* it holds every transfer: the run's figures are its own */
};

struct run_figures {
    struct coll_result *colls;
    uint32_t ncolls;
    struct job_xfers *jobs;          /* one per schedule job, filled by outcome_write_transfers */
    uint32_t njobs;
    uint64_t nxfers, done, bytes;
    uint64_t fct_p50, fct_p99, fct_max, completion;
    double sd_p50, sd_p99, sd_max;  /* over sd_known transfers: completed, with an ideal time */
    uint64_t sd_known;               /* 0: no slowdown (no ideal time known: a replay without a
                                      * host rate), and summary.json has none */
    double wall_s;                   /* the engine's run (sampling included) */
    double setup_s;                  /* before the run: topology, schedule, fabric, sampled ports */
    double output_s;                 /* writing results: sampling ticks, rows, summary.json */
    double output_share;             /* output_s / (wall_s + the writing after the run) */
    double output_stream_s;          /* CPU time of the thread that wrote transfers.csv during the run */
    uint64_t peak_rss;
    simtime_t end;
    GPtrArray *warnings;
};

/* Per-job figures. Collectives, over their iterations: time percentiles, mean busbw, and the
 * share of the job's span spent communicating (the rest is the compute phases between
 * iterations). Every job, over its transfers: how many finished, the completion time from its
 * first transfer's start to its last one's end (an incast's or a permutation's completion),
 * FCT and slowdown percentiles. */
struct job_figures {
    double p50_us, p99_us, busbw, comm_fraction;
    uint32_t iterations;
    uint64_t transfers, completed;
    uint64_t completion_ns, fct_p50, fct_p99, fct_max;
    double sd_p99;
    bool has_sd;       /* sd_p99 is known (some completed transfer has an ideal time) */
};

/* The ideal completion time of a transfer (the denominator of slowdown). */
typedef simtime_t (*outcome_ideal_fn)(const void *ctx, uint32_t src, uint32_t dst, uint64_t bytes);

/* Writes transfers.csv's rows to f and fills fig's transfer figures. o has one entry per
 * transfer of s. */
void outcome_write_transfers(FILE *f, const struct schedule *s, const struct xfer_outcome *o,
                             outcome_ideal_fn ideal, const void *ctx, struct run_figures *fig);
/* transfers.csv row by row, for a writer that keeps pace with a run: begin writes the
 * header; write adds the rows of the transfers in id order from the first without one, with
 * their outcomes from get, and with done_only stops before the first that has not completed
 * (its row would change); end (after a last write without done_only) sets the run's FCT and
 * slowdown percentiles in fig and frees r. The rows and figures are those of
 * outcome_write_transfers, however the writes are split. */
struct outcome_rows;
typedef void (*outcome_get_fn)(const void *src, uint32_t id, struct xfer_outcome *out);
struct outcome_rows *outcome_rows_begin(FILE *f, const struct schedule *s, outcome_ideal_fn ideal,
                                        const void *ctx, struct run_figures *fig);
/* at most limit rows; returns how many it wrote */
uint32_t outcome_rows_write(struct outcome_rows *r, outcome_get_fn get, const void *src, bool done_only,
                            uint32_t limit);
/* Every row left, as a last write without done_only would write them, formatted by `threads`
 * threads of its own while the caller's thread writes them in order and adds up the figures:
 * the file and the figures are the same for any count. Then the ideal function must be safe
 * to call from several threads at once. threads < 2, few rows left, or no thread that can
 * start: the caller's thread does it all. */
void outcome_rows_write_all(struct outcome_rows *r, outcome_get_fn get, const void *src, unsigned threads);
/* a write to the file failed (a full disk): the rows after it are not worth formatting */
bool outcome_rows_failed(const struct outcome_rows *r);
void outcome_rows_end(struct outcome_rows *r);
/* Frees r without the percentiles (a run that failed or was interrupted); r may be NULL. */
void outcome_rows_abort(struct outcome_rows *r);
/* collectives.csv: time from an iteration's begin marker to its end marker. Fills fig->colls. */
void outcome_write_collectives(FILE *f, const struct schedule *s, const struct xfer_outcome *o,
                               struct run_figures *fig);
/* The same with the outcomes from get (outcome_rows_write's). */
void outcome_write_collectives_from(FILE *f, const struct schedule *s, outcome_get_fn get, const void *src,
                                    struct run_figures *fig);
void outcome_job_figures(const struct schedule *s, const struct run_figures *fig, uint32_t job,
                         struct job_figures *jf);
/* The nccl-tests style table of every job's collectives, on stdout. */
void outcome_print_collectives(const struct schedule *s, const struct run_figures *fig);
/* summary.json pieces: the transfer metrics (transfers .. slowdown_max), the collective
 * metrics (when there are collectives) and the "jobs" array. */
void outcome_json_transfer_metrics(JsonBuilder *b, const struct run_figures *fig);
void outcome_json_collective_metrics(JsonBuilder *b, const struct run_figures *fig);
void outcome_json_jobs(JsonBuilder *b, const struct schedule *s, const struct run_figures *fig);
/* The same per-job figures as flat headline metrics "jobs.NAME.KEY" (for sweep, tune and
 * compare: e.g. jobs.ar.time_p99_us, jobs.incast.completion_ns); inside "metrics". */
void outcome_json_job_metrics(JsonBuilder *b, const struct schedule *s, const struct run_figures *fig);
/* Whether summary.json leaves headline metric `name` out of a run where nothing of its kind
 * finished (completion, FCT and slowdown without a completed transfer; collective times
 * without a completed collective), the run's or, as "jobs.NAME.KEY", a job's: a name that
 * cannot be told from a misspelt one by its absence. */
gboolean outcome_metric_optional(const char *name);
void outcome_json_int(JsonBuilder *b, const char *k, uint64_t v);
void outcome_json_str(JsonBuilder *b, const char *k, const char *v);
void outcome_json_dbl(JsonBuilder *b, const char *k, double v);
/* The builder's document as pretty-printed JSON (summary.json's layout); consumes b. */
char *outcome_json_text(JsonBuilder *b);
/* Frees fig's collectives and warnings. */
void run_figures_clear(struct run_figures *fig);

#endif
