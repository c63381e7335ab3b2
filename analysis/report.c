/* DIR/report.html from summary.json and plots/. See report.h. */
#include "analysis/report.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/metrics.h"
#include "analysis/plot.h"


/* ---- HTML helpers ------------------------------------------------------------------------ */

void report_html_escape(GString *h, const char *text)
{
    char *e = g_markup_escape_text(text ? text : "", -1);
    g_string_append(h, e);
    g_free(e);
}

static const char stylesheet[] =
    ":root{--fg:#1d2433;--muted:#5d6677;--line:#e3e6ec;--bg:#f6f7f9;--accent:#1f6fb4;"
    "--bad:#b42318;--badbg:#fef3f2;--warnbg:#fffaeb;--warn:#93370d;--ok:#067647;--okbg:#ecfdf3}\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.45 system-ui,-apple-system,"
    "'Segoe UI',Roboto,'DejaVu Sans',sans-serif}\n"
    "main{max-width:1120px;margin:0 auto;padding:28px 24px 60px}\n"
    "header h1{margin:0 0 4px;font-size:28px}\n"
    ".sub{color:var(--muted);margin:0 0 18px}\n"
    "h2{font-size:19px;margin:34px 0 10px;padding-bottom:6px;border-bottom:1px solid var(--line)}\n"
    "h3{font-size:16px;margin:0 0 8px}\n"
    "code,.key{font-family:'DejaVu Sans Mono',ui-monospace,monospace;font-size:12.5px}\n"
    ".key{color:var(--muted)}\n"
    ".tiles{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:12px;"
    "margin:8px 0 6px}\n"
    ".tile{background:#fff;border:1px solid var(--line);border-radius:10px;padding:12px 14px}\n"
    ".tile .v{font-size:22px;font-weight:600;font-variant-numeric:tabular-nums}\n"
    ".tile .l{color:var(--muted);font-size:13px}\n"
    ".tile.bad{border-color:#f3b5ae;background:var(--badbg)}.tile.bad .v{color:var(--bad)}\n"
    ".box{border-radius:10px;padding:12px 16px;margin:18px 0;border:1px solid}\n"
    ".box h2{border:0;margin:0 0 6px;padding:0;font-size:17px}\n"
    ".box ul{margin:4px 0 0;padding-left:20px}\n"
    ".box.warn{background:var(--warnbg);border-color:#fedf89;color:var(--warn)}\n"
    ".box.bad{background:var(--badbg);border-color:#f3b5ae;color:var(--bad)}\n"
    ".box.ok{background:var(--okbg);border-color:#abefc6;color:var(--ok)}\n"
    "table{border-collapse:collapse;width:100%;background:#fff;border:1px solid var(--line);"
    "border-radius:8px;overflow:hidden;font-size:14px}\n"
    "th,td{padding:6px 10px;border-bottom:1px solid var(--line);text-align:left;"
    "vertical-align:top}\n"
    "th{background:#eef1f5;font-weight:600;font-size:13px}\n"
    ".scroll{overflow-x:auto}\n"
    "td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}\ntd.n{white-space:nowrap}\n"
    "tr.group td{background:#f8f9fb;font-weight:600;color:var(--muted);font-size:12.5px;"
    "text-transform:uppercase;letter-spacing:.04em}\n"
    "tr.out td{background:var(--badbg)}\ntr.out td.mark{color:var(--bad);font-weight:700}\n"
    "tr.one td{color:var(--muted)}\n"
    ".note{color:var(--muted);font-size:13.5px;margin:6px 0}\n"
    "figure{margin:0 0 22px;background:#fff;border:1px solid var(--line);border-radius:10px;"
    "padding:14px}\n"
    "figure img{display:block;width:100%;height:auto}\n"
    "figcaption{color:var(--muted);font-size:13.5px;margin-top:8px}\n"
    ".groups{display:grid;grid-template-columns:repeat(auto-fill,minmax(440px,1fr));gap:14px;"
    "align-items:start}\n"
    ".group h3{font-size:13px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);"
    "margin:0 0 6px}\n"
    ".group .key{font-size:11.5px;margin-left:4px}\n"
    ".cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(250px,1fr));gap:12px}\n"
    ".card{background:#fff;border:1px solid var(--line);border-radius:10px;padding:10px 12px}\n"
    ".card h3{font-size:14px;margin:0 0 6px;font-family:'DejaVu Sans Mono',monospace}\n"
    ".card table{border:0;font-size:13px}.card td{padding:2px 4px;border:0}\n"
    ".card td:first-child{color:var(--muted)}\n"
    "a{color:var(--accent)}\n"
    "footer{color:var(--muted);font-size:13px;margin-top:40px}\n";

