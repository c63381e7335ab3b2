/* Multi-GPU servers end to end (models/server.c, topology_rail.c, collective_hier.c), through
 * the rocesim binary: the one-server ring against alpha-beta on NVLink, rail-optimised rings
 * against the NICs' bound with every inter-server byte on its rail, and the same job on a
 * plain leaf-spine. Scenarios are in tests/scenarios/servers/. */
#include <math.h>
#include "tests/testutil.h"

#define MTU 4096.0
#define DATA_WIRE_OVERHEAD 82.0 /* headers, ICRC, FCS, preamble and IFG per data packet */
/* payload bytes per second of a link of `bps` at MTU 4096 */
static double eff_Bps(double bps) { return bps / 8 * MTU / (MTU + DATA_WIRE_OVERHEAD); }

struct result {
    JsonParser *parser;
    JsonObject *root;
    char *dir;
};

static struct result run(const char *rel, const char *const *sets)
{
    struct result r = { 0 };
    r.dir = test_tmpdir();
    char *out = g_build_filename(r.dir, "out", NULL);
    CU_ASSERT_EQUAL_FATAL(test_run_sim(rel, out, sets), 0);
    char *sum = g_build_filename(out, "summary.json", NULL);
    r.parser = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_file(r.parser, sum, NULL));
    r.root = json_node_get_object(json_parser_get_root(r.parser));
    g_free(sum);
    g_free(out);
    return r;
}

static void result_free(struct result *r)
{
    g_object_unref(r->parser);
    test_rmtree(r->dir);
    g_free(r->dir);
}

static double job_value(const struct result *r, const char *key)
{
    JsonArray *jobs = json_object_get_array_member(r->root, "jobs");
    CU_ASSERT_EQUAL_FATAL(json_array_get_length(jobs), 1);
    return json_object_get_double_member(json_array_get_object_element(jobs, 0), key);
}

/* Sum of tx_bytes of the ports of nodes whose name contains `part` (and `part2` if given). */
static double tx_bytes(const struct result *r, const char *part, const char *part2)
{
    JsonArray *ports = json_object_get_array_member(r->root, "ports");
    double sum = 0;
    for (guint i = 0; i < json_array_get_length(ports); i++) {
        JsonObject *p = json_array_get_object_element(ports, i);
        const char *node = json_object_get_string_member(p, "node");
        if (strstr(node, part) && (!part2 || strstr(node, part2)))
            sum += (double)json_object_get_int_member(p, "tx_bytes");
    }
    return sum;
}

/* 256 MiB over the 8 GPUs of one DGX H100 (NVLink 450 GB/s per direction, 1 us per NVLink
 * hop), 8 channels. Every GPU sends to the next over its own NVLink into the NVSwitch, so
 *   T = 2(N-1)/N * S / B + 2(N-1) * alpha
 * with B = 450e9 * 4096/4178 (the efficient rate of the same frames as on the wire) and alpha
 * one step's latency: GPU -> NVSwitch -> GPU, 2 x 1 us, plus the store-and-forward of one
 * 4178 B frame at the hub, the NVSwitch and the far hub (3 x 9.28 ns).
 *   T = 1.75 * 268435456 / 441.17e9 + 14 * 2.0279 us = 1064.8 + 28.4 = 1093.2 us
 * No byte may touch a PCIe switch or a NIC. */
static void test_one_server_nvlink(void)
{
    const char *sets[] = { "--set", "workload.ar.size=256MiB", NULL };
    struct result r = run("servers/one-server.ini", sets);
    const double N = 8, S = 268435456.0, B = eff_Bps(3600e9);
    const double alpha_us = 2 * 1.0 + 3 * (MTU + DATA_WIRE_OVERHEAD) * 8 / 3600e9 * 1e6;
    const double t_est = 2 * (N - 1) / N * S / B * 1e6 + 2 * (N - 1) * alpha_us;
    double t = job_value(&r, "time_p50_us");
    printf("\n    one server: %.2f us (alpha-beta %.2f us, %+.2f %%) ", t, t_est, 100 * (t / t_est - 1));
    CU_ASSERT(fabs(t - t_est) <= 0.03 * t_est);
    CU_ASSERT(tx_bytes(&r, "nvswitch", NULL) > 2 * (N - 1) / N * S * N);
    CU_ASSERT_EQUAL(tx_bytes(&r, "nic", NULL), 0);
    CU_ASSERT_EQUAL(tx_bytes(&r, "pcie", NULL), 0);
    CU_ASSERT_EQUAL(tx_bytes(&r, "leaf", NULL), 0);
    result_free(&r);
}

