// VerifyFlat: checks the form LLVM / C codegen consumes, throwing InternalError that
// names the function and the problem:
//   * no Block / BlockRealize,
//   * every BufferLoad / BufferStore has exactly one index,
//   * no te Reduce node,
//   * every variable is defined before its use (parameter buffers' data vars, loop
//     vars, LetStmt / Let vars, Allocate buffers' data vars) and defined only once.
//
// Lowering pipeline from te::create_prim_func (or a scheduled PrimFunc) to that form:
//   CompactBufferAllocation -> LowerInitBlock -> LowerBlocks -> FlattenBuffer -> Simplify
//   -> LoopPartition -> Simplify -> VectorizeLoop -> UnrollLoop -> Simplify -> RemoveNoOp
//   -> VerifyFlat
// (tir/transform/lower.h runs exactly this list as LowerToFlat.)
#pragma once

#include "tessera/tir/function.h"

namespace tessera::tir::transform {

void VerifyFlat(const PrimFunc& func);

}  // namespace tessera::tir::transform
