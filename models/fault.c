/* [fault NAME] sections: a NIC whose receive pipeline stops draining (the classic
 * pause-storm trigger) and a link that goes down for a while. */
#include "models/server.h"
#include <string.h>
#include "models/net.h"
#include "sim/units.h"

/* The keys of a [fault NAME] per kind (sim/config.h struct cfg_kind). */
const struct cfg_kind fault_kinds[] = {
    { "*", "kind! node! at for" },
    { "nic-stall", "at!" },
    { "link-down", "port! at!" },
    /* locality faults of multi-GPU servers: for the whole run (models/server_faults.c) */
    { "nic-numa", "pcie" },
    { "pcie-width", "width!" },
    { "link-speed", "rate!" },
    { "nic-down", "" },
    { "nvlink-down", "" },
    { "no-gpudirect", "" },
    { NULL, NULL },
};

struct fault_rt {
    int kind;                  /* 0 nic-stall, 1 link-down */
    uint32_t node, port;       /* port: global index (link-down) */
    simtime_t at, dur;
};

/* Node by name (host3, leaf0, spine1, or an edge file's name) or by host number. */
static gboolean fault_node(const struct net *n, const char *text, uint32_t *node)
{
    int64_t idx = topology_find_node(n->topo, text);
    if (idx >= 0) {
        *node = (uint32_t)idx;
        return TRUE;
    }
    char *end;
    guint64 v = g_ascii_strtoull(text, &end, 10);
    if (*text && !*end && v < n->topo->nhosts) {
        *node = (uint32_t)v;
        return TRUE;
    }
    return FALSE;
}

static void stall_begin(void *ctx, uint64_t host)
{
    struct net *n = ctx;
    n->hosts[host].stalled = true;
}

static void stall_end(void *ctx, uint64_t host)
{
    struct net *n = ctx;
    nic_rx_drain(n, &n->hosts[host]);
}

/* Drops whatever waits in a switch port's egress queues (the link under it is gone). The
 * global entity does it, for the node's process (in an MPI run every rank has a copy). */
static void flush_port(struct net *n, struct port_rt *p)
{
    if (p->is_host || !net_mine(n, p->node))
        return;
    for (int q = 0; q < NPRIO; q++)
        switch_drop_queue(n, p, q);
}

/* The routing protocol has converged: every switch now routes around the links that are
 * down at this moment (or back over the ones that came up). Until then only the switches at
 * the ends of a failed link avoid it (switch_receive skips a down port of an ECMP group). */
static void routes_converged(void *ctx, uint64_t arg)
{
    (void)arg;
    struct net *n = ctx;
    bool *down = g_new0(bool, n->topo->nports);
    bool any = false;
    for (uint32_t i = 0; i < n->topo->nports; i++)
        any |= down[i] = n->ports[i].down;
    topology_routes_free(n->converged);
    n->converged = any ? topology_routes_without(n->topo, down) : NULL;
    g_free(down);
}

static void link_down(void *ctx, uint64_t port)
{
    struct net *n = ctx;
    struct port_rt *a = &n->ports[port], *b = &n->ports[a->peer];
    if (!a->down)
        n->links_down++;
    a->down = b->down = true;
    flush_port(n, a);
    flush_port(n, b);
    engine_at(net_eng(n), net_now(n) + n->sc->route_convergence, routes_converged, n, 0);
}

static void link_up(void *ctx, uint64_t port)
{
    struct net *n = ctx;
    struct port_rt *a = &n->ports[port], *b = &n->ports[a->peer];
    if (a->down)
        n->links_down--;
    a->down = b->down = false;
    if (net_mine(n, a->node))
        port_kick(n, a);
    if (net_mine(n, b->node))
        port_kick(n, b);
    engine_at(net_eng(n), net_now(n) + n->sc->route_convergence, routes_converged, n, 0);
}

void faults_register_handlers(struct net *n)
{
    struct engine *e = net_eng(n);
    engine_handler(e, routes_converged, n);
    engine_handler(e, link_down, n);
    engine_handler(e, link_up, n);
    engine_handler(e, stall_begin, n);
    engine_handler(e, stall_end, n);
}

