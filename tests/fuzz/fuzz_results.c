/* The results-folder readers behind `compare` and `plot`: the input is a folder, files
 * separated by "----- NAME" lines (summary.json, transfers.csv, queues.csv, ...). Figures are
 * scripted (no gnuplot on PATH) and report.html is written; compare reads the folder twice. */
#include "analysis/metrics.h"
#include "analysis/plot.h"
#include "analysis/report.h"
#include "cli/commands.h"
#include "tests/fuzz/fuzz.h"
#include <stdio.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *dir = fuzz_tree("res", data, size);
    GError *err = NULL;
    results_summary *s = results_summary_read_dir(dir, &err);
    if (s) {
        results_summary_free(s);
        if (!report_write(dir, &err))
            g_clear_error(&err);
    } else {
        g_clear_error(&err);
    }
    if (!plot_results(dir, &err))
        g_clear_error(&err);
    char *out = g_build_filename(fuzz_dir(), "cmp", NULL);
    rmtree(out);
    char *argv[] = { "compare", dir, dir, "-o", out, NULL };
    /* compare prints its table: keep the fuzzer's output readable */
    fflush(stdout);
    int saved = dup(1);
    FILE *devnull = freopen("/dev/null", "w", stdout);
    (void)devnull;
    cmd_compare(5, argv);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    g_free(out);
    g_free(dir);
    return 0;
}
