#include "models/topology.h"
#include <stdio.h>
#include <stdarg.h>
#include <string.h>
#include "models/memory.h"
#include "sim/units.h"

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
void topology_link_ports(struct topology *t, GArray *links)
{
    uint32_t *count = g_new0(uint32_t, t->nnodes);
    for (guint i = 0; i < links->len; i++) {
        struct topo_link *l = &g_array_index(links, struct topo_link, i);
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
        struct topo_link *l = &g_array_index(links, struct topo_link, i);
        uint32_t pa = t->nodes[l->a].first_port + count[l->a];
        uint32_t pb = t->nodes[l->b].first_port + count[l->b];
        t->ports[pa] = (struct topo_port){ l->a, count[l->a]++, pb, l->rate, l->delay };
        t->ports[pb] = (struct topo_port){ l->b, count[l->b]++, pa, l->rate, l->delay };
    }
    g_free(count);
}

/* The switch graph as lists, for the BFS below: switch s's ports toward switches, up links
 * only, in port order (their local numbers and the switch at the other end), from first[s]
 * to first[s + 1]. Walking the ports themselves cost three dependent loads a port (port,
 * peer port, peer node): at 16384 hosts (640 switches) the routes took 1 s of the setup. */
struct sw_graph {
    uint32_t *first, *to;
    uint16_t *port;
};

static struct sw_graph sw_graph_new(const struct topology *t, const bool *port_down)
{
    uint32_t H = t->nhosts, S = t->nnodes - H, n = 0;
    struct sw_graph g = { g_new(uint32_t, (size_t)S + 1), g_new(uint32_t, t->nports ? t->nports : 1),
                          g_new(uint16_t, t->nports ? t->nports : 1) };
    for (uint32_t s = 0; s < S; s++) {
        const struct topo_node *ns = &t->nodes[H + s];
        g.first[s] = n;
        for (uint32_t p = 0; p < ns->nports; p++) {
            if (port_down && port_down[ns->first_port + p])
                continue;
            uint32_t v = t->ports[t->ports[ns->first_port + p].peer].node;
            if (t->nodes[v].kind == NODE_SWITCH) {
                g.to[n] = v - H;
                g.port[n++] = (uint16_t)p;
            }
        }
    }
    g.first[S] = n;
    return g;
}

static void sw_graph_free(struct sw_graph *g)
{
    g_free(g->first);
    g_free(g->to);
    g_free(g->port);
}

/* Next-hop lists kept once each (every leaf's toward any remote leaf is all its uplinks), so
 * that the table a switch reads per packet stays in the caches on a large fabric (288 entries
 * instead of about 650 000 on bench/scale.ini): a list the same as its switch's last one, or
 * of one port (every list of port p is the same), is found without hashing. */
struct hop_lists {
    GArray *rp;               /* the lists' ports */
    GHashTable *seen;         /* longer lists: their ports (GBytes) -> offset */
    uint32_t one[65536];      /* the list {p}: its offset, or UINT32_MAX */
};

/* Where the list l[0, cnt) is in rp: where an equal one already is, else appended. `last`:
 * the switch's previous list. */
static uint32_t hop_list_keep(struct hop_lists *h, const uint16_t *l, uint16_t cnt, uint32_t last_off,
                              uint16_t last_cnt)
{
    /* (no last list yet: last_cnt 0, and rp may have no data to point into) */
    if (cnt == last_cnt && !memcmp(l, &g_array_index(h->rp, uint16_t, last_off), cnt * sizeof *l))
        return last_off;
    uint32_t off = h->rp->len;
    if (cnt == 1) {
        if (h->one[l[0]] != UINT32_MAX)
            return h->one[l[0]];
        h->one[l[0]] = off;
    } else {
        GBytes *key = g_bytes_new(l, cnt * sizeof *l);
        gpointer found;
        if (g_hash_table_lookup_extended(h->seen, key, NULL, &found)) {
            g_bytes_unref(key);
            return GPOINTER_TO_UINT(found);
        }
        g_hash_table_insert(h->seen, key, GUINT_TO_POINTER(off));
    }
    g_array_append_vals(h->rp, l, cnt);
    return off;
}

/* Shortest-path next hops between switches, by BFS from each destination switch over the
 * switch graph (hosts do not forward), over the links not marked down. Fills off/cnt (S x S)
 * and dist when given; returns the next-hop ports. */
