/* The verbs transport (see verbs_xport.h). */
#include "replay/verbs_xport.h"
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include "models/schedule_io.h"
#include "replay/ctrl.h"
#include "replay/replay.h"
#include "replay/segment.h"
#include "replay/verbs_plan.h"

#define SQ_DEPTH 256
#define SRQ_DEPTH 1024
/* wr_id: the transfer id, with this bit for a notification; receives carry WR_RECV (an error
 * completion's opcode is undefined, its wr_id is not) */
#define WR_NOTIFY (1ull << 32)
#define WR_RECV (1ull << 33)

enum ep_kind { EP_DATA = 0, EP_CTRL = 1 };

/* One QP end as exchanged (host byte order: the control plane runs between like machines,
 * but fields are fixed-width so a mixed lab still agrees on sizes). */
struct ep_wire {
    uint32_t kind, index;   /* EP_DATA: schedule QP index; EP_CTRL: the peer host */
    uint32_t qpn, psn;
    uint64_t va;
    uint32_t rkey, pad;
};
struct ep_hdr {
    uint8_t gid[16];
    uint32_t count, pad;
};

struct pending {            /* a transfer waiting for send-queue room */
    uint32_t xfer;
    uint64_t bytes;
};

struct vqp {
    struct ibv_qp *qp;
    uint32_t psn;
    uint32_t peer;          /* the other host */
    gboolean sender;        /* this host is the QP's source */
    uint8_t prio;
    uint16_t sport;
    uint64_t land_len;      /* receiver: landing buffer bytes */
    void *land;
    struct ibv_mr *land_mr;
    uint64_t remote_va;
    uint32_t remote_rkey;
    uint32_t inflight;      /* WRs posted and not yet completed */
    GQueue wait;            /* struct pending */
    GQueue open;            /* WR counts of the posted transfers, oldest first */
};

struct vx {
    struct verbs_config c;
    struct xport_events ev;
    struct xport x;
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_cq_ex *cq;
    struct ibv_srq *srq;
    struct ibv_mr *src_mr;
    void *src;
    uint64_t src_len, max_msg;
    gboolean hw_ts;
    uint64_t ts_mask, hca_khz;
    struct tick_clock rt_clock;
    uint64_t t0, t1;        /* extended HCA ticks of the two latest (tick, host ns) pairs */
    int64_t ns0, ns1, next_rt;
    uint8_t port;
    int gid_index;
    union ibv_gid gid;
    enum ibv_mtu active_mtu;
    uint32_t nq;
    struct vqp *q;          /* schedule QPs (only this host's ends have a qp) */
    struct vqp *ctl;        /* control QP per peer host (ctl[me] unused) */
    GHashTable *by_qpn;     /* local QPN -> struct vqp * */
    uint32_t srq_posted;
    struct xport_stats st;
    int64_t next_poll;
    gboolean failed;
};

static void vx_free(void *impl);

static gboolean verr(GError **err, int code, const char *what, int e)
{
    g_set_error(err, REPLAY_ERROR, code, "%s: %s", what, g_strerror(e ? e : EIO));
    return FALSE;
}

/* The RoCE v2 GID whose address is the IPv4-mapped addr. */
static int find_gid(struct vx *v, uint32_t tbl_len, GError **err)
{
    uint8_t want[16] = { [10] = 0xff, [11] = 0xff };
    memcpy(want + 12, &v->c.addr, 4);
    for (uint32_t i = 0; i < tbl_len; i++) {
        struct ibv_gid_entry e;
        if (v->c.fns->query_gid_ex(v->ctx, v->port, i, &e))
            continue; /* an empty slot */
        if (e.gid_type == IBV_GID_TYPE_ROCE_V2 && !memcmp(e.gid.raw, want, 16))
            return (int)i;
    }
    char a[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &v->c.addr, a, sizeof a);
    g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_RUN, "no RoCE v2 GID for %s on port %u of the "
                "device (is the address on the NIC's netdev? give --gid-index)", a, v->port);
    return -1;
}

static void *alloc_buf(uint64_t len)
{
    /* page-aligned so registration pins exactly what is used */
    void *p = NULL;
    if (posix_memalign(&p, 4096, len ? len : 1))
        return NULL;
    memset(p, 0, len ? len : 1);
    return p;
}

