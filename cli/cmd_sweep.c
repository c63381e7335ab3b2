/* `rocesim sweep`: a grid of scenario overrides run in parallel, gathered into sweep.csv, with
 * its plots. The machinery is in tune/. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "analysis/plot.h"
#include "cli/commands.h"
#include "cli/sweep_cli.h"
#include "results_io/csv.h"
#include "tune/sweep.h"
#include "tune/sweep_stats.h"

static void dat_value(GString *dat, const struct sweep *s, guint c, const char *metric)
{
    metrics_stats st = sweep_config_stats(s, c, metric);
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append_printf(dat, " %s", st.n ? g_ascii_dtostr(buf, sizeof buf, st.mean) : "NaN");
}

static void xtics(GString *gp, const char *axis, const struct sweep_dim *d)
{
    g_string_append_printf(gp, "set %stics (", axis);
    for (guint v = 0; v < d->values->len; v++) {
        if (v)
            g_string_append(gp, ", ");
        plot_gp_quote(gp, g_ptr_array_index(d->values, v));
        g_string_append_printf(gp, " %u", v);
    }
    g_string_append(gp, ")");
    if (d->values->len > 8 && axis[0] == 'x')
        g_string_append(gp, " rotate by 45 right");
    g_string_append(gp, "\n");
}

static void sweep_plots(const struct sweep *s, GPtrArray *metrics)
{
    guint eff[2], neff = 0, many = 0;
    for (guint d = 0; d < s->dims->len; d++)
        if (((struct sweep_dim *)g_ptr_array_index(s->dims, d))->values->len > 1) {
            if (neff < 2)
                eff[neff] = d;
            neff++;
            many++;
        }
    if (many > 2) {
        fprintf(stderr, "rocesim %s: note: %u keys vary: plots are drawn when one or two do; see sweep.csv\n",
                s->cmd, many);
        return;
    }
    /* the metrics that change between points (a flat line or a uniform map says nothing) */
    GPtrArray *shown = g_ptr_array_new();
    guint constant = 0;
    for (guint m = 0; m < metrics->len; m++) {
        const char *name = g_ptr_array_index(metrics, m), *first = NULL;
        gboolean varies = FALSE;
        for (guint i = 0; i < s->points->len && !varies; i++) {
            const struct sweep_point *p = g_ptr_array_index(s->points, i);
            const char *v = p->state == SP_DONE && p->metrics ? g_hash_table_lookup(p->metrics, name) : NULL;
            if (v && !first)
                first = v;
            else if (v && strcmp(v, first))
                varies = TRUE;
        }
        if (varies)
            g_ptr_array_add(shown, (gpointer)name);
        else
            constant++;
    }
    if (neff == 0 || shown->len == 0) {
        if (neff && metrics->len && !s->quiet)
            printf("plot: none drawn: every metric has the same value at every point\n");
        g_ptr_array_unref(shown);
        return;
    }
    guint cols = shown->len < 4 ? shown->len : 4, rows = (shown->len + cols - 1) / cols;
    int w = (int)cols * 360, h = (int)rows * (neff == 1 ? 240 : 300);
    GString *gp = g_string_new(NULL), *dat = g_string_new(NULL), *body = g_string_new(NULL);
    plot_gp_begin_size(gp, "sweep", "the sweep's metrics over its grid", w, h);
    const struct sweep_dim *dx = g_ptr_array_index(s->dims, eff[0]);
    g_string_append(dat, "# x");
    if (neff == 2)
        g_string_append(dat, " y");
    for (guint m = 0; m < shown->len; m++)
        g_string_append_printf(dat, " %s", (char *)g_ptr_array_index(shown, m));
    g_string_append(dat, "\n");
    for (guint c = 0; c < s->nconfigs; c++) {
        const struct sweep_point *p = sweep_config_point(s, c, 0);
        g_string_append_printf(dat, "%u", p->idx[eff[0]]);
        if (neff == 2)
            g_string_append_printf(dat, " %u", p->idx[eff[1]]);
        for (guint m = 0; m < shown->len; m++)
            dat_value(dat, s, c, g_ptr_array_index(shown, m));
        g_string_append(dat, "\n");
    }
    g_string_append_printf(body, "set multiplot layout %u,%u title ", rows, cols);
    char *title = constant ? g_strdup_printf("rocesim sweep %s%s (%u metric%s the same at every point, not drawn)", s->out,
                                             s->replicates > 1 ? ", means over the replicates" : "", constant,
                                             constant == 1 ? "" : "s")
                           : g_strdup_printf("rocesim sweep %s%s", s->out,
                                             s->replicates > 1 ? ", means over the replicates" : "");
    plot_gp_quote(body, title);
    g_free(title);
    g_string_append(body, "\n");
    xtics(body, "x", dx);
    g_string_append_printf(body, "set xrange [-0.5:%u.5]\nset xlabel ", dx->values->len - 1);
    plot_gp_quote(body, dx->key);
    g_string_append(body, "\n");
    if (neff == 2) {
        const struct sweep_dim *dy = g_ptr_array_index(s->dims, eff[1]);
        xtics(body, "y", dy);
        g_string_append_printf(body, "set yrange [-0.5:%u.5]\nset ylabel ", dy->values->len - 1);
        plot_gp_quote(body, dy->key);
        g_string_append(body, "\nset palette defined (0 '#440154', 1 '#3b528b', 2 '#21918c', 3 '#5ec962', "
                              "4 '#fde725')\nunset grid\n");
    }
    for (guint m = 0; m < shown->len; m++) {
        g_string_append(body, "set title ");
        plot_gp_quote(body, g_ptr_array_index(shown, m));
        if (neff == 1)
            g_string_append_printf(body, "\nplot 'sweep.dat' using 1:%u with linespoints pt 7 ps 0.6 lw 1.5 notitle\n",
                                   m + 2);
        else if (s->nconfigs <= 49) /* small maps carry their values */
            g_string_append_printf(body,
                                   "\nplot 'sweep.dat' using 1:2:%u with image notitle, '' using 1:2:(column(%u) == "
                                   "column(%u) ? sprintf('%%.3g', column(%u)) : '') with labels tc rgb '#888888' notitle\n",
                                   m + 3, m + 3, m + 3, m + 3);
        else
            g_string_append_printf(body, "\nplot 'sweep.dat' using 1:2:%u with image notitle\n", m + 3);
    }
    g_string_append(gp, body->str);
    g_string_append(gp, "unset multiplot\n");
    plot_gp_svg(gp, "sweep", w, h);
    sweep_draw(s, "sweep", gp, dat, TRUE, body->str);
    g_string_free(gp, TRUE);
    g_string_free(dat, TRUE);
    g_string_free(body, TRUE);
    g_ptr_array_unref(shown);
}

