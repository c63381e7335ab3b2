/* The insides of transfers.csv's row writer (results_io/outcome.h's outcome_rows), shared by
 * the writer of one thread (outcome.c) and the one whose rows are formatted on several
 * (outcome_rows_all.c): a row's figures and its text are apart, so that the text can be made
 * anywhere while the figures are added up in id order. */
#ifndef ROCESIM_RESULTS_OUTCOME_ROWS_H
#define ROCESIM_RESULTS_OUTCOME_ROWS_H
#include "results_io/outcome.h"
#include "results_io/row.h"

/* transfers.csv being written: the rows so far and the figures they make. */
struct outcome_rows {
    FILE *f;
    const struct schedule *s;
    outcome_ideal_fn ideal_fn;
    const void *ctx;
    struct run_figures *fig;
    uint64_t *fct;   /* ns, of the completed transfers */
    double *sd;      /* slowdowns of the completed transfers with an ideal time */
    size_t k, ksd;
    uint32_t next;   /* the first transfer without a row yet */
};

/* Transfer t (with bytes) added to r's figures, with its ideal time (0: none known). Called in
 * id order: the figures' arrays keep that order. */
void outcome_row_count(struct outcome_rows *r, const struct transfer *t, const struct xfer_outcome *x,
                       simtime_t ideal);
/* Transfer i's row, ending in a newline, into w (it fits: ten numbers and a slowdown of at
 * most 25 characters). Reads nothing but its arguments. */
void outcome_row_text(struct row *w, uint32_t i, const struct transfer *t, const struct xfer_outcome *x,
                      simtime_t ideal);

#endif
