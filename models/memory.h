/* What a scenario will allocate, estimated from its keys before the large allocations, and
 * the limit it must stay under: the machine's memory, or `--max-memory`. A scenario past the
 * limit is refused with the estimate and the keys to change, instead of GLib aborting
 * minutes later. */
#ifndef ROCESIM_MEMORY_H
#define ROCESIM_MEMORY_H
#include <glib.h>
#include <stdint.h>

/* 0 restores the default: physical memory. */
void memory_set_limit(uint64_t bytes);
uint64_t memory_limit(void);
/* The limit is this machine's, and n processes on it each build the whole scenario (the
 * ranks of an MPI run on this machine): each estimate counts n times. 1 by default. */
void memory_set_copies(uint32_t n);
/* TRUE when NEED (for one process) fits the limit; otherwise FALSE and *why (g_free) says
 * "about X, more than the memory limit of Y (...)", to follow "need". */
gboolean memory_fits(uint64_t need, char **why);

/* Topology and routing tables of H hosts and S switches joined by L links (R next-hop
 * entries in the switch routing table). */
uint64_t memory_topology_bytes(uint64_t hosts, uint64_t switches, uint64_t links, uint64_t route_entries);
/* Schedule and simulator state per transfer (the transfer, its dependencies, its run-time
 * state, and array growth). */
uint64_t memory_transfer_bytes(void);

#endif