void report_html_begin(GString *h, const char *title)
{
    g_string_append(h, "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                       "<title>");
    report_html_escape(h, title);
    g_string_append_printf(h, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<main>\n",
                           stylesheet);
}

void report_html_end(GString *h)
{
    /* Marks the result of loading every image on <body>, so a headless browser can tell a
     * broken figure from a missing one (tests/report_screenshot.sh reads these). */
    g_string_append(
        h, "</main>\n<script>\n"
           "window.addEventListener('load', function () {\n"
           "  var imgs = document.images, bad = [];\n"
           "  for (var i = 0; i < imgs.length; i++)\n"
           "    if (!imgs[i].complete || imgs[i].naturalWidth === 0)\n"
           "      bad.push(imgs[i].getAttribute('data-name') || String(i));\n"
           "  document.body.setAttribute('data-images', String(imgs.length));\n"
           "  document.body.setAttribute('data-images-ok', String(imgs.length - bad.length));\n"
           "  document.body.setAttribute('data-images-failed', bad.join(' '));\n"
           "});\n"
           "</script>\n</body>\n</html>\n");
}

static char *png_path(const char *dir, const char *name)
{
    char *f = g_strdup_printf("%s.png", name);
    char *p = g_build_filename(dir, f, NULL);
    g_free(f);
    return p;
}

guint64 report_png_bytes(const char *dir, const char *const *names, guint n)
{
    guint64 total = 0;
    for (guint i = 0; i < n; i++) {
        char *p = png_path(dir, names[i]);
        GStatBuf st;
        if (g_stat(p, &st) == 0)
            total += (guint64)st.st_size;
        g_free(p);
    }
    return total;
}

gboolean report_html_figure(GString *h, const char *dir, const char *prefix, const char *name,
                            const char *title, const char *caption, gboolean embed)
{
    char *p = png_path(dir, name);
    gchar *png = NULL;
    gsize len = 0;
    gboolean have = g_file_test(p, G_FILE_TEST_IS_REGULAR);
    if (have && embed && (!g_file_get_contents(p, &png, &len, NULL) || len == 0)) {
        g_free(png);
        png = NULL;
        embed = FALSE;
    }
    g_free(p);
    if (!have)
        return FALSE;
    g_string_append_printf(h, "<figure id=\"fig-%s\">\n<h3>", name);
    report_html_escape(h, title);
    g_string_append(h, "</h3>\n<img alt=\"");
    report_html_escape(h, title);
    g_string_append_printf(h, "\" data-name=\"%s\" width=\"%d\" height=\"%d\" src=\"", name,
                           PLOT_WIDTH, PLOT_HEIGHT);
    if (embed) {
        char *b64 = g_base64_encode((const guchar *)png, len);
        g_string_append(h, "data:image/png;base64,");
        g_string_append(h, b64);
        g_free(b64);
    } else {
        report_html_escape(h, prefix);
        g_string_append_printf(h, "/%s.svg", name);
    }
    g_string_append(h, "\">\n<figcaption>");
    report_html_escape(h, caption);
    g_string_append(h, " <span class=\"key\">");
    static const char *const ext[] = { "svg", "png", "gp" };
    static const char *const what[] = { "SVG", "PNG", "gnuplot script" };
    for (int i = 0; i < 3; i++) {
        g_string_append_printf(h, "%s<a href=\"", i ? " · " : "");
        report_html_escape(h, prefix);
        g_string_append_printf(h, "/%s.%s\">%s</a>", name, ext[i], what[i]);
    }
    g_string_append(h, "</span></figcaption>\n</figure>\n");
    g_free(png);
    return TRUE;
}

/* ---- the report -------------------------------------------------------------------------- */

static void cell_value(GString *h, const char *key, double v)
{
    char *s = metrics_format(key, v);
    g_string_append(h, "<td class=\"n\">");
    report_html_escape(h, s);
    g_string_append(h, "</td>");
    g_free(s);
}

static void cell_label(GString *h, const char *key)
{
    const char *label = metrics_key_label(key);
    g_string_append(h, "<td>");
    report_html_escape(h, label ? label : key);
    g_string_append(h, "</td><td><span class=\"key\">");
    report_html_escape(h, key);
    g_string_append(h, "</span></td>");
}

/* Which table group a headline metric belongs to. */
static int metric_group(const char *k)
{
    if (strstr(k, "queue"))
        return 3;
    if (strstr(k, "drops") || g_str_has_prefix(k, "retransmit") || strstr(k, "deadlock") ||
        g_str_has_prefix(k, "timeout") || strstr(k, "out_of_sequence") || strstr(k, "seq_err"))
        return 2;
    if (strstr(k, "ecn") || strstr(k, "cnp") || strstr(k, "pause") || strstr(k, "pfc"))
        return 1;
    if (g_str_has_prefix(k, "collective") || strstr(k, "busbw") || strstr(k, "algbw"))
        return 4;
    if (g_str_has_prefix(k, "transfer") || g_str_has_prefix(k, "fct") ||
        g_str_has_prefix(k, "slowdown") || !strcmp(k, "bytes") || !strcmp(k, "completion_ns"))
        return 0;
    return 5;
}

/* One card per group, two columns wide on a desktop screen. */
static void metrics_table(GString *h, JsonObject *m)
{
    static const char *const groups[] = { "Transfers", "Congestion control and PFC",
                                          "Losses and recovery", "Queues", "Collectives",
                                          "Other" };
    GList *members = json_object_get_members(m);
    g_string_append(h, "<div class=\"groups\">\n");
    for (int g = 0; g < (int)G_N_ELEMENTS(groups); g++) {
        gboolean header = FALSE;
        for (GList *l = members; l; l = l->next) {
            const char *k = l->data;
            double v;
            if (metric_group(k) != g || !results_json_number(m, k, &v))
                continue;
            if (!header) {
                g_string_append_printf(h, "<div class=\"group\"><h3>%s</h3><table>\n",
                                       groups[g]);
                header = TRUE;
            }
            const char *label = metrics_key_label(k);
            g_string_append(h, "<tr><td>");
            report_html_escape(h, label ? label : k);
            g_string_append(h, " <span class=\"key\">");
            report_html_escape(h, k);
            g_string_append(h, "</span></td>");
            cell_value(h, k, v);
            g_string_append(h, "</tr>\n");
        }
        if (header)
            g_string_append(h, "</table></div>\n");
    }
    g_string_append(h, "</div>\n");
    g_list_free(members);
}

/* Headline tiles: the few numbers an architect looks at first. */
static void tiles(GString *h, JsonObject *m)
{
    static const char *const keys[] = { "completion_ns", "fct_p99_ns", "slowdown_p99",
                                        "max_queue_bytes", "paused_fraction", "drops_lossless",
                                        "ecn_marked", "collective_time_p99_us", "busbw_GBps" };
    /* with no completed transfer, completion and FCT figures are not zero but undefined */
    double done = 1;
    gboolean none_done = results_json_number(m, "transfers_completed", &done) && done == 0;
    g_string_append(h, "<div class=\"tiles\">\n");
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
        double v;
        if (!results_json_number(m, keys[i], &v))
            continue;
        gboolean bad = (!strcmp(keys[i], "drops_lossless") && v > 0);
        gboolean undefined = none_done && (!strcmp(keys[i], "completion_ns") || !strcmp(keys[i], "fct_p99_ns") ||
                                           !strcmp(keys[i], "slowdown_p99"));
        char *s = undefined ? g_strdup("none completed") : metrics_format(keys[i], v);
        const char *label = metrics_key_label(keys[i]);
        g_string_append_printf(h, "<div class=\"tile%s\"><div class=\"v\">", bad ? " bad" : "");
        report_html_escape(h, s);
        g_string_append(h, "</div><div class=\"l\">");
        report_html_escape(h, label ? label : keys[i]);
        g_string_append(h, "</div></div>\n");
        g_free(s);
    }
    g_string_append(h, "</div>\n");
}

