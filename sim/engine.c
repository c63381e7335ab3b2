#include "sim/engine.h"
#include <glib.h>
#include "sim/engine_group.h"
#include "sim/progress.h"
#include "sim/reserve.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* the engine whose run loop is on this thread's stack (several run at once in a parallel run) */
static __thread struct engine *running;

struct engine *engine_running(void) { return running; }

static void timer_fire(void *ctx, uint64_t arg);

double engine_wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void engine_init(struct engine *e)
{
    *e = (struct engine){ 0 };
    e->stop = SIMTIME_NEVER;
    e->far_min = SIMTIME_NEVER;
    e->cur = ENGINE_NONE;
    e->seq = g_new0(uint64_t, 1);
    e->hs = g_aligned_alloc0(1, sizeof *e->hs, 64);
    e->hs->refs = 1;
    e->hs->h[e->hs->n++] = (struct engine_handler){ timer_fire, e->hs }; /* handler 0 */
    e->slot = g_new(struct wheel_slot, ENGINE_WHEEL_SLOTS);
    for (uint32_t i = 0; i < ENGINE_WHEEL_SLOTS; i++)
        e->slot[i].head = ENGINE_NONE;
}

static void handlers_unref(struct engine_handlers *hs)
{
    if (hs && --hs->refs == 0) {
        g_free(hs->timers);
        g_aligned_free(hs);
    }
}

void engine_free(struct engine *e)
{
    handlers_unref(e->hs);
    for (int i = 0; i < ENGINE_BUCKETS; i++)
        g_free(e->b[i].ev);
    g_free(e->late.ev);
    g_free(e->seq);
    g_free(e->scratch);
    g_free(e->spare);
    g_free(e->slot);
    g_aligned_free(e->chunks);
    g_free(e->chunk_free);
    *e = (struct engine){ 0 };
}

void engine_set_entities(struct engine *e, uint32_t n)
{
    if (e->n || n >= ENGINE_MAX_ENTITIES)
        g_error("engine_set_entities(%u): %s", n, e->n ? "events are already scheduled" : "too many entities");
    g_free(e->seq);
    e->seq = g_new0(uint64_t, (gsize)n + 1);
    e->entities = n;
}

/* The open slot (bucket 0) is sorted once when the wheel reaches it, by time and then as the
 * header says. A slot holds a few events (two a nanosecond on bench/fabric.ini) and the ties
 * of synchronised senders (batches of up to 218 there, of 4096 on bench/scale.ini), while an
 * event scheduled into the open slot goes into the late list one by one, and rarely. So: by
 * insertion for a few events; else (prefix, index) records by an MSD radix sort of the
 * prefixes and an insertion pass for what it leaves (sort_prefixed, sort0).
 *
 * The order: time, then owner, then the key's high half (remote flag, turn), then origin,
 * then the key's low half (the sequence). Owner first is what matters for speed (each
 * owner's state is touched once per instant, in memory order) and nothing else (an owner's
 * events at an instant do not see another's). The key is complete: every event has its own
 * (origin, sequence), so the order does not depend on the order events reached the slot. */

static inline uint64_t order_hi(const struct event *a) { return (uint64_t)a->owner << 32 | a->key >> 32; }
static inline uint64_t order_lo(const struct event *a) { return (uint64_t)event_origin(a) << 32 | (uint32_t)a->key; }

static inline bool ev_before(const struct event *a, const struct event *b)
{
    if (a->time != b->time)
        return a->time < b->time;
    uint64_t ha = order_hi(a), hb = order_hi(b);
    if (ha != hb)
        return ha < hb;
    return order_lo(a) < order_lo(b);
}

