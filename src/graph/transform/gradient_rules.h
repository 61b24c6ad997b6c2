// The per-op gradient rules of Gradient (graph/transform/gradient.h): TVM's FPrimalGradient op
// attribute as one table, in gradient_rules.cc (not a public header).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tessera/graph/expr.h"

namespace tessera::graph::transform::detail {

/// The adjoints of a call's arguments from the adjoint `grad` of its result (the call's type):
/// one per argument, each of that argument's type (a tuple argument's: a Tuple literal of the
/// fields' adjoints, a null field meaning zero). `needs[i]` says whether argument i needs one (it
/// depends on a differentiated x); a rule may leave the others null. A null adjoint for a needed
/// argument means the rule cannot differentiate through it (the pass names the op and argument).
/// The call (y itself, which rules reuse: exp, tanh, softmax) and its arguments are typed; the rule
/// returns typed expressions.
using GradientRule = std::function<std::vector<Expr>(const Call& call, const Expr& grad,
                                                     const std::vector<bool>& needs)>;

/// The rule of op `name`, or nullptr.
const GradientRule* FindGradientRule(const std::string& name);
/// The ops with a rule, sorted.
std::vector<std::string> GradientRuleOps();

/// Ones (or `value`) of `like`'s type: a scalar constant broadcast to its static shape
/// (broadcast_to); UnsupportedError naming `op` when the shape has symbolic dims.
Expr FilledLike(const Expr& like, double value, const std::string& op);

}  // namespace tessera::graph::transform::detail
