/* `rocesim plot DIR`: redraws a results folder's figures and report (analysis/plot.c,
 * analysis/report.c) and chooses the exit status. */
#include <glib.h>
#include <stdio.h>
#include "analysis/metrics.h"
#include "analysis/plot.h"
#include "analysis/report.h"
#include "cli/commands.h"

int cmd_plot(int argc, char **argv)
{
    GOptionContext *ctx = g_option_context_new("DIR");
    g_option_context_set_summary(ctx, "(Re)draw the figures of a results folder into DIR/plots "
                                      "(gnuplot scripts, PNG and SVG) and write DIR/report.html.");
    g_option_context_set_description(
        ctx, "The scripts in DIR/plots can be edited and re-run: cd DIR/plots && gnuplot NAME.gp\n"
             "Without gnuplot the scripts and the report are still written, with a warning.\n"
             "Exit status: 0 done (possibly with warnings), 1 a write failed (disk full), 2 bad input.\n");
    char **args = g_new0(char *, argc + 1);
    for (int i = 0; i < argc; i++)
        args[i] = g_strdup(argv[i]);
    GError *err = NULL;
    int rc = 0;
    if (!g_option_context_parse_strv(ctx, &args, &err)) {
        g_printerr("rocesim plot: %s\n", err->message);
        rc = 2;
        goto out;
    }
    if (g_strv_length(args) != 2) {
        g_printerr("rocesim plot: expected one results folder, e.g. rocesim plot results/run1\n");
        rc = 2;
        goto out;
    }
    const char *dir = args[1];
    if (!g_file_test(dir, G_FILE_TEST_IS_DIR)) {
        g_printerr("rocesim plot: %s: %s\n", dir,
                   g_file_test(dir, G_FILE_TEST_EXISTS) ? "not a folder: expected a results folder"
                                                        : "no such results folder");
        rc = 2;
        goto out;
    }
    results_summary *s = results_summary_read_dir(dir, &err);
    if (!s) {
        g_printerr("rocesim plot: %s\n", err->message);
        rc = 2;
        goto out;
    }
    results_summary_free(s);
    GError *pe = NULL;
    gboolean plotted = plot_results(dir, &pe);
    if (!plotted) {
        gboolean io = pe->domain == PLOT_ERROR && pe->code == PLOT_ERROR_IO;
        g_printerr("rocesim plot: %s%s\n", io ? "" : "warning: ", pe->message);
        /* A broken input file is bad input; a failed write (disk full) is a failure; a
         * missing gnuplot is only a warning. */
        if (pe->domain == PLOT_ERROR && pe->code == PLOT_ERROR_INPUT)
            rc = 2;
        g_error_free(pe);
        if (io) {
            rc = 1;
            goto out;
        }
    }
    if (!report_write(dir, &err)) {
        /* the folder was read above: what fails here is writing report.html */
        g_printerr("rocesim plot: %s\n", err->message);
        rc = 1;
        goto out;
    }
    char *plots = g_build_filename(dir, "plots", NULL);
    char *report = g_build_filename(dir, "report.html", NULL);
    size_t n;
    const plot_desc *cat = plot_catalogue(&n);
    guint drawn = 0;
    for (size_t i = 0; i < n; i++) {
        char *f = g_strdup_printf("%s.png", cat[i].name);
        char *p = g_build_filename(plots, f, NULL);
        drawn += g_file_test(p, G_FILE_TEST_IS_REGULAR);
        g_free(p);
        g_free(f);
    }
    printf("wrote %s (%u figure%s in %s)\n", report, drawn, drawn == 1 ? "" : "s", plots);
    g_free(plots);
    g_free(report);
out:
    if (err)
        g_error_free(err);
    g_strfreev(args);
    g_option_context_free(ctx);
    return rc;
}
