/* sysfs and ethtool readers for a RoCE NIC (see nic_sysfs.h). */
#include "replay/nic_sysfs.h"
#include <arpa/inet.h>
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include "replay/replay.h"

static char *read_line(const char *path)
{
    char *t = NULL;
    if (!g_file_get_contents(path, &t, NULL, NULL))
        return NULL;
    return g_strstrip(t);
}

int nic_gid_index(const char *ib_root, const char *dev, unsigned port, const char *addr,
                  const char *netdev, GError **err)
{
    struct in6_addr want;
    struct in_addr v4;
    if (inet_pton(AF_INET, addr, &v4) == 1) {
        memset(&want, 0, sizeof want);
        want.s6_addr[10] = want.s6_addr[11] = 0xFF;
        memcpy(&want.s6_addr[12], &v4, 4);
    } else if (inet_pton(AF_INET6, addr, &want) != 1) {
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_INPUT, "'%s' is not an IPv4 or IPv6 address", addr);
        return -1;
    }
    char *base = g_strdup_printf("%s/%s/ports/%u", ib_root, dev, port);
    char *gids = g_build_filename(base, "gids", NULL);
    GDir *d = g_dir_open(gids, 0, NULL);
    if (!d) {
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_RUN, "%s: no GID table", gids);
        g_free(gids);
        g_free(base);
        return -1;
    }
    int best = -1;
    GString *seen = g_string_new(NULL);
    const char *n;
    while ((n = g_dir_read_name(d))) {
        char *end;
        long i = strtol(n, &end, 10);
        if (*end || i < 0)
            continue;
        char *gp = g_build_filename(gids, n, NULL);
        char *tp = g_strdup_printf("%s/gid_attrs/types/%s", base, n);
        char *np = g_strdup_printf("%s/gid_attrs/ndevs/%s", base, n);
        char *gid = read_line(gp), *type = read_line(tp), *ndev = read_line(np);
        struct in6_addr g;
        /* empty entries read as zeros (or fail to read): skip them */
        if (gid && type && inet_pton(AF_INET6, gid, &g) == 1 && !IN6_IS_ADDR_UNSPECIFIED(&g)) {
            if (seen->len < 400)
                g_string_append_printf(seen, "%s%s %s (%s, %s)", seen->len ? "; " : "", n, gid, type,
                                       ndev ? ndev : "?");
            if (!strcmp(type, "RoCE v2") && !memcmp(&g, &want, sizeof g) &&
                (!netdev || (ndev && !strcmp(ndev, netdev))) && (best < 0 || i < best))
                best = (int)i;
        }
        g_free(gid);
        g_free(type);
        g_free(ndev);
        g_free(gp);
        g_free(tp);
        g_free(np);
    }
    g_dir_close(d);
    if (best < 0)
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_RUN,
                    "%s/%s port %u: no RoCE v2 GID for %s%s%s (entries: %s)", ib_root, dev, port, addr,
                    netdev ? " on " : "", netdev ? netdev : "", seen->len ? seen->str : "none");
    g_string_free(seen, TRUE);
    g_free(gids);
    g_free(base);
    return best;
}

void counter_set_clear(struct counter_set *c)
{
    if (c->names)
        g_ptr_array_unref(c->names);
    if (c->values)
        g_array_free(c->values, TRUE);
    c->names = NULL;
    c->values = NULL;
}

static void counter_set_init(struct counter_set *c)
{
    c->names = g_ptr_array_new_with_free_func(g_free);
    c->values = g_array_new(FALSE, FALSE, sizeof(uint64_t));
}

