/* Collective builders: bytes per rank against the nccl-tests formulas, DAG soundness, steps and
 * rounds on a toy network, the in-flight bound, iterations and compute gaps, validation. */
#include <string.h>
#include "models/collective.h"
#include "models/schedule_io.h"
#include "tests/testutil.h"

/* ---- helpers ---- */

static uint32_t *iota(uint32_t n, uint32_t base)
{
    uint32_t *r = g_new(uint32_t, n);
    for (uint32_t i = 0; i < n; i++)
        r[i] = base + i;
    return r;
}

/* A spec over hosts base..base+n-1 (rank i = host base+i), 1 channel. */
static struct collective_spec spec_of(enum collective_op op, enum collective_algo algo,
                                      const uint32_t *ranks, uint32_t n, uint64_t size,
                                      uint64_t chunk)
{
    struct collective_spec sp;
    collective_spec_init(&sp);
    sp.name = "job";
    sp.op = op;
    sp.algorithm = algo;
    sp.ranks = ranks;
    sp.nranks = n;
    sp.size = size;
    sp.chunk = chunk;
    sp.channels = 1;
    return sp;
}

static struct schedule *build_ok(const struct collective_spec *sp)
{
    struct schedule *s = schedule_new();
    GError *err = NULL;
    gboolean ok = collective_build(s, sp, &err);
    if (!ok)
        fprintf(stderr, "collective_build: %s\n", err->message);
    CU_ASSERT_FATAL(ok);
    return s;
}

/* Bytes sent and received per host (indexed by host id, up to nhosts). */
static void bytes_per_host(const struct schedule *s, uint32_t nhosts, uint64_t *sent,
                           uint64_t *recv)
{
    memset(sent, 0, sizeof(uint64_t) * nhosts);
    memset(recv, 0, sizeof(uint64_t) * nhosts);
    for (uint32_t id = 0; id < schedule_count(s); id++) {
        const struct transfer *t = schedule_get(s, id);
        CU_ASSERT_FATAL(t->src < nhosts && t->dst < nhosts);
        sent[t->src] += t->bytes;
        recv[t->dst] += t->bytes;
    }
}

enum dur_mode { DUR_ZERO, DUR_UNIT, DUR_RANDOM };

/* A toy network to run a schedule on: every QP, (src, dst, qp), sends one transfer at a time
 * in the order they become ready (ties by id), a data transfer takes 0, 1 or a random 1..50
 * time units (one in 64 of them 100 times longer), markers take none, QPs do not disturb each
 * other. */
struct run {
    uint64_t *ready, *start, *finish;
    gboolean qp_in_id_order;   /* every QP served its transfers in id order */
    uint32_t max_outstanding;  /* most transfers of one QP ready and unfinished at once */
    uint32_t done;             /* transfers that ran (all of them unless there is a cycle) */
};

struct heap_item {
    uint64_t key;
    uint32_t id;
};

static gboolean item_less(struct heap_item a, struct heap_item b)
{
    return a.key < b.key || (a.key == b.key && a.id < b.id);
}

static void heap_push(GArray *h, struct heap_item it)
{
    g_array_append_val(h, it);
    struct heap_item *a = (struct heap_item *)h->data;
    for (guint i = h->len - 1; i > 0;) {
        guint p = (i - 1) / 2;
        if (!item_less(a[i], a[p]))
            break;
        struct heap_item t = a[i];
        a[i] = a[p];
        a[p] = t;
        i = p;
    }
}

static struct heap_item heap_pop(GArray *h)
{
    struct heap_item *a = (struct heap_item *)h->data;
    struct heap_item top = a[0];
    a[0] = a[h->len - 1];
    g_array_set_size(h, h->len - 1);
    a = (struct heap_item *)h->data;
    for (guint i = 0;;) {
        guint l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->len && item_less(a[l], a[m]))
            m = l;
        if (r < h->len && item_less(a[r], a[m]))
            m = r;
        if (m == i)
            break;
        struct heap_item t = a[i];
        a[i] = a[m];
        a[m] = t;
        i = m;
    }
    return top;
}

struct qpstate {
    uint64_t free_at;
    uint32_t last_id;
    GArray *served; /* ids in service order */
};

static void qpstate_free(gpointer p)
{
    struct qpstate *q = p;
    g_array_free(q->served, TRUE);
    g_free(q);
}

static char *qp_key(const struct transfer *t)
{
    return g_strdup_printf("%u/%u/%u", t->src, t->dst, t->qp);
}

static void run_schedule(const struct schedule *s, enum dur_mode mode, uint32_t seed,
                         struct run *out)
{
    const uint32_t n = schedule_count(s);
    uint32_t *indeg = g_new0(uint32_t, n);
    GPtrArray **succ = g_new0(GPtrArray *, n);
    for (uint32_t id = 0; id < n; id++) {
        const struct transfer *t = schedule_get(s, id);
        const uint32_t *d = schedule_deps(s, t);
        indeg[id] = t->ndeps;
        for (uint32_t i = 0; i < t->ndeps; i++) {
            CU_ASSERT_FATAL(d[i] < n);
            if (!succ[d[i]])
                succ[d[i]] = g_ptr_array_new();
            g_ptr_array_add(succ[d[i]], GUINT_TO_POINTER(id));
        }
    }
    out->ready = g_new0(uint64_t, n);
    out->start = g_new0(uint64_t, n);
    out->finish = g_new0(uint64_t, n);
    out->qp_in_id_order = TRUE;
    out->max_outstanding = 0;
    out->done = 0;
    uint64_t *depmax = g_new0(uint64_t, n);
    GHashTable *qps = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, qpstate_free);
    GArray *heap = g_array_new(FALSE, FALSE, sizeof(struct heap_item));
    for (uint32_t id = 0; id < n; id++)
        if (indeg[id] == 0) {
            out->ready[id] = schedule_get(s, id)->delay;
            heap_push(heap, (struct heap_item){ out->ready[id], id });
        }
    uint32_t rng = seed * 2654435761u + 1;
    while (heap->len) {
        struct heap_item it = heap_pop(heap);
        const struct transfer *t = schedule_get(s, it.id);
        uint64_t st = it.key, dur = 0;
        if (t->bytes > 0) {
            if (mode == DUR_UNIT)
                dur = 1;
            else if (mode == DUR_RANDOM) {
                /* heavy tail: a few very slow transfers skew ranks against each other */
                rng = rng * 1103515245u + 12345u;
                dur = 1 + (rng >> 16) % 50;
                if ((rng >> 8) % 64 == 0)
                    dur *= 100;
            }
            char *k = qp_key(t);
            struct qpstate *q = g_hash_table_lookup(qps, k);
            if (!q) {
                q = g_new0(struct qpstate, 1);
                q->last_id = UINT32_MAX;
                q->served = g_array_new(FALSE, FALSE, sizeof(uint32_t));
                g_hash_table_insert(qps, k, q);
            } else {
                g_free(k);
            }
            if (q->last_id != UINT32_MAX && it.id < q->last_id)
                out->qp_in_id_order = FALSE;
            q->last_id = it.id;
            g_array_append_val(q->served, it.id);
            if (q->free_at > st)
                st = q->free_at;
            q->free_at = st + dur;
        }
        out->start[it.id] = st;
        out->finish[it.id] = st + dur;
        out->done++;
        if (succ[it.id])
            for (guint i = 0; i < succ[it.id]->len; i++) {
                uint32_t v = GPOINTER_TO_UINT(g_ptr_array_index(succ[it.id], i));
                if (out->finish[it.id] > depmax[v])
                    depmax[v] = out->finish[it.id];
                if (--indeg[v] == 0) {
                    out->ready[v] = depmax[v] + schedule_get(s, v)->delay;
                    heap_push(heap, (struct heap_item){ out->ready[v], v });
                }
            }
    }
    /* Outstanding on a QP when transfer i becomes ready: those served before it (FIFO) that
     * have not finished yet, plus itself. */
    GHashTableIter hi;
    gpointer kp, vp;
    g_hash_table_iter_init(&hi, qps);
    while (g_hash_table_iter_next(&hi, &kp, &vp)) {
        GArray *sv = ((struct qpstate *)vp)->served;
        guint lo = 0;
        for (guint i = 0; i < sv->len; i++) {
            uint32_t id = g_array_index(sv, uint32_t, i);
            while (lo < i && out->finish[g_array_index(sv, uint32_t, lo)] <= out->ready[id])
                lo++;
            if (i - lo + 1 > out->max_outstanding)
                out->max_outstanding = i - lo + 1;
        }
    }
    g_hash_table_destroy(qps);
    g_array_free(heap, TRUE);
    for (uint32_t id = 0; id < n; id++)
        if (succ[id])
            g_ptr_array_free(succ[id], TRUE);
    g_free(succ);
    g_free(indeg);
    g_free(depmax);
}