static void warnings_box(GString *h, const results_summary *s)
{
    GPtrArray *w = g_ptr_array_new_with_free_func(g_free);
    if (s->warnings) {
        for (guint i = 0; i < json_array_get_length(s->warnings); i++) {
            JsonNode *n = json_array_get_element(s->warnings, i);
            if (JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING)
                g_ptr_array_add(w, g_strdup(json_node_get_string(n)));
        }
    }
    /* Facts in the metrics that deserve a warning even if the run did not write one. */
    double v, t;
    gboolean have_loss_warning = FALSE, have_done_warning = FALSE;
    for (guint i = 0; i < w->len; i++) {
        const char *x = g_ptr_array_index(w, i);
        have_loss_warning |= strstr(x, "lossless") != NULL;
        have_done_warning |= strstr(x, "complete") != NULL;
    }
    if (!have_loss_warning && results_summary_metric(s, "drops_lossless", &v) && v > 0)
        g_ptr_array_add(w, g_strdup_printf("%.0f packets dropped on a lossless priority "
                                           "(metrics.drops_lossless)", v));
    if (!have_done_warning && results_summary_metric(s, "transfers", &t) &&
        results_summary_metric(s, "transfers_completed", &v) && v < t)
        g_ptr_array_add(w, g_strdup_printf("%.0f of %.0f transfers did not complete", t - v, t));
    static const struct {
        const char *key, *word, *text;
    } facts[] = {
        { "deadlock", "deadlock", "PFC deadlock detected (metrics.deadlock = %.0f)" },
        { "pfc_watchdog_storms", "storm", "%.0f PFC pause storms (metrics.pfc_watchdog_storms)" },
    };
    for (size_t f = 0; f < G_N_ELEMENTS(facts); f++) {
        gboolean said = FALSE;
        for (guint i = 0; i < w->len; i++) {
            char *low = g_ascii_strdown(g_ptr_array_index(w, i), -1);
            said |= strstr(low, facts[f].word) != NULL;
            g_free(low);
        }
        if (!said && results_summary_metric(s, facts[f].key, &v) && v > 0)
            g_ptr_array_add(w, g_strdup_printf(facts[f].text, v));
    }
    if (w->len == 0) {
        /* Say only what the metrics show. */
        GString *ok = g_string_new("No warnings reported by the run");
        static const char *const clean[][2] = {
            { "drops_lossless", "drops on lossless priorities" },
            { "deadlock", "deadlock" },
            { "pfc_watchdog_storms", "PFC pause storms" },
            { "timeouts", "transport timeouts" },
        };
        const char *sep = ": no ";
        for (size_t i = 0; i < G_N_ELEMENTS(clean); i++) {
            if (results_summary_metric(s, clean[i][0], &v) && v == 0) {
                g_string_append_printf(ok, "%s%s", sep, clean[i][1]);
                sep = ", no ";
            }
        }
        g_string_append(ok, ".");
        g_string_append(h, "<div class=\"box ok\">");
        report_html_escape(h, ok->str);
        g_string_append(h, "</div>\n");
        g_string_free(ok, TRUE);
    } else {
        gboolean severe = results_summary_metric(s, "drops_lossless", &v) && v > 0;
        for (guint i = 0; i < w->len && !severe; i++) {
            char *low = g_ascii_strdown(g_ptr_array_index(w, i), -1);
            severe = strstr(low, "deadlock") || strstr(low, "storm") || strstr(low, "lossless");
            g_free(low);
        }
        g_string_append_printf(h, "<div class=\"box %s\"><h2>⚠ %u warning%s</h2><ul>\n",
                               severe ? "bad" : "warn", w->len, w->len == 1 ? "" : "s");
        for (guint i = 0; i < w->len; i++) {
            g_string_append(h, "<li>");
            report_html_escape(h, g_ptr_array_index(w, i));
            g_string_append(h, "</li>\n");
        }
        g_string_append(h, "</ul></div>\n");
    }
    g_ptr_array_free(w, TRUE);
}

