/* The writer thread behind a results stream (see async_file.h): a ring of ASYNC_FILE_SLOTS
 * buffers that the stream's writes fill and the thread empties in order. pthread rather
 * than GLib's mutex: ThreadSanitizer (make check runs it) sees pthread's. */
#define _GNU_SOURCE
#include "results_io/async_file.h"
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* 256 KB in flight at most (4 x ASYNC_FILE_CHUNK): enough to keep the thread busy while the
 * rows are formatted. Small, because the stream's first pass through a slot touches fresh
 * pages, and a page fault costs several microseconds on a virtual machine: with 4 x 1 MB the
 * bench incast's 2.7 MB of time series paid one per 4 KB written (output 17-19 % of its wall
 * time; 12.5-14 % with 4 x 64 KB, whose slots are reused from the second 256 KB on; the 2 GB
 * transfers.csv of bench/scale-ring.ini: 1.72 and 1.75 s of output with 1 MB, 1.93 and
 * 1.85 s with 64 KB, two pairs of runs) */
#define ASYNC_FILE_SLOTS 4

struct slot {
    size_t len;
    char *buf;
};

struct async {
    FILE *inner;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t changed;    /* a slot was filled or emptied, or the stream is closing */
    struct slot slot[ASYNC_FILE_SLOTS];
    unsigned head, count;      /* the oldest full slot and how many are full */
    size_t fill;               /* bytes in the slot being filled (head + count) */
    size_t sync_bytes;         /* left for the caller's thread to write itself (SIZE_MAX when
                                * no thread could start: never used up) */
    bool started;              /* the thread runs */
    bool closing;
    int err;                   /* errno of the first failed write, 0 if none */
};

