/* `rocesim compare DIR_A DIR_B`: two results folders side by side (simulation against the lab,
 * or two settings), with a verdict.
 *
 * What is compared: every numeric key of summary.json "metrics" in either run; per job (matched
 * by name) every numeric key of "jobs"; per port (matched by node and port) max_queue_bytes and
 * p99_queue_bytes. "engine" (wall-clock) is ignored.
 *
 * Rule: A is the reference. A row is within tolerance when
 *     |B - A| <= tolerance * |A|   or   |B - A| <= floor(row)
 * The floor stops near-zero metrics from failing on noise (a paused fraction of 0.0001 against
 * 0.0002); it depends on the metric's unit: counts 0 (one drop is a difference), times 100 ns,
 * bytes 10 KB (a queue of one or two packets is an empty queue, whatever the ratio), fractions
 * 0.001, slowdowns 0.01, bandwidths 0.01 GB/s or Gb/s. --floor changes them per unit kind or
 * per metric key. A metric present in only one run is listed but does not
 * count against the verdict (a lab run cannot measure switch queues).
 *
 * Which run is better: each metric knows its direction (metrics_key_direction: lower is better
 * for times, queues, drops, pauses; higher for bandwidths; neither for counts of marks or
 * bytes). A row out of tolerance with a direction names the better run, and the verdict says
 * which run is better overall (or that they trade off).
 *
 * Replicates: --more-a DIR / --more-b DIR add runs of the same settings under other seeds to
 * either side. The headline metrics are then compared by their means, with the standard
 * deviation and a 95% confidence interval per side, and a difference counts only when it is
 * out of tolerance *and* beyond the run-to-run noise (Welch's t-test at 95%, as in
 * analysis/metrics.c). Jobs and ports are matched in every replicate and judged the same way.
 *
 * Exit status: 0 all within tolerance, 1 some row out of tolerance, 2 bad input. */
#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/metrics.h"
#include "analysis/plot.h"
#include "analysis/report.h"
#include "analysis/compare.h"
#include "results_io/outcome.h"

#define PRINT_PORTS 10   /* busiest matched ports printed on the terminal (all in the HTML) */

/* Floors in each kind's base unit (ns, bytes, fraction, ...), indexed by metrics_kind. */
static const struct {
    const char *name;
    metrics_kind kind;
    double floor;
} kind_floors[] = {
    { "count", METRICS_KIND_COUNT, 0 },        { "time", METRICS_KIND_TIME, 100 },
    { "bytes", METRICS_KIND_BYTES, 10000 },     { "fraction", METRICS_KIND_FRACTION, 0.001 },
    { "ratio", METRICS_KIND_RATIO, 0.01 },     { "GBps", METRICS_KIND_GBYTES_S, 0.01 },
    { "Gbps", METRICS_KIND_GBITS_S, 0.01 },    { "per_s", METRICS_KIND_PER_S, 0 },
};
#define N_KINDS G_N_ELEMENTS(kind_floors)

typedef struct {
    double tolerance;
    double kind_floor[N_KINDS];   /* indexed like kind_floors */
    GHashTable *key_floor;        /* metric key -> double* in the key's own unit */
} cmp_rules;

enum { G_METRICS, G_JOBS, G_PORTS };

typedef struct {
    char *name;        /* "fct_p99_ns", "job ar time_p99_us", "port leaf0:1 max_queue_bytes" */
    char *key;         /* metric key, for units and floors */
    int group;
    gboolean has_a, has_b;
    double a, b;       /* in the key's unit */
    double floor;      /* in the key's unit */
    gboolean out;      /* out of tolerance (and, with replicates, beyond the noise) */
    gboolean noise;    /* out of tolerance but within the run-to-run noise */
    metrics_stats sa, sb; /* over the replicates of each side (n = 1 without) */
    int better;        /* out rows with a direction: +1 B is better, -1 A is better */
    double weight;     /* ports: max queue in either run, to pick the busiest for printing */
} cmp_row;

/* The runs of one side: the first is the one named on the command line. */
typedef struct {
    results_summary **runs;
    guint n;
} cmp_side;

static void row_free(cmp_row *r)
{
    g_free(r->name);
    g_free(r->key);
    g_free(r);
}

static double row_floor(const cmp_rules *ru, const char *key)
{
    double *f = g_hash_table_lookup(ru->key_floor, key);
    if (f)
        return *f;
    double scale;
    metrics_kind k = metrics_key_kind(key, &scale);
    for (size_t i = 0; i < N_KINDS; i++)
        if (kind_floors[i].kind == k)
            return ru->kind_floor[i] / scale;
    return 0;
}

/* A key's values over the runs of a side that have it. */
static metrics_stats side_stats(const cmp_side *side, const char *key)
{
    double *v = g_new(double, side->n);
    guint n = 0;
    for (guint i = 0; i < side->n; i++)
        n += results_json_number(side->runs[i]->metrics, key, &v[n]);
    metrics_stats st = metrics_stats_of(v, n);
    g_free(v);
    return st;
}

static void judge(cmp_row *r, const cmp_rules *ru)
{
    if (!r->has_a || !r->has_b)
        return;
    double d = fabs(r->b - r->a);
    gboolean outside = !(d <= ru->tolerance * fabs(r->a) || d <= r->floor);
    gboolean replicated = r->sa.n > 1 && r->sb.n > 1;
    r->noise = outside && replicated && !metrics_differ_beyond_noise(&r->sa, &r->sb);
    r->out = outside && !r->noise;
    metrics_direction dir = metrics_key_direction(r->key);
    if (r->out && dir != METRICS_NEITHER)
        r->better = (r->b < r->a) == (dir == METRICS_LOWER_BETTER) ? 1 : -1;
}

/* A row from one object of each run (jobs, ports: the sides' first runs). */
static void add_row(GPtrArray *rows, const cmp_rules *ru, int group, const char *name,
                    const char *key, JsonObject *oa, JsonObject *ob)
{
    cmp_row *r = g_new0(cmp_row, 1);
    r->name = g_strdup(name);
    r->key = g_strdup(key);
    r->group = group;
    r->has_a = results_json_number(oa, key, &r->a);
    r->has_b = results_json_number(ob, key, &r->b);
    r->sa = metrics_stats_of(&r->a, r->has_a);
    r->sb = metrics_stats_of(&r->b, r->has_b);
    r->floor = row_floor(ru, key);
    judge(r, ru);
    g_ptr_array_add(rows, r);
}

