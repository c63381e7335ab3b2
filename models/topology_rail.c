/* Clusters of multi-GPU servers: the inside of every server (models/server.h) and the
 * wiring of their NICs, rail-optimised or a plain leaf-spine.
 *
 * rail-optimised: NIC r of every server of rail group k (servers k*G .. k*G+G-1, G =
 * [cluster] rail_group) is on leaf "rail<r>.leaf<k>"; every leaf has an uplink to each of the
 * [topology] spines. leaf-spine: the NIC ports, server by server, fill [topology]
 * hosts_per_leaf ports per leaf. fat-tree: the 3-tier k-ary fat-tree of [cluster] k-port
 * switches (k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 cores, every link at
 * fabric_rate), the NIC ports filling the edge switches' k/2 down ports in order.
 *
 * Routing: every switch forwards toward a GPU along the paths of least cost, a link costing
 * the time to move 64 KiB over it plus its latency; equal-cost next hops form an ECMP set.
 * From another server a GPU is reached only through its own NIC (NIC gpu * nics / gpus, the
 * one on its PCIe switch), and senders use their NIC of the same number, so traffic stays on
 * the GPU's rail (crossing the spines only between rail groups); and in the sending server
 * only the GPUs of that rail put it on PCIe: the others carry it over NVLink to such a GPU
 * first (NCCL's PXN), never across the spines or to a neighbour's NIC (a GPU whose NVLink is
 * down uses PCIe for everything). GPUs of one server talk over NVLink. */
#include "models/topology.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "models/server.h"

struct tb {
    GArray *nodes, *links;
};

static uint32_t node(struct tb *b, enum node_kind kind, enum node_layer layer, uint32_t server, uint32_t unit,
                     const char *fmt, ...) G_GNUC_PRINTF(6, 7);
static uint32_t node(struct tb *b, enum node_kind kind, enum node_layer layer, uint32_t server, uint32_t unit,
                     const char *fmt, ...)
{
    struct topo_node n = { .kind = kind, .layer = (uint8_t)layer, .server = server, .unit = unit };
    n.tier = layer == LAYER_SPINE ? 2 : layer == LAYER_LEAF ? 1 : 0;
    va_list ap;
    va_start(ap, fmt);
    g_vsnprintf(n.name, sizeof n.name, fmt, ap);
    va_end(ap);
    g_array_append_val(b->nodes, n);
    return b->nodes->len - 1;
}

static void link(struct tb *b, uint32_t x, uint32_t y, uint64_t rate, simtime_t delay)
{
    struct topo_link l = { x, y, rate, delay };
    g_array_append_val(b->links, l);
}