static int cmp_str(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

gboolean nic_hw_counters(const char *ib_root, const char *dev, unsigned port,
                         struct counter_set *c, GError **err)
{
    counter_set_init(c);
    char *dir = g_strdup_printf("%s/%s/ports/%u/hw_counters", ib_root, dev, port);
    GDir *d = g_dir_open(dir, 0, NULL);
    if (!d) {
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_RUN, "%s: cannot open", dir);
        g_free(dir);
        return FALSE;
    }
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    const char *n;
    while ((n = g_dir_read_name(d)))
        if (strcmp(n, "lifespan")) /* a setting, not a counter */
            g_ptr_array_add(names, g_strdup(n));
    g_dir_close(d);
    g_ptr_array_sort(names, cmp_str);
    gboolean ok = TRUE;
    for (guint i = 0; i < names->len && ok; i++) {
        char *p = g_build_filename(dir, g_ptr_array_index(names, i), NULL);
        char *v = read_line(p), *end = NULL;
        uint64_t x = v ? g_ascii_strtoull(v, &end, 10) : 0;
        if (!v || !*v || *end) {
            g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_RUN, "%s: '%s' is not a counter value", p,
                        v ? v : "(unreadable)");
            ok = FALSE;
        } else {
            g_ptr_array_add(c->names, g_strdup(g_ptr_array_index(names, i)));
            g_array_append_val(c->values, x);
        }
        g_free(v);
        g_free(p);
    }
    g_ptr_array_unref(names);
    g_free(dir);
    if (!ok)
        counter_set_clear(c);
    return ok;
}

gboolean nic_ethtool_stats(const char *ifname, struct counter_set *c, GError **err)
{
    counter_set_init(c);
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct ifreq ifr = { 0 };
    g_strlcpy(ifr.ifr_name, ifname, sizeof ifr.ifr_name);
    /* the header and the one set's length (ethtool_sset_info ends in a flexible array) */
    struct ethtool_sset_info *ss = g_malloc0(sizeof *ss + sizeof(uint32_t));
    ss->cmd = ETHTOOL_GSSET_INFO;
    ss->sset_mask = 1ull << ETH_SS_STATS;
    ifr.ifr_data = (void *)ss;
    if (fd < 0 || ioctl(fd, SIOCETHTOOL, &ifr) != 0 || !(ss->sset_mask & (1ull << ETH_SS_STATS))) {
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_RUN, "ethtool statistics of %s: %s", ifname,
                    fd < 0 || errno ? g_strerror(errno) : "none");
        if (fd >= 0)
            close(fd);
        g_free(ss);
        counter_set_clear(c);
        return FALSE;
    }
    uint32_t n = ss->data[0];
    g_free(ss);
    struct ethtool_gstrings *gs = g_malloc0(sizeof *gs + (size_t)n * ETH_GSTRING_LEN);
    gs->cmd = ETHTOOL_GSTRINGS;
    gs->string_set = ETH_SS_STATS;
    gs->len = n;
    struct ethtool_stats *st = g_malloc0(sizeof *st + (size_t)n * sizeof(uint64_t));
    st->cmd = ETHTOOL_GSTATS;
    st->n_stats = n;
    gboolean ok = TRUE;
    ifr.ifr_data = (void *)gs;
    if (ioctl(fd, SIOCETHTOOL, &ifr) != 0)
        ok = FALSE;
    ifr.ifr_data = (void *)st;
    if (ok && ioctl(fd, SIOCETHTOOL, &ifr) != 0)
        ok = FALSE;
    if (!ok)
        g_set_error(err, REPLAY_ERROR, REPLAY_ERROR_RUN, "ethtool statistics of %s: %s", ifname,
                    g_strerror(errno));
    /* the driver may report fewer than it announced (the set changes with PFC settings) */
    for (uint32_t i = 0; ok && i < MIN(n, st->n_stats); i++) {
        char name[ETH_GSTRING_LEN + 1];
        memcpy(name, gs->data + (size_t)i * ETH_GSTRING_LEN, ETH_GSTRING_LEN);
        name[ETH_GSTRING_LEN] = '\0';
        g_ptr_array_add(c->names, g_strdup(name));
        g_array_append_val(c->values, st->data[i]);
    }
    g_free(gs);
    g_free(st);
    close(fd);
    if (!ok)
        counter_set_clear(c);
    return ok;
}