/* A headline metric: the mean over each side's replicates. */
static void add_metric_row(GPtrArray *rows, const cmp_rules *ru, const char *key, const cmp_side *a,
                           const cmp_side *b)
{
    cmp_row *r = g_new0(cmp_row, 1);
    r->name = g_strdup(key);
    r->key = g_strdup(key);
    r->group = G_METRICS;
    r->sa = side_stats(a, key);
    r->sb = side_stats(b, key);
    r->has_a = r->sa.n > 0;
    r->has_b = r->sb.n > 0;
    r->a = r->sa.mean;
    r->b = r->sb.mean;
    r->floor = row_floor(ru, key);
    judge(r, ru);
    g_ptr_array_add(rows, r);
}

/* Numeric member names of a and b: a's order first, then those only in b. */
static GPtrArray *numeric_keys(JsonObject *a, JsonObject *b, const char *const *skip)
{
    GPtrArray *keys = g_ptr_array_new_with_free_func(g_free);
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (size_t i = 0; skip && skip[i]; i++)
        g_hash_table_add(seen, (gpointer)skip[i]);
    JsonObject *objs[2] = { a, b };
    for (int o = 0; o < 2; o++) {
        if (!objs[o])
            continue;
        GList *members = json_object_get_members(objs[o]);
        for (GList *l = members; l; l = l->next) {
            double v;
            if (g_hash_table_contains(seen, l->data) || !results_json_number(objs[o], l->data, &v))
                continue;
            char *k = g_strdup(l->data);
            g_ptr_array_add(keys, k);
            g_hash_table_add(seen, k);
        }
        g_list_free(members);
    }
    g_hash_table_destroy(seen);
    return keys;
}

/* Objects of an array by identity ("ar", "leaf0:1"), in order; `order` keeps first-seen ids. */
static GHashTable *index_objects(JsonArray *arr, gboolean ports, GPtrArray *order)
{
    GHashTable *t = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; arr && i < json_array_get_length(arr); i++) {
        JsonNode *n = json_array_get_element(arr, i);
        if (!JSON_NODE_HOLDS_OBJECT(n))
            continue;
        JsonObject *o = json_node_get_object(n);
        char *id;
        if (ports) {
            char *node = results_json_string(o, "node"), *port = results_json_string(o, "port");
            id = node && port ? g_strdup_printf("%s:%s", node, port) : NULL;
            g_free(node);
            g_free(port);
        } else {
            id = results_json_string(o, "job");
        }
        if (!id || g_hash_table_contains(t, id)) {
            g_free(id);
            continue;
        }
        if (order)
            g_ptr_array_add(order, g_strdup(id));
        g_hash_table_insert(t, id, o);
    }
    return t;
}

typedef struct {
    guint only_a, only_b, matched;
} match_count;

/* The values of (object id, key) in a jobs or ports array over a side's replicates. */
static metrics_stats array_stats(const cmp_side *side, gboolean ports, const char *id, const char *key)
{
    double *v = g_new(double, side->n);
    guint n = 0;
    for (guint i = 0; i < side->n; i++) {
        results_summary *r = side->runs[i];
        GHashTable *t = index_objects(ports ? r->ports : r->jobs, ports, NULL);
        JsonObject *o = g_hash_table_lookup(t, id);
        n += o && results_json_number(o, key, &v[n]);
        g_hash_table_destroy(t);
    }
    metrics_stats st = metrics_stats_of(v, n);
    g_free(v);
    return st;
}

/* With replicates, a job or port row is judged on its means over them too. */
static void replicate_row(cmp_row *r, const cmp_rules *ru, const cmp_side *a, const cmp_side *b, gboolean ports,
                          const char *id)
{
    if (a->n < 2 && b->n < 2)
        return;
    r->sa = array_stats(a, ports, id, r->key);
    r->sb = array_stats(b, ports, id, r->key);
    r->a = r->sa.mean;
    r->b = r->sb.mean;
    r->out = r->noise = FALSE;
    r->better = 0;
    judge(r, ru);
}

static void compare_arrays(GPtrArray *rows, const cmp_rules *ru, const cmp_side *sa, const cmp_side *sb,
                           gboolean ports, match_count *mc)
{
    JsonArray *aa = ports ? sa->runs[0]->ports : sa->runs[0]->jobs;
    JsonArray *ab = ports ? sb->runs[0]->ports : sb->runs[0]->jobs;
    GPtrArray *order = g_ptr_array_new_with_free_func(g_free);
    GHashTable *ta = index_objects(aa, ports, order);
    GHashTable *tb = index_objects(ab, ports, order);
    GHashTable *done = g_hash_table_new(g_str_hash, g_str_equal);
    static const char *const port_keys[] = { "max_queue_bytes", "p99_queue_bytes" };
    static const char *const job_skip[] = { "job", "op", NULL };
    for (guint i = 0; i < order->len; i++) {
        const char *id = g_ptr_array_index(order, i);
        if (g_hash_table_contains(done, id))
            continue;
        g_hash_table_add(done, (gpointer)id);
        JsonObject *oa = g_hash_table_lookup(ta, id), *ob = g_hash_table_lookup(tb, id);
        if (!oa || !ob) {
            /* Ports or jobs in one run only are counted, not listed row by row. */
            if (oa)
                mc->only_a++;
            else
                mc->only_b++;
            continue;
        }
        mc->matched++;
        if (ports) {
            double qa = 0, qb = 0;
            results_json_number(oa, "max_queue_bytes", &qa);
            results_json_number(ob, "max_queue_bytes", &qb);
            for (size_t k = 0; k < G_N_ELEMENTS(port_keys); k++) {
                char *name = g_strdup_printf("port %s %s", id, port_keys[k]);
                add_row(rows, ru, G_PORTS, name, port_keys[k], oa, ob);
                replicate_row(g_ptr_array_index(rows, rows->len - 1), ru, sa, sb, TRUE, id);
                ((cmp_row *)g_ptr_array_index(rows, rows->len - 1))->weight = fmax(qa, qb);
                g_free(name);
            }
        } else {
            GPtrArray *keys = numeric_keys(oa, ob, job_skip);
            for (guint k = 0; k < keys->len; k++) {
                char *name = g_strdup_printf("job %s %s", id, (char *)g_ptr_array_index(keys, k));
                add_row(rows, ru, G_JOBS, name, g_ptr_array_index(keys, k), oa, ob);
                replicate_row(g_ptr_array_index(rows, rows->len - 1), ru, sa, sb, FALSE, id);
                g_free(name);
            }
            g_ptr_array_free(keys, TRUE);
        }
    }
    g_hash_table_destroy(done);
    g_hash_table_destroy(ta);
    g_hash_table_destroy(tb);
    g_ptr_array_free(order, TRUE);
}

