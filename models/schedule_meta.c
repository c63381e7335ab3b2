/* Meta lines of a v2 schedule: what a replay needs to know of the simulated fabric. */
#include "models/schedule_meta.h"

char *topology_digest(const struct topology *t)
{
    GChecksum *c = g_checksum_new(G_CHECKSUM_SHA256);
    for (uint32_t i = 0; i < t->nports; i++) {
        const struct topo_port *p = &t->ports[i];
        const struct topo_port *q = &t->ports[p->peer];
        char *line = g_strdup_printf("%s,%u,%s,%u,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT "\n",
                                     t->nodes[p->node].name, p->index, t->nodes[q->node].name,
                                     q->index, p->rate_bps, p->delay_ps);
        g_checksum_update(c, (const guchar *)line, -1);
        g_free(line);
    }
    char *d = g_strconcat("sha256:", g_checksum_get_string(c), NULL);
    g_checksum_free(c);
    return d;
}

void schedule_set_meta(struct schedule *s, const struct scenario *sc, const struct topology *t)
{
    struct sched_meta *m = &s->meta;
    m->present = TRUE;
    m->hosts = t->nhosts;
    m->mtu = sc->mtu;
    m->host_rate_bps = sc->host_rate;
    for (int p = 0; p < 8; p++)
        m->dscp[p] = (uint8_t)(8 * p);
    g_free(m->topology);
    m->topology = topology_digest(t);
}
