#include "models/collective_hier.h"
#include <errno.h>
#include "models/collective.h"
#include <stdlib.h>
#include <string.h>

/* "a" or "a-b" below limit. */
static gboolean range(const char *t, uint32_t limit, uint32_t *lo, uint32_t *hi)
{
    char *end;
    errno = 0;
    unsigned long a = strtoul(t, &end, 10), b = a;
    if (errno || end == t)
        return FALSE;
    if (*end == '-') {
        const char *u = end + 1;
        b = strtoul(u, &end, 10);
        if (errno || end == u)
            return FALSE;
    }
    if (*end || a > b || b >= limit)
        return FALSE;
    *lo = (uint32_t)a;
    *hi = (uint32_t)b;
    return TRUE;
}

/* "packed:N" (the first N GPUs, server by server) or "rail:N" (rank i on server i mod S, GPU
 * i / S: consecutive ranks on one rail). */
static uint32_t *placement(const struct topology *t, const char *text, uint32_t *n, char **why)
{
    const uint32_t S = t->servers, total = S * t->gpus_per_server;
    gboolean rail = g_str_has_prefix(text, "rail:");
    const char *num = strchr(text, ':') + 1;
    char *end;
    errno = 0;
    unsigned long k = strtoul(num, &end, 10);
    if (errno || end == num || *end || k == 0 || k > total) {
        *why = g_strdup_printf("expected packed:N or rail:N with N from 1 to %u GPUs", total);
        return NULL;
    }
    uint32_t *ids = g_new(uint32_t, k);
    for (uint32_t i = 0; i < k; i++)
        ids[i] = rail ? (i % S) * t->gpus_per_server + i / S : i;
    *n = (uint32_t)k;
    return ids;
}

uint32_t *hier_parse_gpus(const struct topology *t, const char *text, uint32_t *n, char **why)
{
    if (g_str_has_prefix(text, "packed:") || g_str_has_prefix(text, "rail:"))
        return placement(t, text, n, why);
    GArray *out = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    char **items = g_strsplit(text, ",", -1);
    gboolean ok = items[0] != NULL;
    for (int i = 0; items[i] && ok; i++) {
        char *it = g_strstrip(items[i]);
        char *colon = strchr(it, ':');
        uint32_t s0 = 0, s1 = 0, g0, g1;
        if (colon) {
            *colon = 0;
            ok = range(it, t->servers, &s0, &s1) && range(colon + 1, t->gpus_per_server, &g0, &g1);
            for (uint32_t s = s0; ok && s <= s1; s++)
                for (uint32_t g = g0; g <= g1; g++) {
                    uint32_t h = s * t->gpus_per_server + g;
                    g_array_append_val(out, h);
                }
        } else {
            ok = range(it, t->servers * t->gpus_per_server, &g0, &g1);
            for (uint32_t h = g0; ok && h <= g1; h++)
                g_array_append_val(out, h);
        }
    }
    g_strfreev(items);
    if (!ok) {
        *why = g_strdup_printf("expected GPUs as SERVER:GPU ranges such as 0:0-7,1:0-7 or 0-%u:0-%u (servers 0-%u, "
                               "GPUs 0-%u per server), GPU ids 0-%u, or a placement packed:N or rail:N",
                               t->servers - 1, t->gpus_per_server - 1, t->servers - 1, t->gpus_per_server - 1,
                               t->servers * t->gpus_per_server - 1);
        g_array_free(out, TRUE);
        return NULL;
    }
    *n = out->len;
    return (uint32_t *)g_array_free(out, FALSE);
}

gboolean hier_spans_servers(const struct topology *t, const uint32_t *ranks, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++)
        if (ranks[i] / t->gpus_per_server != ranks[0] / t->gpus_per_server)
            return TRUE;
    return FALSE;
}

struct member {
    uint32_t index, server_order, gpu;
};

static int cmp_member(const void *a, const void *b)
{
    const struct member *x = a, *y = b;
    if (x->server_order != y->server_order)
        return x->server_order < y->server_order ? -1 : 1;
    return (x->gpu > y->gpu) - (x->gpu < y->gpu);
}

uint32_t *hier_ring_order(const struct topology *t, const uint32_t *ranks, uint32_t n, uint32_t channels)
{
    const uint32_t G = t->gpus_per_server, N = t->nics_per_server;
    struct member *m = g_new(struct member, n);
    GHashTable *order = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t srv = ranks[i] / G;
        gpointer v;
        if (!g_hash_table_lookup_extended(order, GUINT_TO_POINTER(srv), NULL, &v)) {
            v = GUINT_TO_POINTER(g_hash_table_size(order));
            g_hash_table_insert(order, GUINT_TO_POINTER(srv), v);
        }
        m[i] = (struct member){ i, GPOINTER_TO_UINT(v), ranks[i] % G };
    }
    g_hash_table_destroy(order);
    qsort(m, n, sizeof *m, cmp_member);
    uint32_t *ring = g_new(uint32_t, (size_t)channels * n);
    for (uint32_t c = 0; c < channels; c++) {
        uint32_t entry = (c % N) * G / N;
        uint32_t *o = ring + (size_t)c * n;
        for (uint32_t a = 0, k = 0; a < n; a = k) {
            for (k = a; k < n && m[k].server_order == m[a].server_order; k++)
                ;
            /* members a..k-1 are one server's GPUs: start at the first GPU >= entry */
            uint32_t len = k - a, first = 0;
            while (first < len && m[a + first].gpu < entry)
                first++;
            for (uint32_t j = 0; j < len; j++)
                o[a + j] = m[a + (first + j) % len].index;
        }
    }
    g_free(m);
    return ring;
}

void hier_tree(const struct topology *t, const uint32_t *ranks, uint32_t n, uint32_t channels, int **parent_out,
               int **child_out)
{
    const int A = COLLECTIVE_TREE_ARITY;
    uint32_t *ring = hier_ring_order(t, ranks, n, channels);
    int *parent = g_new(int, (size_t)channels * n), *child = g_new(int, (size_t)channels * n * A);
    uint32_t *head = g_new(uint32_t, n), *start = g_new(uint32_t, n + 1);
    for (uint32_t c = 0; c < channels; c++) {
        const uint32_t *o = ring + (size_t)c * n;
        int *par = parent + (size_t)c * n, *ch = child + (size_t)c * n * A;
        for (size_t i = 0; i < (size_t)n * A; i++)
            ch[i] = -1;
        /* the ring order lists each server's GPUs together: cut it into chains */
        uint32_t ns = 0;
        for (uint32_t i = 0; i < n; i++)
            if (i == 0 || ranks[o[i]] / t->gpus_per_server != ranks[o[i - 1]] / t->gpus_per_server) {
                start[ns] = i;
                head[ns++] = o[i];
            }
        start[ns] = n;
        for (uint32_t k = 0; k < ns; k++)
            for (uint32_t i = start[k] + 1; i < start[k + 1]; i++) {
                par[o[i]] = (int)o[i - 1];
                ch[(size_t)o[i - 1] * A + 2] = (int)o[i];
            }
        for (uint32_t k = 0; k < ns; k++) {
            int p, cc[2];
            collective_dtree(ns, (int)(c % 2), k, &p, cc);
            par[head[k]] = p < 0 ? -1 : (int)head[p];
            for (int j = 0; j < 2; j++)
                ch[(size_t)head[k] * A + j] = cc[j] < 0 ? -1 : (int)head[cc[j]];
        }
    }
    g_free(ring);
    g_free(head);
    g_free(start);
    *parent_out = parent;
    *child_out = child;
}
