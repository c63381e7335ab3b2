/* The UDP transport (see udp.h). */
#define _GNU_SOURCE
#include "replay/udp.h"
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "analysis/frames.h"
#include "models/schedule_io.h"
#include "replay/ctrl.h"
#include "replay/replay.h"
#include "replay/segment.h"
#include "replay/udp_cc.h"

#define CTRL_QPN_BASE 0x800000u  /* control QP numbers: base | peer host */
#define ACK_EVERY     16u
#define HDRS          (ETH_HDR_BYTES + IPV4_HDR_BYTES + UDP_HDR_BYTES)
#define BUDGET        256        /* packets sent or read per service call and direction */

struct umsg {
    uint32_t xfer;
    uint64_t bytes;
    uint32_t first, npkts;       /* absolute packet counters on the QP */
};

struct utx {                     /* the sending end of a QP */
    uint32_t peer, qpn, peer_qpn;
    uint16_t sport;
    uint8_t dscp;
    gboolean ctrl;
    int fd;                      /* socket it sends from */
    uint32_t ipsn;
    GArray *msgs;                /* struct umsg, acked ones dropped from the front */
    uint32_t alloc, una, nxt;    /* absolute counters */
    int64_t progress_at;
    int retries;
    const struct udp_cc *ccp;    /* the host's choice; control QPs: none, unpaced */
    struct udp_cc_qp cc;         /* its reaction point and pacing */
    uint64_t sent;               /* data packets sent, retransmissions included */
    gboolean send_failed;        /* a send was refused (not a full buffer): reported once */
};

struct urx {                     /* the receiving end */
    uint32_t peer, qpn, peer_qpn;
    gboolean ctrl;
    uint32_t ipsn, nxt;
    uint32_t unacked;
    gboolean nak_sent;
    uint64_t msg_bytes;          /* payload since the last transfer ended */
    uint32_t np_slot;            /* CNP moderation slot */
    gboolean cnp_flag;           /* np_feedback = ack_flag: the next ACK carries a CNP flag */
    uint16_t sport;              /* where ACKs go from */
    uint8_t dscp;
};

struct udp {
    struct udp_config c;
    struct xport_events ev;
    struct xport x;
    int fd;                      /* bound to addr[me]:port; receives everything */
    GHashTable *sport_fd;        /* sport -> fd of a socket bound to it */
    struct utx *tx;
    uint32_t ntx;
    struct urx *rx;
    uint32_t nrx;
    GHashTable *tx_by_qpn, *rx_by_qpn; /* qpn -> index + 1 */
    uint32_t *ctrl_tx;           /* peer -> tx index */
    uint32_t rr;                 /* round robin position */
    double next_send;            /* the host's pacing, ns */
    struct udp_cc cc;
    struct udp_np np;
    struct xport_stats st;
    uint64_t rng;                /* xorshift state for --drop */
    uint8_t buf[FRAME_MAX_BYTES];
    gboolean ctrl_failed;        /* an ACK, NAK or CNP was refused: reported once */
};

uint32_t udp_initial_psn(uint32_t qpn) { return (qpn * 2654435761u) >> 8; }

int32_t psn_diff(uint32_t a, uint32_t b)
{
    return (int32_t)((a - b) << 8) >> 8;
}

static int open_socket(const struct in_addr *a, uint16_t port, GError **err)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_RUN, "socket: %s", g_strerror(errno));
        return -1;
    }
    int one = 1, big = 8 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof one);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port), .sin_addr = *a };
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        char ip[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, a, ip, sizeof ip);
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_RUN, "cannot bind UDP %s:%u: %s", ip, port,
                    g_strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static int sport_socket(struct udp *u, uint16_t sport)
{
    if (!u->c.entropy_ports)
        return u->fd;
    gpointer v;
    if (g_hash_table_lookup_extended(u->sport_fd, GUINT_TO_POINTER(sport), NULL, &v))
        return GPOINTER_TO_INT(v);
    int fd = open_socket(&u->c.addr[u->c.me], sport, NULL);
    if (fd < 0)
        fd = u->fd; /* the port is taken: send from the main socket (no ECMP entropy) */
    g_hash_table_insert(u->sport_fd, GUINT_TO_POINTER(sport), GINT_TO_POINTER(fd));
    return fd;
}

static uint16_t fd_port(int fd)
{
    struct sockaddr_in sa;
    socklen_t l = sizeof sa;
    getsockname(fd, (struct sockaddr *)&sa, &l);
    return ntohs(sa.sin_port);
}

