/* Capture during a replay (see capture.h). */
#include "replay/capture.h"
#include <pcap/pcap.h>
#include "replay/replay.h"

struct capture {
    pcap_t *p;
    pcap_dumper_t *d;
    uint64_t packets;
};

static struct capture *fail(struct capture *c, const char *iface, const char *what, GError **err)
{
    g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_RUN, "--capture %s: %s", iface, what);
    if (c->d)
        pcap_dump_close(c->d);
    if (c->p)
        pcap_close(c->p);
    g_free(c);
    return NULL;
}

struct capture *capture_open(const char *iface, const char *path, uint16_t udp_port, GError **err)
{
    struct capture *c = g_new0(struct capture, 1);
    char eb[PCAP_ERRBUF_SIZE] = "";
    if (!(c->p = pcap_create(iface, eb)))
        return fail(c, iface, eb, err);
    pcap_set_snaplen(c->p, CAPTURE_SNAPLEN);
    pcap_set_promisc(c->p, 1); /* a mirror port's frames are not addressed to this host */
    pcap_set_timeout(c->p, 10);
    pcap_set_buffer_size(c->p, 64 << 20);
    /* nanoseconds where the interface has them; libpcap falls back to microseconds */
    pcap_set_tstamp_precision(c->p, PCAP_TSTAMP_PRECISION_NANO);
    int rc = pcap_activate(c->p);
    if (rc < 0)
        return fail(c, iface, pcap_geterr(c->p), err);
    char *filter = g_strdup_printf("udp dst port %u or ether proto 0x8808 or "
                                   "(vlan and (udp dst port %u or ether proto 0x8808))",
                                   udp_port, udp_port);
    struct bpf_program prog;
    rc = pcap_compile(c->p, &prog, filter, 1, PCAP_NETMASK_UNKNOWN);
    g_free(filter);
    if (rc < 0)
        return fail(c, iface, pcap_geterr(c->p), err);
    rc = pcap_setfilter(c->p, &prog);
    pcap_freecode(&prog);
    if (rc < 0 || pcap_setnonblock(c->p, 1, eb) < 0)
        return fail(c, iface, rc < 0 ? pcap_geterr(c->p) : eb, err);
    if (!(c->d = pcap_dump_open(c->p, path)))
        return fail(c, iface, pcap_geterr(c->p), err);
    return c;
}

int capture_fd(const struct capture *c) { return c ? pcap_get_selectable_fd(c->p) : -1; }

static void dump(u_char *user, const struct pcap_pkthdr *h, const u_char *bytes)
{
    struct capture *c = (struct capture *)(void *)user;
    pcap_dump((u_char *)c->d, h, bytes);
    c->packets++;
}

void capture_pump(struct capture *c)
{
    if (!c)
        return;
    while (pcap_dispatch(c->p, -1, dump, (u_char *)c) > 0)
        ;
}

void capture_close(struct capture *c, uint64_t *packets, uint64_t *dropped)
{
    if (!c)
        return;
    capture_pump(c);
    struct pcap_stat ps = { 0 };
    pcap_stats(c->p, &ps);
    if (packets)
        *packets = c->packets;
    if (dropped)
        *dropped = (uint64_t)ps.ps_drop + ps.ps_ifdrop;
    pcap_dump_close(c->d);
    pcap_close(c->p);
    g_free(c);
}
