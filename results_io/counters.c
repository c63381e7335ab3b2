/* counters.csv's names and rows (see counters.h). */
#include "results_io/counters.h"
#include <glib.h>
#include "results_io/row.h"

static const char *const names[RC_COUNT] = {
    [RC_NP_ECN_MARKED_ROCE_PACKETS] = "np_ecn_marked_roce_packets",
    [RC_NP_CNP_SENT] = "np_cnp_sent",
    [RC_RP_CNP_HANDLED] = "rp_cnp_handled",
    [RC_OUT_OF_SEQUENCE] = "out_of_sequence",
    [RC_PACKET_SEQ_ERR] = "packet_seq_err",
    [RC_LOCAL_ACK_TIMEOUT_ERR] = "local_ack_timeout_err",
    [RC_DUPLICATE_REQUEST] = "duplicate_request",
    [RC_RETRANSMITTED_PACKETS] = "retransmitted_packets",
    [RC_TIMEOUTS] = "timeouts",
    [RC_NAKS_SENT] = "naks_sent",
    [RC_NAKS_RECEIVED] = "naks_received",
    [RC_ICRC_ERRORS] = "icrc_errors",
    [RC_TX_BYTES] = "tx_bytes",
    [RC_TX_PACKETS] = "tx_packets",
    [RC_RX_BYTES] = "rx_bytes",
    [RC_RX_PACKETS] = "rx_packets",
    [RC_RX_DISCARDS_STALLED] = "rx_discards_stalled",
    [RC_ECN_MARKED] = "ecn_marked",
    [RC_PFC_WD_STORMS] = "pfc_wd_storms",
    [RC_PFC_WD_DROPS] = "pfc_wd_drops",
};

const char *results_counter_name(enum results_counter c)
{
    return names[c];
}

const char *results_prio_counter_name(enum results_prio_counter c, int prio, char *buf, size_t len)
{
    static const char *const fmt[] = {
        [RC_RX_PAUSE] = "rx_prio%d_pause", [RC_RX_PAUSE_DURATION] = "rx_prio%d_pause_duration",
        [RC_TX_PAUSE] = "tx_prio%d_pause", [RC_TX_PAUSE_DURATION] = "tx_prio%d_pause_duration",
        [RC_DROPS] = "drops_prio%d",
    };
    snprintf(buf, len, fmt[c], prio);
    return buf;
}

const char *results_net_counter_name(enum net_counter c)
{
    switch (c) {
    case NET_CNT_ECN_MARKED: return names[RC_ECN_MARKED];
    case NET_CNT_NP_ECN_MARKED: return names[RC_NP_ECN_MARKED_ROCE_PACKETS];
    case NET_CNT_NP_CNP_SENT: return names[RC_NP_CNP_SENT];
    case NET_CNT_RP_CNP_HANDLED: return names[RC_RP_CNP_HANDLED];
    }
    return "?";
}

void results_counter_row(FILE *f, struct row_text *tc, uint64_t t_ns, const char *node, uint32_t port,
                         const char *name, uint64_t v)
{
    size_t nl = strlen(node), cl = strlen(name);
    if (!row_fits(nl, cl)) {
        fprintf(f, "%" G_GUINT64_FORMAT ",%s,%u,%s,%" G_GUINT64_FORMAT "\n", t_ns, node, port, name, v);
        return;
    }
    struct row r;
    row_head(&r, tc, t_ns, node, nl, port);
    row_str(&r, name, cl);
    row_ch(&r, ',');
    row_u64(&r, v);
    row_ch(&r, '\n');
    row_put(&r, f);
}

void results_counter_row_host_i64(FILE *f, uint64_t t_ns, uint32_t host, const char *name, int64_t v)
{
    fprintf(f, "%" G_GUINT64_FORMAT ",host%u,0,%s,%" G_GINT64_FORMAT "\n", t_ns, host, name, v);
}

void results_counter_row_host_text(FILE *f, uint64_t t_ns, uint32_t host, const char *port, const char *name,
                                   const char *v)
{
    fprintf(f, "%" G_GUINT64_FORMAT ",host%u,%s,%s,%s\n", t_ns, host, port, name, v);
}

