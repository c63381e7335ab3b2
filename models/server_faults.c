/* Locality faults of multi-GPU servers: faults of the machine's build rather than events in
 * time, so they are applied to the server description before the fabric exists.
 *   nic-numa      node = srvV.nicR [pcie = P]: the NIC sits under PCIe switch P (default:
 *                 the first PCIe switch of the next socket), across the inter-socket link
 *                 from the GPUs it serves
 *   pcie-width    node = srvV.gpuG | srvV.nicR | srvV.pcieP (its uplink), width = lanes: the
 *                 link trained at that width
 *   link-speed    node = srvV.nicR | railR, rate = RATE: the NIC port (every server's NIC R)
 *                 at that speed
 *   nic-down      node = srvV.nicR | railR: the NIC port (every server's NIC R) is down; its
 *                 GPUs use another NIC of their PCIe switch (or the lowest that is up)
 *   nvlink-down   node = srvV.gpuG: the GPU has no NVLink; its traffic goes over PCIe
 *   no-gpudirect  node = srvV: GPUDirect RDMA off, data staged through host memory */
#include "models/server.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim/units.h"

static const char *const kinds[] = { "nic-numa", "pcie-width", "link-speed", "nic-down", "nvlink-down", "no-gpudirect",
                                     NULL };

gboolean server_fault_is_locality(const char *kind)
{
    for (int i = 0; kinds[i]; i++)
        if (!strcmp(kinds[i], kind))
            return TRUE;
    return FALSE;
}

/* "srvV" or "srvV.PARTn" / "railR": which server (or all), part name and number. */
struct target {
    int64_t server;       /* -1: every server (a rail) */
    char part[8];         /* "", "gpu", "nic", "pcie" */
    uint32_t unit;
};

static gboolean parse_num(const char *t, const char **end, uint32_t *out)
{
    char *e;
    errno = 0;
    unsigned long v = strtoul(t, &e, 10);
    if (errno || e == t || v > 1u << 20)
        return FALSE;
    *out = (uint32_t)v;
    *end = e;
    return TRUE;
}

static gboolean parse_target(const char *text, struct target *t)
{
    const char *p;
    uint32_t v;
    memset(t, 0, sizeof *t);
    if (g_str_has_prefix(text, "rail")) {
        t->server = -1;
        g_strlcpy(t->part, "nic", sizeof t->part);
        return parse_num(text + 4, &p, &t->unit) && !*p;
    }
    if (!g_str_has_prefix(text, "srv") || !parse_num(text + 3, &p, &v))
        return FALSE;
    t->server = v;
    if (!*p)
        return TRUE;
    if (*p != '.')
        return FALSE;
    p++;
    static const char *const parts[] = { "gpu", "nic", "pcie" };
    for (int i = 0; i < 3; i++)
        if (g_str_has_prefix(p, parts[i])) {
            g_strlcpy(t->part, parts[i], sizeof t->part);
            return parse_num(p + strlen(parts[i]), &p, &t->unit) && !*p;
        }
    return FALSE;
}

static gboolean fail(GError **err, const struct scenario *s, const char *group, const char *key, const char *value,
                     const char *what)
{
    scenario_key_error(err, s, group, key, value, "%s", what);
    return FALSE;
}

