/* Switch scheduling between data priorities: DWRR with weights ([switch] dwrr_weights). */
#include <string.h>
#include "models/net.h"
#include "tests/testutil.h"

/* fct_ns / ideal_ns (the slowdown column) of transfer `id` in DIR/transfers.csv */
static double slowdown(const char *dir, int id)
{
    char *p = g_build_filename(dir, "transfers.csv", NULL);
    char *text = NULL;
    double v = -1;
    if (g_file_get_contents(p, &text, NULL, NULL)) {
        char **lines = g_strsplit(text, "\n", -1);
        for (int i = 1; lines[i]; i++) {
            char **f = g_strsplit(lines[i], ",", -1);
            if (g_strv_length(f) == 10 && atoi(f[0]) == id)
                v = g_ascii_strtod(f[9], NULL);
            g_strfreev(f);
        }
        g_strfreev(lines);
    }
    g_free(text);
    g_free(p);
    return v;
}

/* Two 8 MB senders on priorities 3 and 4 into one 100G port, no CC. With weights 3:1 the
 * priority-3 sender gets 3/4 of the link until it finishes: its FCT is (8 MB / 0.75) at line
 * rate, 4/3 of ideal; the other then has the link alone and ends at 2x ideal (16 MB in all).
 * With equal weights both get half and both end near 2x. */
static void test_weighted_share(void)
{
    char *tmp = test_tmpdir();
    char *a = g_build_filename(tmp, "w31", NULL), *b = g_build_filename(tmp, "w11", NULL);
    CU_ASSERT_EQUAL_FATAL(test_run_sim("dwrr.ini", a, NULL), 0);
    const char *equal[] = { "--set", "switch.dwrr_weights=", NULL };
    CU_ASSERT_EQUAL_FATAL(test_run_sim("dwrr.ini", b, equal), 0);
    CU_ASSERT_DOUBLE_EQUAL(slowdown(a, 0), 4.0 / 3.0, 0.02);
    CU_ASSERT_DOUBLE_EQUAL(slowdown(a, 1), 2.0, 0.02);
    CU_ASSERT_DOUBLE_EQUAL(slowdown(b, 0), 2.0, 0.02);
    CU_ASSERT_DOUBLE_EQUAL(slowdown(b, 1), 2.0, 0.02);
    CU_ASSERT_EQUAL(test_metric(a, "drops"), 0);
    test_rmtree(tmp);
    g_free(tmp);
    g_free(a);
    g_free(b);
}

static void test_bad_weights(void)
{
    char *tmp = test_tmpdir();
    char *out = g_build_filename(tmp, "bad", NULL);
    char *scen = test_data_path("dwrr.ini");
    char *cmd = g_strdup_printf("%s run %s -o %s -q --set switch.dwrr_weights=3:0", test_rocesim_bin(), scen, out);
    char *msg = NULL;
    CU_ASSERT_EQUAL(test_run(cmd, &msg), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "[switch] dwrr_weights = '3:0'"));
    CU_ASSERT_FALSE(g_file_test(out, G_FILE_TEST_EXISTS));
    g_free(msg);
    g_free(cmd);
    g_free(scen);
    test_rmtree(tmp);
    g_free(tmp);
    g_free(out);
}

/* A switch port keeps which egress queues hold packets and their bytes in all (what choosing
 * a queue and sampling read): three frames of 100, 200 and 300 bytes on priorities 3, 6, 3,
 * then taken out in FIFO order per queue, the summary by hand at each step. */
static void test_queue_summary(void)
{
    struct packet pool[3] = { { .frame = 100 }, { .frame = 200 }, { .frame = 300 } };
    struct net n = { .pool = pool };
    struct port_rt p = { 0 };
    for (int q = 0; q < NPRIO; q++)
        p.pp[q].q.head = p.pp[q].q.tail = NONE32;
    port_q_push(&n, &p, 3, 0);
    port_q_push(&n, &p, 6, 1);
    port_q_push(&n, &p, 3, 2);
    CU_ASSERT_EQUAL(p.qmask, (1u << 3) | (1u << 6));
    CU_ASSERT_EQUAL(p.qbytes, 600);
    CU_ASSERT_EQUAL(port_q_pop(&n, &p, 3), 0);
    CU_ASSERT_EQUAL(p.qmask, (1u << 3) | (1u << 6)); /* frame 2 still waits on 3 */
    CU_ASSERT_EQUAL(p.qbytes, 500);
    CU_ASSERT_EQUAL(port_q_pop(&n, &p, 3), 2);
    CU_ASSERT_EQUAL(p.qmask, 1u << 6);
    CU_ASSERT_EQUAL(p.qbytes, 200);
    CU_ASSERT_EQUAL(port_q_pop(&n, &p, 6), 1);
    CU_ASSERT_EQUAL(p.qmask, 0);
    CU_ASSERT_EQUAL(p.qbytes, 0);
    CU_ASSERT_EQUAL(p.pp[3].q.head, NONE32);
}

static CU_TestInfo tests[] = {
    { "a port's queue summary follows its queues", test_queue_summary },
    { "DWRR shares a port by weight between data priorities", test_weighted_share },
    { "bad dwrr_weights is refused", test_bad_weights },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("scheduling", tests)