static void insertion_sort(struct event *v, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) {
        if (!ev_before(&v[i], &v[i - 1]))
            continue; /* in place already (most are): nothing copied */
        struct event x = v[i];
        uint32_t j = i;
        for (; j > 0 && ev_before(&x, &v[j - 1]); j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

/* The MSD radix sort's passes (prec_msd): at most 2^SORT0_BIN_BITS bins a pass, and bins
 * of more than SORT0_BIN_MIN records sorted further. Against insertion up to 128 records, a
 * merge up to 256 and an LSD radix sort over every byte the prefixes differ in above
 * (callgrind, 2026-12-05): bench/scale.ini's whole run 9.70 G -> 9.48 G instructions (its
 * 4096-event instants), bench/fabric.ini at 5 ms 7.24 G both ways; bench/large.ini's slots
 * of 64-128 events in random order had made 15 insertion moves per event. */
#define SORT0_BIN_BITS 11
#define SORT0_BIN_MIN 16

/* Puts bucket 0's n events (from its head) in the order the records name (idx of each
 * record, rec_size bytes apart): gathered into the spare array, which then becomes the
 * bucket's, so that each event moves once. */
static void permute(struct engine *e, uint32_t n, const uint32_t *idx, size_t rec_size)
{
    struct bucket *b = &e->b[0];
    if (e->spare_cap < b->cap) {
        g_free(e->spare);
        e->spare = g_new(struct event, b->cap);
        e->spare_cap = b->cap;
    }
    struct event *from = b->ev + b->head, *to = e->spare + b->head;
    for (uint32_t i = 0; i < n; i++)
        to[i] = from[*(const uint32_t *)((const char *)idx + i * rec_size)];
    struct event *t = b->ev;
    uint32_t cap = b->cap;
    b->ev = e->spare;
    b->cap = e->spare_cap;
    e->spare = t;
    e->spare_cap = cap;
}

/* Records of the sorts above 16 events: a 64-bit prefix of the order that is exact inside a
 * slot (the time's offset in the slot, ENGINE_SLOT_BITS; the owner, 24; the remote flag and
 * the turn's top bits, the rest), and where two prefixes are equal (one owner's own events at
 * one instant, or two origins of nearly the same turn) the events themselves decide. */
struct prec {
    uint64_t prefix;
    uint32_t idx;
};

/* the turn's bits that fit beside the slot offset and the owner */
#define PREFIX_TURN_BITS (64 - ENGINE_SLOT_BITS - ENGINE_ORIGIN_BITS)
_Static_assert(PREFIX_TURN_BITS >= 16, "the prefix holds the owner and most of the turn");

static inline uint64_t prefix_of(const struct event *a)
{
    return (uint64_t)(a->time & ((1ull << ENGINE_SLOT_BITS) - 1)) << (64 - ENGINE_SLOT_BITS) |
           (uint64_t)a->owner << PREFIX_TURN_BITS | a->key >> (64 - PREFIX_TURN_BITS);
}

static inline bool prec_before(const struct prec *a, const struct prec *b, const struct event *v)
{
    if (a->prefix != b->prefix)
        return a->prefix < b->prefix;
    return ev_before(&v[a->idx], &v[b->idx]);
}

/* Insertion sort of records; false (the records a permutation still) when it would move more
 * than `limit` of them, the sign of a disorder a merge sorts faster. */
static bool prec_insertion(struct prec *x, uint32_t n, const struct event *v, uint64_t limit)
{
    uint64_t moves = 0;
    for (uint32_t i = 1; i < n; i++) {
        if (!prec_before(&x[i], &x[i - 1], v))
            continue;
        struct prec r = x[i];
        uint32_t j = i;
        for (; j > 0 && prec_before(&r, &x[j - 1], v); j--)
            x[j] = x[j - 1];
        x[j] = r;
        if ((moves += i - j) > limit)
            return false;
    }
    return true;
}

/* Bottom-up merge sort of n records (x, with y as room); returns where they ended. */
static struct prec *prec_merge(struct prec *x, struct prec *y, uint32_t n, const struct event *v)
{
    for (uint32_t w = 1; w < n; w *= 2) {
        for (uint32_t lo = 0; lo < n; lo += 2 * w) {
            uint32_t mid = MIN(lo + w, n), hi = MIN(lo + 2 * w, n), i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                y[k++] = prec_before(&x[j], &x[i], v) ? x[j++] : x[i++];
            while (i < mid)
                y[k++] = x[i++];
            while (j < hi)
                y[k++] = x[j++];
        }
        struct prec *t = x;
        x = y;
        y = t;
    }
    return x;
}

/* An MSD radix sort of n records by their prefixes' bits below bit `below`, from `src` into
 * `out` (src itself, or the room beside it, `dst`): one counting pass from src into dst over
 * the top varying bits, as many as give about two records a bin (at most SORT0_BIN_BITS;
 * against one a bin, cachegrind: bench/scale.ini 1.1 % fewer instructions in all,
 * bench/fabric.ini at 2 ms 0.15 %); then each bin of more than SORT0_BIN_MIN records the
 * same way by the bits below, from dst back into src's place, and the others copied to out
 * if it is not there. The few records a small bin leaves unordered (and those of equal
 * prefixes) are for the insertion pass after it. Each pass moves every record once, with no
 * copying back. */
static void prec_msd(struct prec *src, struct prec *dst, struct prec *out, uint32_t n, int below);

/* prec_msd once the bits the prefixes differ in (below `below`) are known, `vary`: the top
 * level's are gathered while the records are built, saving a pass over them */
static void prec_msd_by(struct prec *src, struct prec *dst, struct prec *out, uint32_t n, uint64_t vary)
{
    if (!vary) {
        if (src != out)
            memcpy(out, src, n * sizeof *out);
        return;
    }
    int top = 63 - __builtin_clzll(vary), bits = MIN(31 - __builtin_clz(n - 1), SORT0_BIN_BITS); /* n > 16 */
    int shift = MAX(top + 1 - bits, 0);
    uint32_t mask = (1u << bits) - 1, cnt[(1u << SORT0_BIN_BITS) + 1];
    memset(cnt, 0, (mask + 2) * sizeof *cnt);
    for (uint32_t i = 0; i < n; i++)
        cnt[((src[i].prefix >> shift) & mask) + 1]++;
    uint32_t big = 0; /* the largest bin */
    for (uint32_t d = 0; d < mask; d++) {
        big = MAX(big, cnt[d + 1]);
        cnt[d + 1] += cnt[d];
    }
    big = MAX(big, cnt[mask + 1]);
    for (uint32_t i = 0; i < n; i++)
        dst[cnt[(src[i].prefix >> shift) & mask]++] = src[i];
    /* cnt[d] is now where bin d ends; the bins sorted no further go to out in runs, one copy
     * each (most bins hold a record or two: with a copy each, the sort took 237 M
     * instructions of bench/fabric.ini's 3.17 G at 2 ms, 182 M without; its slots mostly
     * hold 17-127 events) */
    uint32_t copied = 0;
    if (shift && big > SORT0_BIN_MIN)
        for (uint32_t d = 0, from = 0; d <= mask; from = cnt[d++]) {
            uint32_t len = cnt[d] - from;
            if (len <= SORT0_BIN_MIN)
                continue;
            if (dst != out && from > copied)
                memcpy(out + copied, dst + copied, (from - copied) * sizeof *out);
            prec_msd(dst + from, src + from, out + from, len, shift);
            copied = cnt[d];
        }
    if (dst != out && n > copied)
        memcpy(out + copied, dst + copied, (n - copied) * sizeof *out);
}

static void prec_msd(struct prec *src, struct prec *dst, struct prec *out, uint32_t n, int below)
{
    uint64_t or_ = 0, and_ = ~0ull;
    for (uint32_t i = 0; i < n; i++) {
        or_ |= src[i].prefix;
        and_ &= src[i].prefix;
    }
    prec_msd_by(src, dst, out, n, (or_ ^ and_) & ((1ull << below) - 1));
}

/* Sorts n (more than 16) records of events v (an MSD radix sort of the prefixes, then an
 * insertion pass that orders the small bins it left and the runs of equal prefixes, or a
 * merge when that pass finds more disorder than those make); returns where they ended (the
 * scratch's first or second half). */
static struct prec *sort_records(struct engine *e, const struct event *v, uint32_t n, uint64_t vary)
{
    struct prec *x = (struct prec *)e->scratch, *y = x + n;
    prec_msd_by(x, y, x, n, vary);
    if (!prec_insertion(x, n, v, 8ull * n))
        x = prec_merge(x, y, n, v);
    return x;
}

/* Makes room in the scratch for the records of n events and the sorts' second half. */
static void scratch_reserve(struct engine *e, uint32_t n)
{
    if (e->scratch_cap < n) {
        e->scratch_cap = n * 2;
        e->scratch = g_renew(uint8_t, e->scratch, (gsize)e->scratch_cap * 2 * sizeof(struct prec));
    }
}

/* Sorts bucket 0's n (more than 16) events through prefix records. */
static void sort_prefixed(struct engine *e, struct event *v, uint32_t n)
{
    struct prec *x = (struct prec *)e->scratch;
    bool sorted = true;
    uint64_t or_ = 0, and_ = ~0ull; /* the bits the prefixes differ in, for the radix sort */
    for (uint32_t i = 0; i < n; i++) {
        x[i] = (struct prec){ prefix_of(&v[i]), i };
        or_ |= x[i].prefix;
        and_ &= x[i].prefix;
        if (i && sorted && prec_before(&x[i], &x[i - 1], v))
            sorted = false;
    }
    if (sorted)
        return;
    x = sort_records(e, v, n, or_ ^ and_);
    permute(e, n, &x[0].idx, sizeof *x);
}

static void sort0(struct engine *e)
{
    struct bucket *b = &e->b[0];
    uint32_t n = b->len - b->head;
    struct event *v = b->ev + b->head;
    if (n < 2)
        return;
    if (n <= 16) {
        insertion_sort(v, n);
        return;
    }
    scratch_reserve(e, n);
    sort_prefixed(e, v, n);
}

static inline void bucket_push(struct bucket *b, const struct event *ev)
{
    if (b->len == b->cap) {
        if (b->head > b->cap / 2) {
            /* reuse the consumed front before growing */
            memmove(b->ev, b->ev + b->head, (b->len - b->head) * sizeof *b->ev);
            b->len -= b->head;
            b->head = 0;
        } else {
            b->cap = b->cap ? b->cap * 2 : 64; /* amortised growth, not per event */
            b->ev = g_renew(struct event, b->ev, b->cap);
        }
    }
    b->ev[b->len++] = *ev;
}

/* An event in the open slot (or before it: scheduled between two runs, after the wheel
 * opened a slot beyond the stop time) scheduled after the slot was sorted: into its place in
 * the late list, a second sorted run beside bucket 0 that the run loop merges with it. Kept
 * apart because a slot can be huge (a million dependents learning of one completion at one
 * instant) and each of its events may schedule one for now: placed in bucket 0, every one
 * would move the rest of the slot. The late list holds only what is scheduled for the open
 * slot and not yet run, a few events. */
static void insert_late(struct engine *e, const struct event *ev)
{
    struct bucket *b = &e->late;
    bucket_push(b, ev); /* room at the end (this may move the live entries to the front) */
    uint32_t lo = b->head, hi = b->len - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ev_before(&b->ev[mid], ev))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < b->len - 1) {
        memmove(b->ev + lo + 1, b->ev + lo, (size_t)(b->len - 1 - lo) * sizeof *b->ev);
        b->ev[lo] = *ev;
    }
}

