/* What `rocesim sweep` and `rocesim tune` share (see sweep_cli.h). */
#include "cli/sweep_cli.h"
#include "cli/run.h"
#include <stdio.h>
#include <string.h>
#include "analysis/plot.h"
#include "cli/commands.h"
#include "sim/cpus.h"

void sweep_opts_clear(struct sweep_opts *o)
{
    g_strfreev(o->vary);
    g_strfreev(o->sets);
    g_strfreev(o->constraints);
    g_free(o->seed);
    g_free(o->workers);
    g_free(o->out);
    g_free(o->objective);
    g_free(o->rank);
}

const char *const sweep_vary_help =
    "Values of a scenario key, e.g. switch.ecn_kmin=50KB,100KB, 50KB..400KB*2 (geometric) or "
    "0.01..0.2+0.05 (linear, end included when reached); repeat for a grid";

int sweep_cli_setup(const char *cmd, const char *summary, int argc, char **argv, GOptionEntry *extra, struct sweep_opts *o,
                 struct sweep_section *sec, struct sweep *s)
{
    GOptionEntry entries[] = {
        { "vary", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->vary, sweep_vary_help, "SECTION.KEY=VALUES" },
        { "jobs", 'j', 0, G_OPTION_ARG_INT, &o->jobs, "Points run at once (default: the cores available, over --workers)", "N" },
        { "workers", 0, 0, G_OPTION_ARG_STRING, &o->workers,
          "Simulate each point on N threads, with results identical to one (default 1; auto: the points running "
          "at once share out the CPUs, each pinned to its share and on one thread per CPU of it)",
          "N|auto" },
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
    guint64 workers = 1;
    gboolean workers_auto = o->workers && !strcmp(o->workers, "auto");
    if (!err && o->workers && !workers_auto) {
        char *end;
        workers = g_ascii_strtoull(o->workers, &end, 10);
        if (!*o->workers || *end || workers < 1 || workers > RUN_MAX_WORKERS)
            g_set_error(&err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--workers '%s': expected a whole number from 1 to %d, or auto", o->workers,
                        RUN_MAX_WORKERS);
    }
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
    s->workers = (guint)workers;
    s->workers_auto = workers_auto;
    if (!o->jobs && s->workers > 1) /* the cores shared out: points x threads */
        s->jobs = MAX(1, s->jobs / s->workers);
    /* points that run at once, each on W threads, spinning at their windows' ends */
    guint at_once = MIN(s->jobs, s->points->len), cpus = cpus_available();
    if (!s->quiet && s->mpi.size <= 1 && s->workers > 1 && at_once * s->workers > cpus)
        fprintf(stderr,
                "rocesim %s: warning: %u point%s at once on %u threads each, %u threads on %u CPU%s: they take "
                "turns, so each point runs slower (the results are the same; --workers auto shares the CPUs "
                "out)\n",
                cmd, at_once, at_once == 1 ? "" : "s", s->workers, at_once * s->workers, cpus, cpus == 1 ? "" : "s");
    return 0;
}

guint sweep_count_state(const struct sweep *s, enum sweep_state st)
{
    guint n = 0;
    for (guint i = 0; i < s->points->len; i++)
        n += ((const struct sweep_point *)g_ptr_array_index(s->points, i))->state == st;
    return n;
}

void sweep_describe_grid(const struct sweep *s, GString *g)
{
    for (guint d = 0; d < s->dims->len; d++) {
        const struct sweep_dim *dim = g_ptr_array_index(s->dims, d);
        g_string_append_printf(g, "%s  %s:", d ? "\n" : "", dim->key);
        for (guint v = 0; v < dim->values->len; v++)
            g_string_append_printf(g, "%s%s", v ? "," : " ", (const char *)g_ptr_array_index(dim->values, v));
    }
}

void sweep_note_invalid(const struct sweep *s)
{
    guint n = sweep_count_state(s, SP_INVALID);
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

void sweep_list_failures(const struct sweep *s)
{
    for (guint i = 0; i < s->points->len; i++) {
        const struct sweep_point *p = g_ptr_array_index(s->points, i);
        if (p->state == SP_FAILED)
            fprintf(stderr, "  failed: %s (%s), stderr in %s/%s.log\n", p->name, p->failure ? p->failure : "?",
                    s->points_dir, p->name);
    }
}

/* Writes plots/NAME.gp and NAME.dat and runs gnuplot (analysis/plot.c's helpers); a figure
 * that cannot be drawn is a note, never a failure. REPLAY_BODY: the script draws BODY again
 * for the SVG (a multiplot cannot be replotted). */
void sweep_draw(const struct sweep *s, const char *name, GString *gp, GString *dat, gboolean replay_body,
                const char *body)
{
    char *dir = g_build_filename(s->out, "plots", NULL);
    char *gnuplot = plot_find_gnuplot();
    char *datname = g_strdup_printf("%s.dat", name), *gpname = g_strdup_printf("%s.gp", name);
    GError *e = NULL;
    if (replay_body)
        g_string_append(gp, body);
    g_string_append(gp, "unset multiplot\nset output\n");
    if (g_mkdir_with_parents(dir, 0755) != 0)
        fprintf(stderr, "rocesim %s: note: cannot create %s: plots skipped\n", s->cmd, dir);
    else if (!plot_write_file(dir, datname, dat, &e) || !plot_write_file(dir, gpname, gp, &e))
        fprintf(stderr, "rocesim %s: note: plots skipped: %s\n", s->cmd, e->message);
    else if (!gnuplot)
        fprintf(stderr, "rocesim %s: note: gnuplot not found: plots skipped (the script is %s/%s; "
                        "apt-get install gnuplot-nox)\n", s->cmd, dir, gpname);
    else if (!plot_run_script(gnuplot, dir, name, &e))
        fprintf(stderr, "rocesim %s: note: %s\n", s->cmd, e->message);
    else if (!s->quiet)
        printf("plot: %s/%s.png\n", dir, name);
    g_clear_error(&e);
    g_free(datname);
    g_free(gpname);
    g_free(gnuplot);
    g_free(dir);
}
