/* Scenario file (GLib key file) -> struct scenario, with every default filled in and every
 * error reported as "FILE: [section] key = 'value': what was expected". */
#ifndef ROCESIM_SCENARIO_H
#define ROCESIM_SCENARIO_H
#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "sim/simtime.h"

#define SCENARIO_ERROR scenario_error_quark()
GQuark scenario_error_quark(void);

enum topo_kind { TOPO_LEAF_SPINE = 0, TOPO_EDGES, TOPO_RAIL, TOPO_FATTREE };
enum cc_kind { CC_NONE = 0, CC_DCQCN, CC_DCTCP, CC_TIMELY, CC_HPCC };
/* How a switch picks among equal-cost next hops: per flow (hash of the 5-tuple), per flowlet
 * (a new pick after an idle gap), per packet at random, or per packet to the emptiest egress. */
enum lb_kind { LB_ECMP = 0, LB_FLOWLET, LB_SPRAY, LB_ADAPTIVE };
/* What an RC responder does with a packet past its expected PSN: NAK and discard (go-back-N,
 * ordinary RC NICs) or place it and acknowledge cumulatively (NICs with adaptive-routing support). */
enum rx_order { RX_GO_BACK_N = 0, RX_OOO_PLACE };
enum ecn_mark_at { MARK_DEQUEUE = 0, MARK_ENQUEUE };
/* gated: ConnectX firmware (periodic alpha, gated decrease); paper: SIGCOMM 2015 (each CNP cuts);
 * hpcc: HPCC ns-3's Mellanox model (RdmaHw::*Mlx), see models/cc_dcqcn.c */
enum dcqcn_style { DCQCN_GATED = 0, DCQCN_PAPER, DCQCN_HPCC };
/* Which data packets a notification point may answer with a CNP: one per min_time_between_cnps
 * per QP, per receiving port, or per (receiving port, sender) */
enum cnp_scope { CNP_PER_QP = 0, CNP_PER_PORT, CNP_PER_DESTINATION };
/* cnp: a CNP packet per CE-marked packet (moderated); ack_flag: every CE-marked packet is ACKed at
 * once with a CNP flag (HPCC ns-3, no CNP packet, no moderation) */
enum np_feedback { NP_CNP = 0, NP_ACK_FLAG };

struct dcqcn_params {
    simtime_t min_time_between_cnps; /* NP: CNP spacing within one cnp_scope */
    enum cnp_scope cnp_scope;
    enum np_feedback np_feedback;
    simtime_t dce_tcp_rtt;           /* alpha update period K */
    uint32_t dce_tcp_g;              /* weight of the old alpha, in 1/1024 (see README) */
    double g;                        /* derived: 1 - dce_tcp_g/1024, or set directly */
    uint32_t initial_alpha_value;    /* in 1/1024 */
    simtime_t rate_reduce_monitor_period; /* decrease gate; 0 = decrease on every CNP (paper) */
    simtime_t rpg_time_reset;        /* increase timer T */
    uint64_t rpg_byte_reset;         /* increase byte counter B; 0 = off */
    uint32_t rpg_threshold;          /* F */
    uint64_t rpg_ai_rate, rpg_hai_rate, rpg_min_rate;
    uint64_t rpg_max_rate;           /* 0 = port speed */
    uint64_t rate_to_set_on_first_cnp; /* 0 = keep the current rate */
    uint32_t rpg_gd;                 /* decrease divisor exponent: Rc *= 1 - alpha/2^(gd-10) */
    uint32_t rpg_min_dec_fac;        /* one decrease keeps at least this % of the rate */
    bool clamp_tgt_rate, clamp_tgt_rate_after_time_inc;
    bool release_at_line_rate;       /* back at line rate, the next CNP starts afresh */
    enum dcqcn_style style;
};

/* DCTCP, rate-based as in the HPCC ns-3 model (models.md 6.3) */
struct dctcp_params {
    double g;                        /* alpha gain */
    uint64_t rate_ai;                /* additive increase per window */
    uint64_t min_rate;
};

/* TIMELY (models.md 6.2) */
struct timely_params {
    double alpha, beta;              /* RTT-difference EWMA weight, decrease factor */
    simtime_t t_low, t_high, min_rtt;
    uint64_t rate_ai, rate_hai, min_rate;
};

/* HPCC (models.md 6.1): the HPCC ns-3 run.py values, see models/cc_hpcc.c */
struct hpcc_params {
    double eta;                      /* target utilisation U_TARGET */
    uint32_t max_stage;              /* MI_THRESH: additive steps before a multiplicative one */
    uint64_t rate_ai, min_rate;      /* W_AI as a rate; R_min */
    bool fast_react;                 /* per-ACK updates between the per-RTT ones */
    bool var_win;                    /* window = W x R / R_max */
    uint32_t int_multi;              /* INT byte/qlen unit multiplier */
    simtime_t base_rtt;              /* T; 0 = the fabric's longest base RTT */
    uint64_t window;                 /* W in bytes; 0 = T x host rate */
    bool global_t;                   /* one T and W for every QP (the fabric's largest) */
};

struct hostlist {
    uint32_t *ids;
    uint32_t n;
};

/* One [workload NAME] or [fault NAME] section: kept as validated key/value text, because
 * each kind has its own keys; models/workload turns it into transfers. */
struct named_section {
    char *name;         /* NAME */
    char *kind;
    GHashTable *keys;   /* key -> value (validated strings) */
    GPtrArray *order;   /* key names in file order, for printing */
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
    enum cc_kind cc;
    char *cc_preset;
    simtime_t route_convergence;     /* [switch]: until remote switches route around a failed link */
    int host_rate_from_edges;        /* host_rate taken from an edge list: 1 all host links alike, 2 the fastest */
    uint32_t ack_every;
    simtime_t rto, nak_interval;
    uint8_t data_priority, cnp_priority, ack_priority;
    bool nic_pfc;
    uint64_t nic_rx_buffer;
    /* [dcqcn], [dctcp], [timely] */
    struct dcqcn_params dcqcn;
    struct dctcp_params dctcp;
    struct timely_params timely;
    struct hpcc_params hpcc;
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
    char *sample_ports;        /* auto | all | busiest:N | NODE:PORT,... (results/select.h) */
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
