/* What happened to each transfer of a schedule -> transfers.csv, collectives.csv, the
 * nccl-tests style table and the transfer, collective and job parts of summary.json. One
 * place for `rocesim run` and `rocesim replay`, so the simulation and the lab write the same
 * columns with the same statistics. */
#include "results_io/outcome.h"
#include "results_io/outcome_rows.h"
#include "results_io/format.h"
#include "results_io/row.h"
#include "results_io/stats.h"
#include "sim/beside.h"
#include <math.h>
#include <string.h>

struct outcome_rows *outcome_rows_begin(FILE *f, const struct schedule *s, outcome_ideal_fn ideal_fn,
                                        const void *ctx, struct run_figures *fig)
{
    struct outcome_rows *r = g_new(struct outcome_rows, 1);
    const uint32_t nxfers = schedule_count(s);
    *r = (struct outcome_rows){ .f = f, .s = s, .ideal_fn = ideal_fn, .ctx = ctx, .fig = fig };
    fputs(RESULTS_TRANSFERS_HEADER "\n", f);
    r->fct = g_new(uint64_t, nxfers + 1);
    r->sd = g_new(double, nxfers + 1);
    fig->njobs = s->jobs->len;
    fig->jobs = g_new0(struct job_xfers, fig->njobs + 1);
    /* each job's arrays sized once; a job that holds every transfer (a run of one collective:
     * tens of millions of them) keeps none and takes the run's figures */
    uint64_t *per_job = g_new0(uint64_t, fig->njobs + 1), total = 0;
    for (uint32_t i = 0; i < nxfers; i++) {
        const struct transfer *t = schedule_get(s, i);
        if (t->bytes == 0)
            continue;
        total++;
        if (t->job < fig->njobs)
            per_job[t->job]++;
    }
    for (uint32_t j = 0; j < fig->njobs; j++) {
        struct job_xfers *jx = &fig->jobs[j];
        jx->first_start = SIMTIME_NEVER;
        jx->all = per_job[j] == total;
        guint want = jx->all ? 0 : (guint)per_job[j];
        jx->fct_ns = g_array_sized_new(FALSE, FALSE, sizeof(uint64_t), want);
        jx->slowdown = g_array_sized_new(FALSE, FALSE, sizeof(double), want);
    }
    g_free(per_job);
    return r;
}

/* Transfer t's share of the figures (it has bytes), with its ideal time. */
void outcome_row_count(struct outcome_rows *r, const struct transfer *t, const struct xfer_outcome *x,
                       simtime_t ideal)
{
    struct run_figures *fig = r->fig;
    fig->nxfers++;
    fig->bytes += t->bytes;
    struct job_xfers *jx = t->job < fig->njobs ? &fig->jobs[t->job] : NULL;
    if (jx) {
        jx->n++;
        if (x->state != OUTCOME_PENDING && x->start < jx->first_start)
            jx->first_start = x->start;
    }
    if (x->state != OUTCOME_DONE)
        return;
    fig->done++;
    uint64_t fct_ps = x->end - x->start;
    double slow = ideal ? (double)fct_ps / (double)ideal : 0;
    r->fct[r->k] = fct_ps / PS_PER_NS;
    if (ideal)
        r->sd[r->ksd++] = slow;
    if (jx) {
        jx->done++;
        if (!jx->all) {
            g_array_append_val(jx->fct_ns, r->fct[r->k]);
            if (ideal)
                g_array_append_val(jx->slowdown, slow);
        }
        if (x->end > jx->last_end)
            jx->last_end = x->end;
    }
    r->k++;
    if (x->end > fig->completion)
        fig->completion = x->end;
}

