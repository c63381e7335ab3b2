/* A multi-GPU server ([server]) and the cluster of them ([cluster]): GPUs, NICs, PCIe
 * switches, CPU sockets, NVLink/NVSwitch, and the wiring of the NICs to the fabric.
 *
 * Inside the server every element is a node of the same fabric, so the engine's queues, PFC
 * back-pressure, sampling and results apply unchanged (models/topology_rail.c builds it):
 *   GPU g        a host (the endpoint of transfers: NCCL's ranks are GPUs)
 *   g's hub      a switch joining the GPU's NVLink and PCIe sides (GPU <-> hub at NVLink speed)
 *   NVSwitch     a switch every hub reaches over NVLink (nvlink_rate, nvlink_latency)
 *   PCIe switch  a switch; hubs and NICs under it hang off PCIe links (pcie_gen, pcie_width)
 *   CPU socket   a switch (root complex); its PCIe switches reach it over PCIe, the sockets
 *                are joined by the inter-socket link (socket_link_rate, socket_link_latency)
 *   NIC          a switch between its PCIe switch and its fabric port (nic_rate)
 * Internal nodes never ECN-mark (NVLink and PCIe have credit flow control, no ECN). */
#ifndef ROCESIM_SERVER_H
#define ROCESIM_SERVER_H
#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "sim/scenario.h"
#include "sim/simtime.h"

#define SERVER_MAX_GPUS 64
#define SERVER_MAX_NICS 64

struct server_desc {
    char *preset;
    uint32_t gpus, nics, pcie_switches, sockets;
    uint64_t nic_rate;                 /* bits/s per NIC port */
    uint64_t nvlink_rate;              /* bits/s per GPU and direction into the NVSwitch */
    simtime_t nvlink_latency;
    uint32_t pcie_gen, pcie_width;     /* every PCIe link (GPU, NIC, switch uplink) */
    uint64_t pcie_rate;                /* derived: usable bits/s per direction */
    simtime_t pcie_latency;
    uint64_t socket_link_rate;
    simtime_t socket_link_latency;
    uint32_t gpu_pcie[SERVER_MAX_GPUS];  /* PCIe switch of each GPU */
    uint32_t nic_pcie[SERVER_MAX_NICS];  /* PCIe switch of each NIC */
    uint32_t pcie_socket[SERVER_MAX_GPUS + SERVER_MAX_NICS];
};

struct cluster_desc {
    uint32_t servers;
    uint32_t rail_group;               /* servers whose NIC i share rail i's leaf */
};

/* Usable PCIe bandwidth per direction: lanes x transfer rate x line encoding (128b/130b for
 * gen 3-5, 242B/256B FLITs for gen 6) x TLP efficiency with 256-byte payloads and 24 bytes of
 * TLP header, sequence number, LCRC and framing per packet (256/280). */
uint64_t server_pcie_rate(uint32_t gen, uint32_t width);

/* Reads [server] (preset first, then every key over it) and [cluster]. FALSE with err naming
 * the key, its value and what was expected. */
gboolean server_load(const struct scenario *s, struct server_desc *sd, struct cluster_desc *cd,
                     GError **err);
void server_desc_clear(struct server_desc *sd);

/* Names of the presets, "a|b|c" (for messages and the README). */
const char *server_preset_names(void);

#endif
