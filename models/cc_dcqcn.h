/* DCQCN's settings ([dcqcn] and the [nic] cc_preset presets), shared by the reaction point
 * (models/cc_dcqcn.c) and the notification point (models/nic.c). */
#ifndef ROCESIM_CC_DCQCN_H
#define ROCESIM_CC_DCQCN_H
#include <stdbool.h>
#include <stdint.h>
#include "models/scenario.h"
#include "sim/simtime.h"

/* gated: ConnectX firmware (periodic alpha, gated decrease); paper: SIGCOMM 2015 (each CNP cuts);
 * hpcc: HPCC ns-3's Mellanox model (RdmaHw::*Mlx), see models/cc_dcqcn.c */
enum dcqcn_style { DCQCN_GATED = 0, DCQCN_PAPER, DCQCN_HPCC };
/* Which data packets a notification point may answer with a CNP: one per min_time_between_cnps
 * per QP, per receiving port, or per (receiving port, sender) */
enum cnp_scope { CNP_PER_QP = 0, CNP_PER_PORT, CNP_PER_DESTINATION };
/* cnp: a CNP packet per CE-marked packet (moderated); ack_flag: every CE-marked packet is ACKed at
 * once with a CNP flag (HPCC ns-3, no CNP packet, no moderation) */
enum np_feedback { NP_CNP = 0, NP_ACK_FLAG };

#define DCQCN_DECAY_STEPS 512

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
    /* derived (cc_dcqcn_derive, which every scenario_load runs): decay[k] = pow(1 - g, k),
     * what alpha_to would compute, looked up: a QP of a large AllToAll is visited about once
     * every 80 alpha periods, and pow was 1.6 % of bench/large.ini's instructions */
    double decay[DCQCN_DECAY_STEPS];
};

/* models/cc_dcqcn_settings.c: the [dcqcn] keys, presets and checks */
extern const struct cfg_key cc_dcqcn_keys[];
gboolean cc_dcqcn_derive(void *params, struct scenario *s, GKeyFile *kf, GError **err);
gboolean cc_dcqcn_validate(const void *params, const struct scenario *s, GError **err);
/* The [dcqcn] block of S (also read by the NP when another algorithm runs: it is always loaded). */
struct dcqcn_params *cc_dcqcn_params(const struct scenario *s);

#endif
