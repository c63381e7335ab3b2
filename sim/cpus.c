/* How many CPUs this process may run on (cpus.h). */
#define _GNU_SOURCE
#include "sim/cpus.h"
#include <sched.h>
#include <unistd.h>

uint32_t cpus_online(void)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online < 1 ? 1 : (uint32_t)online;
}

uint32_t cpus_available(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return (uint32_t)CPU_COUNT(&set);
    return cpus_online();
}
