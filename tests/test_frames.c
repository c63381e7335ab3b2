/* Frame builders, checksums, ICRC and the frame parser (analysis/frames.h).
 *
 * Expected frames are written out field by field. Their IPv4 checksums and ICRCs were computed
 * independently of this code, with Python's zlib.crc32 over the pseudo-packet that Linux
 * rxe_icrc.c and scapy's BTH.compute_icrc describe (8 x 0xFF, IP header with TOS/TTL/checksum
 * set to 0xFF, UDP checksum 0xFFFF, BTH byte 4 0xFF, rest of the packet). Two public vectors
 * pin the ICRC to real implementations: a CNP captured on a ConnectX-4 Lx and a UC SEND-only
 * packet, both from scapy's regression tests (secdev/scapy test/contrib/roce.uts). */
#include <string.h>

#include "analysis/frames.h"
#include "tests/testutil.h"

/* Compares buffers and, on a mismatch, prints the first differing byte. */
static void expect_bytes(const uint8_t *got, size_t got_len, const uint8_t *want, size_t want_len)
{
    CU_ASSERT_EQUAL(got_len, want_len);
    size_t n = MIN(got_len, want_len);
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) {
            printf("\n  byte %zu: got 0x%02x, want 0x%02x\n", i, got[i], want[i]);
            CU_FAIL("frame bytes differ");
            return;
        }
}

static struct packet data_pkt(uint8_t flags, uint32_t psn, uint16_t payload)
{
    struct packet p = { 0 };
    p.kind = PKT_DATA;
    p.flags = flags;
    p.src = 1;
    p.dst = 2;
    p.sport = 0xC001;
    p.dscp = 26;
    p.ecn = ECN_ECT0;
    p.psn = psn;
    p.dst_qpn = 0x000123;
    p.transfer = 7;
    p.payload = payload;
    return p;
}

/* ---- checksums ---- */

static void test_ipv4_checksum(void)
{
    /* Wikipedia, "Internet checksum" / IPv4 header checksum example: 0xb861. */
    uint8_t h1[20] = { 0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                       0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7 };
    CU_ASSERT_EQUAL(ipv4_checksum(h1, 20), 0xb861);
    h1[10] = 0xb8;
    h1[11] = 0x61;
    CU_ASSERT_EQUAL(ipv4_checksum(h1, 20), 0); /* a correct header sums to zero */
    /* The ConnectX-4 Lx CNP header (below) carries 0x9161. */
    uint8_t h2[20] = { 0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11,
                       0x00, 0x00, 0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00, 0x12, 0x01 };
    CU_ASSERT_EQUAL(ipv4_checksum(h2, 20), 0x9161);
}

static void test_crc32(void)
{
    /* The CRC-32 check value: crc32("123456789") = 0xCBF43926. */
    CU_ASSERT_EQUAL(crc32_update(0, (const uint8_t *)"123456789", 9), 0xCBF43926u);
    CU_ASSERT_EQUAL(crc32_update(0, NULL, 0), 0u);
    /* Split updates equal one update (exercises the 8-byte and tail loops). */
    const uint8_t *s = (const uint8_t *)"The quick brown fox jumps over the lazy dog";
    uint32_t whole = crc32_update(0, s, 43);
    CU_ASSERT_EQUAL(whole, 0x414FA339u); /* zlib.crc32 of the pangram */
    CU_ASSERT_EQUAL(crc32_update(crc32_update(0, s, 13), s + 13, 30), whole);
    /* Zero extension in O(log n) equals feeding the zeros. */
    static uint8_t zeros[9001];
    const size_t ns[] = { 0, 1, 7, 8, 9, 63, 64, 1024, 4096, 9001 };
    for (size_t i = 0; i < G_N_ELEMENTS(ns); i++) {
        uint32_t a = crc32_update(whole, zeros, ns[i]);
        uint32_t b = crc32_zeros(whole, ns[i]);
        CU_ASSERT_EQUAL(a, b);
        CU_ASSERT_EQUAL(crc32_zeros(0, ns[i]), crc32_update(0, zeros, ns[i]));
    }
}

/* A RoCEv2 CNP captured on a ConnectX-4 Lx, from scapy's test/contrib/roce.uts ("RoCE CNP
 * captured on ConnectX-4 Lx"), whose test asserts ICRC 0x82fd002a (the wire bytes read
 * big-endian, i.e. CRC value 0x2a00fd82 stored little-endian). */
static const uint8_t cx4_cnp[74] = {
    0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2, 0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32, 0x08, 0x00, /* Eth */
    0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11, 0x91, 0x61,             /* IPv4 */
    0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00, 0x12, 0x01,
    0x00, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00,                                     /* UDP */
    0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00,             /* BTH */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,                                     /* rsvd */
    0x82, 0xfd, 0x00, 0x2a,                                                             /* ICRC */
};