/* ---- formatting -------------------------------------------------------------------------- */

/* Side b (0 = A, 1 = B): its value, or its mean ± the 95% confidence half-width when the side
 * has replicates. */
static char *fmt_value(const cmp_row *r, int b)
{
    if (!(b ? r->has_b : r->has_a))
        return g_strdup("—");
    const metrics_stats *st = b ? &r->sb : &r->sa;
    char *m = metrics_format(r->key, b ? r->b : r->a);
    if (st->n < 2)
        return m;
    char *ci = metrics_format(r->key, st->ci95);
    char *out = g_strdup_printf("%s ± %s", m, ci);
    g_free(m);
    g_free(ci);
    return out;
}

static const char *fmt_better(const cmp_row *r)
{
    return r->better > 0 ? "B" : r->better < 0 ? "A" : r->noise ? "noise" : "";
}

static char *fmt_diff(const cmp_row *r)
{
    if (!r->has_a || !r->has_b)
        return g_strdup("");
    double d = r->b - r->a;
    if (d == 0)
        return g_strdup("0");
    char *s = metrics_format(r->key, fabs(d));
    char *out = g_strdup_printf("%s%s", d > 0 ? "+" : d < 0 ? "-" : "", s);
    g_free(s);
    return out;
}

static char *fmt_rel(const cmp_row *r)
{
    if (!r->has_a || !r->has_b)
        return g_strdup(r->has_a ? "only in A" : "only in B");
    double d = r->b - r->a;
    if (d == 0)
        return g_strdup("0.0%");
    if (r->a == 0)
        return g_strdup("n/a");
    return g_strdup_printf("%+.1f%%", 100.0 * d / fabs(r->a));
}

/* UTF-8 aware width, for lining up "µs" and "—". */
static int width(const char *s)
{
    return (int)g_utf8_strlen(s, -1);
}

static void print_padded(const char *s, int w, gboolean right)
{
    int pad = w - width(s);
    if (right)
        printf("%*s%s", pad > 0 ? pad : 0, "", s);
    else
        printf("%s%*s", s, pad > 0 ? pad : 0, "");
}

/* ---- overlay figures --------------------------------------------------------------------- */

typedef struct {
    const char *dir_a, *dir_b;     /* results folders */
    const char *label_a, *label_b; /* legend text */
    const char *out;               /* OUTDIR */
} overlay_ctx;

/* Appends the CDF of transfers.csv fct_ns of dir as a block; FALSE when there is none. */
static gboolean fct_block(GString *dat, const char *dir, double *lo, double *hi, GError **err)
{
    char *p = g_build_filename(dir, "transfers.csv", NULL);
    double *v = NULL;
    size_t n = 0;
    GError *e = NULL;
    gboolean ok = results_csv_read_column(p, "fct_ns", &v, &n, &e);
    g_free(p);
    if (!ok) {
        if (!g_error_matches(e, G_FILE_ERROR, G_FILE_ERROR_NOENT))
            g_propagate_error(err, e);
        else
            g_error_free(e);
    }
    g_string_append_printf(dat, "# CDF of fct_ns in %s/transfers.csv: fct_ns fraction_le\n", dir);
    if (ok && n > 0) {
        stats_sort(v, n);
        *lo = fmin(*lo, v[0]);
        *hi = fmax(*hi, v[n - 1]);
        GArray *cdf = stats_cdf(v, n, 2000);
        g_string_append_printf(dat, "%.17g 0\n", v[0]);
        for (guint i = 0; i < cdf->len; i++) {
            stats_point *pt = &g_array_index(cdf, stats_point, i);
            g_string_append_printf(dat, "%.17g %.17g\n", pt->x, pt->y);
        }
        g_array_free(cdf, TRUE);
    } else {
        g_string_append(dat, "NaN NaN\n");   /* keeps index 0/1 meaning A/B */
    }
    g_string_append(dat, "\n\n");
    g_free(v);
    return ok && n > 0;
}

static void gp_legend(GString *gp, const char *run, const char *extra)
{
    char *t = extra ? g_strdup_printf("%s %s", run, extra) : g_strdup(run);
    g_string_append(gp, " title ");
    plot_gp_quote(gp, t);
    g_free(t);
}

/* Each overlay returns TRUE when it wrote NAME.gp. */
static gboolean overlay_fct(const overlay_ctx *c, const char *name, GError **err)
{
    GString *dat = g_string_new(NULL);
    double lo = G_MAXDOUBLE, hi = 0;
    gboolean ha = fct_block(dat, c->dir_a, &lo, &hi, err);
    gboolean hb = fct_block(dat, c->dir_b, &lo, &hi, err);
    gboolean wrote = FALSE;
    if (ha || hb) {
        double div;
        const char *u = plot_time_unit(hi, &div);
        GString *gp = g_string_new(NULL);
        plot_gp_begin(gp, name, "FCT CDF of both runs (transfers.csv)");
        g_string_append_printf(gp, "div = %g   # ns per %s\n"
                                   "set title 'Flow completion time CDF, A against B'\n"
                                   "set xlabel 'flow completion time (%s)'\n"
                                   "set ylabel 'fraction of transfers'\nset yrange [0:1.02]\n"
                                   "set key bottom right\n", div, u, u);
        if (lo > 0 && hi / lo > 50)
            g_string_append(gp, "set logscale x\nset autoscale xfix\n");
        g_string_append(gp, "plot ");
        if (ha) {
            g_string_append_printf(gp, "'%s.dat' index 0 using ($1/div):2 with steps lt 1 lw 2",
                                   name);
            gp_legend(gp, c->label_a, NULL);
        }
        if (hb) {
            g_string_append_printf(gp, "%s'%s.dat' index 1 using ($1/div):2 with steps lt 2 lw 2 "
                                       "dt 2", ha ? ", \\\n     " : "", name);
            gp_legend(gp, c->label_b, NULL);
        }
        g_string_append_c(gp, '\n');
        plot_gp_end(gp, name);
        char *df = g_strdup_printf("%s.dat", name), *gf = g_strdup_printf("%s.gp", name);
        wrote = plot_write_file(c->out, df, dat, err) && plot_write_file(c->out, gf, gp, err);
        g_free(df);
        g_free(gf);
        g_string_free(gp, TRUE);
    }
    g_string_free(dat, TRUE);
    return wrote;
}

