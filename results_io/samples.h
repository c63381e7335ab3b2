/* The run's time series, written while it runs: queues.csv, rates.csv, pfc.csv and the sampled
 * rows of counters.csv, behind the models' sample hooks (models/net.h). It also keeps the time
 * spent writing them (the share of a run's wall time that goes to output). */
#ifndef ROCESIM_RESULTS_SAMPLES_H
#define ROCESIM_RESULTS_SAMPLES_H
#include <glib.h>
#include <stdio.h>
#include "models/net.h"
#include "results_io/folder.h"
#include "results_io/row.h"
#include "results_io/select.h"

struct sample_writer {
    FILE *queues, *rates, *pfc, *counters;
    bool gzip;                 /* the four are NAME.csv.gz */
    const struct sample_selection *sel; /* which ports and flows are written (NULL: all) */
    uint64_t span_started_ns;  /* monotonic clock at the start of the outermost timed span */
    uint32_t spans;            /* timed spans open (a tick, a batch of PFC rows inside it or
                                * not): rows inside one are timed with it, not on their own */
    uint64_t output_ns;        /* time spent sampling and writing rows so far */
    struct row_text time_text; /* the last row's time (a tick's rows share theirs) */
};

/* Opens the four files in rd's folder with their headers, gzip-compressed when gzip; only the
 * ports and flows sel selects are written (sel NULL or its arrays NULL: all). The end-of-run
 * rows of counters.csv are written to w->counters by the caller, for every port. */
gboolean sample_writer_open(struct sample_writer *w, const struct results_dir *rd, bool gzip,
                            const struct sample_selection *sel, GError **err);
/* The hooks that write into w (pass to net_attach_sampler); they name the selected flows
 * (.flows), so that the model hands over only their rates. */
void sample_writer_hooks(struct sample_writer *w, struct net_sample_hooks *h);
/* Closes every file still open; FALSE and *err on the first that failed. */
gboolean sample_writer_close(struct sample_writer *w, GError **err);
/* Closes without reporting (a failed run). */
void sample_writer_abort(struct sample_writer *w);

/* CLOCK_MONOTONIC in nanoseconds: for timing the writers. */
uint64_t results_clock_ns(void);

#endif
