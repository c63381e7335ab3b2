/* The time-series rows (see samples.h). */
#include "results/samples.h"
#include <math.h>
#include <time.h>
#include "results/counters.h"
#include "results/format.h"

uint64_t results_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void queue_row(void *ctx, uint64_t t_ns, uint32_t port, const char *node, uint32_t local, int prio,
                      uint32_t bytes)
{
    struct sample_writer *w = ctx;
    (void)port;
    fprintf(w->queues, "%" G_GUINT64_FORMAT ",%s,%u,%d,%u\n", t_ns, node, local, prio, bytes);
}

static void rate_row(void *ctx, uint64_t t_ns, uint32_t flow, double rate_gbps)
{
    struct sample_writer *w = ctx;
    if (isnan(rate_gbps))
        fprintf(w->rates, "%" G_GUINT64_FORMAT ",%u,\n", t_ns, flow); /* the flow's line ends */
    else
        fprintf(w->rates, "%" G_GUINT64_FORMAT ",%u,%.4f\n", t_ns, flow, rate_gbps);
}

static void counter_row(void *ctx, uint64_t t_ns, uint32_t port, const char *node, uint32_t local,
                        enum net_counter which, uint64_t value)
{
    struct sample_writer *w = ctx;
    (void)port;
    results_counter_row(w->counters, t_ns, node, local, results_net_counter_name(which), value);
}

static void pfc_row(void *ctx, uint64_t t_ns, uint32_t port, const char *node, uint32_t local, int prio,
                    const char *event, uint64_t duration_ns)
{
    struct sample_writer *w = ctx;
    (void)port;
    uint64_t t0 = results_clock_ns();
    fprintf(w->pfc, "%" G_GUINT64_FORMAT ",%s,%u,%d,%s,%" G_GUINT64_FORMAT "\n", t_ns, node, local, prio, event,
            duration_ns);
    w->output_ns += results_clock_ns() - t0;
}

/* A sampling tick (its scan of the changed queues, rates and counters, and its rows) is
 * output work: timed as a whole, two clock reads a tick instead of two a row. */
static void tick(void *ctx, bool begin)
{
    struct sample_writer *w = ctx;
    uint64_t now = results_clock_ns();
    if (begin)
        w->tick_started_ns = now;
    else
        w->output_ns += now - w->tick_started_ns;
}

gboolean sample_writer_open(struct sample_writer *w, const struct results_dir *rd, GError **err)
{
    *w = (struct sample_writer){ 0 };
    if (!(w->queues = results_open(rd, RESULTS_QUEUES, err)) || !(w->rates = results_open(rd, RESULTS_RATES, err)) ||
        !(w->pfc = results_open(rd, RESULTS_PFC, err)) || !(w->counters = results_open(rd, RESULTS_COUNTERS, err))) {
        sample_writer_abort(w);
        return FALSE;
    }
    fputs(RESULTS_COUNTERS_HEADER "\n", w->counters);
    fputs(RESULTS_QUEUES_HEADER "\n", w->queues);
    fputs(RESULTS_RATES_HEADER "\n", w->rates);
    fputs(RESULTS_PFC_HEADER "\n", w->pfc);
    return TRUE;
}

void sample_writer_hooks(struct sample_writer *w, struct net_sample_hooks *h)
{
    *h = (struct net_sample_hooks){ .ctx = w, .queue = queue_row, .rate = rate_row, .counter = counter_row,
                                    .pfc = pfc_row, .tick = tick };
}

gboolean sample_writer_close(struct sample_writer *w, GError **err)
{
    FILE **f[] = { &w->queues, &w->rates, &w->pfc, &w->counters };
    const char *name[] = { RESULTS_QUEUES, RESULTS_RATES, RESULTS_PFC, RESULTS_COUNTERS };
    gboolean ok = TRUE;
    for (size_t i = 0; i < G_N_ELEMENTS(f); i++) {
        if (!*f[i])
            continue;
        if (ok)
            ok = results_close(*f[i], name[i], err);
        else
            fclose(*f[i]);
        *f[i] = NULL;
    }
    return ok;
}

void sample_writer_abort(struct sample_writer *w)
{
    sample_writer_close(w, NULL);
}