static void test_icrc_connectx_cnp(void)
{
    CU_ASSERT_EQUAL(roce_icrc(cx4_cnp + 14, 60 - 4), 0x2a00fd82u);
    struct frame_info fi;
    CU_ASSERT_EQUAL_FATAL(frame_parse(LINKTYPE_ETHERNET, cx4_cnp, 74, 74, &fi), 0);
    CU_ASSERT_EQUAL(fi.type, FRAME_ROCE);
    CU_ASSERT(fi.is_cnp);
    CU_ASSERT_EQUAL(fi.becn, 1);
    CU_ASSERT_EQUAL(fi.fecn, 0);
    CU_ASSERT_EQUAL(fi.dest_qp, 0x118u);
    CU_ASSERT_EQUAL(fi.dscp, 48);
    CU_ASSERT_EQUAL(fi.ecn, ECN_ECT0);
    CU_ASSERT_EQUAL(fi.icrc, ICRC_OK);
    CU_ASSERT_EQUAL(fi.wire_len, 78u);
}

/* scapy test/contrib/roce.uts "RoCE layer": a UC SEND-only with MigReq, PadCnt 2, a nonzero
 * UDP checksum and 20 bytes after the BTH; scapy asserts ICRC 0x78f353f3 (wire order). */
static void test_icrc_scapy_uc(void)
{
    static const uint8_t f[78] = {
        0x24, 0x8a, 0x07, 0xa8, 0xfa, 0x22, 0x24, 0x8a, 0x07, 0xa8, 0xfa, 0x22, 0x08, 0x00,
        0x45, 0x01, 0x00, 0x40, 0x04, 0x78, 0x40, 0x00, 0x40, 0x11, 0xb4, 0xd5, /* tos 1, id 1144 */
        0xc0, 0xa8, 0x00, 0x07, 0xc0, 0xa8, 0x00, 0x07,                         /* 192.168.0.7 */
        0xc0, 0x00, 0x12, 0xb7, 0x00, 0x2c, 0xac, 0xa2,                         /* 49152->4791 */
        0x24, 0x60, 0xff, 0xff, 0x00, 0x00, 0x00, 0xd3, 0x00, 0xcf, 0x17, 0x10, /* psn 13571856 */
        'F', '0', 0x81, 0x8b, 0xe2, 0x89, '5', 0xd9, 0x0e, 0x9a, 0x95, 'P', 'T', 0x01, 0xbe,
        0x88, '^', 'P', 0x00, 0x00,
        0x78, 0xf3, 0x53, 0xf3,
    };
    CU_ASSERT_EQUAL(ipv4_checksum(f + 14, 20), 0);
    CU_ASSERT_EQUAL(roce_icrc(f + 14, 64 - 4), 0xf353f378u);
    struct frame_info fi;
    CU_ASSERT_EQUAL_FATAL(frame_parse(LINKTYPE_ETHERNET, f, 78, 78, &fi), 0);
    CU_ASSERT_EQUAL(fi.opcode, 0x24);
    CU_ASSERT_EQUAL(fi.migreq, 1);
    CU_ASSERT_EQUAL(fi.padcnt, 2);
    CU_ASSERT_EQUAL(fi.psn, 13571856u);
    CU_ASSERT_EQUAL(fi.pos, MSG_ONLY);
    CU_ASSERT_EQUAL(fi.payload, 18u); /* 20 bytes minus 2 of pad */
    CU_ASSERT_EQUAL(fi.icrc, ICRC_OK);
}

/* ---- builders, byte by byte ---- */

static void test_build_write_first(void)
{
    struct packet p = data_pkt(PKT_F_FIRST, 0xABCD, 16);
    struct frame_ctx ctx = { .msg_bytes = 38, .ip_id = 0x1234 };
    static const uint8_t want[] = {
        0x02, 0x00, 0x00, 0x00, 0x00, 0x02,         /* dst MAC: host 2 */
        0x02, 0x00, 0x00, 0x00, 0x00, 0x01,         /* src MAC: host 1 */
        0x08, 0x00,                                 /* IPv4 */
        0x45,                                       /* version 4, IHL 5 */
        0x6a,                                       /* DSCP 26 << 2 | ECT(0) */
        0x00, 0x4c,                                 /* total 20+8+12+16+16+4 = 76 */
        0x12, 0x34,                                 /* id */
        0x40, 0x00,                                 /* DF */
        0x40,                                       /* TTL 64 */
        0x11,                                       /* UDP */
        0x11, 0x02,                                 /* header checksum */
        0x0a, 0x00, 0x01, 0x01,                     /* 10.0.1.1 = host 1 */
        0x0a, 0x00, 0x02, 0x01,                     /* 10.0.2.1 = host 2 */
        0xc0, 0x01, 0x12, 0xb7,                     /* sport 0xC001, dport 4791 */
        0x00, 0x38, 0x00, 0x00,                     /* UDP length 56, checksum 0 */
        0x06,                                       /* BTH: RC RDMA WRITE FIRST */
        0x00,                                       /* SE 0, M 0, PadCnt 0, TVer 0 */
        0xff, 0xff,                                 /* P_Key */
        0x00,                                       /* FECN 0, BECN 0 */
        0x00, 0x01, 0x23,                           /* DestQP */
        0x00,                                       /* AckReq 0 */
        0x00, 0xab, 0xcd,                           /* PSN */
        0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00, /* RETH VA: transfer 7 << 32 */
        0x00, 0x00, 0x01, 0x23,                     /* R_Key = DestQP */
        0x00, 0x00, 0x00, 0x26,                     /* DMA length 38 */
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* payload */
        0xc6, 0xbe, 0xe4, 0x54,                     /* ICRC 0x54e4bec6, little-endian */
    };
    uint8_t buf[256];
    size_t len = frame_build(&p, &ctx, buf, sizeof buf);
    expect_bytes(buf, len, want, sizeof want);
    CU_ASSERT_EQUAL(len + FCS_BYTES, ROCE_HDR_BYTES + ROCE_RETH_BYTES + 16u);
}