struct topology *topology_servers_build(const struct scenario *s, GError **err)
{
    struct server_desc sd;
    struct cluster_desc cd;
    if (!server_load(s, &sd, &cd, err))
        return NULL;
    if (s->topo == TOPO_EDGES) {
        scenario_key_error(err, s, "topology", "kind", "edges",
                           "servers ([server], [cluster]) are wired rail-optimised or leaf-spine");
        server_desc_clear(&sd);
        return NULL;
    }
    const uint32_t S = cd.servers, G = sd.gpus, N = sd.nics;
    const bool rail = s->topo == TOPO_RAIL, fat = s->topo == TOPO_FATTREE;
    const uint32_t half = cd.k / 2;
    uint32_t groups = (S + cd.rail_group - 1) / cd.rail_group;
    uint32_t nleaves = rail ? groups * N : (S * N + s->hosts_per_leaf - 1) / s->hosts_per_leaf;
    uint32_t nspines = nleaves > 1 ? s->spines : 0;
    if (fat && (uint64_t)S * N > (uint64_t)cd.k * half * half) {
        char v[16];
        snprintf(v, sizeof v, "%u", cd.k);
        scenario_key_error(err, s, "cluster", "k", v, "a fat-tree of %u-port switches has %u host ports: %u NICs do not fit",
                           cd.k, cd.k * half * half, S * N);
        server_desc_clear(&sd);
        return NULL;
    }
    if (fat) { /* k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 cores */
        nleaves = cd.k * half;
        nspines = half * half;
    }
    /* rails of one group meet inside the servers (over NVLink), so they need no spine */
    if (!fat && (rail ? groups : nleaves) > 1 && nspines == 0) {
        scenario_key_error(err, s, "topology", "spines", "0", "%u leaves need at least one spine", nleaves);
        server_desc_clear(&sd);
        return NULL;
    }
    struct server_inst *inst = server_faults_apply(s, &sd, &cd, err);
    if (!inst) {
        server_desc_clear(&sd);
        return NULL;
    }
    struct tb b = { g_array_new(FALSE, FALSE, sizeof(struct topo_node)),
                    g_array_new(FALSE, FALSE, sizeof(struct topo_link)) };
    for (uint32_t v = 0; v < S; v++)
        for (uint32_t g = 0; g < G; g++)
            node(&b, NODE_HOST, LAYER_GPU, v, g, "srv%u.gpu%u", v, g);
    uint32_t *bounce = NULL;
    for (uint32_t v = 0; v < S; v++)
        for (uint32_t r = 0; r < N && inst[v].no_gpudirect; r++) {
            if (!bounce) {
                bounce = g_new(uint32_t, (size_t)S * N);
                memset(bounce, 0xff, sizeof(uint32_t) * S * N);
            }
            bounce[v * N + r] = node(&b, NODE_HOST, LAYER_BOUNCE, v, r, "srv%u.nic%u.buf", v, r);
        }
    uint32_t *nic_node = g_new(uint32_t, (size_t)S * N);
    for (uint32_t v = 0; v < S; v++) {
        uint32_t hub0 = b.nodes->len;
        for (uint32_t g = 0; g < G; g++)
            node(&b, NODE_SWITCH, LAYER_HUB, v, g, "srv%u.gpu%u.hub", v, g);
        uint32_t nvs = G > 1 ? node(&b, NODE_SWITCH, LAYER_NVSWITCH, v, 0, "srv%u.nvswitch", v) : 0;
        uint32_t pcie0 = b.nodes->len;
        for (uint32_t p = 0; p < sd.pcie_switches; p++)
            node(&b, NODE_SWITCH, LAYER_PCIE, v, p, "srv%u.pcie%u", v, p);
        uint32_t cpu0 = b.nodes->len;
        for (uint32_t c = 0; c < sd.sockets; c++)
            node(&b, NODE_SWITCH, LAYER_SOCKET, v, c, "srv%u.cpu%u", v, c);
        for (uint32_t r = 0; r < N; r++)
            nic_node[v * N + r] = node(&b, NODE_SWITCH, LAYER_NIC, v, r, "srv%u.nic%u", v, r);
        uint32_t mem0 = b.nodes->len;
        for (uint32_t c = 0; c < sd.sockets; c++)
            node(&b, NODE_SWITCH, LAYER_MEM, v, c, "srv%u.mem%u", v, c);
        /* the GPU's own link to its hub comes first: a host's port 0 is its only port */
        for (uint32_t g = 0; g < G; g++)
            link(&b, v * G + g, hub0 + g, sd.nvlink_rate, 0);
        const struct server_inst *x = &inst[v];
        for (uint32_t g = 0; g < G && G > 1; g++)
            if (!x->nvlink_down[g])
                link(&b, hub0 + g, nvs, sd.nvlink_rate, sd.nvlink_latency);
        for (uint32_t g = 0; g < G; g++)
            link(&b, hub0 + g, pcie0 + sd.gpu_pcie[g], x->gpu_pcie_rate[g], sd.pcie_latency);
        for (uint32_t r = 0; r < N; r++)
            link(&b, nic_node[v * N + r], pcie0 + x->nic_pcie[r], x->nic_pcie_rate[r], sd.pcie_latency);
        for (uint32_t p = 0; p < sd.pcie_switches; p++)
            link(&b, pcie0 + p, cpu0 + sd.pcie_socket[p], x->uplink_rate[p], sd.pcie_latency);
        for (uint32_t c = 0; c < sd.sockets; c++)
            for (uint32_t d = c + 1; d < sd.sockets; d++)
                link(&b, cpu0 + c, cpu0 + d, sd.socket_link_rate, sd.socket_link_latency);
        for (uint32_t c = 0; c < sd.sockets; c++)
            link(&b, cpu0 + c, mem0 + c, sd.host_memory_rate, 0);
        /* the staging buffer of a NIC is in the memory of the NIC's socket */
        for (uint32_t r = 0; r < N && bounce; r++)
            if (bounce[v * N + r] != UINT32_MAX)
                link(&b, bounce[v * N + r], mem0 + sd.pcie_socket[x->nic_pcie[r]], sd.host_memory_rate, 0);
    }
    uint32_t leaf0 = b.nodes->len;
    for (uint32_t l = 0; l < nleaves; l++) {
        if (rail)
            node(&b, NODE_SWITCH, LAYER_LEAF, 0, l % N, "rail%u.leaf%u", l % N, l / N);
        else if (fat)
            node(&b, NODE_SWITCH, LAYER_LEAF, 0, 0, "pod%u.edge%u", l / half, l % half);
        else
            node(&b, NODE_SWITCH, LAYER_LEAF, 0, 0, "leaf%u", l);
    }
    uint32_t agg0 = b.nodes->len;
    for (uint32_t a = 0; fat && a < cd.k * half; a++)
        node(&b, NODE_SWITCH, LAYER_AGG, 0, 0, "pod%u.agg%u", a / half, a % half);
    uint32_t spine0 = b.nodes->len;
    for (uint32_t sp = 0; sp < nspines; sp++)
        node(&b, NODE_SWITCH, LAYER_SPINE, 0, 0, fat ? "core%u" : "spine%u", sp);
    for (uint32_t v = 0; v < S; v++)
        for (uint32_t r = 0; r < N; r++) {
            uint32_t leaf = rail ? (v / cd.rail_group) * N + r : (v * N + r) / (fat ? half : s->hosts_per_leaf);
            if (!inst[v].nic_down[r])
                link(&b, nic_node[v * N + r], leaf0 + leaf, inst[v].nic_rate[r], s->host_link_delay);
        }
    for (uint32_t l = 0; l < nleaves && !fat; l++)
        for (uint32_t sp = 0; sp < nspines; sp++)
            link(&b, leaf0 + l, spine0 + sp, s->fabric_rate, s->link_delay);
    for (uint32_t l = 0; l < nleaves && fat; l++) /* edge -> every aggregation switch of its pod */
        for (uint32_t a = 0; a < half; a++)
            link(&b, leaf0 + l, agg0 + (l / half) * half + a, s->fabric_rate, s->link_delay);
    for (uint32_t a = 0; a < cd.k * half && fat; a++) /* aggregation j of a pod -> cores j*k/2 .. */
        for (uint32_t c = 0; c < half; c++)
            link(&b, agg0 + a, spine0 + (a % half) * half + c, s->fabric_rate, s->link_delay);

