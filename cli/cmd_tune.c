/* `rocesim tune`: a coarse grid, then refinement around the best points that meet the
 * constraints, within a budget of runs. The machinery is in tune/. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "analysis/plot.h"
#include "cli/commands.h"
#include "cli/sweep_cli.h"
#include "results_io/csv.h"
#include "results_io/outcome.h"
#include "tune/sweep.h"
#include "tune/sweep_stats.h"

/* ======================================================================================
 * tune
 * ====================================================================================== */

static gint cmp_guint(gconstpointer a, gconstpointer b)
{
    guint x = *(const guint *)a, y = *(const guint *)b;
    return x < y ? -1 : x > y;
}

static gint cmp_strp(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

struct tuner {
    struct sweep *s;
    char *objective;
    gboolean maximize;
    struct sweep_constraint *cons;
    guint ncons;
    double rank_q;            /* < 0: rank by the replicates' mean; else by this quantile (%) */
    double share;             /* share of a configuration's replicates each constraint must hold on */
    guint budget;             /* configurations */
    gboolean checked;         /* metric names checked against the first finished point */
    char *bad_metric;         /* the first unknown one */
    GPtrArray *bad_available; /* the names that point had */
    GArray *order;            /* guint configuration indices in evaluation order */
    GArray *phase;            /* 0 coarse, 1 refine, per entry of order */
    gboolean *evaluated;      /* per configuration */
};

/* Whether `name`, absent from p's results, is a metric that a run leaves out when nothing of
 * its kind finished there (a job's, of a job p's results name). */
static gboolean metric_may_be_absent(const struct sweep_point *p, const char *name)
{
    if (!outcome_metric_optional(name))
        return FALSE;
    if (!g_str_has_prefix(name, "jobs."))
        return TRUE;
    char *job = g_strndup(name, (gsize)(strrchr(name, '.') - name)); /* "jobs.NAME" */
    char *known = g_strconcat(job, ".transfers_completed", NULL);
    gboolean ok = g_hash_table_contains(p->metrics, known);
    g_free(known);
    g_free(job);
    return ok;
}

static gboolean tune_check_metrics(struct sweep *s, struct sweep_point *p, void *ud)
{
    (void)s;
    struct tuner *t = ud;
    if (t->checked || p->state != SP_DONE)
        return TRUE;
    t->checked = TRUE;
    const char *need[64];
    guint n = 0;
    need[n++] = t->objective;
    for (guint c = 0; c < t->ncons && n < G_N_ELEMENTS(need); c++)
        need[n++] = t->cons[c].metric;
    for (guint i = 0; i < n; i++)
        if (!g_hash_table_contains(p->metrics, need[i]) && !metric_may_be_absent(p, need[i])) {
            t->bad_metric = g_strdup(need[i]);
            t->bad_available = g_ptr_array_new_with_free_func(g_free);
            GHashTableIter it;
            gpointer k;
            g_hash_table_iter_init(&it, p->metrics);
            while (g_hash_table_iter_next(&it, &k, NULL))
                g_ptr_array_add(t->bad_available, g_strdup(k));
            g_ptr_array_sort(t->bad_available, cmp_strp);
            return FALSE;
        }
    return TRUE;
}

/* The ranking value of configuration c: its replicates' mean or quantile of the objective. */
static gboolean config_objective(const struct tuner *t, guint c, double *obj)
{
    metrics_stats st = sweep_config_stats(t->s, c, t->objective);
    if (!st.n)
        return FALSE;
    *obj = t->rank_q < 0 ? st.mean : sweep_config_quantile(t->s, c, t->objective, t->rank_q);
    return TRUE;
}

static void note_violation(GString *which, const char *what)
{
    if (which)
        g_string_append_printf(which, "%s%s", which->len ? ";" : "", what);
}

/* Number of violated conditions of configuration c (a missing metric violates); *obj is its
 * objective, NAN when no run of it has one (a run where nothing finished has no FCT: absent,
 * not 0, so it never looks best). A constraint must hold on at least `share` of the
 * replicates; a deadlock, unfinished transfers, a failed run in any replicate, or no value of
 * the objective make the configuration infeasible. */
static int violations(const struct tuner *t, guint c, double *obj, GString *which)
{
    const struct sweep *s = t->s;
    int n = 0;
    gboolean deadlock = FALSE, unfinished = FALSE, failed = FALSE;
    for (guint r = 0; r < s->replicates; r++) {
        const struct sweep_point *p = sweep_config_point(s, c, r);
        double total, completed;
        /* a run that deadlocked or left transfers unfinished is never feasible: its transfer
         * figures cover only what finished, and would flatter it */
        failed |= p->state != SP_DONE;
        deadlock |= sweep_point_deadlocked(p);
        unfinished |= p->state == SP_DONE && !sweep_point_deadlocked(p) && sweep_point_metric(p, "transfers", &total) &&
                      sweep_point_metric(p, "transfers_completed", &completed) && completed < total;
    }
    if (failed) {
        n++;
        note_violation(which, "failed run");
    }
    if (deadlock) {
        n++;
        note_violation(which, "deadlock");
    } else if (unfinished) {
        n++;
        note_violation(which, "unfinished transfers");
    }
    guint need = (guint)ceil(t->share * s->replicates - 1e-9);
    for (guint k = 0; k < t->ncons; k++) {
        guint holds = 0;
        for (guint r = 0; r < s->replicates; r++) {
            const struct sweep_point *p = sweep_config_point(s, c, r);
            double v;
            holds += p->state == SP_DONE && sweep_point_metric(p, t->cons[k].metric, &v) &&
                     sweep_constraint_holds(&t->cons[k], v);
        }
        if (holds < need) {
            n++;
            if (s->replicates > 1 && which) {
                char *what = g_strdup_printf("%s (on %u of %u seeds)", t->cons[k].text, holds, s->replicates);
                note_violation(which, what);
                g_free(what);
            } else {
                note_violation(which, t->cons[k].text);
            }
        }
    }
    if (!config_objective(t, c, obj)) {
        *obj = NAN;
        n++;
        if (which) {
            char *what = g_strdup_printf("no %s", t->objective);
            note_violation(which, what);
            g_free(what);
        }
    }
    return n;
}

struct ranked {
    guint config;
    int viol;
    double obj;
};

static gint cmp_ranked(gconstpointer a, gconstpointer b, gpointer maximize)
{
    const struct ranked *x = a, *y = b;
    if (x->viol != y->viol)
        return x->viol < y->viol ? -1 : 1;
    if (isnan(x->obj) != isnan(y->obj))
        return isnan(x->obj) ? 1 : -1; /* no objective: after every value */
    if (!isnan(x->obj) && x->obj != y->obj)
        return (*(const gboolean *)maximize ? x->obj > y->obj : x->obj < y->obj) ? -1 : 1;
    return x->config < y->config ? -1 : x->config > y->config;
}

/* Evaluated configurations, best first: feasible ones by objective; when none is feasible, all
 * by fewest violated conditions, then objective (those without one last). feasible_only: drop
 * the infeasible ones when some configuration is feasible. */
static GArray *tune_rank(const struct tuner *t, gboolean feasible_only)
{
    GArray *r = g_array_new(FALSE, FALSE, sizeof(struct ranked));
    gboolean any_feasible = FALSE;
    for (guint i = 0; i < t->order->len; i++) {
        guint c = g_array_index(t->order, guint, i);
        struct ranked x = { c, 0, 0 };
        x.viol = violations(t, c, &x.obj, NULL);
        any_feasible |= x.viol == 0;
        g_array_append_val(r, x);
    }
    if (feasible_only && any_feasible)
        for (guint i = r->len; i-- > 0;)
            if (g_array_index(r, struct ranked, i).viol)
                g_array_remove_index(r, i);
    g_array_sort_with_data(r, cmp_ranked, (gpointer)&t->maximize);
    return r;
}

/* The configuration of p moved by delta[d] in each dimension, or -1 when outside. */
static long neighbour(const struct sweep *s, const struct sweep_point *p, const int *delta)
{
    long index = 0;
    for (guint d = 0; d < s->dims->len; d++) {
        long k = ((struct sweep_dim *)g_ptr_array_index(s->dims, d))->values->len;
        long v = (long)p->idx[d] + delta[d];
        if (v < 0 || v >= k)
            return -1;
        index = index * k + v;
    }
    return index;
}

/* Unevaluated, valid neighbours of configuration c at the smallest L1 distance (1: along one
 * key; 2 and more: diagonals) that has any, in grid order. */
static void tune_candidates(const struct tuner *t, guint c, const gboolean *taken, GArray *out)
{
    const struct sweep *s = t->s;
    const struct sweep_point *p = sweep_config_point(s, c, 0);
    guint nd = s->dims->len;
    int *delta = g_new0(int, nd);
    guint combos = 1;
    for (guint d = 0; d < nd; d++)
        combos *= 3;
    for (guint dist = 1; dist <= nd && out->len == 0; dist++) {
        GArray *found = g_array_new(FALSE, FALSE, sizeof(guint));
        for (guint k = 0; k < combos; k++) {
            guint rem = k, l1 = 0;
            for (guint d = 0; d < nd; d++) {
                delta[d] = (int)(rem % 3) - 1;
                rem /= 3;
                l1 += delta[d] != 0;
            }
            if (l1 != dist)
                continue;
            long n = neighbour(s, p, delta);
            if (n < 0 || t->evaluated[n] || taken[n])
                continue;
            if (sweep_config_point(s, (guint)n, 0)->state == SP_INVALID)
                continue;
            guint u = (guint)n;
            g_array_append_val(found, u);
        }
        g_array_sort(found, cmp_guint);
        for (guint i = 0; i < found->len; i++)
            g_array_append_val(out, g_array_index(found, guint, i));
        g_array_free(found, TRUE);
    }
    g_free(delta);
}

/* Runs every replicate of a batch of configurations; records the evaluated ones in batch
 * order. */
static enum sweep_result tune_batch(struct tuner *t, GArray *batch, int phase)
{
    struct sweep *s = t->s;
    GArray *runs = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint i = 0; i < batch->len; i++)
        for (guint r = 0; r < s->replicates; r++) {
            guint idx = g_array_index(batch, guint, i) * s->replicates + r;
            g_array_append_val(runs, idx);
        }
    enum sweep_result res = sweep_run(s, (const guint *)runs->data, runs->len, tune_check_metrics, t);
    g_array_free(runs, TRUE);
    for (guint i = 0; i < batch->len; i++) {
        guint c = g_array_index(batch, guint, i);
        gboolean all = TRUE;
        for (guint r = 0; r < s->replicates; r++) {
            enum sweep_state st = sweep_config_point(s, c, r)->state;
            all &= st == SP_DONE || st == SP_FAILED;
        }
        if (!all)
            continue;
        t->evaluated[c] = TRUE;
        g_array_append_val(t->order, c);
        g_array_append_val(t->phase, phase);
    }
    return res;
}

