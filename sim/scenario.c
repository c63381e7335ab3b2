#include "sim/scenario.h"
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim/units.h"

G_DEFINE_QUARK(rocesim-scenario-error, scenario_error)

enum ktype { K_STR, K_UINT, K_DOUBLE, K_SIZE, K_RATE, K_TIME, K_BOOL, K_ENUM };

/* A key of a fixed section. `deflt` NULL means "derived from other keys" (filled in code). */
struct keydef {
    const char *section, *key;
    enum ktype type;
    size_t offset;
    const char *deflt;
    const char *choices;   /* K_ENUM: "a|b|c" (index stored as int); K_UINT/K_DOUBLE: NULL */
    double min, max;       /* numeric bounds for K_UINT / K_DOUBLE */
    int width;             /* K_UINT: 1, 4 or 8 bytes */
};

#define F(field) offsetof(struct scenario, field)
#define D(field) offsetof(struct scenario, dcqcn.field)
static const struct keydef keys[] = {
    { "scenario", "name", K_STR, F(name), "", NULL, 0, 0, 0 },
    { "scenario", "seed", K_UINT, F(seed), "1", NULL, 0, 1.8e19, 8 },
    { "scenario", "stop", K_TIME, F(stop), "1s", NULL, 0, 0, 0 },

    { "topology", "kind", K_ENUM, F(topo), "leaf-spine", "leaf-spine|edges|rail-optimised|fat-tree", 0, 0, 0 },
    { "topology", "leaves", K_UINT, F(leaves), "2", NULL, 1, 4096, 4 },
    { "topology", "spines", K_UINT, F(spines), "2", NULL, 0, 4096, 4 },
    { "topology", "hosts_per_leaf", K_UINT, F(hosts_per_leaf), "8", NULL, 1, 4096, 4 },
    { "topology", "host_rate", K_RATE, F(host_rate), "100Gbps", NULL, 0, 0, 0 },
    { "topology", "fabric_rate", K_RATE, F(fabric_rate), NULL, NULL, 0, 0, 0 },
    { "topology", "link_delay", K_TIME, F(link_delay), "1us", NULL, 0, 0, 0 },
    { "topology", "host_link_delay", K_TIME, F(host_link_delay), NULL, NULL, 0, 0, 0 },
    { "topology", "file", K_STR, F(edges_file), "", NULL, 0, 0, 0 },

    { "switch", "buffer", K_SIZE, F(buffer), "32MB", NULL, 0, 0, 0 },
    { "switch", "ecn", K_BOOL, F(ecn), "on", NULL, 0, 0, 0 },
    { "switch", "ecn_kmin", K_SIZE, F(ecn_kmin), NULL, NULL, 0, 0, 0 },
    { "switch", "ecn_kmax", K_SIZE, F(ecn_kmax), NULL, NULL, 0, 0, 0 },
    { "switch", "ecn_pmax", K_DOUBLE, F(ecn_pmax), "0.2", NULL, 0, 1, 0 },
    { "switch", "ecn_mark", K_ENUM, F(ecn_mark), "dequeue", "dequeue|enqueue", 0, 0, 0 },
    { "switch", "pfc", K_BOOL, F(pfc), "on", NULL, 0, 0, 0 },
    { "switch", "lossless_priorities", K_STR, F(lossless_priorities_text), "3", NULL, 0, 0, 0 },
    { "switch", "xoff", K_STR, F(xoff_text), "dynamic", NULL, 0, 0, 0 },
    { "switch", "pfc_alpha", K_DOUBLE, F(pfc_alpha), "0.125", NULL, 0.001, 64, 0 },
    { "switch", "xon_offset", K_SIZE, F(xon_offset), "3KiB", NULL, 0, 0, 0 },
    { "switch", "reserve", K_SIZE, F(reserve), "4KiB", NULL, 0, 0, 0 },
    { "switch", "headroom", K_STR, F(headroom_text), "auto", NULL, 0, 0, 0 },
    { "switch", "cable_length", K_STR, F(cable_length_text), "auto", NULL, 0, 0, 0 },
    { "switch", "egress_alpha", K_DOUBLE, F(egress_alpha), "8", NULL, 0.001, 1024, 0 },
    { "switch", "pfc_pause_quanta", K_UINT, F(pfc_pause_quanta), "65535", NULL, 1, 65535, 4 },
    { "switch", "pfc_watchdog", K_STR, F(watchdog_text), "off", NULL, 0, 0, 0 },
    { "switch", "pfc_watchdog_restore", K_TIME, F(pfc_watchdog_restore), "200ms", NULL, 0, 0, 0 },
    { "switch", "dwrr_weights", K_STR, F(dwrr_text), "", NULL, 0, 0, 0 },
    { "switch", "deadlock_threshold", K_TIME, F(deadlock_threshold), "1ms", NULL, 0, 0, 0 },
    /* 600 ms: BFD's detection time with Dell SmartFabric OS10's defaults (200 ms x 3); see README */
    { "switch", "route_convergence", K_TIME, F(route_convergence), "600ms", NULL, 0, 0, 0 },

    { "nic", "mtu", K_UINT, F(mtu), "4096", NULL, 256, 4096, 4 },
    { "nic", "cc", K_ENUM, F(cc), "dcqcn", "none|dcqcn|dctcp|timely|hpcc", 0, 0, 0 },
    { "nic", "cc_preset", K_STR, F(cc_preset), "connectx", NULL, 0, 0, 0 },
    { "nic", "ack_every", K_UINT, F(ack_every), "4", NULL, 1, 65535, 4 },
    /* local ACK timeout 4.096us x 2^14, the perftest/rc_pingpong default QP timeout */
    { "nic", "rto", K_TIME, F(rto), "67108864ns", NULL, 0, 0, 0 },
    { "nic", "nak_interval", K_TIME, F(nak_interval), "500us", NULL, 0, 0, 0 },
    { "nic", "data_priority", K_UINT, F(data_priority), "3", NULL, 0, 7, 1 },
    { "nic", "cnp_priority", K_UINT, F(cnp_priority), "6", NULL, 0, 7, 1 },
    { "nic", "ack_priority", K_UINT, F(ack_priority), "6", NULL, 0, 7, 1 },
    { "nic", "pfc", K_BOOL, F(nic_pfc), "on", NULL, 0, 0, 0 },
    { "nic", "rx_buffer", K_SIZE, F(nic_rx_buffer), "256KiB", NULL, 0, 0, 0 },

    /* DCQCN: defaults come from the preset (NULL here). */
    { "dcqcn", "min_time_between_cnps", K_TIME, D(min_time_between_cnps), NULL, NULL, 0, 0, 0 },
    { "dcqcn", "dce_tcp_rtt", K_TIME, D(dce_tcp_rtt), NULL, NULL, 0, 0, 0 },
    { "dcqcn", "dce_tcp_g", K_UINT, D(dce_tcp_g), NULL, NULL, 0, 1024, 4 },
    { "dcqcn", "g", K_DOUBLE, D(g), NULL, NULL, 0, 1, 0 },
    { "dcqcn", "initial_alpha_value", K_UINT, D(initial_alpha_value), NULL, NULL, 0, 1024, 4 },
    { "dcqcn", "rate_reduce_monitor_period", K_TIME, D(rate_reduce_monitor_period), NULL, NULL, 0, 0, 0 },
    { "dcqcn", "rpg_time_reset", K_TIME, D(rpg_time_reset), NULL, NULL, 0, 0, 0 },
    { "dcqcn", "rpg_byte_reset", K_SIZE, D(rpg_byte_reset), NULL, NULL, 0, 0, 0 },
    { "dcqcn", "rpg_threshold", K_UINT, D(rpg_threshold), NULL, NULL, 1, 1000, 4 },
    { "dcqcn", "rpg_ai_rate", K_RATE, D(rpg_ai_rate), NULL, NULL, 0, 0, 0 },
    { "dcqcn", "rpg_hai_rate", K_RATE, D(rpg_hai_rate), NULL, NULL, 0, 0, 0 },
    { "dcqcn", "rpg_min_rate", K_RATE, D(rpg_min_rate), NULL, NULL, 0, 0, 0 },
    { "dcqcn", "rpg_max_rate", K_RATE, D(rpg_max_rate), NULL, NULL, 0, 0, 0 },
    { "dcqcn", "rate_to_set_on_first_cnp", K_RATE, D(rate_to_set_on_first_cnp), NULL, NULL, 0, 0, 0 },
    { "dcqcn", "rpg_gd", K_UINT, D(rpg_gd), NULL, NULL, 10, 20, 4 },
    { "dcqcn", "rpg_min_dec_fac", K_UINT, D(rpg_min_dec_fac), NULL, NULL, 0, 100, 4 },
    { "dcqcn", "clamp_tgt_rate", K_BOOL, D(clamp_tgt_rate), NULL, NULL, 0, 0, 0 },
    { "dcqcn", "clamp_tgt_rate_after_time_inc", K_BOOL, D(clamp_tgt_rate_after_time_inc), NULL, NULL, 0, 0, 0 },
    { "dcqcn", "release_at_line_rate", K_BOOL, D(release_at_line_rate), NULL, NULL, 0, 0, 0 },
    { "dcqcn", "style", K_ENUM, D(style), NULL, "gated|paper|hpcc", 0, 0, 0 },
    { "dcqcn", "cnp_scope", K_ENUM, D(cnp_scope), NULL, "qp|port|destination", 0, 0, 0 },
    { "dcqcn", "np_feedback", K_ENUM, D(np_feedback), NULL, "cnp|ack_flag", 0, 0, 0 },

    /* DCTCP and TIMELY: the HPCC ns-3 defaults (models.md 6.2, 6.3); rates scaled by host
     * rate where its run.py does (NULL defaults are derived) */
    { "dctcp", "g", K_DOUBLE, F(dctcp.g), "0.0625", NULL, 0, 1, 0 },
    { "dctcp", "rate_ai", K_RATE, F(dctcp.rate_ai), "615Mbps", NULL, 0, 0, 0 },
    { "dctcp", "min_rate", K_RATE, F(dctcp.min_rate), "100Mbps", NULL, 0, 0, 0 },
    { "timely", "alpha", K_DOUBLE, F(timely.alpha), "0.875", NULL, 0, 1, 0 },
    { "timely", "beta", K_DOUBLE, F(timely.beta), "0.8", NULL, 0, 1, 0 },
    { "timely", "t_low", K_TIME, F(timely.t_low), "50us", NULL, 0, 0, 0 },
    { "timely", "t_high", K_TIME, F(timely.t_high), "500us", NULL, 0, 0, 0 },
    { "timely", "min_rtt", K_TIME, F(timely.min_rtt), "20us", NULL, 0, 0, 0 },
    { "timely", "rate_ai", K_RATE, F(timely.rate_ai), NULL, NULL, 0, 0, 0 },
    { "timely", "rate_hai", K_RATE, F(timely.rate_hai), NULL, NULL, 0, 0, 0 },
    { "timely", "min_rate", K_RATE, F(timely.min_rate), "100Mbps", NULL, 0, 0, 0 },

    /* HPCC: the values HPCC ns-3's run.py passes for "hp" (models.md 6.1); rate_ai and
     * int_multi scale with the host rate as run.py does (derived when absent) */
    { "hpcc", "eta", K_DOUBLE, F(hpcc.eta), "0.95", NULL, 0.01, 1, 0 },
    { "hpcc", "max_stage", K_UINT, F(hpcc.max_stage), "0", NULL, 0, 1000, 4 },
    { "hpcc", "rate_ai", K_RATE, F(hpcc.rate_ai), NULL, NULL, 0, 0, 0 },
    { "hpcc", "min_rate", K_RATE, F(hpcc.min_rate), "1Gbps", NULL, 0, 0, 0 },
    { "hpcc", "fast_react", K_BOOL, F(hpcc.fast_react), "on", NULL, 0, 0, 0 },
    { "hpcc", "var_win", K_BOOL, F(hpcc.var_win), "on", NULL, 0, 0, 0 },
    { "hpcc", "int_multi", K_UINT, F(hpcc.int_multi), NULL, NULL, 1, 1024, 4 },
    { "hpcc", "base_rtt", K_TIME, F(hpcc.base_rtt), "0s", NULL, 0, 0, 0 },
    { "hpcc", "window", K_SIZE, F(hpcc.window), "0B", NULL, 0, 0, 0 },
    { "hpcc", "global_t", K_BOOL, F(hpcc.global_t), "on", NULL, 0, 0, 0 },

    /* Load balancing: the defaults are ECMP per QP and go-back-N, as before */
    { "switch", "load_balance", K_ENUM, F(lb), "ecmp", "ecmp|flowlet|spray|adaptive", 0, 0, 0 },
    { "switch", "flowlet_gap", K_TIME, F(flowlet_gap), "20us", NULL, 0, 0, 0 },
    { "nic", "receiver", K_ENUM, F(rx_order), "go-back-n", "go-back-n|ooo-place", 0, 0, 0 },
    /* NCCL's multi-QP connections (net_ib.cc): QPs per connection, and whether each message is
     * split over all of them (on) or the messages take them in turn (off, NCCL's default) */
    { "nic", "qps_per_connection", K_UINT, F(qps_per_connection), "1", NULL, 1, 128, 4 },
    { "nic", "split_data_on_qps", K_BOOL, F(split_data_on_qps), "off", NULL, 0, 0, 0 },

    { "output", "dir", K_STR, F(out_dir), "", NULL, 0, 0, 0 },
    { "output", "queue_sample", K_TIME, F(queue_sample), "1us", NULL, 0, 0, 0 },
    { "output", "counter_sample", K_TIME, F(counter_sample), "10us", NULL, 0, 0, 0 },
    { "output", "sample_ports", K_STR, F(sample_ports), "auto", NULL, 0, 0, 0 },
    { "output", "sample_scale", K_STR, F(sample_scale), "auto", NULL, 0, 0, 0 },
    { "output", "compress", K_ENUM, F(compress), "off", "off|gzip", 0, 0, 0 },
    { "output", "plots", K_BOOL, F(plots), "on", NULL, 0, 0, 0 },
    { "output", "pcap", K_STR, F(pcap), "", NULL, 0, 0, 0 },
    { "output", "pcap_snaplen", K_UINT, F(pcap_snaplen), "0", NULL, 0, 65535, 4 },
};
#undef F
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

