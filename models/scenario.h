/* Scenario file (GLib key file) -> struct scenario, with every default filled in and every
 * error reported as "FILE: [section] key = 'value': what was expected". The fixed sections'
 * keys are here (models/scenario_keys.c); each congestion-control algorithm declares its own
 * section, keys and presets in its file (models/cc_registry.h); sim/config.c is the generic
 * loader under both. */
#ifndef ROCESIM_SCENARIO_H
#define ROCESIM_SCENARIO_H
#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "models/cc_registry.h"
#include "models/topology_registry.h"
#include "sim/config.h"
#include "sim/simtime.h"

#define SCENARIO_ERROR CFG_ERROR

/* How a switch picks among equal-cost next hops: per flow (hash of the 5-tuple), per flowlet
 * (a new pick after an idle gap), per packet at random, or per packet to the emptiest egress. */
enum lb_kind { LB_ECMP = 0, LB_FLOWLET, LB_SPRAY, LB_ADAPTIVE };
/* What an RC responder does with a packet past its expected PSN: NAK and discard (go-back-N,
 * ordinary RC NICs) or place it and acknowledge cumulatively (NICs with adaptive-routing support). */
enum rx_order { RX_GO_BACK_N = 0, RX_OOO_PLACE };
enum ecn_mark_at { MARK_DEQUEUE = 0, MARK_ENQUEUE };
struct hostlist {
    uint32_t *ids;
    uint32_t n;
};

struct scenario {
    char *path;            /* file it came from */
    char *dir;             /* its folder (relative paths in the scenario resolve here) */
    /* [scenario] */
    char *name;
    uint64_t seed;
    simtime_t stop;
    /* [topology] */
    enum topo_kind topo;
    uint32_t leaves, spines, hosts_per_leaf;
    uint64_t host_rate, fabric_rate;
    simtime_t link_delay, host_link_delay;
    char *edges_file;
    /* [switch] */
    uint64_t buffer;
    bool ecn;
    uint64_t ecn_kmin, ecn_kmax;
    double ecn_pmax;
    enum ecn_mark_at ecn_mark;
    /* PFC and the MMU ([switch]) */
    bool pfc;
    char *lossless_priorities_text, *xoff_text, *headroom_text, *cable_length_text, *watchdog_text;
    uint8_t lossless_mask;     /* parsed lossless_priorities */
    uint64_t xoff;             /* 0 = dynamic */
    double pfc_alpha, egress_alpha;
    uint64_t xon_offset, reserve;
    uint64_t headroom;         /* 0 = auto */
    double cable_length_m;     /* < 0 = derive from the link delay */
    simtime_t pfc_watchdog;    /* 0 = off */
    simtime_t pfc_watchdog_restore;
    uint32_t pfc_pause_quanta;
    simtime_t deadlock_threshold;
    char *dwrr_text;
    uint32_t dwrr_weight[8];   /* DWRR weight per data priority (1 = equal share) */
    /* [nic] */
    uint32_t mtu;
    int cc;                /* index into cc_registry (models/cc_registry.h) */
    char *cc_preset;
    simtime_t route_convergence;     /* [switch]: until remote switches route around a failed link */
    int host_rate_from_edges;        /* host_rate taken from an edge list: 1 all host links alike, 2 the fastest */
    uint32_t ack_every;
    simtime_t rto, nak_interval;
    uint8_t data_priority, cnp_priority, ack_priority;
    bool nic_pfc;
    uint64_t nic_rx_buffer;
    /* each algorithm's own section ([dcqcn], [hpcc], ...), as its cc_ops declares it */
    void *cc_params[CC_COUNT];
    /* load balancing ([switch] load_balance, flowlet_gap; [nic] receiver) */
    enum lb_kind lb;
    simtime_t flowlet_gap;
    enum rx_order rx_order;
    uint32_t qps_per_connection;   /* NCCL_IB_QPS_PER_CONNECTION */
    bool split_data_on_qps;        /* NCCL_IB_SPLIT_DATA_ON_QPS */
    /* workloads and faults, in file order */
    GPtrArray *workloads;  /* struct named_section* */
    GPtrArray *faults;
    /* [server] and [cluster] as text (NULL when absent): multi-GPU servers, models/server.c */
    struct named_section *server, *cluster;
    /* [output] */
    char *out_dir;
    simtime_t queue_sample;    /* queues.csv and rates.csv: sampled when changed */
    simtime_t counter_sample;
    char *sample_ports;        /* auto | all | busiest:N | NODE:PORT,... (results_io/select.h) */
    char *sample_scale;        /* auto | N: the sampling periods' multiplier */
    int compress;              /* 0 off, 1 gzip: the time series as NAME.csv.gz */
    bool plots;
    char *pcap;
    uint32_t pcap_snaplen;

    GKeyFile *expanded;    /* every key with its effective value, for summary.json and check */
};

/* Loads and validates a scenario; `sets` are "section.key=value" overrides (may be NULL). */
struct scenario *scenario_load(const char *path, const char *const *sets, GError **err);
void scenario_free(struct scenario *s);

/* Host lists: "0-15,20". Every id must be < nhosts. */
gboolean hostlist_parse(const char *text, uint32_t nhosts, struct hostlist *out, char **why);
void hostlist_clear(struct hostlist *h);


/* A key of the fixed sections as the loader knows it, for tools that list or document them. */
struct scenario_key_info {
    const char *section, *key;
    const char *deflt;     /* NULL: derived from other keys */
    const char *unit;      /* "size", "rate", "time", or NULL (number, text, switch or choice) */
};
/* The i-th key (0, 1, ...); false past the last. */
bool scenario_key_at(size_t i, struct scenario_key_info *out);

/* Formats a scenario error for a key; used by models that validate their own sections. */
void scenario_key_error(GError **err, const struct scenario *s, const char *section,
                        const char *key, const char *value, const char *fmt, ...)
    G_GNUC_PRINTF(6, 7);

#endif