/* Scans a series file; NULL (no error) when the file is missing. */
static GPtrArray *scan_opt(const char *dir, const char *file, results_series_kind kind,
                           GError **err)
{
    char *p = g_build_filename(dir, file, NULL);
    GError *e = NULL;
    GPtrArray *s = results_series_scan(p, kind, &e);
    g_free(p);
    if (!s) {
        if (g_error_matches(e, G_FILE_ERROR, G_FILE_ERROR_NOENT))
            g_error_free(e);
        else
            g_propagate_error(err, e);
    }
    return s;
}

static GHashTable *by_key(GPtrArray *series)
{
    GHashTable *t = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; series && i < series->len; i++) {
        results_series *s = g_ptr_array_index(series, i);
        g_hash_table_insert(t, s->key, s);
    }
    return t;
}

/* Overlay of the `want` busiest series common to both runs (queues: the busiest queue; rates:
 * the busiest flows). A is solid, B dashed, one colour per series. */
static gboolean overlay_series(const overlay_ctx *c, const char *name, const char *file,
                               results_series_kind kind, guint want, GError **err)
{
    GPtrArray *sa = scan_opt(c->dir_a, file, kind, err);
    GPtrArray *sb = sa ? scan_opt(c->dir_b, file, kind, err) : NULL;
    gboolean wrote = FALSE;
    if (!sa || !sb) {
        if (sa)
            g_ptr_array_free(sa, TRUE);
        return FALSE;
    }
    GHashTable *kb = by_key(sb);
    /* Common series ranked by the larger of their two scores. */
    GPtrArray *pick_a = g_ptr_array_new(), *pick_b = g_ptr_array_new();
    GArray *score = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; i < sa->len; i++) {
        results_series *a = g_ptr_array_index(sa, i), *b = g_hash_table_lookup(kb, a->key);
        if (!b)
            continue;
        double s = kind == RESULTS_SERIES_QUEUES ? fmax(a->vmax, b->vmax) : fmax(a->area, b->area);
        if (s <= 0)
            continue;
        guint at = 0;
        while (at < score->len && g_array_index(score, double, at) >= s)
            at++;
        if (at >= want)
            continue;
        g_array_insert_val(score, at, s);
        g_ptr_array_insert(pick_a, (gint)at, a);
        g_ptr_array_insert(pick_b, (gint)at, b);
        if (score->len > want) {
            g_array_set_size(score, want);
            g_ptr_array_set_size(pick_a, (gint)want);
            g_ptr_array_set_size(pick_b, (gint)want);
        }
    }
    if (pick_a->len == 0)
        goto out;
    char *pa = g_build_filename(c->dir_a, file, NULL), *pb = g_build_filename(c->dir_b, file, NULL);
    gboolean loaded = results_series_load(pa, kind, pick_a, err) &&
                      results_series_load(pb, kind, pick_b, err);
    g_free(pa);
    g_free(pb);
    if (!loaded)
        goto out;
    double tmax = 0, vmax = 0;
    for (guint i = 0; i < pick_a->len; i++) {
        results_series *a = g_ptr_array_index(pick_a, i), *b = g_ptr_array_index(pick_b, i);
        tmax = fmax(tmax, fmax(a->t_last, b->t_last));
        vmax = fmax(vmax, fmax(a->vmax, b->vmax));
    }
    double tdiv, ydiv = 1;
    const char *tu = plot_time_unit(tmax, &tdiv);
    const char *yu = "Gb/s";
    if (kind == RESULTS_SERIES_QUEUES) {
        ydiv = vmax >= 2e6 ? 1e6 : 1e3;
        yu = vmax >= 2e6 ? "MB" : "KB";
    }
    GString *dat = g_string_new(NULL), *gp = g_string_new(NULL);
    plot_gp_begin(gp, name, kind == RESULTS_SERIES_QUEUES
                                ? "queue depth of the busiest queue common to both runs"
                                : "sending rate of the busiest flows common to both runs");
    g_string_append_printf(gp, "tdiv = %g   # ns per %s\nydiv = %g\nset title ", tdiv, tu, ydiv);
    char *title = kind == RESULTS_SERIES_QUEUES
                      ? g_strdup_printf("Queue depth of %s, A against B",
                                        ((results_series *)g_ptr_array_index(pick_a, 0))->label)
                      : g_strdup_printf("Sending rate of the %u busiest common flow%s, A against B",
                                        pick_a->len, pick_a->len == 1 ? "" : "s");
    plot_gp_quote(gp, title);
    g_free(title);
    g_string_append_printf(gp, "\nset xlabel 'time (%s)'\nset ylabel '%s (%s)'\n"
                               "set xrange [0:*]\nset yrange [0:*]\nset key top right\nplot ",
                           tu, kind == RESULTS_SERIES_QUEUES ? "queue depth" : "sending rate", yu);
    guint block = 0;
    for (guint i = 0; i < pick_a->len; i++) {
        results_series *ab[2] = { g_ptr_array_index(pick_a, i), g_ptr_array_index(pick_b, i) };
        for (int r = 0; r < 2; r++) {
            plot_dat_series(dat, ab[r], 2000, 0);
            /* One series: a colour per run; several: a colour per series, B dashed. */
            guint lt = pick_a->len == 1 ? (guint)r + 1 : i + 1;
            g_string_append_printf(gp, "%s'%s.dat' index %u using ($1/tdiv):($2/ydiv) with steps "
                                       "lt %u%s", block ? ", \\\n     " : "", name, block, lt,
                                   r ? " dt 2" : "");
            char *extra = kind == RESULTS_SERIES_QUEUES ? NULL
                                                        : g_strdup_printf("(%s)", ab[r]->label);
            gp_legend(gp, r ? c->label_b : c->label_a, extra);
            g_free(extra);
            block++;
        }
    }
    g_string_append_c(gp, '\n');
    plot_gp_end(gp, name);
    char *df = g_strdup_printf("%s.dat", name), *gf = g_strdup_printf("%s.gp", name);
    wrote = plot_write_file(c->out, df, dat, err) && plot_write_file(c->out, gf, gp, err);
    g_free(df);
    g_free(gf);
    g_string_free(dat, TRUE);
    g_string_free(gp, TRUE);
out:
    g_array_free(score, TRUE);
    g_ptr_array_free(pick_a, TRUE);
    g_ptr_array_free(pick_b, TRUE);
    g_hash_table_destroy(kb);
    g_ptr_array_free(sa, TRUE);
    g_ptr_array_free(sb, TRUE);
    return wrote;
}

