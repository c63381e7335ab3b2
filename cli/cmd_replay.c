/* `rocesim replay`: run a schedule on lab hosts (one MPI rank per schedule host) and write the
 * lab's results folder in the simulator's format. Exit 0 complete, 1 incomplete or failed,
 * 2 bad input, 3 no RDMA device. */
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "models/cc_registry.h"
#include "models/ideal.h"
#include "models/packet.h"
#include "models/schedule_io.h"
#include "models/schedule_meta.h"
#include "models/topology.h"
#include "replay/hostmap.h"
#include "replay/replay.h"
#include "replay/subset.h"
#include "replay/udp.h"
#include "replay/udp_cc.h"
#include "replay/verbs.h"
#include "cli/commands.h"
#include "tune/mpi_split.h"
#include "cli/run.h"
#include "sim/units.h"

static volatile int stop_flag;
static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

struct ideal_ctx {
    const struct scenario *sc;
    const struct topology *t;
    uint64_t rate;
    uint32_t mtu;
};

/* With --scenario, the simulator's own ideal; otherwise one link at the host rate (the message
 * with its RoCEv2 framing, no propagation). */
static simtime_t ideal_ps(const void *ctx, uint32_t src, uint32_t dst, uint64_t bytes)
{
    const struct ideal_ctx *c = ctx;
    if (c->sc)
        return ideal_transfer_ps(c->sc, c->t, src, dst, bytes);
    const simtime_t no_delay = 0;
    return c->rate ? ideal_path_ps(c->mtu, &c->rate, &no_delay, 1, bytes) : 0;
}

static gboolean parse_time_opt(const char *opt, const char *v, int64_t *ns)
{
    simtime_t ps;
    char *why = NULL;
    if (!units_parse_time(v, &ps, &why)) {
        fprintf(stderr, "rocesim replay: %s %s: %s\n", opt, v, why);
        g_free(why);
        return FALSE;
    }
    *ns = (int64_t)(ps / 1000);
    return TRUE;
}

/* The options of `rocesim replay` (see the option table in cmd_replay). */
struct replay_opts {
    char *hosts, *transport, *device, *gid, *scenario, *timeout, *out, *rate, *rto, *ctrl_addr, *sysfs_net,
        *debugfs, *sysfs_ib, *sample, *capture, *cc_opt, **sets;
    int udp_port, ctrl_port, mtu, window, test_ce_every;
    double drop;
    gboolean subset;
};

static void replay_opts_clear(struct replay_opts *o)
{
    g_free(o->hosts);
    g_free(o->transport);
    g_free(o->device);
    g_free(o->gid);
    g_free(o->scenario);
    g_free(o->timeout);
    g_free(o->out);
    g_free(o->rate);
    g_free(o->rto);
    g_free(o->ctrl_addr);
    g_free(o->sysfs_net);
    g_free(o->debugfs);
    g_free(o->sysfs_ib);
    g_free(o->capture);
    g_free(o->sample);
    g_free(o->cc_opt);
    g_strfreev(o->sets);
}