static void print_setting(const struct sweep *s, const struct sweep_point *p, const char *indent)
{
    for (guint d = 0; d < s->dims->len; d++) {
        const struct sweep_dim *dim = g_ptr_array_index(s->dims, d);
        printf("%s%s = %s\n", indent, dim->key, (const char *)g_ptr_array_index(dim->values, p->idx[d]));
    }
}

/* A finished configuration's metric as text: the run's value, or the replicates' mean. */
static char *config_metric_text(const struct sweep *s, guint c, const char *metric)
{
    if (s->replicates == 1) {
        const struct sweep_point *p = sweep_config_point(s, c, 0);
        const char *v = p->metrics ? g_hash_table_lookup(p->metrics, metric) : NULL;
        return v ? g_strdup(v) : NULL;
    }
    metrics_stats st = sweep_config_stats(s, c, metric);
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    return st.n ? g_strdup(g_ascii_dtostr(buf, sizeof buf, st.mean)) : NULL;
}

static void csv_number(GString *g, double v, gboolean has)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    if (has && isfinite(v))
        g_string_append(g, g_ascii_dtostr(buf, sizeof buf, v));
}

static gboolean write_tune_csv(const struct tuner *t, GError **err)
{
    struct sweep *s = t->s;
    gboolean reps = s->replicates > 1;
    GPtrArray *metrics = sweep_metric_names(s);
    GString *g = g_string_new("run,phase,");
    for (guint d = 0; d < s->dims->len; d++) {
        results_csv_quote(g, ((struct sweep_dim *)g_ptr_array_index(s->dims, d))->key);
        g_string_append_c(g, ',');
    }
    g_string_append(g, reps ? "replicates,status,feasible,objective,objective_mean,objective_sd,objective_ci95,violated"
                            : "status,feasible,objective,violated");
    for (guint m = 0; m < metrics->len; m++) {
        g_string_append_c(g, ',');
        results_csv_quote(g, g_ptr_array_index(metrics, m));
    }
    g_string_append_c(g, '\n');
    for (guint i = 0; i < t->order->len; i++) {
        guint c = g_array_index(t->order, guint, i);
        const struct sweep_point *p = sweep_config_point(s, c, 0);
        g_string_append_printf(g, "%u,%s,", i + 1, g_array_index(t->phase, int, i) ? "refine" : "coarse");
        for (guint d = 0; d < s->dims->len; d++) {
            const struct sweep_dim *dim = g_ptr_array_index(s->dims, d);
            results_csv_quote(g, g_ptr_array_index(dim->values, p->idx[d]));
            g_string_append_c(g, ',');
        }
        double obj = 0;
        GString *which = g_string_new(NULL);
        int v = violations(t, c, &obj, which);
        if (reps)
            g_string_append_printf(g, "%u,", s->replicates);
        g_string_append_printf(g, "%s,%s,", reps ? sweep_config_state(s, c) : sweep_state_text(p), v == 0 ? "yes" : "no");
        if (reps) {
            metrics_stats st = sweep_config_stats(s, c, t->objective);
            csv_number(g, obj, !isnan(obj));
            g_string_append_c(g, ',');
            csv_number(g, st.mean, st.n > 0);
            g_string_append_c(g, ',');
            csv_number(g, st.sd, st.n > 1);
            g_string_append_c(g, ',');
            csv_number(g, st.ci95, st.n > 1);
        } else {
            const char *ot = p->metrics ? g_hash_table_lookup(p->metrics, t->objective) : NULL;
            if (ot)
                results_csv_quote(g, ot);
        }
        g_string_append_c(g, ',');
        results_csv_quote(g, which->str);
        g_string_free(which, TRUE);
        for (guint m = 0; m < metrics->len; m++) {
            g_string_append_c(g, ',');
            char *mv = config_metric_text(s, c, g_ptr_array_index(metrics, m));
            if (mv)
                results_csv_quote(g, mv);
            g_free(mv);
        }
        g_string_append_c(g, '\n');
    }
    char *path = g_build_filename(s->out, "tune.csv", NULL);
    gboolean ok = sweep_write_file(path, g, err);
    g_free(path);
    g_string_free(g, TRUE);
    g_ptr_array_unref(metrics);
    return ok;
}