/* Keys allowed in [workload NAME] and [fault NAME] per kind; "*" lists keys common to all. */
struct kind_keys {
    const char *kind;
    const char *keys;      /* space separated; a trailing '!' marks a required key */
};
static const struct kind_keys workload_kinds[] = {
    { "*", "kind! prio start after" },
    { "incast", "senders! receiver! size!" },
    { "permutation", "hosts! size!" },
    { "flows", "file!" },
    { "schedule", "file!" },
    { "allreduce", "ranks! size! algorithm chunk channels iterations compute" },
    { "allgather", "ranks! size! algorithm chunk channels iterations compute" },
    { "reducescatter", "ranks! size! algorithm chunk channels iterations compute" },
    { "broadcast", "ranks! size! algorithm chunk channels iterations compute root" },
    { "alltoall", "ranks! size! algorithm chunk channels iterations compute" },
    { "sendrecv", "ranks! size! algorithm chunk channels iterations compute peer" },
    { "train", "ranks tp pp dp ep microbatches layers hidden seq batch dtype_bytes activation_bytes layer_params "
               "bucket fsdp fwd bwd" },
    { NULL, NULL },
};
static const struct kind_keys fault_kinds[] = {
    { "*", "kind! node! at for" },
    { "nic-stall", "at!" },
    { "link-down", "port! at!" },
    /* locality faults of multi-GPU servers: for the whole run (models/server_faults.c) */
    { "nic-numa", "pcie" },
    { "pcie-width", "width!" },
    { "link-speed", "rate!" },
    { "nic-down", "" },
    { "nvlink-down", "" },
    { "no-gpudirect", "" },
    { NULL, NULL },
};

