// Where graph ops meet topi: attaches a topi FCompute to every graph op that has one
// (OpRegistry::SetCompute), so a primitive function can be lowered to TE and then TensorIR.
//
// The ops with a compute are the ones the computes_*.cc files attach (OpsWithCompute() lists
// them): NN ops, elementwise / broadcast math, transforms and reductions, indexing and the
// gather / scatter family, image ops (resize, grid_sample), the packed GEMM and Winograd ops.
// Ops without one keep an empty compute; lowering a function that calls them is an
// UnsupportedError naming the op.
#pragma once

#include <string>
#include <vector>

namespace tessera::graph_lower {

/// Attaches the computes above to OpRegistry::Global(). Idempotent and thread-safe.
void RegisterComputes();

/// The names of the ops RegisterComputes() attaches a compute to, sorted.
std::vector<std::string> OpsWithCompute();

}  // namespace tessera::graph_lower