static void tune_plot(const struct tuner *t)
{
    const struct sweep *s = t->s;
    GString *dat = g_string_new("# run objective feasible(1/0) best_feasible_so_far\n");
    double best = NAN;
    guint plotted = 0;
    for (guint i = 0; i < t->order->len; i++) {
        double obj;
        int v = violations(t, g_array_index(t->order, guint, i), &obj, NULL);
        if (isnan(obj))
            continue; /* no value to plot */
        if (v == 0 && (isnan(best) || (t->maximize ? obj > best : obj < best)))
            best = obj;
        char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE];
        g_string_append_printf(dat, "%u %s %d %s\n", i + 1, g_ascii_dtostr(a, sizeof a, obj), v == 0,
                               isnan(best) ? "NaN" : g_ascii_dtostr(b, sizeof b, best));
        plotted++;
    }
    if (!plotted) {
        g_string_free(dat, TRUE);
        return;
    }
    GString *gp = g_string_new(NULL);
    plot_gp_begin_size(gp, "tune", "the objective of every tune run", 1000, 560);
    GString *body = g_string_new("set title ");
    char *title = g_strdup_printf("tune: %s (%s) per run, in order", t->objective, t->maximize ? "maximize" : "minimize");
    plot_gp_quote(body, title);
    g_free(title);
    g_string_append_printf(body, "\nset xlabel 'run'\nset ylabel ");
    plot_gp_quote(body, t->objective);
    g_string_append_printf(body, "\nset xrange [0:%u]\nset key outside right top\n"
                                 "plot 'tune.dat' using 1:($3==1 ? $2 : NaN) with points pt 7 ps 1.2 lc rgb '#2ca02c' title 'feasible', \\\n"
                                 "     'tune.dat' using 1:($3==0 ? $2 : NaN) with points pt 6 ps 1.2 lc rgb '#d62728' title 'violates a constraint', \\\n"
                                 "     'tune.dat' using 1:4 with steps lw 1.5 lc rgb '#1f77b4' title 'best feasible so far'\n",
                           t->order->len + 1);
    g_string_append(gp, body->str);
    plot_gp_svg(gp, "tune", 1000, 560);
    sweep_draw(s, "tune", gp, dat, TRUE, "replot\n");
    g_string_free(gp, TRUE);
    g_string_free(body, TRUE);
    g_string_free(dat, TRUE);
}

