/* [workload NAME] sections -> transfers in the schedule. */
#ifndef ROCESIM_WORKLOAD_H
#define ROCESIM_WORKLOAD_H
#include <glib.h>
#include "models/schedule.h"
#include "models/topology.h"
#include "models/scenario.h"

/* Builds the schedule of every workload of the scenario, in file order. */
struct schedule *workload_build_all(const struct scenario *s, const struct topology *t, GError **err);

/* The keys a [workload NAME] may have, per kind (models/workload.c). */
extern const struct cfg_kind workload_kinds[];

#endif
