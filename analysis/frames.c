/* RoCEv2 and PFC frame builders and parser; see frames.h. */
#include "analysis/frames.h"

#include <arpa/inet.h>
#include <glib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- byte helpers (network order unless named _le) ---- */

static inline void put16(uint8_t *b, uint32_t v) { b[0] = (uint8_t)(v >> 8); b[1] = (uint8_t)v; }
static inline void put24(uint8_t *b, uint32_t v)
{
    b[0] = (uint8_t)(v >> 16);
    b[1] = (uint8_t)(v >> 8);
    b[2] = (uint8_t)v;
}
static inline void put32(uint8_t *b, uint32_t v) { put16(b, v >> 16); put16(b + 2, v); }
static inline void put64(uint8_t *b, uint64_t v)
{
    put32(b, (uint32_t)(v >> 32));
    put32(b + 4, (uint32_t)v);
}
static inline uint32_t get16(const uint8_t *b) { return (uint32_t)b[0] << 8 | b[1]; }
static inline uint32_t get24(const uint8_t *b)
{
    return (uint32_t)b[0] << 16 | (uint32_t)b[1] << 8 | b[2];
}
static inline uint32_t get32(const uint8_t *b) { return get16(b) << 16 | get16(b + 2); }
static inline uint64_t get64(const uint8_t *b) { return (uint64_t)get32(b) << 32 | get32(b + 4); }
static inline uint32_t get32_le(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* ---- addressing ---- */

uint32_t frame_host_ipv4(uint32_t host)
{
    /* 24 bits of host index in octets 1-3 (first octet from 10 up), last octet 1. */
    uint32_t a = (10u + (host >> 16)) & 0xFFu;
    return a << 24 | ((host >> 8) & 0xFFu) << 16 | (host & 0xFFu) << 8 | 1u;
}

int64_t frame_ipv4_host(uint32_t ip)
{
    uint32_t a = ip >> 24;
    if ((ip & 0xFFu) != 1u || a < 10u)
        return -1;
    return (int64_t)((a - 10u) << 16 | ((ip >> 16) & 0xFFu) << 8 | ((ip >> 8) & 0xFFu));
}

void frame_host_mac(uint32_t host, uint8_t mac[6])
{
    mac[0] = 0x02; /* locally administered, unicast */
    mac[1] = 0x00;
    mac[2] = 0x00;
    put24(mac + 3, host & 0xFFFFFFu);
}

void frame_port_mac(uint32_t node, uint16_t port, uint8_t mac[6])
{
    mac[0] = 0x06; /* locally administered, unicast; differs from host MACs */
    put24(mac + 1, node & 0xFFFFFFu);
    put16(mac + 4, port);
}

/* ---- checksums ---- */

uint16_t ipv4_checksum(const uint8_t *hdr, size_t len)
{
    uint32_t sum = 0;
    size_t i;
    for (i = 0; i + 1 < len; i += 2)
        sum += get16(hdr + i);
    if (i < len)
        sum += (uint32_t)hdr[i] << 8;
    while (sum >> 16)
        sum = (sum & 0xFFFFu) + (sum >> 16);
    return (uint16_t)~sum;
}

#define CRC32_POLY 0xEDB88320u  /* reflected 0x04C11DB7, as zlib and the kernel's crc32_le */

static uint32_t crc_table[8][256];   /* slicing-by-8 */
static uint32_t x2n_table[32];       /* x^(2^k) mod P, reflected */

static uint32_t multmodp(uint32_t a, uint32_t b)
{
    /* a*b mod P in the reflected representation (bit 31 is x^0). */
    uint32_t m = 1u << 31, p = 0;
    for (;;) {
        if (a & m) {
            p ^= b;
            if ((a & (m - 1)) == 0)
                break;
        }
        m >>= 1;
        b = (b & 1) ? (b >> 1) ^ CRC32_POLY : b >> 1;
    }
    return p;
}

static void crc_init(void)
{
    static gsize once = 0;
    if (!g_once_init_enter(&once))
        return;
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ CRC32_POLY : c >> 1;
        crc_table[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++)
        for (int k = 1; k < 8; k++)
            crc_table[k][n] = (crc_table[k - 1][n] >> 8) ^ crc_table[0][crc_table[k - 1][n] & 0xFFu];
    x2n_table[0] = 1u << 30; /* x^1 */
    for (int k = 1; k < 32; k++)
        x2n_table[k] = multmodp(x2n_table[k - 1], x2n_table[k - 1]);
    g_once_init_leave(&once, 1);
}

uint32_t crc32_update(uint32_t crc, const uint8_t *buf, size_t len)
{
    crc_init();
    uint32_t c = ~crc;
    while (len >= 8) {
        uint32_t a = c ^ get32_le(buf), b = get32_le(buf + 4);
        c = crc_table[7][a & 0xFFu] ^ crc_table[6][(a >> 8) & 0xFFu] ^
            crc_table[5][(a >> 16) & 0xFFu] ^ crc_table[4][a >> 24] ^
            crc_table[3][b & 0xFFu] ^ crc_table[2][(b >> 8) & 0xFFu] ^
            crc_table[1][(b >> 16) & 0xFFu] ^ crc_table[0][b >> 24];
        buf += 8;
        len -= 8;
    }
    while (len--)
        c = (c >> 8) ^ crc_table[0][(c ^ *buf++) & 0xFFu];
    return ~c;
}

uint32_t crc32_zeros(uint32_t crc, size_t n)
{
    crc_init();
    /* A zero byte multiplies the CRC register by x^8 mod P, so n of them multiply it by
     * x^(8n), which square-and-multiply builds from the x^(2^k) table. Traces repeat a few
     * payload sizes (the MTU above all), so the last x^(8n) per slot is kept: 0 marks an empty
     * slot, as x^k mod P is never 0. */
    static _Thread_local struct { size_t n; uint32_t xn; } cache[16];
    unsigned slot = (unsigned)(n ^ (n >> 4) ^ (n >> 8)) & 15u;
    uint32_t xn = cache[slot].n == n ? cache[slot].xn : 0;
    if (!xn) {
        xn = 1u << 31; /* x^0 */
        unsigned k = 3; /* 8n = n * 2^3 */
        for (size_t m = n; m; m >>= 1, k++)
            if (m & 1)
                xn = multmodp(x2n_table[k & 31], xn);
        cache[slot].n = n;
        cache[slot].xn = xn;
    }
    return ~multmodp(xn, ~crc);
}

/* ICRC over a pseudo-packet: 8 bytes of 0xFF standing in for the IB LRH, then the IP, UDP and
 * BTH headers with the fields routers may change (TOS/TTL/IP checksum, or IPv6 traffic class,
 * flow label and hop limit; the UDP checksum; BTH FECN/BECN/reserved byte) set to all ones,
 * then the rest of the packet. This is Linux rxe_icrc.c (seed 0xDEBB20E3 is the CRC state after
 * the 8 0xFF bytes) and scapy's BTH.compute_icrc. `zeros` more zero bytes follow `len`. */
static uint32_t icrc_calc(const uint8_t *l3, size_t len, size_t zeros)
{
    static const uint8_t lrh[8] = { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF };
    uint8_t ph[60 + UDP_HDR_BYTES + BTH_BYTES];
    size_t iplen = ((l3[0] >> 4) == 6) ? IPV6_HDR_BYTES : (size_t)(l3[0] & 0x0Fu) * 4u;
    size_t hlen = iplen + UDP_HDR_BYTES + BTH_BYTES;
    if (hlen > len || iplen < IPV4_HDR_BYTES)
        return 0;
    memcpy(ph, l3, hlen);
    if (iplen == IPV6_HDR_BYTES && (l3[0] >> 4) == 6) {
        ph[0] |= 0x0F;   /* traffic class high nibble */
        ph[1] = 0xFF;    /* traffic class low nibble + flow label */
        ph[2] = 0xFF;
        ph[3] = 0xFF;
        ph[7] = 0xFF;    /* hop limit */
    } else {
        ph[1] = 0xFF;    /* TOS */
        ph[8] = 0xFF;    /* TTL */
        ph[10] = 0xFF;   /* header checksum */
        ph[11] = 0xFF;
    }
    ph[iplen + 6] = 0xFF; /* UDP checksum */
    ph[iplen + 7] = 0xFF;
    ph[iplen + UDP_HDR_BYTES + 4] = 0xFF; /* BTH FECN, BECN, reserved */
    uint32_t crc = crc32_update(0, lrh, sizeof lrh);
    crc = crc32_update(crc, ph, hlen);
    crc = crc32_update(crc, l3 + hlen, len - hlen);
    return zeros ? crc32_zeros(crc, zeros) : crc;
}

uint32_t roce_icrc(const uint8_t *l3, size_t len) { return icrc_calc(l3, len, 0); }

/* ---- builders ---- */

static size_t copy_out(uint8_t *buf, size_t cap, size_t off, const uint8_t *src, size_t n)
{
    if (off < cap)
        memcpy(buf + off, src, MIN(n, cap - off));
    return off + n;
}

static size_t zero_out(uint8_t *buf, size_t cap, size_t off, size_t n)
{
    if (off < cap)
        memset(buf + off, 0, MIN(n, cap - off));
    return off + n;
}

static size_t build_pfc(const struct packet *p, const struct frame_ctx *ctx, uint8_t *buf,
                        size_t cap)
{
    uint8_t f[PFC_FRAME_LEN] = { 0x01, 0x80, 0xC2, 0x00, 0x00, 0x01 };
    frame_port_mac(p->src, ctx->pfc_port, f + 6);
    put16(f + 12, ETHERTYPE_MACCTRL);
    put16(f + 14, MACCTRL_PFC);
    put16(f + 16, p->pfc_vector); /* the high octet must be zero */
    for (int prio = 0; prio < 8; prio++)
        put16(f + 18 + 2 * prio, (p->pfc_vector >> prio) & 1u ? p->pfc_quanta : 0u);
    /* bytes 34..59 stay zero: the pad up to the minimum frame */
    copy_out(buf, cap, 0, f, sizeof f);
    return sizeof f;
}

static size_t build_roce(const struct packet *p, const struct frame_ctx *ctx, uint8_t *buf,
                         size_t cap)
{
    uint8_t h[ETH_HDR_BYTES + VLAN_TAG_BYTES + IPV4_HDR_BYTES + UDP_HDR_BYTES + BTH_BYTES +
              RETH_BYTES + IMMDT_BYTES + INT_HDR_BYTES];
    size_t o = 0;
    frame_host_mac(p->dst, h);
    frame_host_mac(p->src, h + 6);
    o = 12;
    if (ctx->vlan) {
        put16(h + o, ETHERTYPE_VLAN);
        put16(h + o + 2, (uint32_t)(p->prio & 7u) << 13 | (ctx->vlan_id & 0x0FFFu));
        o += VLAN_TAG_BYTES;
    }
    put16(h + o, ETHERTYPE_IPV4);
    o += 2;
    const size_t l3 = o;

    uint8_t opcode, ackreq = 0, becn = 0;
    uint32_t payload = 0, ext = 0;
    switch (p->kind) {
    case PKT_DATA: {
        bool first = p->flags & PKT_F_FIRST, last = p->flags & PKT_F_LAST;
        bool imm = last && ctx->imm;
        opcode = first && last ? (imm ? BTH_OP_WRITE_ONLY_IMM : BTH_OP_WRITE_ONLY)
                 : first       ? BTH_OP_WRITE_FIRST
                 : last        ? (imm ? BTH_OP_WRITE_LAST_IMM : BTH_OP_WRITE_LAST)
                               : BTH_OP_WRITE_MIDDLE;
        ackreq = last;
        payload = p->payload;
        ext = (first ? RETH_BYTES : 0) + (imm ? IMMDT_BYTES : 0);
        break;
    }
    case PKT_ACK:
    case PKT_NAK:
        opcode = BTH_OP_ACK;
        ext = AETH_BYTES;
        becn = (p->flags & PKT_F_CNP) != 0; /* HPCC ns-3's CNP flag, carried in the BTH BECN bit */
        break;
    default: /* PKT_CNP */
        opcode = BTH_OP_CNP;
        becn = 1;
        ext = CNP_RESERVED_BYTES;
        break;
    }
    uint32_t pad = (4u - (payload & 3u)) & 3u;
    uint32_t inth = ctx->intd && p->kind != PKT_CNP ? INT_HDR_BYTES : 0;
    uint32_t ip_total = IPV4_HDR_BYTES + UDP_HDR_BYTES + BTH_BYTES + ext + inth + payload + pad +
                        ICRC_BYTES;

    uint8_t *ip = h + l3;
    ip[0] = 0x45;
    ip[1] = (uint8_t)((p->dscp & 0x3Fu) << 2 | (p->ecn & 3u));
    put16(ip + 2, ip_total);
    put16(ip + 4, ctx->ip_id);
    put16(ip + 6, 0x4000); /* DF, as RoCE NICs send it */
    ip[8] = 64;
    ip[9] = 17;
    put16(ip + 10, 0);
    put32(ip + 12, frame_host_ipv4(p->src));
    put32(ip + 16, frame_host_ipv4(p->dst));
    put16(ip + 10, ipv4_checksum(ip, IPV4_HDR_BYTES));

    uint8_t *udp = ip + IPV4_HDR_BYTES;
    put16(udp, p->sport);
    put16(udp + 2, ROCE_UDP_DPORT);
    put16(udp + 4, ip_total - IPV4_HDR_BYTES);
    put16(udp + 6, 0); /* RoCEv2 senders leave it zero; the ICRC protects the packet */

    uint8_t *bth = udp + UDP_HDR_BYTES;
    bth[0] = opcode;
    bth[1] = (uint8_t)(pad << 4); /* SE 0, MigReq 0 (as rxe sends), PadCnt, TVer 0 */
    put16(bth + 2, 0xFFFF);      /* default P_Key */
    bth[4] = (uint8_t)(becn << 6);
    put24(bth + 5, p->dst_qpn & 0xFFFFFFu);
    bth[8] = (uint8_t)(ackreq << 7);
    put24(bth + 9, p->psn & 0xFFFFFFu);

    uint8_t *x = bth + BTH_BYTES;
    if (p->kind == PKT_DATA && (p->flags & PKT_F_FIRST)) {
        /* RETH. The VA puts each transfer in its own 4 GiB window, so Wireshark users can
         * tell messages apart; R_Key is the destination QPN (any per-QP constant works). */
        uint64_t dma = ctx->msg_bytes ? MIN(ctx->msg_bytes, (uint64_t)UINT32_MAX)
                       : (p->flags & PKT_F_LAST) ? p->payload : 0;
        put64(x, (uint64_t)p->transfer << 32);
        put32(x + 8, p->dst_qpn & 0xFFFFFFu);
        put32(x + 12, (uint32_t)dma);
    }
    if (p->kind == PKT_DATA && (p->flags & PKT_F_LAST) && ctx->imm) /* ImmDt follows the RETH */
        put32(x + ((p->flags & PKT_F_FIRST) ? RETH_BYTES : 0), ctx->imm_data);
    else if (p->kind == PKT_ACK || p->kind == PKT_NAK) {
        x[0] = p->kind == PKT_ACK ? AETH_ACK : AETH_NAK_PSN_SEQ;
        put24(x + 1, ctx->msn & 0xFFFFFFu);
    } else if (p->kind == PKT_CNP) {
        memset(x, 0, CNP_RESERVED_BYTES);
    }
    if (inth)
        int_serialize(ctx->intd, x + ext);
    size_t hdr_end = (size_t)(x - h) + ext + inth;
    uint32_t icrc = icrc_calc(ip, hdr_end - l3, payload + pad);
    uint8_t icrc_le[4] = { (uint8_t)icrc, (uint8_t)(icrc >> 8), (uint8_t)(icrc >> 16),
                           (uint8_t)(icrc >> 24) };

    size_t len = copy_out(buf, cap, 0, h, hdr_end);
    len = zero_out(buf, cap, len, payload + pad);
    len = copy_out(buf, cap, len, icrc_le, ICRC_BYTES);
    if (len < ETH_MIN_FRAME) /* only a bodiless data packet can be this short */
        len = zero_out(buf, cap, len, ETH_MIN_FRAME - len);
    return len;
}

size_t frame_build(const struct packet *p, const struct frame_ctx *ctx, uint8_t *buf, size_t cap)
{
    static const struct frame_ctx zero_ctx;
    if (!ctx)
        ctx = &zero_ctx;
    switch (p->kind) {
    case PKT_DATA:
    case PKT_ACK:
    case PKT_NAK:
    case PKT_CNP:
        return build_roce(p, ctx, buf, cap);
    case PKT_PFC:
        return build_pfc(p, ctx, buf, cap);
    default:
        return 0;
    }
}

/* ---- parser ---- */

G_GNUC_PRINTF(2, 3)
static int fail(struct frame_info *fi, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fi->error, sizeof fi->error, fmt, ap);
    va_end(ap);
    return -1;
}

