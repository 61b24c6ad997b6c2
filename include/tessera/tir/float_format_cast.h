// Conversions to and from the storage-only element types (runtime/data_type.h) as integer
// arithmetic on their bits: the TensorIR counterpart of runtime/float_formats.h, with the same
// semantics (ONNX Cast, ml_dtypes; see that header), which the tests check it against.
//
// Which casts are rewritten (NeedsSoftwareCast): any cast from or to bfloat16 or a float8 /
// float4 format; float64 <-> float16 and integer <-> float16 (LLVM lowers these to libcalls
// on x86 without AVX-512 FP16); float -> a 4- or 2-bit integer (truncated toward zero, then
// wrapped, as ml_dtypes; NaN and inf give 0). float32 <-> float16 stays a plain Cast (F16C's
// vcvtps2ph / vcvtph2ps, AArch64's fcvt).
//
// Algorithm (encode): the magnitude is rounded to the format's quantum at its exponent (the
// subnormal quantum below the smallest normal exponent) by round-half-to-even of a scaled
// value, exact because the scale is a power of two; the code is then
// ((max(E, emin) - emin) << mant_bits) + rounded, in which a carry of the rounding moves into
// the exponent by itself. bfloat16 from float32 rounds the top 16 bits of the float32 (the
// usual "add 0x7FFF plus the lsb" round to nearest even); float8_e8m0 takes the float32
// exponent field (onnx.numpy_helper.to_float8e8m0).
#pragma once

#include "tessera/ir/expr.h"
#include "tessera/runtime/float_formats.h"

namespace tessera::tir {

struct FloatCastOptions {
  /// ONNX Cast `saturate` (float8 destinations only): out-of-range values and inf become
  /// +-max instead of inf / NaN.
  bool saturate = true;
  /// ONNX Cast-24 `round_mode`, float8_e8m0fnu destinations only.
  runtime::RoundMode round_mode = runtime::RoundMode::kUp;
};

/// True when a cast from `from` to `to` (scalar element types) must be built by
/// CastStorageType instead of a plain Cast.
bool NeedsSoftwareCast(DataType from, DataType to);

/// `value` converted to `to` (same lanes). Equal to ir::cast when !NeedsSoftwareCast.
ir::PrimExpr CastStorageType(DataType to, const ir::PrimExpr& value, const FloatCastOptions& options = {});

}  // namespace tessera::tir