/* Sends the UDP payload of frame (built by frame_build) to host `to` with DSCP and ECN
 * codepoint ecn (ECT(0); CE only from --test-ce-every). Returns 0, or the errno of a send the
 * kernel refused for good (no route, a firewall's prohibit, a datagram too long); a full
 * socket buffer is not one: the datagram is lost like one a congested link drops, and
 * go-back-N recovers (sendmsg(2): EAGAIN, ENOBUFS). */
static int send_frame(struct udp *u, int fd, uint32_t to, uint8_t dscp, uint8_t ecn,
                      const uint8_t *frame, size_t len)
{
    /* the UDP payload runs from the BTH to the ICRC: the IP length says where it ends */
    size_t ip_total = (size_t)frame[ETH_HDR_BYTES + 2] << 8 | frame[ETH_HDR_BYTES + 3];
    size_t n = ip_total - IPV4_HDR_BYTES - UDP_HDR_BYTES;
    (void)len;
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(u->c.port),
                              .sin_addr = u->c.addr[to] };
    int tos = (dscp << 2) | ecn;
    char cbuf[CMSG_SPACE(sizeof(int))];
    struct iovec iov = { (void *)(frame + HDRS), n };
    struct msghdr mh = { .msg_name = &sa, .msg_namelen = sizeof sa, .msg_iov = &iov,
                         .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = IPPROTO_IP;
    cm->cmsg_type = IP_TOS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &tos, sizeof tos);
    if (sendmsg(fd, &mh, 0) >= 0) {
        u->st.tx_packets++;
        u->st.tx_bytes += n;
        return 0;
    }
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS || errno == EINTR ? 0 : errno;
}

/* A control frame the kernel refused (send_frame): the peer's transfer would retransmit
 * until its retry budget runs out and then blame this host's silence, so it is said here. */
static void ctrl_refused(struct udp *u, uint32_t peer, const char *what, int e)
{
    if (u->ctrl_failed || !u->ev.broken)
        return;
    u->ctrl_failed = TRUE;
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &u->c.addr[peer], ip, sizeof ip);
    char *why = g_strdup_printf("sending %s to host %u (UDP %s:%u) failed: %s", what, peer, ip, u->c.port,
                                g_strerror(e));
    u->ev.broken(u->ev.ctx, why);
    g_free(why);
}

static void send_ack(struct udp *u, struct urx *r, gboolean nak)
{
    struct packet p = { .kind = nak ? PKT_NAK : PKT_ACK, .src = u->c.me, .dst = r->peer,
                        .dst_qpn = r->peer_qpn, .sport = r->sport, .dscp = r->dscp,
                        .flags = r->cnp_flag ? PKT_F_CNP : 0 };
    p.psn = (r->ipsn + (nak ? r->nxt : r->nxt - 1)) & 0xFFFFFF;
    struct frame_ctx fc = { .msn = 0 };
    size_t len = frame_build(&p, &fc, u->buf, sizeof u->buf);
    int e = send_frame(u, u->fd, r->peer, r->dscp, ECN_ECT0, u->buf, len);
    if (e)
        ctrl_refused(u, r->peer, nak ? "a NAK" : "an ACK", e);
    r->unacked = 0;
    if (r->cnp_flag)
        u->st.cnp_sent++; /* np_cnp_sent counts flagged ACKs too, as models/nic.c does */
    r->cnp_flag = FALSE;
    if (nak)
        u->st.naks_sent++;
}

static void send_cnp(struct udp *u, struct urx *r)
{
    struct packet p = { .kind = PKT_CNP, .src = u->c.me, .dst = r->peer, .dst_qpn = r->peer_qpn,
                        .sport = r->sport, .dscp = 48 };
    size_t len = frame_build(&p, NULL, u->buf, sizeof u->buf);
    int e = send_frame(u, u->fd, r->peer, 48, ECN_ECT0, u->buf, len);
    if (e)
        ctrl_refused(u, r->peer, "a CNP", e);
    u->st.cnp_sent++;
}

/* The message holding absolute packet k (the caller knows una <= k < alloc). */
static const struct umsg *msg_of(const struct utx *t, uint32_t k)
{
    guint lo = 0, hi = t->msgs->len;
    while (hi - lo > 1) {
        guint mid = (lo + hi) / 2;
        if ((int32_t)(g_array_index(t->msgs, struct umsg, mid).first - k) <= 0)
            lo = mid;
        else
            hi = mid;
    }
    return &g_array_index(t->msgs, struct umsg, lo);
}