/* Rails: NCCL's busbw of a ring over S servers x 8 GPUs is bounded by the server's NICs:
 * each server sends 2(n-1)/n of the data out through its 8 NICs, so busbw <= 8 x B_nic with
 * B_nic = 50e9 * 4096/4178 = 49.02 GB/s: 392.2 GB/s. The rails are non-blocking, so nothing
 * may cross a spine, and the 8 channels (one per NIC) load every rail equally. */
static void check_rails(const char *servers, const char *ranks)
{
    const char *sets[] = { "--set", servers, "--set", ranks, NULL };
    struct result r = run("servers/rail.ini", sets);
    const double bound = 8 * eff_Bps(400e9) / 1e9;
    double busbw = job_value(&r, "busbw_GBps");
    printf("\n    %s: busbw %.2f GB/s (NIC bound %.2f GB/s, %+.2f %%) ", servers, busbw, bound,
           100 * (busbw / bound - 1));
    CU_ASSERT(busbw <= bound * 1.001);
    CU_ASSERT(busbw >= 0.95 * bound);
    CU_ASSERT_EQUAL(tx_bytes(&r, "spine", NULL), 0);
    double total = tx_bytes(&r, "leaf", NULL), lo = INFINITY, hi = 0;
    for (int rail = 0; rail < 8; rail++) {
        char name[32];
        snprintf(name, sizeof name, "rail%d.", rail);
        double b = tx_bytes(&r, name, NULL);
        lo = fmin(lo, b);
        hi = fmax(hi, b);
    }
    CU_ASSERT(total > 0);
    CU_ASSERT(hi <= lo * 1.02);
    result_free(&r);
}

static void test_two_servers_rails(void) { check_rails("cluster.servers=2", "workload.ar.ranks=0-1:0-7"); }
static void test_four_servers_rails(void) { check_rails("cluster.servers=4", "workload.ar.ranks=0-3:0-7"); }

/* The same job with each server's NICs on one leaf of a plain leaf-spine (8 spines of
 * 400 Gb/s: as much capacity as the rails): every inter-server byte crosses a spine, ECMP
 * hashes the 8 channels' QPs onto the spines unevenly, and the ring runs at the pace of the
 * most loaded spine link, well below the NIC bound. */
static void test_leaf_spine_collisions(void)
{
    struct result r = run("servers/leafspine.ini", NULL);
    const double bound = 8 * eff_Bps(400e9) / 1e9;
    double busbw = job_value(&r, "busbw_GBps");
    JsonArray *ports = json_object_get_array_member(r.root, "ports");
    double lo = INFINITY, hi = 0;
    for (guint i = 0; i < json_array_get_length(ports); i++) {
        JsonObject *p = json_array_get_object_element(ports, i);
        if (!strcmp(json_object_get_string_member(p, "node"), "leaf0") &&
            g_str_has_prefix(json_object_get_string_member(p, "peer"), "spine")) {
            double b = (double)json_object_get_int_member(p, "tx_bytes");
            lo = fmin(lo, b);
            hi = fmax(hi, b);
        }
    }
    printf("\n    leaf-spine: busbw %.2f GB/s (NIC bound %.2f), leaf0 uplinks %.0f..%.0f MB ", busbw, bound,
           lo / 1e6, hi / 1e6);
    CU_ASSERT(tx_bytes(&r, "spine", NULL) > 0);
    CU_ASSERT(hi >= 1.5 * lo);
    CU_ASSERT(busbw < 0.8 * bound);
    result_free(&r);
}

/* The layer layers.csv names as the bottleneck. */
static char *bottleneck(const struct result *r)
{
    char *path = g_build_filename(r->dir, "out", "layers.csv", NULL), *text = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(path, &text, NULL, NULL));
    char **lines = g_strsplit(text, "\n", -1), *found = NULL;
    for (int i = 1; lines[i] && !found; i++)
        if (g_str_has_suffix(lines[i], ",1"))
            found = g_strndup(lines[i], strcspn(lines[i], ","));
    g_strfreev(lines);
    g_free(text);
    g_free(path);
    return found ? found : g_strdup("");
}