static const plot_desc overlays[] = {
    { "overlay_fct_cdf", "Flow completion time CDF",
      "CDF of fct_ns from transfers.csv of both runs: A solid, B dashed." },
    { "overlay_queue", "Queue depth of the busiest common queue",
      "Egress queue depth (queues.csv) of the queue with the highest peak among the queues "
      "present in both runs: A solid, B dashed." },
    { "overlay_rates", "Sending rate of the busiest common flows",
      "Congestion-control rate (rates.csv) of the flows that sent most in both runs: A solid, "
      "B dashed, one colour per flow." },
};

/* Writes and draws the overlays; returns the number drawn, problems go to warnings. */
static guint draw_overlays(const overlay_ctx *c, GString *warnings)
{
    gboolean wrote[G_N_ELEMENTS(overlays)];
    GError *e = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(overlays); i++) {
        const char *name = overlays[i].name;
        for (const char *const *x = (const char *const[]){ "gp", "dat", "png", "svg", NULL }; *x;
             x++) {
            char *f = g_strdup_printf("%s/%s.%s", c->out, name, *x);
            g_unlink(f);   /* no stale figure from an earlier comparison */
            g_free(f);
        }
        if (i == 0)
            wrote[i] = overlay_fct(c, name, &e);
        else if (i == 1)
            wrote[i] = overlay_series(c, name, "queues.csv", RESULTS_SERIES_QUEUES, 1, &e);
        else
            wrote[i] = overlay_series(c, name, "rates.csv", RESULTS_SERIES_RATES, 3, &e);
        if (e) {
            g_string_append_printf(warnings, "%s\n", e->message);
            g_clear_error(&e);
        }
    }
    char *gnuplot = plot_find_gnuplot();
    guint drawn = 0;
    if (!gnuplot) {
        g_string_append(warnings, PLOT_NO_GNUPLOT_MSG "\n");
        return 0;
    }
    for (size_t i = 0; i < G_N_ELEMENTS(overlays); i++) {
        if (!wrote[i])
            continue;
        if (plot_run_script(gnuplot, c->out, overlays[i].name, &e))
            drawn++;
        else {
            g_string_append_printf(warnings, "%s\n", e->message);
            g_clear_error(&e);
        }
    }
    g_free(gnuplot);
    return drawn;
}

/* ---- outputs ----------------------------------------------------------------------------- */

static void json_num_or_null(JsonBuilder *b, const char *k, gboolean has, double v)
{
    json_builder_set_member_name(b, k);
    if (has && isfinite(v))
        json_builder_add_double_value(b, v);
    else
        json_builder_add_null_value(b);
}

static const char *group_name(int g)
{
    return g == G_METRICS ? "metrics" : g == G_JOBS ? "jobs" : "ports";
}

static gboolean write_json(const char *out, const char *a, const char *b, const cmp_rules *ru,
                           GPtrArray *rows, guint compared, guint nout, guint one_sided,
                           const char *overall, GError **err)
{
    JsonBuilder *jb = json_builder_new();
    json_builder_begin_object(jb);
    outcome_json_str(jb, "a", a);
    outcome_json_str(jb, "b", b);
    json_builder_set_member_name(jb, "tolerance");
    json_builder_add_double_value(jb, ru->tolerance);
    json_builder_set_member_name(jb, "rows");
    json_builder_begin_array(jb);
    for (guint i = 0; i < rows->len; i++) {
        cmp_row *r = g_ptr_array_index(rows, i);
        json_builder_begin_object(jb);
        outcome_json_str(jb, "name", r->name);
        outcome_json_str(jb, "key", r->key);
        outcome_json_str(jb, "group", group_name(r->group));
        gboolean both = r->has_a && r->has_b;
        json_num_or_null(jb, "a", r->has_a, r->a);
        json_num_or_null(jb, "b", r->has_b, r->b);
        json_num_or_null(jb, "diff", both, r->b - r->a);
        json_num_or_null(jb, "rel", both && r->a != 0, (r->b - r->a) / fabs(r->a));
        json_num_or_null(jb, "floor", TRUE, r->floor);
        json_builder_set_member_name(jb, "out_of_tolerance");
        json_builder_add_boolean_value(jb, r->out);
        json_builder_set_member_name(jb, "within_noise");
        json_builder_add_boolean_value(jb, r->noise);
        json_builder_set_member_name(jb, "runs_a");
        json_builder_add_int_value(jb, r->sa.n);
        json_builder_set_member_name(jb, "runs_b");
        json_builder_add_int_value(jb, r->sb.n);
        json_num_or_null(jb, "sd_a", r->sa.n > 1, r->sa.sd);
        json_num_or_null(jb, "sd_b", r->sb.n > 1, r->sb.sd);
        static const char *const dirs[] = { "neither", "lower", "higher" };
        outcome_json_str(jb, "better_is", dirs[metrics_key_direction(r->key)]);
        json_builder_set_member_name(jb, "better");
        if (r->better)
            json_builder_add_string_value(jb, r->better > 0 ? "b" : "a");
        else
            json_builder_add_null_value(jb);
        json_builder_end_object(jb);
    }
    json_builder_end_array(jb);
    json_builder_set_member_name(jb, "compared");
    json_builder_add_int_value(jb, compared);
    json_builder_set_member_name(jb, "out_of_tolerance");
    json_builder_add_int_value(jb, nout);
    json_builder_set_member_name(jb, "one_sided");
    json_builder_add_int_value(jb, one_sided);
    outcome_json_str(jb, "verdict", nout ? "different" : "same");
    outcome_json_str(jb, "better", overall);
    json_builder_end_object(jb);
    JsonGenerator *g = json_generator_new();
    JsonNode *root = json_builder_get_root(jb);
    json_generator_set_root(g, root);
    json_generator_set_pretty(g, TRUE);
    char *p = g_build_filename(out, "compare.json", NULL);
    gboolean ok = json_generator_to_file(g, p, err);
    g_free(p);
    json_node_unref(root);
    g_object_unref(g);
    g_object_unref(jb);
    return ok;
}

