// FoldConstant: evaluates at compile time every subgraph whose inputs are all constants
// (Relay's FoldConstant; TVM §3 "constant-folding pre-computes graph parts that can be
// determined statically").
//
// A call of an op whose arguments are all constants (or constant tuples, for concatenate) is
// constant, transitively. The maximal constant calls — those used by a non-constant node or
// returned by the function — are the roots; all roots of the module are evaluated in ONE
// call of the evaluator and replaced by Constant nodes. TupleGetItem of a literal tuple is
// resolved to the field directly.
//
// Evaluation is injected, so the graph layer stays free of code generation: the driver
// implements ConstantEvaluator with the real pipeline (driver::MakeJITConstantEvaluator:
// the roots become the outputs of one parameterless module that is JIT-compiled and run once
// with the graph executor). One compilation per FoldConstant run, whatever the number of
// roots, and the same kernels (hence the same numerics) as the compiled model.
//
// Runs InferType first (roots must be typed tensors). With no constant roots the module is
// returned as is and the evaluator is not called.
#pragma once

#include <functional>
#include <vector>

#include "tessera/graph/module.h"
#include "tessera/graph/transform/pass.h"
#include "tessera/runtime/ndarray.h"

namespace tessera::graph::transform {

/// Evaluates closed, typed tensor expressions (every leaf a Constant), one array per
/// expression, in order. Throws on failure (the pass lets the error through).
using ConstantEvaluator = std::function<std::vector<runtime::NDArray>(const std::vector<Expr>& exprs)>;

IRModule FoldConstant(const IRModule& mod, const ConstantEvaluator& evaluate);

/// opt_level 2. Without an evaluator (empty function) the pass only resolves tuple accesses.
Pass FoldConstantPass(ConstantEvaluator evaluate);

}  // namespace tessera::graph::transform
