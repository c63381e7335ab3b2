/* Reading back a run's pfc.csv (t_ns,node,port,prio,event,duration_ns, written by the run):
 * the pause intervals that ended, for the analyses that place pauses on a timeline. */
#ifndef ROCESIM_PFC_CSV_H
#define ROCESIM_PFC_CSV_H
#include <stdint.h>
#include "models/topology.h"

struct pfc_interval {
    uint32_t node;      /* topology node index */
    uint32_t port;      /* port of that node (< its nports) */
    uint32_t prio;
    uint64_t from_ns, to_ns;
};

/* Calls fn for every "resume" row of path (or path.gz) naming a known node and port, in file order;
 * other rows, and a missing or unreadable file (no pauses), are passed over. */
void pfc_csv_each_interval(const struct topology *t, const char *path,
                           void (*fn)(void *ctx, const struct pfc_interval *iv), void *ctx);

#endif
