#include "models/schedule.h"
#include <string.h>
#include "models/net.h"

struct schedule *schedule_new(void)
{
    struct schedule *s = g_new0(struct schedule, 1);
    s->transfers = g_array_new(FALSE, FALSE, sizeof(struct transfer));
    s->deps = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    s->jobs = g_array_new(FALSE, FALSE, sizeof(struct sched_job));
    s->colls = g_array_new(FALSE, FALSE, sizeof(struct sched_coll));
    s->qps = g_array_new(FALSE, FALSE, sizeof(struct sched_qp));
    return s;
}

void schedule_free(struct schedule *s)
{
    if (!s)
        return;
    for (guint i = 0; i < s->jobs->len; i++) {
        struct sched_job *j = &g_array_index(s->jobs, struct sched_job, i);
        g_free(j->name);
        g_free(j->op);
        g_free(j->algorithm);
        g_free(j->defaults);
    }
    g_array_free(s->transfers, TRUE);
    g_array_free(s->deps, TRUE);
    g_array_free(s->jobs, TRUE);
    g_array_free(s->colls, TRUE);
    g_array_free(s->qps, TRUE);
    g_free(s->meta.topology);
    g_free(s);
}

uint32_t schedule_add_job(struct schedule *s, const char *name, const char *op,
                          const char *algorithm, uint32_t ranks)
{
    struct sched_job j = { g_strdup(name), g_strdup(op), g_strdup(algorithm ? algorithm : ""), ranks, NULL };
    g_array_append_val(s->jobs, j);
    return s->jobs->len - 1;
}

uint32_t schedule_add(struct schedule *s, const struct transfer *t, const uint32_t *deps,
                      uint32_t ndeps)
{
    struct transfer c = *t;
    c.deps_off = s->deps->len;
    c.ndeps = ndeps;
    if (ndeps)
        g_array_append_vals(s->deps, deps, ndeps);
    g_array_append_val(s->transfers, c);
    return s->transfers->len - 1;
}

static void sum_u64(GChecksum *c, uint64_t v) { g_checksum_update(c, (const guchar *)&v, sizeof v); }

static void sum_str(GChecksum *c, const char *s)
{
    sum_u64(c, strlen(s));
    g_checksum_update(c, (const guchar *)s, (gssize)strlen(s));
}

void schedule_checksum(GChecksum *c, const struct schedule *s)
{
    sum_u64(c, schedule_count(s));
    for (uint32_t i = 0; i < schedule_count(s); i++) {
        const struct transfer *t = schedule_get(s, i);
        uint64_t v[6] = { (uint64_t)t->src << 32 | t->dst,
                          t->bytes,
                          (uint64_t)t->prio << 48 | (uint64_t)t->channel << 32 | t->qp,
                          (uint64_t)t->deps_off << 32 | t->ndeps,
                          t->delay,
                          (uint64_t)t->job << 32 | t->coll };
        g_checksum_update(c, (const guchar *)v, sizeof v);
    }
    sum_u64(c, s->deps->len);
    g_checksum_update(c, (const guchar *)s->deps->data, (gssize)(s->deps->len * sizeof(uint32_t)));
    sum_u64(c, s->jobs->len);
    for (guint j = 0; j < s->jobs->len; j++) {
        const struct sched_job *jb = &g_array_index(s->jobs, struct sched_job, j);
        sum_str(c, jb->name);
        sum_str(c, jb->op);
        sum_str(c, jb->algorithm ? jb->algorithm : "");
        sum_u64(c, jb->ranks);
    }
    sum_u64(c, s->colls->len);
}

GArray *schedule_job_sinks(const struct schedule *s, uint32_t job)
{
    uint32_t n = s->transfers->len;
    guint8 *waited = g_new0(guint8, n ? n : 1);
    for (uint32_t id = 0; id < n; id++) {
        const struct transfer *t = schedule_get(s, id);
        if (t->job != job)
            continue;
        const uint32_t *d = schedule_deps(s, t);
        for (uint32_t i = 0; i < t->ndeps; i++)
            if (d[i] < n && schedule_get(s, d[i])->job == job)
                waited[d[i]] = 1;
    }
    GArray *out = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    for (uint32_t id = 0; id < n; id++)
        if (schedule_get(s, id)->job == job && !waited[id])
            g_array_append_val(out, id);
    g_free(waited);
    return out;
}