    struct topology *t = g_new0(struct topology, 1);
    t->nhosts = S * G;
    t->gpus = S * G;
    t->bounce_host = bounce;
    for (uint32_t v = 0; bounce && v < S * N; v++)
        t->nhosts += bounce[v] != UINT32_MAX;
    t->nnodes = b.nodes->len;
    t->nodes = (struct topo_node *)g_array_free(b.nodes, FALSE);
    topology_link_ports(t, b.links);
    g_array_free(b.links, TRUE);
    t->servers = S;
    t->gpus_per_server = G;
    t->nics_per_server = N;
    t->rails = rail ? N : 0;
    uint32_t down = rail ? (S < cd.rail_group ? S : cd.rail_group) : fat ? half : s->hosts_per_leaf;
    double up = (double)(fat ? half : nspines) * (double)s->fabric_rate;
    t->oversubscription = up > 0 ? (double)down * (double)sd.nic_rate / up : 0;
    g_free(nic_node);
    g_free(inst);
    server_desc_clear(&sd);
    return t;
}

/* ---------- routing ---------- */

static uint64_t link_cost(const struct topo_port *p)
{
    return (uint64_t)(65536.0 * 8 * 1e12 / (double)p->rate_bps) + p->delay_ps + 1;
}

struct heap {
    uint64_t *key;
    uint32_t *node;
    uint32_t n;
};

