/* The fabric's prefetch hooks change no result. The engine calls a hook before each event
 * with the events that follow it; the fabric's deep hook (installed on large fabrics only)
 * also keeps in the packet the egress port a switch arrival will take, and switch_receive
 * takes that port instead of routing the packet again. So each scenario here runs three
 * times, with no hook, the light one and the deep one, and every transfer's end, every
 * port's counters and the event count must be the same. The scenarios mix what the kept
 * egress must not get wrong: a permutation and an incast through two tiers of switches
 * with ECMP, PFC and DCQCN; flowlet load balancing (a choice the hook must not keep); a
 * link that goes down (the choice skips it: the kept egress must not be taken). A last test
 * drives the hook and the arrival directly across a change of routes with every link up,
 * which a whole run meets too rarely to be sure of (a link flapping 40 times did not). */
#include "tests/test_fabric.h"

struct outcome {
    uint64_t events, hops;
    uint32_t nxfers, nports;
    simtime_t *end;           /* per transfer */
    uint64_t *port;           /* per port: frames and bytes sent, ECN marks, drops */
};

#define PORT_FIGURES 4

static struct outcome run_with(const char *rel, const char *const *sets, enum net_prefetch_kind k)
{
    struct test_fabric f = test_fabric_build(test_scenario_load(rel, sets));
    struct net *n = f.n;
    net_install_prefetch_kind(n, net_eng(n), k);
    net_run(n);
    struct outcome o = { .events = n->eng.events, .hops = n->st.packet_hops, .nxfers = n->nxfers,
                         .nports = n->topo->nports };
    o.end = g_new(simtime_t, o.nxfers);
    for (uint32_t i = 0; i < o.nxfers; i++)
        o.end[i] = n->xfers[i].state == XF_DONE ? n->xfers[i].end : SIMTIME_NEVER;
    o.port = g_new0(uint64_t, (gsize)o.nports * PORT_FIGURES);
    for (uint32_t p = 0; p < o.nports; p++) {
        const struct port_rt *pr = &n->ports[p];
        uint64_t *v = &o.port[p * PORT_FIGURES];
        v[0] = pr->tx_packets;
        v[1] = pr->tx_bytes;
        v[2] = pr->ecn_marked;
        for (int q = 0; q < NPRIO; q++)
            v[3] += pr->drops[q];
    }
    test_fabric_free(&f);
    return o;
}

static void outcome_free(struct outcome *o)
{
    g_free(o->end);
    g_free(o->port);
}

/* Runs rel (with sets) under the three hooks and compares; returns how many transfers
 * completed, so the caller can check the run did something. */
static uint32_t same_under_every_hook(const char *rel, const char *const *sets)
{
    struct outcome none = run_with(rel, sets, NET_PREFETCH_NONE);
    uint32_t done = 0;
    for (uint32_t i = 0; i < none.nxfers; i++)
        done += none.end[i] != SIMTIME_NEVER;
    CU_ASSERT(none.hops > 0);
    for (enum net_prefetch_kind k = NET_PREFETCH_LIGHT; k <= NET_PREFETCH_DEEP; k++) {
        struct outcome o = run_with(rel, sets, k);
        CU_ASSERT_EQUAL(o.events, none.events);
        CU_ASSERT_EQUAL(o.hops, none.hops);
        CU_ASSERT_EQUAL_FATAL(o.nxfers, none.nxfers);
        CU_ASSERT_EQUAL_FATAL(o.nports, none.nports);
        CU_ASSERT_EQUAL(memcmp(o.end, none.end, o.nxfers * sizeof *o.end), 0);
        CU_ASSERT_EQUAL(memcmp(o.port, none.port, (size_t)o.nports * PORT_FIGURES * sizeof *o.port), 0);
        outcome_free(&o);
    }
    outcome_free(&none);
    return done;
}

static void test_ecmp_pfc_dcqcn(void)
{
    CU_ASSERT_EQUAL(same_under_every_hook("determinism.ini", NULL), 22); /* 16 + 6 transfers */
}

static void test_flowlets(void)
{
    static const char *const sets[] = { "switch.load_balance=flowlet", NULL };
    CU_ASSERT_EQUAL(same_under_every_hook("determinism.ini", sets), 22);
}