/* Numeric columns of an array of objects: known ones first, then any others, in order seen. */
static GPtrArray *numeric_columns(JsonArray *a, const char *const *known, const char *const *skip)
{
    GPtrArray *cols = g_ptr_array_new_with_free_func(g_free);
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (size_t i = 0; skip[i]; i++)
        g_hash_table_add(seen, (gpointer)skip[i]);
    for (int pass = 0; pass < 2; pass++) {
        for (size_t k = 0; pass == 0 && known[k]; k++) {
            for (guint i = 0; i < json_array_get_length(a); i++) {
                JsonNode *n = json_array_get_element(a, i);
                double v;
                if (JSON_NODE_HOLDS_OBJECT(n) &&
                    results_json_number(json_node_get_object(n), known[k], &v) &&
                    !g_hash_table_contains(seen, known[k])) {
                    g_hash_table_add(seen, (gpointer)known[k]);
                    g_ptr_array_add(cols, g_strdup(known[k]));
                }
            }
        }
        for (guint i = 0; pass == 1 && i < json_array_get_length(a); i++) {
            JsonNode *n = json_array_get_element(a, i);
            if (!JSON_NODE_HOLDS_OBJECT(n))
                continue;
            JsonObject *o = json_node_get_object(n);
            GList *members = json_object_get_members(o);
            for (GList *l = members; l; l = l->next) {
                double v;
                if (!g_hash_table_contains(seen, l->data) && results_json_number(o, l->data, &v)) {
                    char *k = g_strdup(l->data);
                    g_ptr_array_add(cols, k);
                    g_hash_table_add(seen, k);
                }
            }
            g_list_free(members);
        }
    }
    g_hash_table_destroy(seen);
    return cols;
}

