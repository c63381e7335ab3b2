/* NCCL topology XML: <cpu numaid=N> holds a tree of <pci> bridges and devices; a <gpu dev=G>
 * or a <nic><net dev=R speed=MBPS> sits in its <pci>. A top-level <pci> under a <cpu> is one
 * PCIe switch (or a device on the root port: a switch of its own).
 * nvidia-smi topo -m: a matrix over GPU0.., NIC0..; PIX (at most one bridge) and PXB
 * (several bridges, no host bridge) mean "under the same PCIe switch"; the NUMA Affinity
 * column gives a GPU's socket, and a NIC shares the socket of the GPUs it reaches without SYS. */
#include "models/nccl_topo.h"
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXDEV 64

struct layout {
    int ngpu, nnic;
    int gpu_sw[MAXDEV], nic_sw[MAXDEV]; /* raw switch ids */
    int sw_socket[2 * MAXDEV];          /* raw socket of raw switch */
    int nsw;
    long nic_mbps;
    int pcie_gen, pcie_width;
    int gpu_width[MAXDEV], nic_width[MAXDEV]; /* XML: the link each device trained at (0 unknown) */
};

/* ---------- XML ---------- */

struct xml_state {
    struct layout *l;
    int depth_pci;      /* <pci> nesting under the current <cpu> */
    int cpu, sw;        /* current cpu numaid, current top-level switch */
    int gpu_pci_gen, gpu_pci_width, cur_gen, cur_width;
    char *why;
};

static const char *attr(const gchar **names, const gchar **values, const char *key)
{
    for (int i = 0; names[i]; i++)
        if (!strcmp(names[i], key))
            return values[i];
    return NULL;
}

static void xml_start(GMarkupParseContext *ctx, const gchar *el, const gchar **names, const gchar **values,
                      gpointer data, GError **err)
{
    (void)ctx;
    struct xml_state *st = data;
    struct layout *l = st->l;
    if (!strcmp(el, "cpu")) {
        const char *n = attr(names, values, "numaid");
        st->cpu = n ? atoi(n) : 0;
        st->depth_pci = 0;
    } else if (!strcmp(el, "pci")) {
        if (st->depth_pci++ == 0) {
            if (l->nsw >= 2 * MAXDEV) {
                g_set_error(err, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT, "more than %d PCIe switches", 2 * MAXDEV);
                return;
            }
            st->sw = l->nsw++;
            l->sw_socket[st->sw] = st->cpu;
        }
        const char *sp = attr(names, values, "link_speed"), *w = attr(names, values, "link_width");
        double gts = sp ? g_ascii_strtod(sp, NULL) : 0;
        st->cur_gen = gts >= 63 ? 6 : gts >= 31 ? 5 : gts >= 15 ? 4 : gts >= 7.9 ? 3 : gts >= 4.9 ? 2 : gts > 0 ? 1 : 0;
        st->cur_width = w ? atoi(w) : 0;
    } else if (!strcmp(el, "gpu") || !strcmp(el, "net")) {
        const char *d = attr(names, values, "dev");
        int dev = d ? atoi(d) : -1;
        bool gpu = el[0] == 'g';
        if (st->depth_pci == 0 || dev < 0 || dev >= MAXDEV) {
            g_set_error(err, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT, "<%s> without dev=0..%d inside a <pci>", el,
                        MAXDEV - 1);
            return;
        }
        int *slot = gpu ? &l->gpu_sw[dev] : &l->nic_sw[dev];
        *slot = st->sw;
        (gpu ? l->gpu_width : l->nic_width)[dev] = st->cur_width;
        if (gpu) {
            l->ngpu = dev + 1 > l->ngpu ? dev + 1 : l->ngpu;
            if (!l->pcie_gen && st->cur_gen) {
                l->pcie_gen = st->cur_gen;
                l->pcie_width = st->cur_width;
            }
        } else {
            l->nnic = dev + 1 > l->nnic ? dev + 1 : l->nnic;
            const char *s = attr(names, values, "speed");
            if (s && !l->nic_mbps)
                l->nic_mbps = atol(s);
        }
    }
}

static void xml_end(GMarkupParseContext *ctx, const gchar *el, gpointer data, GError **err)
{
    (void)ctx;
    (void)err;
    struct xml_state *st = data;
    if (!strcmp(el, "pci"))
        st->depth_pci--;
}

static gboolean parse_xml(const char *text, struct layout *l, char **why)
{
    struct xml_state st = { .l = l };
    GMarkupParser p = { xml_start, xml_end, NULL, NULL, NULL };
    GMarkupParseContext *ctx = g_markup_parse_context_new(&p, 0, &st, NULL);
    GError *e = NULL;
    gboolean ok = g_markup_parse_context_parse(ctx, text, -1, &e) && g_markup_parse_context_end_parse(ctx, &e);
    g_markup_parse_context_free(ctx);
    if (!ok) {
        *why = g_strdup_printf("NCCL topology XML: %s", e->message);
        g_error_free(e);
    }
    return ok;
}

/* ---------- nvidia-smi topo -m ---------- */

