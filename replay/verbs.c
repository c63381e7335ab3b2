/* Opening an RDMA device through the verbs table (see verbs.h). */
#include "replay/verbs.h"
#include <errno.h>
#include <string.h>
#include "replay/replay.h"

/* libibverbs declares several of these as macros or static inlines: wrap them */
static int real_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *in,
                                struct ibv_device_attr_ex *attr)
{
    return ibv_query_device_ex(ctx, in, attr);
}
static int real_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr)
{
    return ibv_query_port(ctx, port, attr);
}
static int real_query_gid_ex(struct ibv_context *ctx, uint32_t port, uint32_t index,
                             struct ibv_gid_entry *entry)
{
    return ibv_query_gid_ex(ctx, port, index, entry, 0);
}
static int real_query_rt_values_ex(struct ibv_context *ctx, struct ibv_values_ex *values)
{
    return ibv_query_rt_values_ex(ctx, values);
}
static struct ibv_mr *real_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
    return ibv_reg_mr(pd, addr, len, access);
}
static struct ibv_cq_ex *real_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr)
{
    return ibv_create_cq_ex(ctx, attr);
}
static int real_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    return ibv_post_srq_recv(srq, wr, bad);
}
static int real_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    return ibv_post_send(qp, wr, bad);
}

static const struct verbs_fns real = {
    .get_device_list = ibv_get_device_list,
    .free_device_list = ibv_free_device_list,
    .get_device_name = ibv_get_device_name,
    .open_device = ibv_open_device,
    .close_device = ibv_close_device,
    .query_device_ex = real_query_device_ex,
    .query_port = real_query_port,
    .query_gid_ex = real_query_gid_ex,
    .query_rt_values_ex = real_query_rt_values_ex,
    .alloc_pd = ibv_alloc_pd,
    .dealloc_pd = ibv_dealloc_pd,
    .reg_mr = real_reg_mr,
    .dereg_mr = ibv_dereg_mr,
    .create_cq_ex = real_create_cq_ex,
    .destroy_cq = ibv_destroy_cq,
    .create_srq = ibv_create_srq,
    .destroy_srq = ibv_destroy_srq,
    .post_srq_recv = real_post_srq_recv,
    .create_qp = ibv_create_qp,
    .modify_qp = ibv_modify_qp,
    .destroy_qp = ibv_destroy_qp,
    .post_send = real_post_send,
};

const struct verbs_fns *verbs_real(void) { return &real; }

struct ibv_context *verbs_open(const struct verbs_fns *v, const char *name, GError **err)
{
    int num = 0;
    errno = 0;
    struct ibv_device **list = v->get_device_list(&num);
    int e = errno;
    if (!list || num == 0) {
        /* NULL (no kernel RDMA support, errno set) and an empty list are both "none" */
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_NO_DEVICE, "no RDMA device (ibv_get_device_list: %s)",
                    !list ? g_strerror(e ? e : ENODEV) : "0 devices");
        if (list)
            v->free_device_list(list);
        return NULL;
    }
    struct ibv_device *dev = NULL;
    GString *names = g_string_new(NULL);
    for (int i = 0; i < num; i++) {
        const char *n = v->get_device_name(list[i]);
        g_string_append_printf(names, i ? ", %s" : "%s", n);
        if (!dev && (!name || !strcmp(n, name)))
            dev = list[i];
    }
    struct ibv_context *ctx = NULL;
    if (!dev)
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_NO_DEVICE, "no RDMA device '%s' (there are: %s)",
                    name, names->str);
    else if (!(ctx = v->open_device(dev)))
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_RUN, "ibv_open_device(%s): %s",
                    v->get_device_name(dev), g_strerror(errno));
    g_string_free(names, TRUE);
    /* the list may go only after the device is open (replay.md 1.1) */
    v->free_device_list(list);
    return ctx;
}
