/* Results per layer of a cluster of multi-GPU servers: utilisation of the NVLink, PCIe,
 * inter-socket, NIC, rail-leaf and spine links (layers.csv), the load of every rail
 * (rails.csv) and the hot-rail warning. */
#ifndef ROCESIM_LAYERS_H
#define ROCESIM_LAYERS_H
#include <glib.h>
#include <stdio.h>
#include "models/net.h"

/* Which layer the link leaving port p belongs to ("nvlink", "pcie", ...), or NULL for a
 * GPU's own port and ports of plain fabrics. */
const char *layers_link_layer(const struct topology *t, uint32_t port);

/* A rail "carries clearly more than its share" when its utilisation is at least this many
 * times the mean of the rails' (and at least LAYERS_HOT_RAIL_MIN_UTIL). */
#define LAYERS_HOT_RAIL_FACTOR 1.25
#define LAYERS_HOT_RAIL_MIN_UTIL 0.3

/* Writes layers.csv to fl and, for a rail-optimised fabric, rails.csv to fr (may be NULL);
 * appends warnings (g_strdup'ed) to `warnings`. `end` is the run's end time. */
void layers_write(const struct net *n, simtime_t end, FILE *fl, FILE *fr, GPtrArray *warnings);

#endif
