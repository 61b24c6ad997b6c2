// RemoveNoOp: removes statements without effect: Evaluate of a pure expression,
// stores of a location into itself (A[i] = A[i]), loops and ifs whose bodies are
// no-ops, loops of constant extent <= 0, and empty SeqStmts. A body that becomes
// empty is Evaluate(0).
#pragma once

#include "tessera/tir/function.h"

namespace tessera::tir::transform {

PrimFunc RemoveNoOp(const PrimFunc& func);

}  // namespace tessera::tir::transform
