/* Which CPUs the points of a sweep with --workers auto run on. The points running at once
 * (its lanes) share out the CPUs this process may use: each lane gets max(1, n / lanes)
 * of them, and its point runs pinned to them with `run --workers auto`, which then takes
 * one thread per CPU of its share (as many as its fabric splits into). Pinning keeps two
 * points off each other's cores, which they would otherwise contend for while each
 * believed it had the whole machine. */
#ifndef ROCESIM_SWEEP_CPUS_H
#define ROCESIM_SWEEP_CPUS_H
#include <glib.h>
#include "tune/mpi_split.h"

/* This process's CPUs (ids, ascending) into cpu[] (room for CPU_SETSIZE) from its affinity
 * mask, narrowed as sweep_cpus_share says, then to the first as many as a cgroup CPU quota
 * grants (cpus_available); returns how many (at least 1: CPU 0 when the mask cannot be
 * read). */
guint sweep_cpus_mine(const struct mpi_split *m, int *cpu);
/* The part of `all` (n CPU ids, the affinity mask's) that is this rank's: when the mask holds
 * every CPU online (`online`, the ranks were not bound to cores) and the launcher started
 * local_size > 1 ranks on this host, the local_rank-th of local_size equal parts of at least
 * one CPU (sweep_default_jobs runs that many points at once); else all of it. Moves that part to the front
 * of `all` and returns its length. */
guint sweep_cpus_share(int *all, guint n, guint online, int local_rank, int local_size);
/* Lane k of `lanes` over the n CPUs of cpu[]: w = max(1, n / lanes) consecutive ones from
 * k * w (wrapping round when there are fewer CPUs than lanes) into out[]; returns w. */
guint sweep_lane_cpus(const int *cpu, guint n, guint lanes, guint k, int *out);

#endif