static void object_table(GString *h, GPtrArray *rows, const char *const *idcols,
                         const char *const *idnames, GPtrArray *cols)
{
    g_string_append(h, "<div class=\"scroll\"><table>\n<tr>");
    for (size_t i = 0; idcols[i]; i++)
        g_string_append_printf(h, "<th>%s</th>", idnames[i]);
    for (guint c = 0; c < cols->len; c++) {
        const char *k = g_ptr_array_index(cols, c);
        const char *label = metrics_key_label(k);
        g_string_append(h, "<th class=\"n\" title=\"");
        report_html_escape(h, k);
        g_string_append(h, "\">");
        report_html_escape(h, label ? label : k);
        g_string_append(h, "</th>");
    }
    g_string_append(h, "</tr>\n");
    for (guint r = 0; r < rows->len; r++) {
        JsonObject *o = g_ptr_array_index(rows, r);
        g_string_append(h, "<tr>");
        for (size_t i = 0; idcols[i]; i++) {
            char *s = results_json_string(o, idcols[i]);
            g_string_append(h, "<td>");
            report_html_escape(h, s ? s : "");
            g_string_append(h, "</td>");
            g_free(s);
        }
        for (guint c = 0; c < cols->len; c++) {
            double v;
            const char *k = g_ptr_array_index(cols, c);
            if (results_json_number(o, k, &v))
                cell_value(h, k, v);
            else
                g_string_append(h, "<td class=\"n\">–</td>");
        }
        g_string_append(h, "</tr>\n");
    }
    g_string_append(h, "</table></div>\n");
}

static gint cmp_port_queue(gconstpointer a, gconstpointer b)
{
    JsonObject *x = *(JsonObject *const *)a, *y = *(JsonObject *const *)b;
    double qx = 0, qy = 0, ux = 0, uy = 0;
    results_json_number(x, "max_queue_bytes", &qx);
    results_json_number(y, "max_queue_bytes", &qy);
    results_json_number(x, "utilisation", &ux);
    results_json_number(y, "utilisation", &uy);
    return results_port_busier(qx, ux, qy, uy);
}

