// Scalar conversions of the storage-only float formats: see include/tessera/runtime/float_formats.h.
#include "tessera/runtime/float_formats.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "tessera/support/error.h"

namespace tessera::runtime {
namespace {

using NaN = FloatFormat::NaN;

uint32_t MantMask(const FloatFormat& f) { return (1u << f.mant_bits) - 1; }
uint32_t ExpAllOnes(const FloatFormat& f) { return (1u << f.exp_bits) - 1; }

uint32_t EncodeE8M0(double value, bool saturate, RoundMode mode) {
  // onnx.numpy_helper.to_float8e8m0: the float32 exponent field, rounded by `mode`.
  float x = static_cast<float>(value);
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  uint32_t exponent = (bits >> 23) & 0xFF;
  if (exponent == 0xFF) return 0xFF;
  bool round_up = false;
  if (mode == RoundMode::kUp) {
    round_up = (bits & 0x7FFFFF) != 0;
  } else if (mode == RoundMode::kNearest) {
    bool g = bits & 0x400000, r = bits & 0x200000, s = bits & 0x1FFFFF, lsb = exponent > 0;
    round_up = g && (r || s || lsb);
  }
  if (round_up && saturate && exponent == 0xFE) round_up = false;
  return (exponent + (round_up ? 1 : 0)) & 0xFF;
}

template <typename T>
T Read(const void* data, int64_t i) {
  T v;
  std::memcpy(&v, static_cast<const char*>(data) + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}

template <typename T>
void Write(void* data, int64_t i, T v) {
  std::memcpy(static_cast<char*>(data) + i * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
}

/// `value` wrapped to `bits` and sign- (is_signed) or zero-extended back to 64 bits.
int64_t WrapToBits(uint64_t value, int bits, bool is_signed) {
  if (bits >= 64) return static_cast<int64_t>(value);
  uint64_t mask = (uint64_t{1} << bits) - 1;
  value &= mask;
  if (is_signed && (value >> (bits - 1)) & 1) value |= ~mask;
  return static_cast<int64_t>(value);
}

/// C conversion of a double to an integer of any width: truncation, then wrapping; NaN, inf
/// and values beyond int64 give 0 (C leaves them undefined; ml_dtypes gives 0 too).
int64_t DoubleToInt64(double v) {
  if (!std::isfinite(v) || std::fabs(v) >= 9.2233720368547758e18) return 0;
  return static_cast<int64_t>(v);
}

}  // namespace

uint32_t FloatFormat::MaxCode() const {
  switch (nan) {
    case NaN::kIeee: return ((ExpAllOnes(*this) - 1) << mant_bits) | MantMask(*this);
    case NaN::kAllOnes: return (ExpAllOnes(*this) << mant_bits) | (MantMask(*this) - 1);
    case NaN::kNegativeZero:
    case NaN::kNone: return (ExpAllOnes(*this) << mant_bits) | MantMask(*this);
  }
  return 0;
}

uint32_t FloatFormat::NaNCode() const {
  switch (nan) {
    case NaN::kIeee: return (ExpAllOnes(*this) << mant_bits) | (1u << (mant_bits - 1));
    case NaN::kAllOnes: return (ExpAllOnes(*this) << mant_bits) | MantMask(*this);
    case NaN::kNegativeZero:
    case NaN::kNone: return 1u << (bits - 1);
  }
  return 0;
}

FloatFormat FormatOf(DataType t) {
  switch (t.code()) {
    case DataType::kFloat:
      if (t.bits() == 16) return {16, 5, 10, 15, true, NaN::kIeee};
      break;
    case DataType::kBFloat: return {16, 8, 7, 127, true, NaN::kIeee};
    case DataType::kFloat8E4M3FN: return {8, 4, 3, 7, false, NaN::kAllOnes};
    case DataType::kFloat8E4M3FNUZ: return {8, 4, 3, 8, false, NaN::kNegativeZero};
    case DataType::kFloat8E5M2: return {8, 5, 2, 15, true, NaN::kIeee};
    case DataType::kFloat8E5M2FNUZ: return {8, 5, 2, 16, false, NaN::kNegativeZero};
    case DataType::kFloat4E2M1FN: return {4, 2, 1, 1, false, NaN::kNone};
    default: break;
  }
  TESSERA_THROW(InternalError, "FormatOf: ", t.str(), " is not a storage-only float format with a mantissa");
}

double DecodeFloat(DataType t, uint32_t bits) {
  if (t.code() == DataType::kFloat8E8M0FNU) {
    bits &= 0xFF;
    return bits == 0xFF ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(1.0, static_cast<int>(bits) - 127);
  }
  const FloatFormat f = FormatOf(t);
  bits &= (f.bits == 32 ? ~0u : (1u << f.bits) - 1);
  const bool negative = (bits >> (f.bits - 1)) & 1;
  const uint32_t e = (bits >> f.mant_bits) & ExpAllOnes(f);
  const uint32_t m = bits & MantMask(f);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  switch (f.nan) {
    case NaN::kIeee:
      if (e == ExpAllOnes(f)) return m ? nan : (negative ? -HUGE_VAL : HUGE_VAL);
      break;
    case NaN::kAllOnes:
      if (e == ExpAllOnes(f) && m == MantMask(f)) return nan;
      break;
    case NaN::kNegativeZero:
      if (bits == (1u << (f.bits - 1))) return nan;
      break;
    case NaN::kNone: break;
  }
  double v = e == 0 ? std::ldexp(static_cast<double>(m), 1 - f.bias - f.mant_bits)
                    : std::ldexp(static_cast<double>(m + (1u << f.mant_bits)), static_cast<int>(e) - f.bias - f.mant_bits);
  return negative ? -v : v;
}

uint32_t EncodeFloat(DataType t, double value, bool saturate, RoundMode mode) {
  if (t.code() == DataType::kFloat8E8M0FNU) return EncodeE8M0(value, saturate, mode);
  const FloatFormat f = FormatOf(t);
  const bool may_saturate = t.is_minifloat();  // Cast's `saturate` applies to float8 only
  const uint32_t sign = std::signbit(value) ? 1u << (f.bits - 1) : 0;
  if (std::isnan(value)) return f.nan == NaN::kAllOnes || f.nan == NaN::kIeee ? (f.NaNCode() | sign) : f.NaNCode();
  auto overflow = [&]() -> uint32_t {
    if ((saturate && may_saturate) || f.nan == NaN::kNone) return sign | f.MaxCode();
    if (f.has_inf) return sign | (ExpAllOnes(f) << f.mant_bits);
    return f.nan == NaN::kAllOnes ? (sign | f.NaNCode()) : f.NaNCode();
  };
  const double a = std::fabs(value);
  if (std::isinf(a)) return overflow();
  const int emin = 1 - f.bias;  // exponent of the smallest normal
  int e = 0;
  std::frexp(a, &e);
  // Round to the format's quantum at this magnitude (subnormal quantum below emin), ties to
  // even: nearbyint under the default rounding mode. Scaling by powers of two is exact.
  const int quantum_exp = std::max(e - 1, emin) - f.mant_bits;
  const double r = std::nearbyint(std::ldexp(a, -quantum_exp));
  const double rounded = std::ldexp(r, quantum_exp);
  if (rounded > DecodeFloat(t, f.MaxCode())) return overflow();
  if (r == 0) return f.nan == NaN::kNegativeZero ? 0 : sign;
  std::frexp(rounded, &e);
  if (e - 1 < emin) return sign | static_cast<uint32_t>(r);  // subnormal: r < 2^mant_bits
  const uint32_t mant = static_cast<uint32_t>(std::ldexp(rounded, f.mant_bits - (e - 1))) - (1u << f.mant_bits);
  return sign | (static_cast<uint32_t>(e - 1 + f.bias) << f.mant_bits) | mant;
}

double LoadAsDouble(const void* data, int64_t i, DataType t) {
  TESSERA_CHECK(t.is_scalar() && !t.is_handle() && !t.is_void(), "cannot read a ", t.str(), " element as a number");
  if (t.is_bool()) return Read<uint8_t>(data, i) != 0;
  if (t.is_float() && t.bits() == 32) return Read<float>(data, i);
  if (t.is_float() && t.bits() == 64) return Read<double>(data, i);
  if (t.is_storage_only() && !t.is_int() && !t.is_uint()) {
    uint32_t code = t.bits() == 16 ? Read<uint16_t>(data, i) : Read<uint8_t>(data, i);
    return DecodeFloat(t, code);
  }
  return static_cast<double>(LoadAsInt64(data, i, t));
}

int64_t LoadAsInt64(const void* data, int64_t i, DataType t) {
  TESSERA_CHECK(t.is_scalar() && !t.is_handle() && !t.is_void(), "cannot read a ", t.str(), " element as a number");
  if (t.is_bool()) return Read<uint8_t>(data, i) != 0;
  if (t.is_int() || t.is_uint()) {
    const bool s = t.is_int();
    switch (t.bytes()) {
      case 1: return WrapToBits(s ? uint64_t(int64_t(Read<int8_t>(data, i))) : Read<uint8_t>(data, i), t.bits(), s);
      // Each branch converts to int64 itself: `s ? int32 : uint32` would be a uint32 (-2 read as 2^32 - 2).
      case 2: return s ? int64_t{Read<int16_t>(data, i)} : int64_t{Read<uint16_t>(data, i)};
      case 4: return s ? int64_t{Read<int32_t>(data, i)} : int64_t{Read<uint32_t>(data, i)};
      case 8: return s ? Read<int64_t>(data, i) : static_cast<int64_t>(Read<uint64_t>(data, i));
      default: break;
    }
    TESSERA_THROW(UnsupportedError, "cannot read a ", t.str(), " element");
  }
  return DoubleToInt64(LoadAsDouble(data, i, t));
}

void StoreFromDouble(void* data, int64_t i, DataType t, double value) {
  TESSERA_CHECK(t.is_scalar() && !t.is_handle() && !t.is_void(), "cannot store a number as a ", t.str(), " element");
  if (t.is_bool()) return Write<uint8_t>(data, i, value != 0 ? 1 : 0);
  if (t.is_float() && t.bits() == 32) return Write<float>(data, i, static_cast<float>(value));
  if (t.is_float() && t.bits() == 64) return Write<double>(data, i, value);
  if (t.is_storage_only() && !t.is_int() && !t.is_uint()) {
    uint32_t code = EncodeFloat(t, value);
    if (t.bits() == 16) return Write<uint16_t>(data, i, static_cast<uint16_t>(code));
    return Write<uint8_t>(data, i, static_cast<uint8_t>(code));
  }
  StoreFromInt64(data, i, t, DoubleToInt64(value));
}

void StoreFromInt64(void* data, int64_t i, DataType t, int64_t value) {
  TESSERA_CHECK(t.is_scalar() && !t.is_handle() && !t.is_void(), "cannot store a number as a ", t.str(), " element");
  if (t.is_bool()) return Write<uint8_t>(data, i, value != 0 ? 1 : 0);
  if (!t.is_int() && !t.is_uint()) return StoreFromDouble(data, i, t, static_cast<double>(value));
  const int64_t w = WrapToBits(static_cast<uint64_t>(value), t.bits(), t.is_int());
  switch (t.bytes()) {
    case 1: return Write<uint8_t>(data, i, static_cast<uint8_t>(w));
    case 2: return Write<uint16_t>(data, i, static_cast<uint16_t>(w));
    case 4: return Write<uint32_t>(data, i, static_cast<uint32_t>(w));
    case 8: return Write<uint64_t>(data, i, static_cast<uint64_t>(w));
    default: break;
  }
  TESSERA_THROW(UnsupportedError, "cannot store a ", t.str(), " element");
}

}  // namespace tessera::runtime
