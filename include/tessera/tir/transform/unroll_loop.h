// UnrollLoop: a For of kind unrolled with constant extent n becomes a SeqStmt of n copies
// of its body with the loop var replaced by min + 0, ..., min + n - 1 (inner unrolled
// loops first). Loops, lets and allocations inside the body get fresh variables in every
// copy after the first (flat TIR defines each variable once). An unrolled loop of symbolic
// extent (dynamic shapes) stays a loop marked unrolled: codegen gives it LLVM's
// llvm.loop.unroll.enable.
#pragma once

#include "tessera/tir/function.h"

namespace tessera::tir::transform {

PrimFunc UnrollLoop(const PrimFunc& func);

}  // namespace tessera::tir::transform
