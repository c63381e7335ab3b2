/* NIC counters sampled during a replay, for counters.csv: the device's hw_counters
 * (IB_ROOT/DEV/ports/PORT/hw_counters) and the netdev's ethtool statistics, read every
 * interval; each sample after the first becomes one row per counter holding its increase
 * since the previous sample (counter_delta: a counter that went down was reset). Names are
 * the driver's own (mlx5: np_cnp_sent, rp_cnp_handled, rx_prio3_pause, ...). */
#ifndef ROCESIM_REPLAY_SAMPLER_H
#define ROCESIM_REPLAY_SAMPLER_H
#include <glib.h>
#include <stdint.h>
#include "replay/nic_sysfs.h"

struct sampler {
    char *ib_root, *device, *netdev;   /* device/netdev NULL: that source is not read */
    unsigned port;
    int64_t interval_ns, next;         /* interval 0: sample only at begin and end */
    struct counter_set hw, eth;        /* the previous sample */
    GString *rows;                     /* "t_ns,port,name,delta\n" on the local clock */
    GThread *thread;                   /* sampler_run: samples off the replay's loop */
    GMutex lock;
    GCond wake;
    gboolean stopping;
};

/* Takes the first sample at local time now. */
void sampler_begin(struct sampler *s, const char *ib_root, const char *device, unsigned port,
                   const char *netdev, int64_t interval_ns, int64_t now);
/* Samples when the interval is up; returns the next time it wants to run (INT64_MAX: never). */
int64_t sampler_tick(struct sampler *s, int64_t now);
/* Samples from a thread of its own every interval (CLOCK_MONOTONIC), so that reading the
 * counters (mlx5 asks the firmware: milliseconds) never delays a transfer's start. */
void sampler_run(struct sampler *s);
/* Stops the thread if any, takes a last sample at now; the rows (caller frees). */
char *sampler_end(struct sampler *s, int64_t now);
void sampler_clear(struct sampler *s);

#endif