static GArray *bfs_routes(const struct topology *t, const bool *port_down, uint32_t *off, uint16_t *cnt,
                          uint32_t *sw_dist)
{
    uint32_t H = t->nhosts, S = t->nnodes - H;
    struct sw_graph g = sw_graph_new(t, port_down);
    uint32_t *dist = g_new(uint32_t, S ? S : 1);
    uint32_t *queue = g_new(uint32_t, S ? S : 1);
    uint32_t *last_off = g_new(uint32_t, S ? S : 1); /* each switch's last list */
    uint16_t *last_cnt = g_new0(uint16_t, S ? S : 1);
    uint16_t *list = g_new(uint16_t, g.first[S] ? g.first[S] : 1); /* one switch's next hops */
    struct hop_lists *h = g_new(struct hop_lists, 1);
    h->rp = g_array_new(FALSE, FALSE, sizeof(uint16_t));
    h->seen = g_hash_table_new_full(g_bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref, NULL);
    memset(h->one, 0xff, sizeof h->one);
    for (uint32_t s = 0; s < S; s++)
        last_off[s] = UINT32_MAX;
    for (uint32_t d = 0; d < S; d++) {
        for (uint32_t i = 0; i < S; i++)
            dist[i] = UINT32_MAX;
        uint32_t qh = 0, qt = 0;
        dist[d] = 0;
        queue[qt++] = d;
        while (qh < qt) {
            uint32_t u = queue[qh++];
            for (uint32_t k = g.first[u]; k < g.first[u + 1]; k++) {
                uint32_t v = g.to[k];
                if (dist[v] == UINT32_MAX) {
                    dist[v] = dist[u] + 1;
                    queue[qt++] = v;
                }
            }
        }
        for (uint32_t s = 0; s < S; s++) {
            size_t idx = (size_t)s * S + d;
            if (sw_dist)
                sw_dist[idx] = dist[s];
            off[idx] = h->rp->len;
            if (s == d || dist[s] == UINT32_MAX)
                continue;
            uint16_t c = 0;
            for (uint32_t k = g.first[s]; k < g.first[s + 1]; k++)
                if (dist[g.to[k]] + 1 == dist[s])
                    list[c++] = g.port[k];
            if (c) {
                cnt[idx] = c;
                off[idx] = hop_list_keep(h, list, c, last_off[s], last_cnt[s]);
                last_off[s] = off[idx];
                last_cnt[s] = c;
            }
        }
    }
    GArray *rp = h->rp;
    g_hash_table_destroy(h->seen);
    g_free(h);
    g_free(last_off);
    g_free(last_cnt);
    g_free(list);
    g_free(dist);
    g_free(queue);
    sw_graph_free(&g);
    return rp;
}

/* Every host has exactly one link (checked by the builders), so the routes toward a host are
 * those toward its switch. */
static void compute_routes(struct topology *t)
{
    uint32_t H = t->nhosts, S = t->nnodes - H;
    t->nswitches = S;
    t->attach = g_new(uint32_t, H ? H : 1);
    t->attach_port = g_new(uint16_t, H ? H : 1);
    for (uint32_t h = 0; h < H; h++) {
        const struct topo_port *hp = &t->ports[t->nodes[h].first_port];
        t->attach[h] = t->ports[hp->peer].node;
        t->attach_port[h] = (uint16_t)t->ports[hp->peer].index;
    }
    t->route_off = g_new0(uint32_t, (size_t)S * S + 1);
    t->route_cnt = g_new0(uint16_t, (size_t)S * S + 1);
    t->sw_dist = g_new(uint32_t, (size_t)S * S + 1);
    GArray *rp = bfs_routes(t, NULL, t->route_off, t->route_cnt, t->sw_dist);
    t->nroute_ports = rp->len;
    t->route_ports = (uint16_t *)g_array_free(rp, FALSE);
}

struct topo_routes *topology_routes_without(const struct topology *t, const bool *port_down)
{
    size_t S = t->nswitches;
    struct topo_routes *r = g_new0(struct topo_routes, 1);
    r->route_off = g_new0(uint32_t, S * S + 1);
    r->route_cnt = g_new0(uint16_t, S * S + 1);
    GArray *rp = bfs_routes(t, port_down, r->route_off, r->route_cnt, NULL);
    if (rp->len == 0) {
        uint16_t none = 0; /* keep a valid pointer for route tables without any hop */
        g_array_append_val(rp, none);
    }
    r->route_ports = (uint16_t *)g_array_free(rp, FALSE);
    return r;
}