static void run_free(struct run *r)
{
    g_free(r->ready);
    g_free(r->start);
    g_free(r->finish);
}

/* The DAG is sound: it validates, everything runs, nothing starts before its dependencies
 * finished plus its delay, and no transfer exceeds the chunk. */
static void check_sound(const struct schedule *s, uint32_t nhosts, uint64_t chunk)
{
    GError *err = NULL;
    gboolean ok = schedule_validate(s, nhosts, &err);
    if (!ok)
        fprintf(stderr, "validate: %s\n", err->message);
    CU_ASSERT_FATAL(ok);
    struct run r;
    run_schedule(s, DUR_RANDOM, 7, &r);
    CU_ASSERT_EQUAL(r.done, schedule_count(s));
    for (uint32_t id = 0; id < schedule_count(s); id++) {
        const struct transfer *t = schedule_get(s, id);
        const uint32_t *d = schedule_deps(s, t);
        for (uint32_t i = 0; i < t->ndeps; i++)
            CU_ASSERT(r.start[id] >= r.finish[d[i]] + t->delay);
        if (t->ndeps == 0)
            CU_ASSERT(r.start[id] >= t->delay);
        CU_ASSERT(t->bytes <= chunk);
    }
    run_free(&r);
}

/* Time from the job's start (its start marker) to the end of each iteration, and of the
 * collective itself (begin marker to end marker). */
static uint64_t coll_time(const struct schedule *s, const struct run *r, uint32_t coll)
{
    const struct sched_coll *c = &g_array_index(s->colls, struct sched_coll, coll);
    uint32_t end = c->first + c->count - 1;
    return r->finish[end] - r->finish[c->first];
}

static uint64_t unit_time(const struct collective_spec *sp)
{
    struct schedule *s = build_ok(sp);
    struct run r;
    run_schedule(s, DUR_UNIT, 1, &r);
    CU_ASSERT_EQUAL(r.done, schedule_count(s));
    uint64_t t = coll_time(s, &r, 0);
    run_free(&r);
    schedule_free(s);
    return t;
}

static const uint32_t NS[] = { 2, 3, 4, 8, 16 };
#define KiB 1024ull

/* ---- bytes per rank ---- */

static void test_ring_allreduce_bytes(void)
{
    for (size_t i = 0; i < G_N_ELEMENTS(NS); i++) {
        uint32_t n = NS[i];
        uint32_t *ranks = iota(n, 100); /* host ids are not rank indices */
        for (uint32_t ch = 1; ch <= 2; ch++) {
            /* Divisible: exactly 2(N-1)/N * S per rank, both ways. */
            uint64_t S = (uint64_t)n * ch * 3 * 100 * KiB;
            struct collective_spec sp = spec_of(COLL_ALLREDUCE, COLL_ALGO_RING, ranks, n, S, 64 * KiB);
            sp.channels = ch;
            struct schedule *s = build_ok(&sp);
            uint64_t sent[100 + 16], recv[100 + 16];
            bytes_per_host(s, 100 + n, sent, recv);
            for (uint32_t r = 0; r < n; r++) {
                CU_ASSERT_EQUAL(sent[100 + r], 2 * (n - 1) * S / n);
                CU_ASSERT_EQUAL(recv[100 + r], 2 * (n - 1) * S / n);
            }
            check_sound(s, 100 + n, 64 * KiB);
            schedule_free(s);

            /* Not divisible: S is kept exactly, ranks differ by a few bytes at most. */
            S = 1000003;
            sp.size = S;
            s = build_ok(&sp);
            bytes_per_host(s, 100 + n, sent, recv);
            uint64_t tot = 0;
            for (uint32_t r = 0; r < n; r++) {
                tot += sent[100 + r];
                double ideal = 2.0 * (n - 1) * S / n;
                CU_ASSERT(sent[100 + r] >= ideal - 2 && sent[100 + r] <= ideal + 2);
                CU_ASSERT(recv[100 + r] >= ideal - 2 && recv[100 + r] <= ideal + 2);
            }
            CU_ASSERT_EQUAL(tot, 2 * (uint64_t)(n - 1) * S);
            CU_ASSERT_EQUAL(g_array_index(s->colls, struct sched_coll, 0).bytes, S);
            check_sound(s, 100 + n, 64 * KiB);
            schedule_free(s);
        }
        g_free(ranks);
    }
}

static void test_ring_allgather_reducescatter_bytes(void)
{
    enum collective_op ops[] = { COLL_ALLGATHER, COLL_REDUCESCATTER };
    for (size_t o = 0; o < 2; o++)
        for (size_t i = 0; i < G_N_ELEMENTS(NS); i++) {
            uint32_t n = NS[i];
            uint32_t *ranks = iota(n, 0);
            /* 5 MB + 7 B: rounded down to a multiple of N, as nccl-tests does. */
            uint64_t S = 5000007, Se = S - S % n;
            struct collective_spec sp = spec_of(ops[o], COLL_ALGO_RING, ranks, n, S, 128 * KiB);
            sp.channels = 2;
            struct schedule *s = build_ok(&sp);
            uint64_t sent[16], recv[16];
            bytes_per_host(s, n, sent, recv);
            for (uint32_t r = 0; r < n; r++) {
                CU_ASSERT_EQUAL(sent[r], (n - 1) * Se / n);
                CU_ASSERT_EQUAL(recv[r], (n - 1) * Se / n);
            }
            CU_ASSERT_EQUAL(g_array_index(s->colls, struct sched_coll, 0).bytes, Se);
            check_sound(s, n, 128 * KiB);
            schedule_free(s);
            g_free(ranks);
        }
}

