/* DIR/report.html: one self-contained page about a results folder (scenario, headline metrics,
 * warnings, busiest ports, jobs, engine figures and the figures of plots/). */
#ifndef ROCESIM_REPORT_H
#define ROCESIM_REPORT_H
#include <glib.h>

#include "results_io/read.h"

/* Rows of the busiest-ports table (the digest a run hands over keeps as many) */
#define REPORT_PORTS 12
/* Figures are embedded as base64 PNG when their total size stays under this, else linked. */
#define REPORT_EMBED_LIMIT (6u * 1024 * 1024)

/* Writes DIR/report.html from DIR/summary.json and whatever DIR/plots holds (call plot_results
 * first). Fails when summary.json is missing or malformed; the message names the file. */
gboolean report_write(const char *dir, GError **err);
/* The same from a summary already read: DIR's summary.json, or a run's digest of it
 * (summary_run_digest: its busiest ports only, ports_total counting them all). */
gboolean report_write_summary(const char *dir, const results_summary *s, GError **err);

/* What to call after a run: plot_results() then report_write(), or report_write_summary()
 * with s when it is not NULL. Plot problems (gnuplot not
 * installed, an unreadable CSV) do not fail it: they come back in *warning (g_free it; NULL
 * when there were none) for the caller to print. Fails only when report.html cannot be written
 * (summary.json missing or malformed, folder not writable). */
gboolean report_results(const char *dir, const results_summary *s, char **warning, GError **err);

/* ---- HTML helpers shared with compare ---------------------------------------------------- */

/* Appends text with &, <, >, ' and " escaped. */
void report_html_escape(GString *h, const char *text);
/* <!doctype html> ... <body>, with the shared stylesheet. */
void report_html_begin(GString *h, const char *title);
/* The image check (sets data-images, data-images-ok and data-images-failed on <body> once the
 * page has loaded, for tests/report_screenshot.sh) and the closing tags. */
void report_html_end(GString *h);
/* One <figure> for DIR/NAME.png: embedded as a data URI when `embed`, else linked as
 * PREFIX/NAME.svg. `prefix` is the path of DIR relative to the page ("plots" or "."). Links to
 * the SVG, PNG and gnuplot script go under the caption. FALSE when the PNG is missing. */
gboolean report_html_figure(GString *h, const char *dir, const char *prefix, const char *name,
                            const char *title, const char *caption, gboolean embed);
/* Total size of DIR/NAME.png for the listed names (to decide on embedding). */
guint64 report_png_bytes(const char *dir, const char *const *names, guint n);

#endif