static gboolean injected_drop(struct udp *u)
{
    u->rng ^= u->rng << 13;
    u->rng ^= u->rng >> 7;
    u->rng ^= u->rng << 17;
    return (double)(u->rng >> 11) / 9007199254740992.0 < u->c.drop;
}

/* Wire bytes of a frame: FCS, preamble and inter-frame gap added, as the NIC paces. */
static uint32_t wire_bytes(size_t len) { return (uint32_t)(len + FCS_BYTES + 20); }

int64_t udp_default_rto_ns(const struct schedule *s, uint32_t mtu, uint32_t window, uint64_t rate_bps)
{
    GArray *qps = g_array_new(FALSE, FALSE, sizeof(struct sched_qp));
    uint32_t nhosts = 0, busiest = 0;
    if (rate_bps && schedule_derive_qps(s, qps, NULL, NULL, NULL)) {
        for (guint i = 0; i < qps->len; i++) {
            const struct sched_qp *q = &g_array_index(qps, struct sched_qp, i);
            nhosts = MAX(nhosts, MAX(q->src, q->dst) + 1);
        }
        uint32_t *at = g_new0(uint32_t, nhosts ? nhosts : 1);
        for (guint i = 0; i < qps->len; i++) {
            const struct sched_qp *q = &g_array_index(qps, struct sched_qp, i);
            at[q->src]++;
            if (q->dst != q->src)
                at[q->dst]++;
        }
        for (uint32_t h = 0; h < nhosts; h++)
            busiest = MAX(busiest, at[h]);
        g_free(at);
    }
    g_array_free(qps, TRUE);
    /* the largest data frame: a WRITE with RETH and immediate data */
    double frame = wire_bytes(mtu + HDRS + BTH_BYTES + RETH_BYTES + IMMDT_BYTES + ICRC_BYTES);
    double ns = rate_bps ? 2.0 * busiest * window * frame * 8e9 / (double)rate_bps : 0.0;
    return ns > (double)UDP_RTO_FLOOR_NS ? (int64_t)ceil(ns) : UDP_RTO_FLOOR_NS;
}

/* The test-only CE source: every Nth data packet a QP sends leaves CE-marked, as if a
 * switch had marked it (see --test-ce-every). */
static uint8_t data_ecn(const struct udp *u, const struct utx *t)
{
    uint32_t n = u->c.test_ce_every;
    return n && !t->ctrl && t->sent % n == n - 1 ? ECN_CE : ECN_ECT0;
}

/* Builds and sends packet t->nxt; `slot` is when its pacing slot began (ns). */
static void send_data(struct udp *u, struct utx *t, double slot, int64_t now)
{
    const struct umsg *m = msg_of(t, t->nxt);
    struct segment sg;
    segment_packet(m->bytes, u->c.mtu, t->nxt - m->first, &sg);
    struct packet p = { .kind = PKT_DATA, .src = u->c.me, .dst = t->peer, .transfer = m->xfer,
                        .payload = (uint16_t)sg.payload, .sport = t->sport, .dscp = t->dscp,
                        .ecn = ECN_ECT0, .dst_qpn = t->peer_qpn };
    p.psn = (t->ipsn + t->nxt) & 0xFFFFFF;
    p.flags = (sg.first ? PKT_F_FIRST : 0) | (sg.last ? PKT_F_LAST : 0);
    struct frame_ctx fc = { .msg_bytes = sg.msg_bytes, .imm = sg.imm, .imm_data = m->xfer };
    size_t len = frame_build(&p, &fc, u->buf, sizeof u->buf);
    int e;
    if (u->c.drop > 0 && injected_drop(u))
        u->st.tx_packets++; /* counted as sent, lost on the way */
    else if ((e = send_frame(u, t->fd, t->peer, t->dscp, data_ecn(u, t), u->buf, len)) && !t->send_failed) {
        /* it would only time out, retry_count times over, with a reason that hides this one */
        t->send_failed = TRUE;
        if (u->ev.failed) {
            char ip[INET_ADDRSTRLEN];
            inet_ntop(AF_INET, &u->c.addr[t->peer], ip, sizeof ip);
            char *why = g_strdup_printf("sending to host %u (UDP %s:%u) failed: %s", t->peer, ip, u->c.port,
                                        g_strerror(e));
            u->ev.failed(u->ev.ctx, m->xfer, why);
            g_free(why);
        }
    }
    t->nxt++;
    t->sent++;
    uint32_t wire = wire_bytes(len);
    if (u->c.rate_bps)
        u->next_send += (double)wire * 8e9 / (double)u->c.rate_bps;
    udp_cc_sent(t->ccp, &t->cc, now, slot, (uint32_t)len, wire);
}

