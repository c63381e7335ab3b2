/* Figures of a results folder: derived data + gnuplot scripts in DIR/plots, run by gnuplot.
 * See plot.h. */
#include "analysis/plot.h"
#include "sim/units.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

G_DEFINE_QUARK(rocesim-plot-error-quark, plot_error)

#define QUEUE_SERIES 6      /* busiest queues drawn */
#define RATE_SERIES 24      /* busiest flows drawn */
#define PFC_ROWS 30         /* most-paused queues in the Gantt chart */
#define UTIL_BARS 32        /* busiest ports in the utilisation bars */
#define SERIES_BINS 2000    /* time buckets per series: more than the plot has pixels */
#define CDF_POINTS 2000

static const plot_desc catalogue[] = {
    { "queue_depth", "Queue depth over time",
      "Egress queue depth of the busiest queues (highest peak) from queues.csv; dashed lines are "
      "the switch's ECN Kmin/Kmax and PFC XOFF thresholds when the scenario sets them." },
    { "flow_rates", "Sending rate per flow",
      "Congestion-control rate of the busiest flows (most data) over time, from rates.csv." },
    { "fct_cdf", "Flow completion time CDF",
      "Distribution of transfer completion times from transfers.csv; the dashed curve is the "
      "ideal (uncongested) completion time of the same transfers." },
    { "slowdown_cdf", "Slowdown CDF",
      "Distribution of slowdown (completion time / ideal completion time) from transfers.csv." },
    { "pfc_pauses", "PFC pause timeline",
      "One row per queue that was paused by PFC: boxes span pause to resume (pfc.csv)." },
    { "ecn_cnp", "ECN marks and CNPs over time",
      "ECN-marked packets and CNPs per sampling interval, from the counter time series of "
      "counters.csv." },
    { "utilisation", "Link utilisation per port",
      "Transmit utilisation of the busiest ports over the run (summary.json ports)." },
    { "collectives", "Collective time per iteration",
      "Completion time of each iteration of each collective job, from collectives.csv." },
};

const plot_desc *plot_catalogue(size_t *n)
{
    *n = G_N_ELEMENTS(catalogue);
    return catalogue;
}

/* ---- helpers ----------------------------------------------------------------------------- */

char *plot_find_gnuplot(void)
{
    return g_find_program_in_path("gnuplot");
}

void plot_gp_quote(GString *gp, const char *text)
{
    g_string_append_c(gp, '\'');
    for (const char *p = text; *p; p++) {
        if (*p == '\'')
            g_string_append_c(gp, '\'');
        if (*p == '\n')
            continue;
        g_string_append_c(gp, *p);
    }
    g_string_append_c(gp, '\'');
}

void plot_gp_begin(GString *gp, const char *name, const char *comment)
{
    plot_gp_begin_size(gp, name, comment, PLOT_WIDTH, PLOT_HEIGHT);
}

void plot_gp_begin_size(GString *gp, const char *name, const char *comment, int width, int height)
{
    static const char *const colours[] = { "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                           "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                           "#bcbd22", "#17becf" };
    g_string_append_printf(gp, "# rocesim: %s\n# Re-draw from this folder with: gnuplot %s.gp\n",
                           comment, name);
    /* noenhanced: node names such as spine_0 must not turn into subscripts. */
    g_string_append_printf(gp,
                           "set encoding utf8\n"
                           "set terminal pngcairo size %d,%d noenhanced font 'DejaVu Sans,10'\n"
                           "set output '%s.png'\n",
                           width, height, name);
    for (size_t i = 0; i < G_N_ELEMENTS(colours); i++)
        g_string_append_printf(gp, "set linetype %zu lc rgb '%s' lw 1.6 pt 7 ps 0.6\n", i + 1,
                               colours[i]);
    g_string_append(gp, "set linetype cycle 10\n"
                        "set border 3 lc rgb '#444444'\n"
                        "set tics nomirror\n"
                        "set grid lc rgb '#dddddd' lt 1 lw 1\n"
                        "set title font ',12'\n"
                        "set key opaque samplen 3\n");
}

void plot_gp_svg(GString *gp, const char *name, int width, int height)
{
    g_string_append_printf(gp,
                           "\nset terminal svg size %d,%d noenhanced font 'DejaVu Sans,10' "
                           "background '#ffffff'\n"
                           "set output '%s.svg'\n",
                           width, height, name);
}

void plot_gp_end(GString *gp, const char *name)
{
    plot_gp_svg(gp, name, PLOT_WIDTH, PLOT_HEIGHT);
    g_string_append(gp, "replot\n"
                        "set output\n");
}

const char *plot_time_unit(double tmax_ns, double *div)
{
    if (tmax_ns < 10e3) {
        *div = 1;
        return "ns";
    }
    if (tmax_ns < 10e6) {
        *div = 1e3;
        return "µs";
    }
    if (tmax_ns < 10e9) {
        *div = 1e6;
        return "ms";
    }
    *div = 1e9;
    return "s";
}

/* A point; an undefined value is written as NaN, which breaks gnuplot's line there. */
static void dat_point(GString *dat, double t, double v)
{
    if (isfinite(v))
        g_string_append_printf(dat, "%.17g %.17g\n", t, v);
    else
        g_string_append_printf(dat, "%.17g NaN\n", t);
}

void plot_dat_series(GString *dat, const results_series *s, guint bins, double t_end)
{
    const double *t = (const double *)s->t->data, *v = (const double *)s->v->data;
    guint n = s->t->len;
    g_string_append_printf(dat, "# %s: t_ns value\n", s->label);
    if (n <= 4 * bins || t[n - 1] <= t[0]) {
        for (guint i = 0; i < n; i++)
            dat_point(dat, t[i], v[i]);
    } else {
        double w = (t[n - 1] - t[0]) / bins;
        guint i = 0;
        while (i < n) {
            guint b = (guint)((t[i] - t[0]) / w);
            guint first = i, lo = i, hi = i, last = i;
            while (i < n && (guint)((t[i] - t[0]) / w) == b) {
                if (v[i] < v[lo])
                    lo = i;
                if (v[i] > v[hi])
                    hi = i;
                last = i++;
            }
            /* Emit the kept samples in time order, without repeats. */
            guint keep[4] = { first, lo < hi ? lo : hi, lo < hi ? hi : lo, last };
            guint prev = G_MAXUINT;
            for (int k = 0; k < 4; k++) {
                if (keep[k] == prev || (prev != G_MAXUINT && keep[k] < prev))
                    continue;
                dat_point(dat, t[keep[k]], v[keep[k]]);
                prev = keep[k];
            }
        }
    }
    if (n > 0 && t_end > t[n - 1])
        dat_point(dat, t_end, v[n - 1]);
    g_string_append(dat, "\n\n");
}

gboolean plot_write_file(const char *dir, const char *file, const GString *contents,
                         GError **err)
{
    char *path = g_build_filename(dir, file, NULL);
    GError *e = NULL;
    gboolean ok = g_file_set_contents(path, contents->str, (gssize)contents->len, &e);
    if (!ok) {
        g_set_error(err, PLOT_ERROR, PLOT_ERROR_IO, "%s", e->message);
        g_error_free(e);
    }
    g_free(path);
    return ok;
}

