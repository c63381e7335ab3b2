/* transfers.csv's ideal times go through a one-entry memo (models/ideal.c,
 * ideal_transfer_memo_ps): every answer must be ideal_transfer_ps's, whatever the order of
 * the transfers. The fabric is a leaf-spine (4 leaves of 4 hosts, 2 spines) whose host links
 * are made to differ: host 1's at 4x the rate, host 2's with half the delay, both ways. */
#include <string.h>
#include "models/ideal.h"
#include "tests/testutil.h"

#define SIZES 3
static const uint64_t sizes[SIZES] = { 1, 65536, 1000003 };

static void link_set(struct topology *t, uint32_t host, uint64_t rate, simtime_t delay)
{
    struct topo_port *p = &t->ports[t->nodes[host].first_port], *peer = &t->ports[p->peer];
    p->rate_bps = peer->rate_bps = rate;
    p->delay_ps = peer->delay_ps = delay;
}

/* The three orders: (size, src, dst) as a collective's rows come (the hosts of a leaf one
 * after another: the same switches, the same size); (size, dst, src): the same far switch
 * from many near ones; (src, dst, size): one path, sizes changing. */
static void triple(int order, uint64_t k, uint32_t H, uint32_t *src, uint32_t *dst, uint64_t *bytes)
{
    uint64_t a = k / ((uint64_t)H * H), b = k / H % H, c = k % H; /* for order 2: k / (H * SIZES) ... */
    if (order == 0) {
        *bytes = sizes[a], *src = (uint32_t)b, *dst = (uint32_t)c;
    } else if (order == 1) {
        *bytes = sizes[a], *dst = (uint32_t)b, *src = (uint32_t)c;
    } else {
        *src = (uint32_t)(k / ((uint64_t)H * SIZES)), *dst = (uint32_t)(k / SIZES % H), *bytes = sizes[k % SIZES];
    }
}

static void test_memo_answers_as_the_walk(void)
{
    const char *const sets[] = { "topology.leaves=4", "topology.hosts_per_leaf=4", "topology.spines=2", NULL };
    struct scenario *s = test_scenario_load("determinism.ini", sets);
    GError *err = NULL;
    struct topology *t = topology_build(s, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_PTR_NULL_FATAL(t->host_off); /* (with per-host routes the memo steps aside) */
    const struct topo_port *p0 = &t->ports[t->nodes[0].first_port];
    link_set(t, 1, p0->rate_bps * 4, p0->delay_ps);
    link_set(t, 2, p0->rate_bps, p0->delay_ps / 2);
    uint32_t H = t->nhosts;
    uint64_t n = (uint64_t)H * H * SIZES;
    unsigned hits = 0, wrong = 0;
    for (int order = 0; order < 3; order++) {
        struct ideal_memo m = { 0 };
        for (uint64_t k = 0; k < n; k++) {
            uint32_t src, dst;
            uint64_t bytes;
            triple(order, k, H, &src, &dst, &bytes);
            simtime_t want = ideal_transfer_ps(s, t, src, dst, bytes);
            struct ideal_key before = m.key;
            simtime_t got = ideal_transfer_memo_ps(&m, s, t, src, dst, bytes);
            hits += k && !memcmp(&before, &m.key, sizeof before); /* the same key: answered by the memo */
            if (got != want && wrong++ < 3)
                fprintf(stderr, "\n  order %d: %u -> %u, %lu bytes: %lu ps, expected %lu", order, src, dst,
                        (unsigned long)bytes, (unsigned long)got, (unsigned long)want);
        }
    }
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT(hits > n); /* of 3 n calls, the memo answered more than n: its stored answers were checked */
    topology_free(t);
    scenario_free(s);
}

static CU_TestInfo tests[] = {
    { "the memo's answers are the walk's, in three orders, host links differing", test_memo_answers_as_the_walk },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("ideal_memo", tests)
