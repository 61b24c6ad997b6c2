// LoopPartition: split a loop whose body is guarded by conditions that hold on a prefix of its
// iterations into that prefix (the guards proved true and removed by Simplify) and the rest
// (guards kept) — TVM's tir.transform.LoopPartition for the tail of a non-dividing split.
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
// Input: flat loops after LowerBlocks (and FlattenBuffer); parallel, vectorized and unrolled
// loops are not partitioned (unrolled ones fold their guards by themselves), loops inside them
// are. Output: the same function, semantically unchanged.
#pragma once

#include "tessera/tir/function.h"

namespace tessera::tir::transform {

PrimFunc LoopPartition(const PrimFunc& func);

}  // namespace tessera::tir::transform
