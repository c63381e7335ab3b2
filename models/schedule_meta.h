/* The v2 schedule's meta lines from the scenario and fabric that produced the schedule. */
#ifndef ROCESIM_SCHEDULE_META_H
#define ROCESIM_SCHEDULE_META_H
#include "models/schedule.h"
#include "models/topology.h"
#include "models/scenario.h"

/* SHA-256 of the fabric's port list (one "node,port,peer,peer_port,rate_bps,delay_ps" line
 * per port, as topology.csv has them), as "sha256:<64 hex digits>". Caller frees. */
char *topology_digest(const struct topology *t);
/* Fills s->meta: hosts, mtu and host rate from the scenario, DSCP = 8 x priority (see
 * schedule_io.h), the topology digest. */
void schedule_set_meta(struct schedule *s, const struct scenario *sc, const struct topology *t);

#endif
