/* The fixed sections' checks across keys: [switch] PFC words and sizes, buffer parts, rates,
 * MTU, sampling periods (each algorithm checks its own section, see cc_ops.validate). */
#include <stdio.h>
#include <string.h>
#include "models/scenario_check.h"
#include "sim/units.h"

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

gboolean scenario_validate_fixed(struct scenario *s, GError **err)
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
    return TRUE;
}

