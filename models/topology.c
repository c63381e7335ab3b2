#include "models/topology.h"
#include <stdio.h>
#include <string.h>

struct builder {
    GArray *nodes, *ports;
};

static uint32_t add_node(struct builder *b, enum node_kind kind, const char *name, uint32_t tier)
{
    struct topo_node n = { .kind = kind, .tier = tier };
    g_strlcpy(n.name, name, sizeof n.name);
    g_array_append_val(b->nodes, n);
    return b->nodes->len - 1;
}

/* Ports are numbered per node in the order links are added; global indices are assigned
 * after all links exist (ports of one node are contiguous). */
struct pending_link {
    uint32_t a, b;
    uint64_t rate;
    simtime_t delay;
};

static void finish_ports(struct topology *t, GArray *links)
{
    uint32_t *count = g_new0(uint32_t, t->nnodes);
    for (guint i = 0; i < links->len; i++) {
        struct pending_link *l = &g_array_index(links, struct pending_link, i);
        count[l->a]++;
        count[l->b]++;
    }
    uint32_t next = 0;
    for (uint32_t n = 0; n < t->nnodes; n++) {
        t->nodes[n].first_port = next;
        t->nodes[n].nports = count[n];
        next += count[n];
        count[n] = 0;
    }
    t->nports = next;
    t->ports = g_new0(struct topo_port, next);
    for (guint i = 0; i < links->len; i++) {
        struct pending_link *l = &g_array_index(links, struct pending_link, i);
        uint32_t pa = t->nodes[l->a].first_port + count[l->a];
        uint32_t pb = t->nodes[l->b].first_port + count[l->b];
        t->ports[pa] = (struct topo_port){ l->a, count[l->a]++, pb, l->rate, l->delay };
        t->ports[pb] = (struct topo_port){ l->b, count[l->b]++, pa, l->rate, l->delay };
    }
    g_free(count);
}

/* Shortest-path next hops toward every host, by BFS from each host. */
static void compute_routes(struct topology *t)
{
    uint32_t N = t->nnodes, H = t->nhosts;
    uint32_t *dist = g_new(uint32_t, N);
    uint32_t *queue = g_new(uint32_t, N);
    GArray *rp = g_array_new(FALSE, FALSE, sizeof(uint16_t));
    t->route_off = g_new0(uint32_t, (size_t)N * H);
    t->route_cnt = g_new0(uint16_t, (size_t)N * H);
    t->hops = g_new0(uint32_t, (size_t)H * H);
    for (uint32_t d = 0; d < H; d++) {
        for (uint32_t i = 0; i < N; i++)
            dist[i] = UINT32_MAX;
        uint32_t qh = 0, qt = 0;
        dist[d] = 0;
        queue[qt++] = d;
        while (qh < qt) {
            uint32_t u = queue[qh++];
            /* hosts other than the destination do not forward */
            if (t->nodes[u].kind == NODE_HOST && u != d)
                continue;
            const struct topo_node *nu = &t->nodes[u];
            for (uint32_t p = 0; p < nu->nports; p++) {
                uint32_t v = t->ports[t->ports[nu->first_port + p].peer].node;
                if (dist[v] == UINT32_MAX) {
                    dist[v] = dist[u] + 1;
                    queue[qt++] = v;
                }
            }
        }
        for (uint32_t h = 0; h < H; h++)
            t->hops[(size_t)h * H + d] = dist[h];
        for (uint32_t s = 0; s < N; s++) {
            if (t->nodes[s].kind != NODE_SWITCH || dist[s] == UINT32_MAX)
                continue;
            size_t idx = (size_t)s * H + d;
            t->route_off[idx] = rp->len;
            const struct topo_node *ns = &t->nodes[s];
            for (uint32_t p = 0; p < ns->nports; p++) {
                uint32_t v = t->ports[t->ports[ns->first_port + p].peer].node;
                if (dist[v] + 1 == dist[s] && (t->nodes[v].kind == NODE_SWITCH || v == d)) {
                    uint16_t pp = (uint16_t)p;
                    g_array_append_val(rp, pp);
                    t->route_cnt[idx]++;
                }
            }
        }
    }
    t->nroute_ports = rp->len;
    t->route_ports = (uint16_t *)g_array_free(rp, FALSE);
    g_free(dist);
    g_free(queue);
}

