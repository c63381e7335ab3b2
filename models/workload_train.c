#include "models/workload_train.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "models/collective.h"
#include "models/collective_hier.h"
#include "sim/units.h"

#define NONE UINT32_MAX
#define TRAIN_MAX_JOBS 4000 /* collective QP tags hold job numbers below 4096 */

struct plan {
    uint32_t tp, pp, dp, ep, m, layers;
    uint64_t act, params, dtype, bucket;
    bool fsdp;
    simtime_t fwd, bwd;
    uint32_t *gpu;               /* rank (pp, dp, tp order, tp fastest) -> GPU host */
};

struct tb {
    const struct scenario *sc;
    const struct topology *t;
    struct schedule *s;
    const struct named_section *w;
    struct plan p;
    uint8_t prio;
    uint32_t job;                /* the step's own job: compute markers */
    uint32_t *last;              /* per rank: what its next operation waits for */
    GArray *pending;             /* non-blocking collectives (DP, FSDP reduce-scatter) to end with */
    GError **err;
    gboolean ok;
};

static uint32_t rank_of(const struct plan *p, uint32_t s, uint32_t d, uint32_t t)
{
    return (s * p->dp + d) * p->tp + t;
}

static uint32_t marker(struct tb *b, uint32_t rank, const uint32_t *deps, uint32_t nd, simtime_t delay)
{
    struct transfer x = { .src = b->p.gpu[rank], .dst = b->p.gpu[rank], .bytes = 0, .prio = b->prio,
                          .qp = COLLECTIVE_QP(b->job, 0), .delay = delay, .job = b->job, .coll = SCHEDULE_NO_JOB };
    return schedule_add(b->s, &x, deps, nd);
}

static void compute(struct tb *b, uint32_t rank, simtime_t dur, uint32_t extra)
{
    uint32_t d[2] = { b->last[rank], extra }, nd = extra == NONE ? 1 : 2;
    b->last[rank] = marker(b, rank, d, nd, dur);
}

/* A collective over `ranks` (plan ranks) waiting for their `last` (and `also`); blocking
 * ones become the ranks' new `last`. Returns the collective's end marker. */
static uint32_t coll(struct tb *b, enum collective_op op, const uint32_t *ranks, uint32_t n, uint64_t size,
                     const char *name, bool blocking, uint32_t also)
{
    if (!b->ok || n < 2 || size == 0)
        return NONE;
    if (b->s->jobs->len >= TRAIN_MAX_JOBS) {
        char group[300];
        snprintf(group, sizeof group, "workload %s", b->w->name);
        scenario_key_error(b->err, b->sc, group, "microbatches", g_hash_table_lookup(b->w->keys, "microbatches"),
                           "the plan needs more than %u collectives: use fewer layers or micro-batches", TRAIN_MAX_JOBS);
        b->ok = FALSE;
        return NONE;
    }
    uint32_t *gpus = g_new(uint32_t, n);
    GArray *after = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    for (uint32_t i = 0; i < n; i++) {
        gpus[i] = b->p.gpu[ranks[i]];
        g_array_append_val(after, b->last[ranks[i]]);
    }
    if (also != NONE)
        g_array_append_val(after, also);
    struct collective_spec sp;
    collective_spec_init(&sp);
    char *full = g_strdup_printf("%s.%s", b->w->name, name);
    sp.name = full;
    sp.op = op;
    sp.algorithm = collective_default_algo(op);
    sp.ranks = gpus;
    sp.nranks = n;
    sp.size = size;
    sp.prio = b->prio;
    sp.after = (const uint32_t *)after->data;
    sp.nafter = after->len;
    sp.peer = 1;
    uint32_t *ring = NULL;
    if (hier_spans_servers(b->t, gpus, n)) {
        sp.channels = b->t->nics_per_server;
        if (sp.algorithm == COLL_ALGO_RING)
            sp.ring_order = ring = hier_ring_order(b->t, gpus, n, sp.channels);
    }
    GError *e = NULL;
    uint32_t end = NONE;
    if (collective_build(b->s, &sp, &e)) {
        GArray *sinks = schedule_job_sinks(b->s, b->s->jobs->len - 1);
        end = g_array_index(sinks, uint32_t, sinks->len - 1);
        g_array_free(sinks, TRUE);
        if (blocking)
            for (uint32_t i = 0; i < n; i++)
                b->last[ranks[i]] = end;
        else
            g_array_append_val(b->pending, end);
    } else {
        g_set_error(b->err, SCENARIO_ERROR, 1, "%s: [workload %s] %s", b->sc->path, b->w->name, e->message);
        g_error_free(e);
        b->ok = FALSE;
    }
    g_free(ring);
    g_free(full);
    g_free(gpus);
    g_array_free(after, TRUE);
    return end;
}

