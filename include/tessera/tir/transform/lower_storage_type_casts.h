// LowerStorageTypeCasts: every Cast that tir::NeedsSoftwareCast selects (bfloat16, float8,
// float4, float16 <-> float64 / integers, float -> 4- or 2-bit integers) is rewritten into
// integer arithmetic on the storage bits by tir::CastStorageType, with ONNX Cast's defaults
// (saturate, round up for e8m0); computes that need other options build the conversion
// themselves. Runs first in LowerToFlat, so that codegen only sees loads, stores and
// reinterprets of these types (TVM's BF16 / FP8 storage legalization plays the same role).
#pragma once

#include "tessera/tir/function.h"

namespace tessera::tir::transform {

PrimFunc LowerStorageTypeCasts(const PrimFunc& func);

}  // namespace tessera::tir::transform