/* Checks that bytes [0, end) were captured; the message tells a snap-length cut from a frame
 * that is really too short. */
static bool need(struct frame_info *fi, uint32_t end, const char *what)
{
    if (end <= fi->cap_len)
        return true;
    if (end <= fi->orig_len)
        fail(fi, "%s cut off by the snap length (bytes %u of %u captured, %u needed)", what,
             fi->cap_len, fi->orig_len, end);
    else
        fail(fi, "truncated frame: %s needs %u bytes, the frame has %u", what, end,
             fi->orig_len);
    return false;
}

static uint32_t min_wire(uint32_t l2_len) { return MAX(l2_len, ETH_MIN_FRAME) + FCS_BYTES; }

static int parse_macctrl(struct frame_info *fi, const uint8_t *d, uint32_t o)
{
    fi->wire_len = min_wire(MAX(fi->orig_len, o + 2));
    if (!need(fi, o + 2, "MAC control opcode"))
        return -1;
    fi->macc_opcode = (uint16_t)get16(d + o);
    if (fi->macc_opcode == MACCTRL_PFC) {
        if (!need(fi, o + 2 + 2 + 16, "PFC frame"))
            return -1;
        fi->pfc_vector = (uint16_t)get16(d + o + 2);
        if (fi->pfc_vector & 0xFF00u)
            return fail(fi, "PFC class-enable vector 0x%04x has bits above priority 7 (byte %u)",
                        fi->pfc_vector, o + 2);
        for (int i = 0; i < 8; i++)
            fi->pfc_time[i] = (uint16_t)get16(d + o + 4 + 2 * i);
        fi->type = FRAME_PFC;
    } else if (fi->macc_opcode == MACCTRL_PAUSE) {
        if (!need(fi, o + 4, "PAUSE frame"))
            return -1;
        fi->pfc_time[0] = (uint16_t)get16(d + o + 2);
        fi->type = FRAME_PAUSE;
    }
    return 0;
}

