/* HPCC's settings ([hpcc]) and the base RTT and window it derives from the fabric. */
#ifndef ROCESIM_CC_HPCC_H
#define ROCESIM_CC_HPCC_H
#include <stdbool.h>
#include <stdint.h>
#include "models/scenario.h"
#include "sim/simtime.h"

/* HPCC (models.md 6.1): the HPCC ns-3 run.py values, see models/cc_hpcc.c */
struct hpcc_params {
    double eta;                      /* target utilisation U_TARGET */
    uint32_t max_stage;              /* MI_THRESH: additive steps before a multiplicative one */
    uint64_t rate_ai, min_rate;      /* W_AI as a rate; R_min */
    uint32_t expected_flows;         /* 0, or N: rate_ai sized for N flows per link */
    bool fast_react;                 /* per-ACK updates between the per-RTT ones */
    bool var_win;                    /* window = W x R / R_max */
    uint32_t int_multi;              /* INT byte/qlen unit multiplier */
    simtime_t base_rtt;              /* T; 0 = the fabric's longest base RTT */
    uint64_t window;                 /* W in bytes; 0 = T x host rate */
    bool global_t;                   /* one T and W for every QP (the fabric's largest) */
};

struct hpcc_params *cc_hpcc_params(const struct scenario *s);
/* HPCC's base RTT T and window W of a fabric ([hpcc] base_rtt and window, or derived, see
 * models/cc_hpcc.c); false with *why set when the topology gives no T. */
bool hpcc_fabric_rtt(const struct scenario *s, simtime_t *T, uint64_t *W, const char **why);

#endif
