/* Collective builders, see collective.h for the schedules and the rules they follow. */
#include "models/collective.h"
#include "models/memory.h"
#include "sim/keymap.h"
#include <string.h>

G_DEFINE_QUARK(rocesim-collective-error-quark, collective_error)

static const char *const op_names[] = {
    [COLL_ALLREDUCE] = "allreduce",         [COLL_ALLGATHER] = "allgather",
    [COLL_REDUCESCATTER] = "reducescatter", [COLL_BROADCAST] = "broadcast",
    [COLL_ALLTOALL] = "alltoall",           [COLL_SENDRECV] = "sendrecv",
};
static const char *const algo_names[] = {
    [COLL_ALGO_RING] = "ring",
    [COLL_ALGO_TREE] = "tree",
    [COLL_ALGO_HALVING_DOUBLING] = "halving-doubling",
    [COLL_ALGO_DIRECT] = "direct",
    [COLL_ALGO_PAIRWISE] = "pairwise",
};
#define N_OPS G_N_ELEMENTS(op_names)
#define N_ALGOS G_N_ELEMENTS(algo_names)

/* Which algorithms each op has (bit per enum collective_algo). */
static const unsigned op_algos[] = {
    [COLL_ALLREDUCE] = 1u << COLL_ALGO_RING | 1u << COLL_ALGO_TREE |
                       1u << COLL_ALGO_HALVING_DOUBLING,
    [COLL_ALLGATHER] = 1u << COLL_ALGO_RING,
    [COLL_REDUCESCATTER] = 1u << COLL_ALGO_RING,
    [COLL_BROADCAST] = 1u << COLL_ALGO_RING,
    [COLL_ALLTOALL] = 1u << COLL_ALGO_DIRECT | 1u << COLL_ALGO_PAIRWISE,
    [COLL_SENDRECV] = 1u << COLL_ALGO_DIRECT,
};

const char *collective_op_name(enum collective_op op)
{
    return (unsigned)op < N_OPS ? op_names[op] : "?";
}

const char *collective_algo_name(enum collective_algo algo)
{
    return (unsigned)algo < N_ALGOS ? algo_names[algo] : "?";
}

static char *join_names(const char *const *names, size_t n, unsigned mask)
{
    GString *g = g_string_new(NULL);
    for (size_t i = 0; i < n; i++) {
        if (!(mask & (1u << i)))
            continue;
        if (g->len)
            g_string_append(g, ", ");
        g_string_append(g, names[i]);
    }
    return g_string_free(g, FALSE);
}

gboolean collective_op_parse(const char *s, const char *key, enum collective_op *op,
                             GError **err)
{
    for (size_t i = 0; i < N_OPS; i++)
        if (s && strcmp(s, op_names[i]) == 0) {
            *op = (enum collective_op)i;
            return TRUE;
        }
    char *all = join_names(op_names, N_OPS, ~0u);
    g_set_error(err, COLLECTIVE_ERROR, COLLECTIVE_ERROR_INVALID,
                "%s: unknown collective '%s' (expected one of: %s)", key, s ? s : "", all);
    g_free(all);
    return FALSE;
}

gboolean collective_algo_parse(const char *s, const char *key, enum collective_algo *algo,
                               GError **err)
{
    for (size_t i = 0; i < N_ALGOS; i++)
        if (s && strcmp(s, algo_names[i]) == 0) {
            *algo = (enum collective_algo)i;
            return TRUE;
        }
    char *all = join_names(algo_names, N_ALGOS, ~0u);
    g_set_error(err, COLLECTIVE_ERROR, COLLECTIVE_ERROR_INVALID,
                "%s: unknown algorithm '%s' (expected one of: %s)", key, s ? s : "", all);
    g_free(all);
    return FALSE;
}

enum collective_algo collective_default_algo(enum collective_op op)
{
    return (op == COLL_ALLTOALL || op == COLL_SENDRECV) ? COLL_ALGO_DIRECT : COLL_ALGO_RING;
}

void collective_spec_init(struct collective_spec *spec)
{
    memset(spec, 0, sizeof *spec);
    spec->op = COLL_ALLREDUCE;
    spec->algorithm = COLL_ALGO_RING;
    spec->chunk = NCCL_STEP_BYTES;
    spec->channels = COLLECTIVE_DEFAULT_CHANNELS;
    spec->peer = 1;
    spec->iterations = 1;
    spec->prio = COLLECTIVE_DEFAULT_PRIO;
}

/* ---- NCCL's double binary tree ---- */

