/* Work beside the calling thread: fn(data) on a thread of its own, or at once where a thread is
 * not worth it or cannot be made (the result is the same either way; only the time differs).
 * For the writing after a run, where independent pieces (the warnings, the percentiles, the
 * side files) overlap the rows. */
#ifndef ROCESIM_BESIDE_H
#define ROCESIM_BESIDE_H
#include <glib.h>
#include <stdbool.h>

struct beside {
    GThread *thread;           /* NULL: not started, already joined, or run at once */
};

/* Starts fn(data): on a thread named `name` when `threaded`, else (or when no thread can be
 * made) now, returning when it is done. */
static inline void beside_start(struct beside *b, const char *name, GThreadFunc fn, gpointer data, bool threaded)
{
    b->thread = threaded ? g_thread_try_new(name, fn, data, NULL) : NULL;
    if (!b->thread)
        fn(data);
}

/* Waits for fn to be done (at once if it ran at once or was joined); may be called again. */
static inline void beside_join(struct beside *b)
{
    if (b->thread)
        g_thread_join(b->thread);
    b->thread = NULL;
}

#endif
