/* Nodes, ports and links of a fabric, and ECMP next-hop sets toward every host.
 * Hosts are nodes 0..H-1 (leaf by leaf); switches follow. Every port has one peer. */
#ifndef ROCESIM_TOPOLOGY_H
#define ROCESIM_TOPOLOGY_H
#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "sim/scenario.h"
#include "sim/simtime.h"

enum node_kind { NODE_HOST = 0, NODE_SWITCH };

struct topo_port {
    uint32_t node, index;      /* owner and its port number */
    uint32_t peer;             /* global port index of the far end */
    uint64_t rate_bps;
    simtime_t delay_ps;
};

struct topo_node {
    enum node_kind kind;
    char name[24];             /* host3, leaf0, spine1, or the edge file's name */
    uint32_t first_port, nports; /* global port indices [first, first+n) */
    uint32_t tier;             /* 0 host, 1 leaf, 2 spine (informational) */
};

struct topology {
    uint32_t nhosts, nnodes, nports;
    struct topo_node *nodes;
    struct topo_port *ports;
    /* routes: for switch node s and destination host d, next hops are
     * route_ports[route_off[idx] .. + route_cnt[idx]] (local port numbers), idx = s*nhosts+d */
    uint32_t *route_off;
    uint16_t *route_cnt;
    uint16_t *route_ports;
    uint32_t nroute_ports;
    uint32_t *hops;            /* hops[h*nhosts+d]: links on a shortest path from host h to d */
    double oversubscription;   /* leaf downlink capacity / uplink capacity */
};

struct topology *topology_build(const struct scenario *s, GError **err);
void topology_free(struct topology *t);
static inline const uint16_t *topology_routes(const struct topology *t, uint32_t node, uint32_t dst,
                                              uint32_t *count)
{
    uint32_t idx = node * t->nhosts + dst;
    *count = t->route_cnt[idx];
    return &t->route_ports[t->route_off[idx]];
}
/* Node index by name, or -1. */
int64_t topology_find_node(const struct topology *t, const char *name);

#endif