void outcome_row_text(struct row *w, uint32_t i, const struct transfer *t, const struct xfer_outcome *x,
                      simtime_t ideal)
{
    row_begin(w); /* "%u,%u,%u,%lu,%u," without printf, then the outcome's columns */
    const uint64_t ids[] = { i, t->src, t->dst, t->bytes, t->prio };
    for (size_t c = 0; c < G_N_ELEMENTS(ids); c++) {
        row_u64(w, ids[c]);
        row_ch(w, ',');
    }
    if (x->state != OUTCOME_DONE) {
        /* unfinished: a start time if it was posted, no end (a stopped run can leave
         * millions: no printf here either) */
        if (x->state == OUTCOME_POSTED)
            row_u64(w, x->start / PS_PER_NS);
        row_str(w, ",,,", 3);
        if (ideal)
            row_u64(w, ideal / PS_PER_NS);
        row_str(w, ",\n", 2);
        return;
    }
    /* the same text as "%u,%u,%u,%lu,%u,%lu,%lu,%lu,%lu,%.4f\n", without printf: a
     * collective over thousands of ranks has tens of millions of rows. No ideal time (0: a
     * replay that knows no host rate): no slowdown, empty columns. */
    uint64_t fct_ps = x->end - x->start;
    const uint64_t cols[] = { x->start / PS_PER_NS, x->end / PS_PER_NS, fct_ps / PS_PER_NS };
    for (size_t c = 0; c < G_N_ELEMENTS(cols); c++) {
        row_u64(w, cols[c]);
        row_ch(w, ',');
    }
    if (ideal) {
        row_u64(w, ideal / PS_PER_NS);
        row_ch(w, ',');
        row_fixed4(w, (double)fct_ps / (double)ideal); /* outcome_row_count's slowdown */
    } else {
        row_ch(w, ',');
    }
    row_ch(w, '\n');
}

uint32_t outcome_rows_write(struct outcome_rows *r, outcome_get_fn get, const void *src, bool done_only,
                            uint32_t limit)
{
    const uint32_t nxfers = schedule_count(r->s);
    uint32_t wrote = 0;
    for (; r->next < nxfers && wrote < limit; r->next++) {
        const struct transfer *t = schedule_get(r->s, r->next);
        if (t->bytes == 0)
            continue; /* no row */
        struct xfer_outcome x;
        get(src, r->next, &x);
        if (done_only && x.state != OUTCOME_DONE)
            break;
        simtime_t ideal = r->ideal_fn(r->ctx, t->src, t->dst, t->bytes);
        outcome_row_count(r, t, &x, ideal);
        struct row w;
        outcome_row_text(&w, r->next, t, &x, ideal);
        row_put(&w, r->f);
        wrote++;
    }
    return wrote;
}

bool outcome_rows_failed(const struct outcome_rows *r)
{
    return ferror(r->f) != 0;
}

/* selection, not a sort: a collective over thousands of ranks has tens of millions */
static const double outcome_ps[] = { 50, 99, 100 };

/* The slowdowns' percentiles, on a thread of their own beside the FCTs' from this many on
 * (a thread costs tens of microseconds, a selection of 8192 about a hundred): the two
 * arrays are apart, and on the 4096-host AllToAll (16.8 M of each) the two selections were
 * 0.19 s on the run's thread after the rows (2026-12-07). */
#define OUTCOME_PCT_THREAD_MIN 8192u
struct sd_percentiles {
    struct outcome_rows *r;
    double q[3];
};

static gpointer sd_percentiles_main(gpointer data)
{
    struct sd_percentiles *p = data;
    stats_percentiles(p->r->sd, p->r->ksd, outcome_ps, 3, p->q);
    return NULL;
}

void outcome_rows_end(struct outcome_rows *r)
{
    struct run_figures *fig = r->fig;
    uint64_t fq[3];
    struct sd_percentiles sdp = { r, { 0 } };
    struct beside sd_work;
    beside_start(&sd_work, "percentiles", sd_percentiles_main, &sdp, r->ksd >= OUTCOME_PCT_THREAD_MIN);
    stats_percentiles_u64(r->fct, r->k, outcome_ps, 3, fq);
    beside_join(&sd_work);
    const double *sq = sdp.q;
    fig->fct_p50 = fq[0];
    fig->fct_p99 = fq[1];
    fig->fct_max = fq[2];
    fig->sd_known = r->ksd;
    fig->sd_p50 = r->ksd ? sq[0] : 0;
    fig->sd_p99 = r->ksd ? sq[1] : 0;
    fig->sd_max = r->ksd ? sq[2] : 0;
    outcome_rows_abort(r);
}

