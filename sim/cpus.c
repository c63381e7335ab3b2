/* How many CPUs this process may run on (cpus.h). */
#define _GNU_SOURCE
#include "sim/cpus.h"
#include <glib.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

uint32_t cpus_online(void)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online < 1 ? 1 : (uint32_t)online;
}

/* The whole CPUs a quota of q us every p us grants, at least one; 0 for none (q <= 0). */
static uint32_t whole_cpus(long long q, long long p)
{
    if (q <= 0 || p <= 0)
        return 0;
    long long n = q / p;
    return n < 1 ? 1 : n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* The tighter of two limits, 0 meaning none. */
static uint32_t tighter(uint32_t a, uint32_t b) { return a && b ? MIN(a, b) : a ? a : b; }

/* The text of dir/name, or NULL. Free with g_free. */
static char *read_in(const char *dir, const char *name)
{
    char *path = g_build_filename(dir, name, NULL), *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL))
        text = NULL;
    g_free(path);
    return text;
}

/* cgroup v2's cpu.max in dir: "max PERIOD" (none) or "QUOTA PERIOD". */
static uint32_t quota_v2(const char *dir)
{
    char *text = read_in(dir, "cpu.max");
    long long q, p;
    uint32_t n = text && sscanf(text, "%lld %lld", &q, &p) == 2 ? whole_cpus(q, p) : 0;
    g_free(text);
    return n;
}

static long long number_in(const char *dir, const char *name)
{
    char *text = read_in(dir, name);
    long long v;
    if (!text || sscanf(text, "%lld", &v) != 1)
        v = -1;
    g_free(text);
    return v;
}

/* cgroup v1's cpu.cfs_quota_us (-1: none) and cpu.cfs_period_us in dir. */
static uint32_t quota_v1(const char *dir)
{
    return whole_cpus(number_in(dir, "cpu.cfs_quota_us"), number_in(dir, "cpu.cfs_period_us"));
}

/* The tightest quota of the cgroup at `path` (absolute) under `base` and of its ancestors (a
 * parent's limit binds its children; inside a container the hierarchy's root is often the
 * container's own cgroup, whatever path /proc/self/cgroup names). */
static uint32_t tightest_up(const char *base, const char *path, uint32_t (*quota)(const char *dir))
{
    char *rel = g_strdup(path);
    uint32_t least = 0;
    for (;;) {
        char *dir = g_build_filename(base, rel, NULL);
        least = tighter(least, quota(dir));
        g_free(dir);
        if (strcmp(rel, "/") == 0)
            break;
        char *parent = g_path_get_dirname(rel); /* "/a/b" -> "/a" -> "/" */
        g_free(rel);
        rel = parent;
    }
    g_free(rel);
    return least;
}

static bool has_controller(const char *list, const char *name)
{
    char **c = g_strsplit(list, ",", -1);
    bool found = false;
    for (int i = 0; c[i] && !found; i++)
        found = strcmp(c[i], name) == 0;
    g_strfreev(c);
    return found;
}

uint32_t cpus_quota(const char *proc_cgroup, const char *root)
{
    char **lines = g_strsplit(proc_cgroup, "\n", -1);
    uint32_t least = 0;
    for (int i = 0; lines[i]; i++) {
        /* ID:CONTROLLERS:PATH (cgroups(7)); v2 is "0::PATH" */
        char **f = g_strsplit(lines[i], ":", 3);
        if (f[0] && f[1] && f[2] && f[2][0] == '/') {
            if (strcmp(f[0], "0") == 0 && f[1][0] == '\0') {
                char *unified = g_build_filename(root, "unified", NULL); /* a hybrid layout's v2 */
                least = tighter(least, tighter(tightest_up(root, f[2], quota_v2), tightest_up(unified, f[2], quota_v2)));
                g_free(unified);
            } else if (has_controller(f[1], "cpu")) {
                /* the hierarchy is named by its controllers ("cpu,cpuacct"), often with a "cpu" link */
                char *own = g_build_filename(root, f[1], NULL), *cpu = g_build_filename(root, "cpu", NULL);
                least = tighter(least, tighter(tightest_up(own, f[2], quota_v1), tightest_up(cpu, f[2], quota_v1)));
                g_free(own);
                g_free(cpu);
            }
        }
        g_strfreev(f);
    }
    g_strfreev(lines);
    return least;
}

uint32_t cpus_available(void)
{
    cpu_set_t set;
    uint32_t n = sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0 ? (uint32_t)CPU_COUNT(&set)
                                                                                   : cpus_online();
    char *text = NULL;
    if (g_file_get_contents("/proc/self/cgroup", &text, NULL, NULL)) {
        uint32_t q = cpus_quota(text, "/sys/fs/cgroup");
        if (q && q < n)
            n = q;
    }
    g_free(text);
    return n;
}
