/* `rocesim check`: the scenario as it would run, every default filled in, with derived
 * figures an architect wants before running (hosts, links, oversubscription, BDP). */
#include <stdio.h>
#include "models/net.h"
#include "models/packet.h"
#include "models/topology.h"
#include "models/workload.h"
#include "cli/commands.h"
#include "cli/run.h"
#include "sim/units.h"

static void print_expanded(GKeyFile *kf)
{
    gsize ng;
    char **groups = g_key_file_get_groups(kf, &ng);
    for (gsize g = 0; g < ng; g++) {
        printf("[%s]\n", groups[g]);
        gsize nk;
        char **keys = g_key_file_get_keys(kf, groups[g], &nk, NULL);
        for (gsize k = 0; k < nk; k++) {
            char *v = g_key_file_get_value(kf, groups[g], keys[k], NULL);
            printf("%s = %s\n", keys[k], v);
            g_free(v);
        }
        g_strfreev(keys);
        printf("\n");
    }
    g_strfreev(groups);
}

/* The first host pair, in (src, dst) order, with the most links between them. Hops depend
 * only on the hosts' switches, so only the lowest host of each switch (and, for a pair on
 * one switch, the second lowest) can be that first pair: switches^2 work instead of
 * hosts^2 (65536 hosts took 15 s). */
static void longest_path(const struct topology *t, uint32_t *far, uint32_t *fs, uint32_t *fd)
{
    uint32_t H = t->nhosts, S = t->nswitches;
    uint32_t *rep = g_new(uint32_t, S ? S : 1), *second = g_new(uint32_t, S ? S : 1);
    for (uint32_t i = 0; i < S; i++)
        rep[i] = second[i] = UINT32_MAX;
    GArray *cand = g_array_new(FALSE, FALSE, sizeof(uint32_t)); /* ascending host ids */
    for (uint32_t h = 0; h < H; h++) {
        uint32_t a = t->attach[h] - H;
        if (rep[a] == UINT32_MAX)
            rep[a] = h;
        else if (second[a] == UINT32_MAX)
            second[a] = h;
        else
            continue;
        g_array_append_val(cand, h);
    }
    for (uint32_t x = 0; x < H; x++) {
        uint32_t ax = t->attach[x] - H;
        if (rep[ax] != x)
            continue;
        for (guint k = 0; k < cand->len; k++) {
            uint32_t y = g_array_index(cand, uint32_t, k), ay = t->attach[y] - H;
            if (y == x || (second[ay] == y && ay != ax))
                continue;
            uint32_t hops = topology_hops(t, x, y);
            if (hops != UINT32_MAX && hops > *far) {
                *far = hops;
                *fs = x;
                *fd = y;
            }
        }
    }
    g_array_free(cand, TRUE);
    g_free(rep);
    g_free(second);
}