static void html_rows(GString *h, GPtrArray *rows, int group, const char *title)
{
    gboolean any = FALSE;
    for (guint i = 0; i < rows->len; i++) {
        cmp_row *r = g_ptr_array_index(rows, i);
        if (r->group != group)
            continue;
        if (!any) {
            g_string_append_printf(h, "<tr class=\"group\"><td colspan=\"6\">%s</td></tr>\n",
                                   title);
            any = TRUE;
        }
        char *va = fmt_value(r, 0), *vb = fmt_value(r, 1);
        char *d = fmt_diff(r), *rel = fmt_rel(r);
        const char *cls = r->out ? " class=\"out\""
                          : (!r->has_a || !r->has_b) ? " class=\"one\"" : "";
        g_string_append_printf(h, "<tr%s><td><span class=\"key\">", cls);
        report_html_escape(h, r->name);
        g_string_append(h, "</span></td><td class=\"n\">");
        report_html_escape(h, va);
        g_string_append(h, "</td><td class=\"n\">");
        report_html_escape(h, vb);
        g_string_append(h, "</td><td class=\"n\">");
        report_html_escape(h, d);
        g_string_append(h, "</td><td class=\"n\">");
        report_html_escape(h, rel);
        g_string_append_printf(h, "</td><td class=\"mark\">%s %s</td></tr>\n", r->out ? "✗" : "", fmt_better(r));
        g_free(va);
        g_free(vb);
        g_free(d);
        g_free(rel);
    }
}

static gboolean write_html(const char *out, const char *a, const char *b, const cmp_rules *ru,
                           GPtrArray *rows, const char *verdict, guint nout,
                           const char *floors_text, GError **err)
{
    GString *h = g_string_new(NULL);
    report_html_begin(h, "rocesim compare");
    g_string_append(h, "<header><h1>Comparison of two runs</h1><p class=\"sub\">A = <code>");
    report_html_escape(h, a);
    g_string_append(h, "</code> (reference) · B = <code>");
    report_html_escape(h, b);
    g_string_append_printf(h, "</code></p></header>\n<div class=\"box %s\"><h2>",
                           nout ? "bad" : "ok");
    report_html_escape(h, verdict);
    g_string_append_printf(h, "</h2>Tolerance %.4g%% of A, or an absolute difference up to the "
                              "floor of the metric's unit (", ru->tolerance * 100);
    report_html_escape(h, floors_text);
    g_string_append(h, "). Wall-clock engine figures are not compared.</div>\n"
                       "<h2>Metrics</h2>\n<table>\n<tr><th>Metric</th><th class=\"n\">A</th>"
                       "<th class=\"n\">B</th><th class=\"n\">B − A</th><th class=\"n\">"
                       "relative</th><th>better</th></tr>\n");
    html_rows(h, rows, G_METRICS, "Headline metrics (summary.json metrics)");
    html_rows(h, rows, G_JOBS, "Jobs (matched by name)");
    html_rows(h, rows, G_PORTS, "Ports (matched by node and port)");
    g_string_append(h, "</table>\n<h2>Figures</h2>\n");
    const char *names[G_N_ELEMENTS(overlays)];
    for (size_t i = 0; i < G_N_ELEMENTS(overlays); i++)
        names[i] = overlays[i].name;
    gboolean embed = report_png_bytes(out, names, G_N_ELEMENTS(overlays)) <= REPORT_EMBED_LIMIT;
    guint drawn = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(overlays); i++)
        drawn += report_html_figure(h, out, ".", overlays[i].name, overlays[i].title,
                                    overlays[i].caption, embed);
    if (!drawn)
        g_string_append(h, "<p class=\"note\">No overlay figures (no common data, or gnuplot is "
                           "not installed).</p>\n");
    g_string_append(h, "<footer>Written by <code>rocesim compare</code>; the same table is in "
                       "compare.json.</footer>\n");
    report_html_end(h);
    char *p = g_build_filename(out, "compare.html", NULL);
    gboolean ok = g_file_set_contents(p, h->str, (gssize)h->len, err);
    g_free(p);
    g_string_free(h, TRUE);
    return ok;
}

/* ---- the command ------------------------------------------------------------------------- */

static gboolean parse_tolerance(const char *s, double *out)
{
    char *end = NULL;
    double v = g_ascii_strtod(s, &end);
    if (end == s || !isfinite(v))
        return FALSE;
    if (*end == '%') {
        v /= 100;
        end++;
    }
    if (*end || v < 0)
        return FALSE;
    *out = v;
    return TRUE;
}

static gboolean parse_floor(cmp_rules *ru, const char *spec, GError **err)
{
    const char *eq = strchr(spec, '=');
    char *end = NULL;
    double v = eq ? g_ascii_strtod(eq + 1, &end) : NAN;
    if (!eq || eq == spec || end == eq + 1 || *end || !isfinite(v) || v < 0) {
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--floor '%s': expected KIND=VALUE or METRIC=VALUE with a non-negative "
                    "number, e.g. time=500 (ns), bytes=4096, fraction=0.01, drops=0", spec);
        return FALSE;
    }
    char *name = g_strndup(spec, (gsize)(eq - spec));
    gboolean kind = FALSE;
    for (size_t i = 0; i < N_KINDS; i++) {
        if (!strcmp(name, kind_floors[i].name) || !strcmp(name, "all")) {
            ru->kind_floor[i] = v;
            kind = TRUE;
        }
    }
    if (kind)
        g_free(name);
    else
        g_hash_table_replace(ru->key_floor, name, g_memdup2(&v, sizeof v));
    return TRUE;
}

static char *floors_text(const cmp_rules *ru)
{
    GString *s = g_string_new(NULL);
    static const char *const unit[] = { "", " ns", " B", "", "", " GB/s", " Gb/s", "/s" };
    for (size_t i = 0; i < N_KINDS; i++)
        if (kind_floors[i].kind != METRICS_KIND_PER_S)
            g_string_append_printf(s, "%s%s %g%s", s->len ? ", " : "", kind_floors[i].name,
                                   ru->kind_floor[i], unit[i]);
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, ru->key_floor);
    while (g_hash_table_iter_next(&it, &k, &v))
        g_string_append_printf(s, ", %s %g", (char *)k, *(double *)v);
    return g_string_free(s, FALSE);
}

/* Loads DIR/summary.json for compare; prints the problem and returns NULL on bad input. */
static results_summary *load_run(const char *dir)
{
    if (!g_file_test(dir, G_FILE_TEST_IS_DIR)) {
        g_printerr("rocesim compare: %s: %s\n", dir,
                   g_file_test(dir, G_FILE_TEST_EXISTS) ? "not a folder: expected a results folder"
                                                        : "no such results folder");
        return NULL;
    }
    GError *e = NULL;
    results_summary *s = results_summary_read_dir(dir, &e);
    if (!s) {
        g_printerr("rocesim compare: %s\n", e->message);
        g_error_free(e);
        return NULL;
    }
    if (!s->metrics) {
        g_printerr("rocesim compare: %s: no \"metrics\" object: not a results summary\n", s->path);
        results_summary_free(s);
        return NULL;
    }
    return s;
}

