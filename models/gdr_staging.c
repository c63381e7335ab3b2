/* GPUDirect RDMA off: NCCL's proxy stages inter-server data through host memory. A transfer
 * from a GPU of such a server to another server becomes GPU -> the staging buffer of the
 * NIC it leaves by (a copy over PCIe and the root complex into host memory), then buffer ->
 * destination; arriving at such a server, data lands in the buffer of the NIC it came in by
 * and is copied to the GPU. The pieces of one transfer wait for each other; transfers stay
 * the size NCCL's steps have, so staging is pipelined chunk by chunk as the proxy does. */
#include "models/gdr_staging.h"

static uint32_t buffer_of(const struct topology *t, uint32_t gpu, uint32_t rail)
{
    return t->bounce_host[(gpu / t->gpus_per_server) * t->nics_per_server + rail];
}

struct schedule *gdr_staging_apply(struct schedule *in, const struct topology *t)
{
    if (!t->bounce_host)
        return in;
    struct schedule *out = schedule_new();
    for (guint j = 0; j < in->jobs->len; j++) {
        const struct sched_job *jb = &g_array_index(in->jobs, struct sched_job, j);
        schedule_add_job(out, jb->name, jb->op, jb->algorithm, jb->ranks);
    }
    uint32_t n = schedule_count(in);
    uint32_t *last = g_new(uint32_t, n ? n : 1), *first = g_new(uint32_t, n ? n : 1);
    GArray *deps = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    const uint32_t G = t->gpus_per_server;
    for (uint32_t i = 0; i < n; i++) {
        const struct transfer *tr = schedule_get(in, i);
        const uint32_t *d = schedule_deps(in, tr);
        g_array_set_size(deps, 0);
        for (uint32_t k = 0; k < tr->ndeps; k++)
            g_array_append_val(deps, last[d[k]]);
        struct transfer x = *tr;
        bool remote = tr->bytes && tr->src < t->gpus && tr->dst < t->gpus && tr->src / G != tr->dst / G;
        /* the rail: the destination GPU's NIC, the one the routes use */
        uint32_t rail = tr->dst % G * t->nics_per_server / G;
        uint32_t sbuf = remote ? buffer_of(t, tr->src, rail) : UINT32_MAX;
        uint32_t dbuf = remote ? buffer_of(t, tr->dst, rail) : UINT32_MAX;
        uint32_t hop_src = tr->src, id;
        first[i] = schedule_count(out);
        if (sbuf != UINT32_MAX) {
            x.dst = sbuf;
            id = schedule_add(out, &x, (const uint32_t *)deps->data, deps->len);
            g_array_set_size(deps, 1);
            g_array_index(deps, uint32_t, 0) = id;
            x.delay = 0;
            hop_src = sbuf;
        }
        x.src = hop_src;
        x.dst = dbuf != UINT32_MAX ? dbuf : tr->dst;
        id = schedule_add(out, &x, (const uint32_t *)deps->data, deps->len);
        if (dbuf != UINT32_MAX) {
            x.src = dbuf;
            x.dst = tr->dst;
            x.delay = 0;
            id = schedule_add(out, &x, &id, 1);
        }
        last[i] = id;
    }
    for (guint c = 0; c < in->colls->len; c++) {
        struct sched_coll cl = g_array_index(in->colls, struct sched_coll, c);
        uint32_t end = cl.first + cl.count - 1;
        cl.first = first[cl.first];
        cl.count = last[end] - cl.first + 1;
        g_array_append_val(out->colls, cl);
    }
    g_array_free(deps, TRUE);
    g_free(last);
    g_free(first);
    schedule_free(in);
    return out;
}
