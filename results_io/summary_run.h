/* The simulated run's summary.json: scenario, ports, metrics, jobs, warnings, engine. */
#ifndef ROCESIM_RESULTS_SUMMARY_RUN_H
#define ROCESIM_RESULTS_SUMMARY_RUN_H
#include "models/net.h"
#include "results_io/folder.h"
#include "results_io/outcome.h"
#include "results_io/read.h"

/* The simulated run's summary.json, in two steps, so that formatting it is part of the
 * output time it reports: summary_run_text formats all but the last member (the scenario,
 * every port, the metrics, jobs and warnings: 25 MB at 16384 hosts), summary_run_write adds
 * "engine", with fig's times, and writes the file into rd. Then summary_run_digest gives what
 * report.html needs without parsing every port again. */
struct summary_run {
    GString *text;            /* the document: open after summary_run_text, whole after
                               * summary_run_write */
    size_t ports_from;        /* its "ports" array's text: from '[' to just after ']' */
    size_t ports_to;
    guint ports;              /* the ports the array lists */
    GArray *busiest;          /* where the busiest ports' objects lie, the busiest first */
};
/* `busiest`: how many ports the digest keeps */
void summary_run_text(struct summary_run *sr, const struct net *n, const struct run_figures *fig, simtime_t end,
                      guint busiest);
gboolean summary_run_write(const struct results_dir *rd, struct summary_run *sr, const struct net *n,
                           const struct run_figures *fig, simtime_t end, GError **err);
/* The written document with only the busiest ports in its array (results_summary.ports_total
 * counts them all), parsed: a 16384-host run's report.html took 1.17 s to parse and sort all
 * 65 K ports (2026-12-07). The busiest are the first after a stable sort by
 * results_port_busier, as report.html's table sorts them. `path` is the file the errors
 * name. */
results_summary *summary_run_digest(const struct summary_run *sr, const char *path, GError **err);
void summary_run_clear(struct summary_run *sr);
/* A switch port's p99 queue depth from its time-weighted histogram (0 without one). */
uint64_t results_port_p99(const struct port_rt *p);

#endif
