// Interior analysis of select conditions, for LoopPartition (loop_partition.h).
//
// A padded convolution inlines its padding as `select(0 <= y && y < H && ..., data[clamped], 0)`
// with y affine in the loop variables. Over a loop `for v in [m, m + E)` the conjuncts that
// are affine in v and in the loops inside it (constant ranges) hold, for every value of those
// inner loops, on an interval of v: a lower-bound conjunct on a suffix, an upper-bound one on a
// prefix. The bounds may use variables of outer loops (symbolic: the output row of a fused
// parallel loop). Inside that interval the conjuncts are facts; AssumeFacts removes them from
// select conditions and drops the clamps (min / max) that the facts decide.
#pragma once

#include <optional>
#include <vector>

#include "tessera/tir/stmt.h"

namespace tessera::tir::transform::detail {

/// An integer comparison in the normal form `d <= k`.
struct LinearFact {
  PrimExpr d;
  int64_t k = 0;
};

/// a < b, a <= b, a > b, a >= b of signed scalar integers (one dtype) as `d <= k` (a < b: a - b <= -1); nullopt
/// for any other condition.
std::optional<LinearFact> NormalizeComparison(const PrimExpr& cond);

/// The operands of a chain of `&&` (a single condition is its own conjunct).
std::vector<PrimExpr> Conjuncts(const PrimExpr& cond);

/// Where `fact` holds for every value of the loops `inner` (each with a constant min and
/// extent): `v >= bound` (is_lower) or `v < bound`. nullopt when the fact is not affine in v
/// and the inner loop variables with a constant coefficient on v (checked by simplifying the
/// difference of the fact and its affine form), or does not use v.
struct VarBound {
  bool is_lower = false;
  PrimExpr bound;
};
std::optional<VarBound> BoundForAllInner(const LinearFact& fact, const Var& v, const std::vector<const ForNode*>& inner);

/// `s` where every `facts` condition is known to hold: a select's or an `if`'s conjunct
/// structurally equal to a fact becomes true (an `if` left without a condition is its then case), and min(a, b) / max(a, b) whose order a fact decides (a - b differs
/// from the fact's d by a constant) becomes the operand it selects. Run Simplify afterwards.
Stmt AssumeFacts(const Stmt& s, const std::vector<PrimExpr>& facts);

}  // namespace tessera::tir::transform::detail
