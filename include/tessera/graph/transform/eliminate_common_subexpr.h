// EliminateCommonSubexpr: merges calls of the same op with the same (already merged)
// arguments and equal attrs, equal tuples and tuple accesses, and constants with equal
// dtype, shape and bytes (Relay's EliminateCommonSubexpr, which merges calls; merging
// constants too lets calls on duplicated weights or scalars merge, and shrinks the params).
// Bottom-up, so whole duplicated subgraphs collapse. Calls of functions are not merged.
// Types are kept (merged nodes are existing, typed nodes).
#pragma once

#include "tessera/graph/module.h"

namespace tessera::graph::transform {

IRModule EliminateCommonSubexpr(const IRModule& mod);

}  // namespace tessera::graph::transform
