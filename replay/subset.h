/* Replaying part of a schedule (`replay --subset`): the lab has fewer hosts than the schedule.
 *
 * The mapped hosts become ranks 0..k-1 in ascending schedule-host order. A transfer between
 * two mapped hosts runs as scheduled (on its QP, with the QP's priority and UDP source port);
 * a transfer with an unmapped end becomes a marker (zero bytes) on its mapped end, or on
 * rank 0's host when neither end is mapped, keeping its id, delay and dependencies: the DAG's
 * order and compute gaps stay, the missing hosts' transfers take no time. */
#ifndef ROCESIM_REPLAY_SUBSET_H
#define ROCESIM_REPLAY_SUBSET_H
#include <glib.h>
#include "models/schedule.h"

struct schedule_subset {
    struct schedule *run;   /* hosts numbered by rank: what the ranks replay */
    struct schedule *out;   /* the same transfers in the schedule's numbering: for the results */
    uint32_t *rank_host;    /* schedule host of each rank */
    uint32_t ranks;
};

/* mapped[h] (h < nhosts): host h is in the lab map. FALSE with *err when no host is. */
gboolean schedule_subset(const struct schedule *s, uint32_t nhosts, const guint8 *mapped,
                         struct schedule_subset *sub, GError **err);
void schedule_subset_clear(struct schedule_subset *sub);

#endif
