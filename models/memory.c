#include "models/memory.h"
#include <unistd.h>
#include "models/net.h"
#include "models/schedule.h"
#include "models/topology.h"
#include "sim/units.h"

static uint64_t limit_bytes;
static uint32_t copies = 1;

void memory_set_limit(uint64_t bytes) { limit_bytes = bytes; }
void memory_set_copies(uint32_t n) { copies = n ? n : 1; }

uint64_t memory_limit(void)
{
    if (limit_bytes)
        return limit_bytes;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : UINT64_MAX;
}

/* "1.5 GiB"-style text for messages (estimates are not exact sizes). */
static char *approx(uint64_t b)
{
    static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    double v = (double)b;
    int u = 0;
    while (v >= 1024 && u < 6) {
        v /= 1024;
        u++;
    }
    return g_strdup_printf("%.3g %s", v, unit[u]);
}

/* saturating arithmetic: an estimate past 2^64 is simply "too much" */
static uint64_t add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
static uint64_t mul(uint64_t a, uint64_t b) { return b && a > UINT64_MAX / b ? UINT64_MAX : a * b; }

gboolean memory_fits(uint64_t need, char **why)
{
    uint64_t lim = memory_limit(), all = mul(need, copies);
    if (all <= lim)
        return TRUE;
    char *a = approx(need), *b = approx(lim), *c = approx(all);
    const char *whose = limit_bytes ? "--max-memory" : "this machine's memory; see --max-memory";
    if (copies > 1) /* an MPI run: every rank on this machine holds the whole fabric */
        *why = g_strdup_printf("about %s on each of the %u MPI ranks on this machine, %s in all, more than the "
                               "memory limit of %s (%s; fewer ranks per machine need less)",
                               a, copies, c, b, whose);
    else
        *why = g_strdup_printf("about %s, more than the memory limit of %s (%s)", a, b, whose);
    g_free(a);
    g_free(b);
    g_free(c);
    return FALSE;
}

uint64_t memory_topology_bytes(uint64_t hosts, uint64_t switches, uint64_t links, uint64_t route_entries)
{
    uint64_t nodes = add(hosts, switches), ports = mul(links, 2);
    uint64_t b = mul(nodes, sizeof(struct topo_node));
    b = add(b, mul(ports, sizeof(struct topo_port) + sizeof(struct port_rt)));
    b = add(b, mul(hosts, sizeof(struct host_rt) + 2 * sizeof(uint32_t)));
    /* per (switch, switch): route_off, route_cnt, sw_dist */
    b = add(b, mul(mul(switches, switches), 2 * sizeof(uint32_t) + sizeof(uint16_t)));
    return add(b, mul(route_entries, 2 * sizeof(uint16_t))); /* next hops, and array growth */
}

uint64_t memory_transfer_bytes(void)
{
    /* the schedule's arrays grow by doubling: count them twice; about two dependencies each */
    return 2 * (sizeof(struct transfer) + 2 * sizeof(uint32_t)) + sizeof(struct xfer_rt) + 3 * sizeof(uint32_t);
}