/* The valid configurations (those whose scenario loads). */
static guint valid_configs(const struct sweep *s)
{
    guint n = 0;
    for (guint c = 0; c < s->nconfigs; c++)
        n += sweep_config_point(s, c, 0)->state != SP_INVALID;
    return n;
}

/* The coarse grid, at most `most` valid configurations, in grid order; *desc names it. */
static GArray *coarse_batch(const struct sweep *s, guint most, GString *desc)
{
    guint nd = s->dims->len;
    guint *k = g_new(guint, nd);
    int *levels = g_new(int, nd);
    for (guint d = 0; d < nd; d++)
        k[d] = ((struct sweep_dim *)g_ptr_array_index(s->dims, d))->values->len;
    sweep_coarse_levels(k, nd, MAX(1u, most), levels);
    gboolean **keep = g_new0(gboolean *, nd);
    for (guint d = 0; d < nd; d++) {
        const struct sweep_dim *dim = g_ptr_array_index(s->dims, d);
        guint *ix = g_new(guint, k[d] + 1);
        guint n = sweep_coarse_indices(k[d], levels[d], ix);
        keep[d] = g_new0(gboolean, k[d]);
        g_string_append_printf(desc, "%s%s ", d ? "; " : "", dim->label);
        for (guint i = 0; i < n; i++) {
            keep[d][ix[i]] = TRUE;
            g_string_append_printf(desc, "%s%s", i ? "," : "", (char *)g_ptr_array_index(dim->values, ix[i]));
        }
        g_free(ix);
    }
    GArray *batch = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint c = 0; c < s->nconfigs; c++) {
        const struct sweep_point *p = sweep_config_point(s, c, 0);
        gboolean in = p->state != SP_INVALID;
        for (guint d = 0; d < nd && in; d++)
            in = keep[d][p->idx[d]];
        if (in)
            g_array_append_val(batch, c);
    }
    for (guint d = 0; d < nd; d++)
        g_free(keep[d]);
    g_free(keep);
    g_free(k);
    g_free(levels);
    return batch;
}