/* In-order binary tree over 0..n-1 rooted at 0 (NCCL ncclGetBtree): a rank's lowest set bit
 * says its level; its parent sets the next bit up (or clears its own bit when that is out of
 * range), its children are rank -/+ half its lowest bit (the right one shrunk into range). */
static void btree(uint32_t n, uint32_t rank, int *parent, int child[2])
{
    child[0] = child[1] = -1;
    uint32_t bit = 1;
    while (bit < n && !(bit & rank))
        bit <<= 1;
    if (rank == 0) {
        *parent = -1;
        if (n > 1)
            child[0] = (int)(bit >> 1);
        return;
    }
    uint32_t up = (rank ^ bit) | (bit << 1);
    if (up >= n)
        up = rank ^ bit;
    *parent = (int)up;
    uint32_t low = bit >> 1;
    if (!low)
        return;
    child[0] = (int)(rank - low);
    uint32_t right = rank + low;
    while (low && right >= n) {
        low >>= 1;
        right = rank + low;
    }
    if (low)
        child[1] = (int)right;
}

void collective_dtree(uint32_t n, int tree, uint32_t rank, int *parent, int child[2])
{
    if (tree == 0) {
        btree(n, rank, parent, child);
        return;
    }
    /* Tree 1 is tree 0 drawn on relabelled ranks: mirrored (n even) or shifted by one (odd). */
    gboolean odd = n % 2 == 1;
    uint32_t m = odd ? (rank + n - 1) % n : n - 1 - rank;
    btree(n, m, parent, child);
    int *all[3] = { parent, &child[0], &child[1] };
    for (int i = 0; i < 3; i++)
        if (*all[i] >= 0)
            *all[i] = odd ? (int)(((uint32_t)*all[i] + 1) % n) : (int)(n - 1 - (uint32_t)*all[i]);
}

/* ---- building ---- */

static inline uint64_t div_up(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }
/* Part i of x cut into n parts that differ by at most one (the larger ones first). */
static inline uint64_t part(uint64_t x, uint64_t n, uint64_t i) { return x / n + (i < x % n); }

/* The last NCCL_STEPS transfers posted on one QP in the iteration being built, for the
 * in-flight bound: `posted` of them so far, the latest at ids[(posted - 1) % NCCL_STEPS]. */
struct qp_window {
    uint32_t ids[NCCL_STEPS];
    uint32_t posted;
};

/* A key of a sending rank's map: the QP's destination rank and channel (keymap keys are 16
 * bytes, zero-padded). */
struct qp_row_key {
    uint32_t to, ch, zero[2];
};
G_STATIC_ASSERT(sizeof(struct qp_row_key) == KEYMAP_KEY_BYTES);

struct builder {
    struct schedule *s;
    const struct collective_spec *sp;
    uint32_t n;          /* ranks */
    uint64_t size;       /* S after rounding */
    uint32_t job, coll;
    uint32_t begin;      /* begin marker of the iteration being built */
    /* per sending rank (made at its first transfer): (to, channel) -> the QP's window in
     * `windows`. A window whose latest transfer is at or before `begin` is an earlier
     * iteration's and starts again empty, so nothing is cleared between iterations. One map
     * per rank, not one for all: a 4096-rank AllToAll has 16.8 M QPs, and one table of them
     * (a GHashTable, until 2026-12-07) took a cache miss or more per transfer, 4.8-6.5 s for
     * its schedule; a rank's own map stays in the cache while its messages are built. */
    struct keymap *window_of;
    /* per sending rank, the QP it sent on last: a ring sends on one QP a channel, and its
     * transfers find their window here without the map (4096 ranks' maps miss the level-2
     * cache, a ring's 33.5 M transfers took 1.1 s more through them) */
    struct qp_recent {
        uint32_t to, ch, window; /* window UINT32_MAX: none yet */
    } *recent;
    uint32_t row_keys;   /* the QPs a rank is expected to send on, for its map's first size */
    GArray *windows;     /* struct qp_window, in the order their QPs first appeared */
};

#define MAX_EMIT_DEPS 4

/* One data transfer from rank `from` to rank `to` on channel ch. Adds the in-flight bound
 * dependency, and the iteration's begin marker when nothing else is waited for. */
