#include "results/pfc_csv.h"
#include <glib.h>
#include <string.h>

void pfc_csv_each_interval(const struct topology *t, const char *path,
                           void (*fn)(void *ctx, const struct pfc_interval *iv), void *ctx)
{
    char *text = NULL;
    if (!path || !g_file_get_contents(path, &text, NULL, NULL))
        return;
    GHashTable *by_name = g_hash_table_new(g_str_hash, g_str_equal);
    for (uint32_t i = 0; i < t->nnodes; i++)
        g_hash_table_insert(by_name, (gpointer)t->nodes[i].name, GUINT_TO_POINTER(i + 1));
    char **lines = g_strsplit(text, "\n", -1);
    g_free(text);
    for (int i = 1; lines[i]; i++) {
        char **c = g_strsplit(lines[i], ",", -1); /* t_ns,node,port,prio,event,duration_ns */
        if (g_strv_length(c) == 6 && !strcmp(c[4], "resume")) {
            uint32_t node = GPOINTER_TO_UINT(g_hash_table_lookup(by_name, c[1]));
            uint64_t port = g_ascii_strtoull(c[2], NULL, 10), to = g_ascii_strtoull(c[0], NULL, 10);
            uint64_t dur = g_ascii_strtoull(c[5], NULL, 10);
            if (node && port < t->nodes[node - 1].nports && dur <= to) {
                struct pfc_interval iv = { node - 1, (uint32_t)port,
                                           (uint32_t)g_ascii_strtoull(c[3], NULL, 10), to - dur, to };
                fn(ctx, &iv);
            }
        }
        g_strfreev(c);
    }
    g_strfreev(lines);
    g_hash_table_destroy(by_name);
}
