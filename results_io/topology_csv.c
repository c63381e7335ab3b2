/* topology.csv (see topology_csv.h). */
#include "results_io/topology_csv.h"
#include <glib.h>
#include "results_io/format.h"

void results_write_topology(FILE *f, const struct topology *t)
{
    fputs(RESULTS_TOPOLOGY_HEADER "\n", f);
    for (uint32_t i = 0; i < t->nports; i++) {
        const struct topo_port *p = &t->ports[i];
        const struct topo_port *q = &t->ports[p->peer];
        fprintf(f, "%s,%u,%s,%u,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT "\n", t->nodes[p->node].name, p->index,
                t->nodes[q->node].name, q->index, p->rate_bps, p->delay_ps);
    }
}
