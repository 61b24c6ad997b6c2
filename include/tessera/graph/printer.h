// Relay-like text form of the graph IR, for --dump-ir, textual tests and the parser (parser.h):
//
//   def @main(%x: Tensor[(1, 3, 8, 8), float32], %c: Tensor[(), bool]) -> Tensor[(1, 4, 8, 8), float32] {
//     %0 = nn.conv2d(%x, meta[Constant][0] /* ty=Tensor[(4, 3, 3, 3), float32] */, strides=[1, 1],
//                    padding=[1, 1, 1, 1]) /* ty=Tensor[(1, 4, 8, 8), float32] */;        (one line)
//     %3 = if (%c) {
//       %1 = nn.relu(%0) /* ty=Tensor[(1, 4, 8, 8), float32] */;
//       multiply(%1, 0.5f) /* ty=Tensor[(1, 4, 8, 8), float32] */
//     } else {
//       %2 = negative(%0) /* ty=Tensor[(1, 4, 8, 8), float32] */;
//       add(%2, %0) /* ty=Tensor[(1, 4, 8, 8), float32] */
//     } /* ty=Tensor[(1, 4, 8, 8), float32] */;
//     add(%3, %0) /* ty=Tensor[(1, 4, 8, 8), float32] */
//   }
//
// Scopes. A function body, an If branch and a let in operand position are scopes: a block of
// `%N = ...;` and `let %x = ...;` lines followed by the scope's result, in braces. A call, tuple,
// tuple access, if, function or operand let is bound to a %N in the outermost scope that
// evaluates it on every path (reachable from the scope's result without entering an If branch, a
// function body or an operand let), in evaluation order; a node only a branch needs is bound
// inside that branch, and a node both branches need (but not the enclosing scope) in each. A
// shared node is printed once per scope, and %N numbers are unique across one print. A scope's
// result line writes its root out (not bound) unless an enclosing scope binds it. A let whose
// body is the scope's result (a let chain) is printed as lines of that scope; a let-bound function
// is written in its let line (`let %f = fn (...) {...};`: its body may call %f).
//
// Functions and types. A module prints its type definitions first (`type List[A] {\n  Cons(A,
// List[A]),\n  Nil,\n}`, in name order), then its functions (`def @name`, in name order). A global
// function is named `@name` (called `@f(%x)`), a constructor by its name (`Cons(%x, %xs)`, `Nil()`), a
// match as
//
//   %4 = match (%xs) {
//     Cons(%h, %t) => {
//       ...
//     },
//     Nil => {
//       ...
//     },
//   } /* ty=... */;
//
// each clause a scope of its own (pattern variables are defined there: `%h`, with `: T` when
// annotated; `_` matches anything, `(%a, _)` a tuple, `Nil` a constructor without fields).
// Types: Tensor[(1, 3), float32], tuples (T, U), fn (T) -> U, TensorArray[Tensor[...]] (the VM's
// tensor list), ADT types List[T] / Option[T] / Tree, `_` (an ADT type argument inference left open).
//
// Leaves. Variables print as %name: name_hint with characters outside [A-Za-z0-9_] made '_', a
// 'v' before a leading digit, and _1, _2 ... added to repeats (also when one variable is defined
// twice, as the parameter of a function node printed in two places). Rank-0 constants print inline
// (1f float32, 1f64 float64, 3i64 int64, 3 int32, True / False bool; floats as the shortest text
// that reads back exactly); every other constant, and a non-finite float, prints as
// meta[Constant][i] /* ty=... */, numbered per print, one number per constant node. Attrs print
// as k=v, strings quoted with C escapes (\" \\ \n \t \r \xHH). Type comments appear once
// InferType has run; function attrs as /* attrs: k=v, ... */ after the return type.
//
// Metadata. With PrintOptions::metadata the text ends with the data of every meta constant, so
// that ParseModule reads back the same module:
//
//   #[metadata]
//   Constant[0]: float32 (4, 3, 3, 3) 0000803f0000803f...
//
// one line per constant in index order: its dtype, its shape and its raw bytes (NDArray memory
// order, so little-endian on every supported host) as lowercase hex; the section is left out
// when no constant needs it. Without the option (--dump-ir) no data is written.
#pragma once

#include <string>

#include "tessera/graph/expr.h"
#include "tessera/graph/module.h"

namespace tessera::graph {

struct PrintOptions {
  /// Append the `#[metadata]` section with the data of every meta[Constant][i].
  bool metadata = false;
};

/// All functions of `mod` in name order, each as `def @name(...) -> ret {...}`.
std::string PrintModule(const IRModule& mod, const PrintOptions& options = {});
/// One expression; a Function prints as `fn (...) { ... }`, anything else as its bindings and result.
std::string PrintExpr(const Expr& e, const PrintOptions& options = {});

}  // namespace tessera::graph
