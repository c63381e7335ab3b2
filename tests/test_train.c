/* The training-step generator (models/workload_train.c): bytes per parallelism dimension
 * against the hand-computed volume of a small plan, TP traffic inside servers, and the 1F1B
 * order of the pipeline stages in the dependency graph. */
#include "models/collective_hier.h"
#include "models/schedule.h"
#include "models/topology.h"
#include "models/workload.h"
#include "models/scenario.h"
#include "tests/testutil.h"

struct built {
    struct scenario *sc;
    struct topology *t;
    struct schedule *s;
};

static struct built build(const char *const *sets)
{
    struct built b = { 0 };
    char *path = test_data_path("servers/train.ini");
    GError *e = NULL;
    b.sc = scenario_load(path, sets, &e);
    if (b.sc)
        b.t = topology_build(b.sc, &e);
    if (b.t)
        b.s = workload_build_all(b.sc, b.t, &e);
    if (e)
        fprintf(stderr, "\n%s\n", e->message);
    g_clear_error(&e);
    g_free(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b.s);
    return b;
}

static void built_free(struct built *b)
{
    schedule_free(b->s);
    topology_free(b->t);
    scenario_free(b->sc);
}

static double dim_bytes(const struct built *b, const char *dim)
{
    double sum = 0;
    for (uint32_t i = 0; i < schedule_count(b->s); i++) {
        const struct transfer *t = schedule_get(b->s, i);
        if (t->job != SCHEDULE_NO_JOB && strstr(g_array_index(b->s->jobs, struct sched_job, t->job).name, dim))
            sum += (double)t->bytes;
    }
    return sum;
}

/* TP 4, PP 2, DP 2, 4 micro-batches, 4 layers (2 per stage), hidden 1024, seq 1024, batch 1,
 * 2-byte values: A = 1024 * 1024 * 2 = 2 MiB; a layer has 12 * 1024^2 parameters, a TP rank's
 * gradient shard 12 * 1024^2 / 4 * 2 = 6 MiB.
 *   TP: 4 AllReduce of A per layer and micro-batch (2 forward, 2 backward) in each of the
 *       pp x dp = 4 TP groups; a ring AllReduce over n ranks moves 2(n-1) A: 4 * 2 * 4 * 4 * 6A
 *   PP: (pp-1) boundaries x 4 micro-batches x 2 directions x dp 2 x tp 4 sends of A/4: 16 A
 *   DP: the stage's 2 layers' shards (12 MiB < the 25 MB bucket) in one AllReduce per (stage,
 *       TP rank), 8 of them over dp = 2: 2(2-1) * 12 MiB each
 *   EP (ep = 2 over the 2 DP replicas): 4 AllToAll of A/4 per layer and micro-batch in each
 *       of the pp x tp = 8 EP groups; an AllToAll of S over n ranks moves (n-1) S */
static void test_volumes(void)
{
    const double A = 2097152, shard = 6291456;
    struct built b = build(NULL);
    CU_ASSERT_DOUBLE_EQUAL(dim_bytes(&b, ".tp."), 4.0 * 2 * 4 * 4 * 6 * A, 0.5);
    CU_ASSERT_DOUBLE_EQUAL(dim_bytes(&b, ".pp."), 16 * A, 0.5);
    CU_ASSERT_DOUBLE_EQUAL(dim_bytes(&b, ".dp."), 8 * 2 * (2 * shard), 0.5);
    CU_ASSERT_DOUBLE_EQUAL(dim_bytes(&b, ".ep."), 0, 0.5);
    built_free(&b);
    const char *sets[] = { "workload.step.ep=2", NULL };
    b = build(sets);
    CU_ASSERT_DOUBLE_EQUAL(dim_bytes(&b, ".ep."), 8.0 * 2 * 4 * 4 * (A / 4), 0.5);
    built_free(&b);
    /* FSDP: per layer, an AllGather of the shard before every forward and backward of every
     * micro-batch, a ReduceScatter after the last backward; (n-1)/n S per rank, n = dp = 2 */
    const char *fsdp[] = { "workload.step.fsdp=on", NULL };
    b = build(fsdp);
    CU_ASSERT_DOUBLE_EQUAL(dim_bytes(&b, ".dp."), 0, 0.5);
    CU_ASSERT_DOUBLE_EQUAL(dim_bytes(&b, ".fsdp.ag."), 8.0 * 2 * 4 * 2 * shard, 0.5);
    CU_ASSERT_DOUBLE_EQUAL(dim_bytes(&b, ".fsdp.rs."), 8.0 * 2 * shard, 0.5);
    built_free(&b);
}

static void test_tp_inside_servers(void)
{
    struct built b = build(NULL);
    uint32_t G = b.t->gpus_per_server, n = 0, out = 0;
    for (uint32_t i = 0; i < schedule_count(b.s); i++) {
        const struct transfer *t = schedule_get(b.s, i);
        if (t->bytes && strstr(g_array_index(b.s->jobs, struct sched_job, t->job).name, ".tp.")) {
            n++;
            out += t->src / G != t->dst / G;
        }
    }
    CU_ASSERT(n > 0);
    CU_ASSERT_EQUAL(out, 0);
    built_free(&b);
}