/* ======================================================================================
 * sweep
 * ====================================================================================== */

int cmd_sweep(int argc, char **argv)
{
    struct sweep_opts o = { 0 };
    struct sweep_section sec = { 0 };
    struct sweep s = { 0 };
    s.lock_fd = -1;
    char *rank_wait = NULL;
    GOptionEntry extra[] = {
        { "rank-wait", 0, 0, G_OPTION_ARG_STRING, &rank_wait,
          "Under mpirun: how long rank 0, done with its own points, waits for a rank that has left no trace in "
          "DIR before it stops with exit 2 (default 60; the ranks must share DIR)", "SECONDS" },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    int rc = sweep_cli_setup("sweep", "Run a scenario over a grid of settings, N points at a time, each as its own process; "
                            "gather the headline metrics into DIR/sweep.csv. Re-running finishes what is missing. "
                            "Under mpirun the ranks share the points and rank 0 writes sweep.csv.",
                   argc, argv, extra, &o, &sec, &s);
    if (rc)
        goto out;
    if (rank_wait) {
        char *end = NULL;
        s.rank_wait_s = g_ascii_strtod(rank_wait, &end);
        if (end == rank_wait || *end || !(s.rank_wait_s > 0 && s.rank_wait_s <= 1e9)) {
            fprintf(stderr, "rocesim sweep: --rank-wait %s: expected a number of seconds above 0 (at most 1e9)\n",
                    rank_wait);
            rc = 2;
            goto out;
        }
    }
    GError *err = NULL;
    if (!sweep_prepare_dir(&s, &err)) {
        fprintf(stderr, "rocesim sweep: %s\n", err->message);
        g_error_free(err);
        rc = 2;
        goto out;
    }
    gboolean mpi = s.mpi.size > 1, root = s.mpi.rank == 0;
    if (mpi && !root)
        sweep_mark_rank_started(&s); /* for rank 0's wait: this rank writes this folder */
    GArray *mine = g_array_new(FALSE, FALSE, sizeof(guint));
    guint valid = 0;
    for (guint i = 0; i < s.points->len; i++) {
        const struct sweep_point *p = g_ptr_array_index(s.points, i);
        if (p->state == SP_INVALID)
            continue;
        valid++;
        if (mpi_split_owns(&s.mpi, i))
            g_array_append_val(mine, i);
    }
    if (!o.quiet && root) {
        GString *g = g_string_new(NULL);
        sweep_describe_grid(&s, g);
        if (s.replicates > 1)
            printf("rocesim sweep: %u configurations x %u seeds = %u points, %u at a time%s -> %s/\n%s\n", s.nconfigs,
                   s.replicates, s.points->len, s.jobs, mpi ? " per rank" : "", s.out, g->str);
        else
            printf("rocesim sweep: %u points, %u at a time%s -> %s/\n%s\n", s.points->len, s.jobs,
                   mpi ? " per rank" : "", s.out, g->str);
        if (mpi)
            printf("  MPI: %d ranks (%s), rank r runs points i with i %% %d == r\n", s.mpi.size, s.mpi.source,
                   s.mpi.size);
        g_string_free(g, TRUE);
        fflush(stdout);
    }
    if (root)
        sweep_note_invalid(&s);
    s.prog.total = mine->len;
    double t0 = g_get_monotonic_time() / 1e6;
    enum sweep_result r = sweep_run(&s, (const guint *)mine->data, mine->len, NULL, NULL);
    g_array_free(mine, TRUE);
    if (r == SWEEP_FINISHED && mpi && root) {
        s.prog.total = valid;
        r = sweep_wait_others(&s);
    }
    sweep_progress_end(&s);
    guint ran = s.prog.ran, failed = sweep_count_state(&s, SP_FAILED), done = sweep_count_state(&s, SP_DONE);
    guint reused = 0, stale = 0;
    for (guint i = 0; i < s.points->len; i++) {
        const struct sweep_point *p = g_ptr_array_index(s.points, i);
        reused += p->reused;
        stale += p->stale && p->state == SP_DONE && !p->reused;
    }
    double wall = g_get_monotonic_time() / 1e6 - t0;
    if (r == SWEEP_INTERRUPTED) {
        fprintf(stderr, "rocesim sweep: interrupted by %s after %u point%s; run the same command again to finish "
                        "the %u missing\n", g_strsignal(s.interrupted), ran, ran == 1 ? "" : "s",
                valid - done - failed);
        rc = 1;
        goto out;
    }
    if (r == SWEEP_RANKS_DIFFER || r == SWEEP_RANK_UNSEEN) {
        fprintf(stderr, "rocesim sweep: %s\n", s.rank_problem);
        rc = 2;
        goto out;
    }
    if (mpi && !root) {
        sweep_mark_rank_done(&s); /* for rank 0's wait: the grid this rank ran */
        /* mpirun aborts the whole launch when a rank exits non-zero: rank 0 reports failures */
        if (!o.quiet)
            printf("rocesim sweep: rank %d: %u run, %u already done, %u failed\n", s.mpi.rank, ran, reused,
                   s.prog.failed);
        rc = 0;
        goto out;
    }
    if (s.replicates > 1 ? !sweep_write_csv(&s, "sweep-runs.csv", &err) || !sweep_write_config_csv(&s, &err)
                         : !sweep_write_csv(&s, "sweep.csv", &err)) {
        fprintf(stderr, "rocesim sweep: %s\n", err->message);
        g_error_free(err);
        rc = 1;
        goto out;
    }
    GPtrArray *metrics = sweep_metric_names(&s);
    if (!o.no_plots)
        sweep_plots(&s, metrics);
    g_ptr_array_unref(metrics);
    if (!o.quiet) {
        if (mpi)
            printf("rocesim sweep: %u points over %d ranks: %u ok, %u failed, %u invalid; rank 0 ran %u and found %u "
                   "already done; %.1f s\n", s.points->len, s.mpi.size, done, failed, sweep_count_state(&s, SP_INVALID), ran,
                   reused, wall);
        else
            printf("rocesim sweep: %u points: %u run now, %u already done, %u failed, %u invalid; %.1f s\n",
                   s.points->len, ran, reused, failed, sweep_count_state(&s, SP_INVALID), wall);
        if (stale)
            printf("  %u point%s had results from other settings and ran again\n", stale, stale == 1 ? "" : "s");
        printf("results: %s/sweep.csv\n", s.out);
    }
    guint deadlocked = 0;
    for (guint i = 0; i < s.points->len; i++)
        deadlocked += sweep_point_deadlocked(g_ptr_array_index(s.points, i));
    if (deadlocked)
        fprintf(stderr, "rocesim sweep: note: %u point%s stopped at a PFC deadlock (status deadlock in sweep.csv; "
                        "their transfer figures cover only what finished)\n", deadlocked, deadlocked == 1 ? "" : "s");
    if (failed) {
        fprintf(stderr, "rocesim sweep: %u of %u points failed:\n", failed, valid);
        sweep_list_failures(&s);
    }
    rc = failed ? 1 : 0;
out:
    g_free(rank_wait);
    sweep_free(&s);
    sweep_section_clear(&sec);
    sweep_opts_clear(&o);
    return rc;
}