static GPtrArray *objects_of(JsonArray *a)
{
    GPtrArray *rows = g_ptr_array_new();
    for (guint i = 0; a && i < json_array_get_length(a); i++) {
        JsonNode *n = json_array_get_element(a, i);
        if (JSON_NODE_HOLDS_OBJECT(n))
            g_ptr_array_add(rows, json_node_get_object(n));
    }
    return rows;
}

static void ports_section(GString *h, const results_summary *s)
{
    GPtrArray *rows = objects_of(s->ports);
    if (rows->len == 0) {
        g_ptr_array_free(rows, TRUE);
        return;
    }
    guint total = s->ports_total; /* a digest holds the busiest only */
    g_ptr_array_sort(rows, cmp_port_queue);
    if (rows->len > REPORT_PORTS)
        g_ptr_array_set_size(rows, REPORT_PORTS);
    static const char *const known[] = { "max_queue_bytes", "p99_queue_bytes", "tx_bytes",
                                         "utilisation", "paused_fraction", "ecn_marked", "drops",
                                         NULL };
    static const char *const skip[] = { "port", NULL };
    static const char *const idcols[] = { "node", "port", "peer", NULL };
    static const char *const idnames[] = { "Node", "Port", "Peer", NULL };
    gboolean has_peer = FALSE;
    for (guint i = 0; i < rows->len; i++)
        has_peer |= json_object_has_member(g_ptr_array_index(rows, i), "peer");
    GPtrArray *cols = numeric_columns(s->ports, known, skip);
    g_string_append(h, "<h2>Busiest ports</h2>\n");
    if (total > rows->len)
        g_string_append_printf(h, "<p class=\"note\">The %u ports with the deepest queues, of "
                                  "%u in summary.json.</p>\n", rows->len, total);
    static const char *const idcols_np[] = { "node", "port", NULL };
    object_table(h, rows, has_peer ? idcols : idcols_np, idnames, cols);
    g_ptr_array_free(cols, TRUE);
    g_ptr_array_free(rows, TRUE);
}

static void jobs_section(GString *h, const results_summary *s)
{
    GPtrArray *rows = objects_of(s->jobs);
    if (rows->len) {
        static const char *const known[] = { "time_p50_us", "time_p99_us", "busbw_GBps",
                                             "comm_fraction", NULL };
        static const char *const skip[] = { NULL };
        static const char *const idcols[] = { "job", "op", NULL };
        static const char *const idnames[] = { "Job", "Operation", NULL };
        GPtrArray *cols = numeric_columns(s->jobs, known, skip);
        g_string_append(h, "<h2>Jobs</h2>\n");
        object_table(h, rows, idcols, idnames, cols);
        g_ptr_array_free(cols, TRUE);
    }
    g_ptr_array_free(rows, TRUE);
}

static void engine_section(GString *h, const results_summary *s)
{
    if (!s->engine)
        return;
    g_string_append(h, "<h2>Engine</h2>\n<p class=\"note\">Wall-clock figures of this run: they "
                       "vary between runs and are ignored by <code>rocesim compare</code>.</p>\n"
                       "<table>\n");
    GList *members = json_object_get_members(s->engine);
    for (GList *l = members; l; l = l->next) {
        double v;
        if (!results_json_number(s->engine, l->data, &v))
            continue;
        g_string_append(h, "<tr>");
        cell_label(h, l->data);
        cell_value(h, l->data, v);
        g_string_append(h, "</tr>\n");
    }
    g_list_free(members);
    g_string_append(h, "</table>\n");
}