/* Written for the lossless priorities, and for any priority that saw a pause. */
static void pfc_counters(FILE *f, struct row_text *tc, uint64_t t, const char *node, uint32_t port,
                         const struct port_rt *p, const struct scenario *sc)
{
    char c[48];
    for (int q = 0; q < NPRIO; q++) {
        if (!(sc->lossless_mask & (1u << q)) && !p->rx_pause[q] && !p->tx_pause[q])
            continue;
        const struct { enum results_prio_counter c; uint64_t v; } rows[] = {
            { RC_RX_PAUSE, p->rx_pause[q] }, { RC_RX_PAUSE_DURATION, p->rx_pause_dur[q] / PS_PER_US },
            { RC_TX_PAUSE, p->tx_pause[q] }, { RC_TX_PAUSE_DURATION, p->tx_pause_dur[q] / PS_PER_US },
        };
        for (size_t i = 0; i < G_N_ELEMENTS(rows); i++)
            results_counter_row(f, tc, t, node, port, results_prio_counter_name(rows[i].c, q, c, sizeof c), rows[i].v);
    }
}

void results_net_counters(FILE *f, const struct net *n, simtime_t end)
{
    uint64_t t = end / PS_PER_NS;
    struct row_text kept = { 0 }, *tc = &kept;
    for (uint32_t h = 0; h < n->topo->nhosts; h++) {
        const struct host_rt *hr = &n->hosts[h];
        const struct port_rt *p = &n->ports[hr->port];
        const char *name = n->topo->nodes[h].name;
        const struct { enum results_counter c; uint64_t v; } rows[] = {
            { RC_NP_ECN_MARKED_ROCE_PACKETS, hr->np_ecn_marked_roce_packets },
            { RC_NP_CNP_SENT, hr->np_cnp_sent },
            { RC_RP_CNP_HANDLED, hr->rp_cnp_handled },
            { RC_OUT_OF_SEQUENCE, hr->out_of_sequence },
            { RC_PACKET_SEQ_ERR, hr->packet_seq_err },
            { RC_LOCAL_ACK_TIMEOUT_ERR, hr->local_ack_timeout_err },
            { RC_DUPLICATE_REQUEST, hr->duplicate_request },
            { RC_RETRANSMITTED_PACKETS, hr->retransmitted_packets },
            { RC_TX_BYTES, p->tx_bytes },
            { RC_TX_PACKETS, p->tx_packets },
            { RC_RX_BYTES, hr->rx_bytes },
            { RC_RX_DISCARDS_STALLED, hr->rx_drops },
        };
        for (size_t i = 0; i < G_N_ELEMENTS(rows); i++)
            results_counter_row(f, tc, t, name, 0, names[rows[i].c], rows[i].v);
        pfc_counters(f, tc, t, name, 0, p, n->sc);
    }
    for (uint32_t i = 0; i < n->topo->nports; i++) {
        const struct port_rt *p = &n->ports[i];
        if (p->is_host)
            continue;
        const char *name = n->topo->nodes[p->node].name;
        results_counter_row(f, tc, t, name, p->local, names[RC_TX_BYTES], p->tx_bytes);
        results_counter_row(f, tc, t, name, p->local, names[RC_TX_PACKETS], p->tx_packets);
        results_counter_row(f, tc, t, name, p->local, names[RC_ECN_MARKED], p->ecn_marked);
        pfc_counters(f, tc, t, name, p->local, p, n->sc);
        if (p->wd_storms) {
            results_counter_row(f, tc, t, name, p->local, names[RC_PFC_WD_STORMS], p->wd_storms);
            results_counter_row(f, tc, t, name, p->local, names[RC_PFC_WD_DROPS], p->wd_drops);
        }
        char c[32];
        for (int q = 0; q < NPRIO; q++)
            if (p->drops[q])
                results_counter_row(f, tc, t, name, p->local, results_prio_counter_name(RC_DROPS, q, c, sizeof c),
                                    p->drops[q]);
    }
}
