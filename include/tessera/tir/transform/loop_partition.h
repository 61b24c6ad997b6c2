// LoopPartition: split a loop whose body is guarded by conditions that hold on a prefix of its
// iterations into that prefix (the guards proved true and removed by Simplify) and the rest
// (guards kept) — TVM's tir.transform.LoopPartition for the tail of a non-dividing split — and
// a loop whose selects hold on an interior of it (inlined padding) into border and interior.
//
// split(i, factor) with a factor that does not divide the extent gives the block the predicate
// `i_0 * factor + i_1 < extent`; after LowerBlocks it is an `if` around the block's body, inside
// every loop, which keeps the tile from being unrolled and vectorized. For a serial loop L
// (constant min m and extent E) this pass looks at every `if` without else in L's body, takes
// the conjuncts of their conditions that use L's variable and are upper bounds (`a < b`,
// `a <= b`; an equality such as a reduction's `k == 0` init guard is left alone), and finds (binary search with the
// arithmetic analyzer, the loops between L and the `if` bound to their ranges) the largest k
// such that every such conjunct is provably true for L in [m, m + k). When 0 < k < E, L becomes
//   for L in [m, m + k): body        (Simplify then drops the guards)
//   for L' in [m + k, m + E): body'  (a copy with fresh loop / allocation variables)
// Conditions are assumed monotone in L (true on a prefix), as the guards of split are; a k the
// analyzer cannot prove is simply smaller, so the result is always equivalent.
//
// Symbolic loops (dynamic shapes): a serial loop whose min or extent is not constant (the outer
// loop of split(n, {-1, f}) on a symbolic n, extent floordiv(n + f - 1, f)) takes each upper-bound
// guard that is affine in L and the loops between (constant ranges) with a constant coefficient,
// and whose bound uses nothing defined inside L, and computes where it holds for every value of
// those loops: a prefix [m, b) (select_interior.h's BoundForAllInner; b = floordiv(n, f) for
// the split guard). L becomes [m, s) with those guards rewritten to true and the tail [s, end)
// with every guard kept, s = min(end, max(m, min b)): an expression, no proof needed.
//
// Selects (inlined padding): a loop whose body has no such `if` is split by the conditions of
// its selects instead. `select(0 <= y && y < H && ..., data[clamp(y)], 0)` with y affine in L and
// in the loops between L and the select (constant ranges): each such conjunct holds, for every
// value of those inner loops, on a suffix (lower bound) or a prefix (upper bound) of L, whose
// bound may use variables defined outside L (the row of a fused parallel loop: symbolic bounds).
// L becomes border / interior / border; in the interior the conjuncts are facts, so they leave
// the select conditions and the min / max clamps they decide become their operand
// (select_interior.h). A border of one iteration is L's body with L substituted. At most three
// nested select partitions on a path (the code grows by up to 3x per level). Conjuncts using a
// let defined inside L, or not affine, are left alone; only signed index comparisons are used.
//
// Input: flat loops after LowerBlocks (and FlattenBuffer); parallel, vectorized and unrolled
// loops are not partitioned (unrolled ones fold their guards by themselves), loops inside them
// are. Output: the same function, semantically unchanged.
#pragma once

#include "tessera/tir/function.h"

namespace tessera::tir::transform {

PrimFunc LoopPartition(const PrimFunc& func);

}  // namespace tessera::tir::transform
