/* The progress line a run shows on a terminal (stderr), redrawn in place at most every
 * quarter of a second: simulated time, the share of the run done and an estimate of the
 * time left, the event rate. A run ends at its stop time or when its model's work is done
 * (net.c: the last transfer), whichever comes first, so the share done is the larger of
 * the simulated time over the stop and the model's own share (engine_set_work_done); the
 * time left assumes the rest goes at the average pace so far. */
#ifndef ROCESIM_PROGRESS_H
#define ROCESIM_PROGRESS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sim/simtime.h"

/* What one line shows. */
struct progress_view {
    simtime_t now, stop;       /* stop SIMTIME_NEVER or 0: no share of it */
    double work;               /* the model's share of its work done, 0..1; negative: unknown */
    double elapsed_s;          /* wall seconds since the run started */
    double events_per_s;       /* negative: not shown */
    uint32_t workers;          /* shown when more than 1 */
};

/* The share of the run done (0..1), or a negative value when neither the stop nor the
 * model tell. */
double progress_done(const struct progress_view *v);
/* Seconds left at the pace so far, or a negative value when too little is done to tell
 * (under 0.5 %, or under a second run). */
double progress_left_s(const struct progress_view *v);
/* The line's text (no carriage return), truncated to fit len. */
void progress_format(char *buf, size_t len, const struct progress_view *v);

/* A line on stderr, redrawn in place. */
struct progress_line {
    double start;              /* wall time the run started */
    double last;               /* wall time of the last redraw */
    uint64_t last_events;
    bool shown;
};

/* `events`: the count run before (UINT64_MAX when not counted). */
void progress_start(struct progress_line *l, uint64_t events);
/* True when the line is due for a redraw (a quarter of a second since the last). */
bool progress_due(const struct progress_line *l);
/* Redraws it; `events` is the count run so far (the rate is over the time since the last
 * redraw), UINT64_MAX when not counted. */
void progress_show(struct progress_line *l, simtime_t now, simtime_t stop, double work, uint64_t events,
                   uint32_t workers);
/* Erases it, if it was drawn. */
void progress_end(struct progress_line *l);

#endif