static gboolean tx_can_send(const struct udp *u, const struct utx *t)
{
    return t->nxt != t->alloc && t->nxt - t->una < u->c.window;
}

/* Sends while the host's pacing allows: each packet from the QP whose own pacing slot came
 * first (ties in round-robin order from u->rr, so the order is reproducible). */
static void run_sender(struct udp *u, int64_t now)
{
    if (u->next_send < (double)now - UDP_PACE_CREDIT_NS)
        u->next_send = (double)now - UDP_PACE_CREDIT_NS;
    for (int sent = 0; sent < BUDGET && u->ntx; sent++) {
        if (u->c.rate_bps && u->next_send > (double)now)
            return;
        uint32_t best = UINT32_MAX;
        double best_at = 0;
        for (uint32_t k = 0; k < u->ntx; k++) {
            uint32_t i = (u->rr + k) % u->ntx;
            struct utx *t = &u->tx[i];
            if (!tx_can_send(u, t))
                continue;
            double at = udp_cc_ready_at(t->ccp, &t->cc, now);
            if (at <= (double)now && (best == UINT32_MAX || at < best_at)) {
                best = i;
                best_at = at;
            }
        }
        if (best == UINT32_MAX)
            return;
        struct utx *t = &u->tx[best];
        if (t->una == t->nxt)
            t->progress_at = now; /* the timer starts with the first packet in flight */
        send_data(u, t, best_at, now);
        u->rr = (best + 1) % u->ntx;
    }
}

static void on_ack(struct udp *u, struct utx *t, const struct frame_info *fi, int64_t now)
{
    gboolean nak = fi->aeth_syndrome == AETH_NAK_PSN_SEQ;
    int32_t d = psn_diff(fi->psn, (t->ipsn + t->una) & 0xFFFFFF);
    /* ACK p covers everything up to p; NAK e says e is expected, so e - 1 is covered */
    uint32_t upto = t->una + (uint32_t)d + (nak ? 0u : 1u);
    if (d < (nak ? 0 : -1) || (int32_t)(upto - t->nxt) > 0)
        return; /* stale or from the future */
    if (nak)
        u->st.naks_received++;
    if (upto != t->una) {
        t->una = upto;
        t->progress_at = now;
        t->retries = 0;
    }
    guint done = 0;
    while (done < t->msgs->len) {
        const struct umsg *m = &g_array_index(t->msgs, struct umsg, done);
        if ((int32_t)(m->first + m->npkts - t->una) > 0)
            break;
        if (!t->ctrl && u->ev.acked)
            u->ev.acked(u->ev.ctx, m->xfer, now);
        done++;
    }
    if (done)
        g_array_remove_range(t->msgs, 0, done);
    if (nak && (int32_t)(t->nxt - t->una) > 0) {
        u->st.retransmitted_packets += t->nxt - t->una;
        t->nxt = t->una; /* go back N */
    }
    if ((int32_t)(t->nxt - t->una) < 0)
        t->nxt = t->una;
}

static void on_data(struct udp *u, struct urx *r, const struct frame_info *fi, int64_t now)
{
    if (fi->ecn == ECN_CE) {
        u->st.ce_received++;
        if (udp_np_take(&u->np, r->np_slot, now)) {
            if (u->np.ack_flag)
                r->cnp_flag = TRUE; /* this packet's ACK, sent at once, carries the flag */
            else
                send_cnp(u, r);
        }
    }
    int32_t d = psn_diff(fi->psn, (r->ipsn + r->nxt) & 0xFFFFFF);
    if (d < 0) {
        u->st.duplicates++;
        send_ack(u, r, FALSE);
        return;
    }
    if (d > 0) {
        u->st.out_of_sequence++;
        if (!r->nak_sent) {
            r->nak_sent = TRUE;
            send_ack(u, r, TRUE);
        } else if (r->cnp_flag) {
            send_ack(u, r, FALSE);
        }
        return;
    }
    r->nxt++;
    r->nak_sent = FALSE;
    r->unacked++;
    r->msg_bytes += fi->payload;
    u->st.rx_bytes += fi->payload;
    if (fi->has_imm) {
        uint64_t bytes = r->msg_bytes;
        r->msg_bytes = 0;
        if (r->ctrl) {
            if (u->ev.notified)
                u->ev.notified(u->ev.ctx, r->peer, fi->imm, now);
        } else if (u->ev.landed) {
            u->ev.landed(u->ev.ctx, fi->imm, bytes, now);
        }
    }
    if (fi->ackreq || r->unacked >= ACK_EVERY || r->cnp_flag)
        send_ack(u, r, FALSE);
}

