// LowerBlocks: removes every Block / BlockRealize (TVM's ConvertBlocksToOpaque +
// LowerOpaqueBlock in one pass). Block iter vars are replaced by their bound iter
// values, a predicate other than `true` becomes an IfThenElse around the body, and
// alloc_buffers become Allocate statements around it. A remaining `init` is lowered
// first exactly as LowerInitBlock does. Reads / writes regions are dropped.
#pragma once

#include "tessera/tir/function.h"

namespace tessera::tir::transform {

PrimFunc LowerBlocks(const PrimFunc& func);

}  // namespace tessera::tir::transform
