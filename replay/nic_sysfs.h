/* What the kernel says about a RoCE NIC, read from sysfs (root configurable, so tests use
 * fixture trees) and the ethtool ioctl:
 *   - the RoCE v2 GID index of an address: IB/ports/P/gids/N, gid_attrs/types/N ("RoCE v2"),
 *     gid_attrs/ndevs/N (the netdev: a VLAN or bond device when the address is on one);
 *   - hw_counters: IB/ports/P/hw_counters/<name>, one decimal per file;
 *   - ethtool -S statistics (per-priority pause frames and durations, ECN marks, discards);
 *   - counter deltas across resets (a counter that went down was reset: count from zero). */
#ifndef ROCESIM_REPLAY_NIC_SYSFS_H
#define ROCESIM_REPLAY_NIC_SYSFS_H
#include <glib.h>
#include <stdint.h>

/* The GID index on IB_ROOT/DEV/ports/PORT whose type is RoCE v2 and whose GID is `addr`
 * (an IPv4 address as ::ffff:a.b.c.d, or an IPv6 one) and, when netdev is not NULL, whose
 * ndev is netdev. -1 and *err naming what was there otherwise. */
int nic_gid_index(const char *ib_root, const char *dev, unsigned port, const char *addr,
                  const char *netdev, GError **err);

struct counter_set {
    GPtrArray *names;   /* char * */
    GArray *values;     /* uint64_t */
};
void counter_set_clear(struct counter_set *c);
/* Every file of IB_ROOT/DEV/ports/PORT/hw_counters (names sorted). */
gboolean nic_hw_counters(const char *ib_root, const char *dev, unsigned port,
                         struct counter_set *c, GError **err);
/* ethtool -S of ifname through SIOCETHTOOL (ETHTOOL_GSSET_INFO, GSTRINGS, GSTATS). */
gboolean nic_ethtool_stats(const char *ifname, struct counter_set *c, GError **err);
/* The increase from prev to cur of a counter that may have been reset in between. */
static inline uint64_t counter_delta(uint64_t prev, uint64_t cur) { return cur >= prev ? cur - prev : cur; }

#endif
