// Scalar conversions between double and the storage-only floating-point formats:
// float16, bfloat16, the float8 family, float8_e8m0fnu and float4_e2m1fn (see data_type.h).
//
// Semantics follow the ONNX Cast operator (onnx/docs/Operators.md "Cast", opsets 19-25) and
// ml_dtypes, which the ONNX reference implementation uses:
//   - rounding is to nearest, ties to even (e8m0: the RoundMode below);
//   - saturate (float8 formats only; Cast's `saturate` attribute, default true): a finite
//     value beyond the largest one, and +-inf, become +-max; without it they become inf
//     where the format has one (e5m2) and NaN otherwise. float4_e2m1fn always saturates
//     (it has neither inf nor NaN) and maps NaN to the code 0x8 (-0), as ml_dtypes does;
//   - the FNUZ formats have no negative zero: -0 and values rounding to -0 give +0;
//   - float8_e8m0fnu keeps only the exponent of |x| (ONNX's to_float8e8m0): zero gives
//     2^-127, inf and NaN give NaN (0xFF).
// These are the reference the TensorIR conversions (tir/float_format_cast.h) are tested
// against; the runtime uses them to read and print tensors and the importer to fold constants.
#pragma once

#include <cstdint>

#include "tessera/runtime/data_type.h"

namespace tessera::runtime {

/// How a value between two powers of two is rounded to float8_e8m0fnu (ONNX Cast-24
/// `round_mode`): "up" (default) rounds any fraction up, "down" truncates, "nearest" rounds
/// to the nearer exponent (as onnx.numpy_helper.to_float8e8m0).
enum class RoundMode { kUp, kDown, kNearest };

/// The parameters of a sign / exponent / mantissa format.
struct FloatFormat {
  int bits;        ///< total width
  int exp_bits;    ///< exponent field width
  int mant_bits;   ///< mantissa field width (no implicit bit)
  int bias;        ///< exponent bias
  bool has_inf;    ///< exponent all ones + mantissa 0 is inf (IEEE-like formats)
  enum class NaN { kIeee, kAllOnes, kNegativeZero, kNone } nan;  ///< how NaN is encoded
  /// The largest finite magnitude's code (sign bit clear).
  uint32_t MaxCode() const;
  /// The NaN code to produce (quiet, sign clear except kNegativeZero's 0x80).
  uint32_t NaNCode() const;
};

/// The format of float16, bfloat16 or a minifloat other than e8m0; throws InternalError otherwise.
FloatFormat FormatOf(DataType t);

/// The value of the code `bits` (the low t.bits() bits) of storage-only float type t.
double DecodeFloat(DataType t, uint32_t bits);
/// The code of `value` in t (see the file comment for rounding and saturation).
uint32_t EncodeFloat(DataType t, double value, bool saturate = true, RoundMode mode = RoundMode::kUp);

/// Element i of a buffer of scalar dtype t, as a double: any int, uint, bool, IEEE float or
/// storage-only float type. Throws UnsupportedError for handles and vectors.
double LoadAsDouble(const void* data, int64_t i, DataType t);
/// Element i as an int64 (integers exactly; floats truncated toward zero, NaN as 0).
int64_t LoadAsInt64(const void* data, int64_t i, DataType t);
/// Stores `value` converted to t (floats rounded as above, ints by C conversion of the
/// truncated value, narrow ints wrapped and sign- or zero-extended into their byte).
void StoreFromDouble(void* data, int64_t i, DataType t, double value);
void StoreFromInt64(void* data, int64_t i, DataType t, int64_t value);

}  // namespace tessera::runtime
