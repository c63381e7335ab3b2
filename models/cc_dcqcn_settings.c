/* DCQCN's settings: the [dcqcn] keys and the presets [nic] cc_preset names (defaults by name,
 * see shared/reference/models.md section 1.3.4). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "models/cc.h"
#include "models/cc_dcqcn.h"

#define D(field) offsetof(struct dcqcn_params, field)
/* no defaults here: they come from the preset */
const struct cfg_key cc_dcqcn_keys[] = {
    { "dcqcn", "min_time_between_cnps", CFG_TIME, D(min_time_between_cnps), NULL, NULL, 0, 0, 0 },
    { "dcqcn", "dce_tcp_rtt", CFG_TIME, D(dce_tcp_rtt), NULL, NULL, 0, 0, 0 },
    { "dcqcn", "dce_tcp_g", CFG_UINT, D(dce_tcp_g), NULL, NULL, 0, 1024, 4 },
    { "dcqcn", "g", CFG_DOUBLE, D(g), NULL, NULL, 0, 1, 0 },
    { "dcqcn", "initial_alpha_value", CFG_UINT, D(initial_alpha_value), NULL, NULL, 0, 1024, 4 },
    { "dcqcn", "rate_reduce_monitor_period", CFG_TIME, D(rate_reduce_monitor_period), NULL, NULL, 0, 0, 0 },
    { "dcqcn", "rpg_time_reset", CFG_TIME, D(rpg_time_reset), NULL, NULL, 0, 0, 0 },
    { "dcqcn", "rpg_byte_reset", CFG_SIZE, D(rpg_byte_reset), NULL, NULL, 0, 0, 0 },
    { "dcqcn", "rpg_threshold", CFG_UINT, D(rpg_threshold), NULL, NULL, 1, 1000, 4 },
    { "dcqcn", "rpg_ai_rate", CFG_RATE, D(rpg_ai_rate), NULL, NULL, 0, 0, 0 },
    { "dcqcn", "rpg_hai_rate", CFG_RATE, D(rpg_hai_rate), NULL, NULL, 0, 0, 0 },
    { "dcqcn", "rpg_min_rate", CFG_RATE, D(rpg_min_rate), NULL, NULL, 0, 0, 0 },
    { "dcqcn", "rpg_max_rate", CFG_RATE, D(rpg_max_rate), NULL, NULL, 0, 0, 0 },
    { "dcqcn", "rate_to_set_on_first_cnp", CFG_RATE, D(rate_to_set_on_first_cnp), NULL, NULL, 0, 0, 0 },
    { "dcqcn", "rpg_gd", CFG_UINT, D(rpg_gd), NULL, NULL, 10, 20, 4 },
    { "dcqcn", "rpg_min_dec_fac", CFG_UINT, D(rpg_min_dec_fac), NULL, NULL, 0, 100, 4 },
    { "dcqcn", "clamp_tgt_rate", CFG_BOOL, D(clamp_tgt_rate), NULL, NULL, 0, 0, 0 },
    { "dcqcn", "clamp_tgt_rate_after_time_inc", CFG_BOOL, D(clamp_tgt_rate_after_time_inc), NULL, NULL, 0, 0, 0 },
    { "dcqcn", "release_at_line_rate", CFG_BOOL, D(release_at_line_rate), NULL, NULL, 0, 0, 0 },
    { "dcqcn", "style", CFG_ENUM, D(style), NULL, "gated|paper|hpcc", 0, 0, 0 },
    { "dcqcn", "cnp_scope", CFG_ENUM, D(cnp_scope), NULL, "qp|port|destination", 0, 0, 0 },
    { "dcqcn", "np_feedback", CFG_ENUM, D(np_feedback), NULL, "cnp|ack_flag", 0, 0, 0 },

    CFG_END,
};
#undef D

/* Presets: DCQCN defaults by name, see shared/reference/models.md section 1.3.4. Values are
 * written as scenario text so they go through the same parser as user input. {rate} scales
 * with the host rate where the preset does (HPCC's BW/25G rules). */
