// Storage-type conversions as integer arithmetic: see include/tessera/tir/float_format_cast.h.
#include "tessera/tir/float_format_cast.h"

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "tessera/ir/op.h"
#include "tessera/support/error.h"

namespace tessera::tir {
namespace {

using ir::PrimExpr;
using runtime::FloatFormat;
using NaN = FloatFormat::NaN;

bool IsSoftFloat(DataType t) { return t.is_bfloat16() || t.is_minifloat(); }
bool IsNarrowInt(DataType t) { return (t.is_int() || t.is_uint()) && t.bits() < 8; }
bool IsF16(DataType t) { return t.is_float() && t.bits() == 16; }
bool IsF64(DataType t) { return t.is_float() && t.bits() == 64; }

/// Builds expressions of the lanes of one value. Values used more than once are bound to Let
/// variables (Bind), so that the expression stays a DAG of linear size instead of a tree that
/// doubles at every select (LowerToFlat took seconds on the unbound form).
struct Builder {
  int lanes;
  mutable std::vector<std::pair<ir::Var, PrimExpr>> lets;
  PrimExpr Bind(const char* name, PrimExpr v) const {
    ir::Var var(std::string("cvt_") + name, v.dtype());
    lets.emplace_back(var, std::move(v));
    return var;
  }
  /// `body` inside every binding made so far (innermost last).
  PrimExpr Wrap(PrimExpr body) const {
    for (auto l = lets.rbegin(); l != lets.rend(); ++l) body = ir::LetNode::make(l->first, l->second, body);
    lets.clear();
    return body;
  }
  PrimExpr K(DataType t, int64_t v) const { return ir::make_const(t.with_lanes(lanes), v); }
  PrimExpr KF(DataType t, double v) const { return ir::make_const(t.with_lanes(lanes), v); }
  DataType T(DataType t) const { return t.with_lanes(lanes); }
  PrimExpr Shr(const PrimExpr& a, int64_t n) const { return ir::shift_right(a, K(a.dtype(), n)); }
  PrimExpr Shl(const PrimExpr& a, int64_t n) const { return ir::shift_left(a, K(a.dtype(), n)); }
  PrimExpr And(const PrimExpr& a, int64_t m) const { return ir::bitwise_and(a, K(a.dtype(), m)); }
  PrimExpr Or(const PrimExpr& a, const PrimExpr& b) const { return ir::bitwise_or(a, b); }
  PrimExpr Or(const PrimExpr& a, int64_t m) const { return ir::bitwise_or(a, K(a.dtype(), m)); }
  /// The code `c` (uint32) of `to`'s width, reinterpreted as `to`.
  PrimExpr AsCode(DataType to, const PrimExpr& c) const {
    return ir::reinterpret(T(to), ir::cast(T(DataType::UInt(to.bits())), c));
  }
  /// The bits of a storage-type value x, zero-extended to uint32.
  PrimExpr CodeOf(const PrimExpr& x) const {
    return ir::cast(T(DataType::UInt(32)), ir::reinterpret(T(DataType::UInt(x.dtype().bits())), x));
  }
};

// ---- encode: float32 / float64 source -> storage float --------------------------------------

/// bfloat16 from float32: round to nearest even on the top 16 bits; NaN kept quiet.
PrimExpr EncodeBF16FromF32(const Builder& b, const PrimExpr& x) {
  DataType u32 = DataType::UInt(32);
  PrimExpr u = b.Bind("u", ir::reinterpret(b.T(u32), x));
  PrimExpr is_nan = b.And(u, 0x7FFFFFFF) > b.K(u32, 0x7F800000);
  PrimExpr rounded = b.Shr(u + b.K(u32, 0x7FFF) + b.And(b.Shr(u, 16), 1), 16);
  PrimExpr quiet = b.Or(b.Shr(u, 16), b.K(u32, 0x40));
  return b.AsCode(DataType::BFloat16(), ir::select(is_nan, quiet, rounded));
}

/// float8_e8m0fnu from float32 (onnx.numpy_helper.to_float8e8m0).
PrimExpr EncodeE8M0(const Builder& b, const PrimExpr& x32, const FloatCastOptions& o) {
  DataType u32 = DataType::UInt(32);
  PrimExpr u = b.Bind("u", ir::reinterpret(b.T(u32), x32));
  PrimExpr e = b.Bind("e", b.And(b.Shr(u, 23), 0xFF));
  PrimExpr up;
  switch (o.round_mode) {
    case runtime::RoundMode::kUp: up = b.And(u, 0x7FFFFF) != b.K(u32, 0); break;
    case runtime::RoundMode::kDown: up = ir::make_const(DataType::Bool(b.lanes), int64_t{0}); break;
    case runtime::RoundMode::kNearest: {
      PrimExpr g = b.And(u, 0x400000) != b.K(u32, 0);
      PrimExpr rs = b.And(u, 0x3FFFFF) != b.K(u32, 0);
      up = g && (rs || e > b.K(u32, 0));
      break;
    }
  }
  if (o.saturate) up = up && e != b.K(u32, 0xFE);
  up = b.Bind("up", up);
  PrimExpr code = e + ir::select(up, b.K(u32, 1), b.K(u32, 0));
  return b.AsCode(DataType::Float8E8M0FNU(), ir::select(e == b.K(u32, 0xFF), b.K(u32, 0xFF), b.And(code, 0xFF)));
}

/// Any format with a mantissa (float16, bfloat16, float8, float4) from a float32 / float64 x.
PrimExpr EncodeGeneric(const Builder& b, DataType to, const PrimExpr& x, bool saturate) {
  const FloatFormat f = runtime::FormatOf(to);
  const DataType s = x.dtype().element_of();
  const int sbits = s.bits(), smant = sbits == 64 ? 52 : 23, sbias = sbits == 64 ? 1023 : 127;
  const DataType us = DataType::UInt(sbits), i32 = DataType::Int(32), u32 = DataType::UInt(32);
  const int emin = 1 - f.bias;
  const double max_value = runtime::DecodeFloat(to, f.MaxCode());
  const int emax = static_cast<int>(std::ilogb(max_value));
  const int64_t exp_all_ones = sbits == 64 ? 0x7FF : 0xFF;

  PrimExpr u = b.Bind("u", ir::reinterpret(b.T(us), x));
  PrimExpr au = b.Bind("au", b.And(u, sbits == 64 ? std::numeric_limits<int64_t>::max() : 0x7FFFFFFF));
  PrimExpr negative = b.Shr(u, sbits - 1) != b.K(us, 0);
  PrimExpr is_nan = au > b.K(us, exp_all_ones << smant);
  PrimExpr is_inf = au == b.K(us, exp_all_ones << smant);
  // |x| clamped so that the scaled value below stays a small integer; what is clamped
  // overflows anyway. (NaN is replaced too, and handled by its own select.)
  PrimExpr a = ir::reinterpret(b.T(s), au);
  PrimExpr limit = b.KF(s, std::ldexp(1.0, emax + 2));
  a = b.Bind("a", ir::select(a < limit, a, limit));
  PrimExpr e = ir::cast(b.T(i32), b.Shr(ir::reinterpret(b.T(us), a), smant)) - b.K(i32, sbias);
  PrimExpr eq = b.Bind("eq", ir::max(e, b.K(i32, emin)) - b.K(i32, f.mant_bits));  // exponent of the quantum
  auto pow2 = [&](const PrimExpr& n) {  // 2^n as the source type; n + sbias is in [1, 2 sbias]
    return ir::reinterpret(b.T(s), ir::shift_left(ir::cast(b.T(us), n + b.K(i32, sbias)), b.K(us, smant)));
  };
  PrimExpr r = b.Bind("r", ir::round(a * pow2(b.K(i32, 0) - eq)));  // ties to even
  PrimExpr over = is_inf || r * pow2(eq) > b.KF(s, max_value);
  PrimExpr mag = b.Bind("mag", ir::shift_left(ir::cast(b.T(u32), eq - b.K(i32, emin - f.mant_bits)), b.K(u32, f.mant_bits)) +
                 ir::cast(b.T(u32), r));
  const int64_t sign_bit = int64_t{1} << (f.bits - 1);
  PrimExpr sign = b.Bind("sign", ir::select(negative, b.K(u32, sign_bit), b.K(u32, 0)));
  PrimExpr nan_code = f.nan == NaN::kIeee || f.nan == NaN::kAllOnes ? b.Or(sign, f.NaNCode()) : b.K(u32, f.NaNCode());
  PrimExpr over_code;
  if ((saturate && to.is_minifloat()) || f.nan == NaN::kNone) {
    over_code = b.Or(sign, f.MaxCode());
  } else if (f.has_inf) {
    over_code = b.Or(sign, ((int64_t{1} << f.exp_bits) - 1) << f.mant_bits);
  } else {
    over_code = nan_code;
  }
  PrimExpr zero_code = f.nan == NaN::kNegativeZero ? b.K(u32, 0) : sign;
  PrimExpr code = ir::select(mag == b.K(u32, 0), zero_code, b.Or(sign, mag));
  code = ir::select(over, over_code, code);
  code = ir::select(is_nan, nan_code, code);
  return b.AsCode(to, code);
}

// ---- decode: storage float -> float32 -------------------------------------------------------

PrimExpr Decode(const Builder& b, const PrimExpr& x) {
  const DataType t = x.dtype().element_of(), f32 = DataType::Float(32), u32 = DataType::UInt(32);
  PrimExpr c = b.Bind("c", b.CodeOf(x));
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  if (t.is_bfloat16()) return ir::reinterpret(b.T(f32), b.Shl(c, 16));
  if (t.code() == DataType::kFloat8E8M0FNU) {
    PrimExpr v = ir::reinterpret(b.T(f32), b.Shl(c, 23));
    v = ir::select(c == b.K(u32, 0), b.KF(f32, std::ldexp(1.0, -127)), v);
    return ir::select(c == b.K(u32, 0xFF), b.KF(f32, nan), v);
  }
  const FloatFormat f = runtime::FormatOf(t);
  const int64_t emask = (int64_t{1} << f.exp_bits) - 1, mmask = (int64_t{1} << f.mant_bits) - 1;
  const int emin = 1 - f.bias;
  PrimExpr negative = b.Bind("neg", b.And(b.Shr(c, f.bits - 1), 1) != b.K(u32, 0));
  PrimExpr e = b.Bind("e", b.And(b.Shr(c, f.mant_bits), emask));
  PrimExpr m = b.Bind("m", b.And(c, mmask));
  PrimExpr normal = b.Or(b.Or(b.Shl(b.And(b.Shr(c, f.bits - 1), 1), 31), b.Shl(e + b.K(u32, 127 - f.bias), 23)),
                         b.Shl(m, 23 - f.mant_bits));
  PrimExpr sub = b.Bind("sub", ir::cast(b.T(f32), m) * b.KF(f32, std::ldexp(1.0, emin - f.mant_bits)));
  PrimExpr v = b.Bind("v", ir::select(e == b.K(u32, 0), ir::select(negative, sub * b.KF(f32, -1.0), sub),
                                      ir::reinterpret(b.T(f32), normal)));
  switch (f.nan) {
    case NaN::kIeee:
      return ir::select(e == b.K(u32, emask),
                        ir::select(m == b.K(u32, 0), ir::select(negative, b.KF(f32, -inf), b.KF(f32, inf)),
                                   b.KF(f32, nan)),
                        v);
    case NaN::kAllOnes:
      return ir::select(b.And(c, (int64_t{1} << (f.bits - 1)) - 1) == b.K(u32, (emask << f.mant_bits) | mmask),
                        b.KF(f32, nan), v);
    case NaN::kNegativeZero: return ir::select(c == b.K(u32, int64_t{1} << (f.bits - 1)), b.KF(f32, nan), v);
    case NaN::kNone: return v;
  }
  return v;
}

}  // namespace

bool NeedsSoftwareCast(DataType from, DataType to) {
  from = from.element_of();
  to = to.element_of();
  if (from == to) return false;
  if (IsSoftFloat(from) || IsSoftFloat(to)) return true;
  if ((IsF16(from) && !(to.is_float() && to.bits() == 32)) || (IsF16(to) && !(from.is_float() && from.bits() == 32)))
    return true;
  return IsNarrowInt(to) && from.is_floating();
}

ir::PrimExpr CastStorageType(DataType to, const ir::PrimExpr& value, const FloatCastOptions& options) {
  const DataType from = value.dtype().element_of();
  const Builder b{value.dtype().lanes()};
  to = to.element_of();
  if (!NeedsSoftwareCast(from, to)) return ir::cast(b.T(to), value);
  const DataType f32 = DataType::Float(32), f64 = DataType::Float(64);
  // 1. The source as float32 / float64 (exactly, except a float64 for e8m0, as ONNX).
  PrimExpr x = value;
  if (IsSoftFloat(from)) x = Decode(b, value);
  else if (IsF16(from)) x = ir::cast(b.T(f32), value);
  else if (!from.is_float()) x = ir::cast(b.T(f64), value);  // ints and bool: exact below 2^53
  x = b.Bind("x", x);
  const DataType src = x.dtype().element_of();
  // 2. To the destination.
  if (IsNarrowInt(to)) {
    PrimExpr in_range = ir::fabs(x) < b.KF(src, 2147483648.0);  // false for NaN and inf
    return b.Wrap(ir::cast(b.T(to), ir::cast(b.T(DataType::Int(32)), ir::select(in_range, x, b.KF(src, 0.0)))));
  }
  if (!IsSoftFloat(to) && !IsF16(to)) return b.Wrap(ir::cast(b.T(to), x));
  if (to.code() == DataType::kFloat8E8M0FNU) return b.Wrap(EncodeE8M0(b, ir::cast(b.T(f32), x), options));
  if (to.is_bfloat16() && src == f32) return b.Wrap(EncodeBF16FromF32(b, x));
  if (IsF16(to) && src == f32) return b.Wrap(ir::cast(b.T(to), x));
  return b.Wrap(EncodeGeneric(b, to, x, options.saturate));
}

}  // namespace tessera::tir