/* The options' values (TR: the transport): 0, or 2 after printing what is wrong. */
static int check_options(const struct replay_opts *o, const char *tr, int64_t *timeout_ns, int64_t *rto_ns,
                         int64_t *sample_ns)
{
    if (strcmp(tr, "udp") && strcmp(tr, "verbs")) {
        fprintf(stderr, "rocesim replay: --transport %s: expected verbs or udp\n", tr);
        return 2;
    }
    if (o->gid && strcmp(o->gid, "auto") && !g_ascii_string_to_unsigned(o->gid, 10, 0, 255, NULL, NULL)) {
        fprintf(stderr, "rocesim replay: --gid-index %s: expected auto or a number 0..255\n", o->gid);
        return 2;
    }
    if ((o->timeout && !parse_time_opt("--timeout", o->timeout, timeout_ns)) ||
        (o->sample && !parse_time_opt("--sample-interval", o->sample, sample_ns)) ||
        (o->rto && !parse_time_opt("--rto", o->rto, rto_ns)))
        return 2;
    if (*timeout_ns <= 0 || *rto_ns <= 0) {
        fprintf(stderr, "rocesim replay: --timeout and --rto must be positive\n");
        return 2;
    }
    if (o->test_ce_every < 0) {
        fprintf(stderr, "rocesim replay: --test-ce-every %d: expected 0 (off) or a count N > 0\n", o->test_ce_every);
        return 2;
    }
    if (strcmp(tr, "udp") && (o->cc_opt || o->test_ce_every)) {
        fprintf(stderr, "rocesim replay: --%s is for the udp transport: with verbs the NIC runs its own "
                        "congestion control (its knobs are recorded in summary.json)\n",
                o->cc_opt ? "cc" : "test-ce-every");
        return 2;
    }
    if (o->cc_opt) {
        /* the registry's names; which of them the udp transport runs is decided below */
        char **names = g_strsplit(CC_CHOICES, "|", -1);
        gboolean known = g_strv_contains((const char *const *)names, o->cc_opt);
        g_strfreev(names);
        if (!known) {
            fprintf(stderr, "rocesim replay: --cc %s: expected one of %s (the udp transport runs "
                            "none or dcqcn)\n", o->cc_opt, CC_CHOICES);
            return 2;
        }
    }
    if (!o->scenario && (o->sets || (o->cc_opt && strcmp(o->cc_opt, "none")))) {
        fprintf(stderr, "rocesim replay: %s needs --scenario: the congestion control's knobs come "
                        "from the scenario, read as a simulation reads them\n",
                o->sets ? "--set" : "--cc");
        return 2;
    }
    if (o->udp_port <= 0 || o->udp_port > 65535 || o->ctrl_port <= 0 || o->ctrl_port > 65535 || o->window <= 0 ||
        o->mtu < 0 || o->mtu > 9000 || !(o->drop >= 0 && o->drop <= 0.5)) {
        fprintf(stderr, "rocesim replay: --udp-port/--ctrl-port 1..65535, --window > 0, --mtu 1..9000, --drop 0..0.5\n");
        return 2;
    }
    return 0;
}

/* --scenario with --set and --cc applied, and its topology, which must be the one the schedule
 * was made for; FALSE after printing what is wrong. */
static gboolean load_scenario(const struct replay_opts *o, const struct schedule *s, struct scenario **sc,
                              struct topology **topo)
{
    GError *err = NULL;
    /* --cc is the scenario's [nic] cc, so the loader validates it and picks the knobs */
    GPtrArray *all = g_ptr_array_new_with_free_func(g_free);
    for (char **p = o->sets; p && *p; p++)
        g_ptr_array_add(all, g_strdup(*p));
    if (o->cc_opt)
        g_ptr_array_add(all, g_strdup_printf("nic.cc=%s", o->cc_opt));
    g_ptr_array_add(all, NULL);
    *sc = scenario_load(o->scenario, (const char *const *)all->pdata, &err);
    g_ptr_array_free(all, TRUE);
    if (!*sc || !(*topo = topology_build(*sc, &err))) {
        fprintf(stderr, "rocesim replay: %s\n", err->message);
        g_error_free(err);
        return FALSE;
    }
    char *dg = topology_digest(*topo);
    gboolean same = !s->meta.present || !s->meta.topology || !*s->meta.topology ||
                    !strcmp(dg, s->meta.topology);
    if (!same)
        fprintf(stderr, "rocesim replay: --scenario %s: its topology (%s) is not the one the "
                        "schedule was made for (%s)\n", o->scenario, dg, s->meta.topology);
    g_free(dg);
    return same;
}

/* The lab map (--hosts, with --subset the mapped hosts' part of the schedule), or every host
 * on this machine; FALSE after printing what is wrong. */
