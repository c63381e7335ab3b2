/* Which ports and flows the time series sample ([output] sample_ports) and how coarsely
 * ([output] sample_scale), so that the cost of results follows what the user asked for.
 *
 * sample_ports: all | busiest:N | a list of ports (NODE:PORT, or a host for its NIC port) |
 * auto (all on fabrics of up to SELECT_SMALL_HOSTS hosts, else busiest:SELECT_AUTO_BUSIEST).
 * A selected port's queue rows and ECN counter rows are written; so are the rate rows of the
 * flows (QPs) whose path crosses a selected port, and the NIC counter rows of the hosts at
 * either end of those flows. "Busiest" is decided before the run, without a second pass: the
 * switch egress ports with the most serialisation time scheduled on them (every QP's bytes
 * along its ECMP path, over each port's rate).
 *
 * sample_scale: auto | N >= 1: the queue/rate and counter sampling periods are N times
 * [output] queue_sample and counter_sample; auto is 1 up to SELECT_SMALL_HOSTS hosts, else
 * SELECT_AUTO_SCALE. The effective periods are written back into the scenario (summary.json
 * shows them). */
#ifndef ROCESIM_RESULTS_SELECT_H
#define ROCESIM_RESULTS_SELECT_H
#include <glib.h>
#include "models/net.h"

#define SELECT_SMALL_HOSTS 64
#define SELECT_AUTO_BUSIEST 32
#define SELECT_AUTO_SCALE 10

struct sample_selection {
    uint8_t *port;       /* per global port: sampled (NULL: every port) */
    uint8_t *flow;       /* per QP: its rates sampled (NULL: every flow) */
    uint32_t nports;     /* ports selected (every port when port is NULL) */
    unsigned scale;      /* the sampling periods' multiplier */
};

/* Resolves sc's sample_ports and sample_scale on the built fabric n. A bad value fails naming
 * the file, the key, the value and what was expected. */
gboolean sample_selection_build(struct sample_selection *sel, const struct net *n, GError **err);
/* Multiplies sc's sampling periods by sel->scale and records them in sc->expanded. */
void sample_selection_apply_scale(const struct sample_selection *sel, struct scenario *sc);
void sample_selection_clear(struct sample_selection *sel);
/* A port named as [output] pcap and sample_ports name them: "leaf0:17", or "host3" (port 0). */
struct port_ref {
    uint32_t node, port;   /* the node's index, the port's number at it */
};
/* "leaf0:17,host3" -> a GArray of struct port_ref; NULL and *bad (g_free it) = the first item
 * that names no port. */
GArray *select_parse_ports(const struct topology *t, const char *list, char **bad);

#endif
