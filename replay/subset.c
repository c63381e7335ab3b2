/* Part of a schedule for a smaller lab (see subset.h). */
#include "replay/subset.h"
#include "replay/replay.h"
#include <string.h>

/* The schedule with unmapped ends turned into markers; hosts renumbered by rank when
 * rank_of is not NULL. */
static struct schedule *build(const struct schedule *s, const guint8 *mapped, const uint32_t *qp_of,
                              const uint32_t *rank_of, uint32_t first, uint32_t ranks)
{
    struct schedule *n = schedule_new();
#define HOST(h) (rank_of ? rank_of[h] : (h))
    for (guint j = 0; j < s->jobs->len; j++) {
        const struct sched_job *jb = &g_array_index(s->jobs, struct sched_job, j);
        schedule_add_job(n, jb->name, jb->op, jb->algorithm, jb->ranks);
        g_array_index(n->jobs, struct sched_job, j).defaults = g_strdup(jb->defaults);
    }
    g_array_append_vals(n->colls, s->colls->data, s->colls->len);
    n->meta = s->meta;
    n->meta.topology = g_strdup(s->meta.topology);
    if (rank_of)
        n->meta.hosts = ranks;
    uint32_t *newq = g_new(uint32_t, s->qps->len ? s->qps->len : 1);
    for (guint q = 0; q < s->qps->len; q++) {
        struct sched_qp sq = g_array_index(s->qps, struct sched_qp, q);
        newq[q] = SCHEDULE_NO_QP;
        if (mapped[sq.src] && mapped[sq.dst]) {
            newq[q] = n->qps->len;
            sq.src = HOST(sq.src);
            sq.dst = HOST(sq.dst);
            g_array_append_val(n->qps, sq);
        }
    }
    for (uint32_t i = 0; i < schedule_count(s); i++) {
        const struct transfer *t = schedule_get(s, i);
        struct transfer u = *t;
        if (t->bytes && mapped[t->src] && mapped[t->dst]) {
            u.src = HOST(t->src);
            u.dst = HOST(t->dst);
            u.qp = newq[qp_of[i]];
        } else {
            uint32_t h = mapped[t->src] ? t->src : mapped[t->dst] ? t->dst : first;
            u.src = u.dst = HOST(h);
            u.bytes = 0;
            u.qp = SCHEDULE_NO_QP;
        }
        schedule_add(n, &u, schedule_deps(s, t), t->ndeps);
    }
#undef HOST
    g_free(newq);
    return n;
}

gboolean schedule_subset(const struct schedule *s, uint32_t nhosts, const guint8 *mapped,
                         struct schedule_subset *sub, GError **err)
{
    memset(sub, 0, sizeof *sub);
    uint32_t *rank_of = g_new0(uint32_t, nhosts ? nhosts : 1);
    sub->rank_host = g_new0(uint32_t, nhosts ? nhosts : 1);
    for (uint32_t h = 0; h < nhosts; h++)
        if (mapped[h]) {
            rank_of[h] = sub->ranks;
            sub->rank_host[sub->ranks++] = h;
        }
    if (!sub->ranks) {
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_INPUT, "the map names none of the schedule's %u hosts",
                    nhosts);
        g_free(rank_of);
        schedule_subset_clear(sub);
        return FALSE;
    }
    /* the index of each transfer's QP in s->qps, as the replay finds it */
    uint32_t *qp_of = NULL;
    GArray *tmp = g_array_new(FALSE, FALSE, sizeof(struct sched_qp));
    gboolean ok = schedule_derive_qps(s, tmp, &qp_of, NULL, err);
    g_array_free(tmp, TRUE);
    if (ok) {
        sub->run = build(s, mapped, qp_of, rank_of, sub->rank_host[0], sub->ranks);
        sub->out = build(s, mapped, qp_of, NULL, sub->rank_host[0], sub->ranks);
    }
    g_free(qp_of);
    g_free(rank_of);
    if (!ok)
        schedule_subset_clear(sub);
    return ok;
}

void schedule_subset_clear(struct schedule_subset *sub)
{
    if (sub->run)
        schedule_free(sub->run);
    if (sub->out)
        schedule_free(sub->out);
    g_free(sub->rank_host);
    memset(sub, 0, sizeof *sub);
}
