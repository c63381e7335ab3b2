/* The packet pool grows in place: a packet pointer taken before an allocation is still the
 * packet after the pool has grown (the 16384-host permutation crashed when switch_receive
 * kept its pointer across the PFC frame it sent, in a pool that had moved). */
#include "models/memory.h"
#include "models/net.h"
#include "models/topology.h"
#include "models/workload.h"
#include "tests/test_fabric.h"
#include "tests/testutil.h"

static void test_pointer_survives_growth(void)
{
    struct test_fabric f = test_fabric_build(test_scenario_load("minimal.ini", NULL));
    struct net *n = f.n;
    uint32_t first = pkt_alloc(n), cap0 = n->pool_cap;
    struct packet *pk = &n->pool[first];
    pk->psn = 0xABCDEF;
    /* three doublings: 2^16 -> 2^19 packets */
    for (uint32_t k = 0; k < 7 * cap0; k++)
        pkt_alloc(n);
    CU_ASSERT(n->pool_cap >= 8 * cap0);
    CU_ASSERT_PTR_EQUAL(pk, &n->pool[first]);
    CU_ASSERT_EQUAL(pk->psn, 0xABCDEF);
    /* the reserved extent: a power of two of packets, within the memory limit */
    CU_ASSERT((n->pool_max & (n->pool_max - 1)) == 0);
    CU_ASSERT((uint64_t)n->pool_max * sizeof(struct packet) <= memory_limit() || n->pool_max == 1u << 16);
    test_fabric_free(&f);
}

/* Every packet in use is a different one, across the pool's growth, and a freed packet is
 * the next one taken (last freed first: its line is the one most likely still cached). */
static void test_free_packets_last_freed_first(void)
{
    struct test_fabric f = test_fabric_build(test_scenario_load("minimal.ini", NULL));
    struct net *n = f.n;
    uint32_t cap0 = n->pool_cap, count = 3 * cap0; /* past one doubling and into the next */
    uint32_t *taken = g_new(uint32_t, count);
    uint8_t *used = g_new0(uint8_t, 4 * (size_t)cap0);
    bool distinct = true;
    for (uint32_t k = 0; k < count; k++) {
        taken[k] = pkt_alloc(n);
        if (taken[k] >= 4 * cap0 || used[taken[k]]++)
            distinct = false;
    }
    CU_ASSERT(distinct);
    /* fresh packets come in ascending order (a new slice of the pool, from its start) */
    CU_ASSERT_EQUAL(taken[cap0 + 1], taken[cap0] + 1);
    pkt_free(n, taken[10]);
    pkt_free(n, taken[20]);
    pkt_free(n, taken[30]);
    CU_ASSERT_EQUAL(pkt_alloc(n), taken[30]);
    CU_ASSERT_EQUAL(pkt_alloc(n), taken[20]);
    CU_ASSERT_EQUAL(pkt_alloc(n), taken[10]);
    /* with none freed, the next is a packet no one holds (the pool has room: 4 x cap0) */
    uint32_t next = pkt_alloc(n);
    CU_ASSERT(next < 4 * cap0 && !used[next]);
    g_free(taken);
    g_free(used);
    test_fabric_free(&f);
}

static CU_TestInfo tests[] = {
    { "a packet pointer survives the pool's growth", test_pointer_survives_growth },
    { "free packets: each in use once, the last freed taken first", test_free_packets_last_freed_first },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("packet pool", tests)
