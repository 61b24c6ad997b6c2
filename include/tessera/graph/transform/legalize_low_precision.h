// LegalizeLowPrecision: ops on storage-only element types compute in a wider type.
//
// float16, bfloat16, the float8 / float4 formats and the 4- / 2-bit integers are storage
// types (runtime/data_type.h): kernels load, store and convert them, but do not compute on
// them. For every call whose arguments or result have such a type, except `cast` and
// `reinterpret` (which act on the storage bits):
//   op(x: float16, y: int64) : float16
//     -> cast(op(cast(x, "float32"), y) : float32, "float16")
// Floats compute in float32 (exact for every storage float: each value is a float32); the
// narrow integers in int8 / uint8 (their casts back wrap, as C's). A tuple result is rebuilt
// field by field. Each op thus rounds its result to the storage type, as ONNX Runtime and the
// ONNX reference do for float16; FuseOps then fuses the casts into the neighbouring kernels.
// The remaining casts are lowered to bit arithmetic by tir::transform::LowerStorageTypeCasts.
//
// Runs InferType first; the result is typed.
#pragma once

#include "tessera/graph/module.h"
#include "tessera/graph/transform/pass.h"

namespace tessera::graph::transform {

IRModule LegalizeLowPrecision(const IRModule& mod);
Pass LegalizeLowPrecisionPass();

}  // namespace tessera::graph::transform