void outcome_rows_abort(struct outcome_rows *r)
{
    if (!r)
        return;
    g_free(r->fct);
    g_free(r->sd);
    g_free(r);
}

static void outcome_from_array(const void *src, uint32_t i, struct xfer_outcome *x)
{
    *x = ((const struct xfer_outcome *)src)[i];
}

void outcome_write_transfers(FILE *f, const struct schedule *s, const struct xfer_outcome *o,
                             outcome_ideal_fn ideal_fn, const void *ctx, struct run_figures *fig)
{
    struct outcome_rows *r = outcome_rows_begin(f, s, ideal_fn, ctx, fig);
    outcome_rows_write(r, outcome_from_array, o, false, UINT32_MAX);
    outcome_rows_end(r);
}

/* collectives.csv: time from the iteration's begin marker (after the compute phase) to its
 * end marker; algbw = bytes / time in GB/s (1e9 B/s) and busbw = algbw x factor. */
void outcome_write_collectives(FILE *f, const struct schedule *s, const struct xfer_outcome *o,
                               struct run_figures *fig)
{
    outcome_write_collectives_from(f, s, outcome_from_array, o, fig);
}

void outcome_write_collectives_from(FILE *f, const struct schedule *s, outcome_get_fn get, const void *src,
                                    struct run_figures *fig)
{
    fputs(RESULTS_COLLECTIVES_HEADER "\n", f);
    fig->ncolls = s->colls->len;
    fig->colls = g_new0(struct coll_result, fig->ncolls ? fig->ncolls : 1);
    for (uint32_t i = 0; i < s->colls->len; i++) {
        const struct sched_coll *c = &g_array_index(s->colls, struct sched_coll, i);
        const struct sched_job *j = &g_array_index(s->jobs, struct sched_job, c->job);
        struct coll_result *r = &fig->colls[i];
        struct xfer_outcome first, last;
        get(src, c->first, &first);
        get(src, c->first + c->count - 1, &last);
        const struct xfer_outcome *b = &first, *e = &last;
        r->job = c->job;
        r->iteration = c->iteration;
        r->ranks = j->ranks;
        r->bytes = c->bytes;
        r->done = b->state == OUTCOME_DONE && e->state == OUTCOME_DONE;
        if (!r->done) {
            fprintf(f, "%s,%s,%s,%u,%" G_GUINT64_FORMAT ",%u,,,,,\n", j->name, j->op, j->algorithm, j->ranks, c->bytes,
                    c->iteration);
            continue;
        }
        r->start = b->end;
        r->end = e->end;
        r->time_us = (double)(r->end - r->start) / PS_PER_US;
        r->algbw = r->time_us > 0 ? stats_algbw_GBps((double)c->bytes, r->time_us * 1e3) : 0;
        r->busbw = r->algbw * stats_busbw_factor(j->op, j->ranks);
        fprintf(f, "%s,%s,%s,%u,%" G_GUINT64_FORMAT ",%u,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%.3f,%.3f,%.3f\n",
                j->name, j->op, j->algorithm, j->ranks, c->bytes, c->iteration, r->start / PS_PER_NS, r->end / PS_PER_NS,
                r->time_us, r->algbw, r->busbw);
    }
}


