/* pcap writer and reader (analysis/pcap.h), cross-checked with libpcap and tshark, and
 * `rocesim pcap-stats` on traces whose contents are known. */
#include <json-glib/json-glib.h>
#include <glib/gstdio.h>
#include <pcap/pcap.h>
#include <string.h>
#include <unistd.h>

#include "analysis/frames.h"
#include "analysis/pcap.h"
#include "cli/commands.h"
#include "tests/testutil.h"

static char *tmpdir;

static char *tpath(const char *name) { return g_build_filename(tmpdir, name, NULL); }

static void put_file(const char *path, const void *data, size_t len)
{
    CU_ASSERT_FATAL(g_file_set_contents(path, data, (gssize)len, NULL));
}

/* Opens `path` and reads to the end; returns the error message (g_free) or NULL. */
static char *read_all(const char *path, uint64_t *records)
{
    GError *err = NULL;
    struct pcap_reader *r = pcap_reader_open(path, &err);
    if (records)
        *records = 0;
    if (!r) {
        char *m = g_strdup(err->message);
        g_error_free(err);
        return m;
    }
    struct pcap_record rec;
    int rc;
    while ((rc = pcap_reader_next(r, &rec, &err)) == 1)
        if (records)
            (*records)++;
    pcap_reader_close(r);
    if (rc < 0) {
        char *m = g_strdup(err->message);
        g_error_free(err);
        return m;
    }
    return NULL;
}

static void expect_read_error(const char *name, const void *data, size_t len, const char *needle)
{
    char *path = tpath(name);
    put_file(path, data, len);
    char *msg = read_all(path, NULL);
    CU_ASSERT_PTR_NOT_NULL(msg);
    if (msg && (!strstr(msg, needle) || !strstr(msg, path))) {
        printf("\n  %s: \"%s\" lacks \"%s\" or the path\n", name, msg, needle);
        CU_FAIL("reader error message");
    }
    g_free(msg);
    g_free(path);
}

/* ---- writer and reader ---- */

