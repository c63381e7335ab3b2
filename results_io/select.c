/* Port and flow selection for the time series (see select.h). */
#include "results_io/select.h"
#include <string.h>
#include "sim/units.h"

struct path_ctx {
    const struct net *n;
    double *load;          /* per port: scheduled serialisation seconds */
    double bits;
    const uint8_t *port;   /* selected ports */
    bool crosses;
};

static void add_load(void *ctx, uint32_t port)
{
    struct path_ctx *c = ctx;
    /* the topology's port (32 bytes) for the rate the fabric's port copies (1280 bytes, a
     * cache miss a hop over 16.8 M paths at 4096 hosts) */
    c->load[port] += c->bits / (double)c->n->topo->ports[port].rate_bps;
}

static void find_selected(void *ctx, uint32_t port)
{
    struct path_ctx *c = ctx;
    if (c->port[port])
        c->crosses = true;
}

/* Most loaded first; ties by port index. */
static gint by_load(gconstpointer a, gconstpointer b, gpointer data)
{
    const double *load = data;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (load[x] != load[y])
        return load[x] > load[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* The N switch egress ports with the most scheduled serialisation time (ties: lower index). */
static void select_busiest(struct sample_selection *sel, const struct net *n, uint32_t want)
{
    uint32_t np = n->topo->nports;
    double *load = g_new0(double, np);
    uint64_t *qb = g_new0(uint64_t, n->nqps ? n->nqps : 1);
    net_qp_bytes(n, qb);
    struct path_ctx c = { .n = n, .load = load };
    for (uint32_t q = 0; q < n->nqps; q++)
        if (qb[q]) {
            c.bits = (double)qb[q] * 8;
            net_qp_path(n, q, add_load, &c);
        }
    uint32_t *cand = g_new(uint32_t, np ? np : 1), nc = 0;
    for (uint32_t p = 0; p < np; p++)
        if (!n->ports[p].is_host && load[p] > 0)
            cand[nc++] = p;
    g_qsort_with_data(cand, (gint)nc, sizeof *cand, by_load, load);
    for (uint32_t k = 0; k < nc && k < want; k++) {
        sel->port[cand[k]] = 1;
        sel->nports++;
    }
    g_free(cand);
    g_free(qb);
    g_free(load);
}

static gboolean parse_port(const struct topology *t, const char *item, struct port_ref *ref)
{
    const char *colon = strchr(item, ':');
    char *name = colon ? g_strndup(item, (gsize)(colon - item)) : g_strdup(item);
    int64_t node = topology_find_node(t, name);
    g_free(name);
    guint64 p = 0;
    char *end = NULL;
    if (colon)
        p = g_ascii_strtoull(colon + 1, &end, 10);
    if (node < 0 || (colon && (!colon[1] || *end)) || p >= t->nodes[node].nports)
        return FALSE;
    ref->node = (uint32_t)node;
    ref->port = (uint32_t)p;
    return TRUE;
}

GArray *select_parse_ports(const struct topology *t, const char *list, char **bad)
{
    GArray *refs = g_array_new(FALSE, FALSE, sizeof(struct port_ref));
    char **items = g_strsplit(list, ",", -1);
    for (int i = 0; items[i]; i++) {
        struct port_ref ref;
        char *item = g_strstrip(items[i]);
        if (!parse_port(t, item, &ref)) {
            *bad = g_strdup(item);
            g_array_free(refs, TRUE);
            refs = NULL;
            break;
        }
        g_array_append_val(refs, ref);
    }
    g_strfreev(items);
    return refs;
}

/* "leaf0:17,host3": each item a port of a node, or a host (its NIC port). */
static gboolean select_list(struct sample_selection *sel, const struct net *n, const char *text, GError **err)
{
    char *bad = NULL;
    GArray *refs = select_parse_ports(n->topo, text, &bad);
    if (!refs) {
        scenario_key_error(err, n->sc, "output", "sample_ports", text,
                           "'%s' is not a port: expected all, auto, busiest:N, or ports such as leaf0:17,host3", bad);
        g_free(bad);
        return FALSE;
    }
    for (guint i = 0; i < refs->len; i++) {
        const struct port_ref *r = &g_array_index(refs, struct port_ref, i);
        uint32_t gp = n->topo->nodes[r->node].first_port + r->port;
        if (!sel->port[gp])
            sel->nports++;
        sel->port[gp] = 1;
    }
    g_array_free(refs, TRUE);
    return TRUE;
}

/* The flows whose path crosses a selected port, and the NIC ports of their two ends (their
 * NP/RP counters). */
static void select_flows(struct sample_selection *sel, const struct net *n)
{
    sel->flow = g_new0(uint8_t, n->nqps ? n->nqps : 1);
    struct path_ctx c = { .n = n, .port = sel->port };
    for (uint32_t q = 0; q < n->nqps; q++) {
        c.crosses = false;
        net_qp_path(n, q, find_selected, &c);
        sel->flow[q] = c.crosses;
    }
    for (uint32_t q = 0; q < n->nqps; q++)
        if (sel->flow[q]) {
            sel->port[n->hosts[n->qps[q].src].port] = 1;
            sel->port[n->hosts[n->qps[q].dst].port] = 1;
        }
}

gboolean sample_selection_build(struct sample_selection *sel, const struct net *n, GError **err)
{
    const struct scenario *sc = n->sc;
    *sel = (struct sample_selection){ .scale = 1, .nports = n->topo->nports };
    bool small = n->topo->nhosts <= SELECT_SMALL_HOSTS;
    const char *scale = sc->sample_scale;
    if (!strcmp(scale, "auto")) {
        sel->scale = small ? 1 : SELECT_AUTO_SCALE;
    } else {
        char *end;
        guint64 v = g_ascii_strtoull(scale, &end, 10);
        if (!*scale || *end || v < 1 || v > 1000000) {
            scenario_key_error(err, sc, "output", "sample_scale", scale,
                               "expected auto or a whole number from 1 to 1000000 (the sampling periods' multiplier)");
            return FALSE;
        }
        sel->scale = (unsigned)v;
    }
    const char *ports = sc->sample_ports;
    if (!strcmp(ports, "all") || (!strcmp(ports, "auto") && small))
        return TRUE;
    sel->port = g_new0(uint8_t, n->topo->nports);
    sel->nports = 0;
    if (!strcmp(ports, "auto")) {
        select_busiest(sel, n, SELECT_AUTO_BUSIEST);
    } else if (g_str_has_prefix(ports, "busiest:")) {
        char *end;
        const char *num = ports + strlen("busiest:");
        guint64 v = g_ascii_strtoull(num, &end, 10);
        if (!*num || *end || v < 1 || v > n->topo->nports) {
            scenario_key_error(err, sc, "output", "sample_ports", ports,
                               "expected busiest:N with N from 1 to %u (the fabric's ports)", n->topo->nports);
            sample_selection_clear(sel);
            return FALSE;
        }
        select_busiest(sel, n, (uint32_t)v);
    } else if (!select_list(sel, n, ports, err)) {
        sample_selection_clear(sel);
        return FALSE;
    }
    select_flows(sel, n);
    return TRUE;
}

void sample_selection_apply_scale(const struct sample_selection *sel, struct scenario *sc)
{
    if (sel->scale == 1)
        return;
    char buf[32];
    sc->queue_sample *= sel->scale;
    sc->counter_sample *= sel->scale;
    g_key_file_set_value(sc->expanded, "output", "queue_sample", units_format_time(sc->queue_sample, buf, sizeof buf));
    g_key_file_set_value(sc->expanded, "output", "counter_sample",
                         units_format_time(sc->counter_sample, buf, sizeof buf));
}

void sample_selection_clear(struct sample_selection *sel)
{
    g_free(sel->port);
    g_free(sel->flow);
    sel->port = sel->flow = NULL;
}
