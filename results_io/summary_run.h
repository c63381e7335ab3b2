/* The simulated run's summary.json: scenario, ports, metrics, jobs, warnings, engine. */
#ifndef ROCESIM_RESULTS_SUMMARY_RUN_H
#define ROCESIM_RESULTS_SUMMARY_RUN_H
#include "models/net.h"
#include "results_io/folder.h"
#include "results_io/outcome.h"

/* The simulated run's summary.json, written into rd. */
gboolean summary_write_run(const struct results_dir *rd, const struct net *n, const struct run_figures *fig,
                             simtime_t end, GError **err);
/* A switch port's p99 queue depth from its time-weighted histogram (0 without one). */
uint64_t results_port_p99(const struct port_rt *p);

#endif
