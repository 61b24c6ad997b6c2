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

#include "tessera/graph/type.h"
#include "tessera/ir/expr.h"

namespace tessera::graph_lower {

/// The TE extent of a graph dim (dynamic shapes): an int32 constant for a static dim; for a
/// symbolic one the int32 ir::Var named after it, the same Var for the same name throughout the
/// process, so that every tensor of a kernel with the dim shares one extent (the kernel's
/// shape_vars, whose values the executor passes at run time: runtime/kernel_abi.h). Thread-safe.
/// UnsupportedError for "?" (an extent no type relation computed).
ir::PrimExpr DimExtent(const graph::Dim& d);
/// DimExtent of every dim.
std::vector<ir::PrimExpr> ShapeExtents(const graph::Shape& shape);

/// Attaches the computes above to OpRegistry::Global(). Idempotent and thread-safe.
void RegisterComputes();

/// The names of the ops RegisterComputes() attaches a compute to, sorted.
std::vector<std::string> OpsWithCompute();

}  // namespace tessera::graph_lower