struct qp_tag {
    uint32_t src, dst, tag;
};
static guint qp_tag_hash(gconstpointer k)
{
    const struct qp_tag *q = k;
    return (q->src * 2654435761u) ^ (q->dst * 40503u) ^ (q->tag * 2246822519u);
}
static gboolean qp_tag_eq(gconstpointer a, gconstpointer b)
{
    return memcmp(a, b, sizeof(struct qp_tag)) == 0;
}

gboolean schedule_derive_qps(const struct schedule *s, GArray *qps, uint32_t **qp_of, uint32_t *bad,
                             GError **err)
{
    uint32_t n = schedule_count(s), maxhost = 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct transfer *t = schedule_get(s, i);
        maxhost = MAX(maxhost, MAX(t->src, t->dst));
    }
    uint32_t *of = g_new(uint32_t, n ? n : 1);
    uint32_t *next_qpn = g_new(uint32_t, (gsize)maxhost + 1);
    for (uint32_t h = 0; h <= maxhost; h++)
        next_qpn[h] = 0x100; /* as models/net.c numbers the simulated NIC's QPs */
    GHashTable *map = g_hash_table_new_full(qp_tag_hash, qp_tag_eq, g_free, NULL);
    GArray *firsts = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    g_array_set_size(qps, 0);
    gboolean ok = TRUE;
    for (uint32_t i = 0; i < n && ok; i++) {
        const struct transfer *t = schedule_get(s, i);
        of[i] = SCHEDULE_NO_QP;
        if (t->bytes == 0)
            continue;
        struct qp_tag key = { t->src, t->dst, t->qp };
        gpointer v;
        if (g_hash_table_lookup_extended(map, &key, NULL, &v)) {
            uint32_t q = GPOINTER_TO_UINT(v);
            const struct sched_qp *sq = &g_array_index(qps, struct sched_qp, q);
            if (sq->prio != t->prio) {
                uint32_t f = g_array_index(firsts, uint32_t, q);
                g_set_error(err, g_quark_from_static_string("rocesim-schedule"), 1,
                            "transfer %u: priority %u differs from priority %u of transfer %u on the "
                            "same QP (src %u, dst %u, qp %u): a QP has one priority",
                            i, t->prio, sq->prio, f, t->src, t->dst, t->qp);
                if (bad)
                    *bad = i;
                ok = FALSE;
                break;
            }
            of[i] = q;
            continue;
        }
        struct sched_qp sq = { .src = t->src, .dst = t->dst, .prio = t->prio };
        sq.lqpn = next_qpn[t->src]++;
        sq.rqpn = next_qpn[t->dst]++;
        sq.sport = roce_udp_sport(sq.lqpn, sq.rqpn);
        of[i] = qps->len;
        g_hash_table_insert(map, g_memdup2(&key, sizeof key), GUINT_TO_POINTER(qps->len));
        g_array_append_val(qps, sq);
        g_array_append_val(firsts, i);
    }
    g_hash_table_unref(map);
    g_array_free(firsts, TRUE);
    g_free(next_qpn);
    if (!ok) {
        g_array_set_size(qps, 0);
        g_free(of);
        return FALSE;
    }
    if (qp_of)
        *qp_of = of;
    else
        g_free(of);
    return TRUE;
}

uint16_t roce_sport_of_flow_label(uint32_t fl)
{
    return (uint16_t)(0xC000 | ((fl & 0x3FFF) ^ ((fl >> 14) & 0x3F)));
}

uint32_t roce_flow_label_for_sport(uint16_t sport)
{
    uint32_t low = sport & 0x3FFFu;
    /* 0 would make the NIC hash the QP numbers; 0x4001 folds to the same low bits of 0 */
    return low ? low : 0x4001u;
}

void schedule_number_qps(GArray *qps)
{
    GHashTable *next = g_hash_table_new(g_direct_hash, g_direct_equal); /* host -> next qpn */
    for (guint i = 0; i < qps->len; i++) {
        struct sched_qp *q = &g_array_index(qps, struct sched_qp, i);
        uint32_t *ends[2] = { &q->lqpn, &q->rqpn };
        uint32_t hosts[2] = { q->src, q->dst };
        for (int k = 0; k < 2; k++) {
            gpointer v = g_hash_table_lookup(next, GUINT_TO_POINTER(hosts[k] + 1));
            uint32_t qpn = v ? GPOINTER_TO_UINT(v) : 0x100;
            *ends[k] = qpn;
            g_hash_table_insert(next, GUINT_TO_POINTER(hosts[k] + 1), GUINT_TO_POINTER(qpn + 1));
        }
    }
    g_hash_table_unref(next);
}