/* gnuplot exits 0 after a failed write (disk full): it leaves a PNG cut at a buffer's worth
 * and an empty SVG. A finished PNG ends with its IEND chunk, a finished SVG with </svg>. */
static gboolean complete_file(const char *dir, const char *name, const char *ext)
{
    static const unsigned char iend[12] = { 0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82 };
    char *f = g_strdup_printf("%s.%s", name, ext);
    char *p = g_build_filename(dir, f, NULL);
    gchar *text = NULL;
    gsize len = 0;
    gboolean ok = FALSE;
    if (g_file_get_contents(p, &text, &len, NULL)) {
        if (!strcmp(ext, "png")) {
            ok = len >= 8 + sizeof iend && !memcmp(text + len - sizeof iend, iend, sizeof iend);
        } else {
            while (len > 0 && g_ascii_isspace(text[len - 1]))
                len--;
            ok = len >= 6 && !memcmp(text + len - 6, "</svg>", 6);
        }
    }
    g_free(text);
    g_free(p);
    g_free(f);
    return ok;
}

static void remove_output(const char *dir, const char *name, const char *ext)
{
    char *f = g_strdup_printf("%s.%s", name, ext);
    char *p = g_build_filename(dir, f, NULL);
    g_unlink(p);
    g_free(p);
    g_free(f);
}

gboolean plot_run_script(const char *gnuplot, const char *dir, const char *name, GError **err)
{
    char *script = g_strdup_printf("%s.gp", name);
    const char *argv[] = { gnuplot, script, NULL };
    char *out = NULL, *errout = NULL;
    gint status = 0;
    GError *e = NULL;
    gboolean ok = g_spawn_sync(dir, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out,
                               &errout, &status, &e);
    if (!ok) {
        g_set_error(err, PLOT_ERROR, PLOT_ERROR_GNUPLOT, "%s/%s: cannot run gnuplot: %s", dir,
                    script, e->message);
        g_error_free(e);
    } else if (!g_spawn_check_wait_status(status, NULL)) {
        g_strstrip(errout);
        g_set_error(err, PLOT_ERROR, PLOT_ERROR_GNUPLOT, "%s/%s: gnuplot failed: %s", dir, script,
                    *errout ? errout : "(no message)");
        ok = FALSE;
    } else if (!complete_file(dir, name, "png") || !complete_file(dir, name, "svg")) {
        g_set_error(err, PLOT_ERROR, PLOT_ERROR_IO,
                    "%s/%s: gnuplot finished but %s.png or %s.svg is missing or cut short "
                    "(disk full?)", dir, script, name, name);
        ok = FALSE;
    }
    if (!ok) { /* no partial figure is left behind */
        remove_output(dir, name, "png");
        remove_output(dir, name, "svg");
    }
    g_free(out);
    g_free(errout);
    g_free(script);
    return ok;
}

/* ---- figures ----------------------------------------------------------------------------- */

typedef struct {
    const char *dir;
    char *plots;              /* DIR/plots */
    results_summary *sum;     /* NULL when summary.json is absent */
    double end_ns;            /* end of the run, 0 when unknown */
} plot_ctx;

/* A figure writes NAME.gp (+ .dat) and returns 1, skips with a reason and returns 0, or fails
 * with err and returns -1. */
typedef int (*figure_fn)(plot_ctx *c, const char *name, char **why, GError **err);

static char *in_dir(const plot_ctx *c, const char *file)
{
    return g_build_filename(c->dir, file, NULL);
}

static gboolean write_figure(plot_ctx *c, const char *name, GString *gp, GString *dat,
                             GError **err)
{
    char *f = g_strdup_printf("%s.dat", name);
    gboolean ok = (!dat || plot_write_file(c->plots, f, dat, err));
    g_free(f);
    if (ok) {
        f = g_strdup_printf("%s.gp", name);
        ok = plot_write_file(c->plots, f, gp, err);
        g_free(f);
    }
    return ok;
}

/* Byte axis: KB unless the largest value asks for MB. */
static const char *bytes_unit(double vmax, double *div)
{
    if (vmax >= 2e6) {
        *div = 1e6;
        return "MB";
    }
    *div = 1e3;
    return "KB";
}

/* Scans DIR/FILE as a time series (results_series_scan). NULL with *status 0 when the file is
 * missing (*why says so) or -1 on an error; *path is the file's path either way (g_free it). */
static GPtrArray *scan_series(const plot_ctx *c, const char *file, results_series_kind kind, char **path, char **why, int *status,
                              GError **err)
{
    *path = in_dir(c, file);
    GError *e = NULL;
    GPtrArray *all = results_series_scan(*path, kind, &e);
    *status = 0;
    if (!all) {
        if (g_error_matches(e, G_FILE_ERROR, G_FILE_ERROR_NOENT)) {
            *why = g_strdup_printf("no %s", file);
            g_error_free(e);
        } else {
            g_propagate_error(err, e);
            *status = -1;
        }
    }
    return all;
}

static int fig_queue_depth(plot_ctx *c, const char *name, char **why, GError **err)
{
    char *path;
    int status;
    GPtrArray *all = scan_series(c, "queues.csv", RESULTS_SERIES_QUEUES, &path, why, &status, err);
    if (!all) {
        g_free(path);
        return status;
    }
    int rc = 0;
    if (all->len == 0 || ((results_series *)g_ptr_array_index(all, 0))->vmax <= 0) {
        *why = g_strdup(all->len ? "every queue stayed empty" : "queues.csv has no samples");
        goto out;
    }
    guint total = all->len;
    while (all->len > QUEUE_SERIES ||
           (all->len > 1 && ((results_series *)g_ptr_array_index(all, all->len - 1))->vmax <= 0))
        g_ptr_array_remove_index(all, all->len - 1);
    if (!results_series_load(path, RESULTS_SERIES_QUEUES, all, err)) {
        rc = -1;
        goto out;
    }
    double tmax = c->end_ns, vmax = 0;
    for (guint i = 0; i < all->len; i++) {
        results_series *s = g_ptr_array_index(all, i);
        tmax = fmax(tmax, s->t_last);
        vmax = fmax(vmax, s->vmax);
    }
    tmax = fmax(tmax, 1);   /* a lone sample at t = 0 still needs a non-empty x range */
    /* Thresholds from the scenario, e.g. switch.ecn_kmin = "100KB". */
    static const char *const thr_key[] = { "ecn_kmin", "ecn_kmax", "xoff" };
    static const char *const thr_name[] = { "ECN Kmin", "ECN Kmax", "PFC XOFF" };
    static const char *const thr_colour[] = { "#2ca02c", "#ff7f0e", "#d62728" };
    double thr[3];
    char *thr_text[3] = { NULL, NULL, NULL };
    for (int i = 0; i < 3; i++) {
        thr_text[i] = c->sum ? results_summary_scenario(c->sum, "switch", thr_key[i]) : NULL;
        if (thr_text[i] && metrics_parse_bytes(thr_text[i], &thr[i]) && thr[i] > 0) {
            vmax = fmax(vmax, thr[i]);
        } else {
            g_free(thr_text[i]);   /* absent or not a fixed size (e.g. a dynamic threshold) */
            thr_text[i] = NULL;
        }
    }
    double tdiv, ydiv;
    const char *tu = plot_time_unit(tmax, &tdiv), *yu = bytes_unit(vmax, &ydiv);

    GString *dat = g_string_new("# queue depth samples (bytes) of the busiest queues, one "
                                "gnuplot index per queue; derived from ../queues.csv\n");
    GString *gp = g_string_new(NULL);
    plot_gp_begin(gp, name, "egress queue depth over time of the busiest queues (queues.csv)");
    g_string_append_printf(gp, "tdiv = %g   # ns per %s\nydiv = %g   # bytes per %s\n", tdiv, tu,
                           ydiv, yu);
    g_string_append(gp, "set title ");
    char *title = g_strdup_printf("Egress queue depth: %u busiest of %u queues (by peak depth)",
                                  all->len, total);
    plot_gp_quote(gp, title);
    g_free(title);
    g_string_append_printf(gp, "\nset xlabel 'time (%s)'\nset ylabel 'queue depth (%s)'\n", tu,
                           yu);
    g_string_append_printf(gp, "set xrange [0:%.17g]\nset yrange [0:*]\n"
                               "set key top right\nplot ", tmax / tdiv);
    for (guint i = 0; i < all->len; i++) {
        results_series *s = g_ptr_array_index(all, i);
        plot_dat_series(dat, s, SERIES_BINS, tmax);
        g_string_append_printf(gp, "%s'%s.dat' index %u using ($1/tdiv):($2/ydiv) with steps "
                                   "lt %u title ", i ? ", \\\n     " : "", name, i, i + 1);
        plot_gp_quote(gp, s->label);
    }
    for (int i = 0; i < 3; i++) {
        if (!thr_text[i])
            continue;
        char *t = g_strdup_printf("%s (%s)", thr_name[i], thr_text[i]);
        g_string_append_printf(gp, ", \\\n     %.17g/ydiv with lines dt 2 lw 1.2 lc rgb '%s' "
                                   "title ", thr[i], thr_colour[i]);
        plot_gp_quote(gp, t);
        g_free(t);
        g_free(thr_text[i]);
    }
    g_string_append_c(gp, '\n');
    plot_gp_end(gp, name);
    rc = write_figure(c, name, gp, dat, err) ? 1 : -1;
    g_string_free(gp, TRUE);
    g_string_free(dat, TRUE);
out:
    g_ptr_array_free(all, TRUE);
    g_free(path);
    return rc;
}