int cmd_check(int argc, char **argv)
{
    char **sets = NULL, *max_memory = NULL;
    GOptionEntry entries[] = {
        { "set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &sets, "Override a scenario key (repeatable)", "SECTION.KEY=VALUE" },
        { "max-memory", 0, 0, G_OPTION_ARG_STRING, &max_memory,
          "Refuse a scenario estimated to need more memory (default: this machine's)", "SIZE" },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    GOptionContext *ctx = g_option_context_new("SCENARIO");
    g_option_context_set_summary(ctx, "Validate a scenario and print it with every default and derived value.");
    g_option_context_add_main_entries(ctx, entries, NULL);
    GError *err = NULL;
    if (!g_option_context_parse(ctx, &argc, &argv, &err) || argc != 2 || !run_set_max_memory(max_memory, &err)) {
        fprintf(stderr, "rocesim check: %s\n", err ? err->message : "expected exactly one scenario file");
        g_clear_error(&err);
        g_option_context_free(ctx);
        g_strfreev(sets);
        g_free(max_memory);
        return 2;
    }
    g_free(max_memory);
    g_option_context_free(ctx);
    struct scenario *sc = scenario_load(argv[1], (const char *const *)sets, &err);
    g_strfreev(sets);
    if (!sc) {
        fprintf(stderr, "rocesim: %s\n", err->message);
        g_error_free(err);
        return 2;
    }
    struct topology *t = topology_build(sc, &err);
    struct schedule *s = t ? workload_build_all(sc, t, &err) : NULL;
    if (!s) {
        fprintf(stderr, "rocesim: %s\n", err->message);
        g_error_free(err);
        topology_free(t);
        scenario_free(sc);
        return 2;
    }
    printf("# %s, as rocesim will run it (defaults filled in)\n\n", sc->path);
    print_expanded(sc->expanded);
    for (guint j = 0; j < s->jobs->len; j++) {
        const struct sched_job *job = &g_array_index(s->jobs, struct sched_job, j);
        if (job->defaults && *job->defaults)
            printf("# [workload %s]: defaults it takes\n%s\n", job->name, job->defaults);
    }

    char a[32], b[32];
    uint32_t links = t->nports / 2;
    printf("# derived\n");
    printf("hosts = %u\n", t->nhosts);
    printf("switches = %u\n", t->nnodes - t->nhosts);
    printf("links = %u\n", links);
    if (sc->topo == TOPO_LEAF_SPINE)
        printf("oversubscription = %.2f:1 (leaf downlink / uplink capacity)\n", t->oversubscription);
    if (sc->host_rate_from_edges)
        printf("host_rate = %s (from the edge list's host links%s; the rate-derived defaults use it)\n",
               units_format_rate(sc->host_rate, a, sizeof a),
               sc->host_rate_from_edges == 2 ? ", the fastest of several: set [topology] host_rate to choose" : "");
    /* PFC headroom per kind of port (hosts' links and the fabric's) */
    if (sc->pfc) {
        GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        for (uint32_t i = 0; i < t->nports; i++) {
            const struct topo_port *p = &t->ports[i];
            if (t->nodes[p->node].kind != NODE_SWITCH)
                continue;
            char *k = g_strdup_printf("%s %s", units_format_rate(p->rate_bps, a, sizeof a),
                                      units_format_time(p->delay_ps, b, sizeof b));
            if (g_hash_table_contains(seen, k)) {
                g_free(k);
                continue;
            }
            uint64_t h = net_port_headroom(sc, p->rate_bps, p->delay_ps);
            char hb[32];
            printf("headroom (%s ports, %s links) = %s per lossless priority%s\n", a, b,
                   units_format_size(h, hb, sizeof hb), sc->headroom ? " (set by [switch] headroom)" : " (auto: IEEE 802.3 delays, MTU, cable)");
            g_hash_table_add(seen, k);
        }
        g_hash_table_unref(seen);
    }
    char *overcommit = net_buffer_warning(sc, t);
    if (overcommit)
        printf("# warning: %s\n", overcommit);
    g_free(overcommit);
    /* the longest shortest path and its base RTT */
    uint32_t far = 0, fs = 0, fd = 0;
    longest_path(t, &far, &fs, &fd);
    if (far) {
        simtime_t one_way = ideal_transfer_ps(sc, t, fs, fd, 1);
        simtime_t rtt = 2 * one_way;
        uint64_t bdp = (uint64_t)((double)sc->host_rate * ((double)rtt / PS_PER_S) / 8);
        printf("longest_path = %u links (host%u -> host%u)\n", far, fs, fd);
        printf("base_rtt = %s (one small packet each way)\n", units_format_time(rtt, a, sizeof a));
        printf("bdp = %s (host rate x base RTT)\n", units_format_size(bdp, b, sizeof b));
    }
    double eff = (double)sc->mtu / (sc->mtu + ROCE_HDR_BYTES + WIRE_EXTRA_BYTES);
    printf("wire_efficiency = %.4f (RoCEv2 payload %u B per %u B on the wire)\n", eff, sc->mtu,
           sc->mtu + ROCE_HDR_BYTES + WIRE_EXTRA_BYTES);
    printf("ecn_kmin_packets = %.1f\n", (double)sc->ecn_kmin / (sc->mtu + ROCE_HDR_BYTES));
    printf("ecn_kmax_packets = %.1f\n", (double)sc->ecn_kmax / (sc->mtu + ROCE_HDR_BYTES));
    uint64_t total = 0;
    uint32_t nx = 0;
    for (uint32_t i = 0; i < schedule_count(s); i++)
        if (schedule_get(s, i)->bytes) {
            total += schedule_get(s, i)->bytes;
            nx++;
        }
    printf("transfers = %u (%s in total)\n", nx, units_format_size(total, a, sizeof a));
    schedule_free(s);
    topology_free(t);
    scenario_free(sc);
    return 0;
}