/* The TP group of (s, d) and the DP group of (s, t) (EP group: dp ranks e*ep .. e*ep+ep-1). */
static void tp_group(const struct plan *p, uint32_t s, uint32_t d, uint32_t *out)
{
    for (uint32_t t = 0; t < p->tp; t++)
        out[t] = rank_of(p, s, d, t);
}
static void dp_group(const struct plan *p, uint32_t s, uint32_t t, uint32_t d0, uint32_t n, uint32_t *out)
{
    for (uint32_t d = 0; d < n; d++)
        out[d] = rank_of(p, s, d0 + d, t);
}

/* One layer of a forward (dir 0) or backward (dir 1) on stage s, every DP replica. */
static void layer(struct tb *b, uint32_t s, uint32_t l, uint32_t mb, int dir)
{
    const struct plan *p = &b->p;
    uint32_t *g = g_new(uint32_t, p->tp > p->dp ? p->tp : p->dp);
    char name[96];
    const char *ph = dir ? "bwd" : "fwd";
    uint64_t shard = p->params / p->tp * p->dtype;
    if (p->fsdp)
        for (uint32_t t = 0; t < p->tp; t++) {
            dp_group(p, s, t, 0, p->dp, g);
            snprintf(name, sizeof name, "fsdp.ag.s%u.t%u.l%u.mb%u.%s", s, t, l, mb, ph);
            coll(b, COLL_ALLGATHER, g, p->dp, shard, name, true, NONE);
        }
    for (uint32_t d = 0; d < p->dp; d++)
        for (uint32_t t = 0; t < p->tp; t++)
            compute(b, rank_of(p, s, d, t), dir ? p->bwd : p->fwd, NONE);
    for (int k = 0; k < 2; k++) {
        for (uint32_t d = 0; d < p->dp; d++) {
            tp_group(p, s, d, g);
            snprintf(name, sizeof name, "tp.s%u.d%u.l%u.mb%u.%s%d", s, d, l, mb, ph, k);
            coll(b, COLL_ALLREDUCE, g, p->tp, p->act, name, true, NONE);
        }
        if (p->ep > 1)
            for (uint32_t t = 0; t < p->tp; t++)
                for (uint32_t e = 0; e < p->dp / p->ep; e++) {
                    dp_group(p, s, t, e * p->ep, p->ep, g);
                    snprintf(name, sizeof name, "ep.s%u.t%u.e%u.l%u.mb%u.%s%d", s, t, e, l, mb, ph, k);
                    coll(b, COLL_ALLTOALL, g, p->ep, p->act / p->tp / p->ep * p->ep, name, true, NONE);
                }
    }
    g_free(g);
}

/* Sends A/tp from every TP rank of stage `from` to the same rank of stage `to` for micro-batch
 * mb; `in` (per DP replica and TP rank) receives what the receiving op must wait for. */
static void pp_send(struct tb *b, uint32_t from, uint32_t to, uint32_t mb, int dir, uint32_t *in)
{
    const struct plan *p = &b->p;
    char name[96];
    for (uint32_t d = 0; d < p->dp; d++)
        for (uint32_t t = 0; t < p->tp; t++) {
            uint32_t pair[2] = { rank_of(p, from, d, t), rank_of(p, to, d, t) };
            snprintf(name, sizeof name, "pp.s%u>s%u.d%u.t%u.mb%u.%s", from, to, d, t, mb, dir ? "bwd" : "fwd");
            uint32_t saved = b->last[pair[1]];
            b->last[pair[1]] = b->last[pair[0]]; /* the send waits for the sender only */
            in[d * p->tp + t] = coll(b, COLL_SENDRECV, pair, 2, p->act / p->tp, name, false, NONE);
            b->last[pair[1]] = saved;
            g_array_set_size(b->pending, b->pending->len - (in[d * p->tp + t] != NONE)); /* waited for by the receiver */
        }
}