static void test_link_down(void)
{
    static const char *const sets[] = { "output.pcap=", NULL };
    CU_ASSERT(same_under_every_hook("routing/link-down.ini", sets) > 0);
}

/* leaf0's port toward node `peer` (routing/link-down.ini: hosts 0-3 and both spines) */
static struct port_rt *leaf0_port_to(struct net *n, const char *peer)
{
    const struct topo_node *leaf0 = &n->topo->nodes[topology_find_node(n->topo, "leaf0")];
    int64_t want = topology_find_node(n->topo, peer);
    for (uint32_t p = leaf0->first_port; p < leaf0->first_port + leaf0->nports; p++)
        if (n->ports[p].peer_node == want)
            return &n->ports[p];
    CU_FAIL_FATAL("leaf0 has no port to that node");
    return NULL;
}

/* A data packet from host0 to host4 (on leaf1) arriving at leaf0 by `in`, whose flow ECMP
 * sends over spine1 while the routes are the topology's (its UDP source port searched for) */
static uint32_t packet_via_spine1(struct net *n, struct port_rt *in, const struct port_rt *up1)
{
    uint32_t i = pkt_alloc(n);
    for (uint16_t sport = 49152;; sport++) {
        n->pool[i] = (struct packet){ .kind = PKT_DATA, .src = 0, .dst = 4, .sport = sport, .payload = 1024,
                                      .frame = 1024 + ROCE_HDR_BYTES, .prio = 3, .ecn = ECN_ECT0,
                                      .in_port = in->local, .egress_hint = NONE32 };
        switch_prefetch_arrival(n, in, &n->pool[i]);
        if (n->pool[i].egress_hint == (uint32_t)(up1 - n->ports))
            return i;
        CU_ASSERT_FATAL(sport < 49152 + 64); /* two uplinks: one flow in two takes spine1 */
    }
}

/* The routes change between the deep hook and the arrival, with every link up: the link
 * spine1 <-> leaf1 came back and the routes that avoid it still stand, or the other way
 * round. The egress kept under one set of routes must not be taken under the other. */
static void test_kept_egress_across_a_route_change(void)
{
    static const char *const sets[] = { "output.pcap=", NULL };
    struct test_fabric f = test_fabric_build(test_scenario_load("routing/link-down.ini", sets));
    struct net *n = f.n;
    struct port_rt *in = leaf0_port_to(n, "host0"), *up0 = leaf0_port_to(n, "spine0"),
                   *up1 = leaf0_port_to(n, "spine1");
    bool *down = g_new0(bool, n->topo->nports);
    const struct topo_node *spine1 = &n->topo->nodes[topology_find_node(n->topo, "spine1")];
    down[spine1->first_port + 1] = down[n->ports[spine1->first_port + 1].peer] = true;
    struct topo_routes *around = topology_routes_without(n->topo, down);

    /* kept under the topology's routes, taken after the routes went around spine1: the
     * packet must leave by spine0, the one way left to leaf1 */
    uint32_t i = packet_via_spine1(n, in, up1);
    n->converged = around;
    switch_receive(n, in, i);
    CU_ASSERT_EQUAL(up0->tx_packets, 1);
    CU_ASSERT_EQUAL(up1->tx_packets, 0);

    /* while the routes go around spine1 (every link up), the hook keeps nothing, so an
     * arrival after they converge back computes its port again */
    uint32_t j = pkt_alloc(n);
    n->pool[j] = (struct packet){ .kind = PKT_DATA, .src = 0, .dst = 4, .sport = 49152, .payload = 1024,
                                  .frame = 1024 + ROCE_HDR_BYTES, .prio = 3, .egress_hint = NONE32 };
    switch_prefetch_arrival(n, in, &n->pool[j]);
    CU_ASSERT_EQUAL(n->pool[j].egress_hint, NONE32);
    pkt_free(n, j);

    n->converged = NULL;
    topology_routes_free(around);
    g_free(down);
    test_fabric_free(&f);
}

static CU_TestInfo tests[] = {
    { "ECMP, PFC and DCQCN: the same results with no hook, the light and the deep one", test_ecmp_pfc_dcqcn },
    { "flowlets: the same results under every hook", test_flowlets },
    { "a link down: the same results under every hook", test_link_down },
    { "a route change between the hook and the arrival: the kept egress is not taken", test_kept_egress_across_a_route_change },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("prefetch hooks", tests)