/* Extension header bytes that follow the BTH for an opcode, and what the packet is. */
static uint32_t bth_layout(struct frame_info *fi, bool *reth, bool *aeth, bool *imm)
{
    uint8_t op = fi->opcode;
    *reth = *aeth = *imm = false;
    if (op == BTH_OP_CNP) {
        fi->is_cnp = true;
        return CNP_RESERVED_BYTES;
    }
    if (op >= 0x80) /* native-IB CNP and vendor opcodes: no known layout */
        return 0;
    uint32_t transport = op >> 5, code = op & 0x1Fu;
    /* RD (unused over RoCE) is taken as RDETH + DETH on every opcode; UD has a DETH. */
    uint32_t ext = transport == 2 ? 4 + 8 : transport == 3 ? 8 : 0;
    switch (code) {
    case 0x00: fi->pos = MSG_FIRST; fi->is_data = true; break;                  /* SEND first */
    case 0x01: fi->pos = MSG_MIDDLE; fi->is_data = true; break;                 /* SEND middle */
    case 0x02: fi->pos = MSG_LAST; fi->is_data = true; break;                   /* SEND last */
    case 0x03: fi->pos = MSG_LAST; fi->is_data = true; *imm = true; break;      /* ... +imm */
    case 0x04: fi->pos = MSG_ONLY; fi->is_data = true; break;                   /* SEND only */
    case 0x05: fi->pos = MSG_ONLY; fi->is_data = true; *imm = true; break;      /* ... +imm */
    case 0x06: fi->pos = MSG_FIRST; fi->is_data = true; *reth = true; break;    /* WRITE first */
    case 0x07: fi->pos = MSG_MIDDLE; fi->is_data = true; break;                 /* WRITE middle */
    case 0x08: fi->pos = MSG_LAST; fi->is_data = true; break;                   /* WRITE last */
    case 0x09: fi->pos = MSG_LAST; fi->is_data = true; *imm = true; break;      /* ... +imm */
    case 0x0A: fi->pos = MSG_ONLY; fi->is_data = true; *reth = true; break;     /* WRITE only */
    case 0x0B: fi->pos = MSG_ONLY; fi->is_data = true; *reth = *imm = true; break;
    case 0x0C: *reth = true; break;                                             /* READ request */
    case 0x0D: fi->pos = MSG_FIRST; fi->is_data = true; *aeth = true; break;    /* READ resp */
    case 0x0E: fi->pos = MSG_MIDDLE; fi->is_data = true; break;
    case 0x0F: fi->pos = MSG_LAST; fi->is_data = true; *aeth = true; break;
    case 0x10: fi->pos = MSG_ONLY; fi->is_data = true; *aeth = true; break;
    case 0x11: *aeth = true; break;                                             /* ACK */
    case 0x12: *aeth = true; ext += 8; break;                                   /* atomic ACK */
    case 0x13: case 0x14: ext += 28; break;                                     /* atomics */
    case 0x16: fi->pos = MSG_LAST; fi->is_data = true; ext += 4; break;         /* +invalidate */
    case 0x17: fi->pos = MSG_ONLY; fi->is_data = true; ext += 4; break;
    default: break;
    }
    return ext + (*reth ? RETH_BYTES : 0) + (*aeth ? AETH_BYTES : 0) + (*imm ? IMMDT_BYTES : 0);
}