/* Stage s's 1F1B order: ops[k] = mb for a forward, -(mb+1) for a backward. */
static int *one_f_one_b(uint32_t s, uint32_t pp, uint32_t m, uint32_t *n)
{
    int *ops = g_new(int, 2 * m);
    uint32_t warm = pp - s - 1 < m ? pp - s - 1 : m, f = 0, bk = 0, k = 0;
    while (f < warm)
        ops[k++] = (int)f++;
    while (f < m) {
        ops[k++] = (int)f++;
        ops[k++] = -(int)(bk++) - 1;
    }
    while (bk < m)
        ops[k++] = -(int)(bk++) - 1;
    *n = k;
    return ops;
}

static void step(struct tb *b)
{
    const struct plan *p = &b->p;
    const uint32_t P = p->pp, M = p->m, DT = p->dp * p->tp, L = p->layers / p->pp;
    uint32_t *fwd_in = g_new(uint32_t, (size_t)P * M * DT), *bwd_in = g_new(uint32_t, (size_t)P * M * DT);
    memset(fwd_in, 0xff, sizeof(uint32_t) * P * M * DT);
    memset(bwd_in, 0xff, sizeof(uint32_t) * P * M * DT);
    int **ops = g_new(int *, P);
    uint32_t *nops = g_new(uint32_t, P), *next = g_new0(uint32_t, P), *dp_prev = g_new(uint32_t, P * p->tp);
    memset(dp_prev, 0xff, sizeof(uint32_t) * P * p->tp);
    uint64_t *bucket = g_new0(uint64_t, P);
    for (uint32_t s = 0; s < P; s++)
        ops[s] = one_f_one_b(s, P, M, &nops[s]);
    uint32_t *g = g_new(uint32_t, p->dp);
    char name[96];
    /* emit the next op of any stage whose input exists, until every stage is done */
    for (bool progress = true; progress && b->ok;) {
        progress = false;
        for (uint32_t s = 0; s < P && b->ok; s++) {
            if (next[s] == nops[s])
                continue;
            int op = ops[s][next[s]];
            bool bwd = op < 0;
            uint32_t mb = bwd ? (uint32_t)(-op - 1) : (uint32_t)op;
            uint32_t *in = (bwd ? bwd_in : fwd_in) + ((size_t)s * M + mb) * DT;
            bool need = bwd ? s + 1 < P : s > 0;
            if (need && in[0] == NONE)
                continue;
            next[s]++;
            progress = true;
            for (uint32_t d = 0; need && d < p->dp; d++)
                for (uint32_t t = 0; t < p->tp; t++) {
                    uint32_t r = rank_of(p, s, d, t);
                    uint32_t dd[2] = { b->last[r], in[d * p->tp + t] };
                    b->last[r] = marker(b, r, dd, 2, 0);
                }
            for (uint32_t k = 0; k < L && b->ok; k++) {
                uint32_t l = bwd ? L - 1 - k : k;
                layer(b, s, l, mb, bwd);
                if (!bwd || mb != M - 1)
                    continue;
                /* the last micro-batch's backward has produced layer l's gradients */
                uint64_t shard = p->params / p->tp * p->dtype;
                for (uint32_t t = 0; t < p->tp && p->fsdp; t++) {
                    dp_group(p, s, t, 0, p->dp, g);
                    snprintf(name, sizeof name, "fsdp.rs.s%u.t%u.l%u", s, t, l);
                    coll(b, COLL_REDUCESCATTER, g, p->dp, shard, name, false, NONE);
                }
                if (p->fsdp)
                    continue;
                bucket[s] += shard;
                if (bucket[s] < p->bucket && k + 1 < L)
                    continue;
                for (uint32_t t = 0; t < p->tp; t++) {
                    dp_group(p, s, t, 0, p->dp, g);
                    snprintf(name, sizeof name, "dp.s%u.t%u.l%u", s, t, l);
                    uint32_t e = coll(b, COLL_ALLREDUCE, g, p->dp, bucket[s], name, false, dp_prev[s * p->tp + t]);
                    if (e != NONE)
                        dp_prev[s * p->tp + t] = e; /* buckets run in order on the NCCL stream */
                }
                bucket[s] = 0;
            }
            if (bwd ? s > 0 : s + 1 < P)
                pp_send(b, s, bwd ? s - 1 : s + 1, mb, bwd,
                        (bwd ? bwd_in : fwd_in) + ((size_t)(bwd ? s - 1 : s + 1) * M + mb) * DT);
        }
    }
    for (uint32_t s = 0; s < P; s++)
        g_free(ops[s]);
    g_free(ops);
    g_free(nops);
    g_free(next);
    g_free(dp_prev);
    g_free(bucket);
    g_free(fwd_in);
    g_free(bwd_in);
    g_free(g);
}

