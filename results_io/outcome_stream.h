/* transfers.csv written beside the run that makes it: a thread of its own adds the rows of
 * completed transfers, in id order, while the simulation goes on, so that a run of tens of
 * millions of transfers (a ring AllReduce over thousands of ranks: a 2 GB file) does not
 * spend that writing after its last event. The file is the same as one written after the
 * run: a row is written only once its transfer is complete (nothing in it changes later),
 * and the rest after the run. */
#ifndef ROCESIM_OUTCOME_STREAM_H
#define ROCESIM_OUTCOME_STREAM_H
#include "results_io/outcome.h"

struct outcome_stream;

/* Starts the thread on r. get must be safe to call while the run goes on: a transfer it
 * reports done must have its final start and end (an acquire load of what the run publishes
 * with a release store). NULL if no thread could start: then every row is the caller's to
 * write after the run, as without a stream. */
struct outcome_stream *outcome_stream_start(struct outcome_rows *r, outcome_get_fn get, const void *src);
/* Stops and joins the thread (at once: it checks between small batches of rows) and frees
 * st; r is the caller's again, with the rows written so far. Returns the CPU seconds the
 * thread spent. */
double outcome_stream_stop(struct outcome_stream *st); /* st may be NULL: 0 */

#endif