/* Host index of an IPv4 source, or -1. */
static int64_t host_of(const struct udp *u, struct in_addr a)
{
    for (uint32_t h = 0; h < u->c.nhosts; h++)
        if (u->c.addr[h].s_addr == a.s_addr)
            return h;
    return -1;
}

static void run_receiver(struct udp *u, int64_t now)
{
    (void)now;
    for (int n = 0; n < BUDGET; n++) {
        struct sockaddr_in from;
        char cbuf[CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(struct timespec)) + 64];
        struct iovec iov = { u->buf + HDRS, sizeof u->buf - HDRS };
        struct msghdr mh = { .msg_name = &from, .msg_namelen = sizeof from, .msg_iov = &iov,
                             .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
        ssize_t got = recvmsg(u->fd, &mh, MSG_TRUNC);
        if (got < 0)
            return;
        if ((size_t)got > sizeof u->buf - HDRS)
            continue;
        int64_t src = host_of(u, from.sin_addr);
        if (src < 0)
            continue; /* not one of ours */
        uint8_t tos = 0;
        /* a packet is dated when this process reads it, on the monotonic clock the whole
         * replay runs on. Kernel receive stamps (SO_TIMESTAMPNS) are CLOCK_REALTIME, which a
         * virtual machine's clock discipline steps by tens to hundreds of microseconds
         * (measured here: 50 us within 8 s): mapped onto the monotonic clock they dated
         * landings before the transfer was even posted. Reading time is later than arrival
         * by the scheduling delay, but never earlier than anything the landing caused. */
        int64_t arrived = ctrl_now_ns();
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
            if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_TOS)
                tos = *(uint8_t *)CMSG_DATA(cm);
        u->st.rx_packets++;
        /* rebuild the Ethernet, IPv4 and UDP headers the sender's frame had, so frames.c
         * parses the datagram and checks its ICRC */
        uint8_t *f = u->buf;
        frame_host_mac(u->c.me, f);
        frame_host_mac((uint32_t)src, f + 6);
        f[12] = 0x08;
        f[13] = 0x00;
        uint8_t *ip = f + ETH_HDR_BYTES;
        uint32_t total = IPV4_HDR_BYTES + UDP_HDR_BYTES + (uint32_t)got;
        memset(ip, 0, IPV4_HDR_BYTES);
        ip[0] = 0x45;
        ip[1] = tos;
        ip[2] = (uint8_t)(total >> 8);
        ip[3] = (uint8_t)total;
        ip[6] = 0x40;
        ip[8] = 64;
        ip[9] = 17;
        uint32_t sip = frame_host_ipv4((uint32_t)src), dip = frame_host_ipv4(u->c.me);
        for (int i = 0; i < 4; i++) {
            ip[12 + i] = (uint8_t)(sip >> (24 - 8 * i));
            ip[16 + i] = (uint8_t)(dip >> (24 - 8 * i));
        }
        uint16_t cs = ipv4_checksum(ip, IPV4_HDR_BYTES);
        ip[10] = (uint8_t)(cs >> 8);
        ip[11] = (uint8_t)cs;
        uint8_t *udp = ip + IPV4_HDR_BYTES;
        uint16_t sp = ntohs(from.sin_port), ul = (uint16_t)(total - IPV4_HDR_BYTES);
        udp[0] = (uint8_t)(sp >> 8);
        udp[1] = (uint8_t)sp;
        /* the sender's frame said 4791 whatever port carried it (frames.c knows RoCEv2 by
         * it, and the ICRC covers it) */
        udp[2] = ROCE_UDP_DPORT >> 8;
        udp[3] = ROCE_UDP_DPORT & 0xFF;
        udp[4] = (uint8_t)(ul >> 8);
        udp[5] = (uint8_t)ul;
        udp[6] = udp[7] = 0;
        struct frame_info fi;
        size_t flen = HDRS + (size_t)got;
        if (frame_parse(LINKTYPE_ETHERNET, f, (uint32_t)flen, (uint32_t)flen, &fi) != 0 ||
            fi.type != FRAME_ROCE)
            continue;
        if (fi.icrc == ICRC_BAD) {
            u->st.icrc_errors++;
            continue;
        }
        gpointer v;
        if (fi.is_data) {
            if (g_hash_table_lookup_extended(u->rx_by_qpn, GUINT_TO_POINTER(fi.dest_qp), NULL, &v)) {
                struct urx *r = &u->rx[GPOINTER_TO_UINT(v) - 1];
                if (r->peer == (uint32_t)src)
                    on_data(u, r, &fi, arrived);
            }
        } else if (g_hash_table_lookup_extended(u->tx_by_qpn, GUINT_TO_POINTER(fi.dest_qp), NULL,
                                                &v)) {
            struct utx *t = &u->tx[GPOINTER_TO_UINT(v) - 1];
            if (t->peer != (uint32_t)src)
                continue;
            if (fi.is_cnp || (fi.has_aeth && fi.becn)) {
                /* a CNP, or an ACK with the CNP flag (np_feedback = ack_flag): rp_cnp_handled */
                u->st.cnp_received++;
                udp_cc_notified(t->ccp, &t->cc, arrived);
            }
            if (fi.has_aeth)
                on_ack(u, t, &fi, arrived);
        }
    }
}

