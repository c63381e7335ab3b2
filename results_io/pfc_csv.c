/* The pause intervals of a run's pfc.csv (see pfc_csv.h), read through results_io/read.h so a
 * compressed pfc.csv.gz reads the same. */
#include "results_io/pfc_csv.h"
#include <glib.h>
#include <string.h>
#include "results_io/read.h"

void pfc_csv_each_interval(const struct topology *t, const char *path,
                           void (*fn)(void *ctx, const struct pfc_interval *iv), void *ctx)
{
    results_csv *c = path ? results_csv_open(path, NULL) : NULL;
    static const char *const need[] = { "t_ns", "node", "port", "prio", "event", "duration_ns", NULL };
    int idx[6];
    if (!c || !results_csv_require(c, need, idx, NULL)) {
        if (c)
            results_csv_close(c);
        return;
    }
    GHashTable *by_name = g_hash_table_new(g_str_hash, g_str_equal);
    for (uint32_t i = 0; i < t->nnodes; i++)
        g_hash_table_insert(by_name, (gpointer)t->nodes[i].name, GUINT_TO_POINTER(i + 1));
    while (results_csv_next(c, NULL) == 1) {
        if (strcmp(results_csv_field(c, (guint)idx[4]), "resume"))
            continue;
        uint32_t node = GPOINTER_TO_UINT(g_hash_table_lookup(by_name, results_csv_field(c, (guint)idx[1])));
        uint64_t port = g_ascii_strtoull(results_csv_field(c, (guint)idx[2]), NULL, 10);
        uint64_t to = g_ascii_strtoull(results_csv_field(c, (guint)idx[0]), NULL, 10);
        uint64_t dur = g_ascii_strtoull(results_csv_field(c, (guint)idx[5]), NULL, 10);
        if (node && port < t->nodes[node - 1].nports && dur <= to) {
            struct pfc_interval iv = { node - 1, (uint32_t)port,
                                       (uint32_t)g_ascii_strtoull(results_csv_field(c, (guint)idx[3]), NULL, 10),
                                       to - dur, to };
            fn(ctx, &iv);
        }
    }
    g_hash_table_destroy(by_name);
    results_csv_close(c);
}