static gboolean load_map(const struct replay_opts *o, struct schedule *s, uint32_t nhosts, int ranks,
                         struct hostmap **map, struct schedule_subset *sub)
{
    GError *err = NULL;
    if (o->hosts) {
        if (!(*map = o->subset ? hostmap_read_subset(o->hosts, &err) : hostmap_read(o->hosts, &err))) {
            fprintf(stderr, "rocesim replay: %s\n", err->message);
            g_error_free(err);
            return FALSE;
        }
        if ((*map)->n > nhosts || (!o->subset && (*map)->n != nhosts)) {
            fprintf(stderr, "rocesim replay: %s maps %s%u hosts, the schedule has %u%s\n", o->hosts,
                    o->subset ? "hosts up to " : "", o->subset ? (*map)->n - 1 : (*map)->n, nhosts,
                    o->subset ? "" : " (give --subset to replay only the mapped hosts' part)");
            return FALSE;
        }
        if (o->subset) {
            guint8 *mapped = g_new0(guint8, nhosts ? nhosts : 1);
            memcpy(mapped, (*map)->mapped, (*map)->n);
            gboolean sok = schedule_subset(s, nhosts, mapped, sub, &err);
            g_free(mapped);
            if (!sok) {
                fprintf(stderr, "rocesim replay: %s: %s\n", o->hosts, err->message);
                g_error_free(err);
                return FALSE;
            }
            if ((uint32_t)ranks != sub->ranks) {
                fprintf(stderr, "rocesim replay: %s maps %u of the schedule's %u hosts but %d rank(s) "
                                "were started: start one rank per mapped host (mpirun -np %u)\n",
                        o->hosts, sub->ranks, nhosts, ranks, sub->ranks);
                return FALSE;
            }
        }
    } else {
        *map = hostmap_loopback(nhosts);
    }
    return TRUE;
}

/* The udp transport's congestion control (the scenario's [nic] cc, or --cc) and where it came
 * from, for summary.json; FALSE after printing what is wrong. */
static gboolean choose_cc(const struct replay_opts *o, const char *tr, const struct scenario *sc, uint64_t rate_bps,
                          int rank, const struct cc_ops **cc, uint64_t *cc_line, char **cc_source)
{
    *cc = NULL;
    *cc_line = 0;
    if (!strcmp(tr, "udp") && sc) {
        const char *why = NULL;
        *cc = udp_cc_for(sc, &why);
        const char *asked = cc_ops_for(sc->cc)->name;
        if (!*cc && o->cc_opt) {
            fprintf(stderr, "rocesim replay: --cc %s: %s\n", o->cc_opt, why);
            return FALSE;
        }
        if (!*cc) {
            if (rank == 0)
                fprintf(stderr, "rocesim replay: warning: %s: [nic] cc = %s: %s; replaying without "
                                "congestion control\n", o->scenario, asked, why);
            *cc = &cc_none_ops;
            *cc_source = g_strdup_printf("none: %s's [nic] cc = %s cannot run on the udp transport",
                                         o->scenario, asked);
        } else {
            *cc_source = g_strdup_printf("%s, knobs from %s%s ([nic] cc_preset = %s)",
                                         o->cc_opt ? "--cc" : "the scenario's [nic] cc", o->scenario,
                                         o->sets ? " with --set" : "", sc->cc_preset);
        }
        /* unpaced (--rate 0): the algorithm still needs a line rate, the scenario's */
        if (!rate_bps && *cc != &cc_none_ops)
            *cc_line = sc->host_rate;
    } else if (!strcmp(tr, "udp")) {
        *cc_source = g_strdup(o->cc_opt ? "--cc none" : "none: no --scenario");
    }
    return TRUE;
}