static int find_root(int *parent, int x)
{
    while (parent[x] != x)
        x = parent[x] = parent[parent[x]];
    return x;
}

/* A row or column of topo -m: GPUn is n, NICn is MAXDEV + n; -1 for anything else (n out of
 * range, or not a number). */
static int device_index(const char *name)
{
    gboolean gpu = g_str_has_prefix(name, "GPU"), nic = g_str_has_prefix(name, "NIC");
    guint64 n;
    if ((!gpu && !nic) || !g_ascii_string_to_unsigned(name + 3, 10, 0, MAXDEV - 1, &n, NULL))
        return -1;
    return (nic ? MAXDEV : 0) + (int)n;
}

static gboolean parse_smi(const char *text, struct layout *l, char **why)
{
    char **lines = g_strsplit(text, "\n", -1);
    char **head = NULL;
    int ncols = 0, numa_col = -1;
    int parent[2 * MAXDEV], numa[2 * MAXDEV];
    char *rel[2 * MAXDEV][2 * MAXDEV];
    gboolean seen[2 * MAXDEV] = { FALSE }; /* rows read */
    memset(rel, 0, sizeof rel);
    for (int i = 0; i < 2 * MAXDEV; i++) {
        parent[i] = i;
        numa[i] = -1;
    }
    gboolean ok = TRUE;
    for (int ln = 0; lines[ln] && ok; ln++) {
        char *s = g_strstrip(lines[ln]);
        if (!*s || g_str_has_prefix(s, "Legend"))
            break;
        /* columns are separated by tabs (or runs of spaces); "CPU Affinity" is one column */
        char **f = g_regex_split_simple("\\t+|\\s{2,}", s, 0, 0);
        if (!f || !f[0]) { /* (text is UTF-8 and the line not blank: not seen) */
            g_strfreev(f);
            continue;
        }
        int nf = (int)g_strv_length(f);
        if (!head) {
            head = f;
            ncols = nf;
            gboolean named[2 * MAXDEV] = { FALSE };
            for (int c = 0; c < nf && ok; c++) {
                if (!strcmp(f[c], "NUMA Affinity"))
                    numa_col = c;
                int col = device_index(f[c]);
                if (col >= 0 && named[col]) {
                    *why = g_strdup_printf("nvidia-smi topo -m, line %d: the header names %s twice", ln + 1, f[c]);
                    ok = FALSE;
                } else if (col >= 0) {
                    named[col] = TRUE;
                }
            }
            continue;
        }
        int row = device_index(f[0]);
        if (row < 0) {
            *why = g_strdup_printf("nvidia-smi topo -m, line %d: expected a GPUn or NICn row", ln + 1);
            ok = FALSE;
        } else if (seen[row]) {
            *why = g_strdup_printf("nvidia-smi topo -m, line %d: a second row for %s", ln + 1, f[0]);
            ok = FALSE;
        } else {
            seen[row] = TRUE;
        }
        if (row < MAXDEV && row + 1 > l->ngpu)
            l->ngpu = row + 1;
        if (row >= MAXDEV && row - MAXDEV + 1 > l->nnic)
            l->nnic = row - MAXDEV + 1;
        for (int c = 1; ok && c < nf && c < ncols; c++) {
            int col = device_index(head[c - 1]);
            if (col >= 0 && row >= 0)
                rel[row][col] = g_strdup(f[c]);
            if (numa_col >= 0 && c == numa_col + 1 && row >= 0 && row < MAXDEV)
                numa[row] = atoi(f[c]);
        }
        g_strfreev(f);
    }
    if (ok && (!head || !l->ngpu)) {
        *why = g_strdup("nvidia-smi topo -m: expected a header line GPU0 GPU1 ... and one line per GPU and NIC");
        ok = FALSE;
    }
    if (ok && numa_col < 0) {
        *why = g_strdup("nvidia-smi topo -m: no NUMA Affinity column");
        ok = FALSE;
    }
    for (int a = 0; ok && a < 2 * MAXDEV; a++)
        for (int b = 0; b < 2 * MAXDEV; b++)
            if (rel[a][b] && (!strcmp(rel[a][b], "PIX") || !strcmp(rel[a][b], "PXB")))
                parent[find_root(parent, a)] = find_root(parent, b);
    /* a NIC's socket: that of a GPU it reaches without crossing the SMP interconnect */
    for (int r = 0; ok && r < l->nnic; r++)
        for (int g = 0; g < l->ngpu && numa[MAXDEV + r] < 0; g++)
            if (rel[MAXDEV + r][g] && strcmp(rel[MAXDEV + r][g], "SYS"))
                numa[MAXDEV + r] = numa[g];
    int id[2 * MAXDEV];
    for (int i = 0; i < 2 * MAXDEV; i++)
        id[i] = -1;
    for (int k = 0; ok && k < l->ngpu + l->nnic; k++) {
        int dev = k < l->ngpu ? k : MAXDEV + k - l->ngpu, root = find_root(parent, dev);
        if (id[root] < 0) {
            id[root] = l->nsw++;
            l->sw_socket[id[root]] = numa[dev] < 0 ? 0 : numa[dev];
        }
        if (k < l->ngpu)
            l->gpu_sw[k] = id[root];
        else
            l->nic_sw[k - l->ngpu] = id[root];
    }
    for (int a = 0; a < 2 * MAXDEV; a++)
        for (int b = 0; b < 2 * MAXDEV; b++)
            g_free(rel[a][b]);
    if (head)
        g_strfreev(head);
    g_strfreev(lines);
    return ok;
}