static void heap_push(struct heap *h, uint64_t k, uint32_t v)
{
    uint32_t i = h->n++;
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (h->key[p] <= k)
            break;
        h->key[i] = h->key[p];
        h->node[i] = h->node[p];
        i = p;
    }
    h->key[i] = k;
    h->node[i] = v;
}

static void heap_pop(struct heap *h, uint64_t *k, uint32_t *v)
{
    *k = h->key[0];
    *v = h->node[0];
    uint64_t lk = h->key[--h->n];
    uint32_t lv = h->node[h->n];
    uint32_t i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->key[c + 1] < h->key[c])
            c++;
        if (h->key[c] >= lk)
            break;
        h->key[i] = h->key[c];
        h->node[i] = h->node[c];
        i = c;
    }
    h->key[i] = lk;
    h->node[i] = lv;
}

/* Dijkstra from every GPU's hub over the switch graph (links are symmetric, so distances to
 * the hub are distances from it); next hops of switch s toward GPU d are the neighbours v
 * with dist[v] + cost(s, v) == dist[s]. They replace the hop-count routes as static
 * per-host routes. */
/* NIC r of server v, by node (UINT32_MAX where absent), and whether it has its fabric link. */
static bool nic_up(const struct topology *t, const uint32_t *nic, uint32_t v, uint32_t r)
{
    uint32_t id = nic[v * t->nics_per_server + r];
    return id != UINT32_MAX && t->nodes[id].nports == 2;
}

/* The NIC a GPU (or a staging buffer) sends and receives by: its own (the one of its number,
 * GPU g * nics / gpus), or if that NIC is down another one under the same PCIe switch, else
 * the lowest-numbered one that is up. `pcie_of` gives a hub's or NIC's PCIe switch node. */
static uint32_t home_nic(const struct topology *t, const uint32_t *nic, const uint32_t *pcie_of, uint32_t node)
{
    const struct topo_node *nd = &t->nodes[node];
    uint32_t v = nd->server, h = nd->layer == LAYER_BOUNCE ? nd->unit : nd->unit * t->nics_per_server / t->gpus_per_server;
    if (nic_up(t, nic, v, h) || nd->layer == LAYER_BOUNCE)
        return h;
    uint32_t hub = t->ports[t->ports[nd->first_port].peer].node, any = h;
    for (uint32_t r = t->nics_per_server; r-- > 0;)
        if (nic_up(t, nic, v, r)) {
            any = r;
            if (pcie_of[nic[v * t->nics_per_server + r]] == pcie_of[hub])
                return r;
        }
    return any;
}

