/* How many CPUs this process may run on. */
#ifndef ROCESIM_CPUS_H
#define ROCESIM_CPUS_H
#include <stdint.h>

/* The CPUs in this process's affinity mask (what taskset, cgroup cpusets and mpirun's
 * binding leave it), else the CPUs online, and no more than the whole CPUs of a cgroup CPU
 * quota (docker --cpus, a Kubernetes CPU limit); at least 1. GLib's g_get_num_processors
 * counts the CPUs online here (2.74), whatever the mask or the quota. */
uint32_t cpus_available(void);
/* The whole CPUs (at least 1) of the least CPU quota that binds a process whose
 * /proc/self/cgroup reads `proc_cgroup`, with the hierarchies mounted under `root`
 * (/sys/fs/cgroup): cgroup v2's cpu.max, v1's cpu.cfs_quota_us / cpu.cfs_period_us, in its
 * cgroup or an ancestor; 0 when none binds. */
uint32_t cpus_quota(const char *proc_cgroup, const char *root);
/* The CPUs online on this machine; at least 1. */
uint32_t cpus_online(void);

#endif