static void test_build_write_middle_last(void)
{
    struct packet p = data_pkt(0, 0xABCE, 16);
    struct frame_ctx ctx = { .ip_id = 0x1235 };
    static const uint8_t mid[] = {
        0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00,
        0x45, 0x6a, 0x00, 0x3c,                     /* total 60 */
        0x12, 0x35, 0x40, 0x00, 0x40, 0x11,
        0x11, 0x11,                                 /* checksum */
        0x0a, 0x00, 0x01, 0x01, 0x0a, 0x00, 0x02, 0x01,
        0xc0, 0x01, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, /* UDP length 40 */
        0x07, 0x00, 0xff, 0xff, 0x00, 0x00, 0x01, 0x23, 0x00, 0x00, 0xab, 0xce, /* MIDDLE */
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0x97, 0x01, 0x2f, 0x19,                     /* ICRC 0x192f0197 */
    };
    uint8_t buf[256];
    size_t len = frame_build(&p, &ctx, buf, sizeof buf);
    expect_bytes(buf, len, mid, sizeof mid);
    CU_ASSERT_EQUAL(len + FCS_BYTES, ROCE_HDR_BYTES + 16u);

    /* LAST with 6 bytes: PadCnt 2, AckReq, and CE. */
    p = data_pkt(PKT_F_LAST, 0xABCF, 6);
    p.ecn = ECN_CE;
    ctx.ip_id = 0x1236;
    static const uint8_t last[] = {
        0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00,
        0x45, 0x6b,                                 /* DSCP 26, CE */
        0x00, 0x34,                                 /* total 20+8+12+6+2+4 = 52 */
        0x12, 0x36, 0x40, 0x00, 0x40, 0x11,
        0x11, 0x17,
        0x0a, 0x00, 0x01, 0x01, 0x0a, 0x00, 0x02, 0x01,
        0xc0, 0x01, 0x12, 0xb7, 0x00, 0x20, 0x00, 0x00, /* UDP length 32 */
        0x08,                                       /* RDMA WRITE LAST */
        0x20,                                       /* PadCnt 2 */
        0xff, 0xff, 0x00, 0x00, 0x01, 0x23,
        0x80,                                       /* AckReq */
        0x00, 0xab, 0xcf,
        0, 0, 0, 0, 0, 0,                           /* payload */
        0, 0,                                       /* pad */
        0x52, 0x0e, 0x7b, 0x80,                     /* ICRC 0x807b0e52 */
    };
    len = frame_build(&p, &ctx, buf, sizeof buf);
    expect_bytes(buf, len, last, sizeof last);
}

static void test_build_write_only(void)
{
    /* No context: IP id 0, and the DMA length of an ONLY packet is its payload. */
    struct packet p = { 0 };
    p.kind = PKT_DATA;
    p.flags = PKT_F_FIRST | PKT_F_LAST;
    p.src = 258;
    p.dst = 0;
    p.sport = 0xFFFF;
    p.psn = 0xFFFFFF;
    p.dst_qpn = 0xABCDEF;
    p.payload = 8;
    static const uint8_t want[] = {
        0x02, 0x00, 0x00, 0x00, 0x00, 0x00,         /* host 0 */
        0x02, 0x00, 0x00, 0x00, 0x01, 0x02,         /* host 258 */
        0x08, 0x00,
        0x45, 0x00, 0x00, 0x44,                     /* total 20+8+12+16+8+4 = 68 */
        0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
        0x24, 0xa7,
        0x0a, 0x01, 0x02, 0x01,                     /* 10.1.2.1 = host 258 */
        0x0a, 0x00, 0x00, 0x01,                     /* 10.0.0.1 = host 0 */
        0xff, 0xff, 0x12, 0xb7, 0x00, 0x30, 0x00, 0x00,
        0x0a, 0x00, 0xff, 0xff, 0x00, 0xab, 0xcd, 0xef, 0x80, 0xff, 0xff, 0xff, /* ONLY */
        0, 0, 0, 0, 0, 0, 0, 0,                     /* VA: transfer 0 */
        0x00, 0xab, 0xcd, 0xef,                     /* R_Key */
        0x00, 0x00, 0x00, 0x08,                     /* DMA length = payload */
        0, 0, 0, 0, 0, 0, 0, 0,
        0xa9, 0x63, 0x4f, 0xf2,                     /* ICRC 0xf24f63a9 */
    };
    uint8_t buf[256];
    size_t len = frame_build(&p, NULL, buf, sizeof buf);
    expect_bytes(buf, len, want, sizeof want);
}