static gboolean has_warning(const struct result *r, const char *prefix)
{
    JsonArray *w = json_object_get_array_member(r->root, "warnings");
    for (guint i = 0; i < json_array_get_length(w); i++)
        if (g_str_has_prefix(json_array_get_string_element(w, i), prefix))
            return TRUE;
    return FALSE;
}

/* A locality fault on 2 servers x 8 rails: the ring's 8 channels (one per NIC) run in step,
 * so the job runs at the pace of the slowest channel: busbw = 8 x the payload rate of the
 * faulty path, computed by hand from its link rate; layers.csv must name `layer`. */
static void check_fault(const char *const *sets, double path_bps, const char *layer, const char *what)
{
    struct result r = run("servers/rail.ini", sets);
    const double bound = 8 * eff_Bps(path_bps) / 1e9;
    double busbw = job_value(&r, "busbw_GBps");
    char *b = bottleneck(&r);
    printf("\n    %s: busbw %.2f GB/s (hand bound %.2f GB/s, %+.2f %%), bottleneck %s ", what, busbw, bound,
           100 * (busbw / bound - 1), b);
    CU_ASSERT(fabs(busbw - bound) <= 0.05 * bound);
    CU_ASSERT_STRING_EQUAL(b, layer);
    g_free(b);
    if (!strcmp(what, "rail3 at 200Gbps")) {
        CU_ASSERT(has_warning(&r, "hot rail: rail3 "));
        CU_ASSERT(!has_warning(&r, "hot rail: rail0 "));
    } else {
        CU_ASSERT(!has_warning(&r, "hot rail"));
    }
    result_free(&r);
}

static void test_rail_half_speed(void)
{
    const char *sets[] = { "--set", "fault.slow.kind=link-speed", "--set", "fault.slow.node=rail3",
                           "--set", "fault.slow.rate=200Gbps", NULL };
    check_fault(sets, 200e9, "nic", "rail3 at 200Gbps");
}

/* NIC 0 of server 0 under a PCIe switch of the other socket, inter-socket link 200 Gb/s:
 * GPU 0's traffic to and from its NIC crosses it. */
static void test_cross_numa_nic(void)
{
    const char *sets[] = { "--set", "fault.numa.kind=nic-numa", "--set", "fault.numa.node=srv0.nic0",
                           "--set", "server.socket_link_rate=200Gbps", NULL };
    check_fault(sets, 200e9, "socket-link", "cross-NUMA NIC");
}

/* NIC 5 of server 1 trained at x8: gen5 x8 = 8 lanes x 32 GT/s x 128/130 x 256/280
 * = 230.456 Gb/s of PCIe payload. */
static void test_pcie_x8(void)
{
    const char *sets[] = { "--set", "fault.x8.kind=pcie-width", "--set", "fault.x8.node=srv1.nic5",
                           "--set", "fault.x8.width=8", NULL };
    check_fault(sets, 8 * 32e9 * 128 / 130 * 256 / 280, "pcie", "NIC PCIe x8");
}

/* GPUDirect off on server 0: NCCL's proxy stages every inter-server chunk through host
 * memory. Per PCIe switch of a DGX H100 (2 GPUs, 2 NICs) the uplink to the socket carries,
 * upward, the copies of its 2 GPUs' sends into host memory and its 2 NICs' receives into
 * host memory, and downward the 2 NICs' sends from host memory and the copies to its 2
 * GPUs: 4 channel flows each way, so a channel gets a quarter of the gen5 x16 link:
 * 460.91 / 4 = 115.23 Gb/s. Host memory (2400 Gb/s per socket and direction) carries 8 such
 * flows per direction, 922 Gb/s: not the limit. busbw = 8 x 115.23 Gb/s of payload. */
static void test_no_gpudirect(void)
{
    const char *sets[] = { "--set", "fault.nogdr.kind=no-gpudirect", "--set", "fault.nogdr.node=srv0", NULL };
    check_fault(sets, 16 * 32e9 * 128 / 130 * 256 / 280 / 4, "pcie", "GPUDirect off");
}