void topology_routes_free(struct topo_routes *r)
{
    if (!r)
        return;
    g_free(r->route_off);
    g_free(r->route_cnt);
    g_free(r->route_ports);
    g_free(r);
}

uint32_t topology_hops(const struct topology *t, uint32_t src, uint32_t dst)
{
    if (src == dst)
        return 0;
    uint32_t H = t->nhosts, a = t->attach[src] - H, b = t->attach[dst] - H;
    uint32_t d = t->sw_dist[(size_t)a * t->nswitches + b];
    return d == UINT32_MAX ? UINT32_MAX : d + 2;
}

static struct topology *build_leaf_spine(const struct scenario *s)
{
    struct builder b = { g_array_new(FALSE, FALSE, sizeof(struct topo_node)), NULL };
    GArray *links = g_array_new(FALSE, FALSE, sizeof(struct topo_link));
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
        struct topo_link l = { h, leaf0 + h / s->hosts_per_leaf, s->host_rate, s->host_link_delay };
        g_array_append_val(links, l);
    }
    for (uint32_t lf = 0; lf < s->leaves; lf++)
        for (uint32_t sp = 0; sp < nspines; sp++) {
            struct topo_link l = { leaf0 + lf, spine0 + sp, s->fabric_rate, s->link_delay };
            g_array_append_val(links, l);
        }
    struct topology *t = g_new0(struct topology, 1);
    t->nhosts = H;
    t->nnodes = b.nodes->len;
    t->nodes = (struct topo_node *)g_array_free(b.nodes, FALSE);
    topology_link_ports(t, links);
    g_array_free(links, TRUE);
    double down = (double)s->hosts_per_leaf * (double)s->host_rate;
    double up = (double)nspines * (double)s->fabric_rate;
    t->oversubscription = up > 0 ? down / up : 0;
    return t;
}

/* ---------- edge-list topologies ----------
 *
 *   host NAME                      hosts are numbered in the order they are declared
 *   switch NAME
 *   link NAME NAME RATE DELAY      e.g. link h0 s0 100Gbps 1us
 *   route SWITCH HOST NEIGHBOUR    static next hop (repeat for an ECMP set); without routes
 *                                  a switch uses all shortest paths
 */
struct edge_route {
    uint32_t sw, dst, nbr;
    int line;
};

static gboolean edge_error(GError **err, const char *path, int line, const char *fmt, ...) G_GNUC_PRINTF(4, 5);
static gboolean edge_error(GError **err, const char *path, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *m = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(err, SCENARIO_ERROR, 1, "%s:%d: %s", path, line, m);
    g_free(m);
    return FALSE;
}

/* The blank-separated fields of a line, without the empty strings that runs of blanks
 * leave in g_strsplit_set's output (those are freed here, so g_strfreev frees each field
 * once). */
static char **split_fields(const char *line, int *nf)
{
    char **f = g_strsplit_set(line, " \t", -1);
    int n = 0;
    for (int k = 0; f[k]; k++) {
        if (*f[k])
            f[n++] = f[k];
        else
            g_free(f[k]);
    }
    f[n] = NULL;
    *nf = n;
    return f;
}

