/* The transfers.csv writer thread (see outcome_stream.h). */
#include "results_io/outcome_stream.h"
#include <time.h>

/* How long the thread waits when no new transfer has completed, and how many rows it writes
 * before it looks whether it should stop: a stop waits for at most one batch. */
#define STREAM_POLL_US 10000
#define STREAM_BATCH 65536u

struct outcome_stream {
    struct outcome_rows *rows;
    outcome_get_fn get;
    const void *src;
    GThread *thread;
    GMutex lock;               /* only for the wait on wake: */
    GCond wake;
    gint stop;                 /* atomic (GLib's mutex is a futex that ThreadSanitizer cannot see) */
    double cpu_s;
};

static gpointer stream_main(gpointer data)
{
    struct outcome_stream *st = data;
    while (!g_atomic_int_get(&st->stop)) {
        if (outcome_rows_failed(st->rows))
            break; /* a failed write is reported when the file is closed */
        if (outcome_rows_write(st->rows, st->get, st->src, true, STREAM_BATCH) == STREAM_BATCH)
            continue;
        g_mutex_lock(&st->lock);
        if (!g_atomic_int_get(&st->stop))
            g_cond_wait_until(&st->wake, &st->lock, g_get_monotonic_time() + STREAM_POLL_US);
        g_mutex_unlock(&st->lock);
    }
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    st->cpu_s = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    return NULL;
}

struct outcome_stream *outcome_stream_start(struct outcome_rows *r, outcome_get_fn get, const void *src)
{
    struct outcome_stream *st = g_new0(struct outcome_stream, 1);
    st->rows = r;
    st->get = get;
    st->src = src;
    g_mutex_init(&st->lock);
    g_cond_init(&st->wake);
    if (!(st->thread = g_thread_try_new("transfers.csv", stream_main, st, NULL))) {
        g_mutex_clear(&st->lock); /* no thread: the caller writes every row after the run */
        g_cond_clear(&st->wake);
        g_free(st);
        return NULL;
    }
    return st;
}

double outcome_stream_stop(struct outcome_stream *st)
{
    if (!st)
        return 0;
    g_atomic_int_set(&st->stop, 1);
    g_mutex_lock(&st->lock);
    g_cond_signal(&st->wake);
    g_mutex_unlock(&st->lock);
    g_thread_join(st->thread);
    double cpu = st->cpu_s;
    g_mutex_clear(&st->lock);
    g_cond_clear(&st->wake);
    g_free(st);
    return cpu;
}