static uint32_t emit(struct builder *b, uint32_t from, uint32_t to, uint32_t ch, uint64_t bytes,
                     const uint32_t *deps, uint32_t ndeps)
{
    uint32_t d[MAX_EMIT_DEPS + 1];
    uint32_t nd = 0;
    g_assert(ndeps <= MAX_EMIT_DEPS);
    for (uint32_t i = 0; i < ndeps; i++)
        d[nd++] = deps[i];

    struct qp_recent *rc = &b->recent[from];
    if (rc->window == UINT32_MAX || rc->to != to || rc->ch != ch) {
        struct keymap *row = &b->window_of[from];
        if (!row->slots)
            keymap_init(row, b->row_keys);
        bool added;
        uint32_t *at = keymap_get_or_add(row, &(struct qp_row_key){ to, ch, { 0, 0 } }, &added);
        if (added) {
            *at = b->windows->len;
            g_array_set_size(b->windows, b->windows->len + 1);
        }
        *rc = (struct qp_recent){ to, ch, *at };
    }
    struct qp_window *w = &g_array_index(b->windows, struct qp_window, rc->window);
    if (w->posted && w->ids[(w->posted - 1) % NCCL_STEPS] <= b->begin)
        w->posted = 0; /* an earlier iteration's */
    if (w->posted >= NCCL_STEPS) {
        /* the transfer NCCL_STEPS before this one on the QP: its buffer slot is this one's */
        uint32_t old = w->ids[w->posted % NCCL_STEPS];
        gboolean have = FALSE;
        for (uint32_t i = 0; i < nd; i++)
            have |= d[i] == old;
        if (!have)
            d[nd++] = old;
    }
    if (nd == 0)
        d[nd++] = b->begin;

    struct transfer t = {
        .src = b->sp->ranks[from], .dst = b->sp->ranks[to], .bytes = bytes,
        .prio = b->sp->prio, .qp = COLLECTIVE_QP(b->job, ch), .delay = 0,
        .job = b->job, .coll = b->coll, .channel = (uint16_t)ch,
    };
    uint32_t id = schedule_add(b->s, &t, d, nd);
    w->ids[w->posted % NCCL_STEPS] = id;
    w->posted++;
    return id;
}

/* A marker on rank `at`. */
static uint32_t marker(struct builder *b, uint32_t at, const uint32_t *deps, uint32_t ndeps,
                       simtime_t delay, uint32_t coll)
{
    struct transfer t = {
        .src = b->sp->ranks[at], .dst = b->sp->ranks[at], .bytes = 0, .prio = b->sp->prio,
        .qp = COLLECTIVE_QP(b->job, 0), .delay = delay, .job = b->job, .coll = coll,
        .channel = 0,
    };
    return schedule_add(b->s, &t, deps, ndeps);
}

/* `bytes` from rank `from` to rank `to`: split evenly over the channels, then into chunks; every
 * piece waits for deps. Ids go to `out` (if given). A 0-byte message still gets one (marker)
 * transfer so that whatever waits for it keeps its place in the DAG. */
static void emit_message(struct builder *b, uint32_t from, uint32_t to, uint64_t bytes,
                         const uint32_t *deps, uint32_t ndeps, GArray *out)
{
    const uint32_t nch = b->sp->channels;
    gboolean any = FALSE;
    for (uint32_t ch = 0; ch < nch; ch++) {
        uint64_t c = part(bytes, nch, ch);
        if (c == 0)
            continue;
        uint64_t m = div_up(c, b->sp->chunk);
        for (uint64_t j = 0; j < m; j++) {
            uint32_t id = emit(b, from, to, ch, part(c, m, j), deps, ndeps);
            if (out)
                g_array_append_val(out, id);
        }
        any = TRUE;
    }
    if (!any) {
        uint32_t id = emit(b, from, to, 0, 0, deps, ndeps);
        if (out)
            g_array_append_val(out, id);
    }
}

/* Segment of the loop that ring position r sends at step s (NCCL runRing). Reduce-scatter:
 * r-1-s, so r ends owning segment r fully reduced; all-gather: r-s, starting with its own. */
static uint32_t ring_segment(enum collective_op op, uint32_t n, uint32_t r, uint32_t s)
{
    switch (op) {
    case COLL_REDUCESCATTER:
        return (r + 2 * n - 1 - s) % n;
    case COLL_ALLGATHER:
        return (r + n - s) % n;
    default: /* allreduce: reduce-scatter, then all-gather of the reduced segments */
        return s < n - 1 ? (r + 2 * n - 1 - s) % n : (r + n - (s - (n - 1))) % n;
    }
}

