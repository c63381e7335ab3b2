/* A fabric built from a scenario as `rocesim run` builds it (topology, schedule, runtime
 * state), for the suites that drive the models directly. */
#ifndef ROCESIM_TEST_FABRIC_H
#define ROCESIM_TEST_FABRIC_H
#include "models/net.h"
#include "models/topology.h"
#include "models/workload.h"
#include "tests/testutil.h"

struct test_fabric {
    struct scenario *s;
    struct topology *topo;
    struct schedule *sched;
    struct net *n;
};

/* Takes s; the test stops at the first step that fails. */
static inline struct test_fabric test_fabric_build(struct scenario *s)
{
    struct test_fabric f = { .s = s };
    GError *err = NULL;
    f.topo = topology_build(s, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f.topo);
    f.sched = workload_build_all(s, f.topo, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f.sched);
    f.n = net_build(s, f.topo, f.sched, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f.n);
    return f;
}

static inline void test_fabric_free(struct test_fabric *f)
{
    net_free(f->n);
    schedule_free(f->sched);
    topology_free(f->topo);
    scenario_free(f->s);
}

#endif
