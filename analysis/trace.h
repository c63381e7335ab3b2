/* A per-GPU timeline in the Chrome / Perfetto trace-event JSON format (trace.json): one
 * process per server, one thread per GPU (and per staging buffer), with the GPU's
 * transfers, its collective phases, its compute phases and the PFC pauses of its server's
 * links. Opens in ui.perfetto.dev and chrome://tracing. */
#ifndef ROCESIM_TRACE_H
#define ROCESIM_TRACE_H
#include <glib.h>
#include <stdio.h>
#include "models/net.h"

/* pfc_csv: the run's pfc.csv (read for the pauses; may be NULL). */
gboolean trace_write(const struct net *n, const char *pfc_csv, FILE *out, GError **err);

#endif
