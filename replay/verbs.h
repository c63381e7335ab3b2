/* The verbs transport's access to libibverbs: every ibv_* call goes through one table of
 * function pointers, so tests can run the whole path over a fake provider. verbs_real() is the
 * table of libibverbs itself. Completions are read through the ibv_cq_ex the table's
 * create_cq_ex returns (its start_poll/next_poll/read_* members are the provider's). */
#ifndef ROCESIM_REPLAY_VERBS_H
#define ROCESIM_REPLAY_VERBS_H
#include <glib.h>
#include <infiniband/verbs.h>

struct verbs_fns {
    struct ibv_device **(*get_device_list)(int *num);
    void (*free_device_list)(struct ibv_device **list);
    const char *(*get_device_name)(struct ibv_device *dev);
    struct ibv_context *(*open_device)(struct ibv_device *dev);
    int (*close_device)(struct ibv_context *ctx);
    /* the data path (replay/verbs_xport.c) */
    int (*query_device_ex)(struct ibv_context *ctx, const struct ibv_query_device_ex_input *in,
                           struct ibv_device_attr_ex *attr);
    int (*query_port)(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr);
    int (*query_gid_ex)(struct ibv_context *ctx, uint32_t port, uint32_t index,
                        struct ibv_gid_entry *entry);
    int (*query_rt_values_ex)(struct ibv_context *ctx, struct ibv_values_ex *values);
    struct ibv_pd *(*alloc_pd)(struct ibv_context *ctx);
    int (*dealloc_pd)(struct ibv_pd *pd);
    struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t len, int access);
    int (*dereg_mr)(struct ibv_mr *mr);
    struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr);
    int (*destroy_cq)(struct ibv_cq *cq);
    struct ibv_srq *(*create_srq)(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
    int (*destroy_srq)(struct ibv_srq *srq);
    int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
    struct ibv_qp *(*create_qp)(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
    int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
    int (*destroy_qp)(struct ibv_qp *qp);
    int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
};

const struct verbs_fns *verbs_real(void);

/* Opens the RDMA device `name` (NULL: the first one). With none: REPLAY_ERROR_NO_DEVICE and
 * "no RDMA device (ibv_get_device_list: <why>)"; a name not found lists the devices there are. */
struct ibv_context *verbs_open(const struct verbs_fns *v, const char *name, GError **err);

#endif
