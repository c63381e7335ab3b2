/* Routing after a link failure: the switches at its ends avoid the link at once, the others
 * after [switch] route_convergence, when every switch routes over the links that are up. */
#include <string.h>
#include "models/topology.h"
#include "tests/testutil.h"

static struct scenario *load(const char *rel, const char *const *sets)
{
    return test_scenario_load(rel, sets);
}

/* 2 leaves x 4 hosts, 2 spines (tests/scenarios/routing/link-down.ini): nodes are hosts 0-7,
 * leaf0 8, leaf1 9, spine0 10, spine1 11; a leaf's ports 4 and 5 go to spine0 and spine1, a
 * spine's port l to leaf l. With spine1 <-> leaf1 down, by hand (BFS over the links left):
 *   leaf0 -> leaf1: only through spine0 (port 4), 2 links (through spine1 it would be 4);
 *   spine1 -> leaf1: back down to leaf0 (its port 0), then spine0: 3 links;
 *   spine0 -> leaf1: direct (port 1); leaf1 -> leaf0: only through spine0 (port 4). */
static void test_routes_without_a_link(void)
{
    struct scenario *s = load("routing/link-down.ini", NULL);
    GError *err = NULL;
    struct topology *t = topology_build(s, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_STRING_EQUAL(t->nodes[11].name, "spine1");
    uint32_t cnt;
    const uint16_t *hops = topology_routes(t, 8, 5, &cnt);
    CU_ASSERT_EQUAL(cnt, 2); /* before: both spines */
    bool *down = g_new0(bool, t->nports);
    uint32_t a = t->nodes[11].first_port + 1, b = t->ports[a].peer;
    CU_ASSERT_EQUAL(t->ports[b].node, 9);
    down[a] = down[b] = true;
    struct topo_routes *r = topology_routes_without(t, down);
    const uint32_t S = t->nswitches, H = t->nhosts;
#define ROUTE(sw, dsw, k) r->route_ports[r->route_off[((sw) - H) * S + ((dsw) - H)] + (k)]
#define COUNT(sw, dsw) r->route_cnt[((sw) - H) * S + ((dsw) - H)]
    CU_ASSERT_EQUAL(COUNT(8, 9), 1);
    CU_ASSERT_EQUAL(ROUTE(8, 9, 0), 4);
    CU_ASSERT_EQUAL(COUNT(11, 9), 1);
    CU_ASSERT_EQUAL(ROUTE(11, 9, 0), 0);
    CU_ASSERT_EQUAL(COUNT(10, 9), 1);
    CU_ASSERT_EQUAL(ROUTE(10, 9, 0), 1);
    CU_ASSERT_EQUAL(COUNT(9, 8), 1);
    CU_ASSERT_EQUAL(ROUTE(9, 8, 0), 4);
    CU_ASSERT_EQUAL(COUNT(8, 8), 0);
#undef ROUTE
#undef COUNT
    (void)hops;
    topology_routes_free(r);
    g_free(down);
    topology_free(t);
    scenario_free(s);
}

/* The same fabric with every link up. Next hops by hand: leaf -> other leaf through either
 * spine (ports 4, 5), leaf -> spine k its port 4 + k, spine -> leaf l its port l, spine ->
 * other spine through either leaf (ports 0, 1). Six distinct lists, [4 5] [4] [5] [0] [1]
 * [0 1], eight next hops in all: each list is stored once, and pairs with the same list
 * share it (twelve pairs would need sixteen). */
static void test_routes_shared(void)
{
    struct scenario *s = load("routing/link-down.ini", NULL);
    GError *err = NULL;
    struct topology *t = topology_build(s, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const uint32_t S = t->nswitches, H = t->nhosts;
    CU_ASSERT_EQUAL_FATAL(S, 4);
    static const struct { uint32_t sw, dsw, n, hop[2]; } want[] = {
        { 8, 9, 2, { 4, 5 } },  { 9, 8, 2, { 4, 5 } },  { 8, 10, 1, { 4 } }, { 9, 10, 1, { 4 } },
        { 8, 11, 1, { 5 } },    { 9, 11, 1, { 5 } },    { 10, 8, 1, { 0 } }, { 11, 8, 1, { 0 } },
        { 10, 9, 1, { 1 } },    { 11, 9, 1, { 1 } },    { 10, 11, 2, { 0, 1 } }, { 11, 10, 2, { 0, 1 } },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
        size_t idx = (size_t)(want[i].sw - H) * S + (want[i].dsw - H);
        CU_ASSERT_EQUAL(t->route_cnt[idx], want[i].n);
        for (uint32_t k = 0; k < want[i].n && k < t->route_cnt[idx]; k++)
            CU_ASSERT_EQUAL(t->route_ports[t->route_off[idx] + k], want[i].hop[k]);
    }
    CU_ASSERT_EQUAL(t->nroute_ports, 8);
    CU_ASSERT_EQUAL(t->route_off[(8 - H) * S + (9 - H)], t->route_off[(9 - H) * S + (8 - H)]);
    CU_ASSERT_EQUAL(t->route_off[(10 - H) * S + (8 - H)], t->route_off[(11 - H) * S + (8 - H)]);
    topology_free(t);
    scenario_free(s);
}

/* The simulation: until the routing converges (50 us + route_convergence), leaf0 keeps hashing
 * two of the four flows to spine1, which drops them (it cannot reach leaf1). After it no
 * packet is dropped: the run stopped just after the convergence has as many drops as the whole
 * run (the run is deterministic, so its first part is the same), and every flow completes
 * through spine0. With a convergence longer than the run, spine1 drops on, and the two flows
 * hashed to it never finish. */
static void test_convergence(void)
{
    struct test_outdir o = test_outdir_new();
    const char *early[] = { "--set", "switch.route_convergence=100us", "--set", "scenario.stop=150500ns",
                            "--set", "output.pcap=", NULL };
    CU_ASSERT_EQUAL_FATAL(test_run_sim("routing/link-down.ini", o.out, early), 0);
    gint64 drops_at_convergence = test_metric(o.out, "drops");
    test_outdir_free(&o);
    o = test_outdir_new();
    const char *full[] = { "--set", "switch.route_convergence=100us", "--set", "output.pcap=", NULL };
    CU_ASSERT_EQUAL_FATAL(test_run_sim("routing/link-down.ini", o.out, full), 0);
    CU_ASSERT(drops_at_convergence > 0);
    CU_ASSERT_EQUAL(test_metric(o.out, "drops"), drops_at_convergence);
    CU_ASSERT_EQUAL(test_metric(o.out, "transfers_completed"), 4);
    test_outdir_free(&o);

    o = test_outdir_new();
    const char *never[] = { "--set", "switch.route_convergence=1s", "--set", "output.pcap=", NULL };
    int rc = test_run_sim("routing/link-down.ini", o.out, never);
    CU_ASSERT(rc == 0 || rc == 1);
    CU_ASSERT(test_metric(o.out, "drops") > 10 * drops_at_convergence);
    CU_ASSERT_EQUAL(test_metric(o.out, "transfers_completed"), 2);
    test_outdir_free(&o);
}

static CU_TestInfo tests[] = {
    { "routes over the links that are up, by hand", test_routes_without_a_link },
    { "next-hop lists by hand, each stored once", test_routes_shared },
    { "after route_convergence no switch routes into the dead link", test_convergence },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("routing", tests)
