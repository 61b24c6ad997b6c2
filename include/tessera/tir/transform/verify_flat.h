// VerifyFlat: checks the form LLVM / C codegen consumes, throwing InternalError that
// names the function and the problem:
//   * no Block / BlockRealize,
//   * every BufferLoad / BufferStore has exactly one index,
//   * no te Reduce node,
//   * every variable is defined before its use (parameter buffers' data vars, loop
//     vars, LetStmt / Let vars, Allocate buffers' data vars) and defined only once.
//
// LowerToFlat (tir/transform/lower.h) runs it last, after the passes that produce the form.
#pragma once

#include "tessera/tir/function.h"

namespace tessera::tir::transform {

void VerifyFlat(const PrimFunc& func);

}  // namespace tessera::tir::transform
