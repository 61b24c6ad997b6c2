// A reference interpreter of flat PrimFuncs, for tests only: checks lowering
// numerically against hand-written C++ loops before (and independently of) codegen.
//
// Accepts the form VerifyFlat checks (no blocks, 1-d accesses) with float32 buffers;
// integer arithmetic is exact in int64, float32 results are rounded to float after
// every operation, vectors (Ramp / Broadcast / multi-lane loads and stores) are
// evaluated lane by lane. Out-of-bounds accesses throw InternalError.
#pragma once

#include <vector>

#include "tessera/tir/function.h"

namespace tessera::tir::testing {

/// Runs `func` with args[i] as the memory of func->params[i] (each must hold exactly
/// params[i].NumElements() floats). Allocated buffers are zero-initialised.
void RunFlat(const PrimFunc& func, const std::vector<std::vector<float>*>& args);

/// Runs `flat` on seeded uniform [-1, 1) data for every parameter of `signature` (same params
/// as flat's) and returns every parameter's final contents.
std::vector<std::vector<float>> RunFlatOnRandomInputs(const PrimFunc& flat, const PrimFunc& signature,
                                                      unsigned seed = 11);

}  // namespace tessera::tir::testing