static void scenario_section(GString *h, const results_summary *s)
{
    if (!s->scenario)
        return;
    g_string_append(h, "<h2>Scenario as run</h2>\n<div class=\"cards\">\n");
    GList *sections = json_object_get_members(s->scenario);
    for (GList *l = sections; l; l = l->next) {
        JsonNode *n = json_object_get_member(s->scenario, l->data);
        if (!JSON_NODE_HOLDS_OBJECT(n))
            continue;
        JsonObject *sec = json_node_get_object(n);
        g_string_append(h, "<div class=\"card\"><h3>[");
        report_html_escape(h, l->data);
        g_string_append(h, "]</h3><table>\n");
        GList *keys = json_object_get_members(sec);
        for (GList *k = keys; k; k = k->next) {
            char *v = results_json_string(sec, k->data);
            g_string_append(h, "<tr><td>");
            report_html_escape(h, k->data);
            g_string_append(h, "</td><td><code>");
            report_html_escape(h, v ? v : "");
            g_string_append(h, "</code></td></tr>\n");
            g_free(v);
        }
        g_list_free(keys);
        g_string_append(h, "</table></div>\n");
    }
    g_list_free(sections);
    g_string_append(h, "</div>\n");
}

/* plots/skipped.txt: "name: reason" lines written by plot_results. */
static GHashTable *read_skipped(const char *plots)
{
    GHashTable *t = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    char *p = g_build_filename(plots, "skipped.txt", NULL);
    char *text = NULL;
    if (g_file_get_contents(p, &text, NULL, NULL)) {
        char **lines = g_strsplit(text, "\n", -1);
        for (char **l = lines; *l; l++) {
            char *colon = strstr(*l, ": ");
            if (**l == '#' || !colon)
                continue;
            g_hash_table_insert(t, g_strndup(*l, (gsize)(colon - *l)), g_strdup(colon + 2));
        }
        g_strfreev(lines);
        g_free(text);
    }
    g_free(p);
    return t;
}

static void figures_section(GString *h, const char *dir)
{
    size_t n;
    const plot_desc *cat = plot_catalogue(&n);
    char *plots = g_build_filename(dir, "plots", NULL);
    const char **names = g_new(const char *, n);
    for (size_t i = 0; i < n; i++)
        names[i] = cat[i].name;
    gboolean embed = report_png_bytes(plots, names, (guint)n) <= REPORT_EMBED_LIMIT;
    g_free(names);
    g_string_append(h, "<h2>Figures</h2>\n");
    GHashTable *skipped = read_skipped(plots);
    GString *missing = g_string_new(NULL);
    guint drawn = 0;
    for (size_t i = 0; i < n; i++) {
        if (report_html_figure(h, plots, "plots", cat[i].name, cat[i].title, cat[i].caption,
                               embed)) {
            drawn++;
            continue;
        }
        const char *why = g_hash_table_lookup(skipped, cat[i].name);
        g_string_append_printf(missing, "<li>%s", cat[i].title);
        if (why) {
            g_string_append(missing, ": ");
            report_html_escape(missing, why);
        }
        g_string_append(missing, "</li>\n");
    }
    if (drawn == 0)
        g_string_append(h, "<p class=\"note\">No figures yet: run <code>rocesim plot "
                           "FOLDER</code> with gnuplot installed (apt-get install gnuplot-nox)."
                           "</p>\n");
    if (missing->len)
        g_string_append_printf(h, "<p class=\"note\">Not drawn:</p><ul class=\"note\">\n%s</ul>\n",
                               missing->str);
    g_string_free(missing, TRUE);
    g_hash_table_destroy(skipped);
    g_free(plots);
}