static char *trimmed_basename(const char *dir)
{
    char *t = g_strdup(dir);
    size_t n = strlen(t);
    while (n > 1 && t[n - 1] == G_DIR_SEPARATOR)
        t[--n] = '\0';
    char *canon = g_canonicalize_filename(t, NULL);   /* "." -> the folder's real name */
    char *b = g_path_get_basename(canon);
    g_free(canon);
    g_free(t);
    return b;
}

static void side_free(cmp_side *side)
{
    for (guint i = 0; i < side->n; i++)
        results_summary_free(side->runs[i]);
    g_free(side->runs);
    side->runs = NULL;
    side->n = 0;
}

/* The run named on the command line, then its replicates; FALSE (message printed) on bad
 * input. */
static gboolean side_load(cmp_side *side, const char *first, char **more)
{
    guint n = 1 + (more ? g_strv_length(more) : 0);
    side->runs = g_new0(results_summary *, n);
    for (guint i = 0; i < n; i++) {
        if (!(side->runs[i] = load_run(i ? more[i - 1] : first)))
            return FALSE;
        side->n++;
    }
    return TRUE;
}

/* The capture points of a pcap-stats folder ("host0-0.pcap,leaf0-0.pcap"), or NULL for a
 * simulated or replayed run. */
static char *capture_files(const cmp_side *side)
{
    return results_summary_scenario(side->runs[0], "pcap-stats", "files");
}

/* What a capture measures of the flows it saw: compared against a run, only these are like
 * with like (a capture sees no switch queues, and only the pauses of its own links). */
static const char *const capture_metrics[] = { "transfers", "transfers_completed", "bytes", "completion_ns",
                                               "fct_p50_ns", "fct_p99_ns", "fct_max_ns", "ecn_marked",
                                               "cnp_sent", "retransmitted_packets", NULL };

static gboolean is_capture_metric(const char *key)
{
    for (const char *const *m = capture_metrics; *m; m++)
        if (!strcmp(*m, key))
            return TRUE;
    return FALSE;
}

static GPtrArray *build_rows(const cmp_rules *ru, const cmp_side *a, const cmp_side *b, match_count *jobs,
                             match_count *ports, gboolean capture)
{
    GPtrArray *rows = g_ptr_array_new_with_free_func((GDestroyNotify)row_free);
    GPtrArray *mkeys = numeric_keys(a->runs[0]->metrics, b->runs[0]->metrics, NULL);
    for (guint i = 0; i < mkeys->len; i++) {
        const char *k = g_ptr_array_index(mkeys, i);
        if (g_str_has_prefix(k, "jobs.")) /* the jobs rows below have them */
            continue;
        if (capture && !is_capture_metric(k))
            continue;
        add_metric_row(rows, ru, k, a, b);
    }
    g_ptr_array_free(mkeys, TRUE);
    if (!capture) {
        compare_arrays(rows, ru, a, b, FALSE, jobs);
        compare_arrays(rows, ru, a, b, TRUE, ports);
    }
    return rows;
}

/* Terminal table: every metric and job row; of the ports, the PRINT_PORTS busiest (by max
 * queue in either run) and any out of tolerance. */
static void print_table(GPtrArray *rows)
{
    GArray *port_w = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; i < rows->len; i++) {
        cmp_row *r = g_ptr_array_index(rows, i);
        if (r->group == G_PORTS && !strcmp(r->key, "max_queue_bytes"))
            g_array_append_val(port_w, r->weight);
    }
    stats_sort((double *)port_w->data, port_w->len);
    double cut = port_w->len > PRINT_PORTS ? g_array_index(port_w, double, port_w->len - PRINT_PORTS) : -1;
    g_array_free(port_w, TRUE);
    GPtrArray *shown = g_ptr_array_new();
    guint hidden = 0;
    for (guint i = 0; i < rows->len; i++) {
        cmp_row *r = g_ptr_array_index(rows, i);
        if (r->group == G_PORTS && !r->out && r->weight < cut) {
            hidden++;
            continue;
        }
        g_ptr_array_add(shown, r);
    }
    enum { NCOL = 6 };
    const char *hdr[NCOL] = { "metric", "A", "B", "B-A", "rel", "better" };
    int w[NCOL];
    for (int c = 0; c < NCOL; c++)
        w[c] = width(hdr[c]);
    char ***cells = g_new0(char **, shown->len);
    for (guint i = 0; i < shown->len; i++) {
        cmp_row *r = g_ptr_array_index(shown, i);
        cells[i] = g_new0(char *, NCOL + 1);
        cells[i][0] = g_strdup(r->name);
        cells[i][1] = fmt_value(r, 0);
        cells[i][2] = fmt_value(r, 1);
        cells[i][3] = fmt_diff(r);
        cells[i][4] = fmt_rel(r);
        cells[i][5] = g_strdup(fmt_better(r));
        for (int c = 0; c < NCOL; c++)
            w[c] = MAX(w[c], width(cells[i][c]));
    }
    int last_group = -1;
    for (int c = 0; c < NCOL; c++) {
        if (c)
            printf("  ");
        print_padded(hdr[c], w[c], c > 0 && c < 5);
    }
    printf("\n");
    for (guint i = 0; i < shown->len; i++) {
        cmp_row *r = g_ptr_array_index(shown, i);
        if (r->group != last_group && last_group != -1)
            printf("\n");
        last_group = r->group;
        for (int c = 0; c < NCOL; c++) {
            if (c)
                printf("  ");
            print_padded(cells[i][c], w[c], c > 0 && c < 5);
        }
        printf("%s\n", r->out ? "  *" : "");
        g_strfreev(cells[i]);
    }
    g_free(cells);
    if (hidden)
        printf("(%u more port rows within tolerance: see compare.html)\n", hidden);
    g_ptr_array_free(shown, TRUE);
}

/* Which run is better over the rows that differ and have a direction: "b", "a", "mixed" or
 * "neither"; *nb and *na count the rows where each is better. */
static const char *overall_better(GPtrArray *rows, guint *nb, guint *na)
{
    *nb = *na = 0;
    for (guint i = 0; i < rows->len; i++) {
        cmp_row *r = g_ptr_array_index(rows, i);
        *nb += r->better > 0;
        *na += r->better < 0;
    }
    return *nb && *na ? "mixed" : *nb ? "b" : *na ? "a" : "neither";
}