static gboolean get_u64(const struct scenario *sc, const struct named_section *w, const char *key, uint64_t lo,
                        uint64_t hi, uint64_t deflt, bool size, uint64_t *out, GError **err)
{
    char group[300];
    snprintf(group, sizeof group, "workload %s", w->name);
    const char *v = g_hash_table_lookup(w->keys, key);
    *out = deflt;
    if (!v)
        return TRUE;
    char *why = NULL, *end;
    errno = 0;
    gboolean ok = size ? units_parse_size(v, out, &why) : (*out = strtoull(v, &end, 10), !errno && end != v && !*end);
    if (!ok || *out < lo || *out > hi) {
        if (size)
            scenario_key_error(err, sc, group, key, v, "%s", why ? why : "expected a positive size");
        else
            scenario_key_error(err, sc, group, key, v, "expected a whole number from %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT,
                               lo, hi);
        g_free(why);
        return FALSE;
    }
    return TRUE;
}

static gboolean get_time(const struct scenario *sc, const struct named_section *w, const char *key, simtime_t deflt,
                         simtime_t *out, GError **err)
{
    const char *v = g_hash_table_lookup(w->keys, key);
    char *why = NULL;
    *out = deflt;
    if (v && !units_parse_time(v, out, &why)) {
        char group[300];
        snprintf(group, sizeof group, "workload %s", w->name);
        scenario_key_error(err, sc, group, key, v, "%s", why);
        g_free(why);
        return FALSE;
    }
    return TRUE;
}