void scenario_key_error(GError **err, const struct scenario *s, const char *section,
                        const char *key, const char *value, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *what = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    if (value)
        g_set_error(err, SCENARIO_ERROR, 1, "%s: [%s] %s = '%s': %s", s->path, section, key, value, what);
    else if (key)
        g_set_error(err, SCENARIO_ERROR, 1, "%s: [%s] %s: %s", s->path, section, key, what);
    else
        g_set_error(err, SCENARIO_ERROR, 1, "%s: [%s]: %s", s->path, section, what);
    g_free(what);
}

static const struct keydef *find_key(const char *section, const char *key)
{
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
        if (!strcmp(keys[i].section, section) && !strcmp(keys[i].key, key))
            return &keys[i];
    return NULL;
}

bool scenario_key_at(size_t i, struct scenario_key_info *out)
{
    if (i >= G_N_ELEMENTS(keys))
        return false;
    const struct keydef *k = &keys[i];
    *out = (struct scenario_key_info){ k->section, k->key, k->deflt,
                                       k->type == K_SIZE ? "size" : k->type == K_RATE ? "rate"
                                       : k->type == K_TIME ? "time" : NULL };
    return true;
}

static bool section_known(const char *section)
{
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
        if (!strcmp(keys[i].section, section))
            return true;
    return false;
}