static void test_build_ack_nak_cnp(void)
{
    struct packet p = { 0 };
    p.kind = PKT_ACK;
    p.src = 2;
    p.dst = 1;
    p.sport = 0xC001;
    p.dscp = 26;
    p.psn = 0xABCF;
    p.dst_qpn = 0x456;
    struct frame_ctx ctx = { .msn = 3, .ip_id = 7 };
    static const uint8_t ack[] = {
        0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x08, 0x00,
        0x45, 0x68, 0x00, 0x30,                     /* DSCP 26, Not-ECT; total 48 */
        0x00, 0x07, 0x40, 0x00, 0x40, 0x11,
        0x23, 0x4d,
        0x0a, 0x00, 0x02, 0x01, 0x0a, 0x00, 0x01, 0x01,
        0xc0, 0x01, 0x12, 0xb7, 0x00, 0x1c, 0x00, 0x00, /* UDP length 28 */
        0x11, 0x00, 0xff, 0xff, 0x00, 0x00, 0x04, 0x56, 0x00, 0x00, 0xab, 0xcf, /* ACK */
        0x1f,                                       /* AETH syndrome: ACK, credits 31 */
        0x00, 0x00, 0x03,                           /* MSN */
        0x36, 0x35, 0x5a, 0x76,                     /* ICRC 0x765a3536 */
    };
    uint8_t buf[256];
    size_t len = frame_build(&p, &ctx, buf, sizeof buf);
    expect_bytes(buf, len, ack, sizeof ack);
    CU_ASSERT_EQUAL(len + FCS_BYTES, ACK_FRAME_BYTES);

    p.kind = PKT_NAK;
    p.psn = 0xABCE;
    ctx.ip_id = 8;
    uint8_t nak[sizeof ack];
    memcpy(nak, ack, sizeof ack);
    nak[19] = 0x08;                                 /* IP id */
    nak[24] = 0x23;                                 /* checksum 0x234c */
    nak[25] = 0x4c;
    nak[53] = 0xce;                                 /* PSN: the one expected */
    nak[54] = 0x60;                                 /* NAK, PSN sequence error */
    memcpy(nak + 58, (const uint8_t[]){ 0xd9, 0xcf, 0x73, 0x53 }, 4); /* ICRC 0x5373cfd9 */
    len = frame_build(&p, &ctx, buf, sizeof buf);
    expect_bytes(buf, len, nak, sizeof nak);

    p.kind = PKT_CNP;
    p.psn = 0;
    p.dscp = 48;
    p.ecn = ECN_ECT0;
    ctx.ip_id = 9;
    static const uint8_t cnp[] = {
        0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x08, 0x00,
        0x45, 0xc2, 0x00, 0x3c,                     /* DSCP 48, ECT(0); total 60 */
        0x00, 0x09, 0x40, 0x00, 0x40, 0x11,
        0x22, 0xe5,
        0x0a, 0x00, 0x02, 0x01, 0x0a, 0x00, 0x01, 0x01,
        0xc0, 0x01, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00,
        0x81,                                       /* CNP */
        0x00, 0xff, 0xff,
        0x40,                                       /* BECN */
        0x00, 0x04, 0x56,                           /* the QP to throttle */
        0x00, 0x00, 0x00, 0x00,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 16 reserved bytes */
        0xa9, 0x1f, 0x69, 0x4b,                     /* ICRC 0x4b691fa9 */
    };
    len = frame_build(&p, &ctx, buf, sizeof buf);
    expect_bytes(buf, len, cnp, sizeof cnp);
    CU_ASSERT_EQUAL(len + FCS_BYTES, CNP_FRAME_BYTES);
}

static void test_build_pfc(void)
{
    struct packet p = { 0 };
    p.kind = PKT_PFC;
    p.src = 1000;
    p.pfc_vector = 0x18; /* priorities 3 and 4 */
    p.pfc_quanta = 0xFFFF;
    struct frame_ctx ctx = { .pfc_port = 5 };
    static const uint8_t want[60] = {
        0x01, 0x80, 0xc2, 0x00, 0x00, 0x01,         /* MAC control multicast */
        0x06, 0x00, 0x03, 0xe8, 0x00, 0x05,         /* port 5 of node 1000 */
        0x88, 0x08,                                 /* MAC control */
        0x01, 0x01,                                 /* PFC */
        0x00, 0x18,                                 /* class-enable vector */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00,         /* times 0, 1, 2 */
        0xff, 0xff, 0xff, 0xff,                     /* times 3, 4 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00,         /* times 5, 6, 7 */
        /* 26 bytes of pad follow as zeros */
    };
    uint8_t buf[128];
    memset(buf, 0xAA, sizeof buf);
    size_t len = frame_build(&p, &ctx, buf, sizeof buf);
    expect_bytes(buf, len, want, sizeof want);
    CU_ASSERT_EQUAL(len + FCS_BYTES, PFC_FRAME_BYTES);

    /* XON: same frame with zero times. */
    p.pfc_quanta = 0;
    len = frame_build(&p, &ctx, buf, sizeof buf);
    CU_ASSERT_EQUAL(len, 60u);
    CU_ASSERT_EQUAL(buf[24] | buf[25] | buf[26] | buf[27], 0);
    CU_ASSERT_EQUAL(buf[17], 0x18);
}