static void test_broadcast_bytes(void)
{
    for (size_t i = 0; i < G_N_ELEMENTS(NS); i++) {
        uint32_t n = NS[i];
        uint32_t *ranks = iota(n, 0);
        for (uint32_t root = 0; root < n; root += (n > 3 ? n / 2 - 1 : 1)) {
            uint64_t S = 3 * 1000 * 1000 + 1;
            struct collective_spec sp = spec_of(COLL_BROADCAST, COLL_ALGO_RING, ranks, n, S, 256 * KiB);
            sp.root = root;
            sp.channels = 2;
            struct schedule *s = build_ok(&sp);
            uint64_t sent[16], recv[16];
            bytes_per_host(s, n, sent, recv);
            uint32_t last = (root + n - 1) % n; /* the end of the chain */
            for (uint32_t r = 0; r < n; r++) {
                CU_ASSERT_EQUAL(sent[r], r == last ? 0 : S);
                CU_ASSERT_EQUAL(recv[r], r == root ? 0 : S);
            }
            check_sound(s, n, 256 * KiB);
            schedule_free(s);
        }
        g_free(ranks);
    }
}

static void test_alltoall_bytes(void)
{
    enum collective_algo algos[] = { COLL_ALGO_DIRECT, COLL_ALGO_PAIRWISE };
    for (size_t a = 0; a < 2; a++)
        for (size_t i = 0; i < G_N_ELEMENTS(NS); i++) {
            uint32_t n = NS[i];
            uint32_t *ranks = iota(n, 0);
            uint64_t S = 2 * 1000 * 1000 + 3, Se = S - S % n;
            struct collective_spec sp = spec_of(COLL_ALLTOALL, algos[a], ranks, n, S, 64 * KiB);
            sp.channels = 2;
            struct schedule *s = build_ok(&sp);
            uint64_t sent[16], recv[16];
            bytes_per_host(s, n, sent, recv);
            /* and S/N between every ordered pair */
            uint64_t pair[16][16] = { { 0 } };
            for (uint32_t id = 0; id < schedule_count(s); id++) {
                const struct transfer *t = schedule_get(s, id);
                pair[t->src][t->dst] += t->bytes;
            }
            for (uint32_t r = 0; r < n; r++) {
                CU_ASSERT_EQUAL(sent[r], (n - 1) * Se / n);
                CU_ASSERT_EQUAL(recv[r], (n - 1) * Se / n);
                for (uint32_t q = 0; q < n; q++)
                    CU_ASSERT_EQUAL(pair[r][q], r == q ? 0 : Se / n);
            }
            CU_ASSERT_EQUAL(g_array_index(s->colls, struct sched_coll, 0).bytes, Se);
            check_sound(s, n, 64 * KiB);
            schedule_free(s);
            g_free(ranks);
        }
}

static void test_halving_doubling_bytes(void)
{
    const uint32_t pow2[] = { 2, 4, 8, 16 };
    for (size_t i = 0; i < G_N_ELEMENTS(pow2); i++) {
        uint32_t n = pow2[i];
        uint32_t *ranks = iota(n, 0);
        uint64_t S = (uint64_t)n * 50000;
        struct collective_spec sp = spec_of(COLL_ALLREDUCE, COLL_ALGO_HALVING_DOUBLING, ranks, n,
                                            S, 32 * KiB);
        sp.channels = 2;
        struct schedule *s = build_ok(&sp);
        uint64_t sent[16], recv[16];
        bytes_per_host(s, n, sent, recv);
        for (uint32_t r = 0; r < n; r++) {
            CU_ASSERT_EQUAL(sent[r], 2 * (n - 1) * S / n);
            CU_ASSERT_EQUAL(recv[r], 2 * (n - 1) * S / n);
        }
        check_sound(s, n, 32 * KiB);
        schedule_free(s);

        /* Odd S: every byte of S still goes out (N-1)/N of the time in each phase overall. */
        sp.size = 999999;
        s = build_ok(&sp);
        bytes_per_host(s, n, sent, recv);
        uint64_t tot = 0;
        for (uint32_t r = 0; r < n; r++)
            tot += sent[r];
        CU_ASSERT_EQUAL(tot, 2 * (uint64_t)(n - 1) * 999999);
        check_sound(s, n, 32 * KiB);
        schedule_free(s);
        g_free(ranks);
    }
}

static void test_sendrecv_bytes(void)
{
    uint32_t ranks[] = { 7, 3, 5 };
    struct collective_spec sp = spec_of(COLL_SENDRECV, COLL_ALGO_DIRECT, ranks, 3, 10000001, 1000000);
    sp.peer = 2;
    sp.channels = 2;
    struct schedule *s = build_ok(&sp);
    uint64_t sent[8], recv[8];
    bytes_per_host(s, 8, sent, recv);
    CU_ASSERT_EQUAL(sent[7], 10000001);
    CU_ASSERT_EQUAL(recv[5], 10000001);
    CU_ASSERT_EQUAL(sent[3] + recv[3] + sent[5] + recv[7], 0);
    uint32_t data = 0;
    for (uint32_t id = 0; id < schedule_count(s); id++)
        data += schedule_get(s, id)->bytes > 0;
    CU_ASSERT_EQUAL(data, 6 + 5); /* channels of 5000001 B and 5000000 B in 1 MB chunks */
    check_sound(s, 8, 1000000);
    schedule_free(s);
}

/* ---- the double binary tree ---- */