/* ---- the radix heap: events beyond the wheel ---- */

static inline int bucket_of(simtime_t t, simtime_t last)
{
    if (t == last)
        return 0;
    int level = (63 - __builtin_clzll(t ^ last)) >> 2;
    return 1 + level * 16 + (int)((t >> (4 * level)) & 15);
}

static inline void mark_nonempty(struct engine *e, int i)
{
    e->nonempty[(i - 1) >> 6] |= 1ull << ((i - 1) & 63);
}

/* The smallest non-empty bucket above 0 (the caller knows one exists). */
static inline int first_nonempty(const struct engine *e)
{
    for (int w = 0;; w++)
        if (e->nonempty[w])
            return 1 + w * 64 + __builtin_ctzll(e->nonempty[w]);
}

/* The smallest time in bucket i (non-empty, above 0). */
static simtime_t bucket_min(const struct engine *e, int i)
{
    const struct bucket *src = &e->b[i];
    simtime_t min = SIMTIME_NEVER;
    for (uint32_t k = src->head; k < src->len; k++)
        if (src->ev[k].time < min)
            min = src->ev[k].time;
    return min;
}

/* t lies beyond the wheel, so after the heap's `last` (which is inside the open slot or
 * earlier): never bucket 0. */
static void far_push(struct engine *e, const struct event *ev)
{
    int i = bucket_of(ev->time, e->last);
    bucket_push(&e->b[i], ev);
    mark_nonempty(e, i);
    e->far_n++;
    if (ev->time < e->far_min)
        e->far_min = ev->time;
}

/* Moves every event of the radix heap at or before `end` (the open slot's last picosecond)
 * into the open slot's array. The smallest non-empty bucket holds the minimum; its entries move
 * down relative to it (Ahuja et al.), those at or before `end` into the slot. */