static struct topology *build_leaf_spine(const struct scenario *s)
{
    struct builder b = { g_array_new(FALSE, FALSE, sizeof(struct topo_node)), NULL };
    GArray *links = g_array_new(FALSE, FALSE, sizeof(struct pending_link));
    uint32_t H = s->leaves * s->hosts_per_leaf;
    char name[24];
    for (uint32_t h = 0; h < H; h++) {
        snprintf(name, sizeof name, "host%u", h);
        add_node(&b, NODE_HOST, name, 0);
    }
    uint32_t leaf0 = b.nodes->len;
    for (uint32_t l = 0; l < s->leaves; l++) {
        snprintf(name, sizeof name, "leaf%u", l);
        add_node(&b, NODE_SWITCH, name, 1);
    }
    uint32_t spine0 = b.nodes->len;
    uint32_t nspines = s->leaves > 1 ? s->spines : 0;
    for (uint32_t sp = 0; sp < nspines; sp++) {
        snprintf(name, sizeof name, "spine%u", sp);
        add_node(&b, NODE_SWITCH, name, 2);
    }
    /* Leaf ports: hosts first (0..hosts_per_leaf-1), then one uplink per spine. */
    for (uint32_t h = 0; h < H; h++) {
        struct pending_link l = { h, leaf0 + h / s->hosts_per_leaf, s->host_rate, s->host_link_delay };
        g_array_append_val(links, l);
    }
    for (uint32_t lf = 0; lf < s->leaves; lf++)
        for (uint32_t sp = 0; sp < nspines; sp++) {
            struct pending_link l = { leaf0 + lf, spine0 + sp, s->fabric_rate, s->link_delay };
            g_array_append_val(links, l);
        }
    struct topology *t = g_new0(struct topology, 1);
    t->nhosts = H;
    t->nnodes = b.nodes->len;
    t->nodes = (struct topo_node *)g_array_free(b.nodes, FALSE);
    finish_ports(t, links);
    g_array_free(links, TRUE);
    double down = (double)s->hosts_per_leaf * (double)s->host_rate;
    double up = (double)nspines * (double)s->fabric_rate;
    t->oversubscription = up > 0 ? down / up : 0;
    return t;
}

struct topology *topology_build(const struct scenario *s, GError **err)
{
    struct topology *t = NULL;
    if (s->topo == TOPO_LEAF_SPINE) {
        t = build_leaf_spine(s);
    } else {
        g_set_error(err, SCENARIO_ERROR, 1, "%s: [topology] kind = 'edges': not available in this build", s->path);
        return NULL;
    }
    if (t->nports > 0)
        for (uint32_t n = 0; n < t->nnodes; n++)
            if (t->nodes[n].nports > 65535) {
                g_set_error(err, SCENARIO_ERROR, 1, "%s: node %s has more than 65535 ports", s->path, t->nodes[n].name);
                topology_free(t);
                return NULL;
            }
    compute_routes(t);
    return t;
}

void topology_free(struct topology *t)
{
    if (!t)
        return;
    g_free(t->nodes);
    g_free(t->ports);
    g_free(t->route_off);
    g_free(t->route_cnt);
    g_free(t->route_ports);
    g_free(t->hops);
    g_free(t);
}

int64_t topology_find_node(const struct topology *t, const char *name)
{
    for (uint32_t n = 0; n < t->nnodes; n++)
        if (!strcmp(t->nodes[n].name, name))
            return n;
    return -1;
}
