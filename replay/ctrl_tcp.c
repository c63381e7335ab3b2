/* The control plane over TCP: a star of connections to rank 0 (see ctrl.h).
 * Messages: a 16-byte header (type u32, from u32, length u64, host order: every rank runs
 * this same code on the same architecture family) and the payload. */
#define _GNU_SOURCE
#include "replay/ctrl.h"
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

G_DEFINE_QUARK(rocesim-ctrl-error-quark, ctrl_error)

enum { M_HELLO = 1, M_BLOB, M_ALL, M_PING, M_PONG, M_ABORT, M_DONE, M_FIN };
#define MAX_MSG (64u << 20)

struct conn {
    int fd;               /* -1 once closed */
    GByteArray *in;
};

struct ctrl {
    int rank, size;
    int64_t bound;        /* ns any one exchange may take (ctrl_connect's bound_ns) */
    int64_t deadline;     /* the current exchange's end: its start + bound */
    struct conn *peer;    /* rank 0: one per rank (peer[0] unused); others: peer[0] = rank 0 */
    int npeer;
    GQueue pending;       /* struct ctrl_msg * read while waiting for something else */
};

struct hdr {
    uint32_t type, from;
    uint64_t len;
};

int64_t ctrl_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int ms_left(int64_t deadline)
{
    int64_t d = deadline - ctrl_now_ns();
    return d <= 0 ? 0 : (int)MIN(d / 1000000 + 1, 1000);
}

int ctrl_rank(const struct ctrl *c) { return c->rank; }
int ctrl_size(const struct ctrl *c) { return c->size; }
/* Starts an exchange: it may take c->bound from now. Every public call that blocks starts
 * one, so that an exchange long after the connection (the reports, FIN and clock estimate at
 * the end of a long run) gets its full time; with one deadline from the connection they
 * failed at once, a report cut off at its first EAGAIN. */
static void arm(struct ctrl *c) { c->deadline = ctrl_now_ns() + c->bound; }

static void nonblock(int fd)
{
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static void conn_close(struct conn *k)
{
    if (k->fd >= 0)
        close(k->fd);
    k->fd = -1;
}

static gboolean send_all(struct ctrl *c, struct conn *k, uint32_t type, const void *data,
                         size_t len, GError **err)
{
    struct hdr h = { type, (uint32_t)c->rank, len };
    const uint8_t *parts[2] = { (const uint8_t *)&h, data };
    size_t lens[2] = { sizeof h, len };
    for (int i = 0; i < 2; i++) {
        size_t off = 0;
        while (off < lens[i]) {
            if (k->fd < 0) {
                g_set_error(err, CTRL_ERROR, CTRL_ERROR_PEER_LOST, "control connection closed");
                return FALSE;
            }
            ssize_t w = send(k->fd, parts[i] + off, lens[i] - off, MSG_NOSIGNAL);
            if (w > 0) {
                off += (size_t)w;
                continue;
            }
            if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
                struct pollfd p = { k->fd, POLLOUT, 0 };
                if (ms_left(c->deadline) == 0) {
                    g_set_error(err, CTRL_ERROR, CTRL_ERROR_TIMEOUT, "control send timed out");
                    return FALSE;
                }
                poll(&p, 1, ms_left(c->deadline));
                continue;
            }
            g_set_error(err, CTRL_ERROR, CTRL_ERROR_PEER_LOST, "control send: %s",
                        g_strerror(errno));
            conn_close(k);
            return FALSE;
        }
    }
    return TRUE;
}

/* Reads what is available; FALSE when the peer closed (or failed). */
static gboolean pump(struct conn *k)
{
    if (k->fd < 0)
        return FALSE;
    uint8_t buf[65536];
    for (;;) {
        ssize_t r = recv(k->fd, buf, sizeof buf, 0);
        if (r > 0) {
            g_byte_array_append(k->in, buf, (guint)r);
            continue;
        }
        if (r < 0 && (errno == EAGAIN || errno == EINTR))
            return TRUE;
        conn_close(k);
        return FALSE;
    }
}

/* A whole message from k's buffer, if there is one. */
static gboolean take(struct conn *k, struct hdr *h, GBytes **payload)
{
    if (k->in->len < sizeof *h)
        return FALSE;
    memcpy(h, k->in->data, sizeof *h);
    if (h->len > MAX_MSG) {
        conn_close(k); /* garbage: treat the peer as lost */
        g_byte_array_set_size(k->in, 0);
        return FALSE;
    }
    if (k->in->len < sizeof *h + h->len)
        return FALSE;
    *payload = g_bytes_new(k->in->data + sizeof *h, h->len);
    g_byte_array_remove_range(k->in, 0, (guint)(sizeof *h + h->len));
    return TRUE;
}