static gboolean parse_uint_text(const char *v, uint64_t *out)
{
    if (!v || !*v)
        return FALSE;
    uint64_t x = 0;
    for (const char *p = v; *p; p++) { /* digits only: no sign, no blank, no 0x */
        if (!g_ascii_isdigit(*p) || x > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
            return FALSE;
        x = x * 10 + (uint64_t)(*p - '0');
    }
    *out = x;
    return TRUE;
}

/* Parses `value` as kd's type into the struct. */
static gboolean set_value(struct scenario *s, const struct keydef *kd, const char *value, GError **err)
{
    char *base = (char *)s + kd->offset;
    char *why = NULL;
    switch (kd->type) {
    case K_STR:
        g_free(*(char **)base);
        *(char **)base = g_strdup(value);
        return TRUE;
    case K_UINT: {
        uint64_t x;
        if (!parse_uint_text(value, &x)) {
            scenario_key_error(err, s, kd->section, kd->key, value, "expected a whole number%s",
                               value && value[0] == '-' ? " that is not negative" : "");
            return FALSE;
        }
        /* bounds compared as integers: 2^64 - 1 is not a double */
        uint64_t lo = (uint64_t)kd->min, hi = kd->max >= 1.8e19 ? UINT64_MAX : (uint64_t)kd->max;
        if (x < lo || x > hi) {
            if (hi == UINT64_MAX)
                scenario_key_error(err, s, kd->section, kd->key, value, "expected a number from %" G_GUINT64_FORMAT
                                   " to %" G_GUINT64_FORMAT, lo, hi);
            else
                scenario_key_error(err, s, kd->section, kd->key, value, "expected a number from %.0f to %.0f",
                                   kd->min, kd->max);
            return FALSE;
        }
        if (kd->width == 1)
            *(uint8_t *)base = (uint8_t)x;
        else if (kd->width == 4)
            *(uint32_t *)base = (uint32_t)x;
        else
            *(uint64_t *)base = x;
        return TRUE;
    }
    case K_DOUBLE: {
        double x = 0;
        if (!units_parse_real(value, &x)) {
            scenario_key_error(err, s, kd->section, kd->key, value, "expected a number such as 0.2");
            return FALSE;
        }
        if (x < kd->min || x > kd->max) {
            scenario_key_error(err, s, kd->section, kd->key, value, "expected a number from %g to %g",
                               kd->min, kd->max);
            return FALSE;
        }
        *(double *)base = x;
        return TRUE;
    }
    case K_SIZE:
        if (!units_parse_size(value, (uint64_t *)base, &why))
            goto bad;
        return TRUE;
    case K_RATE:
        if (!units_parse_rate(value, (uint64_t *)base, &why))
            goto bad;
        return TRUE;
    case K_TIME:
        if (!units_parse_time(value, (simtime_t *)base, &why))
            goto bad;
        return TRUE;
    case K_BOOL:
        if (!g_strcmp0(value, "on") || !g_strcmp0(value, "true") || !g_strcmp0(value, "yes"))
            *(bool *)base = true;
        else if (!g_strcmp0(value, "off") || !g_strcmp0(value, "false") || !g_strcmp0(value, "no"))
            *(bool *)base = false;
        else {
            scenario_key_error(err, s, kd->section, kd->key, value, "expected on or off");
            return FALSE;
        }
        return TRUE;
    case K_ENUM: {
        char **choices = g_strsplit(kd->choices, "|", -1);
        int idx = -1;
        for (int i = 0; choices[i]; i++)
            if (!g_strcmp0(choices[i], value))
                idx = i;
        g_strfreev(choices);
        if (idx < 0) {
            char *list = g_strdelimit(g_strdup(kd->choices), "|", ',');
            scenario_key_error(err, s, kd->section, kd->key, value, "expected one of %s", list);
            g_free(list);
            return FALSE;
        }
        *(int *)base = idx;
        return TRUE;
    }
    }
    return FALSE;
bad:
    g_set_error(err, SCENARIO_ERROR, 1, "%s: [%s] %s: %s", s->path, kd->section, kd->key, why);
    g_free(why);
    return FALSE;
}

/* Canonical text of a key's current value (for the expanded configuration). */
static char *format_value(const struct scenario *s, const struct keydef *kd)
{
    const char *base = (const char *)s + kd->offset;
    char buf[64];
    switch (kd->type) {
    case K_STR:
        return g_strdup(*(char *const *)base ? *(char *const *)base : "");
    case K_UINT:
        if (kd->width == 1)
            return g_strdup_printf("%u", *(const uint8_t *)base);
        if (kd->width == 4)
            return g_strdup_printf("%u", *(const uint32_t *)base);
        return g_strdup_printf("%" G_GUINT64_FORMAT, *(const uint64_t *)base);
    case K_DOUBLE:
        g_ascii_formatd(buf, sizeof buf, "%.10g", *(const double *)base);
        return g_strdup(buf);
    case K_SIZE:
        return g_strdup(units_format_size(*(const uint64_t *)base, buf, sizeof buf));
    case K_RATE:
        return g_strdup(units_format_rate(*(const uint64_t *)base, buf, sizeof buf));
    case K_TIME:
        return g_strdup(units_format_time(*(const simtime_t *)base, buf, sizeof buf));
    case K_BOOL:
        return g_strdup(*(const bool *)base ? "on" : "off");
    case K_ENUM: {
        char **choices = g_strsplit(kd->choices, "|", -1);
        char *r = g_strdup(choices[*(const int *)base]);
        g_strfreev(choices);
        return r;
    }
    }
    return g_strdup("");
}

gboolean hostlist_parse(const char *text, uint32_t nhosts, struct hostlist *out, char **why)
{
    out->ids = NULL;
    out->n = 0;
    if (!text || !*text) {
        *why = g_strdup("empty host list: expected host numbers and ranges such as 0-15,20");
        return FALSE;
    }
    GArray *ids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    char **parts = g_strsplit(text, ",", -1);
    gboolean ok = TRUE;
    /* one bit per host finds a host listed twice in linear time */
    uint64_t *listed = g_new0(uint64_t, ((size_t)nhosts + 63) / 64 + 1);
    for (int i = 0; parts[i] && ok; i++) {
        char *p = g_strstrip(parts[i]);
        char *dash = strchr(p, '-');
        uint64_t a, b;
        if (dash) {
            *dash = 0;
            char *q = g_strstrip(dash + 1);
            ok = parse_uint_text(g_strstrip(p), &a) && parse_uint_text(q, &b);
            if (!ok || a > b) {
                *why = g_strdup_printf("'%s' is not a host range: expected FIRST-LAST with FIRST <= LAST, e.g. 0-15", text);
                ok = FALSE;
                break;
            }
        } else {
            ok = parse_uint_text(p, &a);
            b = a;
            if (!ok) {
                *why = g_strdup_printf("'%s' is not a host list: expected host numbers and ranges such as 0-15,20", text);
                break;
            }
        }
        if (b >= nhosts) {
            *why = g_strdup_printf("host %" G_GUINT64_FORMAT " does not exist: the fabric has hosts 0-%u", b, nhosts - 1);
            ok = FALSE;
            break;
        }
        for (uint64_t h = a; h <= b; h++) {
            uint32_t v = (uint32_t)h;
            if (listed[v / 64] & (1ull << (v % 64))) {
                *why = g_strdup_printf("host %u is listed twice", v);
                ok = FALSE;
                break;
            }
            listed[v / 64] |= 1ull << (v % 64);
            g_array_append_val(ids, v);
        }
    }
    g_free(listed);
    g_strfreev(parts);
    if (!ok) {
        g_array_free(ids, TRUE);
        return FALSE;
    }
    out->n = ids->len;
    out->ids = (uint32_t *)g_array_free(ids, FALSE);
    return TRUE;
}

void hostlist_clear(struct hostlist *h)
{
    g_free(h->ids);
    h->ids = NULL;
    h->n = 0;
}

static void named_section_free(gpointer p)
{
    struct named_section *n = p;
    g_free(n->name);
    g_free(n->kind);
    g_hash_table_unref(n->keys);
    g_ptr_array_unref(n->order);
    g_free(n);
}

void scenario_free(struct scenario *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
        if (keys[i].type == K_STR)
            g_free(*(char **)((char *)s + keys[i].offset));
    if (s->workloads)
        g_ptr_array_unref(s->workloads);
    if (s->faults)
        g_ptr_array_unref(s->faults);
    if (s->server)
        named_section_free(s->server);
    if (s->cluster)
        named_section_free(s->cluster);
    if (s->expanded)
        g_key_file_unref(s->expanded);
    g_free(s->path);
    g_free(s->dir);
    g_free(s);
}

/* Applies one "section.key=value" override to the key file. */
static gboolean apply_set(GKeyFile *kf, const char *set, GError **err)
{
    const char *eq = strchr(set, '=');
    const char *dot = NULL;
    for (const char *p = set; eq && p < eq; p++)
        if (*p == '.')
            dot = p;
    if (!eq || !dot || dot == set || dot + 1 == eq) {
        g_set_error(err, SCENARIO_ERROR, 1,
                    "--set '%s': expected section.key=value, e.g. switch.ecn_kmin=50KB or "
                    "'workload incast.size=1MB'", set);
        return FALSE;
    }
    char *section = g_strndup(set, (gsize)(dot - set));
    char *key = g_strndup(dot + 1, (gsize)(eq - dot - 1));
    /* "workload.NAME" and "fault.NAME" stand for the sections with a space. */
    if (g_str_has_prefix(section, "workload.") || g_str_has_prefix(section, "fault."))
        *strchr(section, '.') = ' ';
    g_key_file_set_value(kf, section, key, eq + 1);
    g_free(section);
    g_free(key);
    return TRUE;
}

static gboolean kind_allows(const struct kind_keys *table, const char *kind, const char *key,
                            bool *known_kind)
{
    *known_kind = false;
    gboolean ok = FALSE;
    for (const struct kind_keys *k = table; k->kind; k++) {
        bool match = !strcmp(k->kind, "*") || !strcmp(k->kind, kind);
        if (strcmp(k->kind, "*") && !strcmp(k->kind, kind))
            *known_kind = true;
        if (!match)
            continue;
        char **list = g_strsplit(k->keys, " ", -1);
        for (int i = 0; list[i]; i++) {
            size_t l = strlen(list[i]);
            if (l && list[i][l - 1] == '!')
                list[i][l - 1] = 0;
            if (!strcmp(list[i], key))
                ok = TRUE;
        }
        g_strfreev(list);
    }
    return ok;
}

static char *kind_names(const struct kind_keys *table)
{
    GString *g = g_string_new(NULL);
    for (const struct kind_keys *k = table; k->kind; k++)
        if (strcmp(k->kind, "*"))
            g_string_append_printf(g, "%s%s", g->len ? ", " : "", k->kind);
    return g_string_free(g, FALSE);
}

/* Validates a [workload NAME] / [fault NAME] section's key set; values are checked by the
 * model that uses them (which knows the host count), but units are checked here. */
static struct named_section *load_named(struct scenario *s, GKeyFile *kf, const char *group,
                                        const char *type, const struct kind_keys *table, GError **err)
{
    const char *name = group + strlen(type); /* "" for a bare [workload], else " NAME" */
    while (*name == ' ')
        name++;
    if (!*name) {
        scenario_key_error(err, s, group, NULL, NULL, "a %s section needs a name, e.g. [%s incast]", type, type);
        return NULL;
    }
    char *kind = g_key_file_get_value(kf, group, "kind", NULL);
    if (!kind) {
        char *names = kind_names(table);
        scenario_key_error(err, s, group, "kind", NULL, "missing: expected one of %s", names);
        g_free(names);
        return NULL;
    }
    g_strstrip(kind);
    bool known;
    kind_allows(table, kind, "kind", &known);
    if (!known) {
        char *names = kind_names(table);
        scenario_key_error(err, s, group, "kind", kind, "unknown %s kind: expected one of %s", type, names);
        g_free(names);
        g_free(kind);
        return NULL;
    }
    struct named_section *n = g_new0(struct named_section, 1);
    n->name = g_strdup(name);
    n->kind = kind;
    n->keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    n->order = g_ptr_array_new_with_free_func(g_free);
    gsize nk = 0;
    char **ks = g_key_file_get_keys(kf, group, &nk, NULL);
    for (gsize i = 0; i < nk; i++) {
        if (!kind_allows(table, kind, ks[i], &known)) {
            scenario_key_error(err, s, group, ks[i], NULL, "unknown key for a %s of kind %s", type, kind);
            goto fail;
        }
        char *v = g_key_file_get_value(kf, group, ks[i], NULL);
        g_strstrip(v);
        g_hash_table_replace(n->keys, g_strdup(ks[i]), v);
        g_ptr_array_add(n->order, g_strdup(ks[i]));
    }
    /* required keys */
    for (const struct kind_keys *k = table; k->kind; k++) {
        if (strcmp(k->kind, "*") && strcmp(k->kind, kind))
            continue;
        char **list = g_strsplit(k->keys, " ", -1);
        for (int i = 0; list[i]; i++) {
            size_t l = strlen(list[i]);
            if (l && list[i][l - 1] == '!') {
                list[i][l - 1] = 0;
                if (!g_hash_table_contains(n->keys, list[i])) {
                    scenario_key_error(err, s, group, list[i], NULL, "missing: a %s of kind %s needs it", type, kind);
                    g_strfreev(list);
                    goto fail;
                }
            }
        }
        g_strfreev(list);
    }
    g_strfreev(ks);
    return n;
fail:
    g_strfreev(ks);
    named_section_free(n);
    return NULL;
}

static gboolean apply_preset(struct scenario *s, GKeyFile *kf, GError **err)
{
    const struct preset *p = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(presets); i++)
        if (!strcmp(presets[i].name, s->cc_preset))
            p = &presets[i];
    if (!p) {
        scenario_key_error(err, s, "nic", "cc_preset", s->cc_preset,
                           "unknown preset: expected connectx, dcqcn_paper or hpcc_ns3");
        return FALSE;
    }
    for (const struct preset_kv *kv = p->kv; kv->key; kv++) {
        if (g_key_file_has_key(kf, "dcqcn", kv->key, NULL))
            continue; /* the scenario overrides the preset */
        const struct keydef *kd = find_key("dcqcn", kv->key);
        char *v;
        if (kv->value[0] == '{') /* Mb/s scaled by host rate / 25G */
            v = g_strdup_printf("%" G_GUINT64_FORMAT "bps",
                                (uint64_t)((unsigned __int128)(uint64_t)atoi(kv->value + 1) * 1000000u * s->host_rate /
                                           25000000000u)); /* 128 bits: no overflow at any host rate */
        else
            v = g_strdup(kv->value);
        gboolean ok = set_value(s, kd, v, err);
        g_free(v);
        if (!ok)
            return FALSE;
    }
    /* dce_tcp_g is the weight kept by the old alpha (in 1/1024); `g` overrides it directly. */
    if (!g_key_file_has_key(kf, "dcqcn", "g", NULL))
        s->dcqcn.g = (1024.0 - s->dcqcn.dce_tcp_g) / 1024.0;
    return TRUE;
}