static gint cmp_str_ptr(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void files_section(GString *h, const char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    if (!d)
        return;
    GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
    const char *f;
    while ((f = g_dir_read_name(d))) {
        if (g_str_has_suffix(f, ".csv") || g_str_has_suffix(f, ".json") ||
            g_str_has_suffix(f, ".pcap") || g_str_has_suffix(f, ".pcapng") ||
            g_str_has_suffix(f, ".ini") || g_str_has_suffix(f, ".txt"))
            g_ptr_array_add(files, g_strdup(f));
    }
    g_dir_close(d);
    g_ptr_array_sort(files, cmp_str_ptr);
    g_string_append(h, "<h2>Files</h2>\n<table>\n"
                       "<tr><th>File</th><th class=\"n\">Size</th></tr>\n");
    for (guint i = 0; i < files->len; i++) {
        const char *name = g_ptr_array_index(files, i);
        char *p = g_build_filename(dir, name, NULL);
        GStatBuf st;
        double size = g_stat(p, &st) == 0 ? (double)st.st_size : NAN;
        g_free(p);
        char *sz = metrics_format_kind(METRICS_KIND_BYTES, size);
        g_string_append(h, "<tr><td><a href=\"");
        report_html_escape(h, name);
        g_string_append(h, "\"><code>");
        report_html_escape(h, name);
        g_string_append_printf(h, "</code></a></td><td class=\"n\">%s</td></tr>\n", sz);
        g_free(sz);
    }
    g_string_append(h, "</table>\n");
    g_ptr_array_free(files, TRUE);
}

gboolean report_write(const char *dir, GError **err)
{
    results_summary *s = results_summary_read_dir(dir, err);
    if (!s)
        return FALSE;
    gboolean ok = report_write_summary(dir, s, err);
    results_summary_free(s);
    return ok;
}

gboolean report_write_summary(const char *dir, const results_summary *s, GError **err)
{
    char *name = results_summary_scenario(s, "scenario", "name");
    if (!name || !*name) {
        g_free(name);
        name = g_path_get_basename(dir);
    }
    char *version = results_json_string(s->root, "rocesim_version");
    char *seed = results_summary_scenario(s, "scenario", "seed");
    char *title = g_strdup_printf("rocesim report: %s", name);
    GString *h = g_string_new(NULL);
    report_html_begin(h, title);
    g_string_append(h, "<header><h1>");
    report_html_escape(h, name);
    g_string_append(h, "</h1><p class=\"sub\">");
    if (version) {
        g_string_append(h, "rocesim ");
        report_html_escape(h, version);
    }
    if (seed) {
        g_string_append(h, " · seed ");
        report_html_escape(h, seed);
    }
    double end = results_summary_end_ns(s);
    if (end > 0) {
        char *e = metrics_format_kind(METRICS_KIND_TIME, end);
        g_string_append_printf(h, " · %s simulated", e);
        g_free(e);
    }
    char *abs = g_canonicalize_filename(dir, NULL);
    g_string_append(h, " · <code>");
    report_html_escape(h, abs);
    g_string_append(h, "</code></p></header>\n");
    g_free(abs);

    warnings_box(h, s);
    if (s->metrics) {
        tiles(h, s->metrics);
        g_string_append(h, "<h2>Headline metrics</h2>\n<p class=\"note\">Every key of "
                           "<code>summary.json</code> <code>metrics</code>: the names "
                           "<code>rocesim sweep</code>, <code>tune</code> and "
                           "<code>compare</code> use.</p>\n");
        metrics_table(h, s->metrics);
    }
    jobs_section(h, s);
    ports_section(h, s);
    figures_section(h, dir);
    scenario_section(h, s);
    engine_section(h, s);
    files_section(h, dir);
    g_string_append(h, "<footer>Written by <code>rocesim plot</code> from summary.json and "
                       "plots/ of this folder.</footer>\n");
    report_html_end(h);

    char *path = g_build_filename(dir, "report.html", NULL);
    GError *e = NULL;
    gboolean ok = g_file_set_contents(path, h->str, (gssize)h->len, &e);
    if (!ok)
        g_propagate_error(err, e);
    g_free(path);
    g_string_free(h, TRUE);
    g_free(title);
    g_free(seed);
    g_free(version);
    g_free(name);
    return ok;
}

gboolean report_results(const char *dir, const results_summary *s, char **warning, GError **err)
{
    GError *pe = NULL;
    *warning = NULL;
    if (!plot_results(dir, &pe)) {
        if (pe->domain == PLOT_ERROR && pe->code == PLOT_ERROR_IO) {
            g_propagate_error(err, pe); /* a failed write is a failure, not a warning */
            return FALSE;
        }
        *warning = g_strdup(pe->message);
        g_error_free(pe);
    }
    return s ? report_write_summary(dir, s, err) : report_write(dir, err);
}

/* `rocesim plot DIR`: (re)draws the figures and report.html of a results folder. */