static gboolean apply_one(const struct scenario *s, const struct named_section *f, const struct server_desc *sd,
                          const struct cluster_desc *cd, struct server_inst *inst, GError **err)
{
    char group[300];
    snprintf(group, sizeof group, "fault %s", f->name);
    const char *node = g_hash_table_lookup(f->keys, "node");
    if (g_hash_table_contains(f->keys, "at") || g_hash_table_contains(f->keys, "for"))
        return fail(err, s, group, g_hash_table_contains(f->keys, "at") ? "at" : "for", NULL,
                    "a locality fault is part of the machine for the whole run: remove at and for");
    struct target t;
    if (!parse_target(node, &t) || (t.server >= 0 && (uint64_t)t.server >= cd->servers))
        return fail(err, s, group, "node", node, "expected a server part such as srv0, srv0.gpu3, srv0.nic3, srv0.pcie1 "
                                                 "or a rail such as rail3, of a server that exists");
    uint32_t limit = !strcmp(t.part, "gpu") ? sd->gpus : !strcmp(t.part, "nic") ? sd->nics : sd->pcie_switches;
    if (*t.part && t.unit >= limit)
        return fail(err, s, group, "node", node, "no such GPU, NIC or PCIe switch in the [server] description");
    uint32_t s0 = t.server < 0 ? 0 : (uint32_t)t.server, s1 = t.server < 0 ? cd->servers : s0 + 1;
    const char *kind = f->kind;
    if (!strcmp(kind, "no-gpudirect")) {
        if (*t.part)
            return fail(err, s, group, "node", node, "no-gpudirect applies to a server: expected srvN");
        inst[s0].no_gpudirect = true;
    } else if (!strcmp(kind, "nic-down")) {
        if (strcmp(t.part, "nic"))
            return fail(err, s, group, "node", node, "nic-down applies to a NIC port: srvN.nicR or railR");
        for (uint32_t v = s0; v < s1; v++)
            inst[v].nic_down[t.unit] = true;
    } else if (!strcmp(kind, "nvlink-down")) {
        if (strcmp(t.part, "gpu") || t.server < 0)
            return fail(err, s, group, "node", node, "nvlink-down applies to a GPU: expected srvN.gpuG");
        inst[s0].nvlink_down[t.unit] = true;
    } else if (!strcmp(kind, "nic-numa")) {
        if (strcmp(t.part, "nic") || t.server < 0)
            return fail(err, s, group, "node", node, "nic-numa applies to a NIC: expected srvN.nicR");
        uint32_t home = sd->pcie_socket[sd->nic_pcie[t.unit]], target = UINT32_MAX;
        const char *pv = g_hash_table_lookup(f->keys, "pcie");
        if (pv) {
            const char *e;
            if (!parse_num(pv, &e, &target) || *e || target >= sd->pcie_switches || sd->pcie_socket[target] == home)
                return fail(err, s, group, "pcie", pv, "expected a PCIe switch on another socket than the NIC's own");
        } else {
            for (uint32_t p = 0; p < sd->pcie_switches && target == UINT32_MAX; p++)
                if (sd->pcie_socket[p] == (home + 1) % sd->sockets && sd->pcie_socket[p] != home)
                    target = p;
            if (target == UINT32_MAX)
                return fail(err, s, group, "node", node, "the server has one socket: there is no NUMA boundary to cross");
        }
        inst[s0].nic_pcie[t.unit] = target;
    } else if (!strcmp(kind, "pcie-width")) {
        const char *wv = g_hash_table_lookup(f->keys, "width");
        const char *e;
        uint32_t w;
        if (!parse_num(wv, &e, &w) || *e || !w || w > 32 || (w & (w - 1)))
            return fail(err, s, group, "width", wv, "expected a link width of 1, 2, 4, 8, 16 or 32 lanes");
        if (!*t.part || t.server < 0)
            return fail(err, s, group, "node", node, "pcie-width applies to a PCIe link: srvN.gpuG, srvN.nicR or srvN.pcieP");
        uint64_t rate = server_pcie_rate(sd->pcie_gen, w);
        if (!strcmp(t.part, "gpu"))
            inst[s0].gpu_pcie_rate[t.unit] = rate;
        else if (!strcmp(t.part, "nic"))
            inst[s0].nic_pcie_rate[t.unit] = rate;
        else
            inst[s0].uplink_rate[t.unit] = rate;
    } else { /* link-speed */
        const char *rv = g_hash_table_lookup(f->keys, "rate");
        uint64_t rate = 0;
        char *why = NULL;
        if (!units_parse_rate(rv, &rate, &why) || rate == 0) {
            fail(err, s, group, "rate", rv, why ? why : "expected a positive rate");
            g_free(why);
            return FALSE;
        }
        if (strcmp(t.part, "nic"))
            return fail(err, s, group, "node", node, "link-speed applies to a NIC port: srvN.nicR or railR");
        for (uint32_t v = s0; v < s1; v++)
            inst[v].nic_rate[t.unit] = rate;
    }
    return TRUE;
}

struct server_inst *server_faults_apply(const struct scenario *s, const struct server_desc *sd,
                                        const struct cluster_desc *cd, GError **err)
{
    struct server_inst *inst = g_new0(struct server_inst, cd->servers);
    for (uint32_t v = 0; v < cd->servers; v++) {
        struct server_inst *x = &inst[v];
        for (uint32_t r = 0; r < sd->nics; r++) {
            x->nic_pcie[r] = sd->nic_pcie[r];
            x->nic_pcie_rate[r] = server_pcie_rate(sd->pcie_gen, sd->nic_pcie_width[r]);
            x->nic_rate[r] = sd->nic_rate;
        }
        for (uint32_t g = 0; g < sd->gpus; g++)
            x->gpu_pcie_rate[g] = server_pcie_rate(sd->pcie_gen, sd->gpu_pcie_width[g]);
        for (uint32_t p = 0; p < sd->pcie_switches; p++)
            x->uplink_rate[p] = sd->pcie_rate;
    }
    for (guint i = 0; i < s->faults->len; i++) {
        const struct named_section *f = g_ptr_array_index(s->faults, i);
        if (server_fault_is_locality(f->kind) && !apply_one(s, f, sd, cd, inst, err)) {
            g_free(inst);
            return NULL;
        }
    }
    return inst;
}