static int parse_roce(struct frame_info *fi, const uint8_t *d, uint32_t l3, uint32_t l4)
{
    uint32_t u = l4;
    if (!need(fi, u + UDP_HDR_BYTES, "UDP header"))
        return -1;
    fi->sport = (uint16_t)get16(d + u);
    fi->dport = (uint16_t)get16(d + u + 2);
    fi->udp_len = (uint16_t)get16(d + u + 4);
    if (fi->dport != ROCE_UDP_DPORT)
        return 0;
    if (fi->udp_len != fi->ip_len - (l4 - l3))
        return fail(fi, "UDP length %u disagrees with the IP payload length %u (byte %u)",
                    fi->udp_len, fi->ip_len - (l4 - l3), u + 4);
    uint32_t roce_len = fi->udp_len - UDP_HDR_BYTES;
    if (roce_len < BTH_BYTES + ICRC_BYTES)
        return fail(fi, "UDP payload of %u bytes is too short for a BTH and ICRC", roce_len);
    uint32_t b = u + UDP_HDR_BYTES;
    if (!need(fi, b + BTH_BYTES, "BTH"))
        return -1;
    fi->type = FRAME_ROCE;
    fi->opcode = d[b];
    fi->se = d[b + 1] >> 7;
    fi->migreq = (d[b + 1] >> 6) & 1u;
    fi->padcnt = (d[b + 1] >> 4) & 3u;
    fi->tver = d[b + 1] & 0x0Fu;
    fi->pkey = (uint16_t)get16(d + b + 2);
    fi->fecn = d[b + 4] >> 7;
    fi->becn = (d[b + 4] >> 6) & 1u;
    fi->dest_qp = get24(d + b + 5);
    fi->ackreq = d[b + 8] >> 7;
    fi->psn = get24(d + b + 9);
    if (fi->tver != 0)
        return fail(fi, "BTH transport header version %u, expected 0 (byte %u)", fi->tver, b + 1);

    bool reth, aeth, imm;
    uint32_t ext = bth_layout(fi, &reth, &aeth, &imm);
    if (roce_len < BTH_BYTES + ext + fi->padcnt + ICRC_BYTES)
        return fail(fi, "UDP payload of %u bytes is too short for opcode 0x%02x (BTH, %u bytes "
                    "of extension headers, pad %u, ICRC)", roce_len, fi->opcode, ext, fi->padcnt);
    fi->payload = roce_len - BTH_BYTES - ext - fi->padcnt - ICRC_BYTES;
    uint32_t x = b + BTH_BYTES;
    if (x + ext > fi->cap_len) {
        /* Only a snap length can cut here (the IP length was checked against orig_len): the
         * packet still counts, without its RETH/AETH/ImmDt values. */
        fi->ext_truncated = true;
    } else {
        /* Header order is fixed: [RDETH][DETH] then RETH or AETH..., and ImmDt last. */
        uint32_t o = x + ((fi->opcode >> 5) == 2 ? 12u : (fi->opcode >> 5) == 3 ? 8u : 0u);
        if (reth) {
            fi->has_reth = true;
            fi->reth_va = get64(d + o);
            fi->reth_rkey = get32(d + o + 8);
            fi->reth_dma_len = get32(d + o + 12);
            o += RETH_BYTES;
        }
        if (aeth) {
            fi->has_aeth = true;
            fi->aeth_syndrome = d[o];
            fi->aeth_msn = get24(d + o + 1);
        }
        if (imm) {
            fi->has_imm = true;
            fi->imm = get32(d + x + ext - IMMDT_BYTES);
        }
    }
    if (l3 + fi->ip_len <= fi->cap_len) {
        uint32_t want = roce_icrc(d + l3, fi->ip_len - ICRC_BYTES);
        fi->icrc = get32_le(d + l3 + fi->ip_len - ICRC_BYTES) == want ? ICRC_OK : ICRC_BAD;
    }
    return 0;
}

