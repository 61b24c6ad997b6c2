// Default CPU schedule of a PrimFunc built by te::create_prim_func from topi computes, with the
// template schedules of the op implementations the op strategy chose (graph_lower/op_strategy.h)
// applied to their own blocks first: the NCHWc convolutions (conv2d_nchwc.h), the packed GEMM
// (dense.h) and the Winograd transforms (winograd.h) are such "anchor" schedules. Every target
// with the key "cpu" uses it, with the target's widths (ScheduleOptionsFor).
//
// A simple, always-correct baseline (tuned schedules replace it, issue #3):
//   1. every spatial-only block that writes an intermediate buffer (pad, elemwise, broadcast,
//      injective stages) is compute_inline'd into its consumers when the primitive allows it,
//      except a stage that calls a transcendental (exp, erf, ...) and has two or more
//      consumers (softmax's exp): inlining would compute it once per consumer;
//   2. a kernel of several blocks over the same rows, at least one a reduction, where each
//      block reads the earlier ones' results in its own row only (softmax: max, exp, sum,
//      normalize; layer norm: mean, variance, normalize) is scheduled row by row: the last
//      block's leading spatial loops (never its innermost one, whose lanes stay under the row: a
//      pool's window sum and divide share every spatial loop) are fused into one parallel row
//      loop and every earlier block is compute_at it, so a row's intermediates stay in L1. The
//      blocks under it are vectorized as below;
//   3. for every remaining block (outputs and reductions), the spatial loops outside its
//      reduction loops are handled: the outer ones are fused while their combined extent is
//      below `min_parallel_extent` (batch 1 gives no parallelism alone) and the result is
//      parallelized; when the innermost loop is spatial and indexes the last (contiguous)
//      dim of the output, it is vectorized, split first when longer than `vector_lanes`
//      (by vector_lanes, or half / a quarter of it when that divides the extent exactly; a
//      loop of at least 4 * vector_lanes that vector_lanes does not divide is split by
//      vector_lanes all the same, its guarded tail split off by LoopPartition). When the block
//      computes a float coordinate from that innermost index (an int-to-float cast of it: resize,
//      grid sample) and at most 16 vector iterations of the loop are left, they are unrolled, so
//      each copy's coordinates, weights and clamped indices fold to constants.
//      For a reduction block whose innermost spatial loop indexes the output's last dim, that
//      loop (or its inner split part) is moved inside the reduction loops, the init is split
//      off with decompose_reduction, and both the update's and the init's lane loops are
//      vectorized (out[.., x:x+16] += ... per reduction step). A reduction that reads along
//      its innermost reduction loop instead (a row sum: x[i, k], contiguous in k, not in i)
//      would gather with a stride that way: its innermost reduction loop is split by the lane
//      count and rfactor-ed (tir::Schedule::rfactor), and the partial results' lane loop is
//      vectorized (16 partial sums per row, then 16 scalar steps). A loop the full lane count
//      does not divide is rfactor-ed by the full lane count with a guarded tail when it is at
//      least 4 vectors long or symbolic (softmax over 799 or 1500 keys, even where a quarter of
//      the lanes would divide it; the tail's unvisited partial results keep the init's identity);
//      a shorter one takes half / a quarter of the lanes when that divides it, else keeps the
//      lanes across rows. A reduction with no spatial loop (a sum to one number) is vectorized
//      along its rows the same way. The loads' indices are read simplified within the iter vars'
//      domains (a reshape inlined into the reduction is contiguous along its rows). A reduction
//      with fewer outputs than `min_parallel_extent` over at least kAddRFactorDefaultElements
//      elements takes MetaSchedule's AddRFactor rule instead (add_rfactor.h): partial reductions
//      in parallel, then combined.
// Other extents are split by vector_lanes with a predicate (or, with `vectorize_partial`
// off, left unvectorized); tir's VectorizeLoop then keeps that loop serial, correctly. Every step is a checked schedule primitive;
// one that the schedule library refuses is skipped, so the result is always a valid
// schedule of the same computation.
//
// Blocks with duplicate names (two topi computes of the same op) are renamed "<name>_1", ...
// first, because a tir::Schedule needs unique block names.
//
// Tuning knobs (schedule_knobs.h; ScheduleOptions::knobs): every decision above that a tuner may
// change is a knob whose fallback is the rule described here. The default schedule's: per block,
// "<block>.lanes" (the lane split of step 3, 0 = serial) and "<block>.parallel_extent" (its
// min_parallel_extent); for a reduction block of step 3 that a MetaSchedule rule applies to,
// "<block>.rule" (0: step 3; 1: MultiLevelTiling, multi_level_tiling.h; 2: AddRFactor, add_rfactor.h;
// each with its own knobs; the fallback is 2 where step 3 takes AddRFactor, as above, else 0; a
// non-zero value also takes the kernel off step 2); for a block of steps 2-3 read by one other such
// block, "<block>.compute_at" (0: its own nest, the fallback; i: under its reader's i-th loop,
// RandomComputeLocation, compute_location.h). The templates': conv2d_nchwc.h (ow_tile, oc_vectors,
// oh_tile, pixel_tile, reduction_chunk, inline_pad, rows_outer) and dense.h (mr, nv, kc), each
// prefixed by its block's name.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "tessera/target/target.h"
#include "tessera/tir/function.h"
#include "tessera/tir/schedule/schedule.h"
#include "tessera/topi/schedule_knobs.h"

