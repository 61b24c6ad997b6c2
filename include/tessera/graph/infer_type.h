// Type inference (Relay, arXiv 1904.08368, section 4.1): fills checked_type() of every
// expression bottom-up. Calls of an Op use the op's type relation (op_registry.h); calls of
// functions check the argument types against the parameters.
//
// Errors are UserErrors that name the op and the offending argument types, e.g.
//   "type error in nn.conv2d(Tensor[(1, 3, 8, 8), float32], Tensor[(4, 2, 3, 3), float32]):
//    input channels 3 != weight in-channels 2 * groups 1".
#pragma once

#include "tessera/graph/expr.h"
#include "tessera/graph/module.h"

namespace tessera::graph {

/// Returns a module whose functions (and all their subexpressions) carry checked types and
/// whose functions have their ret_type filled.
IRModule InferType(const IRModule& mod);

/// Types one expression (its free variables must carry type annotations) and returns its type.
/// Already-typed subexpressions are not re-typed, so calling it on a growing graph, as the
/// ONNX importer does after each node, costs only the new nodes.
Type InferExprType(const Expr& e);

}  // namespace tessera::graph
