// Relay-like text form of the graph IR, for --dump-ir and textual tests:
//
//   def @main(%input: Tensor[(1, 3, 8, 8), float32]) -> Tensor[(1, 4, 8, 8), float32] {
//     %0 = nn.conv2d(%input, meta[Constant][0] /* ty=Tensor[(4, 3, 3, 3), float32] */, strides=[1, 1], ...) /* ty=Tensor[(1, 4, 8, 8), float32] */;
//     nn.relu(%0) /* ty=Tensor[(1, 4, 8, 8), float32] */
//   }
//
// Every call, tuple, tuple access and if is bound to %N in evaluation order (a shared node is
// printed once); the function's result is the last line. Rank-0 constants print inline
// (1f, 3i64); other constants print as meta[Constant][i] with their type, numbered per print.
// Type comments appear once InferType has run.
#pragma once

#include <string>

#include "tessera/graph/expr.h"
#include "tessera/graph/module.h"

namespace tessera::graph {

/// All functions of `mod` in name order, each as `def @name(...) -> ret {...}`.
std::string PrintModule(const IRModule& mod);
/// One expression; a Function prints as `fn (...) { ... }`, anything else as its bindings and result.
std::string PrintExpr(const Expr& e);

}  // namespace tessera::graph