static gboolean post_recvs(struct vx *v, uint32_t n, GError **err)
{
    for (uint32_t i = 0; i < n; i++) {
        /* a WRITE WITH IMMEDIATE consumes a receive with no scatter entries */
        struct ibv_recv_wr wr = { .wr_id = WR_RECV, .sg_list = NULL, .num_sge = 0 }, *bad = NULL;
        int e = v->c.fns->post_srq_recv(v->srq, &wr, &bad);
        if (e)
            return verr(err, REPLAY_ERROR_RUN, "ibv_post_srq_recv", e);
    }
    v->srq_posted += n;
    return TRUE;
}

static struct ibv_qp *make_qp(struct vx *v, GError **err)
{
    struct ibv_qp_init_attr a = {
        .send_cq = ibv_cq_ex_to_cq(v->cq), .recv_cq = ibv_cq_ex_to_cq(v->cq), .srq = v->srq,
        .cap = { .max_send_wr = SQ_DEPTH, .max_send_sge = 1 },
        .qp_type = IBV_QPT_RC, .sq_sig_all = 0,
    };
    struct ibv_qp *qp = v->c.fns->create_qp(v->pd, &a);
    if (!qp)
        verr(err, REPLAY_ERROR_RUN, "ibv_create_qp", errno);
    return qp;
}

/* Refreshes the (HCA tick, host ns) pair used to convert CQE timestamps. */
static void rt_sample(struct vx *v)
{
    struct ibv_values_ex val = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
    int64_t before = ctrl_now_ns();
    if (v->c.fns->query_rt_values_ex(v->ctx, &val))
        return;
    int64_t after = ctrl_now_ns();
    uint64_t raw = (uint64_t)val.raw_clock.tv_sec * 1000000000ull + (uint64_t)val.raw_clock.tv_nsec;
    uint64_t t = tick_extend(&v->rt_clock, raw);
    if (!v->ns0 && !v->t0) {
        v->t0 = v->t1 = t;
        v->ns0 = v->ns1 = before + (after - before) / 2;
    } else {
        v->t0 = v->t1;
        v->ns0 = v->ns1;
        v->t1 = t;
        v->ns1 = before + (after - before) / 2;
    }
}

/* Host ns of a CQE timestamp: by the latest pair, the tick difference taken modulo the mask
 * (half a period either way), so neither a wrap nor a CQE older than the pair misleads. */
static int64_t cqe_ns(struct vx *v, uint64_t raw)
{
    if (!v->hw_ts)
        return ctrl_now_ns();
    uint64_t m = v->ts_mask, d = (raw - v->t1) & m;
    int64_t sd = d > m / 2 ? -(int64_t)((m - d) + 1) : (int64_t)d;
    return tick_to_host_ns((uint64_t)((int64_t)v->t1 + sd), v->t0, v->ns0, v->t1, v->ns1, v->hca_khz);
}

static const struct xport_ops verbs_ops;