/* Frame lengths agree with packet.h's frame sizes, and a snap length only cuts. */
static void test_build_lengths_and_snap(void)
{
    static uint8_t full[FRAME_MAX_BYTES], cut[128];
    struct packet p = data_pkt(PKT_F_FIRST, 5, 4096);
    struct frame_ctx ctx = { .msg_bytes = 1u << 20 };
    size_t len = frame_build(&p, &ctx, full, sizeof full);
    CU_ASSERT_EQUAL(len + FCS_BYTES, ROCE_HDR_BYTES + ROCE_RETH_BYTES + 4096u);
    /* The O(log n) ICRC of the builder equals a CRC over every byte of the frame. */
    uint32_t icrc = roce_icrc(full + 14, len - 14 - 4);
    uint32_t stored = full[len - 4] | full[len - 3] << 8 | full[len - 2] << 16 |
                      (uint32_t)full[len - 1] << 24;
    CU_ASSERT_EQUAL(icrc, stored);
    /* Snap length 64: the same first 64 bytes, and the full length is still reported. */
    memset(cut, 0xAA, sizeof cut);
    CU_ASSERT_EQUAL(frame_build(&p, &ctx, cut, 64), len);
    CU_ASSERT_EQUAL(memcmp(cut, full, 64), 0);
    CU_ASSERT_EQUAL(cut[64], 0xAA); /* nothing written past the cap */
    /* A cap inside the ICRC writes exactly up to it. */
    memset(full + len, 0xAA, 8);
    CU_ASSERT_EQUAL(frame_build(&p, &ctx, full, len - 2), len);
    /* A message over 4 GiB saturates the 32-bit DMA length. */
    ctx.msg_bytes = 1ull << 33;
    frame_build(&p, &ctx, full, sizeof full);
    CU_ASSERT_EQUAL(memcmp(full + 66, (const uint8_t[]){ 0xff, 0xff, 0xff, 0xff }, 4), 0);
    /* Unknown kinds have no frame. */
    p.kind = 99;
    CU_ASSERT_EQUAL(frame_build(&p, NULL, cut, sizeof cut), 0u);
}

static void test_build_vlan(void)
{
    struct packet p = data_pkt(0, 9, 64);
    p.prio = 3;
    struct frame_ctx ctx = { .vlan = true, .vlan_id = 100 };
    uint8_t buf[256];
    size_t len = frame_build(&p, &ctx, buf, sizeof buf);
    CU_ASSERT_EQUAL(len + FCS_BYTES, ROCE_HDR_BYTES + 64u + VLAN_TAG_BYTES);
    static const uint8_t tag[] = { 0x81, 0x00, 0x60, 0x64, 0x08, 0x00 }; /* PCP 3, VID 100 */
    CU_ASSERT_EQUAL(memcmp(buf + 12, tag, sizeof tag), 0);
    struct frame_info fi;
    CU_ASSERT_EQUAL_FATAL(frame_parse(LINKTYPE_ETHERNET, buf, (uint32_t)len, (uint32_t)len, &fi), 0);
    CU_ASSERT_EQUAL(fi.vlan_tags, 1);
    CU_ASSERT_EQUAL(fi.pcp, 3);
    CU_ASSERT_EQUAL(fi.vid, 100);
    CU_ASSERT_EQUAL(fi.psn, 9u);
    CU_ASSERT_EQUAL(fi.payload, 64u);
    CU_ASSERT_EQUAL(fi.icrc, ICRC_OK);
    CU_ASSERT_EQUAL(fi.wire_len, len + FCS_BYTES);
}

static void test_address_scheme(void)
{
    const uint32_t hosts[] = { 0, 1, 255, 256, 258, 65535, 65536, 1000000 };
    for (size_t i = 0; i < G_N_ELEMENTS(hosts); i++)
        CU_ASSERT_EQUAL(frame_ipv4_host(frame_host_ipv4(hosts[i])), (int64_t)hosts[i]);
    CU_ASSERT_EQUAL(frame_host_ipv4(258), 0x0A010201u);      /* 10.1.2.1 */
    CU_ASSERT_EQUAL(frame_host_ipv4(65536), 0x0B000001u);    /* 11.0.0.1 */
    CU_ASSERT_EQUAL(frame_ipv4_host(0xC0A80007u), -1);       /* 192.168.0.7 ends in .7 */
    CU_ASSERT_EQUAL(frame_ipv4_host(0x09000001u), -1);       /* 9.0.0.1 is below 10 */
    uint8_t mac[6];
    frame_port_mac(0x123456, 0x0102, mac);
    CU_ASSERT_EQUAL(memcmp(mac, (const uint8_t[]){ 0x06, 0x12, 0x34, 0x56, 0x01, 0x02 }, 6), 0);
}

/* ---- parser ---- */

