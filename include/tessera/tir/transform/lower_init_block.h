// LowerInitBlock: moves a block's `init` into its body as
//   if (every reduction iter var == its domain min) init;  body
// (unconditionally first when the block has no reduction iter var). Blocks stay.
// First pass of the lowering pipeline (see verify_flat.h for the full order).
#pragma once

#include "tessera/tir/function.h"

namespace tessera::tir::transform {

PrimFunc LowerInitBlock(const PrimFunc& func);

}  // namespace tessera::tir::transform
