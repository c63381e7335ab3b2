/* NCCL's collectives on multi-GPU servers: GPU ranks written server:gpu, and the rings NCCL
 * builds over them (one channel per NIC, intra-server segments over NVLink, every
 * inter-server hop on the channel's rail). */
#ifndef ROCESIM_COLLECTIVE_HIER_H
#define ROCESIM_COLLECTIVE_HIER_H
#include <glib.h>
#include <stdint.h>
#include "models/topology.h"

/* "0:0-7,1:0-3" or "0-3:0-7" (servers x GPUs), plain GPU ids, or a placement policy:
 * "packed:N" (the first N GPUs, server by server) or "rail:N" (rank i on server i mod S, GPU
 * i / S). GPU host ids in rank order, or NULL with *why saying what was expected. */
uint32_t *hier_parse_gpus(const struct topology *t, const char *text, uint32_t *n, char **why);

/* The ring of every channel (channels x n rank indices, g_free it): ranks grouped by server in
 * order of first appearance, GPUs of a server in GPU order, rotated so that channel c enters
 * every server at the GPU nearest NIC c mod nics (GPU c*gpus/nics), and leaves it from the
 * GPU before that one; the routes carry that last hop to NIC c over NVLink or PCIe (PXN), so
 * the channel's inter-server bytes stay on rail c. */
uint32_t *hier_ring_order(const struct topology *t, const uint32_t *ranks, uint32_t n, uint32_t channels);

/* NCCL's trees over servers (channels x n parents, channels x n x COLLECTIVE_TREE_ARITY
 * children, g_free both): on channel c the GPUs of a server form a chain in the order of the
 * channel's ring (from the GPU of NIC c), and the chains' heads form NCCL's double binary
 * tree over the servers (tree c % 2), so every inter-server edge of channel c is on rail c. */
void hier_tree(const struct topology *t, const uint32_t *ranks, uint32_t n, uint32_t channels, int **parent,
               int **child);

/* TRUE when the ranks are GPUs of more than one server. */
gboolean hier_spans_servers(const struct topology *t, const uint32_t *ranks, uint32_t n);

#endif
