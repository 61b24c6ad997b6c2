// LowerToFlat: the standard TensorIR lowering pipeline, from a scheduled PrimFunc (blocks,
// annotated loops) to the flat form codegen consumes (verify_flat.h). Each step is a pass on the
// shared pass infrastructure (pass.h), so the driver's PassContext dumps and times every one:
//
//   pass                     opt_level  what it does
//   LowerStorageTypeCasts    required   casts to / from storage-only types -> bit arithmetic
//   CompactBufferAllocation  required   intermediate buffers shrink to the region used
//   LowerInitBlock           required   a reduction's init -> a guarded store
//   LowerBlocks              required   blocks -> loops and statements
//   FlattenBuffer            required   N-D buffer accesses -> 1-D
//   Simplify                 required   arithmetic simplification, trivial loops removed
//   LoopPartition            1          loops with a predicate split into body + tail
//   Simplify                 required
//   VectorizeLoop            required   `vectorize` loops -> vector expressions (or serial)
//   UnrollLoop               required   `unroll` loops -> copies of their body
//   Simplify                 required
//   RemoveNoOp               1          empty loops and no-op stores removed
//   VerifyFlat               required   checks the form (InternalError naming the function)
#pragma once

#include "tessera/tir/function.h"
#include "tessera/tir/transform/pass.h"

namespace tessera::tir::transform {

/// The pipeline above, in order.
Sequential LowerToFlatPasses();

/// Runs LowerToFlatPasses() on every function of `mod` under `ctx` (its opt_level, disabled
/// passes and instruments).
IRModule LowerToFlat(const IRModule& mod, const PassContext& ctx);

/// One function through the pipeline under a default PassContext (opt_level 3, no instruments).
/// Returns the flat PrimFunc that VerifyFlat accepts.
PrimFunc LowerToFlat(const PrimFunc& func);

}  // namespace tessera::tir::transform