/* The next refinement batch: the unevaluated neighbours of the best configurations. */
static GArray *refine_batch(const struct tuner *t, guint room)
{
    const struct sweep *s = t->s;
    GArray *batch = g_array_new(FALSE, FALSE, sizeof(guint));
    gboolean *taken = g_new0(gboolean, s->nconfigs);
    GArray *ranked = tune_rank(t, TRUE);
    guint per_batch = MAX(1u, s->jobs / s->replicates);
    for (guint i = 0; i < ranked->len && batch->len < room; i++) {
        if (batch->len >= per_batch)
            break; /* the best configurations first; others only to fill idle processes */
        GArray *c = g_array_new(FALSE, FALSE, sizeof(guint));
        tune_candidates(t, g_array_index(ranked, struct ranked, i).config, taken, c);
        for (guint j = 0; j < c->len && batch->len < room; j++) {
            guint idx = g_array_index(c, guint, j);
            taken[idx] = TRUE;
            g_array_append_val(batch, idx);
        }
        g_array_free(c, TRUE);
    }
    g_array_free(ranked, TRUE);
    g_free(taken);
    return batch;
}

/* "2.05e+06 ± 1.2e+04 (5 seeds)" or the run's value. */
static char *objective_text(const struct tuner *t, guint c)
{
    const struct sweep *s = t->s;
    if (s->replicates == 1)
        return config_metric_text(s, c, t->objective);
    metrics_stats st = sweep_config_stats(s, c, t->objective);
    char *m = sweep_format_mean(st.mean, st.ci95), *ci = sweep_format_ci(st.ci95);
    char *out = g_strdup_printf("%s ± %s (mean of %u seeds, 95%% CI)", m, ci, st.n);
    g_free(m);
    g_free(ci);
    return out;
}

/* The best configuration and the ones that cannot be told apart from it, with replicates. */
static void print_result(const struct tuner *t, GArray *ranked, guint feasible)
{
    const struct sweep *s = t->s;
    guint best_c = g_array_index(ranked, struct ranked, 0).config;
    const struct sweep_point *best = sweep_config_point(s, best_c, 0);
    char *best_name = sweep_point_name(s->dims, best->idx);
    char *obj = objective_text(t, best_c);
    printf("best: %s\n", best_name);
    print_setting(s, best, "  ");
    printf("  %s = %s (objective, %s%s)\n", t->objective, obj, t->maximize ? "maximize" : "minimize",
           t->rank_q >= 0 ? ", ranked by a quantile of the seeds" : "");
    g_free(obj);
    GPtrArray *names = sweep_metric_names((struct sweep *)s);
    printf("  metrics%s:", s->replicates > 1 ? " (means over the seeds)" : "");
    for (guint m = 0; m < names->len; m++) {
        char *v = NULL;
        if (s->replicates > 1) {
            /* to the precision the seeds support */
            metrics_stats st = sweep_config_stats(s, best_c, g_ptr_array_index(names, m));
            v = st.n ? sweep_format_mean(st.mean, st.ci95) : NULL;
        } else {
            v = config_metric_text(s, best_c, g_ptr_array_index(names, m));
        }
        if (v)
            printf("%s%s=%s", m % 4 == 0 ? "\n    " : "  ", (char *)g_ptr_array_index(names, m), v);
        g_free(v);
    }
    printf("\n  results: %s/%s%s\n", s->points_dir, best->name, s->replicates > 1 ? " (and the other seeds)" : "");
    g_ptr_array_unref(names);
    printf("top %u:\n", MIN(3u, feasible));
    metrics_stats sb = sweep_config_stats(s, best_c, t->objective);
    GString *same = g_string_new(NULL);
    for (guint i = 0; i < ranked->len; i++) {
        const struct ranked *x = &g_array_index(ranked, struct ranked, i);
        if (x->viol)
            break;
        metrics_stats sx = sweep_config_stats(s, x->config, t->objective);
        gboolean tied = i > 0 && s->replicates > 1 && !metrics_differ_beyond_noise(&sb, &sx);
        if (tied)
            g_string_append_printf(same, "%s%u", same->len ? ", " : "", i + 1);
        if (i < 3) {
            char *o = objective_text(t, x->config);
            char *name = sweep_point_name(s->dims, sweep_config_point(s, x->config, 0)->idx);
            printf("  %u. %s = %s   %s%s\n", i + 1, t->objective, o, name, tied ? "   (not distinguishable from 1.)" : "");
            g_free(name);
            g_free(o);
        }
    }
    if (s->replicates > 1) {
        if (same->len)
            printf("note: the best is not distinguishable from %s (Welch's t-test at 95%%): the seed moves %s as much "
                   "as these settings do; more replicates may separate them\n", same->str, t->objective);
        else if (feasible > 1)
            printf("the best is better than every other feasible configuration beyond the run-to-run noise (95%%)\n");
    }
    g_string_free(same, TRUE);
    printf("results: %s/tune.csv\n", s->out);
    g_free(best_name);
}

