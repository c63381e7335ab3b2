/* pcap captures into a results folder (the method is described at the top of
 * analysis/pcap_stats.c). The command line is cli/cmd_pcap_stats.c. */
#ifndef ROCESIM_PCAP_STATS_H
#define ROCESIM_PCAP_STATS_H
#include <glib.h>

enum pcap_stats_outcome { PCAP_STATS_OK = 0, PCAP_STATS_WRITE_FAILED, PCAP_STATS_BAD_INPUT };

struct pcap_stats_opts {
    char **files;            /* capture files, NULL-terminated: one capture point each */
    const char *out;         /* results folder; NULL: FIRST_FILE.stats */
    const char *interval;    /* rates.csv interval; NULL: 10us */
    const char *link_rate;   /* turns PFC quanta into time; NULL: 100Gbps */
    gboolean absolute_time;  /* keep the capture's clock */
};

/* Reads the captures and installs the folder; errors and warnings go to stderr. */
enum pcap_stats_outcome pcap_stats_run(const struct pcap_stats_opts *o);

#endif
