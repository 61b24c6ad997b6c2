// A compact reference interpreter of TensorIR PrimFuncs for the topi / graph_lower tests.
//
// Runs both forms: block form (For / BlockRealize with init, N-d BufferLoad / BufferStore,
// alloc_buffers) as te::create_prim_func and the schedule primitives leave it, and flat form
// (Allocate, 1-d accesses, Ramp / Broadcast vector lanes) after the tir::transform passes.
// Every value is a double; stores to float32 buffers and float32 arithmetic round to float,
// integer arithmetic is exact. Loop kinds (parallel, vectorized, ...) run serially, which is
// their semantics at block level. Slow, simple, and independent of codegen.
#pragma once

#include <vector>

#include "tessera/tir/function.h"

namespace tessera::topi::testing {

/// Runs `f` with one array per parameter (row-major, f->params order); outputs are written in
/// place. Throws std::runtime_error on an out-of-bounds access or an unsupported node.
void RunPrimFunc(const tir::PrimFunc& f, const std::vector<std::vector<double>*>& args);

}  // namespace tessera::topi::testing
