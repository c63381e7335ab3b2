/* Every topology kind, one line each: X(ID, "name", symbol) where `symbol` is a
 * `const struct topology_kind` (models/topology.h) defined in the kind's own file. The order
 * is that of the [topology] kind choices. Adding a kind is its file plus one line here. */
#ifndef ROCESIM_TOPOLOGY_REGISTRY_H
#define ROCESIM_TOPOLOGY_REGISTRY_H

#define TOPOLOGY_KINDS(X)                                \
    X(LEAF_SPINE, "leaf-spine", topology_kind_leaf_spine) \
    X(EDGES, "edges", topology_kind_edges)                \
    X(RAIL, "rail-optimised", topology_kind_rail)         \
    X(FATTREE, "fat-tree", topology_kind_fat_tree)        \
    /* one line per kind above this one */

#define TOPO_ID_(id, name, symbol) TOPO_##id,
enum topo_kind { TOPOLOGY_KINDS(TOPO_ID_) TOPO_COUNT };
#undef TOPO_ID_

#define TOPO_CHOICE_(id, name, symbol) "|" name
/* the [topology] kind choices, "|leaf-spine|edges|..." (sim/config.c skips the leading bar) */
#define TOPO_CHOICES (TOPOLOGY_KINDS(TOPO_CHOICE_))

#endif
