/* A fake RDMA provider behind the table of replay/verbs.h, for tests: one device ("fake0")
 * that any number of contexts (ranks in threads of one process) open. A WRITE is a memcpy
 * into the remote landing buffer after the checks a responder makes (QP connected back,
 * remote-write access on the QP and the MR, the range inside the MR); a WRITE WITH IMMEDIATE
 * consumes a receive of the remote SRQ and completes there. Completions carry timestamps of
 * a 32-bit 1 GHz clock (CLOCK_MONOTONIC ns). fake.fail_imm set: the WR whose immediate is that
 * transfer completes with IBV_WC_RETRY_EXC_ERR and the QP goes to the error state.
 * Every create is counted against its destroy (fake.live). */
#ifndef ROCESIM_TESTS_FAKE_VERBS_H
#define ROCESIM_TESTS_FAKE_VERBS_H
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <time.h>
#include "replay/verbs.h"

#define FAKE_TS_MASK 0xFFFFFFFFull

struct fake_rtr {            /* what a QP was given at RTR/RTS */
    uint32_t qpn, dest_qpn, flow_label, access;
    uint8_t tclass, sl, sgid_index, timeout, retry, hop_limit;
    enum ibv_mtu mtu;
};

struct fake_cqe {
    uint64_t wr_id, ts;
    enum ibv_wc_status status;
    enum ibv_wc_opcode opcode;
    uint32_t byte_len, qp_num, imm;
};

struct fake_cq {
    struct ibv_cq_ex ex;     /* first: ibv_cq_ex_to_cq and back are casts */
    GQueue q;                /* struct fake_cqe */
    struct fake_cqe cur;
};

struct fake_srq {
    struct ibv_srq srq;
    GQueue posted;           /* wr_id of each posted receive, oldest first */
};

struct fake_qp {
    struct ibv_qp qp;
    struct fake_cq *cq;
    struct fake_srq *srq;
    enum ibv_qp_state state;
    uint32_t dest_qpn, access;
};

struct fake_mr {
    struct ibv_mr mr;
    int access;
};

static struct {
    GMutex m;
    int live_ctx, live_pd, live_mr, live_cq, live_srq, live_qp;
    uint32_t next_qpn, next_key;
    GHashTable *qps, *mrs;   /* qpn -> fake_qp, rkey -> fake_mr */
    uint64_t max_msg;
    int64_t fail_imm;        /* -1: none */
    uint64_t wrs, signalled, imm_writes, bytes_written, oversize, remote_read_mrs, remote_write_mrs,
             bad_access;
    GArray *rtr;             /* struct fake_rtr */
    struct ibv_device dev;
} fake;

static void fake_reset(uint64_t max_msg)
{
    if (fake.qps) {
        g_hash_table_destroy(fake.qps);
        g_hash_table_destroy(fake.mrs);
        g_array_free(fake.rtr, TRUE);
    }
    memset(&fake, 0, sizeof fake);
    g_mutex_init(&fake.m);
    fake.next_qpn = 0x200;
    fake.next_key = 0x1000;
    fake.qps = g_hash_table_new(g_direct_hash, g_direct_equal);
    fake.mrs = g_hash_table_new(g_direct_hash, g_direct_equal);
    fake.rtr = g_array_new(FALSE, TRUE, sizeof(struct fake_rtr));
    fake.max_msg = max_msg;
    fake.fail_imm = -1;
}

static void fake_done(void)
{
    g_hash_table_destroy(fake.qps);
    g_hash_table_destroy(fake.mrs);
    g_array_free(fake.rtr, TRUE);
    fake.qps = fake.mrs = NULL;
    fake.rtr = NULL;
}

static void fk_count(int *live, int d)
{
    g_mutex_lock(&fake.m);
    *live += d;
    g_mutex_unlock(&fake.m);
}

static uint64_t fake_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) & FAKE_TS_MASK;
}

static struct ibv_device **fk_get_list(int *num)
{
    struct ibv_device **l = g_new0(struct ibv_device *, 2);
    l[0] = &fake.dev;
    *num = 1;
    return l;
}
static void fk_free_list(struct ibv_device **l) { g_free(l); }
static const char *fk_name(struct ibv_device *d) { (void)d; return "fake0"; }
static struct ibv_context *fk_open(struct ibv_device *d)
{
    struct ibv_context *c = g_new0(struct ibv_context, 1);
    c->device = d;
    fk_count(&fake.live_ctx, 1);
    return c;
}
static int fk_close(struct ibv_context *c)
{
    fk_count(&fake.live_ctx, -1);
    g_free(c);
    return 0;
}
static int fk_query_device_ex(struct ibv_context *c, const struct ibv_query_device_ex_input *in,
                              struct ibv_device_attr_ex *a)
{
    (void)c;
    (void)in;
    memset(a, 0, sizeof *a);
    a->orig_attr.max_qp = 64;
    a->completion_timestamp_mask = FAKE_TS_MASK;
    a->hca_core_clock = 1000000; /* kHz: 1 tick = 1 ns */
    return 0;
}
static int fk_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *a)
{
    (void)c;
    if (port != 1)
        return EINVAL;
    memset(a, 0, sizeof *a);
    a->state = IBV_PORT_ACTIVE;
    a->active_mtu = IBV_MTU_4096;
    a->max_msg_sz = (uint32_t)fake.max_msg;
    a->gid_tbl_len = 8;
    return 0;
}
/* GID table: 0 RoCE v1 of 127.0.0.1 (never the one to take), 1 RoCE v2 link-local IPv6,
 * 2 empty, 3 + k RoCE v2 ::ffff:127.0.0.(k+1) for k < 4, 7 empty. */