static int peer_rank(const struct ctrl *c, int i) { return c->rank == 0 ? i : 0; }

/* Whether k's buffer starts with a whole run-phase message (ABORT, DONE, FIN) or with
 * garbage, which take() deals with. A message of another kind (rank 0's first clock PING
 * after its FIN, say) stays in the buffer for the wait_msg that asks for it: ctrl_next used
 * to take and drop it, and the rank then waited for that PING to the end of its bound. */
static gboolean run_phase_next(const struct conn *k)
{
    struct hdr h;
    if (k->in->len < sizeof h)
        return FALSE;
    memcpy(&h, k->in->data, sizeof h);
    if (h.len > MAX_MSG)
        return TRUE;
    return k->in->len >= sizeof h + h.len && (h.type == M_ABORT || h.type == M_DONE || h.type == M_FIN);
}

/* Turns a run-phase message into a ctrl_msg; FALSE for a message of another kind. */
static gboolean as_event(const struct hdr *h, GBytes *p, struct ctrl_msg *m)
{
    m->from = (int)h->from;
    m->data = p;
    switch (h->type) {
    case M_ABORT: m->ev = CTRL_ABORT; return TRUE;
    case M_DONE: m->ev = CTRL_DONE; return TRUE;
    case M_FIN: m->ev = CTRL_FIN; return TRUE;
    default: return FALSE;
    }
}

/* Waits for a message of `type` from peer slot i; run-phase messages met on the way are kept
 * in c->pending (an ABORT ends the wait with an error). */
static GBytes *wait_msg(struct ctrl *c, int i, uint32_t type, GError **err)
{
    struct conn *k = &c->peer[i];
    for (;;) {
        struct hdr h;
        GBytes *p;
        while (take(k, &h, &p)) {
            if (h.type == type)
                return p;
            struct ctrl_msg m;
            if (as_event(&h, p, &m)) {
                if (m.ev == CTRL_ABORT) {
                    gsize n;
                    const char *t = g_bytes_get_data(p, &n);
                    g_set_error(err, CTRL_ERROR, CTRL_ERROR_ABORTED, "%.*s", (int)n, t);
                    g_bytes_unref(p);
                    return NULL;
                }
                g_queue_push_tail(&c->pending, g_memdup2(&m, sizeof m));
            } else {
                g_bytes_unref(p);
            }
        }
        if (k->fd < 0) {
            g_set_error(err, CTRL_ERROR, CTRL_ERROR_PEER_LOST, "rank %d closed its control connection",
                        peer_rank(c, i));
            return NULL;
        }
        int ms = ms_left(c->deadline);
        if (ms == 0) {
            g_set_error(err, CTRL_ERROR, CTRL_ERROR_TIMEOUT, "rank %d did not answer in time",
                        peer_rank(c, i));
            return NULL;
        }
        struct pollfd pf = { k->fd, POLLIN, 0 };
        if (poll(&pf, 1, ms) > 0)
            pump(k);
    }
}