/* Parents as drawn in NCCL's trees.cc (hand-derived from its rules). */
static void test_dtree_shape(void)
{
    static const int p4[2][4] = { { -1, 2, 0, 2 }, { 1, 3, 1, -1 } };
    static const int p5[2][5] = { { -1, 2, 4, 2, 0 }, { 1, -1, 3, 0, 3 } };
    static const int p8[2][8] = { { -1, 2, 4, 2, 0, 6, 4, 6 }, { 1, 3, 1, 7, 5, 3, 5, -1 } };
    for (int t = 0; t < 2; t++) {
        int parent, child[2];
        for (uint32_t r = 0; r < 4; r++) {
            collective_dtree(4, t, r, &parent, child);
            CU_ASSERT_EQUAL(parent, p4[t][r]);
        }
        for (uint32_t r = 0; r < 5; r++) {
            collective_dtree(5, t, r, &parent, child);
            CU_ASSERT_EQUAL(parent, p5[t][r]);
        }
        for (uint32_t r = 0; r < 8; r++) {
            collective_dtree(8, t, r, &parent, child);
            CU_ASSERT_EQUAL(parent, p8[t][r]);
        }
    }
    /* For every n: both trees span all ranks, children and parents agree, tree 1's root is
     * n-1 (even n) or 1 (odd n), and for even n no rank is interior in both trees. */
    for (uint32_t n = 2; n <= 40; n++) {
        int interior[40] = { 0 };
        for (int t = 0; t < 2; t++) {
            int par[40], ch[40][2], nroot = 0, nedges = 0;
            for (uint32_t r = 0; r < n; r++) {
                collective_dtree(n, t, r, &par[r], ch[r]);
                if (par[r] < 0) {
                    nroot++;
                    CU_ASSERT_EQUAL(r, t == 0 ? 0 : (n % 2 ? 1 : n - 1));
                }
                if (ch[r][0] >= 0 || ch[r][1] >= 0)
                    interior[r] += par[r] >= 0;
            }
            CU_ASSERT_EQUAL(nroot, 1);
            for (uint32_t r = 0; r < n; r++)
                for (int c = 0; c < 2; c++)
                    if (ch[r][c] >= 0) {
                        CU_ASSERT_EQUAL(par[ch[r][c]], (int)r);
                        nedges++;
                    }
            CU_ASSERT_EQUAL(nedges, (int)n - 1);
            for (uint32_t r = 0; r < n; r++) { /* every rank reaches the root */
                uint32_t x = r, hops = 0;
                while (par[x] >= 0 && hops <= n) {
                    x = (uint32_t)par[x];
                    hops++;
                }
                CU_ASSERT(par[x] < 0);
            }
        }
        if (n % 2 == 0)
            for (uint32_t r = 0; r < n; r++)
                CU_ASSERT(interior[r] <= 1);
    }
}

static void test_tree_bytes(void)
{
    /* N = 4 by hand: ranks 0 and 3 are a root with one child in one tree and a leaf in the
     * other (S/2 + S/2 = S); ranks 1 and 2 are a leaf in one and interior with two children in
     * the other (S/2 + 3S/2 = 2S). */
    uint32_t ranks4[] = { 10, 11, 12, 13 };
    uint64_t S = 4 * 1000 * 1000;
    struct collective_spec sp = spec_of(COLL_ALLREDUCE, COLL_ALGO_TREE, ranks4, 4, S, 128 * KiB);
    sp.channels = 2;
    struct schedule *s = build_ok(&sp);
    uint64_t sent[14], recv[14];
    bytes_per_host(s, 14, sent, recv);
    CU_ASSERT_EQUAL(sent[10], S);
    CU_ASSERT_EQUAL(sent[11], 2 * S);
    CU_ASSERT_EQUAL(sent[12], 2 * S);
    CU_ASSERT_EQUAL(sent[13], S);
    check_sound(s, 14, 128 * KiB);
    schedule_free(s);

    /* Every N: each tree carries half of S up and down each of its N-1 edges, so a rank sends
     * S/2 per tree per (parent + child) it has, and everything sums to 2(N-1)S. */
    for (size_t i = 0; i < G_N_ELEMENTS(NS); i++) {
        uint32_t n = NS[i];
        uint32_t *ranks = iota(n, 0);
        for (uint32_t nch = 2; nch <= 4; nch += 2) {
            sp = spec_of(COLL_ALLREDUCE, COLL_ALGO_TREE, ranks, n, S, 128 * KiB);
            sp.channels = nch;
            s = build_ok(&sp);
            uint64_t snt[16], rcv[16], tot = 0;
            bytes_per_host(s, n, snt, rcv);
            for (uint32_t r = 0; r < n; r++) {
                uint64_t expect = 0;
                for (int t = 0; t < 2; t++) {
                    int par, ch[2];
                    collective_dtree(n, t, r, &par, ch);
                    expect += (S / 2) * ((par >= 0) + (ch[0] >= 0) + (ch[1] >= 0));
                }
                CU_ASSERT_EQUAL(snt[r], expect);
                tot += snt[r];
            }
            CU_ASSERT_EQUAL(tot, 2 * (uint64_t)(n - 1) * S);
            /* channel c's up-sends follow tree c % 2 */
            for (uint32_t id = 0; id < schedule_count(s); id++) {
                const struct transfer *t = schedule_get(s, id);
                if (!t->bytes)
                    continue;
                int par, ch[2];
                collective_dtree(n, t->channel % 2, t->src, &par, ch);
                CU_ASSERT((int)t->dst == par || (int)t->dst == ch[0] || (int)t->dst == ch[1]);
            }
            check_sound(s, n, 128 * KiB);
            schedule_free(s);
        }
        g_free(ranks);
    }
}

/* ---- steps and rounds on the toy network (unit time per transfer) ---- */

static void test_steps(void)
{
    for (size_t i = 0; i < G_N_ELEMENTS(NS); i++) {
        uint32_t n = NS[i];
        uint32_t *ranks = iota(n, 0);
        /* One transfer per ring step: 2(N-1) for allreduce, N-1 for allgather/reducescatter. */
        struct collective_spec sp = spec_of(COLL_ALLREDUCE, COLL_ALGO_RING, ranks, n, n * 1000, 1000);
        CU_ASSERT_EQUAL(unit_time(&sp), 2 * (n - 1));
        sp.op = COLL_ALLGATHER;
        CU_ASSERT_EQUAL(unit_time(&sp), n - 1);
        sp.op = COLL_REDUCESCATTER;
        CU_ASSERT_EQUAL(unit_time(&sp), n - 1);

        /* Pipelined ring: 3 loops of 4 slices per step keep every edge busy all the time, so
         * the time is just the number of transfers per edge. */
        sp = spec_of(COLL_ALLREDUCE, COLL_ALGO_RING, ranks, n, (uint64_t)n * 12 * 1000, 1000);
        CU_ASSERT_EQUAL(unit_time(&sp), 3 * 2 * (n - 1) * 4);
        sp.op = COLL_ALLGATHER;
        CU_ASSERT_EQUAL(unit_time(&sp), 3 * (n - 1) * 4);

        /* Broadcast chain: N-1 hops + M-1 chunk slots. */
        sp = spec_of(COLL_BROADCAST, COLL_ALGO_RING, ranks, n, 20 * 1000, 1000);
        CU_ASSERT_EQUAL(unit_time(&sp), (n - 1) + 20 - 1);

        /* Alltoall: direct is one round (M chunks on every QP), pairwise N-1 rounds. */
        sp = spec_of(COLL_ALLTOALL, COLL_ALGO_DIRECT, ranks, n, (uint64_t)n * 1000, 1000);
        CU_ASSERT_EQUAL(unit_time(&sp), 1);
        sp.size = (uint64_t)n * 5000;
        CU_ASSERT_EQUAL(unit_time(&sp), 5);
        sp = spec_of(COLL_ALLTOALL, COLL_ALGO_PAIRWISE, ranks, n, (uint64_t)n * 1000, 1000);
        CU_ASSERT_EQUAL(unit_time(&sp), n - 1);

        /* Tree: up and down the deeper of the two trees, + M-1 chunk slots. */
        uint32_t h = 0;
        for (int t = 0; t < 2; t++)
            for (uint32_t r = 0; r < n; r++) {
                int par, ch[2];
                uint32_t d = 0, x = r;
                for (collective_dtree(n, t, x, &par, ch); par >= 0; collective_dtree(n, t, x, &par, ch)) {
                    x = (uint32_t)par;
                    d++;
                }
                h = MAX(h, d);
            }
        sp = spec_of(COLL_ALLREDUCE, COLL_ALGO_TREE, ranks, n, 2000, 1000);
        sp.channels = 2;
        CU_ASSERT_EQUAL(unit_time(&sp), 2 * h);
        sp.size = 2 * 6000;
        CU_ASSERT_EQUAL(unit_time(&sp), 2 * h + 6 - 1);
        if (n == 8 || n == 16)
            CU_ASSERT_EQUAL(h, n == 8 ? 3u : 4u); /* 2 log2 N hops, as in the reference */

        /* Halving-doubling: 2 log2 N rounds. */
        if ((n & (n - 1)) == 0) {
            uint32_t lg = 0;
            while ((1u << lg) < n)
                lg++;
            sp = spec_of(COLL_ALLREDUCE, COLL_ALGO_HALVING_DOUBLING, ranks, n, n * 100, 1000);
            CU_ASSERT_EQUAL(unit_time(&sp), 2 * lg);
        }
        g_free(ranks);
    }
    /* Sendrecv: M chunks back to back. */
    uint32_t two[] = { 0, 1 };
    struct collective_spec sp = spec_of(COLL_SENDRECV, COLL_ALGO_DIRECT, two, 2, 9000, 1000);
    CU_ASSERT_EQUAL(unit_time(&sp), 9);
}

