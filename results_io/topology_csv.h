/* topology.csv (node,port,peer,peer_port,rate_bps,delay_ps): every port of the fabric. */
#ifndef ROCESIM_RESULTS_TOPOLOGY_CSV_H
#define ROCESIM_RESULTS_TOPOLOGY_CSV_H
#include <stdio.h>
#include "models/topology.h"

void results_write_topology(FILE *f, const struct topology *t);

#endif