struct ctrl *ctrl_connect(int rank, int size, const char *addr0, uint16_t port,
                          int64_t bound_ns, GError **err)
{
    struct ctrl *c = g_new0(struct ctrl, 1);
    c->rank = rank;
    c->size = size;
    c->bound = bound_ns;
    arm(c);
    g_queue_init(&c->pending);
    c->npeer = rank == 0 ? size : 1;
    c->peer = g_new0(struct conn, c->npeer);
    for (int i = 0; i < c->npeer; i++) {
        c->peer[i].fd = -1;
        c->peer[i].in = g_byte_array_new();
    }
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
    if (inet_pton(AF_INET, addr0 ? addr0 : "127.0.0.1", &sa.sin_addr) != 1) {
        g_set_error(err, CTRL_ERROR, CTRL_ERROR_IO, "control address '%s' is not an IPv4 address",
                    addr0);
        ctrl_free(c);
        return NULL;
    }
    if (rank == 0) {
        int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int one = 1;
        setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(ls, size) != 0) {
            g_set_error(err, CTRL_ERROR, CTRL_ERROR_IO, "control port %s:%u: %s",
                        addr0 ? addr0 : "127.0.0.1", port, g_strerror(errno));
            if (ls >= 0)
                close(ls);
            ctrl_free(c);
            return NULL;
        }
        nonblock(ls);
        int joined = 1;
        while (joined < size) {
            int ms = ms_left(c->deadline);
            if (ms == 0) {
                GString *missing = g_string_new(NULL);
                for (int r = 1; r < size; r++)
                    if (c->peer[r].fd < 0)
                        g_string_append_printf(missing, missing->len ? ", %d" : "%d", r);
                g_set_error(err, CTRL_ERROR, CTRL_ERROR_TIMEOUT,
                            "rank(s) %s did not connect to the control port in time", missing->str);
                g_string_free(missing, TRUE);
                close(ls);
                ctrl_free(c);
                return NULL;
            }
            struct pollfd pf = { ls, POLLIN, 0 };
            if (poll(&pf, 1, ms) <= 0)
                continue;
            int fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
            if (fd < 0)
                continue;
            nonblock(fd);
            /* the first message names the rank */
            struct conn tmp = { fd, g_byte_array_new() };
            struct hdr h;
            GBytes *p = NULL;
            int64_t until = MIN(c->deadline, ctrl_now_ns() + 2000000000);
            gboolean got = FALSE;
            while (!(got = take(&tmp, &h, &p)) && tmp.fd >= 0 && ctrl_now_ns() < until) {
                struct pollfd q = { fd, POLLIN, 0 };
                if (poll(&q, 1, ms_left(until)) > 0)
                    pump(&tmp);
            }
            if (got && h.type == M_HELLO && h.from > 0 && (int)h.from < size &&
                c->peer[h.from].fd < 0 && g_bytes_get_size(p) == sizeof(int32_t)) {
                int32_t their_size;
                memcpy(&their_size, g_bytes_get_data(p, NULL), sizeof their_size);
                if (their_size == size) {
                    g_byte_array_unref(c->peer[h.from].in);
                    c->peer[h.from] = tmp;
                    joined++;
                    g_bytes_unref(p);
                    continue;
                }
            }
            if (p)
                g_bytes_unref(p);
            conn_close(&tmp);
            g_byte_array_unref(tmp.in);
        }
        close(ls);
        return c;
    }
    for (;;) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
            nonblock(fd);
            c->peer[0].fd = fd;
            int32_t sz = size;
            if (!send_all(c, &c->peer[0], M_HELLO, &sz, sizeof sz, err)) {
                ctrl_free(c);
                return NULL;
            }
            return c;
        }
        int e = errno;
        if (fd >= 0)
            close(fd);
        if (ms_left(c->deadline) == 0) {
            g_set_error(err, CTRL_ERROR, CTRL_ERROR_TIMEOUT,
                        "cannot reach rank 0's control port %s:%u: %s",
                        addr0 ? addr0 : "127.0.0.1", port, g_strerror(e));
            ctrl_free(c);
            return NULL;
        }
        g_usleep(20000);
    }
}

void ctrl_free(struct ctrl *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->npeer; i++) {
        conn_close(&c->peer[i]);
        g_byte_array_unref(c->peer[i].in);
    }
    g_free(c->peer);
    struct ctrl_msg *m;
    while ((m = g_queue_pop_head(&c->pending))) {
        if (m->data)
            g_bytes_unref(m->data);
        g_free(m);
    }
    g_free(c);
}

gboolean ctrl_allgather(struct ctrl *c, const void *mine, size_t len, GBytes ***out, GError **err)
{
    arm(c);
    GBytes **all = g_new0(GBytes *, c->size);
    if (c->rank != 0) {
        if (!send_all(c, &c->peer[0], M_BLOB, mine, len, err))
            goto fail;
        GBytes *p = wait_msg(c, 0, M_ALL, err);
        if (!p)
            goto fail;
        /* [u64 len][bytes] per rank */
        gsize n;
        const uint8_t *d = g_bytes_get_data(p, &n);
        size_t off = 0;
        for (int r = 0; r < c->size; r++) {
            uint64_t l;
            if (off + 8 > n || (memcpy(&l, d + off, 8), off + 8 + l > n)) {
                g_bytes_unref(p);
                g_set_error(err, CTRL_ERROR, CTRL_ERROR_IO, "malformed allgather reply");
                goto fail;
            }
            all[r] = g_bytes_new(d + off + 8, l);
            off += 8 + l;
        }
        g_bytes_unref(p);
        *out = all;
        return TRUE;
    }
    all[0] = g_bytes_new(mine, len);
    for (int r = 1; r < c->size; r++)
        if (!(all[r] = wait_msg(c, r, M_BLOB, err)))
            goto fail;
    GByteArray *b = g_byte_array_new();
    for (int r = 0; r < c->size; r++) {
        gsize l;
        const void *d = g_bytes_get_data(all[r], &l);
        uint64_t l64 = l;
        g_byte_array_append(b, (const guint8 *)&l64, 8);
        if (l)
            g_byte_array_append(b, d, (guint)l);
    }
    gboolean ok = TRUE;
    for (int r = 1; r < c->size && ok; r++)
        ok = send_all(c, &c->peer[r], M_ALL, b->data, b->len, err);
    g_byte_array_unref(b);
    if (!ok)
        goto fail;
    *out = all;
    return TRUE;
fail:
    for (int r = 0; r < c->size; r++)
        if (all[r])
            g_bytes_unref(all[r]);
    g_free(all);
    return FALSE;
}

