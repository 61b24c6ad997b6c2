// The reference interpreter of TensorIR PrimFuncs shared by the tests (tir, schedule, te,
// topi, graph_lower): slow, simple, and independent of codegen.
//
// Runs both forms: block form (For / BlockRealize with init, N-d BufferLoad / BufferStore,
// alloc_buffers) as te::create_prim_func and the schedule primitives leave it, with TensorIR
// semantics (iter vars bound, a false predicate skips the block, the init runs when every
// reduction iter var is at its domain minimum); and flat form (Allocate, 1-d accesses, Ramp /
// Broadcast vector lanes) after the tir::transform passes. Every value is a double; stores to
// float32 buffers and float32 arithmetic round to float, integer arithmetic is exact. Loop
// kinds (parallel, vectorized, ...) run serially, which is their semantics at block level.
// Buffers the function allocates start as NaN, so a read before any write shows in the results.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/tir/function.h"

namespace tessera::tir::testing {

/// Runs `f` with one array per parameter (row-major, f->params order); outputs are written in
/// place. Throws std::runtime_error on an out-of-bounds access or an unsupported node.
/// `shape_values` binds f->shape_vars (dynamic shapes), in order.
void RunPrimFunc(const PrimFunc& f, const std::vector<std::vector<double>*>& args,
                 const std::vector<int64_t>& shape_values = {});

/// RunPrimFunc on float32 arrays (each must hold params[i].NumElements() floats).
void RunFlat(const PrimFunc& func, const std::vector<std::vector<float>*>& args);

/// Runs `flat` on seeded uniform [-1, 1) data for every parameter of `signature` (same params
/// as flat's) and returns every parameter's final contents.
std::vector<std::vector<float>> RunFlatOnRandomInputs(const PrimFunc& flat, const PrimFunc& signature,
                                                      unsigned seed = 11);

/// Seeded uniform [-1, 1) contents for every parameter of f (outputs too; they are overwritten),
/// rounded to float for float32 parameters.
std::vector<std::vector<double>> RandomArgs(const PrimFunc& f, unsigned seed = 7);

/// Max abs difference between every parameter of a and b run on the same RandomArgs (infinity
/// when either result has a NaN): a scheduled function against its unscheduled form.
double MaxDiff(const PrimFunc& a, const PrimFunc& b, unsigned seed = 7);

/// MaxDiff after lowering both (transform::LowerToFlat).
double LoweredMaxDiff(const PrimFunc& a, const PrimFunc& b, unsigned seed = 7);

}  // namespace tessera::tir::testing