void outcome_job_figures(const struct schedule *s, const struct run_figures *fig, uint32_t job,
                         struct job_figures *jf)
{
    *jf = (struct job_figures){ 0 };
    if (job < fig->njobs) {
        struct job_xfers *jx = &fig->jobs[job];
        jf->transfers = jx->n;
        jf->completed = jx->done;
        if (jx->all && jx->done) { /* the same values as the run's */
            jf->fct_p50 = fig->fct_p50;
            jf->fct_p99 = fig->fct_p99;
            jf->fct_max = fig->fct_max;
            jf->sd_p99 = fig->sd_p99;
            jf->has_sd = fig->sd_known > 0;
        }
        static const double ps[] = { 50, 99, 100 };
        guint n = jx->fct_ns->len;
        if (n) {
            uint64_t fq[3];
            stats_percentiles_u64((uint64_t *)jx->fct_ns->data, n, ps, 3, fq);
            jf->fct_p50 = fq[0];
            jf->fct_p99 = fq[1];
            jf->fct_max = fq[2];
        }
        if (jx->slowdown->len) {
            double sq[1];
            stats_percentiles((double *)jx->slowdown->data, jx->slowdown->len, ps + 1, 1, sq);
            jf->sd_p99 = sq[0];
            jf->has_sd = true;
        }
        /* only a job whose every transfer finished has a completion time */
        if (jx->n && jx->done == jx->n && jx->last_end >= jx->first_start)
            jf->completion_ns = (jx->last_end - jx->first_start) / PS_PER_NS;
    }
    double *t = g_new(double, fig->ncolls + 1);
    uint32_t k = 0;
    double comm = 0, bus = 0;
    simtime_t first = SIMTIME_NEVER, last = 0;
    for (uint32_t i = 0; i < fig->ncolls; i++) {
        const struct coll_result *r = &fig->colls[i];
        if (r->job != job || !r->done)
            continue;
        t[k++] = r->time_us;
        comm += r->time_us;
        bus += r->busbw;
        const struct sched_coll *c = &g_array_index(s->colls, struct sched_coll, i);
        /* the job's span starts when its first iteration's compute phase starts */
        const struct transfer *bt = schedule_get(s, c->first);
        simtime_t begin = r->start >= bt->delay ? r->start - bt->delay : 0;
        if (begin < first)
            first = begin;
        if (r->end > last)
            last = r->end;
    }
    qsort(t, k, sizeof *t, stats_cmp_dbl);
    jf->iterations = k;
    if (k) {
        jf->p50_us = stats_percentile(t, k, 50);
        jf->p99_us = stats_percentile(t, k, 99);
        jf->busbw = bus / k;
        jf->comm_fraction = last > first ? comm / ((double)(last - first) / PS_PER_US) : 1;
    }
    g_free(t);
}

void outcome_print_collectives(const struct schedule *s, const struct run_figures *fig)
{
    for (uint32_t j = 0; j < s->jobs->len; j++) {
        const struct sched_job *job = &g_array_index(s->jobs, struct sched_job, j);
        bool any = false;
        for (uint32_t i = 0; i < fig->ncolls; i++)
            any |= fig->colls[i].job == j;
        if (!any)
            continue;
        printf("#\n# %s: %s %s, %u ranks (nccl-tests columns; GB/s = 1e9 B/s)\n", job->name, job->op,
               job->algorithm, job->ranks);
        printf("#  %12s %6s %12s %10s %10s %12s\n", "size(B)", "iter", "time(us)", "algbw", "busbw", "end(us)");
        for (uint32_t i = 0; i < fig->ncolls; i++) {
            const struct coll_result *r = &fig->colls[i];
            if (r->job != j)
                continue;
            if (r->done)
                printf("   %12" G_GUINT64_FORMAT " %6u %12.2f %10.2f %10.2f %12.2f\n", r->bytes, r->iteration, r->time_us,
                       r->algbw, r->busbw, (double)r->end / PS_PER_US);
            else
                printf("   %12" G_GUINT64_FORMAT " %6u %12s\n", r->bytes, r->iteration, "incomplete");
        }
        struct job_figures jf;
        outcome_job_figures(s, fig, j, &jf);
        if (jf.iterations)
            printf("# %s: time p50 %.2f us, p99 %.2f us, avg busbw %.2f GB/s, communicating %.1f%% of the job's time\n",
                   job->name, jf.p50_us, jf.p99_us, jf.busbw, 100 * jf.comm_fraction);
    }
}