struct xport *verbs_xport_new(const struct verbs_config *c, const struct xport_events *ev,
                              GBytes **endpoints, GError **err)
{
    struct vx *v = g_new0(struct vx, 1);
    v->c = *c;
    v->ev = *ev;
    v->port = c->port ? c->port : 1;
    v->x = (struct xport){ &verbs_ops, v };
    v->by_qpn = g_hash_table_new(g_direct_hash, g_direct_equal);
    const struct verbs_fns *f = c->fns;
    const GArray *qps = c->sched->qps;
    v->nq = qps->len;
    v->q = g_new0(struct vqp, v->nq ? v->nq : 1);
    v->ctl = g_new0(struct vqp, c->nhosts);
    for (uint32_t i = 0; i < v->nq; i++) {
        g_queue_init(&v->q[i].wait);
        g_queue_init(&v->q[i].open);
    }
    for (uint32_t h = 0; h < c->nhosts; h++) {
        g_queue_init(&v->ctl[h].wait);
        g_queue_init(&v->ctl[h].open);
    }
    if (!(v->ctx = verbs_open(f, c->device, err)))
        goto fail;
    struct ibv_device_attr_ex da;
    memset(&da, 0, sizeof da);
    int e = f->query_device_ex(v->ctx, NULL, &da);
    if (e) {
        verr(err, REPLAY_ERROR_RUN, "ibv_query_device_ex", e);
        goto fail;
    }
    struct ibv_port_attr pa;
    memset(&pa, 0, sizeof pa);
    if ((e = f->query_port(v->ctx, v->port, &pa))) {
        verr(err, REPLAY_ERROR_RUN, "ibv_query_port", e);
        goto fail;
    }
    if (pa.state != IBV_PORT_ACTIVE) {
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_RUN, "port %u of the RDMA device is not "
                    "active (state %s)", v->port, ibv_port_state_str(pa.state));
        goto fail;
    }
    v->active_mtu = pa.active_mtu;
    v->max_msg = MIN((uint64_t)pa.max_msg_sz, SCHEDULE_MAX_MESSAGE);
    if (!v->max_msg)
        v->max_msg = SCHEDULE_MAX_MESSAGE;
    v->ts_mask = da.completion_timestamp_mask;
    v->hca_khz = da.hca_core_clock;
    v->hw_ts = v->ts_mask != 0 && v->hca_khz != 0;
    v->rt_clock.mask = v->ts_mask ? v->ts_mask : UINT64_MAX;

    /* what this host owns: its QP ends, their buffers */
    uint64_t need = 0;
    int nqp = 0;
    uint64_t *biggest = g_new0(uint64_t, v->nq ? v->nq : 1);
    for (uint32_t i = 0; i < schedule_count(c->sched); i++) {
        const struct transfer *t = schedule_get(c->sched, i);
        uint32_t k = c->qp_of[i];
        if (t->bytes && k < v->nq)
            biggest[k] = MAX(biggest[k], MIN(t->bytes, v->max_msg));
    }
    for (uint32_t i = 0; i < v->nq; i++) {
        const struct sched_qp *sq = &g_array_index(qps, struct sched_qp, i);
        struct vqp *q = &v->q[i];
        q->prio = sq->prio;
        q->sport = sq->sport;
        if (sq->src == c->me) {
            q->sender = TRUE;
            q->peer = sq->dst;
            v->src_len = MAX(v->src_len, biggest[i]);
            nqp++;
        } else if (sq->dst == c->me) {
            q->peer = sq->src;
            q->land_len = biggest[i];
            need += q->land_len;
            nqp++;
        }
    }
    g_free(biggest);
    need += v->src_len;
    nqp += (int)c->nhosts - 1;
    struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
    getrlimit(RLIMIT_MEMLOCK, &rl);
    if (!verbs_preflight((uint64_t)rl.rlim_cur, need, da.orig_attr.max_qp, nqp, err))
        goto fail;
    if (c->gid_index >= 0) {
        v->gid_index = c->gid_index;
    } else if ((v->gid_index = find_gid(v, (uint32_t)pa.gid_tbl_len, err)) < 0) {
        goto fail;
    }
    struct ibv_gid_entry ge;
    if ((e = f->query_gid_ex(v->ctx, v->port, (uint32_t)v->gid_index, &ge))) {
        verr(err, REPLAY_ERROR_RUN, "ibv_query_gid_ex", e);
        goto fail;
    }
    v->gid = ge.gid;

    if (!(v->pd = f->alloc_pd(v->ctx))) {
        verr(err, REPLAY_ERROR_RUN, "ibv_alloc_pd", errno);
        goto fail;
    }
    /* room for every receive and every signalled send that can be outstanding */
    int cqe = SRQ_DEPTH + nqp * SQ_DEPTH;
    if (da.orig_attr.max_cqe > 0 && cqe > da.orig_attr.max_cqe)
        cqe = da.orig_attr.max_cqe;
    struct ibv_cq_init_attr_ex ca = {
        .cqe = (uint32_t)cqe,
        .wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM |
                    (v->hw_ts ? IBV_WC_EX_WITH_COMPLETION_TIMESTAMP : 0),
    };
    if (!(v->cq = f->create_cq_ex(v->ctx, &ca))) {
        verr(err, REPLAY_ERROR_RUN, "ibv_create_cq_ex", errno);
        goto fail;
    }
    struct ibv_srq_init_attr sa = { .attr = { .max_wr = SRQ_DEPTH, .max_sge = 1 } };
    if (!(v->srq = f->create_srq(v->pd, &sa))) {
        verr(err, REPLAY_ERROR_RUN, "ibv_create_srq", errno);
        goto fail;
    }
    if (!post_recvs(v, SRQ_DEPTH, err))
        goto fail;
    if (v->src_len) {
        /* the source of every WRITE: local read needs no access flag */
        if (!(v->src = alloc_buf(v->src_len)) ||
            !(v->src_mr = f->reg_mr(v->pd, v->src, v->src_len, 0))) {
            verr(err, REPLAY_ERROR_RUN, "ibv_reg_mr (source buffer)", errno);
            goto fail;
        }
    }
    GByteArray *b = g_byte_array_new();
    struct ep_hdr hdr = { .count = 0 };
    memcpy(hdr.gid, v->gid.raw, 16);
    g_byte_array_append(b, (const guint8 *)&hdr, sizeof hdr);
    for (uint32_t i = 0; i < v->nq + c->nhosts; i++) {
        gboolean data = i < v->nq;
        struct vqp *q = data ? &v->q[i] : &v->ctl[i - v->nq];
        uint32_t idx = data ? i : i - v->nq;
        if (data ? !q->sender && !q->land_len : idx == c->me)
            continue;
        if (!data)
            q->peer = idx;
        if (q->land_len) {
            struct verbs_qp_plan p;
            const struct sched_qp *sq = &g_array_index(qps, struct sched_qp, i);
            if (!verbs_plan_qp(sq, c->dscp[sq->prio & 7], c->mtu, v->active_mtu, TRUE, &p, err))
                goto fail_b;
            if (!(q->land = alloc_buf(q->land_len)) ||
                !(q->land_mr = f->reg_mr(v->pd, q->land, q->land_len, (int)p.landing_mr_flags))) {
                verr(err, REPLAY_ERROR_RUN, "ibv_reg_mr (landing buffer)", errno);
                goto fail_b;
            }
        }
        if (!(q->qp = make_qp(v, err)))
            goto fail_b;
        q->psn = g_random_int() & 0xFFFFFF;
        g_hash_table_insert(v->by_qpn, GUINT_TO_POINTER(q->qp->qp_num), q);
        struct ep_wire w = { .kind = data ? EP_DATA : EP_CTRL, .index = idx, .qpn = q->qp->qp_num,
                             .psn = q->psn, .va = (uint64_t)(uintptr_t)q->land,
                             .rkey = q->land_mr ? q->land_mr->rkey : 0 };
        g_byte_array_append(b, (const guint8 *)&w, sizeof w);
        ((struct ep_hdr *)(void *)b->data)->count++;
    }
    *endpoints = g_byte_array_free_to_bytes(b);
    return &v->x;