/* The scenario name as one harmless path component: letters, digits and -_.+ kept, anything
 * else (a '/', "..") made '_', no leading dot, at most 128 bytes; so results/NAME stays
 * inside results/. */
static char *path_component(const char *name)
{
    GString *g = g_string_new(NULL);
    for (const char *p = name; *p && g->len < 128; p++)
        g_string_append_c(g, g_ascii_isalnum(*p) || strchr("-_.+", *p) ? *p : '_');
    if (g->len && g->str[0] == '.')
        g->str[0] = '_';
    if (!g->len)
        g_string_assign(g, "scenario");
    return g_string_free(g, FALSE);
}

/* The host link rate of an edge-list file: the fastest `link` with a host at one end. A light
 * read for the rate-derived defaults (Kmin/Kmax, the presets' rate-scaled steps, BDP);
 * models/topology.c parses and checks the file in full. FALSE when the file cannot tell. */
static gboolean edge_host_rate(const struct scenario *s, uint64_t *rate, uint64_t *slowest)
{
    char *path = g_path_is_absolute(s->edges_file) ? g_strdup(s->edges_file)
                                                   : g_build_filename(s->dir, s->edges_file, NULL);
    char *text = NULL;
    gboolean ok = g_file_get_contents(path, &text, NULL, NULL);
    g_free(path);
    if (!ok)
        return FALSE;
    GHashTable *hosts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    *rate = 0;
    *slowest = UINT64_MAX;
    char **lines = g_strsplit(text, "\n", -1);
    for (char **l = lines; *l; l++) {
        char **f = g_strsplit_set(g_strstrip(*l), " \t", -1);
        char *w[5] = { NULL };
        int n = 0;
        for (char **x = f; *x && n < 5; x++)
            if (**x)
                w[n++] = *x;
        uint64_t r;
        if (n >= 2 && !strcmp(w[0], "host"))
            g_hash_table_add(hosts, g_strdup(w[1]));
        else if (n >= 4 && !strcmp(w[0], "link") &&
                 (g_hash_table_contains(hosts, w[1]) || g_hash_table_contains(hosts, w[2])) &&
                 units_parse_rate(w[3], &r, NULL) && r) {
            *rate = MAX(*rate, r);
            *slowest = MIN(*slowest, r);
        }
        g_strfreev(f);
    }
    g_strfreev(lines);
    g_hash_table_unref(hosts);
    g_free(text);
    return *rate > 0;
}