static void build_ring(struct builder *b)
{
    const struct collective_spec *sp = b->sp;
    const uint32_t n = b->n, nch = sp->channels, K = RING_CHUNK_STEPS;
    const uint32_t nsteps = sp->op == COLL_ALLREDUCE ? 2 * (n - 1) : n - 1;
    uint32_t *prev = g_new(uint32_t, (size_t)n * K), *cur = g_new(uint32_t, (size_t)n * K);
    uint32_t *last = g_new(uint32_t, n); /* final transfer on edge r->r+1 of the previous loop */

    for (uint32_t ch = 0; ch < nch; ch++) {
        const uint32_t *o = sp->ring_order ? sp->ring_order + (size_t)ch * n : NULL;
        /* Segment 0 is the largest; its size on this channel sets the loop and slice counts,
         * so every segment has the same transfer structure and no transfer exceeds chunk. */
        uint64_t maxseg = part(part(b->size, n, 0), nch, ch);
        uint64_t nloops = div_up(maxseg, (uint64_t)K * sp->chunk);
        if (nloops == 0)
            nloops = 1;
        for (uint64_t l = 0; l < nloops; l++) {
            uint64_t k = div_up(part(maxseg, nloops, l), sp->chunk);
            if (k == 0)
                k = 1;
            for (uint32_t s = 0; s < nsteps; s++) {
                for (uint64_t j = 0; j < k; j++) {
                    for (uint32_t r = 0; r < n; r++) {
                        uint32_t pred = (r + n - 1) % n;
                        uint32_t seg = ring_segment(sp->op, n, r, s);
                        uint64_t bytes = part(part(part(part(b->size, n, seg), nch, ch), nloops, l), k, j);
                        uint32_t dep = 0, nd = 0;
                        if (s > 0) {
                            dep = prev[pred * K + j]; /* what r forwards or reduces */
                            nd = 1;
                        } else if (l > 0) {
                            dep = last[pred]; /* NCCL: next loop after the final receive */
                            nd = 1;
                        }
                        cur[r * K + j] = emit(b, o ? o[r] : r, o ? o[(r + 1) % n] : (r + 1) % n, ch, bytes,
                                              &dep, nd);
                    }
                }
                uint32_t *t = prev;
                prev = cur;
                cur = t;
            }
            for (uint32_t r = 0; r < n; r++)
                last[r] = prev[r * K + k - 1];
        }
    }
    g_free(prev);
    g_free(cur);
    g_free(last);
}

static void build_tree(struct builder *b)
{
    const struct collective_spec *sp = b->sp;
    const uint32_t n = b->n, nch = sp->channels;
    int *parent = g_new(int, n);
    int (*child)[COLLECTIVE_TREE_ARITY] = g_malloc(sizeof(int[COLLECTIVE_TREE_ARITY]) * n);
    uint32_t *order = g_new(uint32_t, n); /* breadth first from the root */
    uint32_t *up = g_new(uint32_t, n), *down = g_new(uint32_t, n);

    for (uint32_t ch = 0; ch < nch; ch++) {
        int tree = (int)(ch % 2);
        uint32_t root = 0;
        for (uint32_t r = 0; r < n; r++) {
            if (sp->tree_parent) { /* a given tree per channel (e.g. NCCL's over servers) */
                parent[r] = sp->tree_parent[(size_t)ch * n + r];
                for (int c = 0; c < COLLECTIVE_TREE_ARITY; c++)
                    child[r][c] = sp->tree_child[((size_t)ch * n + r) * COLLECTIVE_TREE_ARITY + c];
            } else {
                collective_dtree(n, tree, r, &parent[r], child[r]);
                child[r][2] = -1;
            }
            if (parent[r] < 0)
                root = r;
        }
        uint32_t head = 0, tail = 0;
        order[tail++] = root;
        while (head < tail) {
            uint32_t r = order[head++];
            for (int c = 0; c < COLLECTIVE_TREE_ARITY; c++)
                if (child[r][c] >= 0)
                    order[tail++] = (uint32_t)child[r][c];
        }
        g_assert(tail == n);

        uint64_t size = part(b->size, nch, ch);
        uint64_t m = div_up(size, sp->chunk);
        if (m == 0)
            m = 1;
        for (uint64_t j = 0; j < m; j++) {
            uint64_t bytes = part(size, m, j);
            uint32_t deps[COLLECTIVE_TREE_ARITY], nd;
            /* Reduce: children before parents, each waits for its children's chunk j. */
            for (uint32_t i = n - 1; i >= 1; i--) {
                uint32_t r = order[i];
                nd = 0;
                for (int c = 0; c < COLLECTIVE_TREE_ARITY; c++)
                    if (child[r][c] >= 0)
                        deps[nd++] = up[child[r][c]];
                up[r] = emit(b, r, (uint32_t)parent[r], ch, bytes, deps, nd);
            }
            /* Broadcast: the root once all of its children reported, the others once their
             * parent's chunk arrived. */
            for (uint32_t i = 0; i < n; i++) {
                uint32_t r = order[i];
                nd = 0;
                if (r == root) {
                    for (int c = 0; c < COLLECTIVE_TREE_ARITY; c++)
                        if (child[r][c] >= 0)
                            deps[nd++] = up[child[r][c]];
                } else {
                    deps[nd++] = down[r];
                }
                for (int c = 0; c < COLLECTIVE_TREE_ARITY; c++)
                    if (child[r][c] >= 0)
                        down[child[r][c]] = emit(b, r, (uint32_t)child[r][c], ch, bytes, deps, nd);
            }
        }
    }
    g_free(parent);
    g_free(child);
    g_free(order);
    g_free(up);
    g_free(down);
}