void outcome_json_int(JsonBuilder *b, const char *k, uint64_t v)
{
    json_builder_set_member_name(b, k);
    json_builder_add_int_value(b, (gint64)v);
}
void outcome_json_str(JsonBuilder *b, const char *k, const char *v)
{
    json_builder_set_member_name(b, k);
    json_builder_add_string_value(b, v);
}
void outcome_json_dbl(JsonBuilder *b, const char *k, double v)
{
    json_builder_set_member_name(b, k);
    json_builder_add_double_value(b, v);
}

gboolean outcome_metric_optional(const char *name)
{
    /* as outcome_json_transfer_metrics, outcome_json_collective_metrics and
     * outcome_json_job_metrics write them */
    static const char *const run[] = { "completion_ns", "fct_p50_ns", "fct_p99_ns", "fct_max_ns", "slowdown_p50",
                                       "slowdown_p99", "slowdown_max", "collective_time_p50_us",
                                       "collective_time_p99_us", "busbw_GBps" };
    static const char *const job[] = { "completion_ns", "fct_p50_ns", "fct_p99_ns", "slowdown_p99",
                                       "time_p50_us", "time_p99_us", "busbw_GBps", "comm_fraction" };
    const char *key = name;
    const char *const *keys = run;
    size_t n = G_N_ELEMENTS(run);
    if (g_str_has_prefix(name, "jobs.")) {
        key = strrchr(name, '.') + 1;
        if (key == name + strlen("jobs.")) /* no job name */
            return FALSE;
        keys = job;
        n = G_N_ELEMENTS(job);
    }
    for (size_t i = 0; i < n; i++)
        if (!strcmp(key, keys[i]))
            return TRUE;
    return FALSE;
}

void outcome_json_transfer_metrics(JsonBuilder *b, const struct run_figures *fig)
{
    outcome_json_int(b, "transfers", fig->nxfers);
    outcome_json_int(b, "transfers_completed", fig->done);
    outcome_json_int(b, "bytes", fig->bytes);
    /* with no transfer done there is no completion time, FCT or slowdown: absent, not zero,
     * which sweep, tune and compare would read as instant */
    if (!fig->done)
        return;
    outcome_json_int(b, "completion_ns", fig->completion / PS_PER_NS);
    outcome_json_int(b, "fct_p50_ns", fig->fct_p50);
    outcome_json_int(b, "fct_p99_ns", fig->fct_p99);
    outcome_json_int(b, "fct_max_ns", fig->fct_max);
    if (fig->sd_known) {
        outcome_json_dbl(b, "slowdown_p50", fig->sd_p50);
        outcome_json_dbl(b, "slowdown_p99", fig->sd_p99);
        outcome_json_dbl(b, "slowdown_max", fig->sd_max);
    }
}

void outcome_json_collective_metrics(JsonBuilder *b, const struct run_figures *fig)
{
    if (!fig->ncolls)
        return;
    double *t = g_new(double, fig->ncolls);
    uint32_t k = 0;
    double bus = 0;
    for (uint32_t i = 0; i < fig->ncolls; i++)
        if (fig->colls[i].done) {
            t[k++] = fig->colls[i].time_us;
            bus += fig->colls[i].busbw;
        }
    qsort(t, k, sizeof *t, stats_cmp_dbl);
    if (k) {
        outcome_json_dbl(b, "collective_time_p50_us", stats_percentile(t, k, 50));
        outcome_json_dbl(b, "collective_time_p99_us", stats_percentile(t, k, 99));
        outcome_json_dbl(b, "busbw_GBps", bus / k);
    }
    outcome_json_int(b, "collectives_completed", k);
    g_free(t);
}