static gboolean derive_defaults(struct scenario *s, GKeyFile *kf, GError **err)
{
    /* an edge list's hosts run at the rate of their links, not at [topology] host_rate's default */
    uint64_t er, slowest;
    if (s->topo == TOPO_EDGES && *s->edges_file && !g_key_file_has_key(kf, "topology", "host_rate", NULL) &&
        edge_host_rate(s, &er, &slowest)) {
        s->host_rate = er;
        s->host_rate_from_edges = slowest == er ? 1 : 2;
    }
    if (!g_key_file_has_key(kf, "topology", "fabric_rate", NULL))
        s->fabric_rate = s->host_rate;
    if (!g_key_file_has_key(kf, "topology", "host_link_delay", NULL))
        s->host_link_delay = s->link_delay;
    /* TIMELY's steps: 10 Mb/s per 10 Gb/s of host rate, hyper increase 5x that */
    if (!g_key_file_has_key(kf, "timely", "rate_ai", NULL))
        s->timely.rate_ai = 10000000ULL * (s->host_rate / 10000000000ULL ? s->host_rate / 10000000000ULL : 1);
    if (!g_key_file_has_key(kf, "timely", "rate_hai", NULL))
        s->timely.rate_hai = 5 * s->timely.rate_ai;
    /* HPCC's run.py: RATE_AI = 10 Mb/s x BW/25G, INT_MULTI = BW/25G */
    if (!g_key_file_has_key(kf, "hpcc", "rate_ai", NULL))
        s->hpcc.rate_ai = (uint64_t)((unsigned __int128)10000000u * s->host_rate / 25000000000ULL);
    if (!g_key_file_has_key(kf, "hpcc", "int_multi", NULL))
        s->hpcc.int_multi = s->host_rate / 25000000000ULL ? (uint32_t)(s->host_rate / 25000000000ULL) : 1;
    /* HPCC reacts to the INT of every packet and its window can be smaller than a few packets:
     * it needs an ACK per packet (L2_ACK_INTERVAL 1), or a small window waits for a timeout */
    if (s->cc == CC_HPCC) {
        if (!g_key_file_has_key(kf, "nic", "ack_every", NULL)) {
            s->ack_every = 1;
        } else if (s->ack_every != 1) {
            char *v = g_strdup_printf("%u", s->ack_every);
            scenario_key_error(err, s, "nic", "ack_every", v,
                               "cc = hpcc needs an ACK per packet (its INT feedback, HPCC ns-3 L2_ACK_INTERVAL 1): "
                               "expected 1");
            g_free(v);
            return FALSE;
        }
    }
    /* ECN defaults: the Alibaba production values of the HPCC paper, scaled by rate, in 128-bit
     * products (100 KB x rate overflows 64 bits above 184 Tb/s) */
    if (!g_key_file_has_key(kf, "switch", "ecn_kmin", NULL))
        s->ecn_kmin = (uint64_t)((unsigned __int128)100000u * s->host_rate / 25000000000ULL);
    if (!g_key_file_has_key(kf, "switch", "ecn_kmax", NULL))
        s->ecn_kmax = (uint64_t)((unsigned __int128)400000u * s->host_rate / 25000000000ULL);
    if (!*s->name) {
        g_free(s->name);
        char *b = g_path_get_basename(s->path);
        char *dot = strrchr(b, '.');
        if (dot)
            *dot = 0;
        s->name = b;
    }
    if (!*s->out_dir) {
        g_free(s->out_dir);
        char *folder = path_component(s->name);
        s->out_dir = g_build_filename("results", folder, NULL);
        g_free(folder);
    }
    return apply_preset(s, kf, err);
}

/* The [switch] PFC keys that are words or sizes ("dynamic" or 40KB, "auto" or 100m). */
static gboolean parse_pfc_keys(struct scenario *s, GError **err)
{
    char *why = NULL;
    s->lossless_mask = 0;
    char **parts = g_strsplit(s->lossless_priorities_text, ",", -1);
    for (int i = 0; parts[i]; i++) {
        char *p = g_strstrip(parts[i]);
        if (!*p && !parts[1])
            break; /* empty list: no lossless priority */
        if (strlen(p) != 1 || p[0] < '0' || p[0] > '7') {
            scenario_key_error(err, s, "switch", "lossless_priorities", s->lossless_priorities_text,
                               "expected a list of priorities 0-7, e.g. 3 or 3,4");
            g_strfreev(parts);
            return FALSE;
        }
        s->lossless_mask |= (uint8_t)(1u << (p[0] - '0'));
    }
    g_strfreev(parts);
    if (!strcmp(s->xoff_text, "dynamic"))
        s->xoff = 0;
    else if (!units_parse_size(s->xoff_text, &s->xoff, &why) || s->xoff == 0) {
        scenario_key_error(err, s, "switch", "xoff", s->xoff_text, "expected dynamic or a positive size (%s)",
                           why ? why : "zero");
        g_free(why);
        return FALSE;
    }
    if (!strcmp(s->headroom_text, "auto"))
        s->headroom = 0;
    else if (!units_parse_size(s->headroom_text, &s->headroom, &why) || s->headroom == 0) {
        scenario_key_error(err, s, "switch", "headroom", s->headroom_text, "expected auto or a positive size (%s)",
                           why ? why : "zero");
        g_free(why);
        return FALSE;
    }
    s->cable_length_m = -1;
    if (strcmp(s->cable_length_text, "auto")) {
        size_t l = strlen(s->cable_length_text);
        char *num = l && s->cable_length_text[l - 1] == 'm' ? g_strndup(s->cable_length_text, l - 1) : NULL;
        double m = -1;
        gboolean ok = num && units_parse_real(num, &m) && m >= 0 && m <= 100000;
        g_free(num);
        if (!ok) {
            scenario_key_error(err, s, "switch", "cable_length", s->cable_length_text,
                               "expected auto (from the link delay) or a length in metres from 0m to 100000m, "
                               "such as 100m");
            return FALSE;
        }
        s->cable_length_m = m;
    }
    s->pfc_watchdog = 0;
    if (strcmp(s->watchdog_text, "off") &&
        (!units_parse_time(s->watchdog_text, &s->pfc_watchdog, &why) || s->pfc_watchdog == 0)) {
        scenario_key_error(err, s, "switch", "pfc_watchdog", s->watchdog_text,
                           "expected off or a detection time such as 200ms (%s)", why ? why : "zero");
        g_free(why);
        return FALSE;
    }
    /* DWRR weights between data priorities: "3:4,4:1"; unnamed priorities weigh 1 */
    for (int q = 0; q < 8; q++)
        s->dwrr_weight[q] = 1;
    if (*s->dwrr_text) {
        char **parts = g_strsplit(s->dwrr_text, ",", -1);
        gboolean ok = TRUE;
        for (int i = 0; parts[i] && ok; i++) {
            char *p = g_strstrip(parts[i]), *end = NULL;
            guint64 prio = g_ascii_strtoull(p, &end, 10);
            guint64 w = 0;
            ok = end != p && *end == ':' && prio < 8;
            if (ok) {
                char *wt = end + 1;
                w = g_ascii_strtoull(wt, &end, 10);
                ok = end != wt && !*end && w >= 1 && w <= 1000;
            }
            if (ok)
                s->dwrr_weight[prio] = (uint32_t)w;
        }
        g_strfreev(parts);
        if (!ok) {
            scenario_key_error(err, s, "switch", "dwrr_weights", s->dwrr_text,
                               "expected PRIORITY:WEIGHT pairs such as 3:4,4:1 (priorities 0-7, weights 1-1000)");
            return FALSE;
        }
    }
    if (s->lossless_mask & ((1u << s->cnp_priority) | (1u << s->ack_priority))) {
        scenario_key_error(err, s, "switch", "lossless_priorities", s->lossless_priorities_text,
                           "the CNP/ACK priorities (%u, %u) must stay lossy: they are served with strict priority",
                           s->cnp_priority, s->ack_priority);
        return FALSE;
    }
    return TRUE;
}