static void run_timers(struct udp *u, int64_t now)
{
    for (uint32_t i = 0; i < u->ntx; i++) {
        struct utx *t = &u->tx[i];
        if (t->una == t->nxt || now - t->progress_at < u->c.rto_ns)
            continue;
        u->st.timeouts++;
        if (++t->retries > u->c.retry) {
            const struct umsg *m = msg_of(t, t->una);
            if (u->ev.failed) {
                char *why = g_strdup_printf("transport retry counter exceeded (%d timeouts of "
                                            "%.1f ms without an ACK from host %u)",
                                            u->c.retry, (double)u->c.rto_ns / 1e6, t->peer);
                u->ev.failed(u->ev.ctx, m->xfer, why);
                g_free(why);
            }
            t->retries = 0;
            t->progress_at = now;
            continue;
        }
        u->st.retransmitted_packets += t->nxt - t->una;
        t->nxt = t->una;
        t->progress_at = now;
    }
}

static void udp_service(void *impl, int64_t now)
{
    struct udp *u = impl;
    run_receiver(u, now);
    run_timers(u, now);
    run_sender(u, now);
}

static int64_t udp_next_due(void *impl)
{
    struct udp *u = impl;
    int64_t due = INT64_MAX;
    for (uint32_t i = 0; i < u->ntx; i++) {
        const struct utx *t = &u->tx[i];
        if (t->una != t->nxt)
            due = MIN(due, t->progress_at + u->c.rto_ns);
        if (!tx_can_send(u, t))
            continue;
        /* its pacing slot at the rate last read, or sooner when a timer of its algorithm
         * may change that rate */
        double at = MAX(u->c.rate_bps ? u->next_send : 0.0, 0.0);
        double own = udp_cc_ready_at_last(t->ccp, &t->cc);
        if (own > -INFINITY) /* paced (+INFINITY: a zero rate, only a timer helps) */
            at = MAX(at, MIN(own, (double)udp_cc_next_change(t->ccp, &t->cc)));
        due = MIN(due, at >= (double)INT64_MAX ? INT64_MAX : (int64_t)at);
    }
    return due;
}

static int udp_pollfds(void *impl, struct pollfd *fds, int max)
{
    struct udp *u = impl;
    if (max < 1)
        return 0;
    fds[0] = (struct pollfd){ u->fd, POLLIN, 0 };
    return 1;
}

static gboolean queue_msg(struct udp *u, struct utx *t, uint32_t xfer, uint64_t bytes)
{
    uint64_t np = segment_packets(bytes, u->c.mtu);
    struct umsg m = { xfer, bytes, t->alloc, (uint32_t)np };
    g_array_append_val(t->msgs, m);
    t->alloc += (uint32_t)np;
    return TRUE;
}

static gboolean udp_post(void *impl, uint32_t qp, uint32_t xfer, uint64_t bytes, GError **err)
{
    struct udp *u = impl;
    const struct sched_qp *q = &g_array_index(u->c.sched->qps, struct sched_qp, qp);
    gpointer v;
    if (q->src != u->c.me ||
        !g_hash_table_lookup_extended(u->tx_by_qpn, GUINT_TO_POINTER(q->lqpn), NULL, &v)) {
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_RUN, "transfer %u: QP %u does not start at host %u",
                    xfer, qp, u->c.me);
        return FALSE;
    }
    if (bytes / u->c.mtu >= (1u << 22)) {
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_RUN,
                    "transfer %u: %" G_GUINT64_FORMAT " bytes is more packets than a 24-bit PSN "
                    "window holds at mtu %u", xfer, bytes, u->c.mtu);
        return FALSE;
    }
    return queue_msg(u, &u->tx[GPOINTER_TO_UINT(v) - 1], xfer, bytes);
}

