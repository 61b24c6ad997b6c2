// The arithmetic analyzer: simplification and constant integer bounds of PrimExpr.
//
// Follows the ideas of TVM's arith::Analyzer (rewrite + canonical simplifier and
// ConstIntBound), in a smaller form:
//  * Simplify: constant folding; integer expressions are put in a canonical linear
//    form (sum of coefficient * term, like terms collected, constant last:
//    `i * 128 + j + 1`); x * 1, x + 0, x * 0 (integers); floordiv / floormod of
//    (q * c + r) by a constant c > 0, which is exact, and then 0 / r when the known
//    bounds of r lie in [0, c); floordiv(x, c) * c + floormod(x, c) -> x;
//    truncdiv / truncmod like floordiv / floormod when both sides are provably
//    non-negative; min / max decided by the bounds of a - b; integer comparisons
//    decided by the bounds of a - b; logic with constant operands; select with a
//    constant condition or equal branches; Ramp / Broadcast arithmetic combined
//    (ramp(a, s, n) + broadcast(b, n) -> ramp(a + b, s, n)); floordiv / floormod of
//    ramp(a, s, n) by a constant c whose lanes stay in one period of c (g = gcd of c
//    and a's coefficients, (a's constant mod g) + s * (n - 1) < g) -> broadcast(a // c, n)
//    / ramp(a % c, s, n): contiguous loads instead of gathers. Floating-point
//    expressions are only folded when constant and x + 0.0 / x * 1.0 removed: no
//    reassociation. BufferLoad, Call and te's Reduce are opaque terms.
//  * ConstIntBound: an interval [min_value, max_value] containing every value of an
//    integer expression, given the ranges of bound variables (Bind). Unbounded
//    sides are kNegInf / kPosInf. Unknown variables take their dtype's range.
// The analyzer never throws on well-formed input; it returns its input unchanged
// (up to folding) when it cannot prove anything.
#pragma once

#include <cstdint>
#include <limits>
#include <map>

#include "tessera/ir/expr.h"

namespace tessera::arith {

using ir::PrimExpr;
using ir::Range;
using ir::Var;

/// A closed interval of int64 values; kNegInf / kPosInf stand for unbounded.
struct IntBound {
  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();
  static constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
  int64_t min_value = kNegInf;
  int64_t max_value = kPosInf;
  bool is_const() const { return min_value == max_value; }
};

class Analyzer {
 public:
  /// Declares var in [range.min, range.min + range.extent). Rebinding replaces the range.
  void Bind(const Var& var, const Range& range);
  /// Declares var in the closed interval [min_value, max_value].
  void Bind(const Var& var, int64_t min_value, int64_t max_value);
  /// Forgets what Bind said about var.
  void Unbind(const Var& var);

  /// The simplified expression (same dtype); see the rules at the top of this file.
  PrimExpr Simplify(const PrimExpr& e);
  /// Bounds of an integer (or bool) expression; the full int64 range for other dtypes.
  IntBound ConstIntBound(const PrimExpr& e);
  /// True when e >= lower holds for every value of the bound variables.
  bool CanProveGreaterEqual(const PrimExpr& e, int64_t lower);
  /// True when the boolean cond simplifies to true.
  bool CanProve(const PrimExpr& cond);

 private:
  friend class Simplifier;
  std::map<const ir::VarNode*, IntBound> var_bounds_;
};

}  // namespace tessera::arith
