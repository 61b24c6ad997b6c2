// LowerToFlat: the standard TIR lowering pipeline, as a readable list of passes
// (see verify_flat.h). Returns the flat PrimFunc that VerifyFlat accepts.
#pragma once

#include "tessera/tir/function.h"

namespace tessera::tir::transform {

PrimFunc LowerToFlat(const PrimFunc& func);

}  // namespace tessera::tir::transform