static struct topology *build_edges(const struct scenario *s, GArray **routes_out, char **path_out, GError **err)
{
    char *path = g_path_is_absolute(s->edges_file) ? g_strdup(s->edges_file)
                                                    : g_build_filename(s->dir, s->edges_file, NULL);
    *path_out = path;
    char *text = NULL;
    GError *e = NULL;
    if (!g_file_get_contents(path, &text, NULL, &e)) {
        g_set_error(err, SCENARIO_ERROR, 1, "%s: [topology] file = '%s': cannot read: %s", s->path, s->edges_file,
                    e->message);
        g_error_free(e);
        return NULL;
    }
    GArray *hosts = g_array_new(FALSE, FALSE, sizeof(struct topo_node));
    GArray *switches = g_array_new(FALSE, FALSE, sizeof(struct topo_node));
    struct raw_link {
        char a[24], b[24];
        uint64_t rate;
        simtime_t delay;
        int line;
    };
    struct raw_route {
        char sw[24], dst[24], nbr[24];
        int line;
    };
    GArray *links = g_array_new(FALSE, FALSE, sizeof(struct raw_link));
    GArray *rroutes = g_array_new(FALSE, FALSE, sizeof(struct raw_route));
    char **lines = g_strsplit(text, "\n", -1);
    g_free(text);
    gboolean ok = TRUE;
    GHashTable *names = g_hash_table_new(g_str_hash, g_str_equal);
    for (int ln = 0; lines[ln] && ok; ln++) {
        char *hash = strchr(lines[ln], '#');
        if (hash)
            *hash = 0;
        int nf = 0;
        char **f = split_fields(g_strstrip(lines[ln]), &nf);
        if (nf == 0) {
            g_strfreev(f);
            continue;
        }
        char *why = NULL;
        if (!strcmp(f[0], "host") || !strcmp(f[0], "switch")) {
            if (nf != 2 || strlen(f[1]) >= 24)
                ok = edge_error(err, path, ln + 1, "expected '%s NAME' (a name of at most 23 characters)", f[0]);
            else if (g_hash_table_contains(names, f[1]))
                ok = edge_error(err, path, ln + 1, "node '%s' is declared twice", f[1]);
            else {
                struct topo_node nd = { .kind = f[0][0] == 'h' ? NODE_HOST : NODE_SWITCH, .tier = f[0][0] == 'h' ? 0 : 1 };
                g_strlcpy(nd.name, f[1], sizeof nd.name);
                g_array_append_val(nd.kind == NODE_HOST ? hosts : switches, nd);
                g_hash_table_add(names, g_strdup(f[1]));
            }
        } else if (!strcmp(f[0], "link")) {
            struct raw_link l = { .line = ln + 1 };
            if (nf != 5)
                ok = edge_error(err, path, ln + 1, "expected 'link NODE NODE RATE DELAY', e.g. link h0 s0 100Gbps 1us");
            else if (!units_parse_rate(f[3], &l.rate, &why) || l.rate == 0)
                ok = edge_error(err, path, ln + 1, "rate: %s", why ? why : "expected a positive rate");
            else if (!units_parse_time(f[4], &l.delay, &why))
                ok = edge_error(err, path, ln + 1, "delay: %s", why);
            else {
                g_strlcpy(l.a, f[1], sizeof l.a);
                g_strlcpy(l.b, f[2], sizeof l.b);
                g_array_append_val(links, l);
            }
        } else if (!strcmp(f[0], "route")) {
            struct raw_route r = { .line = ln + 1 };
            if (nf != 4)
                ok = edge_error(err, path, ln + 1, "expected 'route SWITCH HOST NEIGHBOUR'");
            else {
                g_strlcpy(r.sw, f[1], sizeof r.sw);
                g_strlcpy(r.dst, f[2], sizeof r.dst);
                g_strlcpy(r.nbr, f[3], sizeof r.nbr);
                g_array_append_val(rroutes, r);
            }
        } else {
            ok = edge_error(err, path, ln + 1, "unknown line '%s': expected host, switch, link or route", f[0]);
        }
        g_free(why);
        g_strfreev(f);
    }
    g_strfreev(lines);
    g_hash_table_foreach(names, (GHFunc)(void (*)(void))g_free, NULL);
    g_hash_table_destroy(names);
    struct topology *t = NULL;
    if (ok && hosts->len == 0)
        ok = edge_error(err, path, 1, "no host declared");
    if (ok && switches->len == 0)
        ok = edge_error(err, path, 1, "no switch declared: hosts connect through switches");
    if (ok) {
        t = g_new0(struct topology, 1);
        t->nhosts = hosts->len;
        t->nnodes = hosts->len + switches->len;
        t->nodes = g_new0(struct topo_node, t->nnodes);
        /* an empty GArray's data may be NULL, which memcpy must not see even for 0 bytes */
        if (hosts->len)
            memcpy(t->nodes, hosts->data, sizeof(struct topo_node) * hosts->len);
        if (switches->len)
            memcpy(t->nodes + hosts->len, switches->data, sizeof(struct topo_node) * switches->len);
        GArray *pl = g_array_new(FALSE, FALSE, sizeof(struct topo_link));
        for (guint i = 0; i < links->len && ok; i++) {
            struct raw_link *l = &g_array_index(links, struct raw_link, i);
            int64_t a = topology_find_node(t, l->a), b = topology_find_node(t, l->b);
            if (a < 0 || b < 0 || a == b)
                ok = edge_error(err, path, l->line, "link %s %s: %s", l->a, l->b,
                                a == b && a >= 0 ? "a node cannot link to itself" : "unknown node (declare it with host or switch first)");
            else {
                struct topo_link p = { (uint32_t)a, (uint32_t)b, l->rate, l->delay };
                g_array_append_val(pl, p);
            }
        }
        if (ok)
            topology_link_ports(t, pl);
        g_array_free(pl, TRUE);
        for (uint32_t h = 0; ok && h < t->nhosts; h++)
            if (t->nodes[h].nports != 1)
                ok = edge_error(err, path, 1, "host %s has %u links: a host needs exactly one", t->nodes[h].name,
                                t->nodes[h].nports);
            else if (t->nodes[t->ports[t->ports[t->nodes[h].first_port].peer].node].kind != NODE_SWITCH)
                ok = edge_error(err, path, 1, "host %s is linked to another host: hosts connect to switches",
                                t->nodes[h].name);
    }
    GArray *routes = g_array_new(FALSE, FALSE, sizeof(struct edge_route));
    for (guint i = 0; ok && i < rroutes->len; i++) {
        struct raw_route *r = &g_array_index(rroutes, struct raw_route, i);
        int64_t sw = topology_find_node(t, r->sw), dst = topology_find_node(t, r->dst), nbr = topology_find_node(t, r->nbr);
        if (sw < 0 || t->nodes[sw].kind != NODE_SWITCH)
            ok = edge_error(err, path, r->line, "route: '%s' is not a switch", r->sw);
        else if (dst < 0 || t->nodes[dst].kind != NODE_HOST)
            ok = edge_error(err, path, r->line, "route: '%s' is not a host", r->dst);
        else {
            int64_t port = -1;
            for (uint32_t k = 0; k < t->nodes[sw].nports; k++)
                if (nbr >= 0 && t->ports[t->ports[t->nodes[sw].first_port + k].peer].node == (uint32_t)nbr)
                    port = k;
            if (port < 0)
                ok = edge_error(err, path, r->line, "route: '%s' is not a neighbour of %s", r->nbr, r->sw);
            else {
                struct edge_route er = { (uint32_t)sw, (uint32_t)dst, (uint32_t)port, r->line };
                g_array_append_val(routes, er);
            }
        }
    }
    g_array_free(hosts, TRUE);
    g_array_free(switches, TRUE);
    g_array_free(links, TRUE);
    g_array_free(rroutes, TRUE);
    if (!ok) {
        g_array_free(routes, TRUE);
        topology_free(t);
        return NULL;
    }
    *routes_out = routes;
    return t;
}