static uint32_t job_named(const struct built *b, const char *name)
{
    for (guint j = 0; j < b->s->jobs->len; j++)
        if (!strcmp(g_array_index(b->s->jobs, struct sched_job, j).name, name))
            return j;
    CU_FAIL_FATAL("no such job");
    return 0;
}

/* Does some transfer of job `later` wait (transitively) for a transfer of job `earlier`? */
static gboolean waits_for(const struct built *b, const char *later, const char *earlier)
{
    uint32_t jl = job_named(b, later), je = job_named(b, earlier), n = schedule_count(b->s);
    guint8 *seen = g_new0(guint8, n);
    GArray *stack = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    for (uint32_t i = 0; i < n; i++)
        if (schedule_get(b->s, i)->job == jl)
            g_array_append_val(stack, i);
    gboolean found = FALSE;
    while (stack->len && !found) {
        uint32_t id = g_array_index(stack, uint32_t, stack->len - 1);
        g_array_set_size(stack, stack->len - 1);
        const struct transfer *t = schedule_get(b->s, id);
        found = t->job == je;
        const uint32_t *d = schedule_deps(b->s, t);
        for (uint32_t k = 0; k < t->ndeps; k++)
            if (!seen[d[k]]) {
                seen[d[k]] = 1;
                g_array_append_val(stack, d[k]);
            }
    }
    g_array_free(stack, TRUE);
    g_free(seen);
    return found;
}

/* 1F1B with 2 stages and 4 micro-batches: stage 0 runs F0 F1 B0 F2 B1 F3 B2 B3, stage 1 runs
 * F0 B0 F1 B1 F2 B2 F3 B3. So stage 0 sends micro-batch 2's activations only after micro-batch
 * 0's gradient came back (B0 precedes F2), but micro-batch 1's before it (F1 precedes B0);
 * stage 1 returns micro-batch 0's gradient without waiting for micro-batch 1's activations,
 * and micro-batch 1's gradient after them. */
static void test_one_f_one_b(void)
{
    struct built b = build(NULL);
    CU_ASSERT(waits_for(&b, "step.pp.s0>s1.d0.t0.mb2.fwd", "step.pp.s1>s0.d0.t0.mb0.bwd"));
    CU_ASSERT(!waits_for(&b, "step.pp.s0>s1.d0.t0.mb1.fwd", "step.pp.s1>s0.d0.t0.mb0.bwd"));
    CU_ASSERT(waits_for(&b, "step.pp.s1>s0.d0.t0.mb0.bwd", "step.pp.s0>s1.d0.t0.mb0.fwd"));
    CU_ASSERT(!waits_for(&b, "step.pp.s1>s0.d0.t0.mb0.bwd", "step.pp.s0>s1.d0.t0.mb1.fwd"));
    CU_ASSERT(waits_for(&b, "step.pp.s1>s0.d0.t0.mb1.bwd", "step.pp.s0>s1.d0.t0.mb1.fwd"));
    CU_ASSERT(waits_for(&b, "step.pp.s0>s1.d0.t0.mb3.fwd", "step.pp.s1>s0.d0.t0.mb1.bwd"));
    /* the DP bucket of stage 0 waits for its last backward, not the other way round */
    CU_ASSERT(waits_for(&b, "step.dp.s0.t0.l0", "step.pp.s1>s0.d0.t0.mb3.bwd"));
    built_free(&b);
}

/* Rank placement: a server:gpu list, packed:N and rail:N on 2 servers of 8 GPUs. */
static void test_placement(void)
{
    struct built b = build(NULL);
    char *why = NULL;
    uint32_t n = 0, *ids = hier_parse_gpus(b.t, "1:2-3,0:7", &n, &why);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    CU_ASSERT(ids[0] == 10 && ids[1] == 11 && ids[2] == 7);
    g_free(ids);
    ids = hier_parse_gpus(b.t, "packed:10", &n, &why);
    CU_ASSERT_EQUAL_FATAL(n, 10);
    CU_ASSERT(ids[0] == 0 && ids[7] == 7 && ids[8] == 8 && ids[9] == 9);
    g_free(ids);
    ids = hier_parse_gpus(b.t, "rail:4", &n, &why); /* srv0.gpu0, srv1.gpu0, srv0.gpu1, srv1.gpu1 */
    CU_ASSERT_EQUAL_FATAL(n, 4);
    CU_ASSERT(ids[0] == 0 && ids[1] == 8 && ids[2] == 1 && ids[3] == 9);
    g_free(ids);
    CU_ASSERT_PTR_NULL(hier_parse_gpus(b.t, "2:0", &n, &why)); /* no server 2 */
    CU_ASSERT(why && strstr(why, "SERVER:GPU"));
    g_free(why);
    why = NULL;
    CU_ASSERT_PTR_NULL(hier_parse_gpus(b.t, "rail:17", &n, &why));
    CU_ASSERT(why && strstr(why, "1 to 16"));
    g_free(why);
    built_free(&b);
}

static CU_TestInfo tests[] = {
    { "rank placement: server:gpu lists, packed, by rail", test_placement },
    { "bytes per parallelism dimension equal the hand-computed volume", test_volumes },
    { "TP traffic never leaves a server", test_tp_inside_servers },
    { "PP dependencies follow 1F1B", test_one_f_one_b },
    CU_TEST_INFO_NULL,
};
TEST_MAIN("train", tests)
