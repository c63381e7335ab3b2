#include "analysis/breakdown.h"
#include "models/ideal.h"
#include "results_io/pfc_csv.h"
#include <inttypes.h>
#include <string.h>

struct parts {
    simtime_t intra, intra_wait, inter, inter_wait, paused, compute;
    uint32_t transfers, inter_transfers;
};

/* Pause intervals [from, to) in ns of every transmitting port, from pfc.csv. */
struct pauses {
    GArray **at;               /* per global port: uint64_t pairs, or NULL */
    const struct topology *t;
};

static void pause_add(void *ctx, const struct pfc_interval *iv)
{
    struct pauses *pz = ctx;
    uint32_t gp = pz->t->nodes[iv->node].first_port + iv->port;
    if (!pz->at[gp])
        pz->at[gp] = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    uint64_t v[2] = { iv->from_ns, iv->to_ns };
    g_array_append_vals(pz->at[gp], v, 2);
}

static void pauses_load(const struct net *n, const char *path, struct pauses *pz)
{
    pz->t = n->topo;
    pz->at = g_new0(GArray *, n->topo->nports);
    pfc_csv_each_interval(n->topo, path, pause_add, pz);
}

static void pauses_free(const struct net *n, struct pauses *pz)
{
    for (uint32_t i = 0; i < n->topo->nports; i++)
        if (pz->at[i])
            g_array_free(pz->at[i], TRUE);
    g_free(pz->at);
}

/* Time in [a, b) ns that port gp was paused (on any priority: intervals may overlap, so
 * this counts an instant once per interval and is capped at b - a). */
static uint64_t paused_in(const struct pauses *pz, uint32_t gp, uint64_t a, uint64_t b)
{
    const GArray *v = pz->at[gp];
    uint64_t sum = 0;
    for (guint i = 0; v && i < v->len; i += 2) {
        uint64_t lo = g_array_index(v, uint64_t, i), hi = g_array_index(v, uint64_t, i + 1);
        if (hi > a && lo < b)
            sum += (hi < b ? hi : b) - (lo > a ? lo : a);
    }
    return sum < b - a ? sum : b - a;
}

/* The longest pause seen during [a, b) by a port on the transfer's route (first ECMP choice):
 * consecutive hops pause at the same time, so the maximum, not the sum. */
static uint64_t route_paused(const struct net *n, const struct pauses *pz, uint32_t src, uint32_t dst, uint64_t a,
                             uint64_t b)
{
    const struct topology *t = n->topo;
    uint32_t port = t->nodes[src].first_port;
    uint64_t worst = 0;
    for (int hops = 0; hops < 32; hops++) {
        uint64_t p = paused_in(pz, port, a, b);
        worst = p > worst ? p : worst;
        uint32_t node = t->ports[t->ports[port].peer].node, cnt;
        if (node == dst || t->nodes[node].kind == NODE_HOST)
            break;
        const uint16_t *next = topology_routes(t, node, dst, &cnt);
        if (!cnt)
            break;
        port = t->nodes[node].first_port + next[0];
    }
    return worst;
}

static void account(const struct net *n, const struct pauses *pz, uint32_t id,
                    struct parts *p)
{
    const struct transfer *t = schedule_get(n->sched, id);
    const struct xfer_rt *x = &n->xfers[id];
    p->compute += t->delay;
    if (!t->bytes)
        return;
    simtime_t fct = x->end - x->start, best = ideal_transfer_ps(n->sc, n->topo, t->src, t->dst, t->bytes);
    if (best > fct)
        best = fct;
    bool inter = n->topo->nodes[t->src].server != n->topo->nodes[t->dst].server;
    p->transfers++;
    p->inter_transfers += inter;
    simtime_t paused = (simtime_t)route_paused(n, pz, t->src, t->dst, x->start / PS_PER_NS, x->end / PS_PER_NS) * PS_PER_NS;
    if (paused > fct - best)
        paused = fct - best;
    p->paused += paused;
    if (inter) {
        p->inter += best;
        p->inter_wait += fct - best;
    } else {
        p->intra += best;
        p->intra_wait += fct - best;
    }
}

/* How long after transfer `dep` completed host `to` learned of it (models/net.c). */
static simtime_t notify_latency(const struct net *n, uint32_t dep, uint32_t to)
{
    const struct transfer *t = schedule_get(n->sched, dep);
    uint32_t from = t->bytes ? t->dst : t->src;
    return from == to ? 0 : net_notify_delay(n, from, to);
}

static double us(simtime_t ps) { return (double)ps / 1e6; }

void breakdown_write(const struct net *n, const char *pfc_csv, FILE *f)
{
    const struct schedule *s = n->sched;
    struct pauses pz;
    pauses_load(n, pfc_csv, &pz);
    fprintf(f, "job,iteration,time_us,path_transfers,path_inter_server,intra_server_us,intra_server_wait_us,"
               "inter_server_us,inter_server_wait_us,compute_us,of_which_paused_us\n");
    for (guint c = 0; c < s->colls->len; c++) {
        const struct sched_coll *cl = &g_array_index(s->colls, struct sched_coll, c);
        uint32_t begin = cl->first, cur = cl->first + cl->count - 1;
        if (n->xfers[cur].state != XF_DONE)
            continue;
        struct parts p = { 0 };
        /* the end marker's own delay is 0; walk to the begin marker */
        while (cur != begin) {
            const struct transfer *t = schedule_get(s, cur);
            const uint32_t *d = schedule_deps(s, t);
            if (cur != cl->first + cl->count - 1)
                account(n, &pz, cur, &p);
            /* the dependency learned last: its end plus the latency of telling this sender */
            uint32_t best = UINT32_MAX;
            simtime_t best_at = 0, best_lat = 0;
            for (uint32_t k = 0; k < t->ndeps; k++) {
                if (d[k] < begin)
                    continue;
                simtime_t lat = notify_latency(n, d[k], t->src), at = n->xfers[d[k]].end + lat;
                if (best == UINT32_MAX || at > best_at || (at == best_at && d[k] > best)) {
                    best = d[k];
                    best_at = at;
                    best_lat = lat;
                }
            }
            if (best == UINT32_MAX)
                break;
            /* that notification is network time on the path, inside a server or across */
            const struct transfer *bt = schedule_get(s, best);
            uint32_t from = bt->bytes ? bt->dst : bt->src;
            if (n->topo->nodes[from].server != n->topo->nodes[t->src].server)
                p.inter += best_lat;
            else
                p.intra += best_lat;
            cur = best;
        }
        const struct sched_job *jb = &g_array_index(s->jobs, struct sched_job, cl->job);
        simtime_t total = n->xfers[cl->first + cl->count - 1].end - n->xfers[begin].end;
        fprintf(f, "%s,%u,%.3f,%u,%u,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n", jb->name, cl->iteration, us(total), p.transfers,
                p.inter_transfers, us(p.intra), us(p.intra_wait), us(p.inter), us(p.inter_wait), us(p.compute),
                us(p.paused));
    }
    pauses_free(n, &pz);
}
