#include "analysis/layers.h"
#include <string.h>
#include "sim/units.h"

static const char *const layer_names[] = { "nvlink", "pcie", "socket-link", "host-memory", "nic", "leaf",
                                           "aggregation", "spine" };
#define NLAYERS (sizeof layer_names / sizeof *layer_names)

static int layer_index(const struct topology *t, uint32_t port)
{
    const struct topo_port *p = &t->ports[port];
    uint8_t a = t->nodes[p->node].layer, b = t->nodes[t->ports[p->peer].node].layer;
    if (a == LAYER_GPU || b == LAYER_GPU || a == LAYER_FABRIC)
        return -1;
    if (a == LAYER_NVSWITCH || b == LAYER_NVSWITCH)
        return 0;
    if (a == LAYER_PCIE || b == LAYER_PCIE)
        return 1;
    if (a == LAYER_SOCKET && b == LAYER_SOCKET)
        return 2;
    if (a == LAYER_MEM || b == LAYER_MEM)
        return 3;
    if (a == LAYER_NIC)
        return 4;
    if (a == LAYER_LEAF)
        return 5;
    if (a == LAYER_AGG)
        return 6;
    if (a == LAYER_SPINE)
        return 7;
    return -1;
}

const char *layers_link_layer(const struct topology *t, uint32_t port)
{
    int i = layer_index(t, port);
    return i < 0 ? NULL : layer_names[i];
}

static void write_rails(const struct net *n, double secs, FILE *fr, GPtrArray *warnings)
{
    const struct topology *t = n->topo;
    uint32_t R = t->rails;
    double *bytes = g_new0(double, R), *wire = g_new0(double, R), *cap = g_new0(double, R);
    /* a rail's load: both directions of every NIC <-> leaf link of that rail */
    for (uint32_t i = 0; i < t->nports; i++) {
        const struct topo_port *p = &t->ports[i];
        const struct topo_node *a = &t->nodes[p->node], *b = &t->nodes[t->ports[p->peer].node];
        if (!((a->layer == LAYER_NIC && b->layer == LAYER_LEAF) || (a->layer == LAYER_LEAF && b->layer == LAYER_NIC)))
            continue;
        uint32_t r = a->layer == LAYER_LEAF ? a->unit : b->unit;
        bytes[r] += (double)n->ports[i].tx_bytes;
        wire[r] += (double)port_tx_wire_bytes(&n->ports[i]) * 8;
        cap[r] += (double)n->ports[i].rate * secs;
    }
    double total = 0, mean = 0;
    for (uint32_t r = 0; r < R; r++) {
        total += bytes[r];
        mean += cap[r] > 0 ? wire[r] / cap[r] / R : 0;
    }
    fprintf(fr, "rail,tx_bytes,share,utilisation,hot\n");
    for (uint32_t r = 0; r < R; r++) {
        double u = cap[r] > 0 ? wire[r] / cap[r] : 0;
        bool hot = R > 1 && u >= LAYERS_HOT_RAIL_FACTOR * mean && u >= LAYERS_HOT_RAIL_MIN_UTIL;
        fprintf(fr, "%u,%.0f,%.4f,%.4f,%d\n", r, bytes[r], total > 0 ? bytes[r] / total : 0, u, hot);
        if (hot)
            g_ptr_array_add(warnings, g_strdup_printf("hot rail: rail%u at %.1f%% utilisation, %.2fx the rails' mean "
                                                      "(%.1f%%); it carries %.1f%% of the rails' bytes",
                                                      r, 100 * u, u / mean, 100 * mean,
                                                      total > 0 ? 100 * bytes[r] / total : 0));
    }
    g_free(bytes);
    g_free(wire);
    g_free(cap);
}

void layers_write(const struct net *n, simtime_t end, FILE *fl, FILE *fr, GPtrArray *warnings)
{
    const struct topology *t = n->topo;
    double secs = (double)end / 1e12;
    uint32_t links[NLAYERS] = { 0 }, busiest[NLAYERS];
    double bytes[NLAYERS] = { 0 }, usum[NLAYERS] = { 0 }, umax[NLAYERS] = { 0 };
    for (uint32_t i = 0; i < t->nports; i++) {
        int l = layer_index(t, i);
        if (l < 0)
            continue;
        double u = port_utilisation(&n->ports[i], secs);
        if (!links[l] || u > umax[l]) {
            umax[l] = u;
            busiest[l] = i;
        }
        links[l]++;
        bytes[l] += (double)n->ports[i].tx_bytes;
        usum[l] += u;
    }
    int top = -1;
    for (size_t l = 0; l < NLAYERS; l++)
        if (links[l] && (top < 0 || umax[l] > umax[top]))
            top = (int)l;
    fprintf(fl, "layer,links,tx_bytes,mean_utilisation,max_utilisation,busiest_link,bottleneck\n");
    for (size_t l = 0; l < NLAYERS; l++) {
        if (!links[l])
            continue;
        const struct topo_port *p = &t->ports[busiest[l]];
        fprintf(fl, "%s,%u,%.0f,%.4f,%.4f,%s:%u->%s,%d\n", layer_names[l], links[l], bytes[l], usum[l] / links[l], umax[l],
                t->nodes[p->node].name, p->index, t->nodes[t->ports[p->peer].node].name, (int)l == top);
    }
    if (fr && t->rails)
        write_rails(n, secs, fr, warnings);
}
