/* The verbs transport's access to libibverbs: every ibv_* call goes through one table of
 * function pointers, so tests can run the path over a fake provider. verbs_real() is the table
 * of libibverbs itself. */
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
};

const struct verbs_fns *verbs_real(void);

/* Opens the RDMA device `name` (NULL: the first one). With none: REPLAY_ERROR_NO_DEVICE and
 * "no RDMA device (ibv_get_device_list: <why>)"; a name not found lists the devices there are. */
struct ibv_context *verbs_open(const struct verbs_fns *v, const char *name, GError **err);

#endif