fail_b:
    g_byte_array_unref(b);
fail:
    vx_free(v);
    return NULL;
}

static const struct ep_wire *find_ep(GBytes *ep, uint32_t kind, uint32_t index, const uint8_t **gid)
{
    gsize len;
    const guint8 *d = g_bytes_get_data(ep, &len);
    if (len < sizeof(struct ep_hdr))
        return NULL;
    struct ep_hdr h;
    memcpy(&h, d, sizeof h);
    if (len < sizeof h + (gsize)h.count * sizeof(struct ep_wire))
        return NULL;
    *gid = d;
    const struct ep_wire *w = (const struct ep_wire *)(const void *)(d + sizeof h);
    for (uint32_t i = 0; i < h.count; i++)
        if (w[i].kind == kind && w[i].index == index)
            return &w[i];
    return NULL;
}

static gboolean connect_qp(struct vx *v, struct vqp *q, const struct sched_qp *sq,
                           const struct ep_wire *r, const uint8_t *rgid, GError **err)
{
    const struct verbs_fns *f = v->c.fns;
    struct verbs_qp_plan p;
    /* a control QP: the priority of the lowest QP is as good as any; it carries no data */
    struct sched_qp ctl = { .prio = 0, .sport = 0xC000 };
    if (!verbs_plan_qp(sq ? sq : &ctl, v->c.dscp[(sq ? sq->prio : 0) & 7], v->c.mtu, v->active_mtu,
                       sq ? !q->sender : TRUE, &p, err))
        return FALSE;
    struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = v->port,
                             .qp_access_flags = p.access_flags };
    int e = f->modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
    if (e)
        return verr(err, REPLAY_ERROR_RUN, "ibv_modify_qp (INIT)", e);
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = p.path_mtu;
    a.dest_qp_num = r->qpn;
    a.rq_psn = r->psn;
    a.max_dest_rd_atomic = 0; /* never a remote read */
    a.min_rnr_timer = p.min_rnr_timer;
    a.ah_attr.is_global = 1;
    memcpy(a.ah_attr.grh.dgid.raw, rgid, 16);
    a.ah_attr.grh.flow_label = p.flow_label;
    a.ah_attr.grh.sgid_index = (uint8_t)v->gid_index;
    a.ah_attr.grh.hop_limit = p.hop_limit;
    a.ah_attr.grh.traffic_class = p.traffic_class;
    a.ah_attr.sl = p.sl;
    a.ah_attr.port_num = v->port;
    if ((e = f->modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                         IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)))
        return verr(err, REPLAY_ERROR_RUN, "ibv_modify_qp (RTR)", e);
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTS;
    a.timeout = p.timeout;
    a.retry_cnt = p.retry_cnt;
    a.rnr_retry = p.rnr_retry;
    a.sq_psn = q->psn;
    a.max_rd_atomic = 0;
    if ((e = f->modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                         IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)))
        return verr(err, REPLAY_ERROR_RUN, "ibv_modify_qp (RTS)", e);
    q->remote_va = r->va;
    q->remote_rkey = r->rkey;
    return TRUE;
}