/* ---------- common ---------- */

static char *join(const int *v, int n)
{
    GString *s = g_string_new(NULL);
    for (int i = 0; i < n; i++)
        g_string_append_printf(s, "%s%d", i ? "," : "", v[i]);
    return g_string_free(s, FALSE);
}

GHashTable *nccl_topo_import(const char *text, char **why)
{
    struct layout l = { 0 };
    const char *bad;
    if (!g_utf8_validate(text, -1, &bad)) {
        /* both formats are text, and GRegex and GMarkup read only UTF-8 */
        int line = 1;
        for (const char *c = text; c < bad; c++)
            line += *c == '\n';
        *why = g_strdup_printf("line %d: not UTF-8 text (byte 0x%02x at offset %td): expected NCCL's topology XML "
                               "or the text of nvidia-smi topo -m", line, (unsigned char)*bad, bad - text);
        return NULL;
    }
    const char *p = text;
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
        p++;
    gboolean xml = *p == '<';
    if (!(xml ? parse_xml(p, &l, why) : parse_smi(p, &l, why)))
        return NULL;
    if (l.ngpu == 0) {
        *why = g_strdup("no GPU in the topology");
        return NULL;
    }
    if (l.nnic == 0) {
        *why = g_strdup("no NIC in the topology");
        return NULL;
    }
    /* canonical numbering: switches by first GPU then NIC, sockets by first switch */
    int sw_new[2 * MAXDEV], sock_new[2 * MAXDEV], nsw = 0, nsock = 0;
    for (int i = 0; i < 2 * MAXDEV; i++)
        sw_new[i] = sock_new[i] = -1;
    int gpu_sw[MAXDEV], nic_sw[MAXDEV], sw_sock[2 * MAXDEV];
    for (int k = 0; k < l.ngpu + l.nnic; k++) {
        int raw = k < l.ngpu ? l.gpu_sw[k] : l.nic_sw[k - l.ngpu];
        if (sw_new[raw] < 0) {
            sw_new[raw] = nsw++;
            int rs = l.sw_socket[raw] < 0 || l.sw_socket[raw] >= 2 * MAXDEV ? 0 : l.sw_socket[raw];
            if (sock_new[rs] < 0)
                sock_new[rs] = nsock++;
            sw_sock[sw_new[raw]] = sock_new[rs];
        }
        (k < l.ngpu ? gpu_sw : nic_sw)[k < l.ngpu ? k : k - l.ngpu] = sw_new[raw];
    }
    GHashTable *kv = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    g_hash_table_insert(kv, g_strdup("gpus"), g_strdup_printf("%d", l.ngpu));
    g_hash_table_insert(kv, g_strdup("nics"), g_strdup_printf("%d", l.nnic));
    g_hash_table_insert(kv, g_strdup("pcie_switches"), g_strdup_printf("%d", nsw));
    g_hash_table_insert(kv, g_strdup("sockets"), g_strdup_printf("%d", nsock));
    g_hash_table_insert(kv, g_strdup("gpu_pcie"), join(gpu_sw, l.ngpu));
    g_hash_table_insert(kv, g_strdup("nic_pcie"), join(nic_sw, l.nnic));
    g_hash_table_insert(kv, g_strdup("pcie_socket"), join(sw_sock, nsw));
    if (l.nic_mbps > 0)
        g_hash_table_insert(kv, g_strdup("nic_rate"), g_strdup_printf("%ldMbps", l.nic_mbps));
    if (l.pcie_gen) {
        g_hash_table_insert(kv, g_strdup("pcie_gen"), g_strdup_printf("%d", l.pcie_gen));
        g_hash_table_insert(kv, g_strdup("pcie_width"), g_strdup_printf("%d", l.pcie_width));
        /* a device whose link trained narrower than the first GPU's: per-device widths */
        bool gd = false, nd = false;
        for (int i = 0; i < l.ngpu; i++)
            gd |= l.gpu_width[i] && l.gpu_width[i] != l.pcie_width;
        for (int i = 0; i < l.nnic; i++)
            nd |= l.nic_width[i] && l.nic_width[i] != l.pcie_width;
        for (int i = 0; i < l.ngpu; i++)
            if (!l.gpu_width[i])
                l.gpu_width[i] = l.pcie_width;
        for (int i = 0; i < l.nnic; i++)
            if (!l.nic_width[i])
                l.nic_width[i] = l.pcie_width;
        if (gd)
            g_hash_table_insert(kv, g_strdup("gpu_pcie_width"), join(l.gpu_width, l.ngpu));
        if (nd)
            g_hash_table_insert(kv, g_strdup("nic_pcie_width"), join(l.nic_width, l.nnic));
    }
    return kv;
}
