/* pcap writer and reader; see pcap.h. Our own code rather than libpcap's pcap_dump and
 * pcap_next_ex: pcap_dump cannot report write errors, and libpcap's reader errors do not
 * say which record is damaged or where. The format is the classic libpcap one: a 24-byte
 * file header, then per record a 16-byte header (seconds, fraction, captured and original
 * length) and the captured bytes, all in the writer's byte order. */
#include "analysis/pcap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK(rocesim-pcapf-error-quark, pcapf_error)

#define PCAP_MAGIC_US   0xA1B2C3D4u
#define PCAP_MAGIC_NS   0xA1B23C4Du
#define PCAPNG_SHB      0x0A0D0D0Au
#define FILE_HDR_BYTES  24u
#define REC_HDR_BYTES   16u
#define WRITE_BUFFER    (1u << 20)

static void put32_le(uint8_t *b, uint32_t v)
{
    b[0] = (uint8_t)v;
    b[1] = (uint8_t)(v >> 8);
    b[2] = (uint8_t)(v >> 16);
    b[3] = (uint8_t)(v >> 24);
}

static uint32_t get32_le(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static uint32_t get32_be(const uint8_t *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | (uint32_t)b[3];
}

/* ---- writer ---- */

struct pcap_writer {
    FILE *f;
    char *path;
    char *iobuf;          /* stdio buffer: records reach the disk in 1 MiB blocks */
    uint8_t *frame;       /* one frame, reused for every packet */
    size_t frame_cap;
    uint32_t snaplen;
    uint64_t records;
    int err;              /* first errno of a failed write, 0 if none */
};

struct pcap_writer *pcap_writer_open(const char *path, uint32_t snaplen, GError **err)
{
    if (snaplen == 0 || snaplen > PCAP_MAX_SNAPLEN)
        snaplen = PCAP_MAX_SNAPLEN;
    FILE *f = fopen(path, "wb");
    if (!f) {
        int e = errno;
        g_set_error(err, PCAPF_ERROR, PCAPF_ERROR_IO, "%s: cannot create: %s", path, g_strerror(e));
        return NULL;
    }
    struct pcap_writer *w = g_new0(struct pcap_writer, 1);
    w->f = f;
    w->path = g_strdup(path);
    w->iobuf = g_malloc(WRITE_BUFFER);
    setvbuf(f, w->iobuf, _IOFBF, WRITE_BUFFER);
    w->snaplen = snaplen;
    w->frame_cap = MIN((size_t)snaplen, (size_t)FRAME_MAX_BYTES);
    w->frame = g_malloc(w->frame_cap);

    /* Written little-endian whatever the host, so traces are byte-identical everywhere. */
    uint8_t h[FILE_HDR_BYTES] = { 0 };
    put32_le(h, PCAP_MAGIC_NS);
    h[4] = 2; /* version 2.4 */
    h[6] = 4;
    put32_le(h + 16, snaplen);
    put32_le(h + 20, LINKTYPE_ETHERNET);
    if (fwrite(h, 1, sizeof h, f) != sizeof h)
        w->err = errno ? errno : EIO;
    return w;
}

bool pcap_writer_write(struct pcap_writer *w, simtime_t t, const uint8_t *data, uint32_t len,
                       uint32_t orig_len)
{
    if (w->err)
        return false;
    uint64_t ns = t / PS_PER_NS;
    uint32_t incl = MIN(MIN(len, orig_len), w->snaplen);
    uint8_t h[REC_HDR_BYTES];
    put32_le(h, (uint32_t)(ns / 1000000000u));
    put32_le(h + 4, (uint32_t)(ns % 1000000000u));
    put32_le(h + 8, incl);
    put32_le(h + 12, orig_len);
    errno = 0;
    if (fwrite(h, 1, sizeof h, w->f) != sizeof h || fwrite(data, 1, incl, w->f) != incl) {
        w->err = errno ? errno : EIO;
        return false;
    }
    w->records++;
    return true;
}

bool pcap_writer_packet(struct pcap_writer *w, simtime_t t, const struct packet *p,
                        const struct frame_ctx *ctx)
{
    size_t len = frame_build(p, ctx, w->frame, w->frame_cap);
    if (len == 0)
        return !w->err; /* a kind with no frame (none today): nothing to record */
    return pcap_writer_write(w, t, w->frame, (uint32_t)MIN(len, w->frame_cap), (uint32_t)len);
}

uint64_t pcap_writer_records(const struct pcap_writer *w) { return w->records; }

bool pcap_writer_close(struct pcap_writer *w, GError **err)
{
    if (!w)
        return true;
    errno = 0;
    if (fflush(w->f) != 0 && !w->err)
        w->err = errno ? errno : EIO;
    if (fclose(w->f) != 0 && !w->err)
        w->err = errno ? errno : EIO;
    bool ok = w->err == 0;
    if (!ok)
        g_set_error(err, PCAPF_ERROR, PCAPF_ERROR_IO, "%s: write failed: %s", w->path,
                    g_strerror(w->err));
    g_free(w->iobuf);
    g_free(w->frame);
    g_free(w->path);
    g_free(w);
    return ok;
}

/* ---- reader ---- */

struct pcap_reader {
    FILE *f;
    char *path;
    bool big_endian, nano;
    uint32_t snaplen, linktype, fcs_bytes;
    uint8_t *buf;
    uint64_t offset;      /* of the next record header */
    uint64_t index;       /* records read so far */
};

static uint32_t rd32(const struct pcap_reader *r, const uint8_t *b)
{
    return r->big_endian ? get32_be(b) : get32_le(b);
}

static bool looks_like_text(const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!(g_ascii_isprint(b[i]) || b[i] == '\n' || b[i] == '\r' || b[i] == '\t'))
            return false;
    return true;
}