static gboolean parse_rank(const char *text, double *q)
{
    if (!text || !strcmp(text, "mean")) {
        *q = -1;
        return TRUE;
    }
    char *end;
    double v = text[0] == 'p' ? g_ascii_strtod(text + 1, &end) : -1;
    if (text[0] != 'p' || end == text + 1 || *end || v < 0 || v > 100)
        return FALSE;
    *q = v;
    return TRUE;
}

/* The search's settings from the command line, else [sweep]: objective, direction, ranking,
 * constraints and budget; 0, or 2 with the reason printed. *valid: configurations in the grid. */
static int tuner_configure(struct tuner *t, const struct sweep_opts *o, const struct sweep_section *sec,
                           struct sweep *s, guint *valid)
{
    GError *err = NULL;
    t->s = s;
    t->objective = g_strdup(o->objective ? o->objective : sec->objective);
    if (!t->objective || !*t->objective) {
        fprintf(stderr, "rocesim tune: no objective: give --objective METRIC (a key of summary.json metrics, e.g. "
                        "fct_p99_ns) or objective = METRIC in [sweep]\n");
        return 2;
    }
    if (o->minimize && o->maximize) {
        fprintf(stderr, "rocesim tune: --minimize and --maximize: choose one\n");
        return 2;
    }
    const char *rank = o->rank ? o->rank : sec->rank;
    if (!parse_rank(rank, &t->rank_q)) {
        fprintf(stderr, "rocesim tune: %s '%s': expected mean or a quantile p0 .. p100 such as p90\n",
                o->rank ? "--rank" : "[sweep] rank", rank);
        return 2;
    }
    if (o->constraint_share != 0 && !(o->constraint_share > 0 && o->constraint_share <= 1)) {
        fprintf(stderr, "rocesim tune: --constraint-share %g: expected a share above 0 and at most 1, e.g. 0.8\n",
                o->constraint_share);
        return 2;
    }
    t->share = o->constraint_share ? o->constraint_share : sec->constraint_share ? sec->constraint_share : 1;
    t->maximize = o->maximize || (!o->minimize && sec->direction && !strcmp(sec->direction, "maximize"));
    guint ncons = o->constraints ? g_strv_length(o->constraints) : sec->constraints->len;
    t->cons = g_new0(struct sweep_constraint, ncons ? ncons : 1);
    for (guint c = 0; c < ncons; c++) {
        const char *text = o->constraints ? o->constraints[c] : g_ptr_array_index(sec->constraints, c);
        if (!sweep_constraint_parse(text, &t->cons[c], &err)) {
            fprintf(stderr, "rocesim tune: %s\n", err->message);
            g_error_free(err);
            return 2;
        }
        t->ncons++;
    }
    *valid = valid_configs(s);
    if (o->budget < 0) {
        fprintf(stderr, "rocesim tune: --budget %d: expected a number of runs of 1 or more\n", o->budget);
        return 2;
    }
    t->budget = o->budget > 0 ? (guint)o->budget : sec->budget ? sec->budget : MAX((*valid + 1) / 2, MIN(*valid, 8u));
    if (t->budget > *valid)
        t->budget = *valid;
    return 0;
}

/* What the search found: counts, failures, and the best feasible setting (exit status 0), or
 * why none is feasible (1). */
