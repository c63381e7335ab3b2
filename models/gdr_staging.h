/* GPUDirect RDMA off on a server: inter-server transfers staged through host memory. */
#ifndef ROCESIM_GDR_STAGING_H
#define ROCESIM_GDR_STAGING_H
#include "models/schedule.h"
#include "models/topology.h"

/* Returns `in` unchanged when every server has GPUDirect, else a new schedule (in is freed)
 * in which every transfer between GPUs of different servers that touches a server without
 * GPUDirect goes through that server's staging buffer of the transfer's rail (see the .c). */
struct schedule *gdr_staging_apply(struct schedule *in, const struct topology *t);

#endif