static void far_take(struct engine *e, simtime_t end)
{
    while (e->far_n && e->far_min <= end) {
        int i = first_nonempty(e);
        struct bucket *src = &e->b[i];
        simtime_t min = e->far_min;
        e->last = min;
        e->nonempty[(i - 1) >> 6] &= ~(1ull << ((i - 1) & 63));
        /* every entry goes to a lower bucket or the slot, so none lands back in src while it
         * is being read */
        for (uint32_t k = src->head; k < src->len; k++) {
            const struct event *ev = &src->ev[k];
            if (ev->time <= end) {
                bucket_push(&e->b[0], ev);
                e->far_n--;
            } else {
                int j = bucket_of(ev->time, min);
                bucket_push(&e->b[j], ev);
                mark_nonempty(e, j);
            }
        }
        src->head = src->len = 0;
        e->far_min = e->far_n ? bucket_min(e, first_nonempty(e)) : SIMTIME_NEVER;
    }
}

/* ---- the wheel ---- */

static uint32_t chunk_new(struct engine *e)
{
    if (e->nfree)
        return e->chunk_free[--e->nfree];
    if (e->chunk_used == e->chunk_cap) {
        if (e->chunk_cap >= ENGINE_NONE / 8) /* wheel_take_sorted's index: chunk * 8 + place */
            g_error("engine: more than %u events in the near future", e->chunk_cap * ENGINE_CHUNK);
        uint32_t cap = e->chunk_cap ? e->chunk_cap * 2 : 256;
        struct wheel_chunk *c = g_aligned_alloc(cap, sizeof *c, 64);
        /* the chunks are reused from a stack in no order: on a large fabric (bench/large.ini:
         * 262,144 of them, 64 MB, after the 1 M transfers' start) a 4 KB page per chunk misses
         * the TLB too */
        huge_pages_hint(c, (size_t)cap * sizeof *c);
        if (e->chunk_used)
            memcpy(c, e->chunks, (size_t)e->chunk_used * sizeof *c);
        g_aligned_free(e->chunks);
        e->chunks = c;
        e->chunk_free = g_renew(uint32_t, e->chunk_free, cap);
        e->chunk_cap = cap;
    }
    return e->chunk_used++;
}

/* Makes chunk id the only, empty, chunk of the empty slot at index k. */
static inline void slot_start(struct engine *e, uint32_t k, uint32_t id)
{
    struct wheel_slot *sl = &e->slot[k];
    sl->head = sl->tail = id;
    sl->before_tail = ENGINE_NONE;
    sl->len = 0;
    e->chunks[id].next = e->chunks[id].next2 = ENGINE_NONE;
    e->slot_bits[k >> 6] |= 1ull << (k & 63);
    e->slot_words |= 1ull << (k >> 6);
}

/* The place of a new event at the end of slot s's list, for the caller to write the event
 * into (it is not built elsewhere and copied). */
static inline struct event *wheel_append(struct engine *e, uint64_t s)
{
    uint32_t k = (uint32_t)s & (ENGINE_WHEEL_SLOTS - 1);
    struct wheel_slot *sl = &e->slot[k];
    if (sl->head == ENGINE_NONE) {
        slot_start(e, k, chunk_new(e));
    } else if (sl->len == ENGINE_CHUNK) {
        uint32_t id = chunk_new(e);
        e->chunks[sl->tail].next = id;
        if (sl->before_tail != ENGINE_NONE)
            e->chunks[sl->before_tail].next2 = id;
        sl->before_tail = sl->tail;
        sl->tail = id;
        sl->len = 0;
        e->chunks[id].next = e->chunks[id].next2 = ENGINE_NONE;
    }
    return &e->chunks[sl->tail].ev[sl->len++];
}

/* The events in chunk id of slot sl: all it holds but in the slot's last. */
static inline uint32_t chunk_len(const struct engine *e, const struct wheel_slot *sl, uint32_t id)
{
    return e->chunks[id].next == ENGINE_NONE ? sl->len : ENGINE_CHUNK;
}

static inline void prefetch_chunk(const struct wheel_chunk *c)
{
    for (size_t off = 0; off < sizeof *c; off += 64)
        __builtin_prefetch((const char *)c + off);
}

/* Slot k is empty now (its chunks freed). */
static inline void slot_clear(struct engine *e, uint32_t k)
{
    e->slot[k].head = ENGINE_NONE;
    e->slot_bits[k >> 6] &= ~(1ull << (k & 63));
    if (!e->slot_bits[k >> 6])
        e->slot_words &= ~(1ull << (k >> 6));
}

/* Chunk id of slot sl, as a walk of the slot's list reaches it. A slot's chunks were taken
 * from the free stack at different times and lie apart: the walk loads the chunk two ahead
 * (next was started one chunk ago; the first two at the slot's start). */
static inline const struct wheel_chunk *chunk_walked(const struct engine *e, const struct wheel_slot *sl, uint32_t id)
{
    const struct wheel_chunk *c = &e->chunks[id];
    if (id == sl->head && c->next != ENGINE_NONE)
        prefetch_chunk(&e->chunks[c->next]);
    if (c->next2 != ENGINE_NONE)
        prefetch_chunk(&e->chunks[c->next2]);
    return c;
}

/* wheel_take for a slot of several chunks (or a bucket not yet grown) */
static void wheel_take_list(struct engine *e, struct wheel_slot *sl, struct bucket *b0)
{
    for (uint32_t id = sl->head; id != ENGINE_NONE;) {
        const struct wheel_chunk *c = chunk_walked(e, sl, id);
        uint32_t next = c->next;
        for (uint32_t j = 0, len = chunk_len(e, sl, id); j < len; j++)
            bucket_push(b0, &c->ev[j]);
        e->chunk_free[e->nfree++] = id;
        id = next;
    }
}