gboolean verbs_xport_connect(struct xport *x, GBytes *const *ep, GError **err)
{
    struct vx *v = x->impl;
    for (uint32_t i = 0; i < v->nq + v->c.nhosts; i++) {
        gboolean data = i < v->nq;
        struct vqp *q = data ? &v->q[i] : &v->ctl[i - v->nq];
        if (!q->qp)
            continue;
        const uint8_t *rgid = NULL;
        /* the far end of a data QP is filed under the same index, of a control QP under us */
        const struct ep_wire *r = find_ep(ep[q->peer], data ? EP_DATA : EP_CTRL, data ? i : v->c.me, &rgid);
        if (!r) {
            g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_RUN, "host %u did not announce its end "
                        "of %s %u", q->peer, data ? "QP" : "the control QP to host", data ? i : v->c.me);
            return FALSE;
        }
        if (!connect_qp(v, q, data ? &g_array_index(v->c.sched->qps, struct sched_qp, i) : NULL,
                        r, rgid, err))
            return FALSE;
    }
    if (v->hw_ts)
        rt_sample(v);
    return TRUE;
}

/* Posts the WRITEs of transfer xfer on q: every message a WRITE, the last WITH IMMEDIATE
 * and the only one signalled. */
static gboolean post_now(struct vx *v, struct vqp *q, uint32_t xfer, uint64_t bytes, gboolean notify,
                         GError **err)
{
    uint64_t n = notify ? 1 : segment_work_requests(bytes, v->max_msg);
    struct ibv_sge *sge = g_new0(struct ibv_sge, n);
    struct ibv_send_wr *wr = g_new0(struct ibv_send_wr, n);
    for (uint64_t k = 0; k < n; k++) {
        uint64_t len = notify ? 0 : MIN(v->max_msg, bytes - k * v->max_msg);
        gboolean last = k + 1 == n;
        sge[k] = (struct ibv_sge){ .addr = (uint64_t)(uintptr_t)v->src, .length = (uint32_t)len,
                                   .lkey = v->src_mr ? v->src_mr->lkey : 0 };
        wr[k].wr_id = xfer | (notify ? WR_NOTIFY : 0);
        wr[k].sg_list = len ? &sge[k] : NULL;
        wr[k].num_sge = len ? 1 : 0;
        wr[k].opcode = last ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
        wr[k].send_flags = last ? IBV_SEND_SIGNALED : 0;
        if (last)
            wr[k].imm_data = htonl(xfer);
        wr[k].wr.rdma.remote_addr = q->remote_va;
        wr[k].wr.rdma.rkey = q->remote_rkey;
        wr[k].next = last ? NULL : &wr[k + 1];
    }
    struct ibv_send_wr *bad = NULL;
    int e = v->c.fns->post_send(q->qp, wr, &bad);
    g_free(wr);
    g_free(sge);
    if (e)
        return verr(err, REPLAY_ERROR_RUN, "ibv_post_send", e);
    q->inflight += (uint32_t)n;
    g_queue_push_tail(&q->open, GUINT_TO_POINTER((guint)n));
    v->st.tx_bytes += bytes;
    v->st.tx_packets += n;
    return TRUE;
}

