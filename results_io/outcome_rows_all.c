/* The rows of transfers.csv left after a run, formatted on several threads (see
 * outcome_rows_write_all in outcome.h). A 4096-host AllToAll leaves 16.8 M rows (969 MB) to
 * the end: the stream cannot write a row before every earlier transfer is done, and in an
 * AllToAll they all finish near the end. Formatting and writing them took 1.35 s on one
 * thread, most of the run's output time (bench/scale-alltoall.ini, measured 2026-12-07).
 *
 * The pipeline: the rows go in pieces of PIECE transfers through a ring of SLOTS_PER_THREAD x
 * threads slots. A formatter takes the next piece and a free slot, reads the outcomes, the
 * ideal times and makes the text there; this thread takes the pieces in order, writes their
 * text and adds their figures (outcome_row_count, in id order, so they are those of one
 * thread). pthread rather than GLib's mutex: ThreadSanitizer (make check runs it) sees
 * pthread's. */
#include "results_io/outcome_rows.h"
#include <pthread.h>

#define PIECE 4096u           /* transfers a piece: about 240 KB of text, a few hundred microseconds */
#define SLOTS_PER_THREAD 3u   /* room for a formatter to go on while this thread writes (not tuned) */
#define MAX_THREADS 16u

enum slot_state { SLOT_FREE, SLOT_TAKEN, SLOT_READY };

struct slot {
    enum slot_state state;
    uint32_t from, to;             /* its piece's transfers */
    size_t len;
    char *text;                    /* PIECE rows at most, of sizeof(struct row) at most each */
    struct xfer_outcome *x;        /* the outcomes and ideal times the text was made from */
    simtime_t *ideal;
};

struct pipeline {
    struct outcome_rows *r;
    outcome_get_fn get;
    const void *src;
    uint32_t end;                  /* the schedule's transfers */
    pthread_mutex_t mu;
    pthread_cond_t changed;        /* a slot was filled or freed, or the writing stops */
    struct slot *slot;
    unsigned nslots;
    uint64_t taken;                /* pieces taken so far: piece k uses slot k % nslots */
    uint32_t next;                 /* the first transfer of the next piece */
    bool stop;                     /* a failed write: the formatters leave */
};

static void format_piece(const struct pipeline *p, struct slot *sl)
{
    const struct outcome_rows *r = p->r;
    sl->len = 0;
    for (uint32_t i = sl->from; i < sl->to; i++) {
        const struct transfer *t = schedule_get(r->s, i);
        if (t->bytes == 0)
            continue; /* no row */
        uint32_t k = i - sl->from;
        p->get(p->src, i, &sl->x[k]);
        sl->ideal[k] = r->ideal_fn(r->ctx, t->src, t->dst, t->bytes);
        struct row w;
        outcome_row_text(&w, i, t, &sl->x[k], sl->ideal[k]);
        memcpy(sl->text + sl->len, w.b, w.n);
        sl->len += w.n;
    }
}

static void *formatter_main(void *data)
{
    struct pipeline *p = data;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        struct slot *sl = &p->slot[p->taken % p->nslots];
        while (!p->stop && p->next < p->end && sl->state != SLOT_FREE) {
            pthread_cond_wait(&p->changed, &p->mu);
            sl = &p->slot[p->taken % p->nslots];
        }
        if (p->stop || p->next >= p->end)
            break;
        sl->state = SLOT_TAKEN;
        sl->from = p->next;
        sl->to = p->end - p->next > PIECE ? p->next + PIECE : p->end;
        p->next = sl->to;
        p->taken++;
        pthread_mutex_unlock(&p->mu);
        format_piece(p, sl);
        pthread_mutex_lock(&p->mu);
        sl->state = SLOT_READY;
        pthread_cond_broadcast(&p->changed);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* This thread's part: each piece in order, its text written and its figures added. */
static void write_pieces(struct pipeline *p, uint32_t first)
{
    struct outcome_rows *r = p->r;
    for (uint64_t k = 0; (uint64_t)first + k * PIECE < p->end; k++) {
        struct slot *sl = &p->slot[k % p->nslots];
        pthread_mutex_lock(&p->mu);
        while (sl->state != SLOT_READY)
            pthread_cond_wait(&p->changed, &p->mu);
        pthread_mutex_unlock(&p->mu);
        if (fwrite(sl->text, 1, sl->len, r->f) != sl->len || outcome_rows_failed(r)) {
            pthread_mutex_lock(&p->mu);
            p->stop = true; /* a full disk: the error comes at the file's close */
            pthread_cond_broadcast(&p->changed);
            pthread_mutex_unlock(&p->mu);
            return;
        }
        for (uint32_t i = sl->from; i < sl->to; i++) {
            const struct transfer *t = schedule_get(r->s, i);
            if (t->bytes)
                outcome_row_count(r, t, &sl->x[i - sl->from], sl->ideal[i - sl->from]);
        }
        r->next = sl->to;
        pthread_mutex_lock(&p->mu);
        sl->state = SLOT_FREE;
        pthread_cond_broadcast(&p->changed);
        pthread_mutex_unlock(&p->mu);
    }
}

void outcome_rows_write_all(struct outcome_rows *r, outcome_get_fn get, const void *src, unsigned threads)
{
    const uint32_t end = schedule_count(r->s);
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    /* a few pieces are not worth the threads */
    if (threads < 2 || end - r->next < 4 * PIECE) {
        outcome_rows_write(r, get, src, false, UINT32_MAX);
        return;
    }
    struct pipeline p = { .r = r, .get = get, .src = src, .end = end, .next = r->next,
                          .nslots = SLOTS_PER_THREAD * threads };
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.changed, NULL);
    p.slot = g_new0(struct slot, p.nslots);
    for (unsigned i = 0; i < p.nslots; i++) {
        /* the text's size at most, mostly never touched (a row is about 60 bytes) */
        p.slot[i].text = g_malloc((size_t)PIECE * sizeof(((struct row *)0)->b));
        p.slot[i].x = g_new(struct xfer_outcome, PIECE);
        p.slot[i].ideal = g_new(simtime_t, PIECE);
    }
    pthread_t tid[MAX_THREADS];
    unsigned started = 0;
    const uint32_t first = r->next;
    while (started < threads && pthread_create(&tid[started], NULL, formatter_main, &p) == 0)
        started++;
    if (started)
        write_pieces(&p, first);
    for (unsigned i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    for (unsigned i = 0; i < p.nslots; i++) {
        g_free(p.slot[i].text);
        g_free(p.slot[i].x);
        g_free(p.slot[i].ideal);
    }
    g_free(p.slot);
    pthread_cond_destroy(&p.changed);
    pthread_mutex_destroy(&p.mu);
    if (!started) /* no thread could start: this one writes them all */
        outcome_rows_write(r, get, src, false, UINT32_MAX);
}