void topology_servers_route(struct topology *t)
{
    const uint32_t H = t->nhosts, S = t->nswitches;
    const uint32_t N = t->nics_per_server;
    uint32_t *nic = g_new(uint32_t, (size_t)t->servers * N);
    uint32_t *pcie_of = g_new(uint32_t, t->nnodes);
    memset(nic, 0xff, sizeof(uint32_t) * t->servers * N);
    for (uint32_t i = 0; i < t->nnodes; i++) {
        const struct topo_node *nd = &t->nodes[i];
        pcie_of[i] = UINT32_MAX;
        if (nd->layer == LAYER_NIC)
            nic[nd->server * N + nd->unit] = i;
        for (uint32_t p = 0; p < nd->nports && (nd->layer == LAYER_NIC || nd->layer == LAYER_HUB); p++) {
            uint32_t peer = t->ports[t->ports[nd->first_port + p].peer].node;
            if (t->nodes[peer].layer == LAYER_PCIE)
                pcie_of[i] = peer;
        }
    }
    /* a hub's GPU's NIC, for the PXN rule */
    uint32_t *hub_home = g_new(uint32_t, t->nnodes);
    for (uint32_t i = 0; i < t->nnodes; i++)
        hub_home[i] = UINT32_MAX;
    for (uint32_t g = 0; g < H; g++)
        if (t->nodes[g].layer == LAYER_GPU)
            hub_home[t->attach[g]] = home_nic(t, nic, pcie_of, g);
    uint64_t *dist = g_new(uint64_t, S);
    struct heap h = { g_new(uint64_t, t->nports + 1), g_new(uint32_t, t->nports + 1), 0 };
    GArray *rp = g_array_new(FALSE, FALSE, sizeof(uint16_t));
    g_array_append_vals(rp, t->route_ports, t->nroute_ports);
    g_free(t->host_off);
    g_free(t->host_cnt);
    t->host_off = g_new0(uint32_t, (size_t)S * H + 1);
    t->host_cnt = g_new0(uint16_t, (size_t)S * H + 1);
    for (uint32_t d = 0; d < H; d++) {
        for (uint32_t i = 0; i < S; i++)
            dist[i] = UINT64_MAX;
        uint32_t a = t->attach[d] - H;
        /* from other servers a GPU is reached through its own NIC only, and every server sends
         * to it through its NIC of the same number (NCCL's rail-local rings and PXN): other
         * NICs are not on its paths */
        uint32_t dsrv = t->nodes[d].server, home = home_nic(t, nic, pcie_of, d);
        dist[a] = 0;
        h.n = 0;
        heap_push(&h, 0, a);
        while (h.n) {
            uint64_t k;
            uint32_t u;
            heap_pop(&h, &k, &u);
            if (k > dist[u])
                continue;
            const struct topo_node *nu = &t->nodes[H + u];
            for (uint32_t p = 0; p < nu->nports; p++) {
                const struct topo_port *tp = &t->ports[nu->first_port + p];
                uint32_t v = t->ports[tp->peer].node;
                const struct topo_node *nv = &t->nodes[v];
                /* a server whose NIC of that number is down sends by any of its NICs */
                bool any_nic = nv->server != dsrv && !nic_up(t, nic, nv->server, home);
                if (nv->kind != NODE_SWITCH || (nv->layer == LAYER_NIC && nv->unit != home && !any_nic))
                    continue;
                /* data leaves PCIe for the destination GPU itself, never for a GPU that
                 * would relay it over NVLink */
                if (nu->layer == LAYER_HUB && nv->layer == LAYER_PCIE && u != a && nu->nports == 3)
                    continue;
                /* PXN: toward another server's GPU, only the GPUs of the destination's rail
                 * put data on PCIe (to that rail's NIC); the others relay over NVLink */
                if (nu->layer == LAYER_PCIE && nv->layer == LAYER_HUB && nv->server != dsrv && nv->nports == 3 &&
                    hub_home[v] != home && !any_nic)
                    continue;
                uint64_t nd = k + link_cost(tp);
                if (nd < dist[v - H]) {
                    dist[v - H] = nd;
                    heap_push(&h, nd, v - H);
                }
            }
        }
        for (uint32_t sw = 0; sw < S; sw++) {
            size_t idx = (size_t)sw * H + d;
            if (sw == a || dist[sw] == UINT64_MAX)
                continue;
            /* an excluded NIC still forwards what reaches it (from its own GPUs' paths) by the
             * hop-count tables; nothing routed here is sent to it */
            const struct topo_node *ns = &t->nodes[H + sw];
            t->host_off[idx] = rp->len;
            for (uint32_t p = 0; p < ns->nports; p++) {
                const struct topo_port *tp = &t->ports[ns->first_port + p];
                uint32_t v = t->ports[tp->peer].node;
                if (t->nodes[v].kind == NODE_SWITCH && dist[v - H] != UINT64_MAX &&
                    dist[v - H] + link_cost(tp) == dist[sw]) {
                    uint16_t pp = (uint16_t)p;
                    g_array_append_val(rp, pp);
                    t->host_cnt[idx]++;
                }
            }
        }
    }
    g_free(t->route_ports);
    t->nroute_ports = rp->len;
    t->route_ports = (uint16_t *)g_array_free(rp, FALSE);
    g_free(dist);
    g_free(h.key);
    g_free(h.node);
    g_free(nic);
    g_free(pcie_of);
    g_free(hub_home);
}

/* rail-optimised and fat-tree: the servers' builder, with [server] and [cluster] defaults when
 * the sections are absent */
static struct topology *servers_kind(const struct scenario *s, GArray **routes, GError **err)
{
    (void)routes;
    return topology_servers_build(s, err);
}
const struct topology_kind topology_kind_rail = { "rail-optimised", servers_kind };
const struct topology_kind topology_kind_fat_tree = { "fat-tree", servers_kind };
