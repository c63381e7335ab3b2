#include "analysis/breakdown.h"
#include <inttypes.h>

struct parts {
    simtime_t intra, intra_wait, inter, inter_wait, compute;
    uint32_t transfers, inter_transfers;
};

static void account(const struct net *n, breakdown_ideal_fn ideal, uint32_t id, struct parts *p)
{
    const struct transfer *t = schedule_get(n->sched, id);
    const struct xfer_rt *x = &n->xfers[id];
    p->compute += t->delay;
    if (!t->bytes)
        return;
    simtime_t fct = x->end - x->start, best = ideal(n->sc, n->topo, t->src, t->dst, t->bytes);
    if (best > fct)
        best = fct;
    bool inter = n->topo->nodes[t->src].server != n->topo->nodes[t->dst].server;
    p->transfers++;
    p->inter_transfers += inter;
    if (inter) {
        p->inter += best;
        p->inter_wait += fct - best;
    } else {
        p->intra += best;
        p->intra_wait += fct - best;
    }
}

static double us(simtime_t ps) { return (double)ps / 1e6; }

void breakdown_write(const struct net *n, breakdown_ideal_fn ideal, FILE *f)
{
    const struct schedule *s = n->sched;
    fprintf(f, "job,iteration,time_us,path_transfers,path_inter_server,intra_server_us,intra_server_wait_us,"
               "inter_server_us,inter_server_wait_us,compute_us\n");
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
                account(n, ideal, cur, &p);
            uint32_t best = UINT32_MAX;
            for (uint32_t k = 0; k < t->ndeps; k++)
                if (d[k] >= begin && (best == UINT32_MAX || n->xfers[d[k]].end > n->xfers[best].end ||
                                      (n->xfers[d[k]].end == n->xfers[best].end && d[k] > best)))
                    best = d[k];
            if (best == UINT32_MAX)
                break;
            cur = best;
        }
        const struct sched_job *jb = &g_array_index(s->jobs, struct sched_job, cl->job);
        simtime_t total = n->xfers[cl->first + cl->count - 1].end - n->xfers[begin].end;
        fprintf(f, "%s,%u,%.3f,%u,%u,%.3f,%.3f,%.3f,%.3f,%.3f\n", jb->name, cl->iteration, us(total), p.transfers,
                p.inter_transfers, us(p.intra), us(p.intra_wait), us(p.inter), us(p.inter_wait), us(p.compute));
    }
}