static int fk_query_gid_ex(struct ibv_context *c, uint32_t port, uint32_t i, struct ibv_gid_entry *e)
{
    (void)c;
    memset(e, 0, sizeof *e);
    e->gid_index = i;
    e->port_num = port;
    if (i == 2 || i >= 7)
        return ENODATA;
    e->gid_type = i == 0 ? IBV_GID_TYPE_ROCE_V1 : IBV_GID_TYPE_ROCE_V2;
    if (i == 1) {
        e->gid.raw[0] = 0xfe;
        e->gid.raw[1] = 0x80;
        e->gid.raw[15] = 1;
        return 0;
    }
    e->gid.raw[10] = e->gid.raw[11] = 0xff;
    e->gid.raw[12] = 127;
    e->gid.raw[15] = (uint8_t)(i == 0 ? 1 : i - 2);
    return 0;
}
static int fk_rt_values(struct ibv_context *c, struct ibv_values_ex *v)
{
    (void)c;
    v->raw_clock.tv_sec = 0;
    v->raw_clock.tv_nsec = (long)fake_clock();
    return 0;
}
static struct ibv_pd *fk_alloc_pd(struct ibv_context *c)
{
    struct ibv_pd *pd = g_new0(struct ibv_pd, 1);
    pd->context = c;
    fk_count(&fake.live_pd, 1);
    return pd;
}
static int fk_dealloc_pd(struct ibv_pd *pd)
{
    fk_count(&fake.live_pd, -1);
    g_free(pd);
    return 0;
}
static struct ibv_mr *fk_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
    struct fake_mr *m = g_new0(struct fake_mr, 1);
    g_mutex_lock(&fake.m);
    m->mr = (struct ibv_mr){ .context = pd->context, .pd = pd, .addr = addr, .length = len,
                             .lkey = fake.next_key, .rkey = fake.next_key };
    fake.next_key++;
    m->access = access;
    if (access & IBV_ACCESS_REMOTE_READ)
        fake.remote_read_mrs++;
    if (access & IBV_ACCESS_REMOTE_WRITE)
        fake.remote_write_mrs++;
    g_hash_table_insert(fake.mrs, GUINT_TO_POINTER(m->mr.rkey), m);
    fake.live_mr++;
    g_mutex_unlock(&fake.m);
    return &m->mr;
}
static int fk_dereg_mr(struct ibv_mr *mr)
{
    g_mutex_lock(&fake.m);
    g_hash_table_remove(fake.mrs, GUINT_TO_POINTER(mr->rkey));
    fake.live_mr--;
    g_mutex_unlock(&fake.m);
    g_free(mr);
    return 0;
}

/* ---- the CQ ---- */
static int fk_next(struct ibv_cq_ex *ex)
{
    struct fake_cq *cq = (struct fake_cq *)ex;
    g_mutex_lock(&fake.m);
    struct fake_cqe *e = g_queue_pop_head(&cq->q);
    g_mutex_unlock(&fake.m);
    if (!e)
        return ENOENT;
    cq->cur = *e;
    g_free(e);
    ex->wr_id = cq->cur.wr_id;
    ex->status = cq->cur.status;
    return 0;
}
static int fk_start(struct ibv_cq_ex *ex, struct ibv_poll_cq_attr *a) { (void)a; return fk_next(ex); }
static void fk_end(struct ibv_cq_ex *ex) { (void)ex; }
static enum ibv_wc_opcode fk_opcode(struct ibv_cq_ex *ex) { return ((struct fake_cq *)ex)->cur.opcode; }
static uint32_t fk_byte_len(struct ibv_cq_ex *ex) { return ((struct fake_cq *)ex)->cur.byte_len; }
static __be32 fk_imm(struct ibv_cq_ex *ex) { return htonl(((struct fake_cq *)ex)->cur.imm); }
static uint32_t fk_qp_num(struct ibv_cq_ex *ex) { return ((struct fake_cq *)ex)->cur.qp_num; }
static uint64_t fk_ts(struct ibv_cq_ex *ex) { return ((struct fake_cq *)ex)->cur.ts; }