/* Empties slot s into bucket 0, in insertion order, and frees its chunks. */
static void wheel_take(struct engine *e, uint64_t s)
{
    uint32_t k = (uint32_t)s & (ENGINE_WHEEL_SLOTS - 1);
    struct wheel_slot *sl = &e->slot[k];
    struct bucket *b0 = &e->b[0];
    /* one chunk (most slots): copied at once into the bucket, empty here (open_next) */
    if (sl->head == sl->tail && b0->cap >= ENGINE_CHUNK) {
        memcpy(b0->ev, e->chunks[sl->head].ev, sl->len * sizeof(struct event));
        b0->len = sl->len;
        e->chunk_free[e->nfree++] = sl->head;
    } else {
        wheel_take_list(e, sl, b0);
    }
    slot_clear(e, k);
}

/* The events of a slot of three chunks or more (more than 14), put in order into bucket 0
 * (empty here) from where they lie: records built from the chunks, sorted, and the events
 * gathered in their order. Copying them into the bucket first and sorting there (sort0)
 * moves each event once more, through lines the model's state has evicted since the last
 * slot (the 4096-host permutation's slots hold thousands). A record's index is the event's
 * place in the chunks seen as one array of events (chunk * 8 + place: a chunk is the room of
 * 8 events, 7 and its links). The chunks are freed as they are read: nothing is inserted
 * before the gather. */
static void wheel_take_sorted(struct engine *e, uint64_t s)
{
    uint32_t k = (uint32_t)s & (ENGINE_WHEEL_SLOTS - 1);
    struct wheel_slot *sl = &e->slot[k];
    const struct event *v = &e->chunks[0].ev[0];
    _Static_assert(sizeof(struct wheel_chunk) == 8 * sizeof(struct event) && offsetof(struct wheel_chunk, ev) == 0,
                   "a chunk is the room of 8 events, its 7 first");
    uint32_t n = 0;
    bool sorted = true;
    uint64_t or_ = 0, and_ = ~0ull; /* the bits the prefixes differ in, for the radix sort */
    for (uint32_t id = sl->head; id != ENGINE_NONE;) {
        const struct wheel_chunk *c = chunk_walked(e, sl, id);
        uint32_t next = c->next;
        scratch_reserve(e, n + ENGINE_CHUNK);
        struct prec *x = (struct prec *)e->scratch;
        for (uint32_t j = 0, len = chunk_len(e, sl, id); j < len; j++, n++) {
            x[n] = (struct prec){ prefix_of(&c->ev[j]), id * 8 + j };
            or_ |= x[n].prefix;
            and_ &= x[n].prefix;
            if (n && sorted && prec_before(&x[n], &x[n - 1], v))
                sorted = false;
        }
        e->chunk_free[e->nfree++] = id;
        id = next;
    }
    slot_clear(e, k);
    const struct prec *x = (const struct prec *)e->scratch;
    if (!sorted && n > 16)
        x = sort_records(e, v, n, or_ ^ and_);
    struct bucket *b0 = &e->b[0];
    if (b0->cap < n) { /* empty: nothing to keep */
        g_free(b0->ev);
        b0->cap = n * 2;
        b0->ev = g_new(struct event, b0->cap);
    }
    for (uint32_t i = 0; i < n; i++)
        b0->ev[i] = v[x[i].idx];
    b0->len = n;
    if (!sorted && n <= 16)
        insertion_sort(b0->ev, n);
}

/* The first slot of the wheel that has events (its number, not its index), or UINT64_MAX
 * when the wheel is empty: the search goes round once from wheel_from's index. */
static inline uint64_t wheel_next(const struct engine *e)
{
    if (!e->slot_words)
        return UINT64_MAX;
    const uint32_t mask = ENGINE_WHEEL_SLOTS - 1;
    uint32_t p = (uint32_t)e->wheel_from & mask, w = p >> 6, k;
    uint64_t m = e->slot_bits[w] & (~0ull << (p & 63));
    if (m) {
        k = w * 64 + (uint32_t)__builtin_ctzll(m);
    } else {
        uint64_t above = w + 1 < ENGINE_WHEEL_SLOTS / 64 ? e->slot_words & (~0ull << (w + 1)) : 0;
        uint64_t words = above ? above : e->slot_words; /* else round to word 0 (w's low bits last) */
        uint32_t w2 = (uint32_t)__builtin_ctzll(words);
        k = w2 * 64 + (uint32_t)__builtin_ctzll(e->slot_bits[w2]);
    }
    return e->wheel_from + ((k - p) & mask);
}

static inline uint64_t slot_of(simtime_t t) { return t >> ENGINE_SLOT_BITS; }

/* Opens the next slot that has events (from the wheel or the radix heap) into bucket 0,
 * sorted, unless the slot starts after `stop`: then nothing moves (false), so that events
 * scheduled between two runs before it need nothing special. Precondition: bucket 0 and the
 * late list are empty, some event is pending. */
static bool open_next(struct engine *e, simtime_t stop)
{
    uint64_t s = wheel_next(e);
    if (e->far_n && slot_of(e->far_min) < s)
        s = slot_of(e->far_min);
    if (s << ENGINE_SLOT_BITS > stop)
        return false;
    e->wheel_from = s + 1;
    e->b[0].head = e->b[0].len = 0;
    const struct wheel_slot *sl = &e->slot[(uint32_t)s & (ENGINE_WHEEL_SLOTS - 1)];
    simtime_t end = s << ENGINE_SLOT_BITS | ((1ull << ENGINE_SLOT_BITS) - 1);
    if (sl->head != ENGINE_NONE && sl->before_tail != ENGINE_NONE && sl->before_tail != sl->head &&
        !(e->far_n && e->far_min <= end)) {
        wheel_take_sorted(e, s); /* three chunks or more, and none of the radix heap's events */
    } else {
        if (sl->head != ENGINE_NONE)
            wheel_take(e, s);
        far_take(e, end);
        sort0(e);
    }
    /* the next slot's first chunk was written a link's delay ago and is out of the caches:
     * start loading it while this slot's events run */
    uint64_t s2 = wheel_next(e);
    if (s2 != UINT64_MAX) {
        prefetch_chunk(&e->chunks[e->slot[(uint32_t)s2 & (ENGINE_WHEEL_SLOTS - 1)].head]);
    }
    return true;
}

