/* Nodes, ports and links of a fabric, and ECMP next-hop sets toward every host.
 * Hosts are nodes 0..H-1 (leaf by leaf); switches follow. Every port has one peer. */
#ifndef ROCESIM_TOPOLOGY_H
#define ROCESIM_TOPOLOGY_H
#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "models/scenario.h"
#include "sim/simtime.h"

enum node_kind { NODE_HOST = 0, NODE_SWITCH };
/* What a node is, for per-layer results: every node of a plain fabric is LAYER_FABRIC; the
 * inside of a multi-GPU server (models/server.h) has the others. */
enum node_layer {
    LAYER_FABRIC = 0, LAYER_GPU, LAYER_HUB, LAYER_NVSWITCH, LAYER_PCIE, LAYER_SOCKET, LAYER_NIC,
    LAYER_LEAF, LAYER_SPINE, LAYER_MEM, LAYER_BOUNCE, LAYER_AGG,
};

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
    uint8_t layer;             /* enum node_layer */
    uint32_t server;           /* inside a server: its index */
    uint32_t unit;             /* inside a server: GPU, NIC, PCIe switch or socket number; leaf: rail */
};

/* A link between two nodes, before ports are numbered (topology_link_ports). */
struct topo_link {
    uint32_t a, b;
    uint64_t rate;
    simtime_t delay;
};

struct topology {
    uint32_t nhosts, nnodes, nports;
    struct topo_node *nodes;
    struct topo_port *ports;
    /* Routing. Hosts are single-homed, so every shortest path to host d runs through its
     * switch attach[d]: routes are kept per (switch, destination switch), S x S entries, and
     * the last hop is attach_port[d]. (A per-host table would grow as switches x hosts and
     * fall out of the cache at a few hundred hosts.) For switch s and destination switch a
     * the next hops are route_ports[route_off[i] .. + route_cnt[i]], i = (s-H)*S + (a-H);
     * pairs with the same list share it (bfs_routes).
     * Static routes of an edge-list file are per host: they go to host_off/host_cnt
     * (indexed by (s-H)*H + d, NONE when the pair has no static route). */
    uint32_t nswitches;
    uint32_t *attach;          /* host -> its switch node */
    uint16_t *attach_port;     /* host -> the switch's port toward it */
    uint32_t *route_off;
    uint16_t *route_cnt;
    uint16_t *route_ports;
    uint32_t nroute_ports;
    uint32_t *host_off;        /* static per-host routes, or NULL */
    uint16_t *host_cnt;
    uint32_t *sw_dist;         /* (s-H)*S + (a-H): links between switches */
    double oversubscription;   /* leaf downlink capacity / uplink capacity */
    /* multi-GPU servers (0 without [server]): hosts are GPUs, host = server * gpus + gpu */
    uint32_t servers, gpus_per_server, nics_per_server;
    uint32_t rails;            /* rail-optimised: rails (= NICs per server); 0 otherwise */
    uint32_t gpus;             /* GPU hosts (0..gpus-1); staging buffers follow them */
    uint32_t *bounce_host;     /* GPUDirect off: host of server v's NIC r staging buffer at
                                * [v * nics + r], UINT32_MAX where GPUDirect is on; or NULL */
};

struct topology *topology_build(const struct scenario *s, GError **err);

/* A [topology] kind (models/topology_registry.h): builds nodes, ports and links from the
 * scenario; *routes may be set to static per-host routes (an array the caller applies and
 * frees). topology_build then computes the shortest-path tables and checks connectivity. */
struct topology_kind {
    const char *name;
    struct topology *(*build)(const struct scenario *s, GArray **routes, GError **err);
};
#define TOPO_DECLARE_(id, name, symbol) extern const struct topology_kind symbol;
TOPOLOGY_KINDS(TOPO_DECLARE_)
#undef TOPO_DECLARE_
/* position i is [topology] kind's i-th choice */
extern const struct topology_kind *const topology_kinds[TOPO_COUNT];
/* Numbers the ports of t's nodes from the links (ports of one node are contiguous, in link
 * order) and fills t->ports / t->nports. */
void topology_link_ports(struct topology *t, GArray *links);
/* Multi-GPU servers and their cluster wiring (models/topology_rail.c): nodes and links, and
 * after topology_build's shortest-path tables, the bandwidth-weighted routes. */
struct topology *topology_servers_build(const struct scenario *s, GError **err);
void topology_servers_route(struct topology *t);
void topology_free(struct topology *t);
static inline const uint16_t *topology_routes(const struct topology *t, uint32_t node, uint32_t dst,
                                              uint32_t *count)
{
    uint32_t H = t->nhosts, a = t->attach[dst];
    if (t->host_off) {
        size_t hi = (size_t)(node - H) * H + dst;
        if (t->host_cnt[hi]) {
            *count = t->host_cnt[hi];
            return &t->route_ports[t->host_off[hi]];
        }
    }
    if (node == a) {
        *count = 1;
        return &t->attach_port[dst];
    }
    size_t idx = (size_t)(node - H) * t->nswitches + (a - H);
    *count = t->route_cnt[idx];
    return *count ? &t->route_ports[t->route_off[idx]] : NULL; /* route_ports may be NULL */
}
/* Shortest-path routes between switches over the links that are up: what the switches
 * converge to after a link failure. Same layout as the topology's own (route_off/cnt/ports,
 * indexed (s-H)*S + (a-H)). */
struct topo_routes {
    uint32_t *route_off;
    uint16_t *route_cnt;
    uint16_t *route_ports;
};
/* port_down[global port]: links to leave out (both ends are marked). */
struct topo_routes *topology_routes_without(const struct topology *t, const bool *port_down);
void topology_routes_free(struct topo_routes *r);

/* Links on a shortest path between two hosts (0 for a host to itself). */
uint32_t topology_hops(const struct topology *t, uint32_t src, uint32_t dst);
int64_t topology_find_node(const struct topology *t, const char *name);

#endif