/* ---- the in-flight bound and QP order under random transfer times ---- */

static void check_window(const struct collective_spec *sp)
{
    struct schedule *s = build_ok(sp);
    for (uint32_t seed = 1; seed <= 20; seed++) {
        struct run r;
        run_schedule(s, DUR_RANDOM, seed, &r);
        CU_ASSERT_EQUAL(r.done, schedule_count(s));
        CU_ASSERT(r.qp_in_id_order);
        CU_ASSERT(r.max_outstanding <= NCCL_STEPS);
        run_free(&r);
    }
    /* The bound is tight somewhere: some QP does reach 8 with instant dependencies. */
    struct run r;
    run_schedule(s, DUR_UNIT, 1, &r);
    if (sp->op == COLL_SENDRECV || sp->op == COLL_BROADCAST)
        CU_ASSERT_EQUAL(r.max_outstanding, NCCL_STEPS);
    run_free(&r);
    schedule_free(s);
}

static void test_window_and_qp_order(void)
{
    uint32_t *ranks = iota(8, 0);
    struct {
        enum collective_op op;
        enum collective_algo algo;
        uint32_t n, channels;
        uint64_t size;
    } cases[] = {
        { COLL_ALLREDUCE, COLL_ALGO_RING, 5, 2, 200 * 1000 },
        { COLL_ALLGATHER, COLL_ALGO_RING, 4, 1, 100 * 1000 },
        { COLL_REDUCESCATTER, COLL_ALGO_RING, 3, 1, 90 * 1000 },
        { COLL_ALLREDUCE, COLL_ALGO_TREE, 7, 2, 60 * 1000 },
        { COLL_ALLREDUCE, COLL_ALGO_HALVING_DOUBLING, 8, 1, 160 * 1000 },
        { COLL_BROADCAST, COLL_ALGO_RING, 6, 1, 40 * 1000 },
        { COLL_ALLTOALL, COLL_ALGO_DIRECT, 4, 1, 80 * 1000 },
        { COLL_ALLTOALL, COLL_ALGO_PAIRWISE, 5, 2, 100 * 1000 },
        { COLL_SENDRECV, COLL_ALGO_DIRECT, 2, 1, 30 * 1000 },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        struct collective_spec sp = spec_of(cases[i].op, cases[i].algo, ranks, cases[i].n,
                                            cases[i].size, 1000);
        sp.channels = cases[i].channels;
        sp.iterations = 2;
        check_window(&sp);
    }
    g_free(ranks);
}

/* The bound's exact dependencies (NCCL's NCCL_STEPS buffer slots of a connection: piece j
 * reuses the slot of piece j - 8): a sendrecv of 20 pieces a channel, on two channels, twice.
 * Piece j of a channel waits for the iteration's begin marker alone when j < 8, else for
 * piece j - 8 of the same channel and the same iteration: the slots are the QP's (a channel is
 * a QP of its own) and start empty at every iteration. */
static void test_window_exact_deps(void)
{
    uint32_t two[] = { 0, 1 };
    const uint32_t pieces = 20, nch = 2;
    struct collective_spec sp = spec_of(COLL_SENDRECV, COLL_ALGO_DIRECT, two, 2, nch * pieces * 1000, 1000);
    sp.channels = nch;
    sp.iterations = 2;
    struct schedule *s = build_ok(&sp);
    CU_ASSERT_EQUAL_FATAL(s->colls->len, 2);
    for (uint32_t it = 0; it < 2; it++) {
        uint32_t begin = g_array_index(s->colls, struct sched_coll, it).first;
        for (uint32_t ch = 0; ch < nch; ch++)
            for (uint32_t j = 0; j < pieces; j++) {
                uint32_t id = begin + 1 + ch * pieces + j;
                const struct transfer *t = schedule_get(s, id);
                CU_ASSERT_EQUAL(t->channel, ch);
                CU_ASSERT_EQUAL(t->bytes, 1000);
                CU_ASSERT_EQUAL_FATAL(t->ndeps, 1);
                uint32_t want = j < NCCL_STEPS ? begin : id - NCCL_STEPS;
                CU_ASSERT_EQUAL(schedule_deps(s, t)[0], want);
            }
    }
    schedule_free(s);
}

/* ---- causality of round-based algorithms ---- */

/* What a rank sends in round k contains what it received in every earlier round, so each of
 * its sends must wait, at least transitively, for every chunk it received before. Rounds are
 * the runs of data transfers between the builders' marker layers. */