static void test_parse_built(void)
{
    uint8_t buf[512];
    struct frame_info fi;
    struct frame_ctx ctx = { .msg_bytes = 38, .msn = 77 };

    struct packet p = data_pkt(PKT_F_FIRST, 0xABCD, 16);
    size_t len = frame_build(&p, &ctx, buf, sizeof buf);
    CU_ASSERT_EQUAL_FATAL(frame_parse(LINKTYPE_ETHERNET, buf, (uint32_t)len, (uint32_t)len, &fi), 0);
    CU_ASSERT_EQUAL(fi.type, FRAME_ROCE);
    CU_ASSERT_EQUAL(fi.opcode, BTH_OP_WRITE_FIRST);
    CU_ASSERT_EQUAL(fi.pos, MSG_FIRST);
    CU_ASSERT(fi.is_data);
    CU_ASSERT(fi.has_reth);
    CU_ASSERT_EQUAL(fi.reth_dma_len, 38u);
    CU_ASSERT_EQUAL(fi.reth_va, 7ull << 32);
    CU_ASSERT_EQUAL(fi.dest_qp, 0x123u);
    CU_ASSERT_EQUAL(fi.psn, 0xABCDu);
    CU_ASSERT_EQUAL(fi.sport, 0xC001);
    CU_ASSERT_EQUAL(fi.dscp, 26);
    CU_ASSERT_EQUAL(fi.ecn, ECN_ECT0);
    CU_ASSERT_EQUAL(fi.payload, 16u);
    CU_ASSERT_EQUAL(fi.icrc, ICRC_OK);
    CU_ASSERT_EQUAL(fi.wire_len, len + FCS_BYTES);
    CU_ASSERT_EQUAL(fi.src_ip[2], 1);
    char ip[64];
    frame_ip_str(&fi, false, ip, sizeof ip);
    CU_ASSERT_STRING_EQUAL(ip, "10.0.2.1");

    p = data_pkt(PKT_F_LAST, 0xABCF, 6);
    len = frame_build(&p, &ctx, buf, sizeof buf);
    CU_ASSERT_EQUAL_FATAL(frame_parse(LINKTYPE_ETHERNET, buf, (uint32_t)len, (uint32_t)len, &fi), 0);
    CU_ASSERT_EQUAL(fi.pos, MSG_LAST);
    CU_ASSERT_EQUAL(fi.ackreq, 1);
    CU_ASSERT_EQUAL(fi.padcnt, 2);
    CU_ASSERT_EQUAL(fi.payload, 6u);

    p.kind = PKT_NAK;
    len = frame_build(&p, &ctx, buf, sizeof buf);
    CU_ASSERT_EQUAL_FATAL(frame_parse(LINKTYPE_ETHERNET, buf, (uint32_t)len, (uint32_t)len, &fi), 0);
    CU_ASSERT_EQUAL(fi.opcode, BTH_OP_ACK);
    CU_ASSERT(!fi.is_data);
    CU_ASSERT(fi.has_aeth);
    CU_ASSERT_EQUAL(fi.aeth_syndrome, AETH_NAK_PSN_SEQ);
    CU_ASSERT_EQUAL(fi.aeth_msn, 77u);
    CU_ASSERT_EQUAL(fi.payload, 0u);

    p.kind = PKT_PFC;
    p.pfc_vector = 0x81;
    p.pfc_quanta = 1234;
    len = frame_build(&p, &ctx, buf, sizeof buf);
    CU_ASSERT_EQUAL_FATAL(frame_parse(LINKTYPE_ETHERNET, buf, (uint32_t)len, (uint32_t)len, &fi), 0);
    CU_ASSERT_EQUAL(fi.type, FRAME_PFC);
    CU_ASSERT_EQUAL(fi.pfc_vector, 0x81);
    CU_ASSERT_EQUAL(fi.pfc_time[0], 1234);
    CU_ASSERT_EQUAL(fi.pfc_time[7], 1234);
    CU_ASSERT_EQUAL(fi.pfc_time[3], 0);
    CU_ASSERT_EQUAL(fi.wire_len, 64u);
}

/* A 64-byte snap length: headers parse, lengths come from the IP/UDP headers. */
static void test_parse_snap_truncated(void)
{
    static uint8_t buf[FRAME_MAX_BYTES];
    struct frame_info fi;
    struct packet p = data_pkt(0, 42, 4096);
    size_t len = frame_build(&p, NULL, buf, sizeof buf);
    CU_ASSERT_EQUAL_FATAL(frame_parse(LINKTYPE_ETHERNET, buf, 64, (uint32_t)len, &fi), 0);
    CU_ASSERT_EQUAL(fi.type, FRAME_ROCE);
    CU_ASSERT_EQUAL(fi.payload, 4096u);
    CU_ASSERT_EQUAL(fi.psn, 42u);
    CU_ASSERT_EQUAL(fi.icrc, ICRC_UNCHECKED);
    CU_ASSERT_EQUAL(fi.wire_len, len + FCS_BYTES);
    /* FIRST: the RETH (bytes 54..70) is cut at 64; the packet still parses. */
    p = data_pkt(PKT_F_FIRST, 43, 4096);
    len = frame_build(&p, NULL, buf, sizeof buf);
    CU_ASSERT_EQUAL_FATAL(frame_parse(LINKTYPE_ETHERNET, buf, 64, (uint32_t)len, &fi), 0);
    CU_ASSERT(fi.ext_truncated);
    CU_ASSERT(!fi.has_reth);
    CU_ASSERT_EQUAL(fi.pos, MSG_FIRST);
    CU_ASSERT_EQUAL(fi.payload, 4096u);
    /* A cut inside the BTH is an error that says so. */
    CU_ASSERT_EQUAL(frame_parse(LINKTYPE_ETHERNET, buf, 50, (uint32_t)len, &fi), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(fi.error, "BTH cut off by the snap length"));
}

