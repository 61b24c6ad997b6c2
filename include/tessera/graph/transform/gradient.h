// Gradient: first-order reverse-mode automatic differentiation of the graph IR (Relay's
// automatic differentiation, arXiv 1904.08368 §4.3, as a graph transformation; like TVM's
// relay.transform.gradient with its per-op FPrimalGradient rules).
//
// Given a typed tensor expression y and expressions xs of the same graph, Gradient returns for each
// x the expression d(sum(seed * y))/dx of x's type: the adjoints. The default seed is ones of y's
// shape, so for a scalar y the result is the usual gradient, and for a tensor y it is the gradient of
// the sum of its elements (ONNX Gradient's convention: dY/dX has X's shape).
//
// Algorithm: the nodes reachable from y are ordered topologically (children before parents); the
// adjoint of y is the seed; walking parents before children, each call of an op passes its result's
// adjoint to the adjoints of its arguments through the op's gradient rule (gradient_rules.cc, one
// table of rules), and adjoints of a node used several times are accumulated with `add`. Only nodes
// between an x and y (that depend on some x, and are float tensors or tuples of them) get adjoints,
// so an op no x reaches never needs a rule. An x that is itself computed from other xs receives
// the total derivative through it (the usual reverse-mode meaning; substitute fresh Vars for
// partial derivatives). Broadcasting ops reduce an adjoint back to the operand's shape (the sum over
// the broadcast axes, then a reshape: Relay's collapse_sum_like).
//
// Supported in y's graph: calls of ops with a rule (ListGradientOps: elementwise math and
// activations, add / subtract / multiply / divide / power / maximum / minimum with broadcasting,
// nn.dense, nn.matmul, nn.batch_matmul, nn.bias_add, sum / mean / max / min reductions, softmax /
// log_softmax, reshape, transpose, expand_dims, squeeze, broadcast_to, strided_slice (stride 1), pad
// (constant), tile, concatenate, where, nn.global_avg_pool2d, ...), tuples, tuple fields and lets.
// Errors (the expression is left as is):
//   - a call of an op without a rule between an x and y: UnsupportedError
//     "Gradient through op nn.conv2d is not supported";
//   - if / match / function calls / closures between an x and y: UnsupportedError naming the construct;
//   - an x or y that is not a float tensor, an untyped y: UserError;
//   - shapes a rule needs static (reductions' broadcast back, reshape of symbolic dims it cannot
//     name): UnsupportedError naming the op.
// An x that y does not depend on gets zeros of its shape.
#pragma once

#include <string>
#include <vector>

#include "tessera/graph/expr.h"

namespace tessera::graph::transform {

/// The adjoints d(sum(seed * y))/dx for each x of `xs` (compared by node identity), each of x's type.
/// `seed` (optional): y's adjoint, of y's type; null means ones. y must be typed (InferExprType);
/// the results are typed.
std::vector<Expr> Gradient(const Expr& y, const std::vector<Expr>& xs, const Expr& seed = nullptr);

/// Relay's gradient(fn) for a function of tensors returning a tensor:
///   fn (%p0, ..., %pn) { y }  ->  fn (%p0, ..., %pn) { (y, (dy/dp0, ..., dy/dpn)) }
/// with the same params, the seed ones (as Gradient). UserError when a param or the result is not a
/// float tensor.
Function GradientFunction(const Function& fn);

/// Whether op `name` has a gradient rule.
bool HasGradientRule(const std::string& op);
/// The ops with a gradient rule, sorted.
std::vector<std::string> ListGradientOps();

}  // namespace tessera::graph::transform
