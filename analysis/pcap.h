/* pcap files: a buffered writer of nanosecond traces for the simulator, and a reader of
 * microsecond and nanosecond captures in either byte order with precise errors. Errors are in
 * the PCAPF_ERROR domain (libpcap already defines PCAP_ERROR).
 *
 * Simulator use, one trace per captured port:
 *
 *   GError *err = NULL;
 *   struct pcap_writer *w = pcap_writer_open("out.tmp/leaf0-p3.pcap", 128, &err);
 *   ...for every packet the port sends (or receives), at the time its first bit is on the wire:
 *   struct frame_ctx ctx = { .msg_bytes = transfer_bytes, .pfc_port = 3 };
 *   pcap_writer_packet(w, now_ps, pkt, &ctx);     // builds the frame, no allocation
 *   ...at the end:
 *   if (!pcap_writer_close(w, &err)) -> report err->message
 *
 * Write errors are sticky: pcap_writer_packet returns false once one happened and
 * pcap_writer_close reports it with the file name.
 */
#ifndef ROCESIM_PCAP_H
#define ROCESIM_PCAP_H
#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "analysis/frames.h"
#include "models/packet.h"
#include "sim/simtime.h"

#define PCAPF_ERROR (pcapf_error_quark())
typedef enum {
    PCAPF_ERROR_IO,        /* open/read/write failed (errno text in the message) */
    PCAPF_ERROR_FORMAT,    /* not a pcap file: empty, pcapng, text, unknown magic */
    PCAPF_ERROR_CORRUPT,   /* a pcap file with a damaged or truncated header or record */
} pcapf_error_code;
GQuark pcapf_error_quark(void);

/* The largest record the reader accepts (libpcap's limit for Ethernet captures). */
#define PCAP_MAX_SNAPLEN 262144u

/* ---- writer ---- */

struct pcap_writer;

/* Creates (truncates) `path` and writes a nanosecond pcap header (magic 0xa1b23c4d written
 * little-endian, version 2.4, LINKTYPE_ETHERNET). Records keep at most `snaplen` bytes of
 * each frame (0 = whole frames) and always carry the original length. NULL + err on failure. */
struct pcap_writer *pcap_writer_open(const char *path, uint32_t snaplen, GError **err);

/* Appends a record with time t (picoseconds, truncated to whole ns): `data` holds the first
 * `len` bytes of a frame of `orig_len` bytes; at most the snap length is stored. */
bool pcap_writer_write(struct pcap_writer *w, simtime_t t, const uint8_t *data, uint32_t len,
                       uint32_t orig_len);

/* Frames `p` with frame_build (ctx may be NULL) into the writer's own buffer and appends it. */
bool pcap_writer_packet(struct pcap_writer *w, simtime_t t, const struct packet *p,
                        const struct frame_ctx *ctx);

uint64_t pcap_writer_records(const struct pcap_writer *w);

/* Flushes, closes and frees w (also on error). false + err if any write failed. */
bool pcap_writer_close(struct pcap_writer *w, GError **err);

/* ---- reader ---- */

struct pcap_record {
    uint64_t t_ns;          /* timestamp in ns since the epoch (microsecond files: x1000) */
    uint32_t cap_len;       /* bytes in data */
    uint32_t orig_len;      /* length of the frame on the wire (without FCS unless fcs_bytes) */
    const uint8_t *data;    /* valid until the next pcap_reader_next or close */
    uint64_t index;         /* 1-based record number, as Wireshark numbers frames */
    uint64_t offset;        /* file offset of the record header */
};

struct pcap_reader;

/* Opens a pcap file and reads its header. Errors name the file and say what it is instead:
 * empty, too short, pcapng (with how to convert), gzip, text, unknown magic, bad version. */
struct pcap_reader *pcap_reader_open(const char *path, GError **err);

/* Reads the next record: 1 = rec filled, 0 = clean end of file, -1 = error with err naming
 * the file, the record number and its offset (truncated record, impossible lengths or
 * timestamps). */
int pcap_reader_next(struct pcap_reader *r, struct pcap_record *rec, GError **err);

uint32_t pcap_reader_linktype(const struct pcap_reader *r);  /* LINKTYPE_* */
uint32_t pcap_reader_snaplen(const struct pcap_reader *r);
bool pcap_reader_nanosecond(const struct pcap_reader *r);
bool pcap_reader_big_endian(const struct pcap_reader *r);    /* the file's byte order */
uint32_t pcap_reader_fcs_bytes(const struct pcap_reader *r); /* FCS bytes the records include */
void pcap_reader_close(struct pcap_reader *r);

#endif