/* trace.json: every event has the trace-event fields (ph, ts, pid, tid; dur for complete
 * events) and every row of transfers.csv is exactly one "transfer" event on the sender's
 * track with ts = start and dur = fct; two iterations with a compute phase give compute and
 * collective events. */
static void test_trace(void)
{
    const char *sets[] = { "--set", "workload.ar.iterations=2", "--set", "workload.ar.compute=20us",
                           "--set", "workload.ar.size=16MiB", NULL };
    struct result r = run("servers/rail.ini", sets);
    char *path = g_build_filename(r.dir, "out", "trace.json", NULL);
    JsonParser *p = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_file(p, path, NULL));
    JsonArray *ev = json_object_get_array_member(json_node_get_object(json_parser_get_root(p)), "traceEvents");
    GHashTable *by_id = g_hash_table_new(g_direct_hash, g_direct_equal);
    guint ncompute = 0, ncoll = 0, bad = 0;
    for (guint i = 0; i < json_array_get_length(ev); i++) {
        JsonObject *e = json_array_get_object_element(ev, i);
        if (!json_object_has_member(e, "ph") || !json_object_has_member(e, "pid") || !json_object_has_member(e, "tid"))
            bad++;
        const char *ph = json_object_get_string_member(e, "ph");
        if (!strcmp(ph, "M"))
            continue;
        if (strcmp(ph, "X") || !json_object_has_member(e, "ts") || !json_object_has_member(e, "dur"))
            bad++;
        const char *cat = json_object_get_string_member(e, "cat");
        ncompute += !strcmp(cat, "compute");
        ncoll += !strcmp(cat, "collective");
        if (!strcmp(cat, "transfer")) {
            gint64 id = json_object_get_int_member(json_object_get_object_member(e, "args"), "id");
            CU_ASSERT(!g_hash_table_contains(by_id, GINT_TO_POINTER(id + 1)));
            g_hash_table_insert(by_id, GINT_TO_POINTER(id + 1), e);
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(ncompute, 2);  /* one compute phase before each iteration */
    CU_ASSERT_EQUAL(ncoll, 2 * 16); /* each iteration on each of the 16 GPUs */
    char *csv = g_build_filename(r.dir, "out", "transfers.csv", NULL), *text = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(csv, &text, NULL, NULL));
    char **lines = g_strsplit(text, "\n", -1);
    guint rows = 0, matched = 0;
    for (int i = 1; lines[i] && *lines[i]; i++) {
        char **c = g_strsplit(lines[i], ",", -1); /* id,src,dst,bytes,prio,start_ns,end_ns,fct_ns,... */
        rows++;
        JsonObject *e = g_hash_table_lookup(by_id, GINT_TO_POINTER(atoi(c[0]) + 1));
        if (e && llround(json_object_get_double_member(e, "ts") * 1000) == atoll(c[5]) &&
            llround(json_object_get_double_member(e, "dur") * 1000) == atoll(c[7]) &&
            json_object_get_int_member(e, "pid") == atoi(c[1]) / 8 + 1 &&
            json_object_get_int_member(e, "tid") == atoi(c[1]) % 8 + 1)
            matched++;
        g_strfreev(c);
    }
    CU_ASSERT(rows > 0);
    CU_ASSERT_EQUAL(matched, rows);
    CU_ASSERT_EQUAL(g_hash_table_size(by_id), rows);
    g_strfreev(lines);
    g_free(text);
    g_free(csv);
    g_hash_table_destroy(by_id);
    g_object_unref(p);
    g_free(path);
    result_free(&r);
}

/* kind = fat-tree, k = 8: 8 pods of 4 edge and 4 aggregation switches, 16 cores; the 32
 * NICs of 4 servers fill the first 8 edge switches (pods 0 and 1). The ring crosses from
 * pod 0 to pod 1 through the cores, so core links carry traffic, and with ECMP on 400 Gb/s
 * links the ring stays below the NICs' bound. */
