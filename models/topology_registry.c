/* The topology-kind registry: the kinds of models/topology_registry.h, in its order. */
#include "models/topology.h"

#define TOPO_ENTRY_(id, name, symbol) &symbol,
const struct topology_kind *const topology_kinds[TOPO_COUNT] = { TOPOLOGY_KINDS(TOPO_ENTRY_) };
#undef TOPO_ENTRY_