static void build_broadcast(struct builder *b)
{
    const struct collective_spec *sp = b->sp;
    const uint32_t n = b->n, nch = sp->channels;
    for (uint32_t ch = 0; ch < nch; ch++) {
        uint64_t size = part(b->size, nch, ch);
        uint64_t m = div_up(size, sp->chunk);
        if (m == 0)
            m = 1;
        for (uint64_t j = 0; j < m; j++) {
            uint32_t prev = 0;
            for (uint32_t p = 0; p + 1 < n; p++) { /* p = distance from the root */
                uint32_t r = (sp->root + p) % n;
                prev = emit(b, r, (r + 1) % n, ch, part(size, m, j), &prev, p > 0);
            }
        }
    }
}

/* Per-rank round markers for round-based algorithms: rank r's round k+1 starts when it has
 * received everything of round k and its own round k-1 marker has fired. */
struct rounds {
    uint32_t *done; /* latest round marker per rank, UINT32_MAX before the first */
    GArray **recv;  /* ids received by each rank in the current round */
};

static void rounds_init(struct rounds *rd, uint32_t n)
{
    rd->done = g_new(uint32_t, n);
    rd->recv = g_new(GArray *, n);
    for (uint32_t r = 0; r < n; r++) {
        rd->done[r] = UINT32_MAX;
        rd->recv[r] = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    }
}

static void rounds_free(struct rounds *rd, uint32_t n)
{
    for (uint32_t r = 0; r < n; r++)
        g_array_free(rd->recv[r], TRUE);
    g_free(rd->recv);
    g_free(rd->done);
}

/* Sends of a round from rank r wait for this. */
static uint32_t rounds_deps(const struct rounds *rd, uint32_t r, uint32_t *dep)
{
    *dep = rd->done[r];
    return rd->done[r] != UINT32_MAX;
}

static void rounds_close(struct builder *b, struct rounds *rd)
{
    for (uint32_t r = 0; r < b->n; r++) {
        GArray *a = rd->recv[r];
        if (rd->done[r] != UINT32_MAX)
            g_array_append_val(a, rd->done[r]);
        rd->done[r] = marker(b, r, (const uint32_t *)a->data, a->len, 0, b->coll);
        g_array_set_size(a, 0);
    }
}

static void build_halving_doubling(struct builder *b)
{
    const uint32_t n = b->n;
    uint32_t L = 0;
    while ((1u << L) < n)
        L++;
    uint64_t *lo = g_new(uint64_t, n), *hi = g_new(uint64_t, n);
    uint64_t *save_lo = g_new(uint64_t, (size_t)L * n), *save_hi = g_new(uint64_t, (size_t)L * n);
    struct rounds rd;
    rounds_init(&rd, n);
    for (uint32_t r = 0; r < n; r++) {
        lo[r] = 0;
        hi[r] = b->size;
    }
    for (uint32_t q = 0; q < 2 * L; q++) {
        for (uint32_t r = 0; r < n; r++) {
            uint32_t d, dep, nd = rounds_deps(&rd, r, &dep);
            uint64_t bytes;
            if (q < L) {
                /* Halving: r and r^d hold the same segment; the one without bit d keeps the
                 * lower half and sends the upper half, its partner the other way round. */
                d = n >> (q + 1);
                save_lo[q * n + r] = lo[r];
                save_hi[q * n + r] = hi[r];
                uint64_t mid = lo[r] + (hi[r] - lo[r]) / 2;
                if (r & d) {
                    bytes = mid - lo[r];
                    lo[r] = mid;
                } else {
                    bytes = hi[r] - mid;
                    hi[r] = mid;
                }
            } else {
                /* Doubling, in reverse: send the whole segment, get the partner's half back. */
                uint32_t back = 2 * L - 1 - q; /* the halving round with the same partner */
                d = n >> (back + 1);
                bytes = hi[r] - lo[r];
                lo[r] = save_lo[back * n + r];
                hi[r] = save_hi[back * n + r];
            }
            emit_message(b, r, r ^ d, bytes, &dep, nd, rd.recv[r ^ d]);
        }
        if (q + 1 < 2 * L)
            rounds_close(b, &rd);
    }
    rounds_free(&rd, n);
    g_free(lo);
    g_free(hi);
    g_free(save_lo);
    g_free(save_hi);
}