static int tune_report(struct tuner *t, const struct sweep_opts *o, gboolean exhausted, double wall)
{
    struct sweep *s = t->s;
    GArray *ranked = tune_rank(t, FALSE);
    guint feasible = 0, coarse = 0, reused = 0;
    for (guint i = 0; i < ranked->len; i++)
        feasible += g_array_index(ranked, struct ranked, i).viol == 0;
    for (guint i = 0; i < t->order->len; i++) {
        coarse += g_array_index(t->phase, int, i) == 0;
        for (guint rep = 0; rep < s->replicates; rep++)
            reused += sweep_config_point(s, g_array_index(t->order, guint, i), rep)->reused;
    }
    guint failed = sweep_count_state(s, SP_FAILED);
    if (!o->quiet) {
        printf("rocesim tune: %u %s evaluated (%u coarse, %u refinement; %u %sreused from an earlier run), "
               "%u feasible, %u failed; %s; %.1f s\n",
               t->order->len, s->replicates > 1 ? "configurations" : "points", coarse, t->order->len - coarse, reused,
               s->replicates > 1 ? "runs " : "", feasible, failed,
               exhausted ? "no unevaluated neighbours left" : "budget spent", wall);
    }
    if (failed) {
        fprintf(stderr, "rocesim tune: %u point%s failed:\n", failed, failed == 1 ? "" : "s");
        sweep_list_failures(s);
    }
    if (!feasible) {
        fprintf(stderr, "rocesim tune: no evaluated point meets the constraints");
        if (ranked->len) {
            guint c = g_array_index(ranked, struct ranked, 0).config;
            GString *which = g_string_new(NULL);
            double obj;
            violations(t, c, &obj, which);
            char *name = sweep_point_name(s->dims, sweep_config_point(s, c, 0)->idx);
            fprintf(stderr, "; the closest, %s, violates %s", name, which->str);
            g_free(name);
            g_string_free(which, TRUE);
        }
        fprintf(stderr, "\nresults: %s/tune.csv\n", s->out);
        g_array_free(ranked, TRUE);
        return 1;
    }
    if (o->quiet) {
        guint c = g_array_index(ranked, struct ranked, 0).config;
        const struct sweep_point *best = sweep_config_point(s, c, 0);
        char *name = sweep_point_name(s->dims, best->idx), *obj = objective_text(t, c);
        printf("best: %s\n", name);
        print_setting(s, best, "  ");
        printf("  %s = %s (objective, %s)\n", t->objective, obj, t->maximize ? "maximize" : "minimize");
        g_free(name);
        g_free(obj);
    } else {
        print_result(t, ranked, feasible);
    }
    g_array_free(ranked, TRUE);
    return 0;
}