gboolean faults_schedule(struct net *n, GError **err)
{
    const struct scenario *sc = n->sc;
    for (guint i = 0; i < sc->faults->len; i++) {
        const struct named_section *f = g_ptr_array_index(sc->faults, i);
        if (server_fault_is_locality(f->kind)) {
            if (n->topo->servers)
                continue; /* applied when the servers were built (models/server_faults.c) */
            char *grp = g_strdup_printf("fault %s", f->name);
            scenario_key_error(err, sc, grp, "kind", f->kind, "a locality fault needs multi-GPU servers ([server])");
            g_free(grp);
            return FALSE;
        }
        char *group = g_strdup_printf("fault %s", f->name);
        const char *node_text = g_hash_table_lookup(f->keys, "node");
        const char *at_text = g_hash_table_lookup(f->keys, "at");
        const char *for_text = g_hash_table_lookup(f->keys, "for");
        uint32_t node;
        simtime_t at, dur = SIMTIME_NEVER;
        char *why = NULL;
        gboolean ok = TRUE;
        if (!fault_node(n, node_text, &node)) {
            scenario_key_error(err, sc, group, "node", node_text, "no such node: expected a name such as host3 or leaf0, or a host number");
            ok = FALSE;
        } else if (!units_parse_time(at_text, &at, &why)) {
            g_set_error(err, SCENARIO_ERROR, 1, "%s: [%s] at: %s", sc->path, group, why);
            ok = FALSE;
        } else if (for_text && (!units_parse_time(for_text, &dur, &why) || dur == 0)) {
            scenario_key_error(err, sc, group, "for", for_text, "%s", why ? why : "expected a positive duration");
            ok = FALSE;
        }
        g_free(why);
        if (ok && !strcmp(f->kind, "nic-stall")) {
            if (n->topo->nodes[node].kind != NODE_HOST) {
                scenario_key_error(err, sc, group, "node", node_text, "a nic-stall needs a host");
                ok = FALSE;
            } else {
                engine_at_on(net_eng(n), at, node, stall_begin, n, node);
                if (dur != SIMTIME_NEVER)
                    engine_at_on(net_eng(n), at + dur, node, stall_end, n, node);
            }
        } else if (ok) {
            const char *port_text = g_hash_table_lookup(f->keys, "port");
            char *end;
            guint64 port = g_ascii_strtoull(port_text, &end, 10);
            if (!*port_text || *end || port >= n->topo->nodes[node].nports) {
                scenario_key_error(err, sc, group, "port", port_text, "expected a port of %s from 0 to %u",
                                   n->topo->nodes[node].name, n->topo->nodes[node].nports - 1);
                ok = FALSE;
            } else {
                uint32_t gp = n->topo->nodes[node].first_port + (uint32_t)port;
                engine_at(net_eng(n), at, link_down, n, gp);
                if (dur != SIMTIME_NEVER)
                    engine_at(net_eng(n), at + dur, link_up, n, gp);
            }
        }
        g_free(group);
        if (!ok)
            return FALSE;
    }
    return TRUE;
}

/* While stalled, the NIC keeps what arrives in its receive buffer; past the XOFF point it
 * pauses the link (if its PFC is on); past the buffer it drops. */
bool nic_rx_stalled(struct net *n, struct host_rt *h, uint32_t i)
{
    if (!h->stalled)
        return false;
    struct packet *pk = &n->pool[i];
    struct port_rt *port = &n->ports[h->port];
    if (h->rxq.bytes + pk->frame > n->sc->nic_rx_buffer) {
        h->rx_drops++;
        net_st(n)->drops++;
        net_st(n)->drops_prio[pk->prio]++;
        if (n->sc->nic_pfc && (n->sc->lossless_mask & (1u << pk->prio)))
            net_st(n)->drops_lossless++;
        pkt_free(n, i);
        return true;
    }
    pktq_push(n, &h->rxq, i);
    if (n->sc->nic_pfc && (n->sc->lossless_mask & (1u << pk->prio)) && h->rxq.bytes >= h->rx_xoff)
        pfc_request(n, port, pk->prio, true);
    return true;
}

void nic_rx_drain(struct net *n, struct host_rt *h)
{
    h->stalled = false;
    struct port_rt *port = &n->ports[h->port];
    while (h->rxq.pkts) {
        uint32_t i = pktq_pop(n, &h->rxq);
        nic_receive(n, port, i);
    }
    for (int q = 0; q < NPRIO; q++)
        pfc_request(n, port, q, false);
}