/* The turn of an origin at time t: 23 bits of splitmix64's finaliser over (origin, t), a
 * fresh random order of the origins at every instant (equal turns fall back to the
 * sequence, then the origin). */
static inline uint64_t turn_of(uint32_t origin, simtime_t t)
{
    uint64_t z = t * 0x9e3779b97f4a7c15ull ^ ((uint64_t)origin + 1) * 0xd6e8feb86659fd93ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (z ^ (z >> 31)) >> 41;
}

static void G_GNUC_NORETURN seq_overflow(uint32_t origin)
{
    g_error("entity %u scheduled 2^%d events", origin, ENGINE_SEQ_BITS);
}

/* The key and origin of an event for `owner` at t, scheduled now (t already clamped to now). */
static inline struct engine_key stamp(struct engine *e, uint32_t owner, simtime_t t)
{
    /* the origin: the entity running now, or before the run the new event's own owner */
    uint32_t origin = e->cur != ENGINE_NONE ? e->cur : owner;
    uint64_t seq = e->seq[origin]++;
    if (G_UNLIKELY(seq >> ENGINE_SEQ_BITS))
        seq_overflow(origin);
    /* an owner's own events at one time share their origin, hence their turn, and come
     * before every other origin's (the remote flag): the turn orders nothing among them, and
     * the hash is left out (zero) */
    uint64_t key = origin != owner ? ENGINE_KEY_REMOTE | turn_of(origin, t) << ENGINE_SEQ_BITS | seq : seq;
    return (struct engine_key){ key, origin };
}

/* struct event's word of origin and handler */
static inline uint32_t origin_h_of(uint32_t origin, uint32_t h) { return origin | h << ENGINE_ORIGIN_BITS; }

static inline void fill(struct event *ev, simtime_t t, uint64_t key, uint32_t origin_h, uint32_t owner, uint64_t arg)
{
    ev->time = t;
    ev->key = key;
    ev->arg = arg;
    ev->owner = owner;
    ev->origin_h = origin_h;
}

/* Any event, into the wheel, the radix heap or the late list. Out of line: engine_at_on
 * keeps the common case (a slot whose last chunk has room) free of calls, so of saved
 * registers. */
static G_GNUC_NO_INLINE void insert(struct engine *e, simtime_t t, struct engine_key k, uint32_t owner, uint32_t h,
                                    uint64_t arg)
{
    if (t < e->now)
        t = e->now; /* never schedule into the past */
    uint64_t s = slot_of(t);
    uint32_t origin_h = origin_h_of(k.origin, h);
    e->n++;
    if (s - e->wheel_from < ENGINE_WHEEL_SLOTS) { /* (below wheel_from it wraps round) */
        fill(wheel_append(e, s), t, k.key, origin_h, owner, arg);
        return;
    }
    struct event ev;
    fill(&ev, t, k.key, origin_h, owner, arg);
    if (s < e->wheel_from)
        insert_late(e, &ev);
    else
        far_push(e, &ev);
}

struct engine_key engine_stamp(struct engine *e, uint32_t owner, simtime_t t)
{
    return stamp(e, owner, t < e->now ? e->now : t); /* clamped as engine_insert will */
}

void engine_insert_h(struct engine *e, simtime_t t, struct engine_key k, uint32_t owner, uint32_t h, uint64_t arg)
{
    insert(e, t, k, owner, h, arg);
}

void engine_insert_event(struct engine *e, const struct event *ev)
{
    insert(e, ev->time, (struct engine_key){ ev->key, event_origin(ev) }, ev->owner, event_handler(ev), ev->arg);
}

uint32_t engine_handler(struct engine *e, event_fn fn, void *ctx)
{
    struct engine_handlers *hs = e->hs;
    for (uint32_t i = 0; i < hs->n; i++)
        if (hs->h[i].fn == fn && hs->h[i].ctx == ctx)
            return i;
    if (hs->frozen)
        g_error("engine: a handler registered while a parallel run runs (register it before)");
    if (hs->n == ENGINE_MAX_HANDLERS)
        g_error("engine: more than %u handlers", ENGINE_MAX_HANDLERS);
    hs->h[hs->n] = (struct engine_handler){ fn, ctx };
    return hs->n++;
}

/* engine_at_h's ways other than a chunk with room: six arguments, all in registers, so
 * that the common case saves one register and sets up no frame (with a seventh, on the
 * stack, engine_at_h saved five for every event; cachegrind, bench/fabric.ini: 0.47 % fewer
 * instructions in all at 2 ms, 0.38 % on two workers at 1 ms). */
static G_GNUC_NO_INLINE void at_slow(struct engine *e, simtime_t t, uint64_t key, uint32_t origin_h, uint32_t owner,
                                     uint64_t arg)
{
    struct engine_key ek = { key, origin_h & ((1u << ENGINE_ORIGIN_BITS) - 1) };
    uint32_t h = origin_h >> ENGINE_ORIGIN_BITS;
    if (G_UNLIKELY(e->grp != NULL) && e->grp->worker_of[owner] != e->self) { /* another worker's entity */
        engine_group_send(e, t, ek, owner, h, arg);
        return;
    }
    uint64_t s = slot_of(t);
    uint32_t k = (uint32_t)s & (ENGINE_WHEEL_SLOTS - 1);
    struct wheel_slot *sl = &e->slot[k];
    if (s - e->wheel_from < ENGINE_WHEEL_SLOTS && sl->head == ENGINE_NONE && e->nfree) {
        /* the event before the slot's state: written after it, the event's stores may
         * alias that state for the compiler (fabric-32: 6 M instructions more) */
        uint32_t id = e->chunk_free[--e->nfree];
        fill(&e->chunks[id].ev[0], t, key, origin_h, owner, arg);
        slot_start(e, k, id);
        sl->len = 1;
        e->n++;
        return;
    }
    insert(e, t, ek, owner, h, arg);
}