static void test_fat_tree(void)
{
    const char *sets[] = { "--set", "topology.kind=fat-tree", "--set", "cluster.servers=4", "--set", "cluster.k=8",
                           "--set", "workload.ar.ranks=0-3:0-7", "--set", "workload.ar.size=32MiB", NULL };
    struct result r = run("servers/rail.ini", sets);
    char *path = g_build_filename(r.dir, "out", "topology.csv", NULL), *text = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(path, &text, NULL, NULL));
    char **lines = g_strsplit(text, "\n", -1); /* node,port,peer,...: one line per port */
    guint edges = 0, aggs = 0, cores = 0;
    for (int i = 1; lines[i]; i++) {
        edges += g_str_has_prefix(lines[i], "pod") && strstr(lines[i], ".edge") < strchr(lines[i], ',') &&
                 strstr(lines[i], ".edge") != NULL;
        aggs += g_str_has_prefix(lines[i], "pod") && strstr(lines[i], ".agg") != NULL &&
                strstr(lines[i], ".agg") < strchr(lines[i], ',');
        cores += g_str_has_prefix(lines[i], "core");
    }
    g_strfreev(lines);
    g_free(text);
    g_free(path);
    /* ports: edge 4 down + 4 up (only the 8 used edges have down links), agg 8, core 8 */
    CU_ASSERT_EQUAL(edges, 8 * 4 + 32 * 4);
    CU_ASSERT_EQUAL(aggs, 32 * 8);
    CU_ASSERT_EQUAL(cores, 16 * 8);
    CU_ASSERT(tx_bytes(&r, "core", NULL) > 0);
    CU_ASSERT(job_value(&r, "busbw_GBps") < 8 * eff_Bps(400e9) / 1e9);
    result_free(&r);
}

/* AllToAll over 2 servers x 8 GPUs (S = 64 MiB per GPU, S/16 to each peer): a GPU sends 8/16
 * of its buffer to the other server, so a server puts 8 x S/2 = 4S on its 8 NICs:
 * T = 4S / (8 x B_nic), algbw = S/T = 2 B_nic, busbw = algbw x 15/16 (nccl-tests). The
 * routes relay every remote chunk over NVLink to the GPU on the destination's rail (PXN):
 * no spine bytes, every rail the same load. */
static void test_alltoall_pxn(void)
{
    const char *sets[] = { "--set", "workload.ar.kind=alltoall", "--set", "workload.ar.size=64MiB", NULL };
    struct result r = run("servers/rail.ini", sets);
    const double bound = 2 * eff_Bps(400e9) * 15 / 16 / 1e9;
    double busbw = job_value(&r, "busbw_GBps");
    printf("\n    alltoall: busbw %.2f GB/s (NIC bound %.2f GB/s, %+.2f %%) ", busbw, bound, 100 * (busbw / bound - 1));
    CU_ASSERT(fabs(busbw - bound) <= 0.05 * bound);
    CU_ASSERT_EQUAL(tx_bytes(&r, "spine", NULL), 0);
    CU_ASSERT(tx_bytes(&r, "nvswitch", NULL) > 0);
    result_free(&r);
}

/* NCCL's tree over 2 servers: on channel c the GPUs of a server are a chain from the GPU of
 * NIC c, and the heads form the double binary tree over the servers. Each channel's S/8
 * crosses the servers once up and once down, on rail c: a rail's NIC <-> leaf ports send
 * 2 directions x 2 hops x S/8 of payload (plus frame headers and ACKs, < 5 %), nothing
 * touches a spine. */
static void test_tree_over_servers(void)
{
    const char *sets[] = { "--set", "workload.ar.algorithm=tree", NULL };
    struct result r = run("servers/rail.ini", sets);
    const double S = 134217728.0, per_rail = 4 * S / 8;
    CU_ASSERT_EQUAL(tx_bytes(&r, "spine", NULL), 0);
    char *path = g_build_filename(r.dir, "out", "rails.csv", NULL), *text = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(path, &text, NULL, NULL));
    char **lines = g_strsplit(text, "\n", -1); /* rail,tx_bytes,share,utilisation,hot */
    int rails = 0;
    for (int i = 1; lines[i] && *lines[i]; i++, rails++) {
        double b = g_ascii_strtod(strchr(lines[i], ',') + 1, NULL);
        CU_ASSERT(b >= per_rail && b <= 1.05 * per_rail);
    }
    CU_ASSERT_EQUAL(rails, 8);
    g_strfreev(lines);
    g_free(text);
    g_free(path);
    printf("\n    tree: busbw %.2f GB/s ", job_value(&r, "busbw_GBps"));
    result_free(&r);
}

