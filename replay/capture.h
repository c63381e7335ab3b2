/* Packet capture during a replay (libpcap): RoCEv2 datagrams (UDP to the replay's data port,
 * 4791 on a NIC) and PFC frames (EtherType 0x8808) seen on one interface, e.g. the mirror
 * port of a switch, with nanosecond timestamps where the interface supports them, into a
 * pcap file that `rocesim pcap-stats` reads. Frames are cut at CAPTURE_SNAPLEN bytes: the
 * headers pcap-stats reads (Ethernet, VLAN, IP, UDP, BTH, RETH, immediate) fit. */
#ifndef ROCESIM_REPLAY_CAPTURE_H
#define ROCESIM_REPLAY_CAPTURE_H
#include <glib.h>
#include <stdint.h>

#define CAPTURE_SNAPLEN 192

struct capture;

/* Starts capturing on iface into path; *err names the interface and libpcap's reason. */
struct capture *capture_open(const char *iface, const char *path, uint16_t udp_port, GError **err);
/* The fd to poll (-1: none). */
int capture_fd(const struct capture *c);
/* Writes what has been captured so far. */
void capture_pump(struct capture *c);
/* Writes the rest and closes; the counts of libpcap (may be NULL). */
void capture_close(struct capture *c, uint64_t *packets, uint64_t *dropped);

#endif