static void set_read_error(GError **err, const char *path, FILE *f, const char *what)
{
    int e = errno;
    if (ferror(f))
        g_set_error(err, PCAPF_ERROR, PCAPF_ERROR_IO, "%s: read error in %s: %s", path, what,
                    g_strerror(e ? e : EIO));
}

struct pcap_reader *pcap_reader_open(const char *path, GError **err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        g_set_error(err, PCAPF_ERROR, PCAPF_ERROR_IO, "%s: cannot open: %s", path, g_strerror(e));
        return NULL;
    }
    uint8_t h[FILE_HDR_BYTES];
    errno = 0;
    size_t n = fread(h, 1, sizeof h, f);
    if (n < sizeof h && ferror(f)) {
        set_read_error(err, path, f, "the file header");
        fclose(f);
        return NULL;
    }
    uint32_t le = n >= 4 ? get32_le(h) : 0, be = n >= 4 ? get32_be(h) : 0;
    bool pcap_magic = le == PCAP_MAGIC_US || le == PCAP_MAGIC_NS || be == PCAP_MAGIC_US ||
                      be == PCAP_MAGIC_NS;
    const char *problem = NULL;
    char detail[160];
    if (n == 0) {
        problem = "empty file (0 bytes), not a pcap capture";
    } else if (n >= 4 && le == PCAPNG_SHB) {
        problem = "pcapng file, which is not supported: convert it with "
                  "'editcap -F pcap IN OUT', or capture with 'tcpdump -w' (which writes pcap)";
    } else if (n >= 2 && h[0] == 0x1F && h[1] == 0x8B) {
        problem = "gzip-compressed file: decompress it first";
    } else if (pcap_magic && n < sizeof h) {
        snprintf(detail, sizeof detail,
                 "truncated pcap file header: %zu of %u bytes", n, FILE_HDR_BYTES);
        problem = detail;
    } else if (!pcap_magic) {
        if (looks_like_text(h, n)) {
            char start[17];
            size_t k = MIN(n, sizeof start - 1);
            for (size_t i = 0; i < k; i++)
                start[i] = g_ascii_isprint(h[i]) ? (char)h[i] : ' ';
            start[k] = '\0';
            snprintf(detail, sizeof detail, "not a pcap file: it is text (starts with \"%s\")",
                     start);
        } else if (n < 4) {
            snprintf(detail, sizeof detail, "not a pcap file: only %zu bytes long", n);
        } else {
            snprintf(detail, sizeof detail,
                     "not a pcap file: magic number 0x%08x at offset 0 (a pcap file starts "
                     "with 0xa1b2c3d4 or 0xa1b23c4d)", be);
        }
        problem = detail;
    }
    if (problem) {
        g_set_error(err, PCAPF_ERROR, pcap_magic ? PCAPF_ERROR_CORRUPT : PCAPF_ERROR_FORMAT,
                    "%s: %s", path, problem);
        fclose(f);
        return NULL;
    }
    struct pcap_reader *r = g_new0(struct pcap_reader, 1);
    r->f = f;
    r->path = g_strdup(path);
    r->big_endian = be == PCAP_MAGIC_US || be == PCAP_MAGIC_NS;
    r->nano = rd32(r, h) == PCAP_MAGIC_NS;
    uint32_t major = r->big_endian ? (uint32_t)h[4] << 8 | h[5] : (uint32_t)h[5] << 8 | h[4];
    uint32_t minor = r->big_endian ? (uint32_t)h[6] << 8 | h[7] : (uint32_t)h[7] << 8 | h[6];
    r->snaplen = rd32(r, h + 16);
    uint32_t lt = rd32(r, h + 20);
    /* The top bits of the link type may say that records carry an FCS (pcap file format
     * draft: bit 26 "F", bits 28-31 its length in 16-bit words). */
    r->linktype = lt & 0x03FFFFFFu;
    r->fcs_bytes = (lt & 0x04000000u) ? ((lt >> 28) & 0x0Fu) * 2u : 0u;
    r->offset = FILE_HDR_BYTES;
    if (major != 2) {
        g_set_error(err, PCAPF_ERROR, PCAPF_ERROR_CORRUPT,
                    "%s: unsupported pcap version %u.%u at offset 4 (expected 2.4)", path, major,
                    minor);
        pcap_reader_close(r);
        return NULL;
    }
    r->buf = g_malloc(PCAP_MAX_SNAPLEN);
    return r;
}