static int fig_flow_rates(plot_ctx *c, const char *name, char **why, GError **err)
{
    char *path;
    int status;
    GPtrArray *all = scan_series(c, "rates.csv", RESULTS_SERIES_RATES, &path, why, &status, err);
    if (!all) {
        g_free(path);
        return status;
    }
    int rc = 0;
    if (all->len == 0) {
        *why = g_strdup("rates.csv has no samples");
        goto out;
    }
    guint total = all->len;
    if (all->len > RATE_SERIES)
        g_ptr_array_set_size(all, RATE_SERIES);
    if (!results_series_load(path, RESULTS_SERIES_RATES, all, err)) {
        rc = -1;
        goto out;
    }
    double tmax = c->end_ns;
    for (guint i = 0; i < all->len; i++)
        tmax = fmax(tmax, ((results_series *)g_ptr_array_index(all, i))->t_last);
    tmax = fmax(tmax, 1);   /* a lone sample at t = 0 still needs a non-empty x range */
    double tdiv;
    const char *tu = plot_time_unit(tmax, &tdiv);
    GString *dat = g_string_new("# congestion-control rate (Gb/s) of the busiest flows, one "
                                "gnuplot index per flow; derived from ../rates.csv\n");
    GString *gp = g_string_new(NULL);
    plot_gp_begin(gp, name, "sending rate per flow over time (rates.csv)");
    g_string_append_printf(gp, "tdiv = %g   # ns per %s\n", tdiv, tu);
    char *title = total > all->len
                      ? g_strdup_printf("Sending rate per flow: %u busiest of %u flows "
                                        "(by data sent)", all->len, total)
                      : g_strdup_printf("Sending rate per flow (%u flows)", total);
    g_string_append(gp, "set title ");
    plot_gp_quote(gp, title);
    g_free(title);
    g_string_append_printf(gp, "\nset xlabel 'time (%s)'\nset ylabel 'sending rate (Gb/s)'\n"
                               "set xrange [0:%.17g]\nset yrange [0:*]\n", tu, tmax / tdiv);
    g_string_append(gp, all->len > 8 ? "set key outside right top\n" : "set key top right\n");
    g_string_append(gp, "plot ");
    for (guint i = 0; i < all->len; i++) {
        results_series *s = g_ptr_array_index(all, i);
        plot_dat_series(dat, s, SERIES_BINS, tmax);
        g_string_append_printf(gp, "%s'%s.dat' index %u using ($1/tdiv):2 with steps lt %u "
                                   "title ", i ? ", \\\n     " : "", name, i, i + 1);
        plot_gp_quote(gp, s->label);
    }
    g_string_append_c(gp, '\n');
    plot_gp_end(gp, name);
    rc = write_figure(c, name, gp, dat, err) ? 1 : -1;
    g_string_free(gp, TRUE);
    g_string_free(dat, TRUE);
out:
    g_ptr_array_free(all, TRUE);
    g_free(path);
    return rc;
}

/* transfers.csv columns fct_ns, ideal_ns and slowdown (the last two when present). */
typedef struct {
    GArray *fct, *ideal, *slowdown;
} transfers_cols;

static void transfers_free(transfers_cols *t)
{
    g_array_free(t->fct, TRUE);
    g_array_free(t->ideal, TRUE);
    g_array_free(t->slowdown, TRUE);
}

/* Opens DIR/FILE for a figure and checks it has the `need` columns (their indices go to idx).
 * Returns the reader; or NULL with *status 0 when the figure is to be skipped (no file, or a
 * file without rows: *why says which, when why is not NULL) or -1 on an error (in *err). */
static results_csv *open_input(const plot_ctx *c, const char *file, const char *const *need, int *idx,
                               const char *empty_why, char **why, int *status, GError **err)
{
    char *path = in_dir(c, file);
    GError *e = NULL;
    results_csv *csv = results_csv_open(path, &e);
    g_free(path);
    *status = 0;
    if (!csv) {
        if (g_error_matches(e, G_FILE_ERROR, G_FILE_ERROR_NOENT)) {
            if (why)
                *why = g_strdup_printf("no %s", file);
            g_error_free(e);
            return NULL;
        }
        g_propagate_error(err, e);
        *status = -1;
        return NULL;
    }
    if (results_csv_ncols(csv) == 0) {
        results_csv_close(csv);
        if (why)
            *why = g_strdup(empty_why);
        return NULL;
    }
    if (!results_csv_require(csv, need, idx, err)) {
        results_csv_close(csv);
        *status = -1;
        return NULL;
    }
    return csv;
}