static gboolean validate(struct scenario *s, GError **err)
{
    if (!parse_pfc_keys(s, err))
        return FALSE;
    if (s->host_rate == 0) {
        scenario_key_error(err, s, "topology", "host_rate", "0bps", "expected a positive rate");
        return FALSE;
    }
    if (s->fabric_rate == 0) {
        scenario_key_error(err, s, "topology", "fabric_rate", "0bps", "expected a positive rate");
        return FALSE;
    }
    if (s->topo == TOPO_LEAF_SPINE && s->leaves > 1 && s->spines == 0) {
        scenario_key_error(err, s, "topology", "spines", "0", "more than one leaf needs at least one spine");
        return FALSE;
    }
    if (s->topo == TOPO_EDGES && !*s->edges_file) {
        scenario_key_error(err, s, "topology", "file", NULL, "kind=edges needs file = an edge-list file");
        return FALSE;
    }
    if (s->ecn_kmin > s->ecn_kmax) {
        char a[32], b[32];
        scenario_key_error(err, s, "switch", "ecn_kmin", units_format_size(s->ecn_kmin, a, sizeof a),
                           "Kmin must not exceed ecn_kmax (%s)", units_format_size(s->ecn_kmax, b, sizeof b));
        return FALSE;
    }
    if (s->buffer > 0xFFFFFFFFull) {
        char a[32];
        scenario_key_error(err, s, "switch", "buffer", units_format_size(s->buffer, a, sizeof a),
                           "at most 4294967295B (4GiB - 1B) per switch");
        return FALSE;
    }
    /* the parts of the shared buffer must fit in it */
    const struct { const char *key; uint64_t v; } parts[] = {
        { "reserve", s->reserve }, { "headroom", s->headroom }, { "xon_offset", s->xon_offset },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(parts); i++)
        if (parts[i].v > s->buffer) {
            char a[32], b[32];
            scenario_key_error(err, s, "switch", parts[i].key, units_format_size(parts[i].v, a, sizeof a),
                               "larger than the switch buffer (%s)", units_format_size(s->buffer, b, sizeof b));
            return FALSE;
        }
    if (s->nic_rx_buffer == 0) {
        scenario_key_error(err, s, "nic", "rx_buffer", "0B", "expected a positive size");
        return FALSE;
    }
    if (s->buffer < 64 * 1024) {
        char a[32];
        scenario_key_error(err, s, "switch", "buffer", units_format_size(s->buffer, a, sizeof a),
                           "a switch buffer below 64KiB cannot hold a useful queue");
        return FALSE;
    }
    if (s->mtu != 256 && s->mtu != 512 && s->mtu != 1024 && s->mtu != 2048 && s->mtu != 4096) {
        char v[16];
        snprintf(v, sizeof v, "%u", s->mtu);
        scenario_key_error(err, s, "nic", "mtu", v, "expected a RoCE path MTU: 256, 512, 1024, 2048 or 4096");
        return FALSE;
    }
    if (s->stop == 0) {
        scenario_key_error(err, s, "scenario", "stop", "0s", "expected a positive time");
        return FALSE;
    }
    if (s->queue_sample == 0) {
        scenario_key_error(err, s, "output", "queue_sample", "0s", "expected a positive sampling period");
        return FALSE;
    }
    if (s->counter_sample == 0) {
        scenario_key_error(err, s, "output", "counter_sample", "0s", "expected a positive sampling period");
        return FALSE;
    }
    if (s->rto == 0) {
        scenario_key_error(err, s, "nic", "rto", "0s", "expected a positive retransmission timeout");
        return FALSE;
    }
    if (s->dcqcn.dce_tcp_rtt == 0) {
        scenario_key_error(err, s, "dcqcn", "dce_tcp_rtt", "0s", "expected a positive alpha update period");
        return FALSE;
    }
    if (s->dcqcn.rpg_time_reset == 0) {
        scenario_key_error(err, s, "dcqcn", "rpg_time_reset", "0s", "expected a positive increase timer");
        return FALSE;
    }
    return TRUE;
}

static void build_expanded(struct scenario *s)
{
    s->expanded = g_key_file_new();
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
        if (!strcmp(keys[i].section, "topology") && !strcmp(keys[i].key, "file") && !*s->edges_file)
            continue;
        char *v = format_value(s, &keys[i]);
        g_key_file_set_value(s->expanded, keys[i].section, keys[i].key, v);
        g_free(v);
    }
    GPtrArray *lists[2] = { s->workloads, s->faults };
    const char *types[2] = { "workload", "fault" };
    for (int l = 0; l < 2; l++)
        for (guint i = 0; i < lists[l]->len; i++) {
            struct named_section *n = g_ptr_array_index(lists[l], i);
            char *group = g_strdup_printf("%s %s", types[l], n->name);
            for (guint k = 0; k < n->order->len; k++) {
                const char *key = g_ptr_array_index(n->order, k);
                g_key_file_set_value(s->expanded, group, key, g_hash_table_lookup(n->keys, key));
            }
            g_free(group);
        }
    const struct named_section *raw[2] = { s->server, s->cluster };
    for (int l = 0; l < 2; l++)
        for (guint k = 0; raw[l] && k < raw[l]->order->len; k++) {
            const char *key = g_ptr_array_index(raw[l]->order, k);
            g_key_file_set_value(s->expanded, raw[l]->name, key, g_hash_table_lookup(raw[l]->keys, key));
        }
}

/* [server] and [cluster] are kept as text: models/server.c owns their keys and checks them
 * (and they appear in the expanded scenario only when the file has them). */
