// UnrollLoop: a For of kind unrolled with constant extent n becomes a SeqStmt of n copies
// of its body with the loop var replaced by min + 0, ..., min + n - 1 (inner unrolled
// loops first). Throws InternalError for an unrolled loop of non-constant extent.
#pragma once

#include "tessera/tir/function.h"

namespace tessera::tir::transform {

PrimFunc UnrollLoop(const PrimFunc& func);

}  // namespace tessera::tir::transform