/* 1 = read, 0 = no file, -1 = error. */
static int read_transfers(const plot_ctx *c, transfers_cols *t, GError **err)
{
    t->fct = g_array_new(FALSE, FALSE, sizeof(double));
    t->ideal = g_array_new(FALSE, FALSE, sizeof(double));
    t->slowdown = g_array_new(FALSE, FALSE, sizeof(double));
    static const char *const need[] = { "fct_ns", NULL };
    int fct_col, status;
    char *why = NULL;
    results_csv *csv = open_input(c, "transfers.csv", need, &fct_col, "empty", &why, &status, err);
    if (!csv) {
        /* a file without rows is read (nothing in it); a missing file is 0 */
        gboolean empty = status == 0 && !g_strcmp0(why, "empty");
        g_free(why);
        return empty ? 1 : status;
    }
    int ideal_col = results_csv_column(csv, "ideal_ns");
    int slow_col = results_csv_column(csv, "slowdown");
    int r;
    while ((r = results_csv_next(csv, err)) == 1) {
        double f, i = 0, s = 0;
        const char *fct = results_csv_field(csv, (guint)fct_col);
        if (!fct || !*fct)
            continue; /* unfinished transfer: no FCT to plot */
        /* a capture's folder (pcap-stats) has no ideal times: empty ideal_ns and slowdown */
        gboolean has_ideal = ideal_col >= 0 && *results_csv_field(csv, (guint)ideal_col);
        gboolean has_slow = slow_col >= 0 && *results_csv_field(csv, (guint)slow_col);
        if (!results_csv_double(csv, fct_col, &f, err) || (has_ideal && !results_csv_double(csv, ideal_col, &i, err)) ||
            (has_slow && !results_csv_double(csv, slow_col, &s, err))) {
            r = -1;
            break;
        }
        g_array_append_val(t->fct, f);
        if (has_ideal && i > 0)
            g_array_append_val(t->ideal, i);
        if (!has_slow && i > 0)
            s = f / i;   /* derive it when the column is absent */
        if (has_slow || i > 0)
            g_array_append_val(t->slowdown, s);
    }
    results_csv_close(csv);
    return r < 0 ? -1 : 1;
}

/* Appends a CDF block "x y" to dat. */
static void dat_cdf(GString *dat, GArray *values, const char *what)
{
    stats_sort((double *)values->data, values->len);
    GArray *cdf = stats_cdf((const double *)values->data, values->len, CDF_POINTS);
    g_string_append_printf(dat, "# CDF of %s: value fraction_le\n", what);
    if (cdf->len)   /* start the staircase from 0 */
        dat_point(dat, g_array_index(cdf, stats_point, 0).x, 0);
    for (guint i = 0; i < cdf->len; i++) {
        stats_point *p = &g_array_index(cdf, stats_point, i);
        dat_point(dat, p->x, p->y);
    }
    g_string_append(dat, "\n\n");
    g_array_free(cdf, TRUE);
}

static int fig_fct_cdf(plot_ctx *c, const char *name, char **why, GError **err)
{
    transfers_cols t;
    int r = read_transfers(c, &t, err);
    if (r <= 0 || t.fct->len == 0) {
        if (r == 0)
            *why = g_strdup("no transfers.csv");
        else if (r > 0)
            *why = g_strdup("transfers.csv has no completed transfer");
        transfers_free(&t);
        return r < 0 ? -1 : 0;
    }
    gboolean with_ideal = t.ideal->len == t.fct->len;
    GString *dat = g_string_new("# derived from ../transfers.csv\n");
    dat_cdf(dat, t.fct, "fct_ns");
    if (with_ideal)
        dat_cdf(dat, t.ideal, "ideal_ns");
    const double *f = (const double *)t.fct->data;   /* sorted by dat_cdf */
    size_t n = t.fct->len;
    double lo = f[0], hi = f[n - 1];
    if (with_ideal)
        lo = fmin(lo, g_array_index(t.ideal, double, 0));
    double div;
    const char *u = plot_time_unit(hi, &div);
    char *p50 = metrics_format_kind(METRICS_KIND_TIME, stats_percentile(f, n, 50));
    char *p99 = metrics_format_kind(METRICS_KIND_TIME, stats_percentile(f, n, 99));
    char *title = g_strdup_printf("Flow completion time CDF: %zu transfers, p50 %s, p99 %s", n,
                                  p50, p99);
    GString *gp = g_string_new(NULL);
    plot_gp_begin(gp, name, "CDF of transfer completion times (transfers.csv)");
    g_string_append_printf(gp, "div = %g   # ns per %s\nset title ", div, u);
    plot_gp_quote(gp, title);
    g_string_append_printf(gp, "\nset xlabel 'flow completion time (%s)'\n"
                               "set ylabel 'fraction of transfers'\n"
                               "set yrange [0:1.02]\nset key bottom right\n", u);
    /* Completion times often span decades (small and large messages). */
    if (lo > 0 && hi / lo > 50)   /* xfix: no padding out to whole decades */
        g_string_append(gp, "set logscale x\nset autoscale xfix\n");
    g_string_append_printf(gp, "plot '%s.dat' index 0 using ($1/div):2 with steps lt 1 lw 2 "
                               "title 'completion time'", name);
    if (with_ideal)
        g_string_append_printf(gp, ", \\\n     '%s.dat' index 1 using ($1/div):2 with steps "
                                   "lt 8 dt 2 title 'ideal (no congestion)'", name);
    g_string_append_c(gp, '\n');
    plot_gp_end(gp, name);
    int rc = write_figure(c, name, gp, dat, err) ? 1 : -1;
    g_free(p50);
    g_free(p99);
    g_free(title);
    g_string_free(gp, TRUE);
    g_string_free(dat, TRUE);
    transfers_free(&t);
    return rc;
}

static int fig_slowdown_cdf(plot_ctx *c, const char *name, char **why, GError **err)
{
    transfers_cols t;
    int r = read_transfers(c, &t, err);
    if (r <= 0 || t.slowdown->len == 0) {
        if (r == 0)
            *why = g_strdup("no transfers.csv");
        else if (r > 0)
            *why = g_strdup(t.fct->len ? "transfers.csv has neither slowdown nor ideal_ns"
                                       : "transfers.csv has no completed transfer");
        transfers_free(&t);
        return r < 0 ? -1 : 0;
    }
    GString *dat = g_string_new("# derived from ../transfers.csv\n");
    dat_cdf(dat, t.slowdown, "slowdown");
    const double *s = (const double *)t.slowdown->data;
    size_t n = t.slowdown->len;
    char *title = g_strdup_printf("Slowdown CDF: %zu transfers, p50 %.3g×, p99 %.3g×, max %.3g×",
                                  n, stats_percentile(s, n, 50), stats_percentile(s, n, 99),
                                  s[n - 1]);
    GString *gp = g_string_new(NULL);
    plot_gp_begin(gp, name, "CDF of slowdown = completion time / ideal time (transfers.csv)");
    g_string_append(gp, "set title ");
    plot_gp_quote(gp, title);
    g_string_append(gp, "\nset xlabel 'slowdown (completion time / ideal completion time)'\n"
                        "set ylabel 'fraction of transfers'\n"
                        "set yrange [0:1.02]\nset key bottom right\n");
    if (s[0] > 0 && s[n - 1] / s[0] > 20)
        g_string_append(gp, "set logscale x\nset autoscale xfix\n");
    g_string_append_printf(gp, "plot '%s.dat' index 0 using 1:2 with steps lt 1 lw 2 "
                               "title 'slowdown'\n", name);
    plot_gp_end(gp, name);
    int rc = write_figure(c, name, gp, dat, err) ? 1 : -1;
    g_free(title);
    g_string_free(gp, TRUE);
    g_string_free(dat, TRUE);
    transfers_free(&t);
    return rc;
}

