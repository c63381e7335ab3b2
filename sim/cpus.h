/* How many CPUs this process may run on. */
#ifndef ROCESIM_CPUS_H
#define ROCESIM_CPUS_H
#include <stdint.h>

/* The CPUs in this process's affinity mask (what taskset, cgroup cpusets and mpirun's
 * binding leave it), else the CPUs online; at least 1. GLib's g_get_num_processors counts
 * the CPUs online here (2.74), whatever the mask. */
uint32_t cpus_available(void);
/* The CPUs online on this machine; at least 1. */
uint32_t cpus_online(void);

#endif
