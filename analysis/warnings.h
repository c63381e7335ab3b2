/* The warnings a simulated run calls for, in summary.json, the summary table and report.html.
 * Each names where and how long; the thresholds are below and in the README ("Warnings"). */
#ifndef ROCESIM_WARNINGS_H
#define ROCESIM_WARNINGS_H
#include <glib.h>
#include "results_io/outcome.h"
#include "models/net.h"

/* A switch port whose queue stayed above WARN_QUEUE_KMAX times Kmax for at least
 * WARN_QUEUE_SHARE of the run: ECN is not what bounds it. */
#define WARN_QUEUE_KMAX 4.0
#define WARN_QUEUE_SHARE 0.10
/* A shared bottleneck under-used: a receiver's link fed by two or more senders at once (an
 * incast: that link is the bottleneck they share) idle for at least WARN_CC_IDLE_SHARE of the
 * time its transfers were in progress, while a sender to it sat idle with data that
 * congestion control held back for at least that share too. */
#define WARN_CC_IDLE_SHARE 0.10
/* A link paused (one priority) for at least WARN_PAUSED_SHARE of the run. */
#define WARN_PAUSED_SHARE 0.20

/* Appends the warnings (g_free'd strings) for a run that ended at `end` (n's transfers as the
 * run left them). */
void warnings_for_run(const struct net *n, simtime_t end, GPtrArray *out);

#endif
