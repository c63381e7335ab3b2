/* The lab map: which machine plays each schedule host.
 *
 *   # host <schedule-host> <machine> <rdma-device> <netdev> <ipv4> <leaf>
 *   host 0 lab1 mlx5_0 ens1f0np0 192.168.10.1 0
 *   host 1 lab2 mlx5_0 ens1f0np0 192.168.10.2 0
 *
 * One line per schedule host 0..n-1 (each exactly once); '-' for a device or netdev the
 * transport does not need (udp). '#' comments and blank lines are ignored. Errors name the
 * file and line. */
#ifndef ROCESIM_REPLAY_HOSTMAP_H
#define ROCESIM_REPLAY_HOSTMAP_H
#include <glib.h>
#include <netinet/in.h>
#include <stdint.h>

/* the highest schedule host a map may name */
#define HOSTMAP_MAX_HOST 1000000u

struct host_entry {
    char *machine, *device, *netdev;
    struct in_addr addr;
    uint32_t leaf;
};

struct hostmap {
    struct host_entry *h;
    uint32_t n;         /* entries: the highest host mapped + 1 */
    guint8 *mapped;     /* mapped[i]: host i has a line (all of them unless a subset) */
};

struct hostmap *hostmap_read(const char *path, GError **err);
/* As hostmap_read, but hosts may be left out (replay --subset): their entries are empty. */
struct hostmap *hostmap_read_subset(const char *path, GError **err);
/* Every host on this machine over loopback: host h is 127.0.0.(h+1). */
struct hostmap *hostmap_loopback(uint32_t n);
void hostmap_free(struct hostmap *m);

#endif
