/* A rank's host and NIC description (see hostinfo.h). */
#include "replay/hostinfo.h"
#include <json-glib/json-glib.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include "results_io/outcome.h"
#include "replay/nic_knobs.h"

void hostinfo_begin(struct hostinfo *h, const char *netdev, const char *net_root,
                    const char *debugfs_root)
{
    memset(h, 0, sizeof *h);
    h->net_root = g_strdup(net_root ? net_root : "/sys/class/net");
    h->debugfs_root = g_strdup(debugfs_root ? debugfs_root : "/sys/kernel/debug");
    if (netdev && strcmp(netdev, "-") && strcmp(netdev, "lo"))
        h->netdev = g_strdup(netdev);
    if (h->netdev && !nic_ethtool_stats(h->netdev, &h->start, NULL))
        memset(&h->start, 0, sizeof h->start);
}

static void drvinfo(const char *ifname, JsonBuilder *b)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
    struct ifreq ifr = { 0 };
    g_strlcpy(ifr.ifr_name, ifname, sizeof ifr.ifr_name);
    ifr.ifr_data = (void *)&di;
    if (fd >= 0 && ioctl(fd, SIOCETHTOOL, &ifr) == 0) {
        json_builder_set_member_name(b, "driver");
        json_builder_add_string_value(b, di.driver);
        json_builder_set_member_name(b, "firmware");
        json_builder_add_string_value(b, di.fw_version);
        json_builder_set_member_name(b, "bus");
        json_builder_add_string_value(b, di.bus_info);
    }
    if (fd >= 0)
        close(fd);
}

char *hostinfo_end(struct hostinfo *h, const char *samples)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "host");
    json_builder_add_string_value(b, g_get_host_name());
    json_builder_set_member_name(b, "netdev");
    json_builder_add_string_value(b, h->netdev ? h->netdev : "");
    if (samples && *samples) {
        json_builder_set_member_name(b, "samples");
        json_builder_add_string_value(b, samples);
    }
    if (h->netdev) {
        drvinfo(h->netdev, b);
        char *sp = g_strdup_printf("%s/%s/speed", h->net_root, h->netdev), *t = NULL;
        if (g_file_get_contents(sp, &t, NULL, NULL)) {
            json_builder_set_member_name(b, "link_speed_mbps");
            json_builder_add_int_value(b, g_ascii_strtoll(g_strstrip(t), NULL, 10));
        }
        g_free(t);
        g_free(sp);
        struct nic_knobs k;
        if (nic_knobs_read(h->net_root, h->netdev, h->debugfs_root, NULL, &k, NULL) && k.layout) {
            json_builder_set_member_name(b, "dcqcn_knobs");
            json_builder_begin_object(b);
            json_builder_set_member_name(b, "layout");
            json_builder_add_string_value(b, k.layout);
            json_builder_set_member_name(b, "source");
            json_builder_add_string_value(b, k.source);
            for (guint i = 0; i < k.names->len; i++) {
                json_builder_set_member_name(b, g_ptr_array_index(k.names, i));
                json_builder_add_string_value(b, g_ptr_array_index(k.values, i));
            }
            json_builder_end_object(b);
            char *frag = nic_knobs_fragment(&k);
            json_builder_set_member_name(b, "scenario_fragment");
            json_builder_add_string_value(b, frag);
            g_free(frag);
        }
        nic_knobs_clear(&k);
        struct counter_set end = { 0 };
        if (h->start.names && nic_ethtool_stats(h->netdev, &end, NULL)) {
            json_builder_set_member_name(b, "counters");
            json_builder_begin_object(b);
            /* names may change with the PFC settings: pair by name */
            for (guint i = 0; i < end.names->len; i++) {
                const char *n = g_ptr_array_index(end.names, i);
                uint64_t before = 0;
                for (guint j = 0; j < h->start.names->len; j++)
                    if (!strcmp(g_ptr_array_index(h->start.names, j), n)) {
                        before = g_array_index(h->start.values, uint64_t, j);
                        break;
                    }
                json_builder_set_member_name(b, n);
                json_builder_add_int_value(b, (gint64)counter_delta(before, g_array_index(end.values, uint64_t, i)));
            }
            json_builder_end_object(b);
        }
        counter_set_clear(&end);
    }
    json_builder_end_object(b);
    return outcome_json_text(b);
}

void hostinfo_clear(struct hostinfo *h)
{
    counter_set_clear(&h->start);
    g_free(h->netdev);
    g_free(h->net_root);
    g_free(h->debugfs_root);
    memset(h, 0, sizeof *h);
}