int frame_parse(uint32_t linktype, const uint8_t *d, uint32_t cap_len, uint32_t orig_len,
                struct frame_info *fi)
{
    memset(fi, 0, sizeof *fi);
    fi->cap_len = MIN(cap_len, orig_len);
    fi->orig_len = orig_len;
    uint32_t type, l3, l2_on_wire; /* EtherType; where its payload starts; L2 bytes on the wire */
    switch (linktype) {
    case LINKTYPE_ETHERNET:
        if (!need(fi, ETH_HDR_BYTES, "Ethernet header"))
            return -1;
        memcpy(fi->dst_mac, d, 6);
        memcpy(fi->src_mac, d + 6, 6);
        type = get16(d + 12);
        l3 = ETH_HDR_BYTES;
        break;
    case LINKTYPE_LINUX_SLL: /* 16 bytes: packet type, ARPHRD, address length, address, protocol */
        if (!need(fi, 16, "Linux cooked (SLL) header"))
            return -1;
        if (get16(d + 4) == 6)
            memcpy(fi->src_mac, d + 6, 6);
        type = get16(d + 14);
        l3 = 16;
        break;
    case LINKTYPE_LINUX_SLL2: /* 20 bytes: protocol first, address last */
        if (!need(fi, 20, "Linux cooked (SLL2) header"))
            return -1;
        if (d[11] == 6)
            memcpy(fi->src_mac, d + 12, 6);
        type = get16(d);
        l3 = 20;
        break;
    default:
        return fail(fi, "unsupported link type %u (expected Ethernet, 1)", linktype);
    }
    while (type == ETHERTYPE_VLAN || type == ETHERTYPE_QINQ) {
        if (++fi->vlan_tags > 4)
            return fail(fi, "more than 4 VLAN tags (byte %u)", l3);
        if (!need(fi, l3 + 4, "802.1Q tag"))
            return -1;
        uint32_t tci = get16(d + l3);
        if (fi->vlan_tags == 1) {
            fi->pcp = (uint8_t)(tci >> 13);
            fi->vid = (uint16_t)(tci & 0x0FFFu);
        }
        type = get16(d + l3 + 2);
        l3 += 4;
    }
    /* Cooked captures replace the Ethernet header: count an Ethernet header in its place. */
    l2_on_wire = linktype == LINKTYPE_ETHERNET ? l3 : ETH_HDR_BYTES + VLAN_TAG_BYTES * fi->vlan_tags;

