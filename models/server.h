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
 *   host memory  a switch per socket behind the socket (host_memory_rate); with GPUDirect
 *                off, a bounce buffer per NIC (a host, the proxy's staging buffer) hangs off
 *                the memory of the NIC's socket and inter-server data goes through it
 *                (models/gdr_staging.c)
 * Internal nodes never ECN-mark (NVLink and PCIe have credit flow control, no ECN). */
#ifndef ROCESIM_SERVER_H
#define ROCESIM_SERVER_H
#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "models/scenario.h"
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
    uint64_t host_memory_rate;         /* per socket, each of read and write */
    uint32_t gpu_pcie[SERVER_MAX_GPUS];  /* PCIe switch of each GPU */
    uint32_t nic_pcie[SERVER_MAX_NICS];  /* PCIe switch of each NIC */
    uint32_t gpu_pcie_width[SERVER_MAX_GPUS], nic_pcie_width[SERVER_MAX_NICS]; /* per link */
    uint32_t pcie_socket[SERVER_MAX_GPUS + SERVER_MAX_NICS];
};

struct cluster_desc {
    uint32_t servers;
    uint32_t rail_group;               /* servers whose NIC i share rail i's leaf */
    uint32_t k;                        /* fat-tree: ports per switch (even) */
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

/* One server as built: the description with its locality faults applied. */
struct server_inst {
    uint32_t nic_pcie[SERVER_MAX_NICS];      /* PCIe switch of each NIC (nic-numa moves it) */
    uint64_t gpu_pcie_rate[SERVER_MAX_GPUS]; /* PCIe link of each GPU (pcie-width) */
    uint64_t nic_pcie_rate[SERVER_MAX_NICS];
    uint64_t uplink_rate[SERVER_MAX_GPUS];   /* PCIe switch -> socket */
    uint64_t nic_rate[SERVER_MAX_NICS];      /* fabric port (link-speed) */
    bool nvlink_down[SERVER_MAX_GPUS];
    bool nic_down[SERVER_MAX_NICS];          /* no fabric link (nic-down) */
    bool no_gpudirect;
};

/* Every server as built: sd for all, then the [fault] sections of kinds nic-numa,
 * pcie-width, link-speed, nic-down, nvlink-down and no-gpudirect, whose node names a server part
 * (srv1, srv1.gpu3, srv1.nic3, srv1.pcie2) or a rail (rail3: that NIC of every server).
 * g_free the array. NULL with err on a bad fault. */
struct server_inst *server_faults_apply(const struct scenario *s, const struct server_desc *sd,
                                        const struct cluster_desc *cd, GError **err);
/* TRUE for the fault kinds above (they are structural, models/fault.c leaves them alone). */
gboolean server_fault_is_locality(const char *kind);

/* Names of the presets, "a|b|c" (for messages and the README). */
const char *server_preset_names(void);

/* The keys [server] and [cluster] may have (NULL-terminated), for the README check. */
extern const char *const server_section_keys[];
extern const char *const cluster_section_keys[];

#endif