int cmd_tune(int argc, char **argv)
{
    struct sweep_opts o = { 0 };
    struct sweep_section sec = { 0 };
    struct sweep s = { 0 };
    struct tuner t = { 0 };
    s.lock_fd = -1;
    GOptionEntry extra[] = {
        { "objective", 0, 0, G_OPTION_ARG_STRING, &o.objective, "Headline metric to optimise (a key of summary.json metrics)", "METRIC" },
        { "minimize", 0, 0, G_OPTION_ARG_NONE, &o.minimize, "Smaller is better (the default)", NULL },
        { "maximize", 0, 0, G_OPTION_ARG_NONE, &o.maximize, "Larger is better", NULL },
        { "constraint", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o.constraints, "A condition a setting must meet, e.g. 'drops==0' or 'paused_fraction<0.01' (repeatable; == != < <= > >=)", "EXPR" },
        { "budget", 0, 0, G_OPTION_ARG_INT, &o.budget, "Most configurations to evaluate (default: half the grid, at least 8)", "N" },
        { "rank", 0, 0, G_OPTION_ARG_STRING, &o.rank, "With replicates: rank by the seeds' mean (default) or a quantile such as p90", "mean|pNN" },
        { "constraint-share", 0, 0, G_OPTION_ARG_DOUBLE, &o.constraint_share, "With replicates: share of the seeds each constraint must hold on (default 1: every seed)", "X" },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    int rc = sweep_cli_setup("tune", "Search a grid of settings for the best value of a metric under constraints: a coarse "
                           "grid first, then the neighbours of the best points that meet the constraints, until "
                           "the budget of runs is spent. Points are run and kept as by `rocesim sweep`; with "
                           "--replicates every configuration runs under several seeds and is ranked on their mean.",
                   argc, argv, extra, &o, &sec, &s);
    if (rc)
        goto out;
    GError *err = NULL;
    guint valid = 0;
    if ((rc = tuner_configure(&t, &o, &sec, &s, &valid)))
        goto out;
    if (s.mpi.size > 1) {
        if (s.mpi.rank != 0) {
            if (!o.quiet)
                printf("rocesim tune: rank %d: the search runs in rank 0 (use -j for parallel points)\n", s.mpi.rank);
            rc = 0;
            goto out;
        }
        s.mpi.size = 1; /* rank 0 runs every point of the search */
    }
    if (!sweep_prepare_dir(&s, &err)) {
        fprintf(stderr, "rocesim tune: %s\n", err->message);
        g_error_free(err);
        rc = 2;
        goto out;
    }
    t.order = g_array_new(FALSE, FALSE, sizeof(guint));
    t.phase = g_array_new(FALSE, FALSE, sizeof(int));
    t.evaluated = g_new0(gboolean, s.nconfigs);

    /* the coarse grid: at most half the budget */
    GString *coarse_desc = g_string_new(NULL);
    GArray *batch = coarse_batch(&s, t.budget / 2, coarse_desc);
    if (batch->len > t.budget)
        g_array_set_size(batch, t.budget);
    if (!o.quiet) {
        GString *cons = g_string_new(NULL);
        for (guint c = 0; c < t.ncons; c++)
            g_string_append_printf(cons, "%s%s", c ? ", " : "", t.cons[c].text);
        GString *grid = g_string_new(NULL);
        sweep_describe_grid(&s, grid);
        char *seeds = s.replicates > 1 ? g_strdup_printf(" x %u seeds", s.replicates) : g_strdup("");
        const char *what = s.replicates > 1 ? "configurations" : "points";
        printf("rocesim tune: %s %s%s%s; %u of %u %s%s at most, %u%s at a time -> %s/\n%s\n"
               "  coarse grid: %u %s (%s)\n",
               t.maximize ? "maximize" : "minimize", t.objective, t.ncons ? " subject to " : "", cons->str, t.budget,
               valid, what, seeds, s.jobs, s.replicates > 1 ? " runs" : "", s.out, grid->str, batch->len, what,
               coarse_desc->str);
        g_free(seeds);
        g_string_free(cons, TRUE);
        g_string_free(grid, TRUE);
        fflush(stdout);
    }
    g_string_free(coarse_desc, TRUE);
    sweep_note_invalid(&s);
    s.prog.total = t.budget * s.replicates;
    double t0 = g_get_monotonic_time() / 1e6;
    enum sweep_result r = tune_batch(&t, batch, 0);
    g_array_free(batch, TRUE);
    gboolean exhausted = FALSE;
    while (r == SWEEP_FINISHED && t.order->len < t.budget) {
        batch = refine_batch(&t, t.budget - t.order->len);
        if (!batch->len) {
            exhausted = TRUE;
            g_array_free(batch, TRUE);
            break;
        }
        r = tune_batch(&t, batch, 1);
        g_array_free(batch, TRUE);
    }
    sweep_progress_end(&s);
    if (t.bad_metric) {
        GString *names = g_string_new(NULL);
        for (guint i = 0; i < t.bad_available->len; i++)
            g_string_append_printf(names, "%s%s", i ? ", " : "", (char *)g_ptr_array_index(t.bad_available, i));
        fprintf(stderr, "rocesim tune: unknown metric '%s': the results have %s\n", t.bad_metric, names->str);
        g_string_free(names, TRUE);
        rc = 2;
        goto out;
    }
    if (r == SWEEP_INTERRUPTED) {
        fprintf(stderr, "rocesim tune: interrupted by %s after %u points; run the same command again to go on "
                        "(finished points are reused)\n", g_strsignal(s.interrupted), t.order->len);
        rc = 1;
        goto out;
    }
    double wall = g_get_monotonic_time() / 1e6 - t0;
    if (!write_tune_csv(&t, &err)) {
        fprintf(stderr, "rocesim tune: %s\n", err->message);
        g_error_free(err);
        rc = 1;
        goto out;
    }
    if (!o.no_plots)
        tune_plot(&t);
    rc = tune_report(&t, &o, exhausted, wall);
out:
    if (t.cons)
        for (guint c = 0; c < t.ncons; c++)
            sweep_constraint_clear(&t.cons[c]);
    g_free(t.cons);
    g_free(t.objective);
    g_free(t.bad_metric);
    if (t.bad_available)
        g_ptr_array_unref(t.bad_available);
    if (t.order)
        g_array_free(t.order, TRUE);
    if (t.phase)
        g_array_free(t.phase, TRUE);
    g_free(t.evaluated);
    sweep_free(&s);
    sweep_section_clear(&sec);
    sweep_opts_clear(&o);
    return rc;
}