/* Static routes replace the shortest-path sets of their (switch, host): they are appended
 * to route_ports and indexed per (switch, host). */
static void apply_static_routes(struct topology *t, GArray *routes)
{
    uint32_t H = t->nhosts;
    size_t npairs = (size_t)t->nswitches * H;
    t->host_off = g_new0(uint32_t, npairs + 1);
    t->host_cnt = g_new0(uint16_t, npairs + 1);
    GArray *rp = g_array_new(FALSE, FALSE, sizeof(uint16_t));
    g_array_append_vals(rp, t->route_ports, t->nroute_ports);
    for (size_t idx = 0; idx < npairs; idx++) {
        uint32_t sw = (uint32_t)(idx / H) + H, dst = (uint32_t)(idx % H);
        for (guint i = 0; i < routes->len; i++) {
            struct edge_route *r = &g_array_index(routes, struct edge_route, i);
            if (r->sw != sw || r->dst != dst)
                continue;
            if (!t->host_cnt[idx])
                t->host_off[idx] = rp->len;
            uint16_t port = (uint16_t)r->nbr;
            g_array_append_val(rp, port);
            t->host_cnt[idx]++;
        }
    }
    g_free(t->route_ports);
    t->nroute_ports = rp->len;
    t->route_ports = (uint16_t *)g_array_free(rp, FALSE);
}

/* Every host must reach every other: the switch distances (computed for the routes) say
 * whether each host's switch is connected to the first host's. Otherwise the run would only
 * time out; this names a pair and how many hosts are cut off. */