static void test_parse_icrc_masking(void)
{
    uint8_t buf[256];
    struct frame_info fi;
    struct packet p = data_pkt(0, 1, 32);
    uint32_t len = (uint32_t)frame_build(&p, NULL, buf, sizeof buf);
    /* A router may rewrite TTL, DSCP/ECN and the IP checksum, and set FECN/BECN: the ICRC
     * leaves them out, so the packet still checks. */
    buf[14 + 8] = 17;         /* TTL */
    buf[14 + 1] |= 3;         /* CE */
    buf[14 + 10] ^= 0xFF;     /* checksum */
    buf[42 + 4] = 0x80;       /* FECN */
    CU_ASSERT_EQUAL(frame_parse(LINKTYPE_ETHERNET, buf, len, len, &fi), 0);
    CU_ASSERT_EQUAL(fi.icrc, ICRC_OK);
    /* ... but not the DestQP or the payload. */
    buf[42 + 7] ^= 1;
    CU_ASSERT_EQUAL(frame_parse(LINKTYPE_ETHERNET, buf, len, len, &fi), 0);
    CU_ASSERT_EQUAL(fi.icrc, ICRC_BAD);
    buf[42 + 7] ^= 1;
    buf[60] = 1;
    CU_ASSERT_EQUAL(frame_parse(LINKTYPE_ETHERNET, buf, len, len, &fi), 0);
    CU_ASSERT_EQUAL(fi.icrc, ICRC_BAD);
}

static void expect_error(const uint8_t *f, uint32_t cap, uint32_t orig, const char *needle)
{
    struct frame_info fi;
    CU_ASSERT_EQUAL(frame_parse(LINKTYPE_ETHERNET, f, cap, orig, &fi), -1);
    if (!strstr(fi.error, needle)) {
        printf("\n  error \"%s\" lacks \"%s\"\n", fi.error, needle);
        CU_FAIL("error message");
    }
}

static void test_parse_errors(void)
{
    uint8_t good[128], f[128];
    struct packet p = data_pkt(PKT_F_FIRST, 1, 16);
    uint32_t len = (uint32_t)frame_build(&p, NULL, good, sizeof good); /* 94 bytes */

    expect_error(good, 10, 10, "truncated frame: Ethernet header needs 14 bytes");
    memcpy(f, good, len);
    f[14] = 0x55;
    expect_error(f, len, len, "IP version 5");
    memcpy(f, good, len);
    f[14] = 0x44;
    expect_error(f, len, len, "IPv4 header length 16");
    memcpy(f, good, len);
    f[16] = 0x01; /* total length 0x0150 */
    expect_error(f, len, len, "runs past the end");
    memcpy(f, good, len);
    f[17] = 10; /* total length 10 < 20 */
    expect_error(f, len, len, "shorter than its 20-byte header");
    memcpy(f, good, len);
    f[39] += 1; /* UDP length */
    expect_error(f, len, len, "UDP length 57 disagrees");
    memcpy(f, good, len);
    f[43] = 0x01; /* TVer 1 */
    expect_error(f, len, len, "transport header version 1");
    memcpy(f, good, len);
    f[17] = 20 + 8 + 12 + 8; /* shrink IP and UDP so that the 16-byte RETH cannot fit */
    f[39] = 8 + 12 + 8;
    expect_error(f, len, len, "too short for opcode 0x06");
    memcpy(f, good, len);
    f[17] = 20 + 8 + 12; /* no room for the ICRC */
    f[39] = 8 + 12;
    expect_error(f, len, len, "too short for a BTH and ICRC");
    memcpy(f, good, len);
    f[12] = 0x81; /* a VLAN tag whose inner header is cut */
    f[13] = 0x00;
    expect_error(f, 16, 16, "802.1Q tag");

    struct packet pfc = { .kind = PKT_PFC, .pfc_vector = 0x08, .pfc_quanta = 10 };
    len = (uint32_t)frame_build(&pfc, NULL, f, sizeof f);
    f[16] = 0x01;
    expect_error(f, len, len, "above priority 7");
    expect_error(f, 20, 20, "truncated frame: PFC frame");
    expect_error(f, 20, 60, "PFC frame cut off by the snap length");

    struct frame_info fi;
    CU_ASSERT_EQUAL(frame_parse(147, good, 94, 94, &fi), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(fi.error, "unsupported link type 147"));
}

static void test_parse_other_and_cooked(void)
{
    struct frame_info fi;
    /* ARP request (42 bytes, no padding): not ours, not an error. */
    uint8_t arp[42] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 1, 0x08, 0x06 };
    CU_ASSERT_EQUAL(frame_parse(LINKTYPE_ETHERNET, arp, 42, 42, &fi), 0);
    CU_ASSERT_EQUAL(fi.type, FRAME_OTHER);
    CU_ASSERT_EQUAL(fi.wire_len, 64u);
    /* A RoCE frame sent to UDP port 53 instead is just UDP. */
    uint8_t buf[256];
    struct packet p = data_pkt(0, 1, 16);
    uint32_t len = (uint32_t)frame_build(&p, NULL, buf, sizeof buf);
    buf[36] = 0;
    buf[37] = 53;
    CU_ASSERT_EQUAL(frame_parse(LINKTYPE_ETHERNET, buf, len, len, &fi), 0);
    CU_ASSERT_EQUAL(fi.type, FRAME_OTHER);
    /* TCP: other. */
    buf[37] = 0xb7;
    buf[36] = 0x12;
    buf[23] = 6;
    CU_ASSERT_EQUAL(frame_parse(LINKTYPE_ETHERNET, buf, len, len, &fi), 0);
    CU_ASSERT_EQUAL(fi.type, FRAME_OTHER);

    /* The same RoCE packet in a Linux cooked (SLL) capture, as `tcpdump -i any` writes it:
     * packet type, ARPHRD_ETHER, address length 6, address + 2 pad, protocol. */
    len = (uint32_t)frame_build(&p, NULL, buf, sizeof buf);
    uint8_t sll[256] = { 0x00, 0x04, 0x00, 0x01, 0x00, 0x06, 0x02, 0, 0, 0, 0, 1, 0, 0, 0x08, 0x00 };
    memcpy(sll + 16, buf + 14, len - 14);
    uint32_t slen = len - 14 + 16;
    CU_ASSERT_EQUAL_FATAL(frame_parse(LINKTYPE_LINUX_SLL, sll, slen, slen, &fi), 0);
    CU_ASSERT_EQUAL(fi.type, FRAME_ROCE);
    CU_ASSERT_EQUAL(fi.psn, 1u);
    CU_ASSERT_EQUAL(fi.icrc, ICRC_OK);
    CU_ASSERT_EQUAL(fi.wire_len, len + FCS_BYTES);
    CU_ASSERT_EQUAL(fi.src_mac[5], 1);
}

