// Lowering of a fused primitive graph function to one TensorIR kernel (TVM's
// relay/backend/te_compiler: LowerToTE + create_prim_func + schedule).
//
// The function must be primitive (FuseOps marks it with attr "Primitive" = 1): its params
// are tensors with static shapes and its body is calls of graph ops, Tuple /
// TupleGetItem (e.g. concatenate's tuple argument), Let, and scalar Constants. Each param
// becomes a te::placeholder named after it; each op call runs the op's FCompute
// (compute_registry.h) on its arguments' tensors.
//
// Kernel parameters, in calling-convention order: the function params, then one output
// buffer per output (a body that is a Tuple has several outputs). An output that is
// directly a param (or repeats another output) is produced by a copy compute, so the
// kernel always writes its own output buffers.
//
// Errors (UserError / UnsupportedError, naming the function): a symbolic dim (naming the dim
// and the param), an op without compute, a non-scalar Constant, a nested function call.
#pragma once

#include <string>
#include <vector>

#include "tessera/graph/expr.h"
#include "tessera/target/target.h"
#include "tessera/te/tensor.h"
#include "tessera/tir/function.h"

namespace tessera::graph_lower {

/// The TE graph of a primitive function: one placeholder per param, the output tensors.
struct LoweredTE {
  std::vector<te::Tensor> inputs;
  std::vector<te::Tensor> outputs;
};

/// Builds the TE graph of fn (runs type inference first when fn is untyped) for `target`: the
/// computes that choose a strategy (packed GEMM tiles, the x86 conv's im2col stage) choose it
/// for that target.
LoweredTE LowerToTE(const graph::Function& fn, const std::string& name, const target::Target& target);

/// LowerToTE, te::create_prim_func(inputs + outputs, name) and, when `schedule` is set, the
/// default x86 schedule with the target's widths (topi::x86::ScheduleOptionsFor(target)).
tir::PrimFunc LowerPrimitiveFunction(const graph::Function& fn, const std::string& name, const target::Target& target,
                                     bool schedule = true);

}  // namespace tessera::graph_lower
