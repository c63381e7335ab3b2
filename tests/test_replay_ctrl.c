/* The replay's control plane (replay/ctrl_tcp.c) on loopback, two ranks as two threads: what
 * arrives together in one read is handed out in order, each message to the call that asks for
 * it, and every call is bounded by the deadline, which can be moved. */
#include <unistd.h>
#include "replay/ctrl.h"
#include "tests/testutil.h"

static uint16_t test_port(int k) { return (uint16_t)(30000 + (getpid() % 10000) * 2 + k); }

struct rank1 {
    uint16_t port;
    int64_t deadline;
    gboolean fin, ok;
};

/* Rank 1: connects, lets rank 0's FIN and first clock PING arrive together (a replay's last
 * moments: rank 0 sends FIN to all, then pings each rank at once), takes run-phase messages
 * until the FIN, then answers the clock pings. */
static gpointer rank1_main(gpointer p)
{
    struct rank1 *a = p;
    struct ctrl *c = ctrl_connect(1, 2, "127.0.0.1", a->port, a->deadline, NULL);
    if (!c)
        return NULL;
    g_usleep(300000);
    while (!a->fin && ctrl_now_ns() < a->deadline) {
        struct pollfd fds[2];
        int nf = ctrl_pollfds(c, fds, 2);
        poll(fds, (nfds_t)nf, 50);
        struct ctrl_msg m;
        while (ctrl_next(c, &m)) {
            if (m.ev == CTRL_FIN)
                a->fin = TRUE;
            if (m.data)
                g_bytes_unref(m.data);
        }
    }
    a->ok = a->fin && ctrl_clock_offsets(c, 4, NULL, NULL, NULL, NULL);
    ctrl_free(c);
    return NULL;
}

/* The first PING rode in the same read as the FIN; ctrl_next dropped it with the run-phase
 * messages it was looking for, and both ranks then waited for the ping-pong until the
 * deadline: every replay ended that much late and without its drift estimate. */
static void test_ping_behind_fin(void)
{
    struct rank1 a = { test_port(0), ctrl_now_ns() + 3000000000LL, FALSE, FALSE };
    GThread *t = g_thread_new("rank1", rank1_main, &a);
    GError *e = NULL;
    struct ctrl *c = ctrl_connect(0, 2, "127.0.0.1", a.port, a.deadline, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    ctrl_send_fin(c);
    int64_t off[2], half[2], at[2];
    gboolean ok = ctrl_clock_offsets(c, 4, off, half, at, &e);
    if (!ok)
        fprintf(stderr, "\n  rank 0: %s\n", e ? e->message : "?");
    CU_ASSERT_TRUE(ok);
    g_clear_error(&e);
    g_thread_join(t);
    CU_ASSERT_TRUE(a.fin);
    CU_ASSERT_TRUE(a.ok);
    ctrl_free(c);
}

struct answerer {
    uint16_t port;
    int64_t deadline;
    gboolean ok;
};

static gpointer answer_main(gpointer p)
{
    struct answerer *a = p;
    struct ctrl *c = ctrl_connect(1, 2, "127.0.0.1", a->port, a->deadline, NULL);
    if (c) {
        /* three pings: the one the expired call sent, and the renewed call's two */
        a->ok = ctrl_clock_offsets(c, 3, NULL, NULL, NULL, NULL);
        ctrl_free(c);
    }
    return NULL;
}

/* A call after the deadline fails at once with CTRL_ERROR_TIMEOUT; ctrl_set_deadline gives
 * the next calls time again (the replay renews it for the clocks' estimate after the run,
 * which the setup's deadline had long passed after a long run). */
static void test_deadline_moves(void)
{
    struct answerer a = { test_port(1), ctrl_now_ns() + 5000000000LL, FALSE };
    GThread *t = g_thread_new("answer", answer_main, &a);
    GError *e = NULL;
    struct ctrl *c = ctrl_connect(0, 2, "127.0.0.1", a.port, ctrl_now_ns() + 3000000000LL, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    int64_t off[2], half[2], at[2];
    ctrl_set_deadline(c, ctrl_now_ns() - 1);
    CU_ASSERT_FALSE(ctrl_clock_offsets(c, 2, off, half, at, &e));
    CU_ASSERT_TRUE(g_error_matches(e, CTRL_ERROR, CTRL_ERROR_TIMEOUT));
    g_clear_error(&e);
    ctrl_set_deadline(c, ctrl_now_ns() + 3000000000LL);
    CU_ASSERT_TRUE(ctrl_clock_offsets(c, 2, off, half, at, &e));
    g_clear_error(&e);
    g_thread_join(t);
    CU_ASSERT_TRUE(a.ok);
    ctrl_free(c);
}

static CU_TestInfo tests[] = {
    { "a clock PING in the same read as the FIN is answered", test_ping_behind_fin },
    { "the deadline bounds every call and can be moved", test_deadline_moves },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("replay_ctrl", tests)
