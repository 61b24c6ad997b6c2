// A tuning task: one distinct kernel of a model (AutoTVM §5 "tasks", MetaSchedule's
// ExtractedTask), the unit the tuner searches a schedule for.
//
// A task holds the kernel's unscheduled PrimFunc (te::create_prim_func of its fused function,
// block names made unique), the template schedules the op strategy chose for it and the
// target's schedule options: everything ScheduleDefault needs, so a configuration of the
// templates' knobs (topi/schedule_knobs.h) gives a scheduled PrimFunc and its trace.
//
// Tasks are identified by a workload hash that is stable across machines, runs and models: FNV-1a
// 64 over the printed PrimFunc (tir/printer.h) with the kernel's own name replaced, so two kernels
// that compute the same thing on the same shapes share one task and one set of tuning records.
// (tir::StructuralHash is std::hash-based and differs between C++ libraries; apache/tvm PR #14188.)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/target/target.h"
#include "tessera/tir/function.h"
#include "tessera/topi/x86/schedule.h"

namespace tessera::tune {

struct TuneTask {
  std::string name;             ///< the first kernel's name, e.g. "fused_nn_conv2d_NCHWc_add_relu_3"
  std::vector<std::string> kernels;  ///< every kernel of the model this task schedules
  tir::PrimFunc func;           ///< unscheduled, unique block names (topi::x86::UniquifyBlockNames)
  int num_inputs = 0;           ///< the first num_inputs params are inputs, the rest outputs
  std::vector<topi::x86::AnchorSchedule> anchors;  ///< the op strategy's template schedules
  topi::x86::ScheduleOptions options;              ///< the target's (knobs null)
  std::string workload_hash;    ///< WorkloadHash(func)
  int64_t weight = 1;           ///< calls per model run (kernels sharing the hash)
  double flops = 0;             ///< floating-point operations per call (EstimateFlops)
  /// Empty for a kernel of the model as built; "<knob>=<value>" for one only a graph rewrite's
  /// other value builds (tune/rewrite_choice.h): tuned, but not part of the model's latency unless
  /// that value is chosen.
  std::string rewrite;
};

/// 16 lowercase hex digits: FNV-1a 64 of AsText(func) with the function renamed "main".
std::string WorkloadHash(const tir::PrimFunc& func);

/// 16 lowercase hex digits: FNV-1a 64 of `text`'s bytes.
std::string Fnv1a64Hex(const std::string& text);

/// Floating-point operations of one call of an unscheduled PrimFunc: per BufferStore of a float
/// value, its float arithmetic (+ - * / min max, calls, reductions count as their combiner) times
/// the trip count of the loops around it. An estimate for GFLOP/s reports and the task
/// scheduler's weights, not an exact count of executed instructions.
double EstimateFlops(const tir::PrimFunc& func);

/// Merges tasks with the same workload hash (weights add, kernels concatenate), keeping the first
/// occurrence's order.
std::vector<TuneTask> DeduplicateTasks(std::vector<TuneTask> tasks);

}  // namespace tessera::tune