static char *verdict_text(GPtrArray *rows, guint compared, guint nout, guint noise, guint one_sided)
{
    GString *v = g_string_new(NULL);
    if (nout)
        g_string_printf(v, "DIFFERENT: %u of %u compared metrics out of tolerance (marked *)", nout, compared);
    else
        g_string_printf(v, "SAME: all %u compared metrics within tolerance", compared);
    if (noise)
        g_string_append_printf(v, "; %u more differ by less than the run-to-run noise", noise);
    if (one_sided)
        g_string_append_printf(v, "; %u present in one run only", one_sided);
    guint nb, na;
    const char *who = overall_better(rows, &nb, &na);
    if (!strcmp(who, "b"))
        g_string_append_printf(v, "\noverall: B is better (better on %u metrics, worse on none)", nb);
    else if (!strcmp(who, "a"))
        g_string_append_printf(v, "\noverall: A is better (B is worse on %u metrics, better on none)", na);
    else if (!strcmp(who, "mixed"))
        g_string_append_printf(v, "\noverall: a trade-off: B is better on %u metrics and worse on %u", nb, na);
    else if (nout)
        g_string_append(v, "\noverall: neither is better (the metrics that differ have no better direction)");
    return g_string_free(v, FALSE);
}

static void write_outputs(const char *outdir, const char *da, const char *db, const cmp_rules *ru, GPtrArray *rows,
                          const char *verdict, guint compared, guint nout, guint one_sided, const char *ftext)
{
    if (g_mkdir_with_parents(outdir, 0755) != 0) {
        int e = errno;
        g_printerr("rocesim compare: warning: %s: cannot create: %s\n", outdir, g_strerror(e));
        return;
    }
    GError *err = NULL;
    GString *warn = g_string_new(NULL);
    char *la = g_strdup_printf("A: %s", da), *lb = g_strdup_printf("B: %s", db);
    overlay_ctx oc = { da, db, la, lb, outdir };
    draw_overlays(&oc, warn);
    guint nb, na;
    const char *who = overall_better(rows, &nb, &na);
    gboolean written = write_json(outdir, da, db, ru, rows, compared, nout, one_sided, who, &err) &&
                       write_html(outdir, da, db, ru, rows, verdict, nout, ftext, &err);
    if (!written) {
        g_string_append_printf(warn, "%s\n", err->message);
        g_clear_error(&err);
    }
    if (warn->len) {
        g_strchomp(warn->str);
        char **lines = g_strsplit(warn->str, "\n", -1);
        for (char **l = lines; *l; l++)
            g_printerr("rocesim compare: warning: %s\n", *l);
        g_strfreev(lines);
    }
    if (written)
        printf("wrote %s/compare.html\n", outdir);
    g_string_free(warn, TRUE);
    g_free(la);
    g_free(lb);
}

enum compare_outcome compare_folders(const char *da, const char *db, const struct compare_opts *o)
{
    cmp_rules ru = { .tolerance = 0.05 };
    for (size_t i = 0; i < N_KINDS; i++)
        ru.kind_floor[i] = kind_floors[i].floor;
    ru.key_floor = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    cmp_side sa = { 0 }, sb = { 0 };
    GPtrArray *rows = NULL;
    char *outdir = NULL, *ftext = NULL;
    GError *err = NULL;
    enum compare_outcome rc = COMPARE_BAD_INPUT;

    if (o->tolerance && !parse_tolerance(o->tolerance, &ru.tolerance)) {
        g_printerr("rocesim compare: --tolerance '%s': expected a non-negative number such as "
                   "0.05 or 5%%\n", o->tolerance);
        goto out;
    }
    for (char **f = o->floors; f && *f; f++) {
        if (!parse_floor(&ru, *f, &err)) {
            g_printerr("rocesim compare: %s\n", err->message);
            goto out;
        }
    }
    if (!side_load(&sa, da, o->more_a) || !side_load(&sb, db, o->more_b))
        goto out;

    match_count jobs = { 0, 0, 0 }, ports = { 0, 0, 0 };
    char *cap_a = capture_files(&sa), *cap_b = capture_files(&sb);
    gboolean capture = (cap_a != NULL) != (cap_b != NULL);
    rows = build_rows(&ru, &sa, &sb, &jobs, &ports, capture);
    guint compared = 0, nout = 0, noise = 0, one_sided = 0;
    for (guint i = 0; i < rows->len; i++) {
        cmp_row *r = g_ptr_array_index(rows, i);
        if (r->has_a && r->has_b)
            compared++;
        else
            one_sided++;
        nout += r->out;
        noise += r->noise;
    }
    ftext = floors_text(&ru);
    printf("A: %s (reference", da);
    if (sa.n > 1)
        printf(", %u replicates", sa.n);
    printf(")\nB: %s", db);
    if (sb.n > 1)
        printf(" (%u replicates)", sb.n);
    printf("\ntolerance %.4g%% of A; floors: %s\n", ru.tolerance * 100, ftext);
    if (capture)
        printf("%s is a capture (%s): comparing what it measures of the flows it saw (transfers, bytes, FCT, "
               "ECN marks, CNPs, retransmissions); queues, drops and fabric-wide pauses are not in a capture\n",
               cap_a ? "A" : "B", cap_a ? cap_a : cap_b);
    printf("\n");
    g_free(cap_a);
    g_free(cap_b);
    print_table(rows);
    if (jobs.only_a || jobs.only_b || ports.only_a || ports.only_b)
        printf("not matched: %u jobs only in A, %u only in B; %u ports only in A, %u only in B\n",
               jobs.only_a, jobs.only_b, ports.only_a, ports.only_b);
    char *verdict = verdict_text(rows, compared, nout, noise, one_sided);
    printf("\nverdict: %s\n", verdict);
    rc = nout ? COMPARE_DIFFERENT : COMPARE_SAME;

    /* Files: the verdict stands even if they cannot be written. */
    if (o->output) {
        outdir = g_strdup(o->output);
    } else {
        char *base = trimmed_basename(da);
        char *sub = g_strdup_printf("compare-vs-%s", base);
        outdir = g_build_filename(db, sub, NULL);
        g_free(sub);
        g_free(base);
    }
    write_outputs(outdir, da, db, &ru, rows, verdict, compared, nout, one_sided, ftext);
    g_free(verdict);
out:
    if (err)
        g_error_free(err);
    if (rows)
        g_ptr_array_free(rows, TRUE);
    side_free(&sa);
    side_free(&sb);
    g_hash_table_destroy(ru.key_floor);
    g_free(outdir);
    g_free(ftext);
    return rc;
}
