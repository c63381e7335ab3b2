/* What a rank knows about its own host and NIC, for summary.json and counters.csv: host name,
 * netdev, driver and firmware (ethtool GDRVINFO), link speed (sysfs), the DCQCN knobs and
 * their scenario fragment (nic_knobs.h), and the ethtool statistics at the start and end of
 * the run (their deltas go to counters.csv). */
#ifndef ROCESIM_REPLAY_HOSTINFO_H
#define ROCESIM_REPLAY_HOSTINFO_H
#include <glib.h>
#include "replay/nic_sysfs.h"

struct hostinfo {
    char *netdev;                 /* NULL: none to read (loopback, '-') */
    char *net_root, *debugfs_root;
    struct counter_set start;     /* ethtool statistics at the start (names may be empty) */
};

void hostinfo_begin(struct hostinfo *h, const char *netdev, const char *net_root,
                    const char *debugfs_root);
/* The JSON object text describing the host, with "counters": the ethtool deltas since
 * hostinfo_begin (a counter that went down was reset), and "samples": the rows of the
 * counter sampler (sampler.h), when not NULL. */
char *hostinfo_end(struct hostinfo *h, const char *samples);
void hostinfo_clear(struct hostinfo *h);

#endif
