/* A real server's layout from NCCL's topology dump (the XML NCCL_TOPO_DUMP_FILE writes) or
 * from `nvidia-smi topo -m` text: GPUs, NICs, which PCIe switch each sits under, which socket
 * each PCIe switch hangs off (and, from the XML, the NIC speed and the GPUs' PCIe link). */
#ifndef ROCESIM_NCCL_TOPO_H
#define ROCESIM_NCCL_TOPO_H
#include <glib.h>

/* Parses `text` (the format is recognised: XML starting with '<', else topo -m) into
 * [server] keys as text: gpus, nics, pcie_switches, sockets, gpu_pcie, nic_pcie, pcie_socket,
 * and from the XML nic_rate, pcie_gen, pcie_width (the first GPU's link) and, where a device's
 * link trained at another width, gpu_pcie_width / nic_pcie_width per device. PCIe switches are numbered in the order
 * of their first GPU (then NIC), sockets in the order of their first PCIe switch, so both
 * formats give the same description of one machine. NULL with *why on bad input. */
GHashTable *nccl_topo_import(const char *text, char **why);

#endif