/* Every event goes through here: stamped, and appended to its wheel slot when that slot's
 * last chunk has room, without a call; anything else through at_slow: an empty slot (most
 * hold one or two events) with a free chunk at hand, a new chunk, the radix heap, the late
 * list. In a parallel run an event for another worker's entity goes to its outbox, and the
 * worker's own events take the same path as a sequential run's (sending them all through
 * insert cost a quarter more engine instructions an event on two workers, fabric-32). */
void engine_at_h(struct engine *e, simtime_t t, uint32_t owner, uint32_t h, uint64_t arg)
{
    if (t < e->now)
        t = e->now;
    struct engine_key ek = stamp(e, owner, t);
    uint32_t origin_h = origin_h_of(ek.origin, h);
    uint64_t s = slot_of(t);
    if ((G_LIKELY(e->grp == NULL) || e->grp->worker_of[owner] == e->self) && s - e->wheel_from < ENGINE_WHEEL_SLOTS) {
        struct wheel_slot *sl = &e->slot[(uint32_t)s & (ENGINE_WHEEL_SLOTS - 1)];
        if (sl->head != ENGINE_NONE && sl->len < ENGINE_CHUNK) {
            fill(&e->chunks[sl->tail].ev[sl->len++], t, ek.key, origin_h, owner, arg);
            e->n++;
            return;
        }
    }
    at_slow(e, t, ek.key, origin_h, owner, arg);
}

/* The next event at or before `stop`, without removing it (*from: the bucket that holds it);
 * NULL when there is none. The open slot's events and the late list's are all earlier than
 * the wheel's and the radix heap's. */
static inline const struct event *peek(struct engine *e, simtime_t stop, struct bucket **from)
{
    struct bucket *b0 = &e->b[0], *late = &e->late;
    for (;;) {
        if (late->head < late->len) {
            if (b0->head == b0->len || ev_before(&late->ev[late->head], &b0->ev[b0->head])) {
                *from = late;
                return late->ev[late->head].time <= stop ? &late->ev[late->head] : NULL;
            }
        } else if (late->len) {
            late->head = late->len = 0;
        }
        if (b0->head < b0->len) {
            *from = b0;
            return b0->ev[b0->head].time <= stop ? &b0->ev[b0->head] : NULL;
        }
        if (e->n == 0 || !open_next(e, stop))
            return NULL;
    }
}

simtime_t engine_next_time(struct engine *e)
{
    if (e->n == 0)
        return SIMTIME_NEVER;
    const struct bucket *b0 = &e->b[0], *late = &e->late;
    simtime_t t = SIMTIME_NEVER;
    if (late->head < late->len)
        t = late->ev[late->head].time;
    if (b0->head < b0->len && b0->ev[b0->head].time < t)
        t = b0->ev[b0->head].time;
    if (t != SIMTIME_NEVER)
        return t;
    uint64_t s = wheel_next(e);
    if (s != UINT64_MAX) {
        const struct wheel_slot *sl = &e->slot[(uint32_t)s & (ENGINE_WHEEL_SLOTS - 1)];
        for (uint32_t id = sl->head; id != ENGINE_NONE; id = e->chunks[id].next)
            for (uint32_t j = 0; j < chunk_len(e, sl, id); j++)
                if (e->chunks[id].ev[j].time < t)
                    t = e->chunks[id].ev[j].time;
    }
    return e->far_min < t ? e->far_min : t;
}

/* Runs the event at from's head (taken out first). */
static inline void run_head(struct engine *e, struct bucket *from)
{
    struct event ev = from->ev[from->head++];
    e->n--;
    e->now = ev.time;
    e->cur = ev.owner;
    if (e->prefetch && from->head < from->len) {
        uint32_t left = from->len - from->head;
        e->prefetch(e->prefetch_ctx, &from->ev[from->head], left < ENGINE_PREFETCH_DEPTH ? left : ENGINE_PREFETCH_DEPTH);
    }
    const struct engine_handler *hd = &e->hs->h[event_handler(&ev)];
    hd->fn(hd->ctx, ev.arg);
}

/* Events between two looks at the interrupt flag, and at the progress line's clock */
#define CHECK_EVERY 4096u
#define PROGRESS_EVERY (64 * CHECK_EVERY)

void engine_run(struct engine *e, simtime_t stop)
{
    e->stop = stop;
    e->halted = false;
    struct engine *outer = running;
    running = e;
    e->wall_start = engine_wall_seconds();
    struct progress_line pl = { 0 };
    if (e->progress)
        progress_start(&pl, e->events);
    struct bucket *from, *b0 = &e->b[0];
    uint32_t since_check = 0, since_progress = 0;
    /* e->stop, not `stop`: an event may bring the end forward (net.c: the last transfer) */
    while (!e->halted && peek(e, e->stop, &from)) {
        uint32_t ran = 1;
        if (from == b0) {
            /* the open slot's events in a row, while the late list stays empty (peek would
             * pick bucket 0 every time) and nothing halts: peek's look at both lists and its
             * returns are what the loop saves (1.5 % of all instructions on bench/fabric.ini) */
            uint32_t first = b0->head, limit = MIN(b0->len, first + CHECK_EVERY - since_check);
            run_head(e, b0);
            while (b0->head < limit && !e->halted && !e->late.len && b0->ev[b0->head].time <= e->stop)
                run_head(e, b0);
            ran = b0->head - first;
        } else {
            run_head(e, from);
        }
        e->cur = ENGINE_NONE;
        e->events += ran; /* timer_fire takes out the stale timers' */
        if ((since_check += ran) >= CHECK_EVERY) {
            since_check = 0;
            if (e->interrupt && *e->interrupt)
                break;
        }
        if (e->progress && (since_progress += ran) >= PROGRESS_EVERY) {
            since_progress = 0;
            if (progress_due(&pl))
                progress_show(&pl, e->now, e->stop, e->work_done ? e->work_done(e->work_ctx) : -1, e->events, 1);
        }
    }
    running = outer;
    progress_end(&pl);
}