static gboolean udp_notify(void *impl, uint32_t host, uint32_t xfer, GError **err)
{
    struct udp *u = impl;
    if (host >= u->c.nhosts || host == u->c.me) {
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_RUN, "notification to host %u from itself", host);
        return FALSE;
    }
    return queue_msg(u, &u->tx[u->ctrl_tx[host]], xfer, 0);
}

static gboolean udp_quiet(void *impl)
{
    struct udp *u = impl;
    for (uint32_t i = 0; i < u->ntx; i++)
        if (u->tx[i].una != u->tx[i].alloc)
            return FALSE;
    return TRUE;
}

static void udp_stats(void *impl, struct xport_stats *st) { *st = ((struct udp *)impl)->st; }

/* The reaction points at the end: per data QP, CNPs handled and the final and lowest rate. */
static char *udp_cc_json(void *impl, int64_t now)
{
    struct udp *u = impl;
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "algorithm");
    json_builder_add_string_value(b, u->cc.ops->name);
    json_builder_set_member_name(b, "line_rate_bps");
    json_builder_add_int_value(b, (gint64)u->cc.line_bps);
    json_builder_set_member_name(b, "qps");
    json_builder_begin_array(b);
    for (uint32_t i = 0; i < u->ntx; i++) {
        struct utx *t = &u->tx[i];
        if (t->ctrl)
            continue;
        double rate = udp_cc_rate(t->ccp, &t->cc, now);
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "qpn");
        json_builder_add_int_value(b, t->qpn);
        json_builder_set_member_name(b, "to_rank");
        json_builder_add_int_value(b, t->peer);
        json_builder_set_member_name(b, "packets_sent");
        json_builder_add_int_value(b, (gint64)t->sent);
        json_builder_set_member_name(b, "cnp_handled");
        json_builder_add_int_value(b, (gint64)t->cc.cnp_handled);
        json_builder_set_member_name(b, "rate_final_bps");
        json_builder_add_int_value(b, (gint64)rate);
        json_builder_set_member_name(b, "rate_min_bps");
        json_builder_add_int_value(b, (gint64)t->cc.min_rate);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    JsonNode *root = json_builder_get_root(b);
    char *text = json_to_string(root, FALSE);
    json_node_unref(root);
    g_object_unref(b);
    return text;
}

static void udp_free(void *impl)
{
    struct udp *u = impl;
    if (!u)
        return;
    GHashTableIter it;
    gpointer k, v;
    if (u->sport_fd) {
        g_hash_table_iter_init(&it, u->sport_fd);
        while (g_hash_table_iter_next(&it, &k, &v))
            if (GPOINTER_TO_INT(v) != u->fd)
                close(GPOINTER_TO_INT(v));
        g_hash_table_unref(u->sport_fd);
    }
    if (u->fd >= 0)
        close(u->fd);
    for (uint32_t i = 0; i < u->ntx; i++)
        g_array_free(u->tx[i].msgs, TRUE);
    g_free(u->tx);
    g_free(u->rx);
    g_free(u->ctrl_tx);
    udp_np_clear(&u->np);
    if (u->tx_by_qpn)
        g_hash_table_unref(u->tx_by_qpn);
    if (u->rx_by_qpn)
        g_hash_table_unref(u->rx_by_qpn);
    g_free(u);
}

static const struct xport_ops udp_ops = {
    .name = "udp", .post = udp_post, .notify = udp_notify, .pollfds = udp_pollfds,
    .next_due = udp_next_due, .service = udp_service, .quiet = udp_quiet, .stats = udp_stats,
    .cc_json = udp_cc_json, .free = udp_free,
};

/* control QPs carry the replay's own notifications: no congestion control */
static const struct udp_cc none_cc = { .ops = &cc_none_ops };