static struct named_section *load_raw(GKeyFile *kf, const char *group)
{
    struct named_section *n = g_new0(struct named_section, 1);
    n->name = g_strdup(group);
    n->keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    n->order = g_ptr_array_new_with_free_func(g_free);
    gsize nk = 0;
    char **ks = g_key_file_get_keys(kf, group, &nk, NULL);
    for (gsize i = 0; i < nk; i++) {
        char *v = g_key_file_get_value(kf, group, ks[i], NULL);
        g_hash_table_replace(n->keys, g_strdup(ks[i]), g_strstrip(v));
        g_ptr_array_add(n->order, g_strdup(ks[i]));
    }
    g_strfreev(ks);
    return n;
}

/* GLib merges a [group] that appears twice into one, so the second's keys silently override
 * the first's: refused here, naming both lines. */
static gboolean no_duplicate_groups(const char *path, const char *contents, GError **err)
{
    GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    char **lines = g_strsplit(contents, "\n", -1);
    gboolean ok = TRUE;
    for (int i = 0; lines[i] && ok; i++) {
        char *l = g_strchug(lines[i]);
        char *close = *l == '[' ? strrchr(l, ']') : NULL;
        if (!close)
            continue;
        char *name = g_strndup(l + 1, (gsize)(close - l - 1));
        gpointer first = g_hash_table_lookup(seen, name);
        if (first) {
            g_set_error(err, SCENARIO_ERROR, 1,
                        "%s: [%s] at line %d repeats the section of line %d: write each section once",
                        path, name, i + 1, GPOINTER_TO_INT(first));
            ok = FALSE;
            g_free(name);
        } else {
            g_hash_table_insert(seen, name, GINT_TO_POINTER(i + 1));
        }
    }
    g_strfreev(lines);
    g_hash_table_destroy(seen);
    return ok;
}

struct scenario *scenario_load(const char *path, const char *const *sets, GError **err)
{
    struct scenario *s = g_new0(struct scenario, 1);
    s->path = g_strdup(path);
    s->dir = g_path_get_dirname(path);
    s->workloads = g_ptr_array_new_with_free_func(named_section_free);
    s->faults = g_ptr_array_new_with_free_func(named_section_free);
    GKeyFile *kf = g_key_file_new();
    GError *e = NULL;
    char *contents = NULL;
    gsize len = 0;
    if (!g_file_get_contents(path, &contents, &len, &e)) {
        g_set_error(err, SCENARIO_ERROR, 1, "%s: cannot read the scenario: %s", path, e->message);
        g_error_free(e);
        goto fail;
    }
    if (len == 0 || strspn(contents, " \t\r\n") == len) {
        g_set_error(err, SCENARIO_ERROR, 1, "%s: the scenario file is empty: expected sections such as [topology] and [workload NAME]", path);
        g_free(contents);
        goto fail;
    }
    if (!no_duplicate_groups(path, contents, err)) {
        g_free(contents);
        goto fail;
    }
    if (!g_key_file_load_from_data(kf, contents, len, G_KEY_FILE_NONE, &e)) {
        char *msg = g_utf8_make_valid(e->message, -1); /* a binary file's bytes end up in the message */
        g_set_error(err, SCENARIO_ERROR, 1, "%s: not a scenario key file (INI with [section] and key = value lines): %s",
                    path, msg);
        g_free(msg);
        g_error_free(e);
        g_free(contents);
        goto fail;
    }
    g_free(contents);
    for (int i = 0; sets && sets[i]; i++)
        if (!apply_set(kf, sets[i], err))
            goto fail;

    /* Defaults first, then the file's values on top. */
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
        if (keys[i].deflt && !set_value(s, &keys[i], keys[i].deflt, err))
            goto fail;

    gsize ngroups = 0;
    char **groups = g_key_file_get_groups(kf, &ngroups);
    gboolean ok = TRUE;
    /* [nic] first: cc_preset decides the [dcqcn] defaults (applied after all values). */
    for (gsize g = 0; g < ngroups && ok; g++) {
        const char *grp = groups[g];
        if (g_str_has_prefix(grp, "workload ") || !strcmp(grp, "workload")) {
            struct named_section *n = load_named(s, kf, grp, "workload", workload_kinds, err);
            if (!n) {
                ok = FALSE;
                break;
            }
            for (guint i = 0; i < s->workloads->len; i++)
                if (!strcmp(((struct named_section *)g_ptr_array_index(s->workloads, i))->name, n->name)) {
                    scenario_key_error(err, s, grp, NULL, NULL, "a workload with this name already exists");
                    ok = FALSE;
                }
            g_ptr_array_add(s->workloads, n);
            continue;
        }
        if (g_str_has_prefix(grp, "fault ") || !strcmp(grp, "fault")) {
            struct named_section *n = load_named(s, kf, grp, "fault", fault_kinds, err);
            if (!n) {
                ok = FALSE;
                break;
            }
            g_ptr_array_add(s->faults, n);
            continue;
        }
        if (!strcmp(grp, "server") || !strcmp(grp, "cluster")) {
            struct named_section **slot = grp[0] == 's' ? &s->server : &s->cluster;
            *slot = load_raw(kf, grp);
            continue;
        }
        if (!strcmp(grp, "sweep"))
            continue; /* read by `rocesim sweep` and `rocesim tune` (sim/sweep.c); `run` ignores it */
        if (!section_known(grp)) {
            g_set_error(err, SCENARIO_ERROR, 1,
                        "%s: [%s]: unknown section: expected scenario, topology, switch, nic, dcqcn, "
                        "dctcp, timely, hpcc, output, server, cluster, workload NAME, fault NAME or sweep", path, grp);
            ok = FALSE;
            break;
        }
        gsize nk = 0;
        char **ks = g_key_file_get_keys(kf, grp, &nk, NULL);
        for (gsize k = 0; k < nk && ok; k++) {
            const struct keydef *kd = find_key(grp, ks[k]);
            if (!kd) {
                GString *valid = g_string_new(NULL);
                for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
                    if (!strcmp(keys[i].section, grp))
                        g_string_append_printf(valid, "%s%s", valid->len ? ", " : "", keys[i].key);
                scenario_key_error(err, s, grp, ks[k], NULL, "unknown key: [%s] has %s", grp, valid->str);
                g_string_free(valid, TRUE);
                ok = FALSE;
                break;
            }
            char *v = g_key_file_get_value(kf, grp, ks[k], NULL);
            g_strstrip(v);
            ok = set_value(s, kd, v, err);
            g_free(v);
        }
        g_strfreev(ks);
    }
    g_strfreev(groups);
    if (!ok || !derive_defaults(s, kf, err) || !validate(s, err))
        goto fail;
    if (s->workloads->len == 0) {
        g_set_error(err, SCENARIO_ERROR, 1, "%s: no [workload NAME] section: nothing to simulate", path);
        goto fail;
    }
    build_expanded(s);
    g_key_file_unref(kf);
    return s;
fail:
    g_key_file_unref(kf);
    scenario_free(s);
    return NULL;
}
