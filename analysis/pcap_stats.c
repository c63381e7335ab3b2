/* `rocesim pcap-stats FILE... [-o DIR] [--interval 10us] [--link-rate 100Gbps]`
 *
 * Turns captures of RoCEv2 and PFC traffic (a mirror port, tcpdump on a Soft-RoCE host, or the
 * simulator's own traces) into a results folder (docs/results-format.md) that `compare` and
 * `plot` read like a simulated one. Everything is what one capture point can tell:
 *
 *   rates.csv      t_ns,flow,rate_gbps   per flow (src IP, dst IP, destination QPN) and
 *                  interval: bits of its data frames on the wire (frame + FCS + preamble + IFG)
 *                  over the interval, at the interval's start. A zero row closes every idle gap.
 *   counters.csv   per file (node = file basename, port 0) at the end of the capture:
 *                  roce_packets, roce_bytes (frame bytes with FCS), np_ecn_marked_roce_packets
 *                  (CE-marked data packets), np_cnp_sent (CNPs), packet_seq_err (PSN-sequence
 *                  NAKs), out_of_sequence (PSN discontinuities: gaps and regressions),
 *                  tx_prioN_pause (PFC frames with class N enabled and a nonzero time),
 *                  rx_prioN_pause_duration (microseconds paused, as mlx5 counts it),
 *                  tx_pause_ctrl_phy (802.3x PAUSE frames), icrc_errors, malformed_frames.
 *   pfc.csv        a pause at each frame that starts one, a resume at XON or when the quanta
 *                  run out at --link-rate (a new XOFF reloads the timer, as a receiver does).
 *   transfers.csv  one row per message seen from FIRST to LAST (or ONLY): start = first sight
 *                  of its first packet, end = last sight of its last packet (a retransmitted
 *                  LAST moves it). ideal_ns and slowdown are left empty: a capture does not know
 *                  the path's hops, delays or load, and 0 would read as a number. id is the
 *                  immediate data when every message carries one (the replay puts the schedule's
 *                  transfer id there), otherwise the rank in start order. src/dst are host
 *                  indices when every address follows the simulator's scheme (frames.h), else
 *                  IP addresses. prio is the VLAN PCP, or DSCP >> 3 for untagged frames (the
 *                  mlx5 default DSCP-to-priority map). bytes is the RETH DMA length when seen,
 *                  else the payload bytes seen.
 *   flows.csv      flow,src,dst,qpn,sport,packets,bytes,ce_fraction,cnps,psn_gaps (data packets,
 *                  retransmissions included; bytes = payload).
 *   summary.json   transfers, transfers_completed, bytes, completion_ns, fct_p50/p99/max_ns,
 *                  ecn_marked, cnp_sent, retransmitted_packets (data packets whose PSN is not
 *                  beyond the highest seen), pause_frames, paused_ns.
 *
 * A CNP names only the QP it throttles (the sender's QPN), which data packets do not carry, so
 * CNPs are tied to a data flow through the ACKs/NAKs sent to the same QP: their PSN falls in
 * the PSN range of exactly one flow between the two hosts (the UDP source port breaks ties).
 * When only one data flow links the two hosts no ACK is needed.
 *
 * Times start at the first packet of the earliest file (--absolute-time keeps the capture's
 * clock; the simulator's traces start at 0). A record stamped before the one before it in its
 * file is counted in a warning; rates.csv places it at its own time, and a message or a pause
 * never ends before it starts. Files are separate capture points: flows.csv,
 * rates.csv and counters.csv are per file (flows named FLOW@NODE when there are several
 * files). A flow seen by several capture points (two taps of one link, or of its path) is one
 * flow in transfers.csv and in the summary's transfers, bytes, FCTs, ecn_marked, cnp_sent and
 * retransmitted_packets: a message runs from the earliest sight of its first packet to the
 * latest sight of its last one, and a count is the most any point saw. PFC totals are summed
 * over the files.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

#include "analysis/frames.h"
#include "analysis/metrics.h"
#include "analysis/pcap.h"
#include "analysis/pcap_stats.h"
#include "results_io/csv.h"
#include "results_io/folder.h"
#include "results_io/format.h"
#include "results_io/summary.h"
#include "sim/units.h"

#define MAX_REPORTED_MALFORMED 5

/* ---- state ---- */

struct flow_key {           /* memset before filling: hashed as bytes */
    uint8_t src[16], dst[16];
    uint32_t qpn;
    uint16_t file;
    uint8_t family;
    uint8_t pad;
};

struct msg {
    uint32_t start_psn, last_psn;
    bool complete;
    bool has_dma, has_imm;
    uint8_t prio;
    uint32_t dma_len, imm;
    uint64_t start_ns, end_ns;
    uint64_t bytes_seen;
};

struct bin {
    uint64_t idx, bytes;
};

struct flow {
    struct flow_key key;
    char *name;
    char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
    uint16_t sport;
    uint64_t packets, bytes, ce, cnps, psn_gaps, retx;
    uint32_t min_psn, max_psn, last_psn;
    bool mapped;             /* a sender QPN (ACK/CNP destination) is tied to this flow */
    GArray *bins;            /* struct bin, ascending idx */
    GArray *msgs;            /* struct msg, in start order */
    int64_t open;            /* index of the message being received, -1 if none */
};

/* ACKs, NAKs and CNPs sent to one QP (src, dst, dest QPN): the reverse of a data flow. */
struct ctl {
    struct flow_key key;
    struct flow *flow;       /* the data flow it belongs to, once known */
    uint64_t cnps;
};

struct pfc_state {
    bool paused;
    uint64_t start_ns, end_ns;
};

enum {
    C_ROCE_PACKETS, C_ROCE_BYTES, C_ECN, C_CNP, C_SEQ_ERR, C_OOS, C_PAUSE_CTRL, C_ICRC,
    C_MALFORMED, C_COUNT
};
static const char *const counter_names[C_COUNT] = {
    "roce_packets", "roce_bytes", "np_ecn_marked_roce_packets", "np_cnp_sent",
    "packet_seq_err", "out_of_sequence", "tx_pause_ctrl_phy", "icrc_errors", "malformed_frames",
};

struct node {                /* one capture file */
    char *path, *name;
    uint64_t counters[C_COUNT];
    uint64_t prio_pause[8], prio_pause_ns[8];
    struct pfc_state pfc[8];
};

