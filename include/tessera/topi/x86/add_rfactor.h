// MetaSchedule's AddRFactor schedule rule for CPUs (TVM's ScheduleRule::AddRFactor; TensorIR,
// arXiv 2207.04296 §3.3 "rfactor" and §4.2 "schedule rules"), as a tunable schedule of a reduction
// with too few outputs to keep the cores busy: a sum over a whole tensor, the norm of one vector,
// a pooling of a few channels. The default schedule parallelizes only spatial loops, so such a
// block runs on one core; this rule splits its reduction into partial reductions that run in
// parallel and a short combining reduction.
//
// For a reduction block (init, one output) whose loop nest is perfect, every loop bound to one iter
// var with a constant extent, the spatial loops first and then the reduction loops, with S = the
// product of the spatial extents below opt.min_parallel_extent, and R = the product of the
// reduction extents at least 4 x opt.min_parallel_extent and above S:
//   1. the reduction loops but the innermost are fused into one loop r (when their extents' product
//      has a split as below; else all of them, as MetaSchedule does): the innermost keeps its index,
//      contiguous in a row-major input, which the default schedule vectorizes in step 4;
//   2. r is split into r0 x r1 by a perfect tiling with both factors >= 2;
//   3. the loop to factor, one of the two, moves outside the spatial loops, and rfactor
//      (Schedule::rfactor) makes of the block two: "<name>_rf" reduces into partial results
//      "<out>_rf" (out's shape with the factored loop's extent as its first dimension, so each
//      partial's outputs are contiguous), that loop now spatial; "<name>" combines them:
//        factor r0 (the outer): a partial result per run of r1 consecutive elements;
//        factor r1 (the inner): a partial result per residue mod r1 (strided reads);
//   4. both blocks get the default schedule on their own loops (ScheduleBlockDefault): the spatial
//      loops (the output's and the factored one) fused and parallelized, a reduction along
//      contiguous elements vectorized by the lane count (with factor r0: the partials' inner runs).
// The result is reassociated: float sums differ from the serial order in the last bits.
//
// Knobs (schedule_knobs.h), each "<block>.<knob>":
//   rfactor_split  index into the perfect tilings of r's extent into two factors >= 2 (PerfectTilings
//                  order: r1 ascending);
//                  fallback: the largest r0 up to ceil(min_parallel_extent / S), or the smallest r0
//                  when none is;
//   rfactor_loop   0: factor r0 (fallback), 1: factor r1.
// ScheduleDefault (schedule.h) offers the rule per block as the value 2 of the knob "<block>.rule"
// (0: the default schedule; 1: MultiLevelTiling). Its fallback, what an untuned build does, is 2 when
// S x R >= kAddRFactorDefaultElements (2^17 elements: there the second core pays for its launch; a
// sum of [256, 4096] to one number at 1 / 2 threads: 0.073 / 0.044 ms, ONNX Runtime 0.15 ms; the
// serial default took 1.05 ms), else 0: a smaller whole-tensor sum runs vectorized on one core
// (16 x 1024 in 1.1 us; with the rule at 2 threads no faster up to 64 x 1024).
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "tessera/tir/schedule/schedule.h"
#include "tessera/topi/x86/schedule.h"

namespace tessera::topi::x86 {

/// Whether AddRFactor applies to block `name` of `sch` under `opt` (the conditions above, and
/// rfactor accepting the block: its combiner one of + * min max, its output not read otherwise).
/// Pure query: the schedule is unchanged (a scratch schedule of the same function is tried).
bool AddRFactorApplies(const tir::Schedule& sch, const std::string& name, const ScheduleOptions& opt);

/// The elements (S x R) from which the default schedule takes the rule for a block it applies to.
inline constexpr int64_t kAddRFactorDefaultElements = 1 << 17;

/// Whether the default schedule (the fallback of "<block>.rule") takes the rule for block `name`, one
/// AddRFactorApplies to: S x R >= kAddRFactorDefaultElements (see above). Pure query.
bool AddRFactorByDefault(const tir::Schedule& sch, const std::string& name, const ScheduleOptions& opt);

/// Applies the rule to block `name` (steps 1-4 above, decisions from opt.knobs). Returns the names of
/// the blocks it scheduled (the rf block, the combining block and the blocks the default schedule
/// made of them); empty when the block fails the shape conditions above (the schedule unchanged) or
/// the library refuses the rfactor (the block keeps its fused and split loops, for the default
/// schedule to take: ScheduleDefault calls it only where AddRFactorApplies, which tries the rfactor).
/// A step refused after the rfactor is skipped; what was applied is a valid schedule of the same
/// computation.
std::set<std::string> AddRFactor(tir::Schedule& sch, const std::string& name, const ScheduleOptions& opt);

}  // namespace tessera::topi::x86
