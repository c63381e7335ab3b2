/* Figures of a results folder, drawn by gnuplot.
 *
 * plot_results() writes one gnuplot script per figure into DIR/plots/NAME.gp, with small
 * derived data files NAME.dat next to it (top series only, decimated for the screen), then runs
 * gnuplot on each to produce NAME.png (pngcairo 1000x560) and NAME.svg. The scripts are meant
 * to be tweaked and re-run by hand: `cd DIR/plots && gnuplot NAME.gp`.
 * A figure whose input file is missing or empty is skipped, not an error. */
#ifndef ROCESIM_PLOT_H
#define ROCESIM_PLOT_H
#include <glib.h>
#include <stddef.h>
#include "analysis/metrics.h"

#define PLOT_ERROR (plot_error_quark())
typedef enum {
    PLOT_ERROR_NO_GNUPLOT,  /* gnuplot is not on PATH: a warning for the caller, not a failure */
    PLOT_ERROR_GNUPLOT,     /* gnuplot ran and failed, or produced no output */
    PLOT_ERROR_INPUT,       /* the results folder or one of its files is unusable */
    PLOT_ERROR_IO,          /* writing a script or data file failed */
} plot_error_code;
GQuark plot_error_quark(void);

#define PLOT_NO_GNUPLOT_MSG "gnuplot not found: plots skipped (apt-get install gnuplot-nox)"
#define PLOT_WIDTH 1000
#define PLOT_HEIGHT 560

/* The figures plot_results can draw, in report order. */
typedef struct {
    const char *name;     /* file stem in plots/: NAME.gp, NAME.png, NAME.svg */
    const char *title;
    const char *caption;  /* what it shows and where the data comes from */
} plot_desc;
const plot_desc *plot_catalogue(size_t *n);

/* Draws every figure it has data for. Scripts and data files are written even when gnuplot is
 * missing (error PLOT_ERROR_NO_GNUPLOT with message PLOT_NO_GNUPLOT_MSG); print that as a
 * warning. On other errors the figures that could be drawn are still drawn and err lists the
 * problems. Stale figures of a previous run in plots/ are removed first. */
gboolean plot_results(const char *dir, GError **err);

/* ---- helpers shared with compare --------------------------------------------------------- */

/* Absolute path of gnuplot on PATH, or NULL. g_free() the result. */
char *plot_find_gnuplot(void);

/* Runs `gnuplot NAME.gp` in dir and checks that NAME.png and NAME.svg are there and non-empty. */
gboolean plot_run_script(const char *gnuplot, const char *dir, const char *name, GError **err);

/* Appends text as a gnuplot single-quoted string (quotes doubled). */
void plot_gp_quote(GString *gp, const char *text);

/* Opening lines of a script: comment, encoding, PNG terminal and output NAME.png, styles. */
void plot_gp_begin(GString *gp, const char *name, const char *comment);
/* The same at another size (multi-panel figures). */
void plot_gp_begin_size(GString *gp, const char *name, const char *comment, int width, int height);
/* Closing lines: the same figure again as NAME.svg. */
void plot_gp_end(GString *gp, const char *name);
/* Only the switch to the SVG terminal and NAME.svg, for a script that then draws its figure
 * again itself (a multiplot cannot be replotted). */
void plot_gp_svg(GString *gp, const char *name, int width, int height);

/* A unit for a time axis spanning tmax_ns: sets *div (ns per unit) and returns "ns", "µs",
 * "ms" or "s". */
const char *plot_time_unit(double tmax_ns, double *div);

/* Appends a loaded series as "t v" lines, decimated to about `bins` time buckets when it is
 * longer: each bucket keeps its first, lowest, highest and last sample, so peaks survive.
 * When t_end is past the last sample, the last value is repeated at t_end (a step function
 * holds its value), then the block ends with two blank lines (a gnuplot `index`). */
void plot_dat_series(GString *dat, const results_series *s, guint bins, double t_end);

/* Writes contents to dir/file; error names the path. */
gboolean plot_write_file(const char *dir, const char *file, const GString *contents,
                         GError **err);

#endif