namespace tessera::topi::x86 {

struct ScheduleOptions {
  /// float32 lanes of the vector loops: the layout block (topi/target_layout.h, 16: one zmm,
  /// two ymm); the packed GEMM's lane loop must equal its weights' block.
  int vector_lanes = 16;
  /// float32 lanes of one vector register of the target (16 AVX-512, 8 AVX2, 4 NEON / SSE):
  /// the conv micro-kernel's register tile (ChooseConvTile).
  int register_lanes = 16;
  /// Vector registers of the target (32 AVX-512 / NEON, 16 AVX2): bounds the conv micro-kernel.
  int vector_registers = 32;
  /// Bytes of one core's L2 (target::CacheSizes): the conv's task order keeps in L2 what fits
  /// there (conv2d_nchwc_schedule.cc, ParallelizeTasks).
  int64_t l2_bytes = 512 * 1024;
  int64_t min_parallel_extent = 16;  ///< fuse outer spatial loops until this many iterations
  bool inline_injective = true;
  bool parallelize = true;
  bool vectorize = true;
  bool vectorize_partial = true;     ///< vectorize a predicated (non-dividing) split
  bool vectorize_reductions = true;  ///< move the lane loop of a reduction inside its reduction loops
  /// The tuning configuration (schedule_knobs.h): null in a normal build, where every knob takes
  /// its hand-chosen value. Not owned; the schedule records the knobs it defines in it.
  KnobContext* knobs = nullptr;
};

/// The options for `target`: vector_lanes = BlockLanes(target, 32), register_lanes =
/// target.VectorLanes(32), vector_registers = target.vector_registers, l2_bytes =
/// target.cache.l2_bytes (when > 0), the rest at their defaults.
ScheduleOptions ScheduleOptionsFor(const target::Target& target);

/// The template schedule of one compute's blocks (the schedule half of an op implementation,
/// TVM's OpImplementation.schedule), applied by ScheduleDefault before the default schedule.
struct AnchorSchedule {
  std::string name;  ///< e.g. "conv2d_NCHWc": names the template in traces and errors
  /// Schedules the blocks of its compute found in the schedule; returns the names of the blocks
  /// it scheduled (empty when there are none). Must leave a valid schedule whatever happens.
  std::function<std::set<std::string>(tir::Schedule&, const ScheduleOptions&)> apply;
  /// True for a block the default schedule's inlining must keep as its own stage (a padding
  /// stage, a packing stage). Empty: none.
  std::function<bool(const std::string&)> keep_stage;
};

/// The anchor schedules of the CPU templates: Conv2dNCHWcAnchor(), GemmPackedAnchor(), AttentionAnchor(),
/// WinogradAnchor() (for kernels scheduled outside the op strategy: the kernel tests and
/// benchmarks).
std::vector<AnchorSchedule> CpuAnchorSchedules();

/// A copy of `func` whose blocks have unique names.
tir::PrimFunc UniquifyBlockNames(const tir::PrimFunc& func);

/// Applies the anchors' schedules, then the default schedule to the other blocks; returns the
/// schedule (its func() and trace()).
tir::Schedule ScheduleDefault(const tir::PrimFunc& func, const ScheduleOptions& options,
                              const std::vector<AnchorSchedule>& anchors);

/// ScheduleDefault with CpuAnchorSchedules().
tir::Schedule ScheduleDefault(const tir::PrimFunc& func, const ScheduleOptions& options = {});

/// ScheduleDefault(func, options).func().
tir::PrimFunc DefaultSchedule(const tir::PrimFunc& func, const ScheduleOptions& options = {});

}  // namespace tessera::topi::x86