void engine_halt(struct engine *e) { e->halted = true; }

void engine_set_work_done(struct engine *e, double (*fn)(void *ctx), void *ctx)
{
    e->work_done = fn;
    e->work_ctx = ctx;
}

void engine_set_prefetch(struct engine *e, void (*fn)(void *ctx, const struct event *up, uint32_t count), void *ctx)
{
    e->prefetch = fn;
    e->prefetch_ctx = ctx;
}

/* Handler 0. Stale heap entries (moved or cancelled timers) are skipped here; they are not
 * counted as events because nothing happened. */
static void timer_fire(void *ctx, uint64_t arg)
{
    struct engine_handlers *hs = ctx;
    struct timer *t = hs->timers[(uint32_t)arg];
    if ((uint32_t)(arg >> 32) != t->gen) {
        running->events--;
        return;
    }
    t->when = SIMTIME_NEVER;
    t->fn(t->ctx, t->arg);
}

void timer_init_on(struct timer *t, struct engine *e, uint32_t owner, event_fn fn, void *ctx, uint64_t arg)
{
    struct engine_handlers *hs = e->hs;
    if (hs->frozen)
        g_error("engine: a timer made while a parallel run runs (make it before)");
    if (hs->ntimers == hs->timers_cap) {
        hs->timers_cap = hs->timers_cap ? hs->timers_cap * 2 : 64;
        hs->timers = g_renew(struct timer *, hs->timers, hs->timers_cap);
    }
    hs->timers[hs->ntimers] = t;
    *t = (struct timer){ .when = SIMTIME_NEVER, .index = hs->ntimers++, .fn = fn, .ctx = ctx, .arg = arg, .eng = e,
                         .owner = owner };
}

static inline uint64_t timer_arg(const struct timer *t) { return (uint64_t)t->gen << 32 | t->index; }

void timer_set(struct timer *t, simtime_t when)
{
    if (t->when == when)
        return;
    t->gen++;
    t->when = when;
    /* scheduled by the engine running now, which in a parallel run may be another worker's
     * than the one the timer was made with (it routes the event to the timer's owner) */
    engine_at_h(running ? running : t->eng, when, t->owner == ENGINE_NONE ? t->eng->entities : t->owner, 0,
                timer_arg(t));
}

void timer_lite_set_h(struct timer_lite *t, struct engine *e, simtime_t when, uint32_t owner, uint32_t h,
                      uint32_t index)
{
    if (t->when == when)
        return;
    t->gen++; /* 32 bits: a stale event would pass for the latest only if its timer were set
               * 2^32 times while it waited */
    t->when = when;
    engine_at_h(running ? running : e, when, owner, h, (uint64_t)t->gen << 32 | index);
}

bool timer_lite_due(struct timer_lite *t, uint64_t arg)
{
    if ((uint32_t)(arg >> 32) != t->gen) {
        running->events--; /* moved since: nothing happens */
        return false;
    }
    t->when = SIMTIME_NEVER;
    return true;
}

void timer_set_stamped(struct timer *t, struct engine *e, simtime_t when, struct engine_key k)
{
    t->gen++;
    t->when = when;
    engine_insert_h(e, when, k, t->owner == ENGINE_NONE ? e->entities : t->owner, 0, timer_arg(t));
}

void engine_move_pending(struct engine *from, struct engine **to, const uint32_t *engine_of)
{
    /* the engines take from's handlers, so that the events keep their meaning */
    for (uint32_t x = 0; x <= from->entities; x++) {
        struct engine *t = to[engine_of[x]];
        if (t && t != from && t->hs != from->hs) {
            handlers_unref(t->hs);
            t->hs = from->hs;
            t->hs->refs++;
        }
    }
    /* every event of `from`: its buckets (the open slot's included) and late list, then its
     * wheel; an event whose engine is NULL is another process's (an MPI run): it has its own
     * copy */
    for (int i = 0; i <= ENGINE_BUCKETS; i++) {
        struct bucket *b = i < ENGINE_BUCKETS ? &from->b[i] : &from->late;
        for (uint32_t j = b->head; j < b->len; j++) {
            const struct event *ev = &b->ev[j];
            if (to[engine_of[ev->owner]])
                engine_insert_event(to[engine_of[ev->owner]], ev);
        }
        b->head = b->len = 0;
    }
    for (uint32_t k = 0; k < ENGINE_WHEEL_SLOTS; k++) {
        for (uint32_t id = from->slot[k].head; id != ENGINE_NONE; id = from->chunks[id].next)
            for (uint32_t j = 0; j < chunk_len(from, &from->slot[k], id); j++) {
                const struct event *ev = &from->chunks[id].ev[j];
                if (to[engine_of[ev->owner]])
                    engine_insert_event(to[engine_of[ev->owner]], ev);
            }
        from->slot[k].head = ENGINE_NONE;
    }
    from->chunk_used = from->nfree = 0;
    for (int w = 0; w < 4; w++)
        from->nonempty[w] = 0;
    memset(from->slot_bits, 0, sizeof from->slot_bits);
    from->slot_words = 0;
    from->far_n = 0;
    from->far_min = SIMTIME_NEVER;
    from->n = 0;
}

void timer_cancel(struct timer *t)
{
    if (t->when == SIMTIME_NEVER)
        return;
    t->gen++;
    t->when = SIMTIME_NEVER;
}