static void build_alltoall(struct builder *b)
{
    const uint32_t n = b->n;
    const uint64_t pair = b->size / n;
    /* every rank sends to every other, on every channel its message has bytes on (a message
     * of fewer bytes than channels leaves some empty, one of none is a marker on channel 0;
     * emit_message): no more keys than transfers, which validate() has checked will fit */
    uint64_t used = pair < b->sp->channels ? pair : b->sp->channels;
    b->row_keys = (n - 1) * (uint32_t)(used ? used : 1);
    if (b->sp->algorithm == COLL_ALGO_DIRECT) {
        for (uint32_t r = 0; r < n; r++)
            for (uint32_t k = 1; k < n; k++)
                emit_message(b, r, (r + k) % n, pair, NULL, 0, NULL);
        return;
    }
    struct rounds rd;
    rounds_init(&rd, n);
    for (uint32_t k = 1; k < n; k++) {
        for (uint32_t r = 0; r < n; r++) {
            uint32_t dep, nd = rounds_deps(&rd, r, &dep);
            uint32_t to = (r + k) % n;
            emit_message(b, r, to, pair, &dep, nd, rd.recv[to]);
        }
        if (k + 1 < n)
            rounds_close(b, &rd);
    }
    rounds_free(&rd, n);
}

static void build_iteration(struct builder *b)
{
    switch (b->sp->op) {
    case COLL_ALLREDUCE:
        if (b->sp->algorithm == COLL_ALGO_TREE)
            build_tree(b);
        else if (b->sp->algorithm == COLL_ALGO_HALVING_DOUBLING)
            build_halving_doubling(b);
        else
            build_ring(b);
        break;
    case COLL_ALLGATHER:
    case COLL_REDUCESCATTER:
        build_ring(b);
        break;
    case COLL_BROADCAST:
        build_broadcast(b);
        break;
    case COLL_ALLTOALL:
        build_alltoall(b);
        break;
    case COLL_SENDRECV:
        emit_message(b, 0, b->sp->peer, b->size, NULL, 0, NULL);
        break;
    }
}

/* Transfers in [first, end) that nothing in that range waits for. */
static GArray *range_sinks(const struct schedule *s, uint32_t first, uint32_t end)
{
    guint8 *waited = g_new0(guint8, end - first);
    for (uint32_t id = first; id < end; id++) {
        const struct transfer *t = schedule_get(s, id);
        const uint32_t *d = schedule_deps(s, t);
        for (uint32_t i = 0; i < t->ndeps; i++)
            if (d[i] >= first && d[i] < end)
                waited[d[i] - first] = 1;
    }
    GArray *out = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    for (uint32_t id = first; id < end; id++)
        if (!waited[id - first])
            g_array_append_val(out, id);
    g_free(waited);
    return out;
}

/* ---- validation ---- */

static gboolean fail(GError **err, const struct collective_spec *sp, const char *fmt, ...)
    G_GNUC_PRINTF(3, 4);
static gboolean fail(GError **err, const struct collective_spec *sp, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(err, COLLECTIVE_ERROR, COLLECTIVE_ERROR_INVALID, "[workload %s] %s",
                sp->name ? sp->name : "?", msg);
    g_free(msg);
    return FALSE;
}

static gboolean is_pow2(uint32_t x) { return x && !(x & (x - 1)); }

/* S after the rounding described in collective.h. */
static uint64_t effective_size(const struct collective_spec *sp)
{
    switch (sp->op) {
    case COLL_ALLGATHER:
    case COLL_REDUCESCATTER:
    case COLL_ALLTOALL:
        return sp->size - sp->size % sp->nranks;
    default:
        return sp->size;
    }
}

/* An upper bound on the transfers one iteration adds (markers included), in floating point so
 * absurd sizes cannot overflow. */