static struct ibv_cq_ex *fk_create_cq_ex(struct ibv_context *c, struct ibv_cq_init_attr_ex *a)
{
    (void)a;
    struct fake_cq *cq = g_new0(struct fake_cq, 1);
    g_queue_init(&cq->q);
    cq->ex.context = c;
    cq->ex.start_poll = fk_start;
    cq->ex.next_poll = fk_next;
    cq->ex.end_poll = fk_end;
    cq->ex.read_opcode = fk_opcode;
    cq->ex.read_byte_len = fk_byte_len;
    cq->ex.read_imm_data = fk_imm;
    cq->ex.read_qp_num = fk_qp_num;
    cq->ex.read_completion_ts = fk_ts;
    fk_count(&fake.live_cq, 1);
    return &cq->ex;
}
static int fk_destroy_cq(struct ibv_cq *c)
{
    struct fake_cq *cq = (struct fake_cq *)(void *)c;
    fk_count(&fake.live_cq, -1);
    g_queue_clear_full(&cq->q, g_free);
    g_free(cq);
    return 0;
}
static void fk_push(struct fake_cq *cq, struct fake_cqe e)
{
    e.ts = fake_clock();
    g_queue_push_tail(&cq->q, g_memdup2(&e, sizeof e));
}

static struct ibv_srq *fk_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *a)
{
    (void)a;
    struct fake_srq *s = g_new0(struct fake_srq, 1);
    s->srq.context = pd->context;
    s->srq.pd = pd;
    fk_count(&fake.live_srq, 1);
    return &s->srq;
}
static int fk_destroy_srq(struct ibv_srq *s)
{
    fk_count(&fake.live_srq, -1);
    g_queue_clear_full(&((struct fake_srq *)s)->posted, g_free);
    g_free(s);
    return 0;
}
static int fk_post_srq_recv(struct ibv_srq *s, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    (void)bad;
    g_mutex_lock(&fake.m);
    for (; wr; wr = wr->next)
        g_queue_push_tail(&((struct fake_srq *)s)->posted, g_memdup2(&wr->wr_id, sizeof wr->wr_id));
    g_mutex_unlock(&fake.m);
    return 0;
}

static struct ibv_qp *fk_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a)
{
    struct fake_qp *q = g_new0(struct fake_qp, 1);
    q->qp.context = pd->context;
    q->qp.pd = pd;
    q->cq = (struct fake_cq *)(void *)a->send_cq;
    q->srq = (struct fake_srq *)a->srq;
    q->state = IBV_QPS_RESET;
    g_mutex_lock(&fake.m);
    q->qp.qp_num = fake.next_qpn++;
    g_hash_table_insert(fake.qps, GUINT_TO_POINTER(q->qp.qp_num), q);
    fake.live_qp++;
    g_mutex_unlock(&fake.m);
    return &q->qp;
}
static int fk_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
    struct fake_qp *q = (struct fake_qp *)qp;
    if (!(mask & IBV_QP_STATE))
        return EINVAL;
    g_mutex_lock(&fake.m);
    int rc = 0;
    if (a->qp_state == IBV_QPS_INIT && q->state == IBV_QPS_RESET) {
        q->access = a->qp_access_flags;
    } else if (a->qp_state == IBV_QPS_RTR && q->state == IBV_QPS_INIT && (mask & IBV_QP_AV)) {
        q->dest_qpn = a->dest_qp_num;
        struct fake_rtr r = { .qpn = qp->qp_num, .dest_qpn = a->dest_qp_num,
                              .flow_label = a->ah_attr.grh.flow_label, .access = q->access,
                              .tclass = a->ah_attr.grh.traffic_class, .sl = a->ah_attr.sl,
                              .sgid_index = a->ah_attr.grh.sgid_index, .mtu = a->path_mtu,
                              .hop_limit = a->ah_attr.grh.hop_limit };
        g_array_append_val(fake.rtr, r);
    } else if (a->qp_state == IBV_QPS_RTS && q->state == IBV_QPS_RTR) {
        for (guint i = 0; i < fake.rtr->len; i++) {
            struct fake_rtr *r = &g_array_index(fake.rtr, struct fake_rtr, i);
            if (r->qpn == qp->qp_num) {
                r->timeout = a->timeout;
                r->retry = a->retry_cnt;
            }
        }
    } else {
        rc = EINVAL;
    }
    if (!rc)
        q->state = a->qp_state;
    g_mutex_unlock(&fake.m);
    return rc;
}
static int fk_destroy_qp(struct ibv_qp *qp)
{
    g_mutex_lock(&fake.m);
    g_hash_table_remove(fake.qps, GUINT_TO_POINTER(qp->qp_num));
    fake.live_qp--;
    g_mutex_unlock(&fake.m);
    g_free(qp);
    return 0;
}

