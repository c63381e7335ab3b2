#include "analysis/trace.h"
#include "results_io/pfc_csv.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Times in the format's microseconds, exactly, from nanoseconds. */
static void put_us(FILE *f, const char *key, uint64_t ns)
{
    fprintf(f, "\"%s\":%" PRIu64 ".%03" PRIu64, key, ns / 1000, ns % 1000);
}

/* pid: server + 1; tid: GPU + 1, staging buffer 1000 + NIC, other nodes 2000 + node. */
static void track(const struct topology *t, uint32_t node, uint32_t *pid, uint32_t *tid)
{
    const struct topo_node *nd = &t->nodes[node];
    *pid = nd->server + 1;
    *tid = nd->layer == LAYER_GPU ? nd->unit + 1 : nd->layer == LAYER_BOUNCE ? 1000 + nd->unit : 2000 + node;
}

static void event(FILE *f, bool *first, const char *name, const char *cat, uint32_t pid, uint32_t tid, uint64_t ts_ns,
                  uint64_t dur_ns, const char *args)
{
    fprintf(f, "%s\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",", *first ? "" : ",", name, cat);
    put_us(f, "ts", ts_ns);
    fputc(',', f);
    put_us(f, "dur", dur_ns);
    fprintf(f, ",\"pid\":%u,\"tid\":%u%s%s}", pid, tid, args ? ",\"args\":" : "", args ? args : "");
    *first = false;
}

static void meta(FILE *f, bool *first, const char *what, uint32_t pid, uint32_t tid, const char *name)
{
    fprintf(f, "%s\n{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":\"%s\"}}", *first ? "" : ",",
            what, pid, tid, name);
    *first = false;
}

struct pause_track {
    const struct topology *t;
    FILE *f;
    bool *first;
    GHashTable *named;
};

static void pause_event(void *ctx, const struct pfc_interval *iv)
{
    struct pause_track *pt = ctx;
    const char *name = pt->t->nodes[iv->node].name;
    uint32_t pid, tid;
    track(pt->t, iv->node, &pid, &tid);
    if (!g_hash_table_contains(pt->named, GUINT_TO_POINTER(pid * 4096 + tid))) {
        g_hash_table_add(pt->named, GUINT_TO_POINTER(pid * 4096 + tid));
        char *nm = g_strdup_printf("%s pauses", name);
        meta(pt->f, pt->first, "thread_name", pid, tid, nm);
        g_free(nm);
    }
    char *args = g_strdup_printf("{\"node\":\"%s\",\"port\":%u,\"prio\":%u}", name, iv->port, iv->prio);
    event(pt->f, pt->first, "PFC pause", "pause", pid, tid, iv->from_ns, iv->to_ns - iv->from_ns, args);
    g_free(args);
}

static void pauses(const struct net *n, const char *path, FILE *f, bool *first, GHashTable *named)
{
    struct pause_track pt = { n->topo, f, first, named };
    pfc_csv_each_interval(n->topo, path, pause_event, &pt);
}

gboolean trace_write(const struct net *n, const char *pfc_csv, FILE *f, GError **err)
{
    (void)err;
    const struct topology *t = n->topo;
    const struct schedule *s = n->sched;
    bool first = true;
    GHashTable *named = g_hash_table_new(g_direct_hash, g_direct_equal);
    fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
    for (uint32_t v = 0; v < t->servers; v++) {
        char nm[32];
        snprintf(nm, sizeof nm, "srv%u", v);
        meta(f, &first, "process_name", v + 1, 0, nm);
    }
    for (uint32_t h = 0; h < t->nhosts; h++) {
        uint32_t pid, tid;
        track(t, h, &pid, &tid);
        meta(f, &first, "thread_name", pid, tid, t->nodes[h].name);
    }
    /* transfers and compute phases, on the sending GPU's track */
    for (uint32_t i = 0; i < n->nxfers; i++) {
        const struct transfer *tr = schedule_get(s, i);
        const struct xfer_rt *x = &n->xfers[i];
        if (x->state != XF_DONE)
            continue;
        uint32_t pid, tid;
        track(t, tr->src, &pid, &tid);
        if (tr->bytes) {
            char name[64], args[160];
            snprintf(name, sizeof name, "to %s", t->nodes[tr->dst].name);
            snprintf(args, sizeof args, "{\"id\":%u,\"bytes\":%" PRIu64 ",\"dst\":\"%s\",\"channel\":%u}", i, tr->bytes,
                     t->nodes[tr->dst].name, tr->channel);
            event(f, &first, name, "transfer", pid, tid, x->start / PS_PER_NS, (x->end - x->start) / PS_PER_NS, args);
        } else if (tr->delay && tr->ndeps) {
            event(f, &first, "compute", "compute", pid, tid, (x->start - tr->delay) / PS_PER_NS, tr->delay / PS_PER_NS,
                  NULL);
        }
    }
    /* collective phases: on every GPU that sends or receives in them */
    for (guint c = 0; c < s->colls->len; c++) {
        const struct sched_coll *cl = &g_array_index(s->colls, struct sched_coll, c);
        const struct sched_job *jb = &g_array_index(s->jobs, struct sched_job, cl->job);
        const struct xfer_rt *b = &n->xfers[cl->first], *e = &n->xfers[cl->first + cl->count - 1];
        if (e->state != XF_DONE)
            continue;
        GHashTable *hosts = g_hash_table_new(g_direct_hash, g_direct_equal);
        for (uint32_t i = cl->first; i < cl->first + cl->count; i++) {
            const struct transfer *tr = schedule_get(s, i);
            if (tr->bytes && tr->src < t->gpus)
                g_hash_table_add(hosts, GUINT_TO_POINTER(tr->src + 1));
            if (tr->bytes && tr->dst < t->gpus)
                g_hash_table_add(hosts, GUINT_TO_POINTER(tr->dst + 1));
        }
        char name[96], args[128];
        snprintf(name, sizeof name, "%s %s %s", jb->name, jb->op, jb->algorithm);
        snprintf(args, sizeof args, "{\"job\":\"%s\",\"iteration\":%u,\"bytes\":%" PRIu64 "}", jb->name, cl->iteration,
                 cl->bytes);
        for (uint32_t h = 0; h < t->gpus; h++)
            if (g_hash_table_contains(hosts, GUINT_TO_POINTER(h + 1))) {
                uint32_t pid, tid;
                track(t, h, &pid, &tid);
                event(f, &first, name, "collective", pid, tid, b->end / PS_PER_NS, (e->end - b->end) / PS_PER_NS, args);
            }
        g_hash_table_destroy(hosts);
    }
    pauses(n, pfc_csv, f, &first, named);
    fprintf(f, "\n]}\n");
    g_hash_table_destroy(named);
    return TRUE;
}