static gboolean drain_wait(struct vx *v, struct vqp *q, GError **err)
{
    while (!g_queue_is_empty(&q->wait)) {
        struct pending *p = g_queue_peek_head(&q->wait);
        uint64_t n = segment_work_requests(p->bytes, v->max_msg);
        if (q->inflight + n > SQ_DEPTH)
            return TRUE;
        g_queue_pop_head(&q->wait);
        gboolean ok = post_now(v, q, p->xfer, p->bytes, FALSE, err);
        g_free(p);
        if (!ok)
            return FALSE;
    }
    return TRUE;
}

static gboolean vx_post(void *impl, uint32_t qp, uint32_t xfer, uint64_t bytes, GError **err)
{
    struct vx *v = impl;
    if (qp >= v->nq || !v->q[qp].sender || !v->q[qp].qp) {
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_RUN, "transfer %u: QP %u does not start here", xfer, qp);
        return FALSE;
    }
    if (segment_work_requests(bytes, v->max_msg) > SQ_DEPTH) {
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_RUN, "transfer %u: %" G_GUINT64_FORMAT " bytes "
                    "need more than %d work requests of %" G_GUINT64_FORMAT " bytes", xfer, bytes,
                    SQ_DEPTH, v->max_msg);
        return FALSE;
    }
    struct pending *p = g_new(struct pending, 1);
    *p = (struct pending){ xfer, bytes };
    g_queue_push_tail(&v->q[qp].wait, p);
    return drain_wait(v, &v->q[qp], err);
}

static gboolean vx_notify(void *impl, uint32_t host, uint32_t xfer, GError **err)
{
    struct vx *v = impl;
    if (host >= v->c.nhosts || !v->ctl[host].qp) {
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_RUN, "no control QP to host %u", host);
        return FALSE;
    }
    struct vqp *q = &v->ctl[host];
    if (q->inflight >= SQ_DEPTH) {
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_RUN, "control QP to host %u: %d notifications "
                    "unacknowledged", host, SQ_DEPTH);
        return FALSE;
    }
    return post_now(v, q, xfer, 0, TRUE, err);
}

static int vx_pollfds(void *impl, struct pollfd *fds, int max)
{
    (void)impl;
    (void)fds;
    (void)max;
    return 0; /* the CQ is polled (next_due) */
}

static int64_t vx_next_due(void *impl)
{
    struct vx *v = impl;
    return v->next_poll;
}

static void one_cqe(struct vx *v)
{
    struct ibv_cq_ex *cq = v->cq;
    uint64_t id = cq->wr_id;
    enum ibv_wc_status status = cq->status;
    int64_t t = cqe_ns(v, v->hw_ts ? ibv_wc_read_completion_ts(cq) : 0);
    if (id & WR_RECV) {
        if (v->srq_posted)
            v->srq_posted--;
        if (status != IBV_WC_SUCCESS || ibv_wc_read_opcode(cq) != IBV_WC_RECV_RDMA_WITH_IMM)
            return; /* a flushed receive: the sender's side reports the failure */
        struct vqp *q = g_hash_table_lookup(v->by_qpn, GUINT_TO_POINTER(ibv_wc_read_qp_num(cq)));
        uint32_t imm = ntohl(ibv_wc_read_imm_data(cq));
        if (!q)
            return;
        if (q >= v->ctl && q < v->ctl + v->c.nhosts) {
            v->ev.notified(v->ev.ctx, q->peer, imm, t);
        } else if (imm < schedule_count(v->c.sched)) {
            /* RC delivers in order: the immediate comes after every byte of the transfer */
            uint64_t bytes = schedule_get(v->c.sched, imm)->bytes;
            v->st.rx_bytes += bytes;
            v->st.rx_packets++;
            v->ev.landed(v->ev.ctx, imm, bytes, t);
        }
        return;
    }
    /* a send completion: the last WR of a transfer (or a notification) */
    uint32_t xfer = (uint32_t)id;
    gboolean notify = (id & WR_NOTIFY) != 0;
    struct vqp *q = g_hash_table_lookup(v->by_qpn, GUINT_TO_POINTER(ibv_wc_read_qp_num(cq)));
    if (q && !g_queue_is_empty(&q->open)) {
        guint n = GPOINTER_TO_UINT(g_queue_pop_head(&q->open));
        q->inflight -= MIN(n, q->inflight);
    }
    if (status != IBV_WC_SUCCESS) {
        v->failed = TRUE;
        if (notify) {
            char *why = g_strdup_printf("the notification of its end to host %u: %s", q ? q->peer : 0,
                                        ibv_wc_status_str(status));
            v->ev.failed(v->ev.ctx, xfer, why);
            g_free(why);
        } else {
            v->ev.failed(v->ev.ctx, xfer, ibv_wc_status_str(status));
        }
        return;
    }
    if (!notify)
        v->ev.acked(v->ev.ctx, xfer, t);
}

