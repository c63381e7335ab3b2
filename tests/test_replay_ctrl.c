/* The replay's control plane (replay/ctrl_tcp.c) on loopback, two ranks as two threads: what
 * arrives together in one read is handed out in order, each message to the call that asks for
 * it, and every call is bounded by the time given to ctrl_connect, from the call's start. */
#include <unistd.h>
#include "replay/ctrl.h"
#include "tests/testutil.h"

static uint16_t test_port(int k) { return (uint16_t)(test_port_base() + (unsigned)k); }

/* Rank 0's side of the clock estimate with rank 1 (`samples` pings); an error is printed. */
static gboolean rank0_clock(struct ctrl *c, int samples)
{
    GError *e = NULL;
    int64_t off[2], half[2], at[2]; /* one per rank */
    gboolean ok = ctrl_clock_offsets(c, samples, off, half, at, &e);
    if (!ok)
        fprintf(stderr, "\n  rank 0: %s\n", e ? e->message : "?");
    g_clear_error(&e);
    return ok;
}

struct rank1 {
    uint16_t port;
    int64_t deadline;  /* when rank 1 stops waiting for the FIN */
    gboolean fin, ok;
};

/* Rank 1: connects, lets rank 0's FIN and first clock PING arrive together (a replay's last
 * moments: rank 0 sends FIN to all, then pings each rank at once), takes run-phase messages
 * until the FIN, then answers the clock pings. */
static gpointer rank1_main(gpointer p)
{
    struct rank1 *a = p;
    struct ctrl *c = ctrl_connect(1, 2, "127.0.0.1", a->port, 3000000000LL, NULL);
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
    struct ctrl *c = ctrl_connect(0, 2, "127.0.0.1", a.port, 3000000000LL, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    ctrl_send_fin(c);
    CU_ASSERT_TRUE(rank0_clock(c, 4));
    g_thread_join(t);
    CU_ASSERT_TRUE(a.fin);
    CU_ASSERT_TRUE(a.ok);
    ctrl_free(c);
}

struct answerer {
    uint16_t port;
    gulong idle_us;  /* before answering */
    gboolean ok;
};

/* Rank 1: connects with a bound of 1 s, idles, then answers two clock pings. */
static gpointer answer_main(gpointer p)
{
    struct answerer *a = p;
    struct ctrl *c = ctrl_connect(1, 2, "127.0.0.1", a->port, 1000000000LL, NULL);
    if (c) {
        g_usleep(a->idle_us);
        a->ok = ctrl_clock_offsets(c, 2, NULL, NULL, NULL, NULL);
        ctrl_free(c);
    }
    return NULL;
}

/* An exchange 1.5 s after connecting with a bound of 1 s (a replay's reports, FIN and clock
 * estimate at the end of a long run) gets its full second: with one deadline counted from
 * the connection it failed at once, and a report bigger than the socket's buffer was cut
 * off at its first EAGAIN. */
static void test_exchange_long_after_connect(void)
{
    struct answerer a = { test_port(1), 1500000, FALSE };
    GThread *t = g_thread_new("answer", answer_main, &a);
    GError *e = NULL;
    struct ctrl *c = ctrl_connect(0, 2, "127.0.0.1", a.port, 1000000000LL, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    g_usleep(1500000);
    CU_ASSERT_TRUE(rank0_clock(c, 2));
    g_thread_join(t);
    CU_ASSERT_TRUE(a.ok);
    ctrl_free(c);
}

/* ...and no more: a peer that stays silent past the bound is a timeout naming it. */
static void test_exchange_bounded(void)
{
    struct answerer a = { test_port(2), 2500000, FALSE };
    GThread *t = g_thread_new("answer", answer_main, &a);
    GError *e = NULL;
    struct ctrl *c = ctrl_connect(0, 2, "127.0.0.1", a.port, 1000000000LL, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    int64_t off[2], half[2], at[2];
    CU_ASSERT_FALSE(ctrl_clock_offsets(c, 2, off, half, at, &e));
    CU_ASSERT_TRUE(g_error_matches(e, CTRL_ERROR, CTRL_ERROR_TIMEOUT));
    CU_ASSERT_PTR_NOT_NULL(e ? strstr(e->message, "rank 1") : NULL);
    g_clear_error(&e);
    ctrl_free(c); /* the late answerer then finds the connection closed */
    g_thread_join(t);
    CU_ASSERT_FALSE(a.ok);
}

static CU_TestInfo tests[] = {
    { "a clock PING in the same read as the FIN is answered", test_ping_behind_fin },
    { "an exchange long after the connection gets its full bound", test_exchange_long_after_connect },
    { "an exchange is bounded: a silent peer is a timeout naming it", test_exchange_bounded },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("replay_ctrl", tests)