int pcap_reader_next(struct pcap_reader *r, struct pcap_record *rec, GError **err)
{
    uint8_t h[REC_HDR_BYTES];
    uint64_t idx = r->index + 1, off = r->offset;
    errno = 0;
    size_t n = fread(h, 1, sizeof h, r->f);
    if (n < sizeof h) {
        if (ferror(r->f)) {
            char what[64];
            snprintf(what, sizeof what, "record %" G_GUINT64_FORMAT, idx);
            set_read_error(err, r->path, r->f, what);
            return -1;
        }
        if (n == 0)
            return 0;
        g_set_error(err, PCAPF_ERROR, PCAPF_ERROR_CORRUPT,
                    "%s: record %" G_GUINT64_FORMAT " at offset %" G_GUINT64_FORMAT
                    ": truncated record header (%zu of %u bytes; the file ends there)",
                    r->path, idx, off, n, REC_HDR_BYTES);
        return -1;
    }
    uint32_t sec = rd32(r, h), frac = rd32(r, h + 4);
    uint32_t caplen = rd32(r, h + 8), origlen = rd32(r, h + 12);
    const char *bad = NULL;
    char detail[160];
    if (frac >= (r->nano ? 1000000000u : 1000000u)) {
        snprintf(detail, sizeof detail, "timestamp fraction %u is not below %s (%s file)", frac,
                 r->nano ? "1e9" : "1e6", r->nano ? "nanosecond" : "microsecond");
        bad = detail;
    } else if (caplen > PCAP_MAX_SNAPLEN) {
        snprintf(detail, sizeof detail, "captured length %u exceeds the %u-byte maximum",
                 caplen, PCAP_MAX_SNAPLEN);
        bad = detail;
    } else if (caplen > origlen) {
        snprintf(detail, sizeof detail, "captured length %u exceeds the original length %u",
                 caplen, origlen);
        bad = detail;
    }
    if (bad) {
        g_set_error(err, PCAPF_ERROR, PCAPF_ERROR_CORRUPT,
                    "%s: record %" G_GUINT64_FORMAT " at offset %" G_GUINT64_FORMAT
                    ": corrupt record header: %s", r->path, idx, off, bad);
        return -1;
    }
    n = fread(r->buf, 1, caplen, r->f);
    if (n < caplen) {
        if (ferror(r->f)) {
            char what[64];
            snprintf(what, sizeof what, "record %" G_GUINT64_FORMAT, idx);
            set_read_error(err, r->path, r->f, what);
        } else {
            g_set_error(err, PCAPF_ERROR, PCAPF_ERROR_CORRUPT,
                        "%s: record %" G_GUINT64_FORMAT " at offset %" G_GUINT64_FORMAT
                        ": truncated packet data (%zu of %u bytes; the file ends there)",
                        r->path, idx, off, n, caplen);
        }
        return -1;
    }
    r->index = idx;
    r->offset = off + REC_HDR_BYTES + caplen;
    rec->t_ns = (uint64_t)sec * 1000000000u + (r->nano ? frac : (uint64_t)frac * 1000u);
    rec->cap_len = caplen;
    rec->orig_len = origlen;
    rec->data = r->buf;
    rec->index = idx;
    rec->offset = off;
    return 1;
}

uint32_t pcap_reader_linktype(const struct pcap_reader *r) { return r->linktype; }
uint32_t pcap_reader_snaplen(const struct pcap_reader *r) { return r->snaplen; }
bool pcap_reader_nanosecond(const struct pcap_reader *r) { return r->nano; }
bool pcap_reader_big_endian(const struct pcap_reader *r) { return r->big_endian; }
uint32_t pcap_reader_fcs_bytes(const struct pcap_reader *r) { return r->fcs_bytes; }

void pcap_reader_close(struct pcap_reader *r)
{
    if (!r)
        return;
    fclose(r->f);
    g_free(r->buf);
    g_free(r->path);
    g_free(r);
}