/* One WR, as the responder would take it; returns the requester's completion status. */
static enum ibv_wc_status fk_deliver(struct fake_qp *q, struct ibv_send_wr *wr)
{
    struct fake_qp *r = g_hash_table_lookup(fake.qps, GUINT_TO_POINTER(q->dest_qpn));
    if (!r || r->dest_qpn != q->qp.qp_num || (r->state != IBV_QPS_RTR && r->state != IBV_QPS_RTS))
        return IBV_WC_RETRY_EXC_ERR; /* nobody answers */
    if (!(r->access & IBV_ACCESS_REMOTE_WRITE)) {
        fake.bad_access++;
        return IBV_WC_REM_ACCESS_ERR;
    }
    uint32_t len = wr->num_sge ? wr->sg_list[0].length : 0;
    if (len > fake.max_msg)
        fake.oversize++;
    if (len) {
        struct fake_mr *m = g_hash_table_lookup(fake.mrs, GUINT_TO_POINTER(wr->wr.rdma.rkey));
        uint64_t lo = (uint64_t)(uintptr_t)(m ? m->mr.addr : NULL);
        if (!m || !(m->access & IBV_ACCESS_REMOTE_WRITE) || wr->wr.rdma.remote_addr < lo ||
            wr->wr.rdma.remote_addr + len > lo + m->mr.length) {
            fake.bad_access++;
            return IBV_WC_REM_ACCESS_ERR;
        }
        memcpy((void *)(uintptr_t)wr->wr.rdma.remote_addr, (void *)(uintptr_t)wr->sg_list[0].addr, len);
        fake.bytes_written += len;
    }
    if (wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
        uint64_t *rid = g_queue_pop_head(&r->srq->posted);
        if (!rid)
            return IBV_WC_RNR_RETRY_EXC_ERR;
        uint64_t recv_id = *rid;
        g_free(rid);
        fake.imm_writes++;
        fk_push(r->cq, (struct fake_cqe){ .wr_id = recv_id, .status = IBV_WC_SUCCESS,
                                          .opcode = IBV_WC_RECV_RDMA_WITH_IMM,
                                          .byte_len = len, .qp_num = r->qp.qp_num,
                                          .imm = ntohl(wr->imm_data) });
    }
    return IBV_WC_SUCCESS;
}

static int fk_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    struct fake_qp *q = (struct fake_qp *)qp;
    g_mutex_lock(&fake.m);
    for (; wr; wr = wr->next) {
        if (q->state != IBV_QPS_RTS && q->state != IBV_QPS_ERR) {
            *bad = wr;
            g_mutex_unlock(&fake.m);
            return EINVAL;
        }
        fake.wrs++;
        gboolean sig = (wr->send_flags & IBV_SEND_SIGNALED) != 0;
        fake.signalled += sig;
        enum ibv_wc_status st = IBV_WC_WR_FLUSH_ERR;
        if (q->state == IBV_QPS_RTS) {
            if (wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM && fake.fail_imm >= 0 &&
                ntohl(wr->imm_data) == (uint32_t)fake.fail_imm)
                st = IBV_WC_RETRY_EXC_ERR;
            else
                st = fk_deliver(q, wr);
            if (st != IBV_WC_SUCCESS)
                q->state = IBV_QPS_ERR;
        }
        /* an error completes even an unsignalled WR, as on a NIC */
        if (sig || st != IBV_WC_SUCCESS)
            fk_push(q->cq, (struct fake_cqe){ .wr_id = wr->wr_id, .status = st,
                                              .opcode = IBV_WC_RDMA_WRITE, .qp_num = qp->qp_num });
    }
    g_mutex_unlock(&fake.m);
    return 0;
}

static const struct verbs_fns fake_fns = {
    .get_device_list = fk_get_list, .free_device_list = fk_free_list, .get_device_name = fk_name,
    .open_device = fk_open, .close_device = fk_close, .query_device_ex = fk_query_device_ex,
    .query_port = fk_query_port, .query_gid_ex = fk_query_gid_ex, .query_rt_values_ex = fk_rt_values,
    .alloc_pd = fk_alloc_pd, .dealloc_pd = fk_dealloc_pd, .reg_mr = fk_reg_mr, .dereg_mr = fk_dereg_mr,
    .create_cq_ex = fk_create_cq_ex, .destroy_cq = fk_destroy_cq, .create_srq = fk_create_srq,
    .destroy_srq = fk_destroy_srq, .post_srq_recv = fk_post_srq_recv, .create_qp = fk_create_qp,
    .modify_qp = fk_modify_qp, .destroy_qp = fk_destroy_qp, .post_send = fk_post_send,
};

#endif