/* collectives_breakdown.csv of a run: the row's parts (inside / between servers, each unloaded
 * and waiting, and compute) must add up to its time. */
static void breakdown_row(const struct result *r, double *time, double *parts, double *inter, double *wait,
                          double *paused)
{
    char *path = g_build_filename(r->dir, "out", "collectives_breakdown.csv", NULL), *text = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(path, &text, NULL, NULL));
    char **lines = g_strsplit(text, "\n", -1);
    CU_ASSERT_FATAL(lines[1] && *lines[1]);
    /* job,iteration,time_us,n,n_inter,intra,intra_wait,inter,inter_wait,compute,of_which_paused */
    char **c = g_strsplit(lines[1], ",", -1);
    CU_ASSERT_FATAL(g_strv_length(c) == 11);
    *time = g_ascii_strtod(c[2], NULL);
    *parts = 0;
    for (int k = 5; k < 10; k++)
        *parts += g_ascii_strtod(c[k], NULL);
    *inter = g_ascii_strtod(c[7], NULL) + g_ascii_strtod(c[8], NULL);
    *wait = g_ascii_strtod(c[6], NULL) + g_ascii_strtod(c[8], NULL);
    *paused = g_ascii_strtod(c[10], NULL);
    g_strfreev(c);
    g_strfreev(lines);
    g_free(text);
    g_free(path);
}

/* On one server the critical path has no inter-server time; on 2 servers it has, and with
 * rail 3 at half speed the inter-server share of the path grows. */
static void test_breakdown(void)
{
    double t, parts, inter, t2, parts2, inter2, t3, parts3, inter3, wait, paused;
    struct result r = run("servers/one-server.ini", NULL);
    breakdown_row(&r, &t, &parts, &inter, &wait, &paused);
    CU_ASSERT_DOUBLE_EQUAL(parts, t, 0.01);
    CU_ASSERT_EQUAL(inter, 0);
    result_free(&r);
    r = run("servers/rail.ini", NULL);
    breakdown_row(&r, &t2, &parts2, &inter2, &wait, &paused);
    CU_ASSERT_DOUBLE_EQUAL(parts2, t2, 0.01);
    CU_ASSERT(inter2 > 0);
    result_free(&r);
    const char *sets[] = { "--set", "fault.slow.kind=link-speed", "--set", "fault.slow.node=rail3",
                           "--set", "fault.slow.rate=200Gbps", NULL };
    r = run("servers/rail.ini", sets);
    breakdown_row(&r, &t3, &parts3, &inter3, &wait, &paused);
    CU_ASSERT_DOUBLE_EQUAL(parts3, t3, 0.01);
    CU_ASSERT(inter3 / t3 > inter2 / t2);
    printf("\n    inter-server share of the critical path: %.0f %% healthy, %.0f %% with a slow rail ",
           100 * inter2 / t2, 100 * inter3 / t3);
    result_free(&r);
    /* AllToAll through one spine without congestion control: PFC pauses on the path are part
     * of the waiting, never more than it */
    const char *pfc[] = { "--set", "topology.spines=1", "--set", "workload.ar.kind=alltoall", "--set",
                          "workload.ar.size=16MiB", "--set", "nic.cc=none", NULL };
    r = run("servers/leafspine.ini", pfc);
    breakdown_row(&r, &t, &parts, &inter, &wait, &paused);
    CU_ASSERT_DOUBLE_EQUAL(parts, t, 0.01);
    CU_ASSERT(paused > 0);
    CU_ASSERT(paused <= wait + 0.001);
    printf("paused %.0f of %.0f us waiting ", paused, wait);
    result_free(&r);
}

/* NIC 3 of server 1 down: GPU 3 of server 1 sends and receives by NIC 2, the other NIC of its
 * PCIe switch, so channels 2 and 3 share server 1's NIC 2 (and rail 2): each gets 200 Gb/s and
 * the ring runs at that pace, busbw = 8 x 200 Gb/s of payload; rail 2 is hot. */