static double iteration_transfers(const struct collective_spec *sp, uint64_t size)
{
    double n = sp->nranks, ch = sp->channels, chunk = (double)sp->chunk, S = (double)size;
    double per_ch = S / ch / chunk + 2; /* chunks of one channel's share, rounded up, + 1 */
    /* ring: slices of a segment's channel share plus at most one partial slice per loop */
    double ring_per_ch = 2 * (S / n / ch + 1) / chunk + 2;
    switch (sp->op) {
    case COLL_ALLREDUCE:
        if (sp->algorithm == COLL_ALGO_TREE)
            return 2 * (n - 1) * ch * per_ch;
        if (sp->algorithm == COLL_ALGO_HALVING_DOUBLING)
            return n * (2 * S / chunk + 2 * 32 * (ch + 2));
        return 2 * (n - 1) * n * ch * ring_per_ch;
    case COLL_ALLGATHER:
    case COLL_REDUCESCATTER:
        return (n - 1) * n * ch * ring_per_ch;
    case COLL_BROADCAST:
        return (n - 1) * ch * per_ch;
    case COLL_ALLTOALL:
        return n * (n - 1) * ch * (S / n / ch / chunk + 2) + n * n;
    case COLL_SENDRECV:
        return ch * per_ch;
    }
    return 0;
}