static gint cmp_u32(gconstpointer a, gconstpointer b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

gboolean train_build(const struct scenario *sc, const struct topology *t, struct schedule *s,
                     const struct named_section *w, uint8_t prio, simtime_t start, const uint32_t *after,
                     uint32_t nafter, GError **err)
{
    char group[300];
    snprintf(group, sizeof group, "workload %s", w->name);
    if (!t->servers) {
        scenario_key_error(err, sc, group, "kind", "train", "a training step needs multi-GPU servers ([server])");
        return FALSE;
    }
    struct plan p = { 0 };
    uint64_t v[12];
    if (!get_u64(sc, w, "tp", 1, 64, 1, false, &v[0], err) || !get_u64(sc, w, "pp", 1, 1024, 1, false, &v[1], err) ||
        !get_u64(sc, w, "dp", 1, 65536, 1, false, &v[2], err) || !get_u64(sc, w, "ep", 1, 65536, 1, false, &v[3], err) ||
        !get_u64(sc, w, "microbatches", 1, 1024, 1, false, &v[4], err) ||
        !get_u64(sc, w, "layers", 1, 1024, 1, false, &v[5], err) ||
        !get_u64(sc, w, "hidden", 1, 1u << 20, 1024, false, &v[6], err) ||
        !get_u64(sc, w, "seq", 1, 1u << 24, 2048, false, &v[7], err) ||
        !get_u64(sc, w, "batch", 1, 1u << 16, 1, false, &v[8], err) ||
        !get_u64(sc, w, "dtype_bytes", 1, 8, 2, false, &v[9], err) ||
        !get_u64(sc, w, "bucket", 1, UINT64_MAX, 25000000, true, &v[10], err) ||
        !get_time(sc, w, "fwd", 0, &p.fwd, err))
        return FALSE;
    p.tp = (uint32_t)v[0];
    p.pp = (uint32_t)v[1];
    p.dp = (uint32_t)v[2];
    p.ep = (uint32_t)v[3];
    p.m = (uint32_t)v[4];
    p.layers = (uint32_t)v[5];
    p.dtype = v[9];
    p.bucket = v[10];
    p.act = v[8] * v[7] * v[6] * v[9];
    p.params = 12 * v[6] * v[6];
    if (!get_u64(sc, w, "activation_bytes", 1, UINT64_MAX, p.act, true, &p.act, err) ||
        !get_u64(sc, w, "layer_params", 1, UINT64_MAX, p.params, false, &p.params, err) ||
        !get_time(sc, w, "bwd", 2 * p.fwd, &p.bwd, err))
        return FALSE;
    const char *fs = g_hash_table_lookup(w->keys, "fsdp");
    if (fs && strcmp(fs, "on") && strcmp(fs, "off")) {
        scenario_key_error(err, sc, group, "fsdp", fs, "expected on or off");
        return FALSE;
    }
    p.fsdp = fs && !strcmp(fs, "on");
    char num[32];
    if (p.layers % p.pp) {
        snprintf(num, sizeof num, "%u", p.layers);
        scenario_key_error(err, sc, group, "layers", num, "expected a multiple of pp (%u): every stage holds as many", p.pp);
        return FALSE;
    }
    if (p.dp % p.ep) {
        snprintf(num, sizeof num, "%u", p.ep);
        scenario_key_error(err, sc, group, "ep", num, "expected a divisor of dp (%u): EP groups are made of DP replicas", p.dp);
        return FALSE;
    }
    if (t->gpus_per_server % p.tp) {
        snprintf(num, sizeof num, "%u", p.tp);
        scenario_key_error(err, sc, group, "tp", num, "expected a divisor of the %u GPUs of a server: TP stays on NVLink",
                           t->gpus_per_server);
        return FALSE;
    }
    uint32_t need = p.tp * p.pp * p.dp, n = 0;
    const char *rv = g_hash_table_lookup(w->keys, "ranks");
    char *why = NULL;
    if (rv) {
        p.gpu = hier_parse_gpus(t, rv, &n, &why);
        if (!p.gpu) {
            scenario_key_error(err, sc, group, "ranks", rv, "%s", why);
            g_free(why);
            return FALSE;
        }
    } else {
        n = need <= t->gpus ? need : 0;
        p.gpu = g_new(uint32_t, need);
        for (uint32_t i = 0; i < n; i++)
            p.gpu[i] = i;
    }
    if (n != need) {
        snprintf(num, sizeof num, "%u", n);
        scenario_key_error(err, sc, group, "ranks", rv ? rv : num, "tp x pp x dp = %u GPUs needed (the cluster has %u)",
                           need, t->gpus);
        g_free(p.gpu);
        return FALSE;
    }
    for (uint32_t r = 0; r < need; r += p.tp)
        for (uint32_t k = 1; k < p.tp; k++)
            if (p.gpu[r + k] / t->gpus_per_server != p.gpu[r] / t->gpus_per_server) {
                scenario_key_error(err, sc, group, "ranks", rv, "TP group of rank %u spans servers: TP stays inside a server", r);
                g_free(p.gpu);
                return FALSE;
            }
    struct tb b = { .sc = sc, .t = t, .s = s, .w = w, .p = p, .prio = prio, .err = err, .ok = TRUE };
    b.job = schedule_add_job(s, w->name, "train", "", need);
    b.last = g_new(uint32_t, need);
    b.pending = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    struct transfer x = { .src = p.gpu[0], .dst = p.gpu[0], .prio = prio, .qp = COLLECTIVE_QP(b.job, 0),
                          .delay = start, .job = b.job, .coll = SCHEDULE_NO_JOB };
    uint32_t st = schedule_add(s, &x, after, nafter);
    for (uint32_t r = 0; r < need; r++)
        b.last[r] = st;
    step(&b);
    if (b.ok) {
        /* the step ends when every rank and every overlapped collective has: one marker */
        GArray *all = g_array_new(FALSE, FALSE, sizeof(uint32_t));
        g_array_append_vals(all, b.pending->data, b.pending->len);
        g_array_append_vals(all, b.last, need);
        g_array_sort(all, cmp_u32);
        guint k = 0;
        for (guint i = 0; i < all->len; i++)
            if (!k || g_array_index(all, uint32_t, i) != g_array_index(all, uint32_t, k - 1))
                g_array_index(all, uint32_t, k++) = g_array_index(all, uint32_t, i);
        g_array_set_size(all, k);
        x.delay = 0;
        x.job = b.job;
        schedule_add(s, &x, (const uint32_t *)all->data, all->len);
        g_array_free(all, TRUE);
    }
    g_free(b.last);
    g_array_free(b.pending, TRUE);
    g_free(p.gpu);
    return b.ok;
}
