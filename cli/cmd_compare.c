/* `rocesim compare DIR_A DIR_B`: the command line of analysis/compare.c, and its exit status
 * (0 all within tolerance, 1 some metric out of tolerance, 2 bad input). */
#include <glib.h>
#include <stdio.h>
#include "analysis/compare.h"
#include "cli/commands.h"

int cmd_compare(int argc, char **argv)
{
    char *tol_s = NULL, *out_s = NULL;
    char **floor_s = NULL, **more_a = NULL, **more_b = NULL;
    GOptionEntry entries[] = {
        { "tolerance", 't', 0, G_OPTION_ARG_STRING, &tol_s,
          "Relative tolerance against A, e.g. 0.05 or 5% (default 0.05)", "X" },
        { "floor", 0, 0, G_OPTION_ARG_STRING_ARRAY, &floor_s,
          "Absolute difference always accepted, per unit kind (count, time [ns], bytes, "
          "fraction, ratio, GBps, Gbps, all) or per metric key in its own unit; repeatable",
          "NAME=VALUE" },
        { "more-a", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &more_a,
          "Another replicate of A (same settings, another seed); repeatable", "DIR" },
        { "more-b", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &more_b, "Another replicate of B; repeatable", "DIR" },
        { "output", 'o', 0, G_OPTION_ARG_FILENAME, &out_s,
          "Folder for compare.html, compare.json and overlay figures (default "
          "DIR_B/compare-vs-NAME_OF_A)", "OUTDIR" },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    GOptionContext *ctx = g_option_context_new("DIR_A DIR_B");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_summary(
        ctx, "Compare two results folders (e.g. simulation against the lab, or two settings): every "
             "headline metric of summary.json, per-job figures and per-port queue depths, with a verdict "
             "and which run is better.");
    g_option_context_set_description(
        ctx, "A is the reference. A row is within tolerance when |B-A| <= X*|A| or |B-A| <= its\n"
             "floor. Default floors: count 0, time 100 ns, bytes 10000, fraction 0.001,\n"
             "ratio 0.01, GBps/Gbps 0.01. Metrics present in one run only are shown, not held\n"
             "against B. engine (wall-clock) figures are ignored. A differing metric with a\n"
             "direction (lower is better for times, queues, drops and pauses; higher for\n"
             "bandwidths) names the better run. With replicates on both sides (--more-a,\n"
             "--more-b) headline metrics are means ± 95% confidence, and a difference within\n"
             "the run-to-run noise (Welch's t-test) does not count. Output: OUTDIR/compare.html,\n"
             "compare.json (every row, for scripts) and overlay figures (gnuplot).\n"
             "Exit status: 0 all within tolerance, 1 some metric out of tolerance, 2 bad input.\n");
    char **args = g_new0(char *, argc + 1);
    for (int i = 0; i < argc; i++)
        args[i] = g_strdup(argv[i]);
    GError *err = NULL;
    enum compare_outcome r = COMPARE_BAD_INPUT;
    if (!g_option_context_parse_strv(ctx, &args, &err)) {
        g_printerr("rocesim compare: %s\n", err->message);
        g_error_free(err);
    } else if (g_strv_length(args) != 3) {
        g_printerr("rocesim compare: expected two results folders: rocesim compare DIR_A DIR_B "
                   "[--tolerance X] [-o OUTDIR]\n");
    } else {
        struct compare_opts o = { tol_s, floor_s, more_a, more_b, out_s };
        r = compare_folders(args[1], args[2], &o);
    }
    g_free(tol_s);
    g_free(out_s);
    g_strfreev(floor_s);
    g_strfreev(more_a);
    g_strfreev(more_b);
    g_strfreev(args);
    g_option_context_free(ctx);
    return r == COMPARE_SAME ? 0 : r == COMPARE_DIFFERENT ? 1 : 2;
}