static void check_round_causality(const struct collective_spec *sp)
{
    struct schedule *s = build_ok(sp);
    const uint32_t n = schedule_count(s), words = (n + 63) / 64;
    guint64 *anc = g_new0(guint64, (size_t)n * words); /* ancestors of each transfer */
    uint32_t *round = g_new0(uint32_t, n);
    uint32_t rnd = 0;
    gboolean prev_data = FALSE;
    for (uint32_t id = 0; id < n; id++) {
        const struct transfer *t = schedule_get(s, id);
        const uint32_t *d = schedule_deps(s, t);
        for (uint32_t i = 0; i < t->ndeps; i++) {
            CU_ASSERT_FATAL(d[i] < id); /* builders only wait for what exists already */
            for (uint32_t w = 0; w < words; w++)
                anc[(size_t)id * words + w] |= anc[(size_t)d[i] * words + w];
            anc[(size_t)id * words + d[i] / 64] |= 1ull << (d[i] % 64);
        }
        gboolean data = t->bytes > 0;
        if (data && !prev_data)
            rnd++;
        prev_data = data;
        round[id] = rnd;
    }
    uint32_t rounds = rnd, checked = 0;
    for (uint32_t x = 0; x < n; x++) {
        const struct transfer *tx = schedule_get(s, x);
        if (!tx->bytes)
            continue;
        for (uint32_t y = 0; y < x; y++) {
            const struct transfer *ty = schedule_get(s, y);
            if (ty->bytes && ty->dst == tx->src && round[y] < round[x]) {
                CU_ASSERT(anc[(size_t)x * words + y / 64] >> (y % 64) & 1);
                checked++;
            }
        }
    }
    CU_ASSERT(rounds < 2 || checked > 0);
    uint32_t lg = 0;
    while ((1u << lg) < sp->nranks)
        lg++;
    CU_ASSERT_EQUAL(rounds, sp->algorithm == COLL_ALGO_PAIRWISE ? sp->nranks - 1 : 2 * lg);
    g_free(anc);
    g_free(round);
    schedule_free(s);
}

static void test_round_causality(void)
{
    uint32_t *ranks = iota(8, 0);
    for (uint32_t n = 2; n <= 8; n *= 2) {
        /* several chunks and two channels per message, so a round marker must wait for all */
        struct collective_spec sp = spec_of(COLL_ALLREDUCE, COLL_ALGO_HALVING_DOUBLING, ranks, n,
                                            n * 400, 100);
        sp.channels = 2;
        check_round_causality(&sp);
    }
    for (uint32_t n = 2; n <= 6; n++) {
        struct collective_spec sp = spec_of(COLL_ALLTOALL, COLL_ALGO_PAIRWISE, ranks, n,
                                            n * 300, 100);
        sp.channels = 2;
        check_round_causality(&sp);
    }
    g_free(ranks);
}

/* ---- iterations, compute, start, after ---- */

static void test_iterations_and_compute(void)
{
    uint32_t *ranks = iota(4, 0);
    const simtime_t compute = 2 * PS_PER_MS, start = 5 * PS_PER_US;
    struct collective_spec sp = spec_of(COLL_ALLREDUCE, COLL_ALGO_RING, ranks, 4, 4000, 1000);
    sp.iterations = 5;
    sp.compute = compute;
    sp.start = start;
    struct schedule *s = build_ok(&sp);
    CU_ASSERT_EQUAL(s->jobs->len, 1);
    CU_ASSERT_EQUAL(s->colls->len, 5);
    /* Colls: iterations 0..4, contiguous, together every transfer but the start marker. */
    uint32_t next = 1;
    for (uint32_t i = 0; i < 5; i++) {
        const struct sched_coll *c = &g_array_index(s->colls, struct sched_coll, i);
        CU_ASSERT_EQUAL(c->iteration, i);
        CU_ASSERT_EQUAL(c->job, 0);
        CU_ASSERT_EQUAL(c->first, next);
        next = c->first + c->count;
    }
    CU_ASSERT_EQUAL(next, schedule_count(s));

    /* Zero-time transfers: the job ends iterations * compute after it starts. */
    struct run r;
    run_schedule(s, DUR_ZERO, 1, &r);
    uint32_t last = schedule_count(s) - 1;
    CU_ASSERT_EQUAL(r.finish[last] - start, 5 * compute);
    run_free(&r);

    /* Unit-time transfers: every iteration is compute + 2(N-1) steps, and the next one begins
     * exactly compute after the previous one ended on every rank. */
    run_schedule(s, DUR_UNIT, 1, &r);
    CU_ASSERT_EQUAL(r.finish[last] - start, 5 * (compute + 6));
    for (uint32_t i = 0; i < 5; i++) {
        const struct sched_coll *c = &g_array_index(s->colls, struct sched_coll, i);
        CU_ASSERT_EQUAL(coll_time(s, &r, i), 6);
        uint64_t before = i == 0 ? start : r.finish[c->first - 1];
        CU_ASSERT_EQUAL(r.finish[c->first], before + compute);
        /* and no transfer of the iteration starts before its begin marker */
        for (uint32_t id = c->first; id < c->first + c->count; id++)
            CU_ASSERT(r.start[id] >= r.finish[c->first]);
    }
    run_free(&r);
    schedule_free(s);
    g_free(ranks);
}

static void test_after(void)
{
    uint32_t *ranks = iota(4, 0);
    struct schedule *s = schedule_new();
    GError *err = NULL;
    struct collective_spec a = spec_of(COLL_ALLREDUCE, COLL_ALGO_RING, ranks, 4, 40000, 1000);
    a.name = "a";
    a.iterations = 2;
    a.compute = 100;
    CU_ASSERT_FATAL(collective_build(s, &a, &err));
    GArray *sinks = schedule_job_sinks(s, 0);
    CU_ASSERT_EQUAL_FATAL(sinks->len, 1); /* the last end marker */
    CU_ASSERT_EQUAL(g_array_index(sinks, uint32_t, 0), schedule_count(s) - 1);
    uint32_t a_end = schedule_count(s);

    struct collective_spec b = spec_of(COLL_ALLTOALL, COLL_ALGO_DIRECT, ranks, 4, 4000, 1000);
    b.name = "b";
    b.after = (const uint32_t *)sinks->data;
    b.nafter = sinks->len;
    b.start = 1; /* earlier than a's end: the later of the two wins */
    b.compute = 7;
    CU_ASSERT_FATAL(collective_build(s, &b, &err));
    CU_ASSERT_EQUAL(s->jobs->len, 2);
    /* the jobs' QP tags differ */
    CU_ASSERT_NOT_EQUAL(schedule_get(s, 2)->qp, schedule_get(s, a_end + 2)->qp);

    struct run r;
    run_schedule(s, DUR_UNIT, 1, &r);
    CU_ASSERT_EQUAL(r.done, schedule_count(s));
    uint64_t a_done = r.finish[a_end - 1];
    CU_ASSERT(a_done > 100);
    for (uint32_t id = a_end; id < schedule_count(s); id++)
        if (schedule_get(s, id)->bytes)
            CU_ASSERT(r.start[id] >= a_done + 7);
    const struct sched_coll *c = &g_array_index(s->colls, struct sched_coll, 2);
    CU_ASSERT_EQUAL(r.finish[c->first], a_done + 7);
    run_free(&r);
    g_array_free(sinks, TRUE);
    schedule_free(s);

    /* With no after, start is absolute. */
    s = schedule_new();
    b.after = NULL;
    b.nafter = 0;
    b.start = 1000;
    CU_ASSERT_FATAL(collective_build(s, &b, &err));
    run_schedule(s, DUR_UNIT, 1, &r);
    c = &g_array_index(s->colls, struct sched_coll, 0);
    CU_ASSERT_EQUAL(r.finish[c->first], 1007);
    run_free(&r);
    schedule_free(s);
    g_free(ranks);
}

/* ---- QP tags and channels ---- */

