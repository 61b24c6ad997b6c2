// Lowering of a fused primitive graph function to one TensorIR kernel (TVM's
// relay/backend/te_compiler: LowerToTE + create_prim_func + schedule).
//
// The function must be primitive (FuseOps marks it with attr "Primitive" = 1): its params
// are tensors whose dims are static or symbolic (each symbolic dim one int32 Var, DimExtent in
// compute_registry.h: the kernel's shape_vars) and its body is calls of graph ops, Tuple /
// TupleGetItem (e.g. concatenate's tuple argument), Let, and scalar Constants. Each param
// becomes a te::placeholder named after it; each op call runs the compute of the implementation
// the op strategy selects for the call and the target (op_strategy.h; the op's registry FCompute
// when no implementation is registered), and the kernel is scheduled with the template
// schedules of the implementations used, then the default schedule (topi/x86/schedule.h).
//
// Kernel parameters, in calling-convention order: the function params, then one output
// buffer per output (a body that is a Tuple has several outputs). An output that is
// directly a param (or repeats another output) is produced by a copy compute, so the
// kernel always writes its own output buffers.
//
// Errors (UserError / UnsupportedError, naming the function): an extent no type relation computed
// ("?"), an op whose compute needs static shapes called with symbolic ones, an op with neither an implementation for the target nor a compute, a
// non-scalar Constant, a nested function call.
#pragma once

#include <string>
#include <vector>

#include "tessera/graph/expr.h"
#include "tessera/target/target.h"
#include "tessera/te/tensor.h"
#include "tessera/tir/function.h"
#include "tessera/topi/x86/schedule.h"

namespace tessera::graph_lower {

/// The TE graph of a primitive function: one placeholder per param, the output tensors, and
/// what the op strategy chose.
struct LoweredTE {
  std::vector<te::Tensor> inputs;
  std::vector<te::Tensor> outputs;
  std::vector<std::string> implementations;              ///< per op call, in visiting order
  std::vector<topi::x86::AnchorSchedule> schedules;      ///< the chosen templates, once each
};

/// Builds the TE graph of fn (runs type inference first when fn is untyped) for `target`, each
/// call computed by the implementation OpStrategyTable::Global().Select picks.
LoweredTE LowerToTE(const graph::Function& fn, const std::string& name, const target::Target& target);

/// A kernel before scheduling: what ScheduleDefault(func, options, anchors) schedules, and what a
/// tuner searches schedules for (tune/task.h).
struct UnscheduledKernel {
  tir::PrimFunc func;  ///< te::create_prim_func(inputs + outputs, name), block names made unique
  int num_inputs = 0;  ///< the first params are fn's params, the rest its outputs
  std::vector<topi::x86::AnchorSchedule> anchors;  ///< the op strategy's template schedules
  topi::x86::ScheduleOptions options;              ///< RewritesFor(target).schedule_options(target)
};

/// LowerToTE and te::create_prim_func for `target`, without scheduling.
UnscheduledKernel LowerUnscheduled(const graph::Function& fn, const std::string& name, const target::Target& target);

/// LowerUnscheduled and, when `schedule` is set, the
/// chosen template schedules and the default schedule with the target's options
/// (RewritesFor(target).schedule_options).
tir::PrimFunc LowerPrimitiveFunction(const graph::Function& fn, const std::string& name, const target::Target& target,
                                     bool schedule = true);

}  // namespace tessera::graph_lower
