// Builders for PrimExpr: operators and intrinsics, with light type matching.
//
// Binary builders first match the operand dtypes: an integer / float immediate takes
// the other side's dtype (so `i * 4` works for an int64 `i`), and a scalar operand
// is broadcast to the other side's lanes. Mismatched non-constant dtypes throw
// InternalError: insert a Cast. Immediates of the two sides are folded
// (2 + 3 -> 5) so builders do not emit trivially constant trees; everything else
// is left to arith::Simplify.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/ir/expr.h"

namespace tessera::ir {

/// An immediate of dtype t: IntImm for int / uint / bool, FloatImm for float;
/// a vector dtype gives a Broadcast of the scalar immediate.
PrimExpr make_const(DataType t, double value);
PrimExpr make_const(DataType t, int64_t value);
inline PrimExpr make_const(DataType t, int value) { return make_const(t, static_cast<int64_t>(value)); }
PrimExpr make_zero(DataType t);
/// The identity or bounds used by reductions: max_value(float32) = +inf.
PrimExpr max_value(DataType t);
PrimExpr min_value(DataType t);

/// When e is an IntImm (or a Broadcast of one), stores it in *out and returns true.
bool as_const_int(const PrimExpr& e, int64_t* out);
/// The value of an IntImm; throws InternalError otherwise.
int64_t get_const_int(const PrimExpr& e);
bool is_const_int(const PrimExpr& e, int64_t value);
inline bool is_zero(const PrimExpr& e) { return is_const_int(e, 0); }
inline bool is_one(const PrimExpr& e) { return is_const_int(e, 1); }

PrimExpr operator+(PrimExpr a, PrimExpr b);
PrimExpr operator-(PrimExpr a, PrimExpr b);
PrimExpr operator-(PrimExpr a);
PrimExpr operator*(PrimExpr a, PrimExpr b);
/// Float: true division. Int: truncated division (use floordiv for index math).
PrimExpr operator/(PrimExpr a, PrimExpr b);
PrimExpr operator%(PrimExpr a, PrimExpr b);
PrimExpr operator==(PrimExpr a, PrimExpr b);
PrimExpr operator!=(PrimExpr a, PrimExpr b);
PrimExpr operator<(PrimExpr a, PrimExpr b);
PrimExpr operator<=(PrimExpr a, PrimExpr b);
PrimExpr operator>(PrimExpr a, PrimExpr b);
PrimExpr operator>=(PrimExpr a, PrimExpr b);
PrimExpr operator&&(PrimExpr a, PrimExpr b);
PrimExpr operator||(PrimExpr a, PrimExpr b);
PrimExpr operator!(PrimExpr a);

PrimExpr floordiv(PrimExpr a, PrimExpr b);
PrimExpr floormod(PrimExpr a, PrimExpr b);
PrimExpr truncdiv(PrimExpr a, PrimExpr b);
PrimExpr truncmod(PrimExpr a, PrimExpr b);
PrimExpr min(PrimExpr a, PrimExpr b);
PrimExpr max(PrimExpr a, PrimExpr b);
PrimExpr select(PrimExpr cond, PrimExpr true_value, PrimExpr false_value);
/// No-op when value already has dtype t.
PrimExpr cast(DataType t, PrimExpr value);

// Float intrinsics (Call nodes), dtype of the argument.
PrimExpr exp(PrimExpr x);
PrimExpr log(PrimExpr x);
PrimExpr sqrt(PrimExpr x);
PrimExpr rsqrt(PrimExpr x);
PrimExpr tanh(PrimExpr x);
PrimExpr sigmoid(PrimExpr x);
PrimExpr fabs(PrimExpr x);
PrimExpr floor(PrimExpr x);
PrimExpr ceil(PrimExpr x);
PrimExpr round(PrimExpr x);
PrimExpr erf(PrimExpr x);
PrimExpr pow(PrimExpr x, PrimExpr y);

// Integer bit intrinsics (Call nodes), dtype of the first argument; both arguments of one
// integer dtype. shift_left / shift_right by an amount >= the bit width give 0 (LLVM's shl /
// lshr would give poison); shift_right is logical for unsigned and arithmetic for signed types.
PrimExpr bitwise_and(PrimExpr a, PrimExpr b);
PrimExpr bitwise_or(PrimExpr a, PrimExpr b);
PrimExpr bitwise_xor(PrimExpr a, PrimExpr b);
PrimExpr bitwise_not(PrimExpr a);
PrimExpr shift_left(PrimExpr a, PrimExpr b);
PrimExpr shift_right(PrimExpr a, PrimExpr b);

/// The bits of `value` read as dtype t (a Call "reinterpret"; LLVM bitcast): t and value's
/// dtype have the same bits and lanes. Used to reach the bits of float and storage types.
PrimExpr reinterpret(DataType t, PrimExpr value);

/// An index read at run time, checked against the axis it indexes (a Call "checked_index",
/// int64 with the index's lanes): `index` (any integer dtype) in [-extent, extent) gives
/// index + extent when negative, else index (ONNX Gather / GatherElements / GatherND /
/// Scatter* semantics); any other value makes the enclosing kernel return
/// runtime::kKernelIndexOutOfRange (kernel_abi.h), which the graph executor reports as an error
/// naming the node. The call has that effect, so passes keep it where it is (it is evaluated
/// wherever its value is, like every other expression). extent >= 0 (0: every index fails).
PrimExpr checked_index(PrimExpr index, int64_t extent);
/// The same against an extent computed at run time (a shape var: dynamic shapes), >= 0.
PrimExpr checked_index(PrimExpr index, PrimExpr extent);

}  // namespace tessera::ir