static void test_qp_tags(void)
{
    uint32_t *ranks = iota(4, 0);
    struct collective_spec sp = spec_of(COLL_ALLREDUCE, COLL_ALGO_RING, ranks, 4, 4000000, 100000);
    sp.channels = 4;
    struct schedule *s = schedule_new();
    GError *err = NULL;
    CU_ASSERT_FATAL(collective_build(s, &sp, &err));
    CU_ASSERT_FATAL(collective_build(s, &sp, &err));
    uint64_t per_channel[2][4] = { { 0 } };
    GHashTable *qps = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (uint32_t id = 0; id < schedule_count(s); id++) {
        const struct transfer *t = schedule_get(s, id);
        if (!t->bytes)
            continue;
        CU_ASSERT_EQUAL(t->qp, COLLECTIVE_QP(t->job, t->channel));
        CU_ASSERT_EQUAL(t->dst, (t->src + 1) % 4); /* ring order */
        CU_ASSERT_EQUAL(t->prio, COLLECTIVE_DEFAULT_PRIO);
        per_channel[t->job][t->channel] += t->bytes;
        g_hash_table_add(qps, qp_key(t));
    }
    /* 2 jobs x 4 channels x 4 ring edges, each its own QP; data split evenly over channels */
    CU_ASSERT_EQUAL(g_hash_table_size(qps), 2 * 4 * 4);
    for (int j = 0; j < 2; j++)
        for (int c = 0; c < 4; c++)
            CU_ASSERT_EQUAL(per_channel[j][c], 2 * 3 * 4000000 / 4);
    g_hash_table_destroy(qps);
    schedule_free(s);
    g_free(ranks);
}

/* ---- validation ---- */

static void expect_refused(struct collective_spec *sp, const char *needle)
{
    struct schedule *s = schedule_new();
    GError *err = NULL;
    CU_ASSERT_FALSE(collective_build(s, sp, &err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    if (!strstr(err->message, needle) || !strstr(err->message, "[workload job]"))
        fprintf(stderr, "expected '%s' in: %s\n", needle, err->message);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, needle));
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "[workload job]"));
    CU_ASSERT_EQUAL(err->domain, COLLECTIVE_ERROR);
    /* nothing was added */
    CU_ASSERT_EQUAL(schedule_count(s), 0);
    CU_ASSERT_EQUAL(s->jobs->len, 0);
    CU_ASSERT_EQUAL(s->colls->len, 0);
    g_error_free(err);
    schedule_free(s);
}

static void test_validation(void)
{
    uint32_t ranks[] = { 0, 1, 2, 3, 4, 5 };
    uint32_t dup[] = { 0, 1, 2, 1 };
    struct collective_spec sp;
#define FRESH(op, algo, n) (sp = spec_of(op, algo, ranks, n, 1 << 20, 1 << 16))
    FRESH(COLL_ALLREDUCE, COLL_ALGO_RING, 1);
    expect_refused(&sp, "ranks: a collective needs at least 2 ranks, got 1");
    FRESH(COLL_ALLREDUCE, COLL_ALGO_RING, 4);
    sp.ranks = dup;
    expect_refused(&sp, "ranks: host 1 appears twice (rank 1 and rank 3)");
    FRESH(COLL_ALLREDUCE, COLL_ALGO_RING, 4);
    sp.chunk = 0;
    expect_refused(&sp, "chunk: must be at least 1 B");
    FRESH(COLL_ALLREDUCE, COLL_ALGO_RING, 4);
    sp.size = 0;
    expect_refused(&sp, "size: must be at least 1 B");
    FRESH(COLL_ALLGATHER, COLL_ALGO_RING, 6);
    sp.size = 5;
    expect_refused(&sp, "size: 5 B is less than one byte per rank (6 ranks)");
    FRESH(COLL_ALLGATHER, COLL_ALGO_TREE, 4);
    expect_refused(&sp, "algorithm: tree is not available for allgather (expected: ring)");
    FRESH(COLL_ALLTOALL, COLL_ALGO_RING, 4);
    expect_refused(&sp, "algorithm: ring is not available for alltoall (expected: direct, pairwise)");
    FRESH(COLL_SENDRECV, COLL_ALGO_PAIRWISE, 4);
    expect_refused(&sp, "algorithm: pairwise is not available for sendrecv");
    FRESH(COLL_ALLREDUCE, COLL_ALGO_HALVING_DOUBLING, 6);
    expect_refused(&sp, "ranks: halving-doubling needs a power-of-two number of ranks, got 6");
    FRESH(COLL_ALLREDUCE, COLL_ALGO_TREE, 4);
    sp.channels = 3;
    expect_refused(&sp, "channels: tree needs an even number of channels");
    FRESH(COLL_ALLREDUCE, COLL_ALGO_RING, 4);
    sp.channels = 0;
    expect_refused(&sp, "channels: 0 is out of range (1..64)");
    FRESH(COLL_ALLREDUCE, COLL_ALGO_RING, 4);
    sp.iterations = 0;
    expect_refused(&sp, "iterations: must be at least 1");
    FRESH(COLL_ALLREDUCE, COLL_ALGO_RING, 4);
    sp.prio = 8;
    expect_refused(&sp, "prio: 8 is out of range (0..7)");
    FRESH(COLL_BROADCAST, COLL_ALGO_RING, 4);
    sp.root = 4;
    expect_refused(&sp, "root: rank 4 is out of range (0..3)");
    FRESH(COLL_SENDRECV, COLL_ALGO_DIRECT, 4);
    sp.peer = 0;
    expect_refused(&sp, "peer: rank 0 is out of range (1..3; rank 0 sends)");
    FRESH(COLL_ALLREDUCE, COLL_ALGO_RING, 4);
    uint32_t after[] = { 3 };
    sp.after = after;
    sp.nafter = 1;
    expect_refused(&sp, "after: transfer 3 does not exist (the schedule has 0)");
    FRESH(COLL_ALLREDUCE, COLL_ALGO_RING, 4);
    sp.size = 1ull << 40;
    sp.chunk = 1;
    expect_refused(&sp, "raise chunk or lower iterations");
    FRESH(COLL_ALLREDUCE, COLL_ALGO_RING, 4);
    sp.op = (enum collective_op)42;
    expect_refused(&sp, "op: unknown collective (42)");
#undef FRESH
}