static struct utx *add_tx(struct udp *u, uint32_t peer, uint32_t qpn, uint32_t peer_qpn,
                          uint16_t sport, uint8_t dscp, gboolean ctrl)
{
    struct utx *t = &u->tx[u->ntx];
    *t = (struct utx){ .peer = peer, .qpn = qpn, .peer_qpn = peer_qpn, .sport = sport,
                       .dscp = dscp, .ctrl = ctrl, .ipsn = udp_initial_psn(qpn) };
    t->msgs = g_array_new(FALSE, FALSE, sizeof(struct umsg));
    t->ccp = ctrl ? &none_cc : &u->cc;
    udp_cc_qp_init(t->ccp, &t->cc, u->cc.epoch_ns);
    t->fd = sport_socket(u, sport);
    t->sport = fd_port(t->fd);
    g_hash_table_insert(u->tx_by_qpn, GUINT_TO_POINTER(qpn), GUINT_TO_POINTER(++u->ntx));
    return t;
}

static void add_rx(struct udp *u, uint32_t peer, uint32_t qpn, uint32_t peer_qpn, uint8_t dscp,
                   gboolean ctrl)
{
    struct urx *r = &u->rx[u->nrx];
    *r = (struct urx){ .peer = peer, .qpn = qpn, .peer_qpn = peer_qpn, .ctrl = ctrl,
                       .ipsn = udp_initial_psn(peer_qpn), .sport = u->c.port, .dscp = dscp,
                       .np_slot = udp_np_slot(&u->np, u->nrx, peer) };
    g_hash_table_insert(u->rx_by_qpn, GUINT_TO_POINTER(qpn), GUINT_TO_POINTER(++u->nrx));
}

struct xport *udp_xport_new(const struct udp_config *c, const struct xport_events *ev,
                            GError **err)
{
    struct udp *u = g_new0(struct udp, 1);
    u->c = *c;
    u->ev = *ev;
    u->fd = -1;
    u->rng = 0x9E3779B97F4A7C15ull * (c->me + 1);
    u->cc = (struct udp_cc){ .ops = c->cc ? c->cc : &cc_none_ops, .sc = c->scenario,
                             .line_bps = (double)(c->line_bps ? c->line_bps : c->rate_bps),
                             .epoch_ns = ctrl_now_ns() };
    if (u->cc.ops != &cc_none_ops && (!u->cc.sc || u->cc.line_bps <= 0)) {
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_INPUT, "udp transport: congestion control %s "
                    "needs a scenario's [dcqcn] knobs and a line rate", u->cc.ops->name);
        udp_free(u);
        return NULL;
    }
    if (c->mtu == 0 || c->mtu > FRAME_MAX_BYTES - HDRS - 64 || c->window == 0) {
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_INPUT, "udp transport: mtu %u / window %u",
                    c->mtu, c->window);
        udp_free(u);
        return NULL;
    }
    u->fd = open_socket(&c->addr[c->me], c->port, err);
    if (u->fd < 0) {
        udp_free(u);
        return NULL;
    }
    u->sport_fd = g_hash_table_new(g_direct_hash, g_direct_equal);
    u->tx_by_qpn = g_hash_table_new(g_direct_hash, g_direct_equal);
    u->rx_by_qpn = g_hash_table_new(g_direct_hash, g_direct_equal);
    const GArray *qps = c->sched->qps;
    u->tx = g_new0(struct utx, qps->len + c->nhosts);
    u->rx = g_new0(struct urx, qps->len + c->nhosts);
    u->ctrl_tx = g_new0(uint32_t, c->nhosts);
    udp_np_init(&u->np, c->scenario ? cc_dcqcn_params(c->scenario) : NULL, qps->len + c->nhosts, c->nhosts);
    const uint8_t *dscp = c->sched->meta.present ? c->sched->meta.dscp : NULL;
    for (guint i = 0; i < qps->len; i++) {
        const struct sched_qp *q = &g_array_index(qps, struct sched_qp, i);
        uint8_t d = dscp ? dscp[q->prio] : (uint8_t)(8 * q->prio);
        if (q->src == c->me)
            add_tx(u, q->dst, q->lqpn, q->rqpn, q->sport, d, FALSE);
        if (q->dst == c->me)
            add_rx(u, q->src, q->rqpn, q->lqpn, d, FALSE);
    }
    /* control QPs: one each way per peer, numbered CTRL_QPN_BASE | peer at each end */
    for (uint32_t h = 0; h < c->nhosts; h++) {
        if (h == c->me)
            continue;
        u->ctrl_tx[h] = u->ntx;
        add_tx(u, h, CTRL_QPN_BASE | h, CTRL_QPN_BASE | c->me, c->port, 48, TRUE);
        add_rx(u, h, CTRL_QPN_BASE | h, CTRL_QPN_BASE | c->me, 48, TRUE);
    }
    u->x.ops = &udp_ops;
    u->x.impl = u;
    return &u->x;
}