static void *writer_main(void *data)
{
    struct async *a = data;
    pthread_mutex_lock(&a->mu);
    for (;;) {
        while (!a->count && !a->closing)
            pthread_cond_wait(&a->changed, &a->mu);
        if (!a->count)
            break; /* closing, and everything handed over is written */
        struct slot *s = &a->slot[a->head];
        bool failed = a->err != 0;
        pthread_mutex_unlock(&a->mu);
        int err = 0;
        if (!failed && fwrite(s->buf, 1, s->len, a->inner) != s->len)
            err = errno ? errno : EIO;
        pthread_mutex_lock(&a->mu);
        if (err && !a->err)
            a->err = err;
        a->head = (a->head + 1) % ASYNC_FILE_SLOTS;
        a->count--;
        pthread_cond_broadcast(&a->changed);
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

/* A stream that starts its thread is a big one: the slots besides the first (the only one
 * its caller's own writes used) are faulted in with a call each rather than a fault per 4 KB
 * page on first use, several microseconds each on a virtual machine. Slots from the heap are
 * often pages an earlier stream touched (then the call finds them there). Only a hint:
 * without it the pages fault in as they are used. */
static void populate_rest(struct async *a)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (unsigned i = 1; i < ASYNC_FILE_SLOTS; i++) {
        uintptr_t from = ((uintptr_t)a->slot[i].buf + page - 1) & ~(page - 1);
        uintptr_t to = ((uintptr_t)a->slot[i].buf + ASYNC_FILE_CHUNK) & ~(page - 1);
        if (to > from)
            madvise((void *)from, to - from, MADV_POPULATE_WRITE);
    }
}

/* Writes the slot being filled from the stream's own thread: a stream's first
 * sync_bytes, the rest of one that closes before the thread started, and every
 * slot of one whose thread could not start. */
static void write_direct(struct async *a)
{
    struct slot *s = &a->slot[(a->head + a->count) % ASYNC_FILE_SLOTS];
    if (a->fill && !a->err && fwrite(s->buf, 1, a->fill, a->inner) != a->fill)
        a->err = errno ? errno : EIO;
    a->fill = 0;
}

/* Hands the slot being filled to the thread, started here once sync_bytes are written (until
 * then the caller's thread writes each full slot itself); waits while every slot is full.
 * Holds mu. */
static void hand_over(struct async *a)
{
    if (!a->started) {
        if (!a->sync_bytes && pthread_create(&a->thread, NULL, writer_main, a) != 0)
            a->sync_bytes = SIZE_MAX;
        if (a->sync_bytes) {
            a->sync_bytes -= a->fill < a->sync_bytes ? a->fill : a->sync_bytes;
            write_direct(a);
            return;
        }
        a->started = true;
        populate_rest(a);
    }
    a->slot[(a->head + a->count) % ASYNC_FILE_SLOTS].len = a->fill;
    a->count++;
    a->fill = 0;
    /* the thread, asleep once it has emptied every slot, is woken when half are full, not at
     * each: waking it is a system call and an interrupt to the other CPU (futex wake-ups were
     * about a tenth of the bench incast's sampling ticks under perf on this VM). A broadcast
     * with no one waiting returns without a system call. */
    if (a->count >= ASYNC_FILE_SLOTS / 2)
        pthread_cond_broadcast(&a->changed);
    while (a->count == ASYNC_FILE_SLOTS)
        pthread_cond_wait(&a->changed, &a->mu);
}

static ssize_t async_write(void *cookie, const char *buf, size_t len)
{
    struct async *a = cookie;
    pthread_mutex_lock(&a->mu);
    if (a->err) {
        errno = a->err;
        pthread_mutex_unlock(&a->mu);
        return -1;
    }
    size_t done = 0;
    while (done < len) {
        /* the slot being filled is not the thread's until hand_over: copy without the lock */
        struct slot *s = &a->slot[(a->head + a->count) % ASYNC_FILE_SLOTS];
        size_t k = len - done < ASYNC_FILE_CHUNK - a->fill ? len - done : ASYNC_FILE_CHUNK - a->fill;
        size_t at = a->fill;
        pthread_mutex_unlock(&a->mu);
        memcpy(s->buf + at, buf + done, k);
        pthread_mutex_lock(&a->mu);
        a->fill += k;
        done += k;
        if (a->fill == ASYNC_FILE_CHUNK)
            hand_over(a);
    }
    pthread_mutex_unlock(&a->mu);
    return (ssize_t)len;
}

static void async_free(struct async *a)
{
    pthread_cond_destroy(&a->changed);
    pthread_mutex_destroy(&a->mu);
    for (unsigned i = 0; i < ASYNC_FILE_SLOTS; i++)
        free(a->slot[i].buf);
    free(a);
}

static int async_close(void *cookie)
{
    struct async *a = cookie;
    pthread_mutex_lock(&a->mu);
    if (!a->started) {
        write_direct(a);
    } else {
        if (a->fill)
            hand_over(a);
        a->closing = true;
        pthread_cond_broadcast(&a->changed);
    }
    pthread_mutex_unlock(&a->mu);
    if (a->started)
        pthread_join(a->thread, NULL);
    int err = a->err;
    if (fclose(a->inner) != 0 && !err)
        err = errno ? errno : EIO;
    async_free(a);
    if (err) {
        errno = err;
        return -1;
    }
    return 0;
}

FILE *async_file(FILE *inner, size_t sync_bytes)
{
    struct async *a = calloc(1, sizeof *a);
    if (!a)
        return inner;
    a->inner = inner;
    a->sync_bytes = sync_bytes;
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->changed, NULL);
    for (unsigned i = 0; i < ASYNC_FILE_SLOTS; i++)
        if (!(a->slot[i].buf = malloc(ASYNC_FILE_CHUNK))) {
            async_free(a);
            return inner;
        }
    cookie_io_functions_t io = { .write = async_write, .close = async_close };
    FILE *f = fopencookie(a, "w", io);
    if (!f) {
        async_free(a);
        return inner;
    }
    /* f keeps stdio's default buffer (glibc ignores a size without a buffer): its pieces of a
     * few KB fill a slot, and the thread's 64 KB pieces go straight through inner */
    setvbuf(inner, NULL, _IONBF, 0);
    return f;
}