static void test_names(void)
{
    enum collective_op op;
    enum collective_algo algo;
    GError *err = NULL;
    CU_ASSERT(collective_op_parse("reducescatter", "op", &op, &err));
    CU_ASSERT_EQUAL(op, COLL_REDUCESCATTER);
    CU_ASSERT(collective_algo_parse("halving-doubling", "algorithm", &algo, &err));
    CU_ASSERT_EQUAL(algo, COLL_ALGO_HALVING_DOUBLING);
    for (int i = COLL_ALLREDUCE; i <= COLL_SENDRECV; i++) {
        CU_ASSERT(collective_op_parse(collective_op_name(i), "op", &op, &err));
        CU_ASSERT_EQUAL(op, i);
    }
    CU_ASSERT_FALSE(collective_op_parse("all_reduce", "op", &op, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "op: unknown collective 'all_reduce' (expected "
                                                "one of: allreduce, allgather, reducescatter, "
                                                "broadcast, alltoall, sendrecv)"));
    g_clear_error(&err);
    CU_ASSERT_FALSE(collective_algo_parse("rings", "algorithm", &algo, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "algorithm: unknown algorithm 'rings'"));
    g_clear_error(&err);
    CU_ASSERT_EQUAL(collective_default_algo(COLL_ALLTOALL), COLL_ALGO_DIRECT);
    CU_ASSERT_EQUAL(collective_default_algo(COLL_BROADCAST), COLL_ALGO_RING);

    /* and the job records them */
    uint32_t ranks[] = { 0, 1 };
    struct collective_spec sp = spec_of(COLL_ALLTOALL, COLL_ALGO_PAIRWISE, ranks, 2, 100, 10);
    struct schedule *s = build_ok(&sp);
    const struct sched_job *j = &g_array_index(s->jobs, struct sched_job, 0);
    CU_ASSERT_STRING_EQUAL(j->name, "job");
    CU_ASSERT_STRING_EQUAL(j->op, "alltoall");
    CU_ASSERT_STRING_EQUAL(j->algorithm, "pairwise");
    CU_ASSERT_EQUAL(j->ranks, 2);
    schedule_free(s);
}

/* Sizes smaller than ranks x channels: empty pieces become markers, bytes stay exact. */
static void test_tiny_sizes(void)
{
    uint32_t *ranks = iota(4, 0);
    struct {
        enum collective_op op;
        enum collective_algo algo;
        uint64_t size, total; /* bytes on the wire for N = 4 */
    } cases[] = {
        { COLL_ALLREDUCE, COLL_ALGO_RING, 1, 2 * 3 * 1 },
        { COLL_ALLREDUCE, COLL_ALGO_RING, 5, 2 * 3 * 5 },
        { COLL_ALLREDUCE, COLL_ALGO_TREE, 1, 2 * 3 * 1 },
        { COLL_ALLREDUCE, COLL_ALGO_HALVING_DOUBLING, 3, 2 * 3 * 3 },
        { COLL_ALLGATHER, COLL_ALGO_RING, 4, 3 * 4 },
        { COLL_BROADCAST, COLL_ALGO_RING, 1, 3 * 1 },
        { COLL_ALLTOALL, COLL_ALGO_PAIRWISE, 4, 3 * 4 },
        { COLL_SENDRECV, COLL_ALGO_DIRECT, 1, 1 },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        struct collective_spec sp = spec_of(cases[i].op, cases[i].algo, ranks, 4, cases[i].size, 1);
        sp.channels = 2;
        struct schedule *s = build_ok(&sp);
        uint64_t sent[4], recv[4], tot = 0;
        bytes_per_host(s, 4, sent, recv);
        for (int r = 0; r < 4; r++)
            tot += sent[r];
        CU_ASSERT_EQUAL(tot, cases[i].total);
        check_sound(s, 4, 1);
        schedule_free(s);
    }
    g_free(ranks);
}

/* A realistic size stays linear: no dependency blow-up. */
static void test_size_is_linear(void)
{
    uint32_t *ranks = iota(16, 0);
    struct collective_spec sp = spec_of(COLL_ALLREDUCE, COLL_ALGO_RING, ranks, 16, 1ull << 30,
                                        NCCL_STEP_BYTES);
    sp.channels = 2;
    struct schedule *s = build_ok(&sp);
    /* 2 channels x 16 loops of 16 x 2 MiB, 30 steps x 4 slices x 16 edges, + 3 markers */
    CU_ASSERT_EQUAL(schedule_count(s), 2 * 16 * 30 * 4 * 16 + 3);
    CU_ASSERT(s->deps->len <= 3 * schedule_count(s));
    schedule_free(s);

    sp = spec_of(COLL_ALLTOALL, COLL_ALGO_PAIRWISE, ranks, 16, 16 << 20, NCCL_STEP_BYTES);
    s = build_ok(&sp);
    CU_ASSERT(s->deps->len <= 3 * schedule_count(s));
    schedule_free(s);
    g_free(ranks);
}

/* NCCL's tree chunk rule (enqueue.cc), worked by hand for 32 ranks (depth 5), 2 channels:
 * 32 KiB: 0 chunks of 512 KiB per channel < 40 -> 128 KiB (floor of the first loop),
 * < 20 -> 64 KiB, < 5 -> 32 KiB; 2 MiB: 2 < 40 -> 256 KiB, 4 < 40 -> 128 KiB, 8 < 20 ->
 * 64 KiB, 16 < 20 but the second loop stops at 64 KiB; 16 MiB: 16 -> 32 -> 128 KiB, then 64 >= 20;
 * 128 MiB: 128 >= 40, the 512 KiB step stays. 2 ranks (depth 1), 1 MiB: 2 < 8 -> 256 KiB,
 * 4 < 8 -> 128 KiB, 8 >= 4 and >= 1: 128 KiB. */
static void test_tree_chunk_rule(void)
{
    CU_ASSERT_EQUAL(collective_tree_chunk(32768, 2, 32), 32768);
    CU_ASSERT_EQUAL(collective_tree_chunk(262144, 2, 32), 32768);
    CU_ASSERT_EQUAL(collective_tree_chunk(2097152, 2, 32), 65536);
    CU_ASSERT_EQUAL(collective_tree_chunk(16777216, 2, 32), 131072);
    CU_ASSERT_EQUAL(collective_tree_chunk(134217728, 2, 32), 524288);
    CU_ASSERT_EQUAL(collective_tree_chunk(1048576, 1, 2), 131072);
}

static CU_TestInfo tests[] = {
    { "tree chunk size follows NCCL's rule", test_tree_chunk_rule },
    { "ring allreduce: 2(N-1)/N S per rank", test_ring_allreduce_bytes },
    { "ring allgather/reducescatter: (N-1)/N S", test_ring_allgather_reducescatter_bytes },
    { "broadcast: S for all but the last", test_broadcast_bytes },
    { "alltoall direct/pairwise: (N-1)/N S", test_alltoall_bytes },
    { "halving-doubling: 2(N-1)/N S", test_halving_doubling_bytes },
    { "sendrecv: S from rank 0 to peer", test_sendrecv_bytes },
    { "double binary tree shape", test_dtree_shape },
    { "tree allreduce bytes", test_tree_bytes },
    { "steps and rounds (critical path)", test_steps },
    { "in-flight bound and QP order", test_window_and_qp_order },
    { "in-flight bound: piece j waits for piece j - 8 of its QP and iteration", test_window_exact_deps },
    { "round-based algorithms wait for earlier rounds", test_round_causality },
    { "iterations and compute gaps", test_iterations_and_compute },
    { "after and start", test_after },
    { "QP tags per channel and job", test_qp_tags },
    { "validation errors", test_validation },
    { "op and algorithm names", test_names },
    { "sizes below one byte per piece", test_tiny_sizes },
    { "transfer and dependency counts stay linear", test_size_is_linear },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("collective", tests)