struct pfc_row {
    uint64_t t_ns;
    uint32_t node;
    uint8_t prio;
    bool resume;
    uint64_t duration_ns;
};

struct stats {
    uint64_t interval_ns, link_bps, t0;
    bool several_files;
    struct node *nodes;
    guint nnodes;
    GHashTable *flows;       /* flow_key -> struct flow (owned) */
    GHashTable *pairs;       /* flow_key with qpn 0 -> GPtrArray of struct flow */
    GHashTable *ctls;        /* flow_key -> struct ctl (owned) */
    GPtrArray *flow_list;    /* creation order */
    GArray *pfc_rows;
    GPtrArray *warnings;     /* char* */
    uint64_t records, end_ns, pause_frames, paused_ns;
    uint64_t before_origin;  /* records earlier than t0 (timestamps out of order) */
    uint64_t backwards, backwards_max_ns; /* records dated before the one before them in
                                           * their file, and by how much at most */
};

/* ---- helpers ---- */

G_STATIC_ASSERT(sizeof(struct flow_key) % 8 == 0);

static guint key_hash(gconstpointer p)
{
    /* Per-packet: mix the key 8 bytes at a time (multiply-xorshift). */
    const uint8_t *b = p;
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < sizeof(struct flow_key); i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDull;
        h ^= h >> 32;
    }
    return (guint)h;
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
    return memcmp(a, b, sizeof(struct flow_key)) == 0;
}

/* Signed distance a - b between 24-bit PSNs. */
static int32_t psn_diff(uint32_t a, uint32_t b)
{
    return (int32_t)((a - b) << 8) >> 8;
}

static void make_key(struct flow_key *k, const struct frame_info *fi, uint16_t file, bool fwd,
                     uint32_t qpn)
{
    memset(k, 0, sizeof *k);
    memcpy(k->src, fwd ? fi->src_ip : fi->dst_ip, 16);
    memcpy(k->dst, fwd ? fi->dst_ip : fi->src_ip, 16);
    k->qpn = qpn;
    k->file = file;
    k->family = fi->ip_version;
}