/* Random bytes, random mutations of good frames and every truncation: the parser answers
 * 0 or -1 with a message, and never reads out of bounds (the sanitizer build checks). */
static void test_parse_fuzz(void)
{
    GRand *rng = g_rand_new_with_seed(12345);
    uint8_t good[256], f[256];
    struct frame_info fi;
    struct packet kinds[5] = { data_pkt(PKT_F_FIRST, 1, 100), data_pkt(0, 2, 64),
                               data_pkt(PKT_F_LAST, 3, 7) };
    kinds[3] = kinds[1];
    kinds[3].kind = PKT_ACK;
    kinds[4] = kinds[1];
    kinds[4].kind = PKT_CNP;
    for (int k = 0; k < 5; k++) {
        uint32_t len = (uint32_t)frame_build(&kinds[k], NULL, good, sizeof good);
        for (uint32_t cap = 0; cap <= len; cap++) {
            int rc = frame_parse(LINKTYPE_ETHERNET, good, cap, len, &fi);
            CU_ASSERT(rc == 0 || (rc == -1 && fi.error[0]));
            rc = frame_parse(LINKTYPE_ETHERNET, good, cap, cap, &fi);
            CU_ASSERT(rc == 0 || (rc == -1 && fi.error[0]));
        }
        for (int i = 0; i < 3000; i++) {
            memcpy(f, good, len);
            for (int m = g_rand_int_range(rng, 1, 4); m > 0; m--)
                f[g_rand_int_range(rng, 0, (gint32)len)] = (uint8_t)g_rand_int(rng);
            /* copy into an exact-size heap block so the sanitizer sees any overread */
            uint32_t cap = (uint32_t)g_rand_int_range(rng, 0, (gint32)len + 1);
            uint8_t *h = g_memdup2(f, cap ? cap : 1);
            int rc = frame_parse(LINKTYPE_ETHERNET, h, cap, len, &fi);
            CU_ASSERT(rc == 0 || (rc == -1 && fi.error[0]));
            g_free(h);
        }
    }
    for (int i = 0; i < 20000; i++) {
        uint32_t cap = (uint32_t)g_rand_int_range(rng, 0, 200);
        uint8_t *h = g_malloc(cap ? cap : 1);
        for (uint32_t j = 0; j < cap; j++)
            h[j] = (uint8_t)g_rand_int(rng);
        if (cap > 14 && (i & 1)) { /* steer half of them into the IPv4/UDP 4791 path */
            h[12] = 0x08;
            h[13] = 0x00;
        }
        uint32_t lt = (i % 3 == 0) ? LINKTYPE_LINUX_SLL : (i % 3 == 1) ? LINKTYPE_ETHERNET
                                                                       : LINKTYPE_LINUX_SLL2;
        int rc = frame_parse(lt, h, cap, cap + (uint32_t)g_rand_int_range(rng, 0, 3), &fi);
        CU_ASSERT(rc == 0 || (rc == -1 && fi.error[0]));
        g_free(h);
    }
    g_rand_free(rng);
}

static CU_TestInfo tests[] = {
    { "IPv4 header checksum", test_ipv4_checksum },
    { "CRC-32 and zero extension", test_crc32 },
    { "ICRC: ConnectX-4 Lx CNP capture", test_icrc_connectx_cnp },
    { "ICRC: scapy UC SEND-only vector", test_icrc_scapy_uc },
    { "build RDMA WRITE FIRST", test_build_write_first },
    { "build RDMA WRITE MIDDLE and LAST (pad, AckReq, CE)", test_build_write_middle_last },
    { "build RDMA WRITE ONLY without context", test_build_write_only },
    { "build ACK, NAK and CNP", test_build_ack_nak_cnp },
    { "build PFC XOFF and XON", test_build_pfc },
    { "frame lengths, snap length, big messages", test_build_lengths_and_snap },
    { "802.1Q tagged frames", test_build_vlan },
    { "address scheme", test_address_scheme },
    { "parse built frames", test_parse_built },
    { "parse snap-truncated frames", test_parse_snap_truncated },
    { "ICRC masks the variant fields only", test_parse_icrc_masking },
    { "parse errors name the problem", test_parse_errors },
    { "other traffic and cooked captures", test_parse_other_and_cooked },
    { "parser fuzz", test_parse_fuzz },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("frames", tests)
