/* The simulated run's summary.json: scenario, ports, metrics, jobs, warnings, engine. */
#ifndef ROCESIM_RESULTS_SUMMARY_RUN_H
#define ROCESIM_RESULTS_SUMMARY_RUN_H
#include "models/net.h"
#include "results_io/folder.h"
#include "results_io/outcome.h"

/* The simulated run's summary.json, in two steps, so that formatting it is part of the
 * output time it reports: summary_run_text formats all but the last member (the scenario,
 * every port, the metrics, jobs and warnings: 25 MB at 16384 hosts), summary_run_write adds
 * "engine", with fig's times, and writes the file into rd. */
GString *summary_run_text(const struct net *n, const struct run_figures *fig, simtime_t end);
/* (consumes text, whether it writes the file or not) */
gboolean summary_run_write(const struct results_dir *rd, GString *text, const struct net *n,
                           const struct run_figures *fig, simtime_t end, GError **err);
/* A switch port's p99 queue depth from its time-weighted histogram (0 without one). */
uint64_t results_port_p99(const struct port_rt *p);

#endif