static void vx_service(void *impl, int64_t now)
{
    struct vx *v = impl;
    v->next_poll = now + (v->c.poll_ns ? v->c.poll_ns : 10000);
    if (v->hw_ts && now >= v->next_rt) {
        rt_sample(v); /* a fresh pair every second follows the HCA clock's drift */
        v->next_rt = now + 1000000000;
    }
    struct ibv_poll_cq_attr pa = { 0 };
    if (ibv_start_poll(v->cq, &pa) == 0) {
        do {
            one_cqe(v);
        } while (ibv_next_poll(v->cq) == 0);
        ibv_end_poll(v->cq);
    }
    if (v->srq_posted < SRQ_DEPTH / 2)
        post_recvs(v, SRQ_DEPTH - v->srq_posted, NULL);
    if (v->failed)
        return;
    for (uint32_t i = 0; i < v->nq; i++)
        if (v->q[i].sender && !drain_wait(v, &v->q[i], NULL))
            v->failed = TRUE;
}

static gboolean vx_quiet(void *impl)
{
    struct vx *v = impl;
    for (uint32_t i = 0; i < v->nq; i++)
        if (v->q[i].inflight || !g_queue_is_empty(&v->q[i].wait))
            return FALSE;
    for (uint32_t h = 0; h < v->c.nhosts; h++)
        if (v->ctl[h].inflight)
            return FALSE;
    return TRUE;
}

static void vx_stats(void *impl, struct xport_stats *st)
{
    struct vx *v = impl;
    *st = v->st;
}

static void free_qp(struct vx *v, struct vqp *q)
{
    if (q->qp)
        v->c.fns->destroy_qp(q->qp);
    if (q->land_mr)
        v->c.fns->dereg_mr(q->land_mr);
    free(q->land);
    g_queue_clear_full(&q->wait, g_free);
    g_queue_clear(&q->open);
}

/* Releases in reverse order of creation: QPs before the SRQ and CQ they use, MRs before the
 * PD, the PD before the device. */
static void vx_free(void *impl)
{
    struct vx *v = impl;
    for (uint32_t i = 0; i < v->nq; i++)
        free_qp(v, &v->q[i]);
    for (uint32_t h = 0; h < v->c.nhosts; h++)
        free_qp(v, &v->ctl[h]);
    if (v->src_mr)
        v->c.fns->dereg_mr(v->src_mr);
    free(v->src);
    if (v->srq)
        v->c.fns->destroy_srq(v->srq);
    if (v->cq)
        v->c.fns->destroy_cq(ibv_cq_ex_to_cq(v->cq));
    if (v->pd)
        v->c.fns->dealloc_pd(v->pd);
    if (v->ctx)
        v->c.fns->close_device(v->ctx);
    g_hash_table_destroy(v->by_qpn);
    g_free(v->q);
    g_free(v->ctl);
    g_free(v);
}

static const struct xport_ops verbs_ops = {
    .name = "verbs", .post = vx_post, .notify = vx_notify, .pollfds = vx_pollfds,
    .next_due = vx_next_due, .service = vx_service, .quiet = vx_quiet, .stats = vx_stats,
    .free = vx_free,
};
