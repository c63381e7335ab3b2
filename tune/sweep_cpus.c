/* The CPUs of a sweep's lanes (sweep_cpus.h). */
#define _GNU_SOURCE
#include "tune/sweep_cpus.h"
#include <sched.h>
#include <string.h>
#include "sim/cpus.h"

guint sweep_cpus_share(int *all, guint n, guint online, int local_rank, int local_size)
{
    if (n < online || local_size <= 1 || local_rank < 0 || local_rank >= local_size)
        return n;
    guint part = MAX(1u, n / (guint)local_size), from = ((guint)local_rank * part) % n;
    int tmp[CPU_SETSIZE];
    for (guint i = 0; i < part; i++)
        tmp[i] = all[(from + i) % n];
    memcpy(all, tmp, part * sizeof *all);
    return part;
}

guint sweep_cpus_mine(const struct mpi_split *m, int *cpu)
{
    cpu_set_t set;
    guint n = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &set))
                cpu[n++] = c;
    if (n == 0) {
        cpu[0] = 0;
        return 1;
    }
    n = sweep_cpus_share(cpu, n, cpus_online(), m ? m->local_rank : 0, m ? m->local_size : 1);
    /* a cgroup CPU quota may grant fewer than the mask holds (ranks sharing one quota each
     * take it whole: not divided among them) */
    return MIN(n, cpus_available());
}

guint sweep_lane_cpus(const int *cpu, guint n, guint lanes, guint k, int *out)
{
    guint w = MAX(1u, n / MAX(1u, lanes));
    for (guint i = 0; i < w; i++)
        out[i] = cpu[(k * w + i) % n];
    return w;
}