struct preset_kv {
    const char *key, *value;
};
struct preset {
    const char *name;
    struct preset_kv kv[24];
};
static const struct preset presets[] = {
    { "connectx", {
        { "style", "gated" },
        { "np_feedback", "cnp" },
        { "cnp_scope", "qp" },               /* DCQCN's per-flow NP; see README "CNP moderation" */
        { "min_time_between_cnps", "4us" },
        { "dce_tcp_rtt", "1us" },
        { "dce_tcp_g", "1019" },
        { "initial_alpha_value", "1023" },
        { "rate_reduce_monitor_period", "4us" },
        { "rpg_time_reset", "300us" },
        { "rpg_byte_reset", "32767B" },
        { "rpg_threshold", "1" },
        { "rpg_ai_rate", "5Mbps" },
        { "rpg_hai_rate", "50Mbps" },
        { "rpg_min_rate", "1Mbps" },
        { "rpg_max_rate", "0bps" },
        { "rate_to_set_on_first_cnp", "0bps" },
        { "rpg_gd", "11" },
        { "rpg_min_dec_fac", "50" },
        { "clamp_tgt_rate", "off" },
        { "clamp_tgt_rate_after_time_inc", "on" },
        { "release_at_line_rate", "on" },
        { NULL, NULL } } },
    { "dcqcn_paper", {
        { "style", "paper" },
        { "np_feedback", "cnp" },
        { "cnp_scope", "qp" },               /* N = 50 us per flow (DCQCN15 NP) */
        { "min_time_between_cnps", "50us" },
        { "dce_tcp_rtt", "55us" },
        { "dce_tcp_g", "1020" },            /* g = 4/1024 = 1/256 */
        { "initial_alpha_value", "1024" },
        { "rate_reduce_monitor_period", "0ps" },
        { "rpg_time_reset", "55us" },
        { "rpg_byte_reset", "10MB" },
        { "rpg_threshold", "5" },
        { "rpg_ai_rate", "40Mbps" },
        { "rpg_hai_rate", "200Mbps" },
        { "rpg_min_rate", "100Mbps" },
        { "rpg_max_rate", "0bps" },
        { "rate_to_set_on_first_cnp", "0bps" },
        { "rpg_gd", "11" },
        { "rpg_min_dec_fac", "0" },
        { "clamp_tgt_rate", "on" },
        { "clamp_tgt_rate_after_time_inc", "off" },
        { "release_at_line_rate", "off" },
        { NULL, NULL } } },
    { "hpcc_ns3", {
        { "style", "hpcc" },
        { "np_feedback", "ack_flag" },       /* CNP flag in the ACK of each CE packet (rdma-hw.cc) */
        { "cnp_scope", "qp" },
        { "min_time_between_cnps", "0ps" },  /* no moderation */
        { "dce_tcp_rtt", "1us" },
        { "dce_tcp_g", "1020" },
        { "initial_alpha_value", "1024" },
        { "rate_reduce_monitor_period", "4us" },
        { "rpg_time_reset", "300us" },
        { "rpg_byte_reset", "0B" },
        { "rpg_threshold", "1" },
        { "rpg_ai_rate", "{5}" },        /* 5 Mb/s x BW/25G */
        { "rpg_hai_rate", "{50}" },      /* 50 Mb/s x BW/25G */
        { "rpg_min_rate", "1000Mbps" },
        { "rpg_max_rate", "0bps" },
        { "rate_to_set_on_first_cnp", "0bps" },
        { "rpg_gd", "11" },
        { "rpg_min_dec_fac", "0" },
        { "clamp_tgt_rate", "off" },
        { "clamp_tgt_rate_after_time_inc", "on" },
        { "release_at_line_rate", "off" },
        { NULL, NULL } } },
};

gboolean cc_dcqcn_derive(void *params, struct scenario *s, GKeyFile *kf, GError **err)
{
    struct dcqcn_params *dp = params;
    const struct preset *p = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(presets); i++)
        if (!strcmp(presets[i].name, s->cc_preset))
            p = &presets[i];
    if (!p) {
        scenario_key_error(err, s, "nic", "cc_preset", s->cc_preset,
                           "unknown preset: expected connectx, dcqcn_paper or hpcc_ns3");
        return FALSE;
    }
    const struct cfg_block block = { cc_dcqcn_keys, cfg_count(cc_dcqcn_keys), dp };
    for (const struct preset_kv *kv = p->kv; kv->key; kv++) {
        if (g_key_file_has_key(kf, "dcqcn", kv->key, NULL))
            continue; /* the scenario overrides the preset */
        char *v;
        if (kv->value[0] == '{') /* Mb/s scaled by host rate / 25G */
            v = g_strdup_printf("%" G_GUINT64_FORMAT "bps",
                                (uint64_t)((unsigned __int128)(uint64_t)atoi(kv->value + 1) * 1000000u * s->host_rate /
                                           25000000000u)); /* 128 bits: no overflow at any host rate */
        else
            v = g_strdup(kv->value);
        gboolean ok = cfg_set_value(&block, cfg_find(&block, "dcqcn", kv->key), s->path, v, err);
        g_free(v);
        if (!ok)
            return FALSE;
    }
    /* dce_tcp_g is the weight kept by the old alpha (in 1/1024); `g` overrides it directly. */
    if (!g_key_file_has_key(kf, "dcqcn", "g", NULL))
        dp->g = (1024.0 - dp->dce_tcp_g) / 1024.0;
    for (uint32_t k = 0; k < DCQCN_DECAY_STEPS; k++) /* the same call alpha_to makes: the same bits */
        dp->decay[k] = pow(1 - dp->g, (double)k);
    return TRUE;
}

gboolean cc_dcqcn_validate(const void *params, const struct scenario *s, GError **err)
{
    const struct dcqcn_params *dp = params;
    if (dp->dce_tcp_rtt == 0) {
        scenario_key_error(err, s, "dcqcn", "dce_tcp_rtt", "0s", "expected a positive alpha update period");
        return FALSE;
    }
    if (dp->rpg_time_reset == 0) {
        scenario_key_error(err, s, "dcqcn", "rpg_time_reset", "0s", "expected a positive increase timer");
        return FALSE;
    }
    return TRUE;
}

struct dcqcn_params *cc_dcqcn_params(const struct scenario *s) { return cc_params(s, &cc_dcqcn_ops); }