int cmd_replay(int argc, char **argv)
{
    struct replay_opts o = { .udp_port = 4791, .ctrl_port = 18515, .window = 64 };
    char *cc_source = NULL;
    struct schedule_subset sub = { 0 };
    GOptionEntry entries[] = {
        { "hosts", 0, 0, G_OPTION_ARG_FILENAME, &o.hosts, "Lab map: which machine plays each schedule host (default: all on this machine, 127.0.0.x)", "FILE" },
        { "transport", 0, 0, G_OPTION_ARG_STRING, &o.transport, "verbs (RoCE NICs) or udp (default udp)", "verbs|udp" },
        { "device", 0, 0, G_OPTION_ARG_STRING, &o.device, "RDMA device for verbs (default: the map's, else the first)", "NAME" },
        { "gid-index", 0, 0, G_OPTION_ARG_STRING, &o.gid, "RoCE v2 GID index (default auto)", "auto|N" },
        { "scenario", 0, 0, G_OPTION_ARG_FILENAME, &o.scenario, "The scenario the schedule came from (ideal FCTs; its topology must match)", "FILE" },
        { "timeout", 0, 0, G_OPTION_ARG_STRING, &o.timeout, "Stop when a transfer is not completed within this, or nothing happens for this long (default: 30s, or longer at a slow --rate: twice the time the busiest host's link takes to carry all it sends and receives)", "TIME" },
        { "output", 'o', 0, G_OPTION_ARG_FILENAME, &o.out, "Results folder (written by rank 0; required)", "DIR" },
        { "rate", 0, 0, G_OPTION_ARG_STRING, &o.rate, "udp: pacing rate per host (default: the schedule's host rate)", "RATE" },
        { "mtu", 0, 0, G_OPTION_ARG_INT, &o.mtu, "udp: payload bytes per datagram (default: the schedule's mtu)", "BYTES" },
        { "window", 0, 0, G_OPTION_ARG_INT, &o.window, "udp: packets in flight per QP (default 64)", "N" },
        { "rto", 0, 0, G_OPTION_ARG_STRING, &o.rto, "udp: retransmission timeout (default: 20ms, or longer at a slow --rate: twice the time the busiest host's link takes to carry a full --window on each of its QPs)", "TIME" },
        { "cc", 0, 0, G_OPTION_ARG_STRING, &o.cc_opt, "udp: congestion control per QP, driven by the receivers' CNPs: none or dcqcn (default: the --scenario's [nic] cc, none without one; dcqcn needs --scenario for its [dcqcn] knobs)", "none|dcqcn" },
        { "set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o.sets, "Override a key of the --scenario, as `rocesim run --set` (e.g. nic.cc_preset=dcqcn_paper, dcqcn.min_time_between_cnps=50us)", "SECTION.KEY=VALUE" },
        { "test-ce-every", 0, 0, G_OPTION_ARG_INT, &o.test_ce_every, "udp, FOR TESTS ONLY: the sender CE-marks every Nth data datagram of each QP itself, standing in for an ECN-marking switch (0: off)", "N" },
        { "drop", 0, 0, G_OPTION_ARG_DOUBLE, &o.drop, "udp fault injection: drop this fraction of data packets (0..0.5)", "P" },
        { "udp-port", 0, 0, G_OPTION_ARG_INT, &o.udp_port, "udp: port every host listens on (default 4791)", "PORT" },
        { "ctrl-port", 0, 0, G_OPTION_ARG_INT, &o.ctrl_port, "TCP port of rank 0's control plane (default 18515)", "PORT" },
        { "sysfs-net", 0, 0, G_OPTION_ARG_FILENAME, &o.sysfs_net, "Where the netdevs' sysfs is (default /sys/class/net; for tests)", "DIR" },
        { "capture", 0, 0, G_OPTION_ARG_STRING, &o.capture, "Rank 0 captures RoCEv2 (UDP 4791 or --udp-port) and PFC frames on this interface (a mirror port) into capture.pcap of the folder", "IFACE" },
        { "subset", 0, 0, G_OPTION_ARG_NONE, &o.subset, "The map may leave schedule hosts out: replay only the mapped hosts' part (one rank per mapped host)", NULL },
        { "sysfs-ib", 0, 0, G_OPTION_ARG_FILENAME, &o.sysfs_ib, "Where the RDMA devices' sysfs is (default /sys/class/infiniband; for tests)", "DIR" },
        { "sample-interval", 0, 0, G_OPTION_ARG_STRING, &o.sample, "Sample the NIC's hw_counters and ethtool statistics into counters.csv this often (default 100ms; 0s: at the start and end only)", "TIME" },
        { "debugfs", 0, 0, G_OPTION_ARG_FILENAME, &o.debugfs, "Where debugfs is (default /sys/kernel/debug; for tests)", "DIR" },
        { "ctrl-addr", 0, 0, G_OPTION_ARG_STRING, &o.ctrl_addr, "rank 0's control address (default: host 0's address in the map)", "IPV4" },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    GOptionContext *ctx = g_option_context_new("SCHEDULE -o DIR");
    g_option_context_set_summary(ctx, "Run a schedule on lab hosts, one MPI rank per schedule host:\n"
                                      "  mpirun -np N rocesim replay job.sched [--hosts lab.map] -o lab/");
    g_option_context_add_main_entries(ctx, entries, NULL);
    GError *err = NULL;
    int rc = 2;
    struct schedule *s = NULL;
    struct hostmap *map = NULL;
    struct scenario *sc = NULL;
    struct topology *topo = NULL;
    struct mpi_split ms = { 0 };
    if (!g_option_context_parse(ctx, &argc, &argv, &err) || argc != 2 || !o.out) {
        fprintf(stderr, "rocesim replay: %s\n", err ? err->message : "expected SCHEDULE and -o DIR");
        goto done;
    }
    const char *tr = o.transport ? o.transport : "udp";
    int64_t timeout_ns = REPLAY_TIMEOUT_FLOOR_NS, rto_ns = UDP_RTO_FLOOR_NS, sample_ns = 100000000;
    if ((rc = check_options(&o, tr, &timeout_ns, &rto_ns, &sample_ns)) != 0)
        goto done;
    rc = 2;
    if (!mpi_split_detect(&ms, &err)) {
        fprintf(stderr, "rocesim replay: %s\n", err->message);
        goto done;
    }
    if (!(s = schedule_read(argv[1], 0, &err))) {
        fprintf(stderr, "rocesim replay: %s\n", err->message);
        goto done;
    }
    uint32_t nhosts = s->meta.present ? s->meta.hosts : 0;
    for (uint32_t i = 0; i < schedule_count(s); i++)
        nhosts = MAX(nhosts, MAX(schedule_get(s, i)->src, schedule_get(s, i)->dst) + 1);
    if (o.subset && !o.hosts) {
        fprintf(stderr, "rocesim replay: --subset needs --hosts (the map says which hosts are there)\n");
        goto done;
    }
    if (!o.subset && (uint32_t)ms.size != nhosts) {
        fprintf(stderr, "rocesim replay: %s has %u hosts but %d rank(s) were started: start one "
                        "rank per schedule host (mpirun -np %u)%s\n", argv[1], nhosts, ms.size, nhosts,
                o.hosts ? ", or give --subset to replay only the hosts the map names" : "");
        goto done;
    }
    if (o.scenario && !load_scenario(&o, s, &sc, &topo))
        goto done;
    if (!load_map(&o, s, nhosts, ms.size, &map, &sub))
        goto done;
    uint64_t rate_bps = s->meta.present ? s->meta.host_rate_bps : 0;
    if (o.rate) {
        char *why = NULL;
        if (!units_parse_rate(o.rate, &rate_bps, &why)) {
            fprintf(stderr, "rocesim replay: --rate %s: %s\n", o.rate, why);
            g_free(why);
            goto done;
        }
    }
    uint32_t m = o.mtu ? (uint32_t)o.mtu : s->meta.present ? s->meta.mtu : 1024;
    if (m > 9000) {
        fprintf(stderr, "rocesim replay: the schedule's mtu %u is larger than a datagram of the "
                        "udp transport may carry here (9000); give --mtu\n", m);
        goto done;
    }
    if (!o.rto)
        rto_ns = udp_default_rto_ns(o.subset ? sub.run : s, m, (uint32_t)o.window, rate_bps);
    if (!o.timeout)
        timeout_ns = replay_default_timeout_ns(o.subset ? sub.run : s, rate_bps);
    const struct cc_ops *cc = NULL;
    uint64_t cc_line = 0;
    if (!choose_cc(&o, tr, sc, rate_bps, ms.rank, &cc, &cc_line, &cc_source))
        goto done;
    /* the schedule host this rank plays */
    uint32_t me = o.subset ? sub.rank_host[ms.rank] : (uint32_t)ms.rank;
    const char *map_dev = strcmp(map->h[me].device, "-") ? map->h[me].device : NULL;
    if (!strcmp(tr, "verbs")) {
        const char *dev = o.device ? o.device : map_dev;
        struct ibv_context *vc = verbs_open(verbs_real(), dev, &err);
        if (!vc) {
            fprintf(stderr, "rocesim replay: rank %d: %s\n", ms.rank, err->message);
            rc = err->code == REPLAY_ERROR_NO_DEVICE ? 3 : 1;
            goto done;
        }
        /* a device is there: the run opens it again through the same table */
        ibv_close_device(vc);
    }
    struct in_addr *addr = g_new(struct in_addr, ms.size);
    for (int k = 0; k < ms.size; k++)
        addr[k] = map->h[o.subset ? sub.rank_host[k] : (uint32_t)k].addr;
    char a0[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &addr[0], a0, sizeof a0);
    struct ideal_ctx ic = { sc, topo, rate_bps, m };
    struct replay_config c = {
        .sched = o.subset ? sub.run : s, .out_sched = o.subset ? sub.out : NULL,
        .rank_host = o.subset ? sub.rank_host : NULL, .schedule_path = argv[1], .rank = ms.rank, .size = ms.size, .addr = addr,
        .ctrl_addr = o.ctrl_addr ? o.ctrl_addr : a0, .ctrl_port = (uint16_t)o.ctrl_port,
        .udp_port = (uint16_t)o.udp_port, .mtu = m, .rate_bps = rate_bps, .window = (uint32_t)o.window, .drop = o.drop,
        .cc = cc, .scenario = sc, .cc_line_bps = cc_line, .cc_source = cc_source,
        .test_ce_every = (uint32_t)o.test_ce_every,
        .rto_ns = rto_ns, .rto_given = o.rto != NULL, .timeout_ns = timeout_ns, .timeout_given = o.timeout != NULL,
        .start_delay_ns = 100000000,
        .ideal = ideal_ps, .ideal_ctx = &ic, .out_dir = o.out, .transport = tr, .stop = &stop_flag,
        .device = o.device ? o.device : map_dev,
        .gid_index = o.gid && strcmp(o.gid, "auto") ? atoi(o.gid) : -1,
        .capture_iface = o.capture, .ib_root = o.sysfs_ib, .sample_interval_ns = sample_ns,
        .netdev = map->h[me].netdev, .net_root = o.sysfs_net, .debugfs_root = o.debugfs,
    };
    struct sigaction sa = { .sa_handler = on_signal };
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    enum replay_status st;
    if (!replay_run(&c, &st, &err)) {
        fprintf(stderr, "rocesim replay: rank %d: %s\n", ms.rank, err->message);
        rc = err->domain == REPLAY_ERROR && err->code == REPLAY_ERROR_INPUT ? 2 : 1;
    } else {
        rc = st == REPLAY_COMPLETE ? 0 : 1;
    }
    g_free(addr);
done:
    g_clear_error(&err);
    g_option_context_free(ctx);
    mpi_split_clear(&ms);
    hostmap_free(map);
    schedule_subset_clear(&sub);
    schedule_free(s);
    topology_free(topo);
    scenario_free(sc);
    replay_opts_clear(&o);
    g_free(cc_source);
    return rc;
}