void outcome_json_jobs(JsonBuilder *b, const struct schedule *s, const struct run_figures *fig)
{
    json_builder_set_member_name(b, "jobs");
    json_builder_begin_array(b);
    for (uint32_t j = 0; j < s->jobs->len; j++) {
        const struct sched_job *job = &g_array_index(s->jobs, struct sched_job, j);
        struct job_figures jf;
        outcome_job_figures(s, fig, j, &jf);
        json_builder_begin_object(b);
        outcome_json_str(b, "job", job->name);
        outcome_json_str(b, "op", job->op);
        outcome_json_str(b, "algorithm", job->algorithm);
        outcome_json_int(b, "ranks", job->ranks);
        if (jf.transfers) {
            outcome_json_int(b, "transfers", jf.transfers);
            outcome_json_int(b, "transfers_completed", jf.completed);
            if (jf.completion_ns)
                outcome_json_int(b, "completion_ns", jf.completion_ns);
            if (jf.completed) {
                outcome_json_int(b, "fct_p50_ns", jf.fct_p50);
                outcome_json_int(b, "fct_p99_ns", jf.fct_p99);
                outcome_json_int(b, "fct_max_ns", jf.fct_max);
                if (jf.has_sd)
                    outcome_json_dbl(b, "slowdown_p99", jf.sd_p99);
            }
        }
        if (jf.iterations) {
            outcome_json_int(b, "iterations", jf.iterations);
            outcome_json_dbl(b, "time_p50_us", jf.p50_us);
            outcome_json_dbl(b, "time_p99_us", jf.p99_us);
            outcome_json_dbl(b, "busbw_GBps", jf.busbw);
            outcome_json_dbl(b, "comm_fraction", jf.comm_fraction);
        }
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
}

void outcome_json_job_metrics(JsonBuilder *b, const struct schedule *s, const struct run_figures *fig)
{
    for (uint32_t j = 0; j < s->jobs->len; j++) {
        const char *name = g_array_index(s->jobs, struct sched_job, j).name;
        struct job_figures jf;
        outcome_job_figures(s, fig, j, &jf);
        char k[256];
#define JOB_KEY(key) (snprintf(k, sizeof k, "jobs.%s." key, name), k)
        if (jf.transfers) {
            outcome_json_int(b, JOB_KEY("transfers_completed"), jf.completed);
            if (jf.completion_ns)
                outcome_json_int(b, JOB_KEY("completion_ns"), jf.completion_ns);
            if (jf.completed) {
                outcome_json_int(b, JOB_KEY("fct_p50_ns"), jf.fct_p50);
                outcome_json_int(b, JOB_KEY("fct_p99_ns"), jf.fct_p99);
                if (jf.has_sd)
                    outcome_json_dbl(b, JOB_KEY("slowdown_p99"), jf.sd_p99);
            }
        }
        if (jf.iterations) {
            outcome_json_dbl(b, JOB_KEY("time_p50_us"), jf.p50_us);
            outcome_json_dbl(b, JOB_KEY("time_p99_us"), jf.p99_us);
            outcome_json_dbl(b, JOB_KEY("busbw_GBps"), jf.busbw);
        }
#undef JOB_KEY
    }
}

void run_figures_clear(struct run_figures *fig)
{
    g_free(fig->colls);
    fig->colls = NULL;
    for (uint32_t j = 0; j < fig->njobs; j++) {
        g_array_free(fig->jobs[j].fct_ns, TRUE);
        g_array_free(fig->jobs[j].slowdown, TRUE);
    }
    g_free(fig->jobs);
    fig->jobs = NULL;
    fig->njobs = 0;
    if (fig->warnings)
        g_ptr_array_free(fig->warnings, TRUE);
    fig->warnings = NULL;
}

char *outcome_json_text(JsonBuilder *b)
{
    JsonGenerator *gen = json_generator_new();
    json_generator_set_pretty(gen, TRUE);
    JsonNode *root = json_builder_get_root(b);
    json_generator_set_root(gen, root);
    char *text = json_generator_to_data(gen, NULL);
    json_node_unref(root);
    g_object_unref(gen);
    g_object_unref(b);
    return text;
}