/* One paused queue: its pause intervals [start, end) in ns. */
typedef struct {
    char *label;
    char *sort_key;
    GArray *iv;         /* pairs of doubles */
    double open_at;     /* start of the current pause, or -1 */
    double paused;      /* total ns */
} pfc_row;

static void pfc_row_free(pfc_row *r)
{
    g_free(r->label);
    g_free(r->sort_key);
    g_array_free(r->iv, TRUE);
    g_free(r);
}

static void pfc_close(pfc_row *r, double start, double end)
{
    if (end < start)
        end = start;
    double p[2] = { start, end };
    g_array_append_vals(r->iv, p, 2);
    r->paused += end - start;
}

static gint cmp_pfc_paused(gconstpointer a, gconstpointer b)
{
    const pfc_row *x = *(pfc_row *const *)a, *y = *(pfc_row *const *)b;
    if (x->paused != y->paused)
        return x->paused > y->paused ? -1 : 1;
    return strcmp(x->sort_key, y->sort_key);
}

static gint cmp_pfc_name(gconstpointer a, gconstpointer b)
{
    const pfc_row *x = *(pfc_row *const *)a, *y = *(pfc_row *const *)b;
    return strcmp(x->sort_key, y->sort_key);
}

static int fig_pfc_pauses(plot_ctx *c, const char *name, char **why, GError **err)
{
    static const char *const need[] = { "t_ns", "node", "port", "prio", "event", NULL };
    int idx[5];
    int status;
    results_csv *csv = open_input(c, "pfc.csv", need, idx, "pfc.csv is empty (no pauses)", why, &status, err);
    if (!csv)
        return status;
    int dur_col = results_csv_column(csv, "duration_ns");
    GHashTable *rows = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                             (GDestroyNotify)pfc_row_free);
    double t_last = 0;
    int r;
    while ((r = results_csv_next(csv, err)) == 1) {
        double t, port, prio;
        if (!results_csv_double(csv, idx[0], &t, err) ||
            !results_csv_double(csv, idx[2], &port, err) ||
            !results_csv_double(csv, idx[3], &prio, err)) {
            r = -1;
            break;
        }
        const char *node = results_csv_field(csv, idx[1]);
        const char *ev = results_csv_field(csv, idx[4]);
        gboolean pause = !strcmp(ev, "pause"), resume = !strcmp(ev, "resume");
        /* the watchdog's rows (models/pfc.c) mark when it stopped honouring a storm and when
         * it restored PFC: the storm's own "resume" row, which follows, ends the pause */
        if (!strcmp(ev, "watchdog-storm") || !strcmp(ev, "watchdog-restore"))
            continue;
        if (!pause && !resume) {
            g_set_error(err, RESULTS_ERROR, RESULTS_ERROR_PARSE,
                        "%s:%" G_GUINT64_FORMAT ": column 'event': '%s', expected 'pause', 'resume', "
                        "'watchdog-storm' or 'watchdog-restore'", results_csv_path(csv), results_csv_line(csv), ev);
            r = -1;
            break;
        }
        t_last = fmax(t_last, t);
        char *key = g_strdup_printf("%s:%.0f:%.0f", node, port, prio);
        pfc_row *row = g_hash_table_lookup(rows, key);
        if (!row) {
            row = g_new0(pfc_row, 1);
            row->label = g_strdup_printf("%s port %.0f prio %.0f", node, port, prio);
            /* Natural order: leaf2 before leaf10, port 2 before port 10. */
            char *k = g_strdup_printf("%s %06.0f %02.0f", node, port, prio);
            row->sort_key = g_utf8_collate_key_for_filename(k, -1);
            g_free(k);
            row->iv = g_array_new(FALSE, FALSE, sizeof(double));
            row->open_at = -1;
            g_hash_table_insert(rows, key, row);
        } else {
            g_free(key);
        }
        if (pause) {
            if (row->open_at < 0)   /* a refresh while paused extends the same pause */
                row->open_at = t;
        } else if (row->open_at >= 0) {
            pfc_close(row, row->open_at, t);
            row->open_at = -1;
        } else {
            /* A resume without a recorded pause (the pause predates the trace): use the
             * duration the resume carries. */
            double d = 0;
            if (dur_col >= 0 && results_csv_double(csv, dur_col, &d, NULL) && d > 0)
                pfc_close(row, fmax(0, t - d), t);
        }
    }
    results_csv_close(csv);
    if (r < 0) {
        g_hash_table_destroy(rows);
        return -1;
    }
    double end = fmax(fmax(c->end_ns, t_last), 1);
    GPtrArray *list = g_ptr_array_new();
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, rows);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        pfc_row *row = v;
        if (row->open_at >= 0) {   /* still paused when the run ended */
            pfc_close(row, row->open_at, end);
            row->open_at = -1;
        }
        if (row->iv->len)
            g_ptr_array_add(list, row);
    }
    int rc = 0;
    if (list->len == 0) {
        *why = g_strdup("pfc.csv has no pauses");
        goto out;
    }
    guint total = list->len;
    double total_paused = 0;
    for (guint i = 0; i < list->len; i++)
        total_paused += ((pfc_row *)g_ptr_array_index(list, i))->paused;
    g_ptr_array_sort(list, cmp_pfc_paused);
    if (list->len > PFC_ROWS)
        g_ptr_array_set_size(list, PFC_ROWS);
    g_ptr_array_sort(list, cmp_pfc_name);

    double tdiv;
    const char *tu = plot_time_unit(end, &tdiv);
    /* Pauses closer than a fraction of a pixel are merged: same picture, smaller SVG. */
    double gap = end / 4000;
    GString *dat = g_string_new("# PFC pause intervals: start_ns end_ns row; derived from "
                                "../pfc.csv\n");
    GString *ytics = g_string_new("set ytics (");
    for (guint i = 0; i < list->len; i++) {
        pfc_row *row = g_ptr_array_index(list, i);
        g_string_append_printf(dat, "# row %u: %s\n", i, row->label);
        const double *p = (const double *)row->iv->data;
        guint n = row->iv->len / 2;
        double s = p[0], e2 = p[1];
        for (guint j = 1; j <= n; j++) {
            if (j < n && p[2 * j] - e2 <= gap) {
                e2 = fmax(e2, p[2 * j + 1]);
                continue;
            }
            g_string_append_printf(dat, "%.17g %.17g %u\n", s, e2, i);
            if (j < n) {
                s = p[2 * j];
                e2 = p[2 * j + 1];
            }
        }
        g_string_append(ytics, i ? ", " : "");
        plot_gp_quote(ytics, row->label);
        g_string_append_printf(ytics, " %u", i);
    }
    g_string_append(ytics, ")\n");
    char *paused = metrics_format_kind(METRICS_KIND_TIME, total_paused);
    char *title = total > list->len
                      ? g_strdup_printf("PFC pause timeline: %u most-paused of %u paused queues, "
                                        "%s paused in total", list->len, total, paused)
                      : g_strdup_printf("PFC pause timeline: %u paused queue%s, %s paused in "
                                        "total", total, total == 1 ? "" : "s", paused);
    GString *gp = g_string_new(NULL);
    plot_gp_begin(gp, name, "PFC pause timeline, one row per paused queue (pfc.csv)");
    g_string_append_printf(gp, "tdiv = %g   # ns per %s\nset title ", tdiv, tu);
    plot_gp_quote(gp, title);
    g_string_append_printf(gp, "\nset xlabel 'time (%s)'\nset ylabel ''\n"
                               "set xrange [0:%.17g]\nset yrange [-0.6:%u-0.4] reverse\n"
                               "set grid noytics\nset key off\n%s",
                           tu, end / tdiv, list->len, ytics->str);
    g_string_append_printf(gp, "plot '%s.dat' using (($1+$2)/2/tdiv):3:($1/tdiv):($2/tdiv):"
                               "($3-0.35):($3+0.35) with boxxyerror fs solid 0.85 noborder "
                               "lc rgb '#d62728' title 'paused'\n", name);
    plot_gp_end(gp, name);
    rc = write_figure(c, name, gp, dat, err) ? 1 : -1;
    g_free(paused);
    g_free(title);
    g_string_free(gp, TRUE);
    g_string_free(ytics, TRUE);
    g_string_free(dat, TRUE);