    if (type == ETHERTYPE_MACCTRL)
        return parse_macctrl(fi, d, l3);
    if (type == ETHERTYPE_IPV4) {
        if (!need(fi, l3 + 1, "IPv4 header"))
            return -1;
        if ((d[l3] >> 4) != 4)
            return fail(fi, "IP version %u in an IPv4 frame (byte %u)", d[l3] >> 4, l3);
        uint32_t ihl = (d[l3] & 0x0Fu) * 4u;
        if (ihl < IPV4_HDR_BYTES)
            return fail(fi, "IPv4 header length %u is below 20 (byte %u)", ihl, l3);
        if (!need(fi, l3 + ihl, "IPv4 header"))
            return -1;
        const uint8_t *ip = d + l3;
        fi->ip_version = 4;
        fi->dscp = ip[1] >> 2;
        fi->ecn = ip[1] & 3u;
        fi->ip_len = get16(ip + 2);
        fi->ip_id = (uint16_t)get16(ip + 4);
        fi->ttl = ip[8];
        memcpy(fi->src_ip, ip + 12, 4);
        memcpy(fi->dst_ip, ip + 16, 4);
        if (fi->ip_len < ihl)
            return fail(fi, "IPv4 total length %u is shorter than its %u-byte header (byte %u)",
                        fi->ip_len, ihl, l3 + 2);
        if (l3 + fi->ip_len > orig_len)
            return fail(fi, "IPv4 total length %u runs past the end of the %u-byte frame "
                        "(byte %u)", fi->ip_len, orig_len, l3 + 2);
        fi->wire_len = min_wire(l2_on_wire + fi->ip_len);
        if ((get16(ip + 6) & 0x3FFFu) != 0 || ip[9] != 17)
            return 0; /* fragments and non-UDP: not RoCEv2, which is never fragmented */
        if (fi->ip_len < ihl + UDP_HDR_BYTES)
            return fail(fi, "IPv4 total length %u leaves no room for a UDP header", fi->ip_len);
        return parse_roce(fi, d, l3, l3 + ihl);
    }
    if (type == ETHERTYPE_IPV6) {
        if (!need(fi, l3 + IPV6_HDR_BYTES, "IPv6 header"))
            return -1;
        const uint8_t *ip = d + l3;
        if ((ip[0] >> 4) != 6)
            return fail(fi, "IP version %u in an IPv6 frame (byte %u)", ip[0] >> 4, l3);
        uint32_t tc = (uint32_t)(ip[0] & 0x0Fu) << 4 | ip[1] >> 4;
        fi->ip_version = 6;
        fi->dscp = (uint8_t)(tc >> 2);
        fi->ecn = tc & 3u;
        fi->ip_len = IPV6_HDR_BYTES + get16(ip + 4);
        fi->ttl = ip[7];
        memcpy(fi->src_ip, ip + 8, 16);
        memcpy(fi->dst_ip, ip + 24, 16);
        if (l3 + fi->ip_len > orig_len)
            return fail(fi, "IPv6 payload length %u runs past the end of the %u-byte frame "
                        "(byte %u)", fi->ip_len - IPV6_HDR_BYTES, orig_len, l3 + 4);
        fi->wire_len = min_wire(l2_on_wire + fi->ip_len);
        if (ip[6] != 17) /* extension headers are not followed: RoCEv2 does not use them */
            return 0;
        if (fi->ip_len < IPV6_HDR_BYTES + UDP_HDR_BYTES)
            return fail(fi, "IPv6 payload length %u leaves no room for a UDP header",
                        fi->ip_len - IPV6_HDR_BYTES);
        return parse_roce(fi, d, l3, l3 + IPV6_HDR_BYTES);
    }
    fi->wire_len = min_wire(linktype == LINKTYPE_ETHERNET ? orig_len : orig_len - l3 + l2_on_wire);
    return 0;
}

void frame_ip_str(const struct frame_info *fi, bool src, char *out, size_t outlen)
{
    const uint8_t *a = src ? fi->src_ip : fi->dst_ip;
    if (!inet_ntop(fi->ip_version == 6 ? AF_INET6 : AF_INET, a, out, (socklen_t)outlen) && outlen)
        out[0] = '\0';
}