static gboolean check_connected(const struct topology *t, const struct scenario *s, GError **err)
{
    uint32_t H = t->nhosts, S = t->nswitches, cut = 0, first = 0;
    if (H < 2 || S == 0)
        return TRUE;
    uint32_t a = t->attach[0] - H;
    for (uint32_t h = 1; h < H; h++)
        if (t->sw_dist[(size_t)a * S + (t->attach[h] - H)] == UINT32_MAX && !cut++)
            first = h;
    if (!cut)
        return TRUE;
    g_set_error(err, SCENARIO_ERROR, 1,
                "%s: [topology] file = '%s': hosts %s and %s cannot reach each other (no path between switches "
                "%s and %s); %u of %u hosts are cut off from %s",
                s->path, s->edges_file ? s->edges_file : "", t->nodes[0].name, t->nodes[first].name,
                t->nodes[t->attach[0]].name, t->nodes[t->attach[first]].name, cut, H, t->nodes[0].name);
    return FALSE;
}

/* leaf-spine: estimated from the keys before anything is allocated, then built */
static struct topology *leaf_spine_kind(const struct scenario *s, GArray **routes, GError **err)
{
    (void)routes;
    char *why = NULL;
    uint64_t L = s->leaves, SP = s->leaves > 1 ? s->spines : 0, H = L * s->hosts_per_leaf;
    /* next hops: the distinct lists bfs_routes keeps, a leaf's uplinks toward every remote
     * leaf (SP), a spine's downlinks toward every other spine (L), one hop to each spine from
     * a leaf and to each leaf from a spine */
    if (!memory_fits(memory_topology_bytes(H, L + SP, H + L * SP, 2 * (L + SP)), &why)) {
        g_set_error(err, SCENARIO_ERROR, 1,
                    "%s: [topology] leaves = %u, spines = %u, hosts_per_leaf = %u: the fabric and its routing "
                    "tables need %s; lower leaves, spines or hosts_per_leaf", s->path, s->leaves, s->spines,
                    s->hosts_per_leaf, why);
        g_free(why);
        return NULL;
    }
    return build_leaf_spine(s);
}

/* edges: the edge-list file, then the routing tables' memory checked */
static struct topology *edges_kind(const struct scenario *s, GArray **routes, GError **err)
{
    char *path = NULL, *why = NULL;
    struct topology *t = build_edges(s, routes, &path, err);
    g_free(path);
    if (!t)
        return NULL;
    uint64_t S = t->nnodes - t->nhosts;
    if (!memory_fits(memory_topology_bytes(t->nhosts, S, t->nports / 2, S * S), &why)) {
        g_set_error(err, SCENARIO_ERROR, 1, "%s: [topology] file = '%s': %u hosts and %" G_GUINT64_FORMAT
                    " switches: the routing tables need %s", s->path, s->edges_file, t->nhosts, S, why);
        g_free(why);
        if (*routes)
            g_array_free(*routes, TRUE);
        *routes = NULL;
        topology_free(t);
        return NULL;
    }
    return t;
}

const struct topology_kind topology_kind_leaf_spine = { "leaf-spine", leaf_spine_kind };
const struct topology_kind topology_kind_edges = { "edges", edges_kind };

struct topology *topology_build(const struct scenario *s, GError **err)
{
    GArray *routes = NULL;
    /* servers ([server], [cluster]) are wired by their own builder whatever the kind */
    struct topology *t = s->server || s->cluster ? topology_servers_build(s, err) : topology_kinds[s->topo]->build(s, &routes, err);
    if (!t)
        return NULL;
    if (t->nports > 0)
        for (uint32_t n = 0; n < t->nnodes; n++)
            if (t->nodes[n].nports > 65535) {
                g_set_error(err, SCENARIO_ERROR, 1, "%s: node %s has more than 65535 ports", s->path, t->nodes[n].name);
                if (routes)
                    g_array_free(routes, TRUE);
                topology_free(t);
                return NULL;
            }
    compute_routes(t);
    if (!check_connected(t, s, err)) {
        if (routes)
            g_array_free(routes, TRUE);
        topology_free(t);
        return NULL;
    }
    if (routes) {
        apply_static_routes(t, routes);
        g_array_free(routes, TRUE);
    }
    if (t->servers)
        topology_servers_route(t);
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
    g_free(t->attach);
    g_free(t->attach_port);
    g_free(t->host_off);
    g_free(t->host_cnt);
    g_free(t->sw_dist);
    g_free(t->bounce_host);
    g_free(t);
}

int64_t topology_find_node(const struct topology *t, const char *name)
{
    for (uint32_t n = 0; n < t->nnodes; n++)
        if (!strcmp(t->nodes[n].name, name))
            return n;
    return -1;
}
