/* Where a collective's time went: its critical path (from the end marker back, always through
 * the dependency that finished last) cut into time on transfers inside a server and between
 * servers, each split into the transfer's unloaded time (serialisation at its bottleneck,
 * store-and-forward, propagation) and the rest (waiting behind other traffic: queues, PFC
 * pauses, NIC and link contention), plus compute phases. The parts add up to the
 * collective's time. of_which_paused: the part of the waiting during which a port on the
 * transfer's route was paused by PFC (the longest such pause per transfer, from pfc.csv). */
#ifndef ROCESIM_BREAKDOWN_H
#define ROCESIM_BREAKDOWN_H
#include <stdio.h>
#include "models/net.h"

/* collectives_breakdown.csv: one row per collective instance that finished; pfc_csv is the
 * run's pfc.csv (may be NULL). The unloaded time is models/ideal.h's. */
void breakdown_write(const struct net *n, const char *pfc_csv, FILE *f);

#endif
