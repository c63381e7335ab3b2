/* Opening an RDMA device through the verbs table (see verbs.h). */
#include "replay/verbs.h"
#include <errno.h>
#include <string.h>
#include "replay/replay.h"

static const struct verbs_fns real = {
    .get_device_list = ibv_get_device_list,
    .free_device_list = ibv_free_device_list,
    .get_device_name = ibv_get_device_name,
    .open_device = ibv_open_device,
    .close_device = ibv_close_device,
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