gboolean ctrl_barrier(struct ctrl *c, GError **err)
{
    GBytes **all = NULL;
    if (!ctrl_allgather(c, NULL, 0, &all, err))
        return FALSE;
    for (int r = 0; r < c->size; r++)
        g_bytes_unref(all[r]);
    g_free(all);
    return TRUE;
}

gboolean ctrl_clock_offsets(struct ctrl *c, int samples, int64_t *off, int64_t *half,
                            int64_t *at, GError **err)
{
    arm(c);
    if (c->rank != 0) {
        for (int i = 0; i < samples; i++) {
            GBytes *p = wait_msg(c, 0, M_PING, err);
            if (!p)
                return FALSE;
            g_bytes_unref(p);
            int64_t now = ctrl_now_ns();
            if (!send_all(c, &c->peer[0], M_PONG, &now, sizeof now, err))
                return FALSE;
        }
        return TRUE;
    }
    off[0] = half[0] = 0;
    at[0] = ctrl_now_ns();
    for (int r = 1; r < c->size; r++) {
        int64_t best = INT64_MAX;
        for (int i = 0; i < samples; i++) {
            int64_t t1 = ctrl_now_ns();
            if (!send_all(c, &c->peer[r], M_PING, NULL, 0, err))
                return FALSE;
            GBytes *p = wait_msg(c, r, M_PONG, err);
            if (!p)
                return FALSE;
            int64_t t3 = ctrl_now_ns(), t2;
            if (g_bytes_get_size(p) != sizeof t2) {
                g_bytes_unref(p);
                g_set_error(err, CTRL_ERROR, CTRL_ERROR_IO, "rank %d: malformed clock reply", r);
                return FALSE;
            }
            memcpy(&t2, g_bytes_get_data(p, NULL), sizeof t2);
            g_bytes_unref(p);
            /* the sample with the smallest round trip bounds the offset most tightly */
            if (t3 - t1 < best) {
                best = t3 - t1;
                off[r] = t2 - (t1 + (t3 - t1) / 2);
                half[r] = (t3 - t1 + 1) / 2;
                at[r] = t1 + (t3 - t1) / 2;
            }
        }
    }
    return TRUE;
}

int ctrl_pollfds(const struct ctrl *c, struct pollfd *fds, int max)
{
    int n = 0;
    for (int i = 0; i < c->npeer && n < max; i++)
        if (c->peer[i].fd >= 0 && (c->rank != 0 || i > 0))
            fds[n++] = (struct pollfd){ c->peer[i].fd, POLLIN, 0 };
    return n;
}

gboolean ctrl_next(struct ctrl *c, struct ctrl_msg *msg)
{
    struct ctrl_msg *m = g_queue_pop_head(&c->pending);
    if (m) {
        *msg = *m;
        g_free(m);
        return TRUE;
    }
    for (int i = c->rank == 0 ? 1 : 0; i < c->npeer; i++) {
        struct conn *k = &c->peer[i];
        if (k->fd < 0)
            continue;
        gboolean alive = pump(k);
        struct hdr h;
        GBytes *p;
        while (run_phase_next(k) && take(k, &h, &p)) {
            struct ctrl_msg e;
            if (as_event(&h, p, &e))
                g_queue_push_tail(&c->pending, g_memdup2(&e, sizeof e));
            else
                g_bytes_unref(p);
        }
        if (!alive) {
            struct ctrl_msg e = { CTRL_LOST, peer_rank(c, i), NULL };
            g_queue_push_tail(&c->pending, g_memdup2(&e, sizeof e));
        }
    }
    m = g_queue_pop_head(&c->pending);
    if (!m)
        return FALSE;
    *msg = *m;
    g_free(m);
    return TRUE;
}

void ctrl_send_abort(struct ctrl *c, const char *reason)
{
    arm(c);
    for (int i = c->rank == 0 ? 1 : 0; i < c->npeer; i++)
        if (c->peer[i].fd >= 0)
            send_all(c, &c->peer[i], M_ABORT, reason, strlen(reason), NULL);
}

gboolean ctrl_send_done(struct ctrl *c, const void *data, size_t len, GError **err)
{
    arm(c);
    return send_all(c, &c->peer[0], M_DONE, data, len, err);
}

void ctrl_send_fin(struct ctrl *c)
{
    arm(c);
    for (int i = 1; i < c->npeer; i++)
        if (c->peer[i].fd >= 0)
            send_all(c, &c->peer[i], M_FIN, NULL, 0, NULL);
}