static gboolean validate(const struct schedule *s, const struct collective_spec *sp, GError **err)
{
    if (!sp->name || !*sp->name)
        return fail(err, sp, "name: a collective job needs a name");
    if ((unsigned)sp->op >= N_OPS)
        return fail(err, sp, "op: unknown collective (%d)", (int)sp->op);
    if ((unsigned)sp->algorithm >= N_ALGOS)
        return fail(err, sp, "algorithm: unknown algorithm (%d)", (int)sp->algorithm);
    if (!(op_algos[sp->op] & (1u << sp->algorithm))) {
        char *ok = join_names(algo_names, N_ALGOS, op_algos[sp->op]);
        fail(err, sp, "algorithm: %s is not available for %s (expected: %s)",
             algo_names[sp->algorithm], op_names[sp->op], ok);
        g_free(ok);
        return FALSE;
    }
    if (sp->nranks < 2 || !sp->ranks)
        return fail(err, sp, "ranks: a collective needs at least 2 ranks, got %u",
                    sp->ranks ? sp->nranks : 0);
    GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (uint32_t i = 0; i < sp->nranks; i++) {
        gpointer prev;
        if (g_hash_table_lookup_extended(seen, GUINT_TO_POINTER(sp->ranks[i]), NULL, &prev)) {
            g_hash_table_destroy(seen);
            return fail(err, sp, "ranks: host %u appears twice (rank %u and rank %u)",
                        sp->ranks[i], GPOINTER_TO_UINT(prev), i);
        }
        g_hash_table_insert(seen, GUINT_TO_POINTER(sp->ranks[i]), GUINT_TO_POINTER(i));
    }
    g_hash_table_destroy(seen);
    if (sp->algorithm == COLL_ALGO_HALVING_DOUBLING && !is_pow2(sp->nranks))
        return fail(err, sp, "ranks: halving-doubling needs a power-of-two number of ranks, got %u",
                    sp->nranks);
    if (sp->size == 0)
        return fail(err, sp, "size: must be at least 1 B");
    if (effective_size(sp) == 0)
        return fail(err, sp,
                    "size: %" G_GUINT64_FORMAT " B is less than one byte per rank (%u ranks); "
                    "for %s, size is the total over all ranks",
                    sp->size, sp->nranks, op_names[sp->op]);
    if (sp->chunk == 0)
        return fail(err, sp, "chunk: must be at least 1 B");
    if (sp->channels == 0 || sp->channels > COLLECTIVE_MAX_CHANNELS)
        return fail(err, sp, "channels: %u is out of range (1..%u)", sp->channels,
                    COLLECTIVE_MAX_CHANNELS);
    if (sp->algorithm == COLL_ALGO_TREE && sp->channels % 2)
        return fail(err, sp,
                    "channels: tree needs an even number of channels (each of the two trees of "
                    "the double binary tree gets half), got %u", sp->channels);
    if (sp->iterations == 0)
        return fail(err, sp, "iterations: must be at least 1");
    if (sp->prio > 7)
        return fail(err, sp, "prio: %u is out of range (0..7)", sp->prio);
    if (sp->op == COLL_BROADCAST && sp->root >= sp->nranks)
        return fail(err, sp, "root: rank %u is out of range (0..%u)", sp->root, sp->nranks - 1);
    if (sp->op == COLL_SENDRECV && (sp->peer == 0 || sp->peer >= sp->nranks))
        return fail(err, sp, "peer: rank %u is out of range (1..%u; rank 0 sends)", sp->peer,
                    sp->nranks - 1);
    if (s->jobs->len >= (1u << (32 - COLLECTIVE_QP_JOB_SHIFT)))
        return fail(err, sp, "too many jobs for the QP tag (at most %u)",
                    1u << (32 - COLLECTIVE_QP_JOB_SHIFT));
    for (uint32_t i = 0; i < sp->nafter; i++)
        if (sp->after[i] >= schedule_count(s))
            return fail(err, sp, "after: transfer %u does not exist (the schedule has %u)",
                        sp->after[i], schedule_count(s));
    double est = (iteration_transfers(sp, effective_size(sp)) + 2) * sp->iterations + 1;
    double room = (double)COLLECTIVE_MAX_TRANSFERS - schedule_count(s);
    if (est > room)
        return fail(err, sp,
                    "chunk: %" G_GUINT64_FORMAT " B for %u iterations gives up to %.3g transfers, "
                    "more than the %.3g a schedule may still hold; raise chunk or lower iterations",
                    sp->chunk, sp->iterations, est, room);
    char *why = NULL;
    if (!memory_fits((uint64_t)est * memory_transfer_bytes(), &why)) {
        gboolean r = fail(err, sp, "%.3g transfers (%u ranks, %u iterations, chunk %" G_GUINT64_FORMAT
                          " B) need %s; raise chunk, or lower size, ranks or iterations", est, sp->nranks, sp->iterations,
                          sp->chunk, why);
        g_free(why);
        return r;
    }
    return TRUE;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

gboolean collective_build(struct schedule *s, const struct collective_spec *sp, GError **err)
{
    if (!validate(s, sp, err))
        return FALSE;

    struct builder b = {
        .s = s, .sp = sp, .n = sp->nranks, .size = effective_size(sp),
        .job = schedule_add_job(s, sp->name, op_names[sp->op], algo_names[sp->algorithm],
                                sp->nranks),
        .coll = SCHEDULE_NO_JOB,
        .window_of = g_new0(struct keymap, sp->nranks),
        .recent = g_new(struct qp_recent, sp->nranks),
        .windows = g_array_new(FALSE, TRUE, sizeof(struct qp_window)),
    };
    for (uint32_t r = 0; r < sp->nranks; r++)
        b.recent[r].window = UINT32_MAX;
    uint32_t start = marker(&b, 0, NULL, 0, sp->start, SCHEDULE_NO_JOB);

    /* The first begin marker waits for the start and for `after` (sorted, without repeats). */
    GArray *first = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    g_array_append_val(first, start);
    if (sp->nafter) {
        uint32_t *a = g_memdup2(sp->after, sizeof(uint32_t) * sp->nafter);
        qsort(a, sp->nafter, sizeof *a, cmp_u32);
        for (uint32_t i = 0; i < sp->nafter; i++)
            if (i == 0 || a[i] != a[i - 1])
                g_array_append_val(first, a[i]);
        g_free(a);
    }

    uint32_t end = 0;
    for (uint32_t it = 0; it < sp->iterations; it++) {
        b.coll = s->colls->len;
        if (it == 0)
            b.begin = marker(&b, 0, (const uint32_t *)first->data, first->len, sp->compute, b.coll);
        else
            b.begin = marker(&b, 0, &end, 1, sp->compute, b.coll);
        build_iteration(&b);
        GArray *sinks = range_sinks(s, b.begin + 1, schedule_count(s));
        end = marker(&b, 0, (const uint32_t *)sinks->data, sinks->len, 0, b.coll);
        g_array_free(sinks, TRUE);
        struct sched_coll c = {
            .job = b.job, .iteration = it, .bytes = b.size,
            .first = b.begin, .count = end - b.begin + 1,
        };
        g_array_append_val(s->colls, c);
    }
    g_array_free(first, TRUE);
    for (uint32_t r = 0; r < sp->nranks; r++)
        keymap_clear(&b.window_of[r]);
    g_free(b.window_of);
    g_free(b.recent);
    g_array_free(b.windows, TRUE);
    return TRUE;
}

/* NCCL's chunk size for the double binary tree (Simple protocol, enqueue.cc): start from one
 * step and halve while there are too few chunks per channel to fill the pipeline of a tree of
 * depth d (at least 8d chunks down to 128 KiB, 4d down to 64 KiB, d down to 32 KiB). With one
 * rank per node the tree's depth is floor(log2 nranks). */
uint64_t collective_tree_chunk(uint64_t size, uint32_t channels, uint32_t nranks)
{
    uint64_t depth = 0;
    while ((2ull << depth) <= nranks)
        depth++;
    uint64_t chunk = NCCL_STEP_BYTES;
    uint64_t ch = channels ? channels : 1;
    while (size / (ch * chunk) < depth * 8 && chunk > 131072)
        chunk /= 2;
    while (size / (ch * chunk) < depth * 4 && chunk > 65536)
        chunk /= 2;
    while (size / (ch * chunk) < depth && chunk > 32768)
        chunk /= 2;
    return chunk;
}