static void test_nic_down(void)
{
    const char *sets[] = { "--set", "fault.nd.kind=nic-down", "--set", "fault.nd.node=srv1.nic3", NULL };
    struct result r = run("servers/rail.ini", sets);
    const double bound = 8 * eff_Bps(200e9) / 1e9;
    double busbw = job_value(&r, "busbw_GBps");
    printf("\n    NIC down: busbw %.2f GB/s (hand bound %.2f GB/s, %+.2f %%) ", busbw, bound, 100 * (busbw / bound - 1));
    CU_ASSERT(fabs(busbw - bound) <= 0.05 * bound);
    CU_ASSERT(has_warning(&r, "hot rail: rail2 "));
    result_free(&r);
}

/* Bad [server], [cluster], locality-fault and train input: exit status 2 and a message that
 * names the section, the key, the value and what was expected. */
static void test_bad_input(void)
{
    const struct {
        const char *set1, *set2, *expect;
    } cases[] = {
        { "server.preset=dgx-z", NULL, "[server] preset = 'dgx-z': unknown preset: expected dgx-h100" },
        { "server.pcie_width=12", NULL, "[server] pcie_width = '12': expected a link width" },
        { "server.gpu_pcie=0,1", NULL, "[server] gpu_pcie = '0,1': expected 8 comma-separated" },
        { "server.colour=blue", NULL, "[server] colour: unknown key" },
        { "cluster.k=7", "topology.kind=fat-tree", "[cluster] k = '7': expected an even number" },
        { "fault.f.kind=nic-numa", "fault.f.node=srv9.nic0", "[fault f] node = 'srv9.nic0'" },
        { "fault.f.kind=pcie-width", "fault.f.node=srv0.gpu1", "[fault f] width: missing" },
        { "workload.ar.ranks=0:0-8", NULL, "[workload ar] ranks = '0:0-8': expected GPUs as SERVER:GPU" },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *path = test_data_path("servers/rail.ini"), *dir = test_tmpdir(), *out = g_build_filename(dir, "o", NULL);
        const char *args[] = { "run", path, "-o", out, "-q", "--set", cases[i].set1, cases[i].set2 ? "--set" : NULL,
                               cases[i].set2, NULL };
        char *err = NULL;
        int rc = test_rocesim(args, NULL, NULL, &err);
        if (rc != 2 || !strstr(err, cases[i].expect))
            fprintf(stderr, "\n  case %zu: exit %d: %s", i, rc, err);
        CU_ASSERT_EQUAL(rc, 2);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, cases[i].expect));
        CU_ASSERT(!g_file_test(out, G_FILE_TEST_EXISTS)); /* nothing half-written */
        g_free(err);
        test_rmtree(dir);
        g_free(dir);
        g_free(out);
        g_free(path);
    }
}

static CU_TestInfo tests[] = {
    { "bad server, cluster, fault and rank input: exit 2 naming the key", test_bad_input },
    { "NIC down: its GPU uses the neighbour NIC, that rail is hot", test_nic_down },
    { "collectives_breakdown.csv: the critical path adds up, inter-server share", test_breakdown },
    { "NCCL tree over servers: chains on NVLink, inter-server edges on their rail", test_tree_over_servers },
    { "AllToAll across servers: PXN over NVLink keeps it on the rails", test_alltoall_pxn },
    { "fat-tree k = 8: pods, aggregation and cores, traffic through the cores", test_fat_tree },
    { "trace.json: trace-event fields, one event per transfers.csv row", test_trace },
    { "GPUDirect off on one server: the staged-path bound", test_no_gpudirect },
    { "rail at half speed: ring at that rail's pace, hot-rail warning", test_rail_half_speed },
    { "cross-NUMA NIC: the inter-socket bound", test_cross_numa_nic },
    { "NIC PCIe link at x8: the PCIe bound", test_pcie_x8 },
    { "one server: ring on NVLink within 3% of alpha-beta, no NIC traffic", test_one_server_nvlink },
    { "2 servers x 8 rails: busbw within 5% of the NIC bound, no spine traffic", test_two_servers_rails },
    { "4 servers x 8 rails: busbw within 5% of the NIC bound, no spine traffic", test_four_servers_rails },
    { "plain leaf-spine: ECMP collisions on the spines", test_leaf_spine_collisions },
    CU_TEST_INFO_NULL,
};
TEST_MAIN("servers", tests)