static void test_roundtrip(void)
{
    char *path = tpath("rt.pcap");
    GError *err = NULL;
    struct pcap_writer *w = pcap_writer_open(path, 64, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    static uint8_t data[1500];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 7);
    /* picosecond times: sub-ns parts are dropped, seconds split off */
    const simtime_t t[] = { 0, 999, 1000, 1000000000123456789ull, 3 * PS_PER_S + 5 };
    const uint32_t lens[] = { 10, 64, 65, 1500, 60 };
    for (int i = 0; i < 5; i++)
        CU_ASSERT(pcap_writer_write(w, t[i], data, lens[i], lens[i]));
    CU_ASSERT_EQUAL(pcap_writer_records(w), 5u);
    CU_ASSERT_FATAL(pcap_writer_close(w, &err));

    /* The file header, byte for byte. */
    gchar *raw;
    gsize rawlen;
    CU_ASSERT_FATAL(g_file_get_contents(path, &raw, &rawlen, NULL));
    static const uint8_t hdr[24] = {
        0x4d, 0x3c, 0xb2, 0xa1, /* nanosecond magic, little-endian */
        0x02, 0x00, 0x04, 0x00, /* version 2.4 */
        0, 0, 0, 0, 0, 0, 0, 0, /* thiszone, sigfigs */
        0x40, 0x00, 0x00, 0x00, /* snaplen 64 */
        0x01, 0x00, 0x00, 0x00, /* LINKTYPE_ETHERNET */
    };
    CU_ASSERT_EQUAL(memcmp(raw, hdr, 24), 0);
    CU_ASSERT_EQUAL(rawlen, 24u + 5u * 16u + 10u + 64u + 64u + 64u + 60u);
    g_free(raw);

    struct pcap_reader *r = pcap_reader_open(path, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT(pcap_reader_nanosecond(r));
    CU_ASSERT(!pcap_reader_big_endian(r));
    CU_ASSERT_EQUAL(pcap_reader_linktype(r), LINKTYPE_ETHERNET);
    CU_ASSERT_EQUAL(pcap_reader_snaplen(r), 64u);
    struct pcap_record rec;
    const uint64_t want_ns[] = { 0, 0, 1, 1000000000123456ull, 3000000000ull };
    uint64_t off = 24;
    for (int i = 0; i < 5; i++) {
        CU_ASSERT_EQUAL_FATAL(pcap_reader_next(r, &rec, &err), 1);
        CU_ASSERT_EQUAL(rec.t_ns, want_ns[i]);
        CU_ASSERT_EQUAL(rec.orig_len, lens[i]);
        CU_ASSERT_EQUAL(rec.cap_len, MIN(lens[i], 64u));
        CU_ASSERT_EQUAL(rec.index, (uint64_t)i + 1);
        CU_ASSERT_EQUAL(rec.offset, off);
        CU_ASSERT_EQUAL(memcmp(rec.data, data, rec.cap_len), 0);
        off += 16 + rec.cap_len;
    }
    CU_ASSERT_EQUAL(pcap_reader_next(r, &rec, &err), 0);
    CU_ASSERT_EQUAL(pcap_reader_next(r, &rec, &err), 0); /* end stays end */
    pcap_reader_close(r);
    g_free(path);
}

/* The simulator's path: packets framed by the writer itself, snap length kept. */
static void test_writer_packets(void)
{
    char *path = tpath("pk.pcap");
    GError *err = NULL;
    struct pcap_writer *w = pcap_writer_open(path, 128, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    struct packet p = { .kind = PKT_DATA, .src = 1, .dst = 2, .payload = 4096, .psn = 77,
                        .dst_qpn = 5, .flags = PKT_F_FIRST };
    struct frame_ctx ctx = { .msg_bytes = 1 << 20 };
    CU_ASSERT(pcap_writer_packet(w, 5 * PS_PER_US, &p, &ctx));
    p.kind = PKT_PFC;
    p.pfc_vector = 8;
    p.pfc_quanta = 0xFFFF;
    CU_ASSERT(pcap_writer_packet(w, 6 * PS_PER_US, &p, NULL));
    CU_ASSERT_FATAL(pcap_writer_close(w, &err));

    struct pcap_reader *r = pcap_reader_open(path, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    struct pcap_record rec;
    struct frame_info fi;
    CU_ASSERT_EQUAL_FATAL(pcap_reader_next(r, &rec, &err), 1);
    CU_ASSERT_EQUAL(rec.t_ns, 5000u);
    CU_ASSERT_EQUAL(rec.cap_len, 128u);
    CU_ASSERT_EQUAL(rec.orig_len, ROCE_HDR_BYTES + ROCE_RETH_BYTES + 4096u - FCS_BYTES);
    CU_ASSERT_EQUAL(frame_parse(LINKTYPE_ETHERNET, rec.data, rec.cap_len, rec.orig_len, &fi), 0);
    CU_ASSERT_EQUAL(fi.psn, 77u);
    CU_ASSERT_EQUAL(fi.reth_dma_len, 1u << 20);
    CU_ASSERT_EQUAL(fi.payload, 4096u);
    CU_ASSERT_EQUAL_FATAL(pcap_reader_next(r, &rec, &err), 1);
    CU_ASSERT_EQUAL(rec.cap_len, 60u);
    CU_ASSERT_EQUAL(frame_parse(LINKTYPE_ETHERNET, rec.data, rec.cap_len, rec.orig_len, &fi), 0);
    CU_ASSERT_EQUAL(fi.type, FRAME_PFC);
    CU_ASSERT_EQUAL(fi.pfc_time[3], 0xFFFF);
    pcap_reader_close(r);
    g_free(path);
}

/* libpcap reads our files, and we read libpcap's (microsecond and nanosecond). */
static void test_libpcap_interop(void)
{
    char *ours = tpath("ours.pcap"), *theirs = tpath("theirs.pcap");
    GError *err = NULL;
    struct pcap_writer *w = pcap_writer_open(ours, 0, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    uint8_t frame[100];
    for (int i = 0; i < 100; i++)
        frame[i] = (uint8_t)i;
    for (int i = 0; i < 3; i++)
        pcap_writer_write(w, (simtime_t)(i + 1) * 1234567890123ull, frame, 60u + (uint32_t)i,
                          60u + (uint32_t)i);
    CU_ASSERT_FATAL(pcap_writer_close(w, &err));

    char ebuf[PCAP_ERRBUF_SIZE];
    pcap_t *pc = pcap_open_offline_with_tstamp_precision(ours, PCAP_TSTAMP_PRECISION_NANO, ebuf);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pc);
    CU_ASSERT_EQUAL(pcap_datalink(pc), DLT_EN10MB);
    struct pcap_pkthdr *h;
    const u_char *d;
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL_FATAL(pcap_next_ex(pc, &h, &d), 1);
        uint64_t ns = (uint64_t)(i + 1) * 1234567890123ull / 1000u;
        CU_ASSERT_EQUAL((uint64_t)h->ts.tv_sec, ns / 1000000000u);
        CU_ASSERT_EQUAL((uint64_t)h->ts.tv_usec, ns % 1000000000u); /* ns with NANO */
        CU_ASSERT_EQUAL(h->caplen, 60u + (unsigned)i);
        CU_ASSERT_EQUAL(h->len, 60u + (unsigned)i);
        CU_ASSERT_EQUAL(memcmp(d, frame, h->caplen), 0);
    }
    CU_ASSERT_EQUAL(pcap_next_ex(pc, &h, &d), PCAP_ERROR_BREAK);
    pcap_close(pc);

    for (int nano = 0; nano < 2; nano++) {
        pcap_t *dead = pcap_open_dead_with_tstamp_precision(
            DLT_EN10MB, 65535, nano ? PCAP_TSTAMP_PRECISION_NANO : PCAP_TSTAMP_PRECISION_MICRO);
        pcap_dumper_t *dump = pcap_dump_open(dead, theirs);
        CU_ASSERT_PTR_NOT_NULL_FATAL(dump);
        struct pcap_pkthdr ph = { .ts = { .tv_sec = 1700000000, .tv_usec = 999999 },
                                  .caplen = 50, .len = 80 };
        pcap_dump((u_char *)dump, &ph, frame);
        pcap_dump_close(dump);
        pcap_close(dead);
        struct pcap_reader *r = pcap_reader_open(theirs, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_EQUAL(pcap_reader_nanosecond(r), nano);
        struct pcap_record rec;
        CU_ASSERT_EQUAL_FATAL(pcap_reader_next(r, &rec, &err), 1);
        CU_ASSERT_EQUAL(rec.t_ns, 1700000000ull * 1000000000u + (nano ? 999999u : 999999000u));
        CU_ASSERT_EQUAL(rec.cap_len, 50u);
        CU_ASSERT_EQUAL(rec.orig_len, 80u);
        CU_ASSERT_EQUAL(memcmp(rec.data, frame, 50), 0);
        CU_ASSERT_EQUAL(pcap_reader_next(r, &rec, &err), 0);
        pcap_reader_close(r);
    }
    g_free(ours);
    g_free(theirs);
}

/* Big-endian files, as written on a big-endian host, in both precisions; the FCS bits of the
 * link type field. */
static void test_big_endian(void)
{
    uint8_t f[24 + 16 + 3] = {
        0xa1, 0xb2, 0xc3, 0xd4, 0x00, 0x02, 0x00, 0x04, 0, 0, 0, 0, 0, 0, 0, 0,
        0x00, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01,
        0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x05, /* 2 s + 5 us */
        0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x04, /* 3 of 4 bytes */
        0xaa, 0xbb, 0xcc,
    };
    char *path = tpath("be.pcap");
    for (int nano = 0; nano < 2; nano++) {
        f[2] = nano ? 0x3c : 0xc3;
        f[3] = nano ? 0x4d : 0xd4;
        f[20] = nano ? 0x24 : 0x00; /* second pass: FCS flag (bit 26), 2 words (bits 28-31) */
        put_file(path, f, sizeof f);
        GError *err = NULL;
        struct pcap_reader *r = pcap_reader_open(path, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT(pcap_reader_big_endian(r));
        CU_ASSERT_EQUAL(pcap_reader_nanosecond(r), nano);
        CU_ASSERT_EQUAL(pcap_reader_linktype(r), 1u);
        CU_ASSERT_EQUAL(pcap_reader_fcs_bytes(r), nano ? 4u : 0u);
        CU_ASSERT_EQUAL(pcap_reader_snaplen(r), 65535u);
        struct pcap_record rec;
        CU_ASSERT_EQUAL_FATAL(pcap_reader_next(r, &rec, &err), 1);
        CU_ASSERT_EQUAL(rec.t_ns, 2000000000u + (nano ? 5u : 5000u));
        CU_ASSERT_EQUAL(rec.cap_len, 3u);
        CU_ASSERT_EQUAL(rec.orig_len, 4u);
        CU_ASSERT_EQUAL(rec.data[2], 0xcc);
        pcap_reader_close(r);
    }
    g_free(path);
}

static GByteArray *le_file(uint32_t magic)
{
    GByteArray *b = g_byte_array_new();
    uint32_t h[6] = { GUINT32_TO_LE(magic), GUINT32_TO_LE(0x00040002u), 0, 0,
                      GUINT32_TO_LE(65535u), GUINT32_TO_LE(1u) };
    g_byte_array_append(b, (const guint8 *)h, sizeof h);
    return b;
}

static void le_record(GByteArray *b, uint32_t sec, uint32_t frac, uint32_t incl, uint32_t orig,
                      uint32_t data_bytes)
{
    uint32_t h[4] = { GUINT32_TO_LE(sec), GUINT32_TO_LE(frac), GUINT32_TO_LE(incl),
                      GUINT32_TO_LE(orig) };
    g_byte_array_append(b, (const guint8 *)h, sizeof h);
    for (uint32_t i = 0; i < data_bytes; i++) {
        guint8 z = 0;
        g_byte_array_append(b, &z, 1);
    }
}

static void test_reader_errors(void)
{
    char *missing = tpath("missing.pcap");
    char *msg = read_all(missing, NULL);
    CU_ASSERT(msg && strstr(msg, missing) && strstr(msg, "cannot open: No such file"));
    g_free(msg);
    g_free(missing);
    msg = read_all(tmpdir, NULL); /* a directory */
    CU_ASSERT(msg && strstr(msg, tmpdir) && strstr(msg, "Is a directory"));
    g_free(msg);

    expect_read_error("empty.pcap", "", 0, "empty file (0 bytes)");
    const char *text = "t_ns,node,port\n1,leaf0,3\n";
    expect_read_error("text.pcap", text, strlen(text), "it is text (starts with \"t_ns,node,port");
    static const uint8_t ng[28] = { 0x0a, 0x0d, 0x0d, 0x0a, 0x1c, 0, 0, 0, 0x4d, 0x3c, 0x2b, 0x1a,
                                    0x01, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                    0xff, 0xff, 0x1c, 0, 0, 0 };
    expect_read_error("ng.pcapng", ng, sizeof ng, "pcapng file, which is not supported");
    static const uint8_t gz[] = { 0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03 };
    expect_read_error("x.pcap.gz", gz, sizeof gz, "gzip-compressed");
    static const uint8_t junk[40] = { 0xde, 0xad, 0xbe, 0xef, 0x00, 0x01, 0x02 };
    expect_read_error("junk.bin", junk, sizeof junk, "magic number 0xdeadbeef at offset 0");
    static const uint8_t tiny[3] = { 0x00, 0x01, 0x02 };
    expect_read_error("tiny.bin", tiny, sizeof tiny, "only 3 bytes long");

    GByteArray *b = le_file(0xa1b2c3d4u);
    expect_read_error("short.pcap", b->data, 14, "truncated pcap file header: 14 of 24 bytes");
    b->data[4] = 3;
    expect_read_error("v3.pcap", b->data, 24, "unsupported pcap version 3.4");
    b->data[4] = 2;
    g_byte_array_free(b, TRUE);

    b = le_file(0xa1b2c3d4u);
    le_record(b, 1, 0, 60, 60, 60);
    le_record(b, 2, 0, 100, 100, 0);
    expect_read_error("trunc_hdr.pcap", b->data, 24 + 76 + 7,
                      "record 2 at offset 100: truncated record header (7 of 16 bytes");
    b = g_byte_array_append(b, (const guint8 *)junk, 40);
    expect_read_error("trunc_data.pcap", b->data, b->len,
                      "record 2 at offset 100: truncated packet data (40 of 100 bytes");
    g_byte_array_free(b, TRUE);

    b = le_file(0xa1b2c3d4u);
    le_record(b, 1, 1000000, 60, 60, 60);
    expect_read_error("frac.pcap", b->data, b->len,
                      "record 1 at offset 24: corrupt record header: timestamp fraction 1000000 "
                      "is not below 1e6");
    g_byte_array_free(b, TRUE);
    b = le_file(0xa1b2c3d4u);
    le_record(b, 1, 0, 100, 60, 100);
    expect_read_error("cap.pcap", b->data, b->len,
                      "captured length 100 exceeds the original length 60");
    g_byte_array_free(b, TRUE);
    b = le_file(0xa1b23c4du);
    le_record(b, 1, 999999999, 0x7fffffffu, 0x7fffffffu, 0);
    expect_read_error("huge.pcap", b->data, b->len, "exceeds the 262144-byte maximum");
    g_byte_array_free(b, TRUE);

    /* A clean end after the header alone: zero records, no error. */
    b = le_file(0xa1b23c4du);
    char *path = tpath("hdronly.pcap");
    put_file(path, b->data, b->len);
    uint64_t n = 99;
    msg = read_all(path, &n);
    CU_ASSERT_PTR_NULL(msg);
    CU_ASSERT_EQUAL(n, 0u);
    g_free(msg);
    g_free(path);
    g_byte_array_free(b, TRUE);
}

/* Garbage after a good header, and random damage to a good file: an error or a clean end,
 * never a crash (the sanitizer build watches the reads). */
static void test_reader_fuzz(void)
{
    GRand *rng = g_rand_new_with_seed(777);
    char *path = tpath("fuzz.pcap");
    for (int i = 0; i < 300; i++) {
        GByteArray *b = le_file(i & 1 ? 0xa1b23c4du : 0xa1b2c3d4u);
        if (i < 150) {
            for (int k = g_rand_int_range(rng, 0, 400); k > 0; k--) {
                guint8 x = (guint8)g_rand_int(rng);
                g_byte_array_append(b, &x, 1);
            }
        } else {
            for (int k = 0; k < 5; k++)
                le_record(b, (uint32_t)k, 10, 60, 60, 60);
            for (int m = g_rand_int_range(rng, 1, 6); m > 0; m--)
                b->data[g_rand_int_range(rng, 0, (gint32)b->len)] = (guint8)g_rand_int(rng);
            g_byte_array_set_size(b, (guint)g_rand_int_range(rng, 0, (gint32)b->len + 1));
        }
        put_file(path, b->data, b->len);
        uint64_t n = 0;
        char *msg = read_all(path, &n);
        CU_ASSERT(n <= 400);
        if (msg)
            CU_ASSERT_PTR_NOT_NULL(strstr(msg, path));
        g_free(msg);
        g_byte_array_free(b, TRUE);
    }
    g_free(path);
    g_rand_free(rng);
}

static void test_writer_errors(void)
{
    GError *err = NULL;
    CU_ASSERT_PTR_NULL(pcap_writer_open("/nonexistent-rocesim-dir/x.pcap", 0, &err));
    CU_ASSERT(err && strstr(err->message, "/nonexistent-rocesim-dir/x.pcap: cannot create"));
    g_clear_error(&err);
    if (!g_file_test("/dev/full", G_FILE_TEST_EXISTS)) {
        printf("(no /dev/full: disk-full case skipped) ");
        return;
    }
    /* A full disk surfaces at the latest when the buffer is flushed on close. */
    struct pcap_writer *w = pcap_writer_open("/dev/full", 0, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    static uint8_t frame[1500];
    for (int i = 0; i < 2000; i++)
        pcap_writer_write(w, (simtime_t)i, frame, sizeof frame, sizeof frame);
    CU_ASSERT(!pcap_writer_close(w, &err));
    CU_ASSERT(err && strstr(err->message, "/dev/full: write failed: No space left on device"));
    g_clear_error(&err);
}

/* ---- tshark ---- */

struct kind_frame {
    struct packet p;
    struct frame_ctx ctx;
};

/* One frame of every kind the simulator writes, with CE marks, a CNP, PFC XOFF and XON. */
static int all_kinds(struct kind_frame *k)
{
    int n = 0;
    struct packet d = { .kind = PKT_DATA, .src = 1, .dst = 2, .sport = 0xC001, .dscp = 26,
                        .ecn = ECN_ECT0, .dst_qpn = 0x123, .transfer = 3, .prio = 3 };
    struct frame_ctx c = { .msg_bytes = 1024 + 1024 + 333 };
    k[n] = (struct kind_frame){ d, c };
    k[n].p.flags = PKT_F_FIRST, k[n].p.psn = 100, k[n].p.payload = 1024, n++;
    k[n] = (struct kind_frame){ d, c };
    k[n].p.psn = 101, k[n].p.payload = 1024, k[n].p.ecn = ECN_CE, n++;
    k[n] = (struct kind_frame){ d, c };
    k[n].p.flags = PKT_F_LAST, k[n].p.psn = 102, k[n].p.payload = 333, n++;
    k[n] = (struct kind_frame){ d, c };
    k[n].p.flags = PKT_F_FIRST | PKT_F_LAST, k[n].p.psn = 103, k[n].p.payload = 64;
    k[n].p.ecn = ECN_CE, k[n].ctx.msg_bytes = 64, n++;
    struct packet a = { .kind = PKT_ACK, .src = 2, .dst = 1, .sport = 0xC001, .dscp = 26,
                        .dst_qpn = 0x456, .psn = 103 };
    k[n] = (struct kind_frame){ a, { .msn = 2 } }, n++;
    k[n] = (struct kind_frame){ a, { .msn = 2 } };
    k[n].p.kind = PKT_NAK, k[n].p.psn = 101, n++;
    k[n] = (struct kind_frame){ a, { 0 } };
    k[n].p.kind = PKT_CNP, k[n].p.dscp = 48, k[n].p.psn = 0, n++;
    struct packet f = { .kind = PKT_PFC, .src = 9, .pfc_vector = 0x08, .pfc_quanta = 500 };
    k[n] = (struct kind_frame){ f, { .pfc_port = 2 } }, n++;
    k[n] = (struct kind_frame){ f, { .pfc_port = 2 } };
    k[n].p.pfc_quanta = 0, n++;
    k[n] = (struct kind_frame){ d, { .vlan = true, .vlan_id = 10 } };
    k[n].p.psn = 104, k[n].p.payload = 256, n++;
    return n;
}

static void test_tshark(void)
{
    char *out = NULL;
    if (test_run("command -v tshark", NULL) != 0) {
        printf("(tshark not installed: dissection check skipped) ");
        return;
    }
    struct kind_frame k[16];
    int n = all_kinds(k);
    char *path = tpath("kinds.pcap");
    GError *err = NULL;
    struct pcap_writer *w = pcap_writer_open(path, 0, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    static uint8_t frames[16][2048];
    size_t lens[16];
    for (int i = 0; i < n; i++) {
        lens[i] = frame_build(&k[i].p, &k[i].ctx, frames[i], sizeof frames[i]);
        CU_ASSERT(pcap_writer_packet(w, (simtime_t)(i + 1) * PS_PER_US, &k[i].p, &k[i].ctx));
    }
    CU_ASSERT_FATAL(pcap_writer_close(w, &err));

    /* RRoCE is dissected on UDP 4791 by default; no -d needed. */
    char *cmd = g_strdup_printf(
        "tshark -r '%s' -T fields -E separator=/t -e frame.protocols -e _ws.malformed "
        "-e _ws.expert -e ip.dsfield.ecn -e infiniband.bth.opcode -e infiniband.bth.psn "
        "-e infiniband.bth.destqp -e infiniband.invariant.crc -e infiniband.reth.dmalen "
        "-e infiniband.aeth.syndrome -e macc.opcode -e macc.cbfc.enbv "
        "-e macc.cbfc.pause_time.c3 2>/dev/null", path);
    int rc = test_run(cmd, &out);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    size_t olen = strlen(out);
    if (olen && out[olen - 1] == '\n') /* only the newline: empty fields end in tabs */
        out[olen - 1] = '\0';
    gchar **lines = g_strsplit(out, "\n", -1);
    CU_ASSERT_EQUAL_FATAL((int)g_strv_length(lines), n);
    int ce = 0, cnp = 0, pfc = 0, roce = 0;
    for (int i = 0; i < n; i++) {
        gchar **f = g_strsplit(lines[i], "\t", -1);
        CU_ASSERT_EQUAL_FATAL(g_strv_length(f), 13u);
        CU_ASSERT_STRING_EQUAL(f[1], ""); /* not malformed */
        CU_ASSERT_STRING_EQUAL(f[2], ""); /* no expert warnings */
        const struct packet *p = &k[i].p;
        if (p->kind == PKT_PFC) {
            pfc++;
            CU_ASSERT_STRING_EQUAL(f[0], "eth:ethertype:macc");
            CU_ASSERT_STRING_EQUAL(f[10], "0x0101");
            CU_ASSERT_STRING_EQUAL(f[11], "0x0008");
            CU_ASSERT_EQUAL(atoi(f[12]), p->pfc_quanta);
        } else {
            roce++;
            CU_ASSERT_PTR_NOT_NULL(strstr(f[0], ":ip:udp:infiniband"));
            ce += atoi(f[3]) == ECN_CE;
            CU_ASSERT_EQUAL(atoi(f[3]), p->ecn);
            unsigned op = (unsigned)atoi(f[4]);
            cnp += op == BTH_OP_CNP;
            unsigned want_op = p->kind == PKT_CNP ? BTH_OP_CNP
                               : p->kind != PKT_DATA ? BTH_OP_ACK
                               : (p->flags & 3) == 3 ? BTH_OP_WRITE_ONLY
                               : p->flags & PKT_F_FIRST ? BTH_OP_WRITE_FIRST
                               : p->flags & PKT_F_LAST ? BTH_OP_WRITE_LAST : BTH_OP_WRITE_MIDDLE;
            CU_ASSERT_EQUAL(op, want_op);
            CU_ASSERT_EQUAL((uint32_t)atoi(f[5]), p->psn);
            CU_ASSERT_EQUAL(strtoul(f[6], NULL, 16), p->dst_qpn);
            if (p->kind != PKT_CNP) {
                /* Wireshark shows the ICRC bytes read big-endian; they hold our CRC stored
                 * little-endian. (Wireshark 4.0 displays the ICRC but does not verify it.) */
                const uint8_t *fr = frames[i];
                size_t l = lens[i], l3 = p->kind == PKT_DATA && k[i].ctx.vlan ? 18 : 14;
                uint32_t crc = roce_icrc(fr + l3, l - l3 - 4);
                CU_ASSERT_EQUAL(strtoul(f[7], NULL, 16), GUINT32_SWAP_LE_BE(crc));
            }
            if (p->kind == PKT_DATA && (p->flags & PKT_F_FIRST))
                CU_ASSERT_EQUAL((uint64_t)atoll(f[8]), k[i].ctx.msg_bytes);
            if (p->kind == PKT_ACK)
                CU_ASSERT_EQUAL(atoi(f[9]), AETH_ACK);
            if (p->kind == PKT_NAK)
                CU_ASSERT_EQUAL(atoi(f[9]), AETH_NAK_PSN_SEQ);
        }
        g_strfreev(f);
    }
    CU_ASSERT_EQUAL(roce, 8);
    CU_ASSERT_EQUAL(ce, 2);
    CU_ASSERT_EQUAL(cnp, 1);
    CU_ASSERT_EQUAL(pfc, 2);
    g_strfreev(lines);
    g_free(out);
    g_free(cmd);

    /* The same file with a 128-byte snap length: still no malformed frame. */
    char *cut = tpath("kinds128.pcap");
    w = pcap_writer_open(cut, 128, &err);
    for (int i = 0; i < n; i++)
        pcap_writer_packet(w, (simtime_t)(i + 1) * PS_PER_US, &k[i].p, &k[i].ctx);
    CU_ASSERT_FATAL(pcap_writer_close(w, &err));
    cmd = g_strdup_printf("tshark -r '%s' -Y '_ws.malformed || infiniband.bth.opcode == 0x11' "
                          "-T fields -e _ws.malformed 2>/dev/null | wc -l", cut);
    CU_ASSERT_EQUAL(test_run(cmd, &out), 0);
    CU_ASSERT_EQUAL(atoi(out), 2); /* only the ACK and the NAK match */
    g_free(out);
    g_free(cmd);
    g_free(cut);
    g_free(path);
}

/* ---- pcap-stats ---- */

#define T0_NS 3000005000ull /* the trace starts 3 s + 5 us after the epoch */

static struct pcap_writer *sw;

static void put_at(uint64_t ns, struct packet p, uint64_t msg_bytes)
{
    struct frame_ctx c = { .msg_bytes = msg_bytes };
    CU_ASSERT(pcap_writer_packet(sw, ns * PS_PER_NS, &p, &c));
}

static void put(uint64_t rel_ns, struct packet p, uint64_t msg_bytes)
{
    put_at(T0_NS + rel_ns, p, msg_bytes);
}

static struct packet dpkt(uint32_t src, uint32_t qpn, uint16_t sport, uint8_t flags, uint32_t psn,
                          uint16_t payload, uint8_t ecn)
{
    return (struct packet){ .kind = PKT_DATA, .src = src, .dst = 2, .dst_qpn = qpn,
                            .sport = sport, .flags = flags, .psn = psn, .payload = payload,
                            .dscp = 26, .ecn = ecn };
}

static struct packet cpkt(int kind, uint32_t dst, uint32_t qpn, uint32_t psn)
{
    return (struct packet){ .kind = (uint8_t)kind, .src = 2, .dst = dst, .dst_qpn = qpn,
                            .psn = psn, .sport = dst == 3 && qpn == 0x55 ? 0xC003 : 0xC002,
                            .dscp = 48 };
}

static struct packet pfc(uint8_t vector, uint16_t quanta)
{
    return (struct packet){ .kind = PKT_PFC, .src = 7, .pfc_vector = vector,
                            .pfc_quanta = quanta };
}

/* Flow A host 1 -> 2 (QP 0x11), B and C host 3 -> 2 (QPs 0x22, 0x44; senders 0x33, 0x55).
 * B loses PSN 102 before the capture point and goes back to it after a NAK. */
static void write_stats_trace(const char *path)
{
    GError *err = NULL;
    sw = pcap_writer_open(path, 0, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sw);
    put(0, dpkt(1, 0x11, 0xC001, PKT_F_FIRST, 0, 1000, ECN_ECT0), 3000);
    put(50, dpkt(3, 0x22, 0xC002, PKT_F_FIRST, 100, 1000, ECN_ECT0), 4000);
    put(100, dpkt(1, 0x11, 0xC001, 0, 1, 1000, ECN_CE), 0);
    put(150, dpkt(3, 0x22, 0xC002, 0, 101, 1000, ECN_ECT0), 0);
    put(200, dpkt(1, 0x11, 0xC001, PKT_F_LAST, 2, 1000, ECN_ECT0), 0);
    put(250, dpkt(3, 0x22, 0xC002, PKT_F_LAST, 103, 1000, ECN_ECT0), 0);
    put(260, cpkt(PKT_NAK, 3, 0x33, 102), 0);
    put(270, cpkt(PKT_CNP, 3, 0x33, 0), 0);
    put(300, dpkt(1, 0x11, 0xC001, PKT_F_FIRST | PKT_F_LAST, 3, 500, ECN_ECT0), 500);
    put(350, dpkt(3, 0x22, 0xC002, 0, 102, 1000, ECN_ECT0), 0);
    put(400, dpkt(3, 0x22, 0xC002, PKT_F_LAST, 103, 1000, ECN_ECT0), 0);
    struct packet ack = cpkt(PKT_ACK, 3, 0x33, 103);
    ack.ecn = ECN_CE; /* a CE-marked ACK is not a marked data packet */
    put(450, ack, 0);
    put(500, dpkt(3, 0x44, 0xC003, PKT_F_FIRST | PKT_F_LAST, 5000, 200, ECN_CE), 200);
    put(550, cpkt(PKT_ACK, 3, 0x55, 5000), 0);
    put(600, cpkt(PKT_CNP, 3, 0x55, 0), 0);
    put(650, cpkt(PKT_CNP, 3, 0x55, 0), 0);
    put(700, cpkt(PKT_CNP, 1, 0x99, 0), 0);
    /* a frame with IP version 5, and an ARP request */
    uint8_t bad[128];
    struct packet b = dpkt(1, 0x11, 0xC001, 0, 9, 16, 0);
    size_t bl = frame_build(&b, NULL, bad, sizeof bad);
    bad[14] = 0x55;
    pcap_writer_write(sw, (T0_NS + 800) * PS_PER_NS, bad, (uint32_t)bl, (uint32_t)bl);
    uint8_t arp[60] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 1, 0x08, 0x06 };
    pcap_writer_write(sw, (T0_NS + 900) * PS_PER_NS, arp, 60, 60);
    put(1000, pfc(0x08, 1000), 0);  /* prio 3 paused until 1000 + 5120 */
    put(3000, pfc(0x08, 1000), 0);  /* reloads the timer */
    put(4000, pfc(0x08, 0), 0);     /* XON */
    put(5000, pfc(0x10, 100), 0);   /* prio 4 for 512 ns, runs out */
    put(10000, pfc(0x18, 200), 0);  /* prios 3 and 4 for 1024 ns */
    put(20000, dpkt(1, 0x11, 0xC001, PKT_F_FIRST | PKT_F_LAST, 4, 100, ECN_ECT0), 100);
    CU_ASSERT_FATAL(pcap_writer_close(sw, &err));
}

static char *slurp(const char *dir, const char *name)
{
    char *p = g_build_filename(dir, name, NULL), *s = NULL;
    if (!g_file_get_contents(p, &s, NULL, NULL))
        s = g_strdup("(missing)");
    g_free(p);
    return s;
}

static void expect_file(const char *dir, const char *name, const char *want)
{
    char *got = slurp(dir, name);
    if (strcmp(got, want) != 0) {
        printf("\n--- %s: got\n%s--- want\n%s", name, got, want);
        CU_FAIL("file contents");
    }
    g_free(got);
}

static bool no_leftovers(void);

static int run_stats(const char *const *args)
{
    int argc = 0;
    while (args[argc])
        argc++;
    char **argv = g_new0(char *, argc + 1);
    for (int i = 0; i < argc; i++)
        argv[i] = g_strdup(args[i]);
    int rc = cmd_pcap_stats(argc, argv);
    g_strfreev(argv);
    return rc;
}

static uint64_t counter(const char *csv, const char *node, const char *name)
{
    char *needle = g_strdup_printf(",%s,0,%s,", node, name);
    const char *at = strstr(csv, needle);
    uint64_t v = at ? g_ascii_strtoull(at + strlen(needle), NULL, 10) : UINT64_MAX;
    g_free(needle);
    return v;
}

static void test_pcap_stats(void)
{
    char *trace = tpath("trace.pcap"), *out = tpath("stats");
    write_stats_trace(trace);
    const char *args[] = { "pcap-stats", trace, "-o", out, "--interval", "10us",
                           "--link-rate", "100Gbps", NULL };
    CU_ASSERT_EQUAL_FATAL(run_stats(args), 0);

    char *c = slurp(out, "counters.csv");
    CU_ASSERT(g_str_has_prefix(c, "t_ns,node,port,counter,value\n20000,trace.pcap,0,icrc_errors,0\n"));
    struct { const char *name; uint64_t v; } want[] = {
        { "roce_packets", 18 },             /* 11 data, 1 NAK, 2 ACKs, 4 CNPs */
        { "roce_bytes", 10072 },            /* frame bytes with FCS, summed by hand */
        { "np_ecn_marked_roce_packets", 2 }, /* A psn 1 and C; not the CE ACK */
        { "np_cnp_sent", 4 },
        { "packet_seq_err", 1 },
        { "out_of_sequence", 2 },           /* B: 101 -> 103 and 103 -> 102 */
        { "malformed_frames", 1 },
        { "icrc_errors", 0 },
        { "tx_pause_ctrl_phy", 0 },
        { "tx_prio3_pause", 3 },
        { "tx_prio4_pause", 2 },
        { "tx_prio0_pause", 0 },
        { "rx_prio3_pause_duration", 4 },   /* 3000 + 1024 ns, in whole us */
        { "rx_prio4_pause_duration", 1 },   /* 512 + 1024 ns */
    };
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
        uint64_t got = counter(c, "trace.pcap", want[i].name);
        if (got != want[i].v) {
            printf("\n  %s = %" G_GUINT64_FORMAT ", want %" G_GUINT64_FORMAT, want[i].name, got,
                   want[i].v);
            CU_FAIL("counter");
        }
    }
    int rows = 0;
    for (const char *p = c; (p = strchr(p, '\n')); p++)
        rows++;
    CU_ASSERT_EQUAL(rows, 1 + 9 + 16);
    g_free(c);

    expect_file(out, "pfc.csv",
                "t_ns,node,port,prio,event,duration_ns\n"
                "1000,trace.pcap,0,3,pause,\n"
                "4000,trace.pcap,0,3,resume,3000\n"
                "5000,trace.pcap,0,4,pause,\n"
                "5512,trace.pcap,0,4,resume,512\n"
                "10000,trace.pcap,0,3,pause,\n"
                "10000,trace.pcap,0,4,pause,\n"
                "11024,trace.pcap,0,3,resume,1024\n"
                "11024,trace.pcap,0,4,resume,1024\n");
    /* B ends when its retransmitted LAST passes; bytes from the RETH DMA length. */
    expect_file(out, "transfers.csv",
                "id,src,dst,bytes,prio,start_ns,end_ns,fct_ns,ideal_ns,slowdown\n"
                "0,1,2,3000,3,0,200,200,,\n"
                "1,3,2,4000,3,50,400,350,,\n"
                "2,1,2,500,3,300,300,0,,\n"
                "3,3,2,200,3,500,500,0,,\n"
                "4,1,2,100,3,20000,20000,0,,\n");
    /* CNPs: B's by the NAK's PSN, C's by its ACK, A's as the only flow from host 1 to 2. */
    expect_file(out, "flows.csv",
                "flow,src,dst,qpn,sport,packets,bytes,ce_fraction,cnps,psn_gaps\n"
                "10.0.1.1-10.0.2.1-qp17,10.0.1.1,10.0.2.1,17,49153,5,3600,0.200000,1,0\n"
                "10.0.3.1-10.0.2.1-qp34,10.0.3.1,10.0.2.1,34,49154,5,5000,0.000000,1,2\n"
                "10.0.3.1-10.0.2.1-qp68,10.0.3.1,10.0.2.1,68,49155,1,200,1.000000,2,0\n");
    /* Wire bytes (+20 preamble/IFG) per 10 us: A 3860 B, B 5426 B, C 298 B; then A's 198 B. */
    expect_file(out, "rates.csv",
                "t_ns,flow,rate_gbps\n"
                "0,10.0.1.1-10.0.2.1-qp17,3.088\n"
                "0,10.0.3.1-10.0.2.1-qp34,4.341\n"
                "0,10.0.3.1-10.0.2.1-qp68,0.238\n"
                "10000,10.0.1.1-10.0.2.1-qp17,0.000\n"
                "10000,10.0.3.1-10.0.2.1-qp34,0.000\n"
                "10000,10.0.3.1-10.0.2.1-qp68,0.000\n"
                "20000,10.0.1.1-10.0.2.1-qp17,0.158\n");

    char *sp = g_build_filename(out, "summary.json", NULL);
    JsonParser *jp = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_file(jp, sp, NULL));
    JsonObject *m = json_object_get_object_member(json_node_get_object(json_parser_get_root(jp)),
                                                  "metrics");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    struct { const char *k; gint64 v; } mw[] = {
        { "transfers", 5 }, { "transfers_completed", 5 }, { "bytes", 7800 },
        { "completion_ns", 20000 }, { "fct_p50_ns", 0 }, { "fct_p99_ns", 350 },
        { "fct_max_ns", 350 }, { "ecn_marked", 2 }, { "cnp_sent", 4 },
        { "retransmitted_packets", 2 }, { "pause_frames", 4 }, { "paused_ns", 5560 },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(mw); i++) {
        CU_ASSERT(json_object_has_member(m, mw[i].k));
        if (json_object_get_int_member(m, mw[i].k) != mw[i].v) {
            printf("\n  %s = %" G_GINT64_FORMAT ", want %" G_GINT64_FORMAT, mw[i].k,
                   json_object_get_int_member(m, mw[i].k), mw[i].v);
            CU_FAIL("summary metric");
        }
    }
    JsonArray *warnings = json_object_get_array_member(
        json_node_get_object(json_parser_get_root(jp)), "warnings");
    CU_ASSERT(warnings && json_array_get_length(warnings) == 1); /* the malformed frame */
    g_object_unref(jp);
    g_free(sp);

    /* A second run replaces the results folder in place (named with a trailing slash). */
    char *slash = g_strdup_printf("%s/", out);
    const char *again[] = { "pcap-stats", trace, "-o", slash, NULL };
    CU_ASSERT_EQUAL(run_stats(again), 0);
    g_free(slash);
    CU_ASSERT(no_leftovers());
    expect_file(out, "flows.csv",
                "flow,src,dst,qpn,sport,packets,bytes,ce_fraction,cnps,psn_gaps\n"
                "10.0.1.1-10.0.2.1-qp17,10.0.1.1,10.0.2.1,17,49153,5,3600,0.200000,1,0\n"
                "10.0.3.1-10.0.2.1-qp34,10.0.3.1,10.0.2.1,34,49154,5,5000,0.000000,1,2\n"
                "10.0.3.1-10.0.2.1-qp68,10.0.3.1,10.0.2.1,68,49155,1,200,1.000000,2,0\n");

    /* Two capture points: flows are per file, counters per node. */
    char *copy = tpath("trace2.pcap"), *out2 = tpath("stats2"), *s = NULL;
    gsize len;
    CU_ASSERT_FATAL(g_file_get_contents(trace, &s, &len, NULL));
    put_file(copy, s, len);
    g_free(s);
    const char *args2[] = { "pcap-stats", trace, copy, "-o", out2, NULL };
    CU_ASSERT_EQUAL_FATAL(run_stats(args2), 0);
    c = slurp(out2, "counters.csv");
    CU_ASSERT_EQUAL(counter(c, "trace.pcap", "np_cnp_sent"), 4u);
    CU_ASSERT_EQUAL(counter(c, "trace2.pcap", "np_cnp_sent"), 4u);
    CU_ASSERT_EQUAL(counter(c, "trace2.pcap", "tx_prio3_pause"), 3u);
    g_free(c);
    c = slurp(out2, "flows.csv");
    CU_ASSERT_PTR_NOT_NULL(strstr(c, "\n10.0.3.1-10.0.2.1-qp68@trace2.pcap,"));
    CU_ASSERT_PTR_NOT_NULL(strstr(c, "\n10.0.3.1-10.0.2.1-qp68@trace.pcap,"));
    g_free(c);

    /* The default folder is FILE.stats. */
    const char *args3[] = { "pcap-stats", copy, NULL };
    CU_ASSERT_EQUAL(run_stats(args3), 0);
    char *def = g_strdup_printf("%s.stats", copy);
    char *sum = g_build_filename(def, "summary.json", NULL);
    CU_ASSERT(g_file_test(sum, G_FILE_TEST_IS_REGULAR));
    g_free(sum);
    g_free(def);
    g_free(copy);
    g_free(out2);
    g_free(trace);
    g_free(out);
}

/* An RDMA WRITE-only-with-immediate frame (opcode 0x0B: RETH then ImmDt), as the replay sends
 * with the schedule's transfer id in the immediate: a built WRITE ONLY with 4 bytes inserted
 * and its lengths, IP checksum and ICRC redone. */
static uint32_t write_only_imm(struct packet p, uint32_t imm, uint8_t *out)
{
    uint8_t f[256];
    p.flags = PKT_F_FIRST | PKT_F_LAST;
    struct frame_ctx c = { .msg_bytes = p.payload };
    uint32_t len = (uint32_t)frame_build(&p, &c, f, sizeof f);
    const uint32_t imm_at = 14 + 20 + 8 + 12 + 16;
    memcpy(out, f, imm_at);
    out[imm_at] = (uint8_t)(imm >> 24);
    out[imm_at + 1] = (uint8_t)(imm >> 16);
    out[imm_at + 2] = (uint8_t)(imm >> 8);
    out[imm_at + 3] = (uint8_t)imm;
    memcpy(out + imm_at + 4, f + imm_at, len - imm_at);
    len += 4;
    out[14 + 2] = (uint8_t)((len - 14) >> 8);
    out[14 + 3] = (uint8_t)(len - 14);
    out[38] = (uint8_t)((len - 34) >> 8);
    out[39] = (uint8_t)(len - 34);
    out[42] = 0x0B;
    out[24] = out[25] = 0;
    uint16_t cs = ipv4_checksum(out + 14, 20);
    out[24] = (uint8_t)(cs >> 8);
    out[25] = (uint8_t)cs;
    uint32_t icrc = roce_icrc(out + 14, len - 14 - 4);
    for (int i = 0; i < 4; i++)
        out[len - 4 + i] = (uint8_t)(icrc >> (8 * i));
    return len;
}

static void test_pcap_stats_imm_and_ports(void)
{
    char *trace = tpath("imm.pcap"), *out = tpath("imm.stats");
    GError *err = NULL;
    sw = pcap_writer_open(trace, 0, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sw);
    uint8_t f[256];
    struct frame_info fi;
    struct packet d = { .kind = PKT_DATA, .src = 5, .dst = 6, .dst_qpn = 0x61, .sport = 0xD001,
                        .psn = 0, .payload = 40 };
    uint32_t len = write_only_imm(d, 42, f);
    CU_ASSERT_EQUAL_FATAL(frame_parse(LINKTYPE_ETHERNET, f, len, len, &fi), 0);
    CU_ASSERT(fi.has_imm && fi.imm == 42 && fi.has_reth && fi.icrc == ICRC_OK);
    CU_ASSERT_EQUAL(fi.payload, 40u);
    pcap_writer_write(sw, 1000 * PS_PER_NS, f, len, len);
    /* A second flow between the same hosts with overlapping PSNs and another UDP port. */
    d.dst_qpn = 0x62;
    d.sport = 0xD002;
    len = write_only_imm(d, 7, f);
    pcap_writer_write(sw, 2000 * PS_PER_NS, f, len, len);
    /* ACKs for PSN 0 match both flows: the source port decides. */
    struct packet a = { .kind = PKT_ACK, .src = 6, .dst = 5, .dst_qpn = 0x70, .sport = 0xD002 };
    put_at(3000, a, 0);
    a.dst_qpn = 0x71;
    a.sport = 0xD001;
    put_at(3100, a, 0);
    struct packet cnp = { .kind = PKT_CNP, .src = 6, .dst = 5, .dst_qpn = 0x70 };
    put_at(4000, cnp, 0);          /* -> qp 0x62 */
    cnp.dst_qpn = 0x71;
    put_at(4100, cnp, 0);          /* -> qp 0x61 */
    put_at(4200, cnp, 0);
    cnp.dst_qpn = 0x72;                 /* no ACK tells which flow: left out, with a warning */
    put_at(4300, cnp, 0);
    CU_ASSERT_FATAL(pcap_writer_close(sw, &err));

    const char *args[] = { "pcap-stats", trace, "-o", out, NULL };
    CU_ASSERT_EQUAL_FATAL(run_stats(args), 0);
    expect_file(out, "transfers.csv",
                "id,src,dst,bytes,prio,start_ns,end_ns,fct_ns,ideal_ns,slowdown\n"
                "42,5,6,40,0,0,0,0,,\n"
                "7,5,6,40,0,1000,1000,0,,\n");
    expect_file(out, "flows.csv",
                "flow,src,dst,qpn,sport,packets,bytes,ce_fraction,cnps,psn_gaps\n"
                "10.0.5.1-10.0.6.1-qp97,10.0.5.1,10.0.6.1,97,53249,1,40,0.000000,2,0\n"
                "10.0.5.1-10.0.6.1-qp98,10.0.5.1,10.0.6.1,98,53250,1,40,0.000000,1,0\n");
    char *sum = slurp(out, "summary.json");
    CU_ASSERT_PTR_NOT_NULL(strstr(sum, "1 CNPs could not be tied to a data flow"));
    g_free(sum);
    g_free(trace);
    g_free(out);
}

/* No leftovers: nothing named *.tmp-* or *.old-* in the test folder. */
/* A record stamped before the one written before it (a capture's queues can do that): a
 * message whose LAST was stamped 700 ns before its FIRST ends when it starts instead of
 * 2^64 - 700 ns later (fuzz_pcap_stats, 2026-12-06), and a warning says how many such records
 * and by how much. By hand: FIRST at 1000, LAST at 300 -> ends at 1000; then a message of one
 * packet at 2000. */
static void test_pcap_stats_time_backwards(void)
{
    char *trace = tpath("backwards.pcap"), *out = tpath("backwards-stats");
    GError *err = NULL;
    sw = pcap_writer_open(trace, 0, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sw);
    put(0, dpkt(1, 0x11, 0xC001, PKT_F_FIRST | PKT_F_LAST, 0, 100, ECN_ECT0), 100);
    put(1000, dpkt(1, 0x11, 0xC001, PKT_F_FIRST, 1, 1000, ECN_ECT0), 2000);
    put(300, dpkt(1, 0x11, 0xC001, PKT_F_LAST, 2, 1000, ECN_ECT0), 0);
    put(2000, dpkt(1, 0x11, 0xC001, PKT_F_FIRST | PKT_F_LAST, 3, 100, ECN_ECT0), 100);
    CU_ASSERT_FATAL(pcap_writer_close(sw, &err));
    const char *args[] = { "pcap-stats", trace, "-o", out, NULL };
    CU_ASSERT_EQUAL_FATAL(run_stats(args), 0);
    expect_file(out, "transfers.csv",
                "id,src,dst,bytes,prio,start_ns,end_ns,fct_ns,ideal_ns,slowdown\n"
                "0,1,2,100,3,0,0,0,,\n"
                "1,1,2,2000,3,1000,1000,0,,\n"
                "2,1,2,100,3,2000,2000,0,,\n");
    char *sum = slurp(out, "summary.json");
    CU_ASSERT_PTR_NOT_NULL(strstr(sum, "1 records are timestamped before the record before them in their file (by up "
                                       "to 700 ns)"));
    g_free(sum);
    g_free(trace);
    g_free(out);
}

static bool no_leftovers(void)
{
    GDir *d = g_dir_open(tmpdir, 0, NULL);
    const char *e;
    bool clean = true;
    while ((e = g_dir_read_name(d)))
        if (strstr(e, ".tmp-") || strstr(e, ".old-")) {
            printf("\n  leftover %s", e);
            clean = false;
        }
    g_dir_close(d);
    return clean;
}

static void test_pcap_stats_bad_input(void)
{
    char *out = tpath("bad.stats");
    char *text = tpath("notes.pcap");
    put_file(text, "hello\n", 6);
    const char *a1[] = { "pcap-stats", text, "-o", out, NULL };
    CU_ASSERT_EQUAL(run_stats(a1), 2);
    CU_ASSERT(!g_file_test(out, G_FILE_TEST_EXISTS));

    /* A good first file does not save a corrupt second one. */
    char *good = tpath("trace.pcap"), *cut = tpath("cut.pcap"), *s = NULL;
    gsize len;
    CU_ASSERT_FATAL(g_file_get_contents(good, &s, &len, NULL));
    put_file(cut, s, len - 30); /* the last record loses its tail */
    g_free(s);
    const char *a2[] = { "pcap-stats", good, cut, "-o", out, NULL };
    CU_ASSERT_EQUAL(run_stats(a2), 2);
    CU_ASSERT(!g_file_test(out, G_FILE_TEST_EXISTS));

    char *missing = tpath("nope.pcap");
    const char *a3[] = { "pcap-stats", missing, "-o", out, NULL };
    CU_ASSERT_EQUAL(run_stats(a3), 2);
    const char *a4[] = { "pcap-stats", good, "-o", out, "--interval", "10", NULL };
    CU_ASSERT_EQUAL(run_stats(a4), 2);
    const char *a5[] = { "pcap-stats", good, "-o", out, "--link-rate", "fast", NULL };
    CU_ASSERT_EQUAL(run_stats(a5), 2);
    const char *a6[] = { "pcap-stats", NULL };
    CU_ASSERT_EQUAL(run_stats(a6), 2);
    const char *a7[] = { "pcap-stats", good, "--no-such-option", NULL };
    CU_ASSERT_EQUAL(run_stats(a7), 2);
    CU_ASSERT(!g_file_test(out, G_FILE_TEST_EXISTS));

    /* An existing folder that is not a results folder is left alone. */
    char *mine = tpath("mine"), *keep = tpath("mine/keep.txt");
    g_mkdir(mine, 0755);
    put_file(keep, "x", 1);
    const char *a8[] = { "pcap-stats", good, "-o", mine, NULL };
    CU_ASSERT_EQUAL(run_stats(a8), 2);
    CU_ASSERT(g_file_test(keep, G_FILE_TEST_IS_REGULAR));

    /* An output folder under a missing parent is created with its parents, as `rocesim run -o`
     * does (one folder install for every results folder, results_io/folder.c). */
    char *deep = tpath("no/such/dir"), *deep_summary = tpath("no/such/dir/summary.json");
    const char *a9[] = { "pcap-stats", good, "-o", deep, NULL };
    CU_ASSERT_EQUAL(run_stats(a9), 0);
    CU_ASSERT(g_file_test(deep_summary, G_FILE_TEST_IS_REGULAR));
    CU_ASSERT(no_leftovers());
    g_free(deep_summary);
    g_free(deep);
    g_free(mine);
    g_free(keep);
    g_free(missing);
    g_free(good);
    g_free(cut);
    g_free(text);
    g_free(out);
}

static void test_setup(void)
{
    tmpdir = test_tmpdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(tmpdir);
}

static void test_teardown(void)
{
    test_rmtree(tmpdir);
    g_free(tmpdir);
}

static CU_TestInfo tests[] = {
    { "(setup)", test_setup },
    { "write -> read round trip", test_roundtrip },
    { "simulator packets with a snap length", test_writer_packets },
    { "libpcap reads ours, we read libpcap's", test_libpcap_interop },
    { "big-endian files and FCS flags", test_big_endian },
    { "reader errors name file, record, offset", test_reader_errors },
    { "reader fuzz", test_reader_fuzz },
    { "writer errors", test_writer_errors },
    { "tshark dissects every frame kind", test_tshark },
    { "pcap-stats on a known trace", test_pcap_stats },
    { "pcap-stats: immediate ids, CNPs tied by port", test_pcap_stats_imm_and_ports },
    { "pcap-stats refuses bad input", test_pcap_stats_bad_input },
    { "pcap-stats: a record stamped before the one before it", test_pcap_stats_time_backwards },
    { "(teardown)", test_teardown },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("pcap", tests)
