/* [workload NAME] sections -> transfers in the schedule. */
#ifndef ROCESIM_WORKLOAD_H
#define ROCESIM_WORKLOAD_H
#include <glib.h>
#include "models/schedule.h"
#include "models/topology.h"
#include "sim/scenario.h"

/* Builds the schedule of every workload of the scenario, in file order. */
struct schedule *workload_build_all(const struct scenario *s, const struct topology *t, GError **err);

#endif
