/* A sweep point's files, shared by the grid (tune/sweep.c) and the process pool
 * (tune/sweep_pool.c). */
#ifndef ROCESIM_SWEEP_POINT_H
#define ROCESIM_SWEEP_POINT_H
#include "tune/sweep.h"

/* DIR/points/NAME followed by SUFFIX ("" the results folder, ".log", ".failed"). */
char *sweep_point_path(const struct sweep *s, const struct sweep_point *p, const char *suffix);
/* TRUE when the point's folder holds a complete summary.json of this point's settings; its
 * metrics are loaded into p. */
gboolean sweep_point_load_results(const struct sweep *s, struct sweep_point *p);
/* The last lines of a log file (at most 6 lines or 1500 bytes), for a failure message. */
char *sweep_log_tail(const char *path);
/* Removes leftovers of an interrupted run of the point: the results folder's temporary
 * siblings, the log and the failure marker. */
void sweep_point_clean(const struct sweep *s, const struct sweep_point *p);

#endif
