/* The time-series rows (see samples.h). */
#include "results_io/samples.h"
#include <math.h>
#include <string.h>
#include <time.h>
#include "results_io/counters.h"
#include "results_io/format.h"
#include "results_io/row.h"

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
    if (w->sel && w->sel->port && !w->sel->port[port])
        return;
    size_t nl = strlen(node);
    if (!row_fits(nl, 0)) {
        fprintf(w->queues, "%" G_GUINT64_FORMAT ",%s,%u,%d,%u\n", t_ns, node, local, prio, bytes);
        return;
    }
    struct row r;
    row_head(&r, &w->time_text, t_ns, node, nl, local);
    row_u64(&r, (uint64_t)prio);
    row_ch(&r, ',');
    row_u64(&r, bytes);
    row_ch(&r, '\n');
    row_put(&r, w->queues);
}

static void rate_row(void *ctx, uint64_t t_ns, uint32_t flow, double rate_gbps)
{
    struct sample_writer *w = ctx; /* only selected flows come: the hooks name them (.flows) */
    struct row r;
    row_begin_u64(&r, &w->time_text, t_ns);
    row_ch(&r, ',');
    row_u64(&r, flow);
    row_ch(&r, ',');
    if (!isnan(rate_gbps)) /* empty: the flow's line ends */
        row_fixed4(&r, rate_gbps);
    row_ch(&r, '\n');
    row_put(&r, w->rates);
}

static void counter_row(void *ctx, uint64_t t_ns, uint32_t port, const char *node, uint32_t local,
                        enum net_counter which, uint64_t value)
{
    struct sample_writer *w = ctx;
    if (w->sel && w->sel->port && !w->sel->port[port])
        return;
    results_counter_row(w->counters, &w->time_text, t_ns, node, local, results_net_counter_name(which), value);
}

static void pfc_row(void *ctx, uint64_t t_ns, uint32_t port, const char *node, uint32_t local, int prio,
                    const char *event, uint64_t duration_ns)
{
    struct sample_writer *w = ctx;
    (void)port;
    /* rows come in batches (models/pfc.c pfc_rows_flush), timed whole (span); a row handed
     * over outside one times itself */
    uint64_t t0 = w->spans ? 0 : results_clock_ns();
    size_t nl = strlen(node), el = strlen(event);
    if (!row_fits(nl, el)) {
        fprintf(w->pfc, "%" G_GUINT64_FORMAT ",%s,%u,%d,%s,%" G_GUINT64_FORMAT "\n", t_ns, node, local, prio, event,
                duration_ns);
    } else {
        struct row r;
        row_head(&r, &w->time_text, t_ns, node, nl, local);
        row_u64(&r, (uint64_t)prio);
        row_ch(&r, ',');
        row_str(&r, event, el);
        row_ch(&r, ',');
        row_u64(&r, duration_ns);
        row_ch(&r, '\n');
        row_put(&r, w->pfc);
    }
    if (!w->spans)
        w->output_ns += results_clock_ns() - t0;
}

/* A sampling tick (its scan of the changed queues, rates and counters, and its rows) and a
 * batch of PFC rows are output work: each timed as a whole, two clock reads a span instead of
 * two a row. A batch inside a tick (its PFC rows) is part of the tick's span, counted once. */
static void span(void *ctx, bool begin)
{
    struct sample_writer *w = ctx;
    if (begin) {
        if (w->spans++ == 0)
            w->span_started_ns = results_clock_ns();
    } else if (w->spans && --w->spans == 0) {
        w->output_ns += results_clock_ns() - w->span_started_ns;
    }
}

static const char *const names[] = { RESULTS_QUEUES, RESULTS_RATES, RESULTS_PFC, RESULTS_COUNTERS };
static const char *const gz_names[] = { RESULTS_QUEUES ".gz", RESULTS_RATES ".gz", RESULTS_PFC ".gz",
                                        RESULTS_COUNTERS ".gz" };

gboolean sample_writer_open(struct sample_writer *w, const struct results_dir *rd, bool gzip,
                            const struct sample_selection *sel, GError **err)
{
    *w = (struct sample_writer){ .gzip = gzip, .sel = sel };
    FILE **f[] = { &w->queues, &w->rates, &w->pfc, &w->counters };
    static const char *const headers[] = { RESULTS_QUEUES_HEADER "\n", RESULTS_RATES_HEADER "\n",
                                           RESULTS_PFC_HEADER "\n", RESULTS_COUNTERS_HEADER "\n" };
    for (size_t i = 0; i < G_N_ELEMENTS(f); i++) {
        *f[i] = gzip ? results_open_gz(rd, gz_names[i], err) : results_open(rd, names[i], err);
        if (!*f[i]) {
            sample_writer_abort(w);
            return FALSE;
        }
        fputs(headers[i], *f[i]);
    }
    return TRUE;
}

void sample_writer_hooks(struct sample_writer *w, struct net_sample_hooks *h)
{
    *h = (struct net_sample_hooks){ .ctx = w, .queue = queue_row, .rate = rate_row, .counter = counter_row,
                                    .pfc = pfc_row, .tick = span, .pfc_batch = span,
                                    .flows = w->sel ? w->sel->flow : NULL };
}

gboolean sample_writer_close(struct sample_writer *w, GError **err)
{
    FILE **f[] = { &w->queues, &w->rates, &w->pfc, &w->counters };
    const char *const *name = w->gzip ? gz_names : names;
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