out:
    g_ptr_array_free(list, TRUE);
    g_hash_table_destroy(rows);
    return rc;
}

/* Counters drawn by the ECN/CNP figure, as "count per interval" lines. */
static const struct {
    const char *counter;
    const char *title;
} ecn_lines[] = {
    { "ecn_marked", "ECN-marked at switches (ecn_marked)" },
    { "np_ecn_marked_roce_packets", "ECN-marked at receivers (np_ecn_marked_roce_packets)" },
    { "np_cnp_sent", "CNPs sent (np_cnp_sent)" },
    { "rp_cnp_handled", "CNPs handled (rp_cnp_handled)" },
};
#define N_ECN_LINES G_N_ELEMENTS(ecn_lines)

#define COUNTER_BINS_MAX 20000 /* intervals drawn by the ECN/CNP figure at most */

static gint cmp_double(gconstpointer a, gconstpointer b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The counters' sampling period: the run's [output] counter_sample, else the smallest gap
 * between two sample times (a folder without a scenario, e.g. from pcap-stats). */
static double counter_period(const plot_ctx *c, GArray *times)
{
    char *text = c->sum ? results_summary_scenario(c->sum, "output", "counter_sample") : NULL;
    simtime_t ps = 0;
    gboolean ok = text && units_parse_time(text, &ps, NULL) && ps >= PS_PER_NS;
    g_free(text);
    if (ok)
        return (double)(ps / PS_PER_NS);
    double gap = 0;
    const double *t = (const double *)times->data;
    for (guint i = 0; i < times->len; i++) {
        double d = i ? t[i] - t[i - 1] : t[0];
        if (d > 0 && (gap == 0 || d < gap))
            gap = d;
    }
    return gap;
}

/* ECN marks and CNPs per sampling interval. counters.csv holds cumulative values written at
 * the end of a sampling interval in which they changed (and at the end of the run), so the
 * increment of a row at time t happened in the interval (t - P, t] of the sampling grid: it is
 * counted there, and every interval without a row counts zero. Drawn as steps on the grid,
 * so a quiet gap is a run of zeros, never the last count stretched across it. */
static int fig_ecn_cnp(plot_ctx *c, const char *name, char **why, GError **err)
{
    static const char *const need[] = { "t_ns", "node", "port", "counter", "value", NULL };
    int idx[5];
    int status;
    results_csv *csv = open_input(c, "counters.csv", need, idx, "counters.csv is empty", why, &status, err);
    if (!csv)
        return status;
    GArray *rows_t = g_array_new(FALSE, FALSE, sizeof(double));   /* per kept row */
    GArray *rows_d = g_array_new(FALSE, FALSE, sizeof(double));
    GArray *rows_l = g_array_new(FALSE, FALSE, sizeof(guint));
    GHashTable *last = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    int r;
    while ((r = results_csv_next(csv, err)) == 1) {
        const char *counter = results_csv_field(csv, idx[3]);
        guint line = N_ECN_LINES;
        for (guint i = 0; i < N_ECN_LINES; i++)
            if (!strcmp(counter, ecn_lines[i].counter))
                line = i;
        if (line == N_ECN_LINES)
            continue;
        double t, v;
        if (!results_csv_double(csv, idx[0], &t, err) || !results_csv_double(csv, idx[4], &v, err)) {
            r = -1;
            break;
        }
        char *key = g_strdup_printf("%s\t%s\t%s", results_csv_field(csv, idx[1]), results_csv_field(csv, idx[2]),
                                    counter);
        double *prev = g_hash_table_lookup(last, key);
        if (!prev) {
            prev = g_new0(double, 1); /* counters start at 0 at t = 0 */
            g_hash_table_insert(last, key, prev);
        } else {
            g_free(key);
        }
        double d = v - *prev;
        *prev = v;
        g_array_append_val(rows_t, t);
        g_array_append_val(rows_d, d);
        g_array_append_val(rows_l, line);
    }
    results_csv_close(csv);
    g_hash_table_destroy(last);
    int rc = 0;
    GString *gp = NULL, *dat = NULL;
    double *count = NULL;
    if (r < 0) {
        rc = -1;
        goto out;
    }
    GArray *times = g_array_sized_new(FALSE, FALSE, sizeof(double), rows_t->len);
    g_array_append_vals(times, rows_t->data, rows_t->len);
    g_array_sort(times, cmp_double);
    guint distinct = 0;
    for (guint i = 0; i < times->len; i++)
        distinct += i == 0 || g_array_index(times, double, i) != g_array_index(times, double, i - 1);
    double P = distinct >= 2 ? counter_period(c, times) : 0;
    double tmax = times->len ? fmax(g_array_index(times, double, times->len - 1), c->end_ns) : c->end_ns;
    g_array_free(times, TRUE);
    if (distinct < 2 || P <= 0) {
        *why = g_strdup(distinct ? "counters.csv holds end-of-run totals only (no time series)"
                                 : "counters.csv has no ECN or CNP counters");
        goto out;
    }
    /* long runs: whole multiples of the sampling period, so every increment still lands in
     * the interval it happened in */
    guint nbins = (guint)ceil(tmax / P);
    if (nbins > COUNTER_BINS_MAX) {
        P *= ceil((double)nbins / COUNTER_BINS_MAX);
        nbins = (guint)ceil(tmax / P);
    }
    if (nbins == 0)
        nbins = 1;
    count = g_new0(double, (gsize)nbins * N_ECN_LINES);
    gboolean has_line[N_ECN_LINES] = { FALSE };
    for (guint i = 0; i < rows_t->len; i++) {
        double t = g_array_index(rows_t, double, i);
        guint k = t > 0 ? (guint)ceil(t / P) - 1 : 0;
        if (k >= nbins)
            k = nbins - 1;
        guint l = g_array_index(rows_l, guint, i);
        count[(gsize)l * nbins + k] += g_array_index(rows_d, double, i);
        has_line[l] = TRUE;
    }
    double tdiv;
    const char *tu = plot_time_unit(tmax, &tdiv);
    dat = g_string_new("# packets per sampling interval: interval_start_ns count (0 where nothing was "
                       "counted); derived from ../counters.csv (cumulative counters, summed over ports)\n");
    gp = g_string_new(NULL);
    plot_gp_begin(gp, name, "ECN marks and CNPs per sampling interval (counters.csv)");
    g_string_append_printf(gp, "tdiv = %g   # ns per %s\nset title ", tdiv, tu);
    char *iv = metrics_format_kind(METRICS_KIND_TIME, P);
    char *title = g_strdup_printf("ECN marks and CNPs per %s interval, all ports", iv);
    g_free(iv);
    plot_gp_quote(gp, title);
    g_free(title);
    g_string_append_printf(gp, "\nset xlabel 'time (%s)'\nset ylabel 'packets per interval'\n"
                               "set xrange [0:%.17g]\nset yrange [0:*]\nset key top right\nplot ",
                           tu, tmax / tdiv);
    guint block = 0;
    for (guint l = 0; l < N_ECN_LINES; l++) {
        if (!has_line[l])
            continue;
        g_string_append_printf(dat, "# %s\n", ecn_lines[l].counter);
        const double *cl = count + (gsize)l * nbins;
        for (guint k = 0; k < nbins; k++)
            dat_point(dat, k * P, cl[k]);
        dat_point(dat, nbins * P, cl[nbins - 1]); /* the last step's right edge */
        g_string_append(dat, "\n\n");
        g_string_append_printf(gp, "%s'%s.dat' index %u using ($1/tdiv):2 with steps lt %u "
                                   "title ", block ? ", \\\n     " : "", name, block, l + 1);
        plot_gp_quote(gp, ecn_lines[l].title);
        block++;
    }
    g_string_append_c(gp, '\n');
    plot_gp_end(gp, name);
    rc = write_figure(c, name, gp, dat, err) ? 1 : -1;
out:
    g_free(count);
    if (gp)
        g_string_free(gp, TRUE);
    if (dat)
        g_string_free(dat, TRUE);
    g_array_free(rows_t, TRUE);
    g_array_free(rows_d, TRUE);
    g_array_free(rows_l, TRUE);
    return rc;
}

typedef struct {
    char *label;
    double util;
} util_bar;

static gint cmp_util(gconstpointer a, gconstpointer b)
{
    const util_bar *x = a, *y = b;
    if (x->util != y->util)
        return x->util > y->util ? -1 : 1;
    return strcmp(x->label, y->label);
}

static int fig_utilisation(plot_ctx *c, const char *name, char **why, GError **err)
{
    if (!c->sum || !c->sum->ports) {
        *why = g_strdup(c->sum ? "summary.json has no ports" : "no summary.json");
        return 0;
    }
    GArray *bars = g_array_new(FALSE, FALSE, sizeof(util_bar));
    guint n = json_array_get_length(c->sum->ports);
    for (guint i = 0; i < n; i++) {
        JsonNode *pn = json_array_get_element(c->sum->ports, i);
        if (!JSON_NODE_HOLDS_OBJECT(pn))
            continue;
        JsonObject *po = json_node_get_object(pn);
        util_bar b;
        if (!results_json_number(po, "utilisation", &b.util))
            continue;
        char *node = results_json_string(po, "node"), *port = results_json_string(po, "port");
        b.label = g_strdup_printf("%s:%s", node ? node : "?", port ? port : "?");
        g_free(node);
        g_free(port);
        g_array_append_val(bars, b);
    }
    int rc = 0;
    if (bars->len == 0) {
        *why = g_strdup("summary.json ports have no utilisation");
        goto out;
    }
    g_array_sort(bars, cmp_util);
    guint shown = MIN(bars->len, UTIL_BARS);
    GString *dat = g_string_new("# port utilisation_percent; derived from ../summary.json "
                                "ports[]\n");
    for (guint i = 0; i < shown; i++) {
        util_bar *b = &g_array_index(bars, util_bar, i);
        g_string_append_c(dat, '"');
        for (const char *p = b->label; *p; p++)
            if (*p != '"')
                g_string_append_c(dat, *p);
        g_string_append_printf(dat, "\" %.6g\n", b->util * 100);
    }
    char *title = bars->len > shown
                      ? g_strdup_printf("Link utilisation: %u busiest of %u ports", shown,
                                        bars->len)
                      : g_strdup_printf("Link utilisation of %u ports", bars->len);
    GString *gp = g_string_new(NULL);
    plot_gp_begin(gp, name, "transmit utilisation per port (summary.json ports)");
    g_string_append(gp, "set title ");
    plot_gp_quote(gp, title);
    g_string_append(gp, "\nset ylabel 'utilisation (% of link rate)'\n"
                        "set xlabel 'port (node:port)'\n"
                        "set yrange [0:105]\nset grid noxtics\nset key off\n"
                        "set style fill solid 0.85 noborder\nset boxwidth 0.7\n"
                        "set xtics rotate by 45 right\nset xrange [-0.7:*]\n");
    g_string_append_printf(gp, "plot '%s.dat' using 0:2:xtic(1) with boxes lt 1 title "
                               "'utilisation'\n", name);
    plot_gp_end(gp, name);
    rc = write_figure(c, name, gp, dat, err) ? 1 : -1;
    g_free(title);
    g_string_free(gp, TRUE);
    g_string_free(dat, TRUE);
out:
    for (guint i = 0; i < bars->len; i++)
        g_free(g_array_index(bars, util_bar, i).label);
    g_array_free(bars, TRUE);
    return rc;
}

typedef struct {
    char *label;
    GString *pts;   /* "iteration time_us" lines */
    guint n;
} coll_series;

static void coll_series_free(coll_series *s)
{
    g_free(s->label);
    g_string_free(s->pts, TRUE);
    g_free(s);
}

static int fig_collectives(plot_ctx *c, const char *name, char **why, GError **err)
{
    static const char *const need[] = { "job", "op", "iteration", "time_us", NULL };
    int idx[4];
    int status;
    results_csv *csv = open_input(c, "collectives.csv", need, idx, "collectives.csv is empty", why, &status, err);
    if (!csv)
        return status;
    GPtrArray *series = g_ptr_array_new_with_free_func((GDestroyNotify)coll_series_free);
    GHashTable *by_job = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    double tmax = 0, itmax = 0, itmin = G_MAXDOUBLE;
    int r;
    while ((r = results_csv_next(csv, err)) == 1) {
        double it, tus;
        if (!results_csv_double(csv, idx[2], &it, err) ||
            !results_csv_double(csv, idx[3], &tus, err)) {
            r = -1;
            break;
        }
        char *key = g_strdup_printf("%s (%s)", results_csv_field(csv, idx[0]),
                                    results_csv_field(csv, idx[1]));
        coll_series *s = g_hash_table_lookup(by_job, key);
        if (!s) {
            s = g_new0(coll_series, 1);
            s->label = g_strdup(key);
            s->pts = g_string_new(NULL);
            g_ptr_array_add(series, s);
            g_hash_table_insert(by_job, key, s);
        } else {
            g_free(key);
        }
        g_string_append_printf(s->pts, "%.17g %.17g\n", it, tus);
        s->n++;
        tmax = fmax(tmax, tus);
        itmax = fmax(itmax, it);
        itmin = fmin(itmin, it);
    }
    results_csv_close(csv);
    g_hash_table_destroy(by_job);
    int rc = 0;
    if (r < 0) {
        rc = -1;
        goto out;
    }
    if (series->len == 0) {
        *why = g_strdup("collectives.csv has no iterations");
        goto out;
    }
    double div;   /* time_us is in µs: pick µs or ms */
    const char *u = plot_time_unit(tmax * 1e3, &div);
    div /= 1e3;
    if (div < 1) {
        div = 1;
        u = "µs";
    }
    GString *dat = g_string_new("# iteration time_us, one gnuplot index per job; derived from "
                                "../collectives.csv\n");
    GString *gp = g_string_new(NULL);
    plot_gp_begin(gp, name, "collective completion time per iteration (collectives.csv)");
    g_string_append_printf(gp, "div = %g   # µs per %s\nset title ", div, u);
    char *title = g_strdup_printf("Collective time per iteration: %u job%s", series->len,
                                  series->len == 1 ? "" : "s");
    plot_gp_quote(gp, title);
    g_free(title);
    g_string_append_printf(gp, "\nset xlabel 'iteration'\nset ylabel 'collective time (%s)'\n"
                               "set yrange [0:*]\nset key top right\n", u);
    if (itmax - itmin <= 20)
        g_string_append_printf(gp, "set xtics 1\nset xrange [%.17g:%.17g]\n", itmin - 0.5,
                               itmax + 0.5);
    g_string_append(gp, "plot ");
    for (guint i = 0; i < series->len; i++) {
        coll_series *s = g_ptr_array_index(series, i);
        g_string_append_printf(dat, "# %s\n%s\n\n", s->label, s->pts->str);
        g_string_append_printf(gp, "%s'%s.dat' index %u using 1:($2/div) with linespoints lt %u "
                                   "title ", i ? ", \\\n     " : "", name, i, i + 1);
        plot_gp_quote(gp, s->label);
    }
    g_string_append_c(gp, '\n');
    plot_gp_end(gp, name);
    rc = write_figure(c, name, gp, dat, err) ? 1 : -1;
    g_string_free(gp, TRUE);
    g_string_free(dat, TRUE);
out:
    g_ptr_array_free(series, TRUE);
    return rc;
}

static const figure_fn figures[] = {
    fig_queue_depth, fig_flow_rates,  fig_fct_cdf,     fig_slowdown_cdf,
    fig_pfc_pauses,  fig_ecn_cnp,     fig_utilisation, fig_collectives,
};
G_STATIC_ASSERT(G_N_ELEMENTS(figures) == G_N_ELEMENTS(catalogue));

/* Adds one problem to the combined error. */
static void add_problem(GString *problems, GError *e)
{
    g_string_append_printf(problems, "%s%s", problems->len ? "\n" : "", e->message);
    g_error_free(e);
}

static void remove_stale(const char *plots, const char *name)
{
    static const char *const ext[] = { "gp", "dat", "png", "svg" };
    for (size_t i = 0; i < G_N_ELEMENTS(ext); i++) {
        char *f = g_strdup_printf("%s.%s", name, ext[i]);
        char *p = g_build_filename(plots, f, NULL);
        g_unlink(p);
        g_free(p);
        g_free(f);
    }
}

gboolean plot_results(const char *dir, GError **err)
{
    if (!g_file_test(dir, G_FILE_TEST_IS_DIR)) {
        g_set_error(err, PLOT_ERROR, PLOT_ERROR_INPUT, "%s: no such results folder", dir);
        return FALSE;
    }
    plot_ctx c = { .dir = dir };
    char *sp = g_build_filename(dir, "summary.json", NULL);
    if (g_file_test(sp, G_FILE_TEST_EXISTS)) {
        GError *e = NULL;
        c.sum = results_summary_read(sp, &e);
        if (!c.sum) {
            g_set_error(err, PLOT_ERROR, PLOT_ERROR_INPUT, "%s", e->message);
            g_error_free(e);
            g_free(sp);
            return FALSE;
        }
        c.end_ns = results_summary_end_ns(c.sum);
    }
    g_free(sp);
    c.plots = g_build_filename(dir, "plots", NULL);
    if (g_mkdir_with_parents(c.plots, 0755) != 0) {
        int e = errno;
        g_set_error(err, PLOT_ERROR, PLOT_ERROR_IO, "%s: cannot create: %s", c.plots,
                    g_strerror(e));
        results_summary_free(c.sum);
        g_free(c.plots);
        return FALSE;
    }
    GString *problems = g_string_new(NULL);   /* unusable input files, gnuplot failures */
    gboolean input_problem = FALSE, io_problem = FALSE; /* io: a write failed (disk full) */
    GString *skipped = g_string_new("# figures not drawn, and why (written by rocesim plot)\n");
    GPtrArray *drawn = g_ptr_array_new();
    for (size_t i = 0; i < G_N_ELEMENTS(catalogue); i++) {
        const char *name = catalogue[i].name;
        remove_stale(c.plots, name);
        char *why = NULL;
        GError *e = NULL;
        int r = figures[i](&c, name, &why, &e);
        if (r > 0) {
            g_ptr_array_add(drawn, (gpointer)name);
        } else if (r == 0) {
            g_string_append_printf(skipped, "%s: %s\n", name, why);
        } else {
            g_string_append_printf(skipped, "%s: %s\n", name, e->message);
            if (e->domain == PLOT_ERROR && e->code == PLOT_ERROR_IO) {
                io_problem = TRUE;
                remove_stale(c.plots, name); /* a .dat without its .gp */
            } else {
                input_problem = TRUE;
            }
            add_problem(problems, e);
        }
        g_free(why);
    }
    GError *we = NULL;
    if (!plot_write_file(c.plots, "skipped.txt", skipped, &we)) {
        io_problem = TRUE;
        add_problem(problems, we);
    }

    gboolean ok = TRUE;
    char *gnuplot = plot_find_gnuplot();
    if (!gnuplot) {
        g_set_error(err, PLOT_ERROR, PLOT_ERROR_NO_GNUPLOT, "%s%s%s", PLOT_NO_GNUPLOT_MSG,
                    problems->len ? "\n" : "", problems->str);
        ok = FALSE;
    } else {
        for (guint i = 0; i < drawn->len; i++) {
            GError *e = NULL;
            if (!plot_run_script(gnuplot, c.plots, g_ptr_array_index(drawn, i), &e)) {
                io_problem |= e->code == PLOT_ERROR_IO;
                add_problem(problems, e);
            }
        }
    }
    /* a failed write outranks the rest: it is what the caller must not call a success */
    if (io_problem) {
        g_clear_error(err);
        g_set_error(err, PLOT_ERROR, PLOT_ERROR_IO, "%s", problems->str);
        ok = FALSE;
    } else if (gnuplot && problems->len) {
        g_set_error(err, PLOT_ERROR, input_problem ? PLOT_ERROR_INPUT : PLOT_ERROR_GNUPLOT, "%s", problems->str);
        ok = FALSE;
    }
    g_free(gnuplot);
    g_ptr_array_free(drawn, TRUE);
    g_string_free(problems, TRUE);
    g_string_free(skipped, TRUE);
    results_summary_free(c.sum);
    g_free(c.plots);
    return ok;
}
