/* `rocesim sweep`: a grid of scenario overrides run in parallel, gathered into sweep.csv.
 * `rocesim tune`: a coarse grid, then refinement around the best points that meet the
 * constraints, within a budget of runs. The machinery is in sim/sweep.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tune/sweep_stats.h"
#include "cli/commands.h"
#include "results_io/csv.h"
#include "tune/sweep.h"

struct opts {
    char **vary, **sets, **constraints;
    char *seed, *out, *objective, *rank;
    gint jobs, budget, replicates;
    double constraint_share;
    gboolean quiet, no_plots, minimize, maximize;
};

static void opts_clear(struct opts *o)
{
    g_strfreev(o->vary);
    g_strfreev(o->sets);
    g_strfreev(o->constraints);
    g_free(o->seed);
    g_free(o->out);
    g_free(o->objective);
    g_free(o->rank);
}

static const char *const vary_help =
    "Values of a scenario key, e.g. switch.ecn_kmin=50KB,100KB, 50KB..400KB*2 (geometric) or "
    "0.01..0.2+0.05 (linear, end included when reached); repeat for a grid";

/* Parses the command line and builds the sweep. Returns 0, or the exit status (2) after
 * printing the error. */
static int setup(const char *cmd, const char *summary, int argc, char **argv, GOptionEntry *extra, struct opts *o,
                 struct sweep_section *sec, struct sweep *s)
{
    GOptionEntry entries[] = {
        { "vary", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->vary, vary_help, "SECTION.KEY=VALUES" },
        { "jobs", 'j', 0, G_OPTION_ARG_INT, &o->jobs, "Points run at once (default: the cores available)", "N" },
        { "output", 'o', 0, G_OPTION_ARG_FILENAME, &o->out, "Sweep folder (default: the scenario's [output] dir + -sweep or -tune)", "DIR" },
        { "set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->sets, "Override a scenario key in every point (repeatable)", "SECTION.KEY=VALUE" },
        { "seed", 0, 0, G_OPTION_ARG_STRING, &o->seed, "Random seed of every point (same as --set scenario.seed=N)", "N" },
        { "replicates", 0, 0, G_OPTION_ARG_INT, &o->replicates, "Run each configuration under N seeds (the scenario's and the N-1 after it); report mean, sd and 95% CI", "N" },
        { "quiet", 'q', 0, G_OPTION_ARG_NONE, &o->quiet, "Print nothing but errors and failed points", NULL },
        { "no-plots", 0, 0, G_OPTION_ARG_NONE, &o->no_plots, "Do not draw plots", NULL },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    GOptionContext *ctx = g_option_context_new("SCENARIO");
    g_option_context_set_summary(ctx, summary);
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (extra)
        g_option_context_add_main_entries(ctx, extra, NULL);
    GError *err = NULL;
    gboolean ok = g_option_context_parse(ctx, &argc, &argv, &err);
    g_option_context_free(ctx);
    if (ok && argc != 2)
        g_set_error(&err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "expected exactly one scenario file (see --help)");
    if (!err && (o->replicates < 0 || o->replicates > SWEEP_MAX_REPLICATES))
        g_set_error(&err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--replicates %d: expected a number of seeds from 1 to %d",
                    o->replicates, SWEEP_MAX_REPLICATES);
    if (!err && o->jobs < 0)
        g_set_error(&err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "-j %d: expected a number of processes of 1 or more",
                    o->jobs);
    if (!err && o->seed) {
        char *end;
        g_ascii_strtoull(o->seed, &end, 10);
        if (!*o->seed || *end)
            g_set_error(&err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--seed '%s': expected a whole number", o->seed);
        else {
            GStrvBuilder *b = g_strv_builder_new();
            if (o->sets)
                g_strv_builder_addv(b, (const char **)o->sets);
            char *set = g_strdup_printf("scenario.seed=%s", o->seed);
            g_strv_builder_add(b, set);
            g_free(set);
            g_strfreev(o->sets);
            o->sets = g_strv_builder_end(b);
            g_strv_builder_unref(b);
        }
    }
    if (!err)
        sweep_section_read(argv[1], o->sets, sec, &err);
    GPtrArray *dims = g_ptr_array_new_with_free_func(sweep_dim_free);
    if (!err) {
        /* command-line --vary replaces the [sweep] section's vary lines */
        if (o->vary) {
            for (int i = 0; o->vary[i] && !err; i++) {
                struct sweep_dim *d = sweep_dim_parse(o->vary[i], &err);
                if (d)
                    g_ptr_array_add(dims, d);
            }
        } else {
            for (guint i = 0; i < sec->vary->len && !err; i++) {
                struct sweep_dim *d = sweep_dim_parse(g_ptr_array_index(sec->vary, i), &err);
                if (d)
                    g_ptr_array_add(dims, d);
            }
        }
    }
    if (err) {
        fprintf(stderr, "rocesim %s: %s\n", cmd, err->message);
        g_error_free(err);
        g_ptr_array_unref(dims);
        return 2;
    }
    guint replicates = o->replicates ? (guint)o->replicates : sec->replicates;
    if (!sweep_init(s, cmd, argv[1], o->sets, dims, o->out, (guint)o->jobs, replicates, o->quiet, &err)) {
        fprintf(stderr, "rocesim %s: %s\n", cmd, err->message);
        g_error_free(err);
        return 2;
    }
    return 0;
}

static guint count_state(const struct sweep *s, enum sweep_state st)
{
    guint n = 0;
    for (guint i = 0; i < s->points->len; i++)
        n += ((const struct sweep_point *)g_ptr_array_index(s->points, i))->state == st;
    return n;
}

static void describe_grid(const struct sweep *s, GString *g)
{
    for (guint d = 0; d < s->dims->len; d++) {
        const struct sweep_dim *dim = g_ptr_array_index(s->dims, d);
        g_string_append_printf(g, "%s  %s:", d ? "\n" : "", dim->key);
        for (guint v = 0; v < dim->values->len; v++)
            g_string_append_printf(g, "%s%s", v ? "," : " ", (const char *)g_ptr_array_index(dim->values, v));
    }
}

static void note_invalid(const struct sweep *s)
{
    guint n = count_state(s, SP_INVALID);
    if (!n)
        return;
    for (guint i = 0; i < s->points->len; i++) {
        const struct sweep_point *p = g_ptr_array_index(s->points, i);
        if (p->state == SP_INVALID) {
            fprintf(stderr, "rocesim %s: note: %u combination%s not valid and will not run, e.g. %s: %s\n", s->cmd,
                    n, n == 1 ? " is" : "s are", p->name, p->invalid);
            return;
        }
    }
}

static void list_failures(const struct sweep *s)
{
    for (guint i = 0; i < s->points->len; i++) {
        const struct sweep_point *p = g_ptr_array_index(s->points, i);
        if (p->state == SP_FAILED)
            fprintf(stderr, "  failed: %s (%s), stderr in %s/%s.log\n", p->name, p->failure ? p->failure : "?",
                    s->points_dir, p->name);
    }
}

/* ======================================================================================
 * Plots (gnuplot; a plot that cannot be drawn is a note, never a failure)
 * ====================================================================================== */

static void gp_quote(GString *g, const char *text)
{
    g_string_append_c(g, '\'');
    for (const char *p = text; *p; p++) {
        if (*p == '\'')
            g_string_append_c(g, '\'');
        if (*p != '\n')
            g_string_append_c(g, *p);
    }
    g_string_append_c(g, '\'');
}

static void gp_begin(GString *gp, const char *name, int w, int h)
{
    g_string_append_printf(gp, "# rocesim: re-draw from this folder with: gnuplot %s.gp\n"
                               "set encoding utf8\n"
                               "set terminal pngcairo size %d,%d noenhanced font 'DejaVu Sans,9'\n"
                               "set output '%s.png'\n"
                               "set border 3 lc rgb '#444444'\nset tics nomirror\n"
                               "set grid lc rgb '#dddddd' lt 1 lw 1\n",
                           name, w, h, name);
}

static void gp_end(GString *gp, const char *name, int w, int h)
{
    g_string_append_printf(gp, "\nset terminal svg size %d,%d noenhanced font 'DejaVu Sans,9' background '#ffffff'\n"
                               "set output '%s.svg'\n",
                           w, h, name);
}

/* Writes plots/NAME.gp and NAME.dat, runs gnuplot; prints a note on any problem. */
static void draw(const struct sweep *s, const char *name, GString *gp, GString *dat, gboolean replay_body,
                 const char *body)
{
    char *dir = g_build_filename(s->out, "plots", NULL);
    char *gnuplot = g_find_program_in_path("gnuplot");
    GError *e = NULL;
    char *f = NULL;
    if (g_mkdir_with_parents(dir, 0755) != 0) {
        fprintf(stderr, "rocesim %s: note: cannot create %s: plots skipped\n", s->cmd, dir);
        goto done;
    }
    if (replay_body)
        g_string_append(gp, body);
    g_string_append(gp, "unset multiplot\nset output\n");
    char *datname = g_strdup_printf("%s.dat", name), *gpname = g_strdup_printf("%s.gp", name);
    char *datpath = g_build_filename(dir, datname, NULL), *gppath = g_build_filename(dir, gpname, NULL);
    gboolean ok = sweep_write_file(datpath, dat, &e) && sweep_write_file(gppath, gp, &e);
    g_free(datpath);
    g_free(gppath);
    g_free(datname);
    if (!ok) {
        fprintf(stderr, "rocesim %s: note: plots skipped: %s\n", s->cmd, e->message);
        g_error_free(e);
        g_free(gpname);
        goto done;
    }
    if (!gnuplot) {
        fprintf(stderr, "rocesim %s: note: gnuplot not found: plots skipped (the script is %s/%s; "
                        "apt-get install gnuplot-nox)\n", s->cmd, dir, gpname);
        g_free(gpname);
        goto done;
    }
    const char *argv[] = { gnuplot, gpname, NULL };
    char *sout = NULL, *serr = NULL;
    gint status = 0;
    if (!g_spawn_sync(dir, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &sout, &serr, &status, &e)) {
        fprintf(stderr, "rocesim %s: note: cannot run gnuplot: %s\n", s->cmd, e->message);
        g_clear_error(&e);
    } else if (!g_spawn_check_wait_status(status, NULL)) {
        fprintf(stderr, "rocesim %s: note: gnuplot failed on %s/%s: %s\n", s->cmd, dir, gpname,
                serr ? g_strstrip(serr) : "");
    } else {
        f = g_strdup_printf("%s/%s.png", dir, name);
        if (!s->quiet)
            printf("plot: %s\n", f);
    }
    g_free(sout);
    g_free(serr);
    g_free(gpname);
done:
    g_free(f);
    g_free(gnuplot);
    g_free(dir);
}

/* A configuration's value of a metric: the run's, or the mean over its replicates. */
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
        gp_quote(gp, g_ptr_array_index(d->values, v));
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
    gp_begin(gp, "sweep", w, h);
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
    gp_quote(body, title);
    g_free(title);
    g_string_append(body, "\n");
    xtics(body, "x", dx);
    g_string_append_printf(body, "set xrange [-0.5:%u.5]\nset xlabel ", dx->values->len - 1);
    gp_quote(body, dx->key);
    g_string_append(body, "\n");
    if (neff == 2) {
        const struct sweep_dim *dy = g_ptr_array_index(s->dims, eff[1]);
        xtics(body, "y", dy);
        g_string_append_printf(body, "set yrange [-0.5:%u.5]\nset ylabel ", dy->values->len - 1);
        gp_quote(body, dy->key);
        g_string_append(body, "\nset palette defined (0 '#440154', 1 '#3b528b', 2 '#21918c', 3 '#5ec962', "
                              "4 '#fde725')\nunset grid\n");
    }
    for (guint m = 0; m < shown->len; m++) {
        g_string_append(body, "set title ");
        gp_quote(body, g_ptr_array_index(shown, m));
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
    gp_end(gp, "sweep", w, h);
    draw(s, "sweep", gp, dat, TRUE, body->str);
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
    struct opts o = { 0 };
    struct sweep_section sec = { 0 };
    struct sweep s = { 0 };
    s.lock_fd = -1;
    int rc = setup("sweep", "Run a scenario over a grid of settings, N points at a time, each as its own process; "
                            "gather the headline metrics into DIR/sweep.csv. Re-running finishes what is missing. "
                            "Under mpirun the ranks share the points and rank 0 writes sweep.csv.",
                   argc, argv, NULL, &o, &sec, &s);
    if (rc)
        goto out;
    GError *err = NULL;
    if (!sweep_prepare_dir(&s, &err)) {
        fprintf(stderr, "rocesim sweep: %s\n", err->message);
        g_error_free(err);
        rc = 2;
        goto out;
    }
    gboolean mpi = s.mpi.size > 1, root = s.mpi.rank == 0;
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
        describe_grid(&s, g);
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
        note_invalid(&s);
    s.prog.total = mine->len;
    double t0 = g_get_monotonic_time() / 1e6;
    enum sweep_result r = sweep_run(&s, (const guint *)mine->data, mine->len, NULL, NULL);
    g_array_free(mine, TRUE);
    if (r == SWEEP_FINISHED && mpi && root) {
        s.prog.total = valid;
        r = sweep_wait_others(&s);
    }
    sweep_progress_end(&s);
    guint ran = s.prog.ran, failed = count_state(&s, SP_FAILED), done = count_state(&s, SP_DONE);
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
    if (mpi && !root) {
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
                   "already done; %.1f s\n", s.points->len, s.mpi.size, done, failed, count_state(&s, SP_INVALID), ran,
                   reused, wall);
        else
            printf("rocesim sweep: %u points: %u run now, %u already done, %u failed, %u invalid; %.1f s\n",
                   s.points->len, ran, reused, failed, count_state(&s, SP_INVALID), wall);
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
        list_failures(&s);
    }
    rc = failed ? 1 : 0;
out:
    sweep_free(&s);
    sweep_section_clear(&sec);
    opts_clear(&o);
    return rc;
}

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
        if (!g_hash_table_contains(p->metrics, need[i])) {
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

/* Number of violated conditions of configuration c (a missing metric violates), or -1 when
 * no run of it has a result with the objective. A constraint must hold on at least `share` of
 * the replicates; a deadlock, unfinished transfers or a failed run in any replicate make the
 * configuration infeasible. */
static int violations(const struct tuner *t, guint c, double *obj, GString *which)
{
    const struct sweep *s = t->s;
    if (!config_objective(t, c, obj))
        return -1;
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
    if (x->obj != y->obj)
        return (*(const gboolean *)maximize ? x->obj > y->obj : x->obj < y->obj) ? -1 : 1;
    return x->config < y->config ? -1 : x->config > y->config;
}

/* Evaluated configurations with results, best first: feasible ones by objective; when none is
 * feasible, all by fewest violated conditions, then objective. feasible_only: drop the
 * infeasible ones when some configuration is feasible. */
static GArray *tune_rank(const struct tuner *t, gboolean feasible_only)
{
    GArray *r = g_array_new(FALSE, FALSE, sizeof(struct ranked));
    gboolean any_feasible = FALSE;
    for (guint i = 0; i < t->order->len; i++) {
        guint c = g_array_index(t->order, guint, i);
        struct ranked x = { c, 0, 0 };
        x.viol = violations(t, c, &x.obj, NULL);
        if (x.viol < 0)
            continue;
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
            csv_number(g, obj, v >= 0);
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
        if (v < 0)
            continue;
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
    gp_begin(gp, "tune", 1000, 560);
    GString *body = g_string_new("set title ");
    char *title = g_strdup_printf("tune: %s (%s) per run, in order", t->objective, t->maximize ? "maximize" : "minimize");
    gp_quote(body, title);
    g_free(title);
    g_string_append_printf(body, "\nset xlabel 'run'\nset ylabel ");
    gp_quote(body, t->objective);
    g_string_append_printf(body, "\nset xrange [0:%u]\nset key outside right top\n"
                                 "plot 'tune.dat' using 1:($3==1 ? $2 : NaN) with points pt 7 ps 1.2 lc rgb '#2ca02c' title 'feasible', \\\n"
                                 "     'tune.dat' using 1:($3==0 ? $2 : NaN) with points pt 6 ps 1.2 lc rgb '#d62728' title 'violates a constraint', \\\n"
                                 "     'tune.dat' using 1:4 with steps lw 1.5 lc rgb '#1f77b4' title 'best feasible so far'\n",
                           t->order->len + 1);
    g_string_append(gp, body->str);
    gp_end(gp, "tune", 1000, 560);
    draw(s, "tune", gp, dat, TRUE, "replot\n");
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
static int tuner_configure(struct tuner *t, const struct opts *o, const struct sweep_section *sec,
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
static int tune_report(struct tuner *t, const struct opts *o, gboolean exhausted, double wall)
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
    guint failed = count_state(s, SP_FAILED);
    if (!o->quiet) {
        printf("rocesim tune: %u %s evaluated (%u coarse, %u refinement; %u %sreused from an earlier run), "
               "%u feasible, %u failed; %s; %.1f s\n",
               t->order->len, s->replicates > 1 ? "configurations" : "points", coarse, t->order->len - coarse, reused,
               s->replicates > 1 ? "runs " : "", feasible, failed,
               exhausted ? "no unevaluated neighbours left" : "budget spent", wall);
    }
    if (failed) {
        fprintf(stderr, "rocesim tune: %u point%s failed:\n", failed, failed == 1 ? "" : "s");
        list_failures(s);
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
    struct opts o = { 0 };
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
    int rc = setup("tune", "Search a grid of settings for the best value of a metric under constraints: a coarse "
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
        describe_grid(&s, grid);
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
    note_invalid(&s);
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
    opts_clear(&o);
    return rc;
}