static void warn(struct stats *s, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void warn(struct stats *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_ptr_array_add(s->warnings, g_strdup_vprintf(fmt, ap));
    va_end(ap);
}

static void flow_free(gpointer p)
{
    struct flow *f = p;
    g_free(f->name);
    g_array_free(f->bins, TRUE);
    g_array_free(f->msgs, TRUE);
    g_free(f);
}

static struct flow *flow_get(struct stats *s, const struct frame_info *fi, uint16_t file)
{
    struct flow_key k;
    make_key(&k, fi, file, true, fi->dest_qp);
    struct flow *f = g_hash_table_lookup(s->flows, &k);
    if (f)
        return f;
    f = g_new0(struct flow, 1);
    f->key = k;
    frame_ip_str(fi, true, f->src, sizeof f->src);
    frame_ip_str(fi, false, f->dst, sizeof f->dst);
    f->name = s->several_files
                  ? g_strdup_printf("%s-%s-qp%u@%s", f->src, f->dst, fi->dest_qp,
                                    s->nodes[file].name)
                  : g_strdup_printf("%s-%s-qp%u", f->src, f->dst, fi->dest_qp);
    f->sport = fi->sport;
    f->min_psn = f->max_psn = f->last_psn = fi->psn;
    f->bins = g_array_new(FALSE, FALSE, sizeof(struct bin));
    f->msgs = g_array_new(FALSE, FALSE, sizeof(struct msg));
    f->open = -1;
    g_hash_table_insert(s->flows, &f->key, f);
    g_ptr_array_add(s->flow_list, f);

    struct flow_key pk = k;
    pk.qpn = 0;
    GPtrArray *pair = g_hash_table_lookup(s->pairs, &pk);
    if (!pair) {
        pair = g_ptr_array_new();
        g_hash_table_insert(s->pairs, g_memdup2(&pk, sizeof pk), pair);
    }
    g_ptr_array_add(pair, f);
    return f;
}

/* Appends to the last bin or a new one; a timestamp out of order appends too, and
 * bins_finish() sorts and merges once (inserting in place was quadratic: 240k reversed
 * records took 21 s). */
static void bin_add(GArray *bins, uint64_t idx, uint64_t bytes)
{
    guint n = bins->len;
    if (n > 0 && g_array_index(bins, struct bin, n - 1).idx == idx) {
        g_array_index(bins, struct bin, n - 1).bytes += bytes;
        return;
    }
    struct bin b = { idx, bytes };
    g_array_append_val(bins, b);
}

static gint bin_cmp(gconstpointer a, gconstpointer b)
{
    uint64_t x = ((const struct bin *)a)->idx, y = ((const struct bin *)b)->idx;
    return (x > y) - (x < y);
}

/* Bins in ascending order, one per index. */
static void bins_finish(GArray *bins)
{
    gboolean sorted = TRUE;
    for (guint i = 1; i < bins->len && sorted; i++)
        sorted = g_array_index(bins, struct bin, i - 1).idx < g_array_index(bins, struct bin, i).idx;
    if (sorted)
        return;
    g_array_sort(bins, bin_cmp);
    guint out = 0;
    for (guint i = 0; i < bins->len; i++) {
        struct bin *b = &g_array_index(bins, struct bin, i);
        if (out > 0 && g_array_index(bins, struct bin, out - 1).idx == b->idx)
            g_array_index(bins, struct bin, out - 1).bytes += b->bytes;
        else
            g_array_index(bins, struct bin, out++) = *b;
    }
    g_array_set_size(bins, out);
}

static uint8_t frame_prio(const struct frame_info *fi)
{
    return fi->vlan_tags ? fi->pcp : (uint8_t)(fi->dscp >> 3);
}

/* ---- per-packet work ---- */

/* A message starts at its FIRST (or is whole in its ONLY) packet. */
static void open_msg(struct flow *f, const struct frame_info *fi, uint64_t t)
{
    struct msg m = { .start_psn = fi->psn, .start_ns = t, .prio = frame_prio(fi),
                     .bytes_seen = fi->payload, .has_dma = fi->has_reth, .dma_len = fi->reth_dma_len };
    if (fi->pos == MSG_ONLY) {
        m.complete = true;
        m.last_psn = fi->psn;
        m.end_ns = t;
        m.has_imm = fi->has_imm;
        m.imm = fi->imm;
    }
    g_array_append_val(f->msgs, m);
    f->open = fi->pos == MSG_ONLY ? -1 : (int64_t)f->msgs->len - 1;
}

static void on_data(struct stats *s, struct node *n, const struct frame_info *fi, uint16_t file,
                    uint64_t t)
{
    struct flow *f = flow_get(s, fi, file);
    bool fresh = f->packets == 0;
    int32_t d = fresh ? 1 : psn_diff(fi->psn, f->max_psn);
    f->packets++;
    f->bytes += fi->payload;
    if (fi->ecn == 3) {
        f->ce++;
        n->counters[C_ECN]++;
    }
    bin_add(f->bins, t / s->interval_ns, fi->wire_len + 20u /* preamble, SFD, IFG */);
    /* A discontinuity is a PSN that does not follow the previous packet's: a gap (loss before
     * the capture point) or a step back (go-back-N); a run of retransmissions is in order. */
    if (!fresh && fi->psn != ((f->last_psn + 1u) & 0xFFFFFFu)) {
        f->psn_gaps++;
        n->counters[C_OOS]++;
    }
    f->last_psn = fi->psn;
    if (psn_diff(fi->psn, f->min_psn) < 0)
        f->min_psn = fi->psn;

    if (d > 0) { /* a PSN beyond any seen: first transmission as far as we can tell */
        f->max_psn = fi->psn;
        if (fi->pos == MSG_FIRST || fi->pos == MSG_ONLY) {
            open_msg(f, fi, t);
        } else if (f->open >= 0) { /* MIDDLE or LAST of the message being received */
            struct msg *m = &g_array_index(f->msgs, struct msg, f->open);
            m->bytes_seen += fi->payload;
            if (fi->pos == MSG_LAST) {
                m->complete = true;
                m->last_psn = fi->psn;
                m->end_ns = MAX(t, m->start_ns); /* (a LAST stamped before its FIRST) */
                m->has_imm = fi->has_imm;
                m->imm = fi->imm;
                f->open = -1;
            }
        }
        return;
    }
    /* A PSN at or below the highest seen: a retransmission (go-back-N). A retransmitted last
     * packet delivers its message later than the first copy did. */
    f->retx++;
    if (fi->pos == MSG_FIRST || fi->pos == MSG_ONLY) {
        /* the first copy of a message's first packet may have been lost before the capture
         * point (the later packets then came first): its retransmission starts the message */
        gboolean known = FALSE;
        for (guint i = 0; i < f->msgs->len && !known; i++)
            known = g_array_index(f->msgs, struct msg, i).start_psn == fi->psn;
        if (!known) {
            open_msg(f, fi, t);
            return;
        }
    }
    if (fi->pos == MSG_LAST || fi->pos == MSG_ONLY) {
        for (guint i = f->msgs->len; i-- > 0;) {
            struct msg *m = &g_array_index(f->msgs, struct msg, i);
            if (m->complete && m->last_psn == fi->psn) {
                m->end_ns = MAX(m->end_ns, t);
                break;
            }
            if (psn_diff(m->start_psn, fi->psn) <= 0)
                break; /* this message holds the PSN; older ones end before it */
        }
    }
}

static struct ctl *ctl_get(struct stats *s, const struct frame_info *fi, uint16_t file)
{
    struct flow_key k;
    make_key(&k, fi, file, true, fi->dest_qp);
    struct ctl *c = g_hash_table_lookup(s->ctls, &k);
    if (!c) {
        c = g_new0(struct ctl, 1);
        c->key = k;
        g_hash_table_insert(s->ctls, &c->key, c);
    }
    return c;
}

/* Data flows in the direction opposite to a control packet's. */
static GPtrArray *reverse_pair(struct stats *s, const struct frame_info *fi, uint16_t file)
{
    struct flow_key pk;
    make_key(&pk, fi, file, false, 0);
    return g_hash_table_lookup(s->pairs, &pk);
}

static void on_ack(struct stats *s, const struct frame_info *fi, uint16_t file)
{
    struct ctl *c = ctl_get(s, fi, file);
    if (c->flow)
        return;
    GPtrArray *pair = reverse_pair(s, fi, file);
    if (!pair)
        return;
    struct flow *by_psn = NULL, *by_port = NULL;
    unsigned n_psn = 0, n_port = 0;
    for (guint i = 0; i < pair->len; i++) {
        struct flow *f = g_ptr_array_index(pair, i);
        /* An ACK carries a PSN the flow sent; a NAK the PSN it expects next. */
        if (f->mapped || psn_diff(fi->psn, f->min_psn) < 0 || psn_diff(fi->psn, f->max_psn) > 1)
            continue;
        by_psn = f;
        n_psn++;
        if (f->sport == fi->sport) {
            by_port = f;
            n_port++;
        }
    }
    struct flow *f = n_psn == 1 ? by_psn : n_port == 1 ? by_port : NULL;
    if (f) {
        c->flow = f;
        f->mapped = true;
    }
}

static void on_pfc(struct stats *s, struct node *n, const struct frame_info *fi, uint64_t t)
{
    bool xoff = false;
    for (int p = 0; p < 8; p++) {
        if (!(fi->pfc_vector >> p & 1u))
            continue;
        struct pfc_state *st = &n->pfc[p];
        if (st->paused && st->end_ns < t) { /* the last pause ran out before this frame */
            /* (end_ns >= start_ns: a reload stamped before the pause began cannot shorten it) */
            struct pfc_row r = { st->end_ns, (uint32_t)(n - s->nodes), (uint8_t)p, true,
                                 st->end_ns - st->start_ns };
            g_array_append_val(s->pfc_rows, r);
            n->prio_pause_ns[p] += r.duration_ns;
            st->paused = false;
        }
        uint16_t q = fi->pfc_time[p];
        if (q > 0) {
            xoff = true;
            n->prio_pause[p]++;
            if (!st->paused) {
                struct pfc_row r = { t, (uint32_t)(n - s->nodes), (uint8_t)p, false, 0 };
                g_array_append_val(s->pfc_rows, r);
                st->paused = true;
                st->start_ns = t;
            }
            /* 512 bit times per quantum = 64 bytes at the link rate; the timer reloads. */
            st->end_ns = MAX(t, st->start_ns) + (serialisation_ps((uint64_t)q * 64u, s->link_bps) + 500u) / 1000u;
        } else if (st->paused) {
            struct pfc_row r = { MAX(t, st->start_ns), (uint32_t)(n - s->nodes), (uint8_t)p, true,
                                 t > st->start_ns ? t - st->start_ns : 0 };
            g_array_append_val(s->pfc_rows, r);
            n->prio_pause_ns[p] += r.duration_ns;
            st->paused = false;
        }
    }
    if (xoff)
        s->pause_frames++;
}

static void pfc_finish(struct stats *s, struct node *n)
{
    for (int p = 0; p < 8; p++) {
        struct pfc_state *st = &n->pfc[p];
        if (!st->paused)
            continue;
        /* Still paused when the capture ends: the timer runs out as the quanta said. */
        struct pfc_row r = { st->end_ns, (uint32_t)(n - s->nodes), (uint8_t)p, true,
                             st->end_ns - st->start_ns };
        g_array_append_val(s->pfc_rows, r);
        n->prio_pause_ns[p] += r.duration_ns;
        st->paused = false;
        s->end_ns = MAX(s->end_ns, st->end_ns);
    }
}

static bool process_file(struct stats *s, uint16_t file, GError **err)
{
    struct node *n = &s->nodes[file];
    struct pcap_reader *r = pcap_reader_open(n->path, err);
    if (!r)
        return false;
    uint32_t lt = pcap_reader_linktype(r);
    struct pcap_record rec;
    struct frame_info fi;
    int rc;
    uint64_t last = 0;
    while ((rc = pcap_reader_next(r, &rec, err)) == 1) {
        s->records++;
        uint64_t t = rec.t_ns > s->t0 ? rec.t_ns - s->t0 : 0;
        if (rec.t_ns < s->t0)
            s->before_origin++; /* out of order before the time origin: counted at t = 0 */
        /* a capture's queues can stamp a record before the one written before it: counted
         * (rates place it at its own time; a message or a pause never ends before it starts) */
        if (t < last) {
            s->backwards++;
            s->backwards_max_ns = MAX(s->backwards_max_ns, last - t);
        }
        last = MAX(last, t);
        s->end_ns = MAX(s->end_ns, t);
        if (frame_parse(lt, rec.data, rec.cap_len, rec.orig_len, &fi) != 0) {
            if (n->counters[C_MALFORMED]++ < MAX_REPORTED_MALFORMED)
                g_printerr("rocesim pcap-stats: %s: record %" G_GUINT64_FORMAT
                           ": malformed frame: %s\n", n->path, rec.index, fi.error);
            continue;
        }
        switch (fi.type) {
        case FRAME_ROCE:
            n->counters[C_ROCE_PACKETS]++;
            n->counters[C_ROCE_BYTES] += fi.wire_len;
            if (fi.icrc == ICRC_BAD)
                n->counters[C_ICRC]++;
            if (fi.is_data) {
                on_data(s, n, &fi, file, t);
            } else if (fi.is_cnp) {
                n->counters[C_CNP]++;
                ctl_get(s, &fi, file)->cnps++;
            } else if (fi.has_aeth && fi.opcode == BTH_OP_ACK) {
                if (fi.aeth_syndrome == AETH_NAK_PSN_SEQ)
                    n->counters[C_SEQ_ERR]++;
                on_ack(s, &fi, file);
                if (fi.becn) { /* a CNP-flagged ACK (np_feedback = ack_flag) notifies like a CNP */
                    n->counters[C_CNP]++;
                    ctl_get(s, &fi, file)->cnps++;
                }
            }
            break;
        case FRAME_PFC:
            on_pfc(s, n, &fi, t);
            break;
        case FRAME_PAUSE:
            if (fi.pfc_time[0] > 0)
                n->counters[C_PAUSE_CTRL]++;
            break;
        default:
            break;
        }
    }
    pcap_reader_close(r);
    if (rc < 0)
        return false;
    pfc_finish(s, n);
    if (n->counters[C_MALFORMED])
        warn(s, "%s: %" G_GUINT64_FORMAT " malformed frames skipped", n->path,
             n->counters[C_MALFORMED]);
    if (n->counters[C_ICRC])
        warn(s, "%s: %" G_GUINT64_FORMAT " RoCE packets with a bad ICRC", n->path,
             n->counters[C_ICRC]);
    return true;
}

/* CNPs go to the data flow their QP was tied to, or to the only data flow between the
 * two hosts. */
static void attribute_cnps(struct stats *s)
{
    GHashTableIter it;
    gpointer v;
    uint64_t lost = 0;
    g_hash_table_iter_init(&it, s->ctls);
    while (g_hash_table_iter_next(&it, NULL, &v)) {
        struct ctl *c = v;
        if (!c->cnps)
            continue;
        struct flow *f = c->flow;
        if (!f) {
            struct flow_key pk = c->key;
            memcpy(pk.src, c->key.dst, 16);
            memcpy(pk.dst, c->key.src, 16);
            pk.qpn = 0;
            GPtrArray *pair = g_hash_table_lookup(s->pairs, &pk);
            if (pair && pair->len == 1)
                f = g_ptr_array_index(pair, 0);
        }
        if (f)
            f->cnps += c->cnps;
        else
            lost += c->cnps;
    }
    if (lost)
        warn(s, "%" G_GUINT64_FORMAT " CNPs could not be tied to a data flow (no ACK linked "
             "their QP to one); they count in np_cnp_sent but in no flow's cnps", lost);
}

/* ---- output ---- */

static bool write_file(const char *dir, const char *name, const GString *g, GError **err)
{
    char *path = g_build_filename(dir, name, NULL);
    bool ok = g_file_set_contents(path, g->str, (gssize)g->len, err);
    g_free(path);
    return ok;
}

static int cmp_u64(uint64_t a, uint64_t b) { return a < b ? -1 : a > b; }

struct rate_row {
    uint64_t t;
    const char *flow;
    double gbps;
};

static int rate_cmp(gconstpointer a, gconstpointer b)
{
    const struct rate_row *x = a, *y = b;
    int c = cmp_u64(x->t, y->t);
    return c ? c : strcmp(x->flow, y->flow);
}

static bool write_rates(struct stats *s, const char *dir, GError **err)
{
    GArray *rows = g_array_new(FALSE, FALSE, sizeof(struct rate_row));
    for (guint i = 0; i < s->flow_list->len; i++) {
        struct flow *f = g_ptr_array_index(s->flow_list, i);
        bins_finish(f->bins);
        for (guint j = 0; j < f->bins->len; j++) {
            struct bin *b = &g_array_index(f->bins, struct bin, j);
            struct rate_row r = { b->idx * s->interval_ns, f->name,
                                  (double)b->bytes * 8.0 / (double)s->interval_ns };
            g_array_append_val(rows, r);
            /* Zeros at both ends of an idle gap keep a plotted rate from ramping across it. */
            uint64_t next = j + 1 < f->bins->len ? g_array_index(f->bins, struct bin, j + 1).idx
                                                 : UINT64_MAX;
            if (next > b->idx + 1 && (b->idx + 1) * s->interval_ns <= s->end_ns) {
                struct rate_row z = { (b->idx + 1) * s->interval_ns, f->name, 0.0 };
                g_array_append_val(rows, z);
            }
            if (next != UINT64_MAX && next > b->idx + 2) {
                struct rate_row z = { (next - 1) * s->interval_ns, f->name, 0.0 };
                g_array_append_val(rows, z);
            }
        }
    }
    g_array_sort(rows, rate_cmp);
    GString *g = g_string_new(RESULTS_RATES_HEADER "\n");
    for (guint i = 0; i < rows->len; i++) {
        struct rate_row *r = &g_array_index(rows, struct rate_row, i);
        g_string_append_printf(g, "%" G_GUINT64_FORMAT ",", r->t);
        results_csv_quote(g, r->flow);
        g_string_append_printf(g, ",%.3f\n", r->gbps);
    }
    bool ok = write_file(dir, RESULTS_RATES, g, err);
    g_string_free(g, TRUE);
    g_array_free(rows, TRUE);
    return ok;
}

struct counter_row {
    const char *node;
    char name[40];
    uint64_t value;
};

static int counter_cmp(gconstpointer a, gconstpointer b)
{
    const struct counter_row *x = a, *y = b;
    int c = strcmp(x->node, y->node);
    return c ? c : strcmp(x->name, y->name);
}

static bool write_counters(struct stats *s, const char *dir, GError **err)
{
    GArray *rows = g_array_new(FALSE, FALSE, sizeof(struct counter_row));
    for (guint i = 0; i < s->nnodes; i++) {
        struct node *n = &s->nodes[i];
        struct counter_row r = { .node = n->name };
        for (int c = 0; c < C_COUNT; c++) {
            g_strlcpy(r.name, counter_names[c], sizeof r.name);
            r.value = n->counters[c];
            g_array_append_val(rows, r);
        }
        for (int p = 0; p < 8; p++) {
            snprintf(r.name, sizeof r.name, "tx_prio%d_pause", p);
            r.value = n->prio_pause[p];
            g_array_append_val(rows, r);
            snprintf(r.name, sizeof r.name, "rx_prio%d_pause_duration", p);
            r.value = n->prio_pause_ns[p] / 1000u; /* mlx5 counts microseconds */
            g_array_append_val(rows, r);
        }
    }
    g_array_sort(rows, counter_cmp);
    GString *g = g_string_new(RESULTS_COUNTERS_HEADER "\n");
    for (guint i = 0; i < rows->len; i++) {
        struct counter_row *r = &g_array_index(rows, struct counter_row, i);
        g_string_append_printf(g, "%" G_GUINT64_FORMAT ",", s->end_ns);
        results_csv_quote(g, r->node);
        g_string_append_printf(g, ",0,%s,%" G_GUINT64_FORMAT "\n", r->name, r->value);
    }
    bool ok = write_file(dir, RESULTS_COUNTERS, g, err);
    g_string_free(g, TRUE);
    g_array_free(rows, TRUE);
    return ok;
}

static int pfc_cmp(gconstpointer a, gconstpointer b, gpointer data)
{
    const struct pfc_row *x = a, *y = b;
    const struct stats *s = data;
    int c = cmp_u64(x->t_ns, y->t_ns);
    if (!c)
        c = strcmp(s->nodes[x->node].name, s->nodes[y->node].name);
    if (!c)
        c = (int)x->prio - (int)y->prio;
    if (!c)
        c = (int)x->resume - (int)y->resume; /* "pause" sorts before "resume" */
    return c;
}

static bool write_pfc(struct stats *s, const char *dir, GError **err)
{
    g_array_sort_with_data(s->pfc_rows, pfc_cmp, s);
    GString *g = g_string_new(RESULTS_PFC_HEADER "\n");
    for (guint i = 0; i < s->pfc_rows->len; i++) {
        struct pfc_row *r = &g_array_index(s->pfc_rows, struct pfc_row, i);
        g_string_append_printf(g, "%" G_GUINT64_FORMAT ",", r->t_ns);
        results_csv_quote(g, s->nodes[r->node].name);
        if (r->resume)
            g_string_append_printf(g, ",0,%u,resume,%" G_GUINT64_FORMAT "\n", r->prio,
                                   r->duration_ns);
        else
            g_string_append_printf(g, ",0,%u,pause,\n", r->prio);
    }
    bool ok = write_file(dir, RESULTS_PFC, g, err);
    g_string_free(g, TRUE);
    return ok;
}

static int flow_cmp(gconstpointer a, gconstpointer b)
{
    const struct flow *x = *(struct flow *const *)a, *y = *(struct flow *const *)b;
    return strcmp(x->name, y->name);
}

static bool write_flows(struct stats *s, const char *dir, GError **err)
{
    GPtrArray *v = g_ptr_array_new();
    for (guint i = 0; i < s->flow_list->len; i++)
        g_ptr_array_add(v, g_ptr_array_index(s->flow_list, i));
    g_ptr_array_sort(v, flow_cmp);
    GString *g = g_string_new("flow,src,dst,qpn,sport,packets,bytes,ce_fraction,cnps,psn_gaps\n");
    for (guint i = 0; i < v->len; i++) {
        struct flow *f = g_ptr_array_index(v, i);
        results_csv_quote(g, f->name);
        g_string_append_printf(g, ",%s,%s,%u,%u,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                               ",%.6f,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT "\n",
                               f->src, f->dst, f->key.qpn, f->sport, f->packets, f->bytes,
                               f->packets ? (double)f->ce / (double)f->packets : 0.0, f->cnps,
                               f->psn_gaps);
    }
    bool ok = write_file(dir, "flows.csv", g, err);
    g_string_free(g, TRUE);
    g_ptr_array_free(v, TRUE);
    return ok;
}

/* A message; seen by several capture points, it is one transfer from the earliest sight of
 * its first packet to the latest sight of its last one. */
struct xfer {
    const struct flow *flow;
    const struct msg *m;
    uint64_t id;
    uint64_t start_ns, end_ns;
};

/* The flow without the capture point that saw it (src, dst, destination QPN). */
static struct flow_key flow_identity(const struct flow *f)
{
    struct flow_key k = f->key;
    k.file = 0;
    return k;
}

static int xfer_cmp(gconstpointer a, gconstpointer b)
{
    const struct xfer *x = a, *y = b;
    int c = cmp_u64(x->start_ns, y->start_ns);
    if (!c)
        c = strcmp(x->flow->name, y->flow->name);
    if (!c)
        c = psn_diff(x->m->start_psn, y->m->start_psn) < 0 ? -1 : 1;
    return c;
}

static int xfer_id_cmp(gconstpointer a, gconstpointer b)
{
    const struct xfer *x = a, *y = b;
    int c = cmp_u64(x->start_ns, y->start_ns);
    return c ? c : cmp_u64(x->id, y->id);
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Host index under the simulator's address scheme, or -1. */
static int64_t addr_host(const struct flow *f, bool src)
{
    if (f->key.family != 4)
        return -1;
    const uint8_t *a = src ? f->key.src : f->key.dst;
    return frame_ipv4_host((uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3]);
}

static bool write_transfers(struct stats *s, const char *dir, JsonBuilder *metrics, GError **err)
{
    GArray *xs = g_array_new(FALSE, FALSE, sizeof(struct xfer));
    uint64_t started = 0, incomplete_flows = 0;
    bool all_imm = true, all_hosts = true;
    /* (flow identity, first PSN) -> 1 + index in xs, or 0 for a message seen but incomplete */
    GHashTable *seen = g_hash_table_new_full(g_bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref, NULL);
    for (guint i = 0; i < s->flow_list->len; i++) {
        struct flow *f = g_ptr_array_index(s->flow_list, i);
        bool incomplete = false;
        struct flow_key id = flow_identity(f);
        for (guint j = 0; j < f->msgs->len; j++) {
            struct msg *m = &g_array_index(f->msgs, struct msg, j);
            uint8_t kb[sizeof id + sizeof m->start_psn];
            memcpy(kb, &id, sizeof id);
            memcpy(kb + sizeof id, &m->start_psn, sizeof m->start_psn);
            GBytes *k = g_bytes_new(kb, sizeof kb);
            gpointer v = NULL;
            gboolean known = s->several_files && g_hash_table_lookup_extended(seen, k, NULL, &v);
            if (!known)
                started++;
            if (!m->complete) {
                incomplete = true;
                if (!known && s->several_files)
                    g_hash_table_insert(seen, g_bytes_ref(k), GUINT_TO_POINTER(0));
                g_bytes_unref(k);
                continue;
            }
            guint at = known ? GPOINTER_TO_UINT(v) : 0;
            if (at) { /* another capture point of the same message */
                struct xfer *x = &g_array_index(xs, struct xfer, at - 1);
                x->start_ns = MIN(x->start_ns, m->start_ns);
                x->end_ns = MAX(x->end_ns, m->end_ns);
            } else {
                struct xfer x = { f, m, 0, m->start_ns, m->end_ns };
                all_imm = all_imm && m->has_imm;
                all_hosts = all_hosts && addr_host(f, true) >= 0 && addr_host(f, false) >= 0;
                g_array_append_val(xs, x);
                if (s->several_files)
                    g_hash_table_replace(seen, g_bytes_ref(k), GUINT_TO_POINTER(xs->len));
            }
            g_bytes_unref(k);
        }
        incomplete_flows += incomplete;
    }
    g_hash_table_unref(seen);
    g_array_sort(xs, xfer_cmp);
    for (guint i = 0; i < xs->len; i++) {
        struct xfer *x = &g_array_index(xs, struct xfer, i);
        x->id = all_imm ? x->m->imm : i;
    }
    if (all_imm)
        g_array_sort(xs, xfer_id_cmp);
    if (incomplete_flows)
        warn(s, "%" G_GUINT64_FORMAT " flows have a message whose first or last packet is not "
             "in the capture; such messages are not in transfers.csv", incomplete_flows);

    double *fct = g_new(double, xs->len + 1);
    uint64_t bytes = 0, completion = 0;
    GString *g = g_string_new(RESULTS_TRANSFERS_HEADER "\n");
    for (guint i = 0; i < xs->len; i++) {
        struct xfer *x = &g_array_index(xs, struct xfer, i);
        const struct msg *m = x->m;
        uint64_t b = m->has_dma ? m->dma_len : m->bytes_seen;
        g_string_append_printf(g, "%" G_GUINT64_FORMAT ",", x->id);
        if (all_hosts)
            g_string_append_printf(g, "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT,
                                   addr_host(x->flow, true), addr_host(x->flow, false));
        else
            g_string_append_printf(g, "%s,%s", x->flow->src, x->flow->dst);
        g_string_append_printf(g, ",%" G_GUINT64_FORMAT ",%u,%" G_GUINT64_FORMAT
                               ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",,\n",
                               b, m->prio, x->start_ns, x->end_ns, x->end_ns - x->start_ns);
        fct[i] = (double)(x->end_ns - x->start_ns);
        bytes += b;
        completion = MAX(completion, x->end_ns);
    }
    bool ok = write_file(dir, RESULTS_TRANSFERS, g, err);
    g_string_free(g, TRUE);

    json_builder_set_member_name(metrics, "transfers");
    json_builder_add_int_value(metrics, (gint64)started);
    json_builder_set_member_name(metrics, "transfers_completed");
    json_builder_add_int_value(metrics, (gint64)xs->len);
    json_builder_set_member_name(metrics, "bytes");
    json_builder_add_int_value(metrics, (gint64)bytes);
    if (xs->len) {
        qsort(fct, xs->len, sizeof *fct, dbl_cmp);
        json_builder_set_member_name(metrics, "completion_ns");
        json_builder_add_int_value(metrics, (gint64)completion);
        json_builder_set_member_name(metrics, "fct_p50_ns");
        json_builder_add_int_value(metrics, (gint64)stats_percentile(fct, xs->len, 50));
        json_builder_set_member_name(metrics, "fct_p99_ns");
        json_builder_add_int_value(metrics, (gint64)stats_percentile(fct, xs->len, 99));
        json_builder_set_member_name(metrics, "fct_max_ns");
        json_builder_add_int_value(metrics, (gint64)fct[xs->len - 1]);
    }
    g_free(fct);
    g_array_free(xs, TRUE);
    return ok;
}

static void add_int(JsonBuilder *b, const char *name, uint64_t v)
{
    json_builder_set_member_name(b, name);
    json_builder_add_int_value(b, (gint64)v);
}

static void add_str(JsonBuilder *b, const char *name, const char *v)
{
    json_builder_set_member_name(b, name);
    json_builder_add_string_value(b, v);
}

static bool write_outputs(struct stats *s, const char *dir, const char *files_arg,
                          const char *interval_arg, const char *rate_arg, double wall_s,
                          GError **err)
{
    if (!write_rates(s, dir, err) || !write_counters(s, dir, err) || !write_pfc(s, dir, err) ||
        !write_flows(s, dir, err))
        return false;

    JsonBuilder *b = summary_begin();
    json_builder_set_member_name(b, "scenario");
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "pcap-stats");
    json_builder_begin_object(b);
    add_str(b, "files", files_arg);
    add_str(b, "interval", interval_arg);
    add_str(b, "link_rate", rate_arg);
    char t0[32];
    snprintf(t0, sizeof t0, "%" G_GUINT64_FORMAT, s->t0);
    add_str(b, "time_origin_ns", t0);
    json_builder_end_object(b);
    json_builder_end_object(b);

    json_builder_set_member_name(b, "metrics");
    json_builder_begin_object(b);
    bool ok = write_transfers(s, dir, b, err);
    uint64_t ecn = 0, cnp = 0, retx = 0;
    if (!s->several_files) {
        for (guint i = 0; i < s->nnodes; i++) {
            ecn += s->nodes[i].counters[C_ECN];
            cnp += s->nodes[i].counters[C_CNP];
        }
        for (guint i = 0; i < s->flow_list->len; i++)
            retx += ((struct flow *)g_ptr_array_index(s->flow_list, i))->retx;
    } else {
        /* a flow seen at several capture points counts once: the most any of them saw
         * (a point downstream of the marking sees every CE mark, of the NP every CNP) */
        GHashTable *best = g_hash_table_new_full(g_bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref, g_free);
        for (guint i = 0; i < s->flow_list->len; i++) {
            const struct flow *f = g_ptr_array_index(s->flow_list, i);
            struct flow_key id = flow_identity(f);
            GBytes *k = g_bytes_new(&id, sizeof id);
            uint64_t *m = g_hash_table_lookup(best, k);
            if (!m) {
                m = g_new0(uint64_t, 3);
                g_hash_table_insert(best, g_bytes_ref(k), m);
            }
            m[0] = MAX(m[0], f->ce);
            m[1] = MAX(m[1], f->cnps);
            m[2] = MAX(m[2], f->retx);
            g_bytes_unref(k);
        }
        GHashTableIter it;
        gpointer v;
        g_hash_table_iter_init(&it, best);
        while (g_hash_table_iter_next(&it, NULL, &v)) {
            ecn += ((uint64_t *)v)[0];
            cnp += ((uint64_t *)v)[1];
            retx += ((uint64_t *)v)[2];
        }
        g_hash_table_unref(best);
    }
    add_int(b, "ecn_marked", ecn);
    add_int(b, "cnp_sent", cnp);
    add_int(b, "retransmitted_packets", retx);
    add_int(b, "pause_frames", s->pause_frames);
    add_int(b, "paused_ns", s->paused_ns);
    json_builder_end_object(b);

    summary_warnings(b, s->warnings);

    json_builder_set_member_name(b, "engine");
    json_builder_begin_object(b);
    add_int(b, "events", s->records);
    json_builder_set_member_name(b, "events_per_s");
    json_builder_add_double_value(b, wall_s > 0 ? (double)s->records / wall_s : 0.0);
    add_int(b, "sim_time_ns", s->end_ns);
    json_builder_set_member_name(b, "wall_s");
    json_builder_add_double_value(b, wall_s);
    json_builder_end_object(b);

    if (ok)
        return summary_write(dir, b, err); /* (which closes the top object) */
    g_object_unref(b);
    return ok;
}

static void stats_free(struct stats *s)
{
    for (guint i = 0; i < s->nnodes; i++) {
        g_free(s->nodes[i].path);
        g_free(s->nodes[i].name);
    }
    g_free(s->nodes);
    if (s->flows)
        g_hash_table_destroy(s->flows);
    if (s->pairs)
        g_hash_table_destroy(s->pairs);
    if (s->ctls)
        g_hash_table_destroy(s->ctls);
    if (s->flow_list)
        g_ptr_array_free(s->flow_list, TRUE);
    if (s->pfc_rows)
        g_array_free(s->pfc_rows, TRUE);
    if (s->warnings)
        g_ptr_array_free(s->warnings, TRUE);
}

/* Opens every file once before the real pass: refuses bad files before any work and finds
 * the time origin (the earliest first packet). */
static bool survey(struct stats *s, GError **err)
{
    bool have_t0 = false;
    for (guint i = 0; i < s->nnodes; i++) {
        struct node *n = &s->nodes[i];
        struct pcap_reader *r = pcap_reader_open(n->path, err);
        if (!r)
            return false;
        uint32_t lt = pcap_reader_linktype(r);
        if (lt != LINKTYPE_ETHERNET && lt != LINKTYPE_LINUX_SLL && lt != LINKTYPE_LINUX_SLL2) {
            g_set_error(err, PCAPF_ERROR, PCAPF_ERROR_FORMAT,
                        "%s: link type %u is not supported (expected Ethernet 1, or Linux "
                        "cooked 113/276)", n->path, lt);
            pcap_reader_close(r);
            return false;
        }
        struct pcap_record rec;
        int rc = pcap_reader_next(r, &rec, err);
        pcap_reader_close(r);
        if (rc < 0)
            return false;
        if (rc == 1) {
            if (!have_t0 || rec.t_ns < s->t0)
                s->t0 = rec.t_ns;
            have_t0 = true;
        }
    }
    return true;
}

enum pcap_stats_outcome pcap_stats_run(const struct pcap_stats_opts *o)
{
    char **files = o->files;
    char *out = g_strdup(o->out), *interval_arg = g_strdup(o->interval), *rate_arg = g_strdup(o->link_rate);
    gboolean absolute = o->absolute_time;
    GError *err = NULL;
    int status = 2;
    char *files_arg = NULL;
    struct results_dir rd = { 0 };
    struct stats s = { 0 };
    simtime_t interval_ps = 0;
    uint64_t bps = 0;
    char *why = NULL;

    if (!interval_arg)
        interval_arg = g_strdup("10us");
    if (!rate_arg)
        rate_arg = g_strdup("100Gbps");
    if (!units_parse_time(interval_arg, &interval_ps, &why) || interval_ps < PS_PER_NS) {
        g_printerr("rocesim pcap-stats: --interval %s: %s\n", interval_arg,
                   why ? why : "must be at least 1ns");
        goto done;
    }
    if (!units_parse_rate(rate_arg, &bps, &why) || bps == 0) {
        g_printerr("rocesim pcap-stats: --link-rate %s: %s\n", rate_arg,
                   why ? why : "must be above 0");
        goto done;
    }
    if (!out)
        out = g_strdup_printf("%s.stats", files[0]);
    /* "dir/" would put the temporary folder inside dir: name the folder itself. */
    for (size_t l = strlen(out); l > 1 && out[l - 1] == '/'; l--)
        out[l - 1] = '\0';
    if (!results_check_target(out, &err)) { /* before reading: a refused -o costs nothing */
        g_printerr("rocesim pcap-stats: %s\n", err->message);
        goto done;
    }

    s.interval_ns = interval_ps / PS_PER_NS;
    s.link_bps = bps;
    s.nnodes = g_strv_length(files);
    if (s.nnodes > UINT16_MAX) {
        g_printerr("rocesim pcap-stats: at most %u files\n", UINT16_MAX);
        goto done;
    }
    s.several_files = s.nnodes > 1;
    s.nodes = g_new0(struct node, s.nnodes);
    for (guint i = 0; i < s.nnodes; i++) {
        s.nodes[i].path = g_strdup(files[i]);
        s.nodes[i].name = g_path_get_basename(files[i]);
        for (guint j = 0; j < i; j++)
            if (strcmp(s.nodes[j].name, s.nodes[i].name) == 0) { /* same basename twice */
                g_free(s.nodes[i].name);
                s.nodes[i].name = g_strdup(files[i]);
                break;
            }
    }
    s.flows = g_hash_table_new_full(key_hash, key_equal, NULL, flow_free);
    s.pairs = g_hash_table_new_full(key_hash, key_equal, g_free,
                                    (GDestroyNotify)g_ptr_array_unref);
    s.ctls = g_hash_table_new_full(key_hash, key_equal, NULL, g_free);
    s.flow_list = g_ptr_array_new();
    s.pfc_rows = g_array_new(FALSE, FALSE, sizeof(struct pfc_row));
    s.warnings = g_ptr_array_new_with_free_func(g_free);

    gint64 wall0 = g_get_monotonic_time();
    if (!survey(&s, &err)) {
        g_printerr("rocesim pcap-stats: %s\n", err->message);
        goto done;
    }
    if (absolute)
        s.t0 = 0;
    for (guint i = 0; i < s.nnodes; i++)
        if (!process_file(&s, (uint16_t)i, &err)) {
            g_printerr("rocesim pcap-stats: %s\n", err->message);
            goto done;
        }
    attribute_cnps(&s);
    for (guint i = 0; i < s.nnodes; i++)
        for (int p = 0; p < 8; p++)
            s.paused_ns += s.nodes[i].prio_pause_ns[p];
    uint64_t roce = 0;
    for (guint i = 0; i < s.nnodes; i++)
        roce += s.nodes[i].counters[C_ROCE_PACKETS];
    if (roce == 0 && s.pfc_rows->len == 0 && s.pause_frames == 0)
        warn(&s, "no RoCEv2 (UDP port 4791) or PFC frames in the capture");
    if (s.before_origin)
        warn(&s, "%" G_GUINT64_FORMAT " records are timestamped before the time origin (the first record of "
                 "the earliest file; timestamps out of order): counted at t = 0", s.before_origin);
    if (s.backwards)
        warn(&s, "%" G_GUINT64_FORMAT " records are timestamped before the record before them in their file (by up "
                 "to %" G_GUINT64_FORMAT " ns): rates count each at its own time; a message ends no earlier than "
                 "its first packet, a pause no earlier than it began", s.backwards, s.backwards_max_ns);

    /* the folder install of every results folder (results_io/folder.c): a temporary sibling,
     * renamed into place when complete */
    if (!results_begin(&rd, out, &err)) {
        /* a full disk, or a bad -o */
        status = err->domain == G_FILE_ERROR && err->code == G_FILE_ERROR_NOSPC ? 1 : 2;
        g_printerr("rocesim pcap-stats: %s\n", err->message);
        goto done;
    }
    status = 1; /* the input was good: what fails from here on is writing (README: exit 1) */
    files_arg = g_strjoinv(" ", files);
    double wall = (double)(g_get_monotonic_time() - wall0) / 1e6;
    if (!write_outputs(&s, rd.tmp, files_arg, interval_arg, rate_arg, wall, &err) || !results_commit(&rd, &err)) {
        g_printerr("rocesim pcap-stats: %s\n", err->message);
        goto done;
    }
    printf("pcap-stats: %" G_GUINT64_FORMAT " records from %u file%s, %u flows -> %s\n",
           s.records, s.nnodes, s.nnodes == 1 ? "" : "s", s.flow_list->len, out);
    for (guint i = 0; i < s.warnings->len; i++)
        g_printerr("rocesim pcap-stats: warning: %s\n", (char *)g_ptr_array_index(s.warnings, i));
    status = 0;

done:
    results_abort(&rd); /* nothing half-written is left: a no-op once committed */
    if (err)
        g_error_free(err);
    g_free(why);
    g_free(files_arg);
    stats_free(&s);
    g_free(out);
    g_free(interval_arg);
    g_free(rate_arg);
    return status == 0 ? PCAP_STATS_OK : status == 1 ? PCAP_STATS_WRITE_FAILED : PCAP_STATS_BAD_INPUT;
}
