// MetaSchedule's MultiLevelTiling schedule rule for CPUs (TensorIR, arXiv 2207.04296 §4.2 "schedule
// rules"; TVM's ScheduleRule::MultiLevelTiling with the CPU structure "SSRSRS"), as a tunable
// schedule of any reduction block: the design space the tuner (issue 19) searches for a block that no
// template (conv2d_NCHWc, packed GEMM, Winograd) schedules.
//
// For a block whose loops are each bound to one of its iter vars with a constant extent, at least one
// of them a reduction:
//   1. every spatial loop s of extent > 1 is split into four loops s0 s1 s2 s3 and every reduction
//      loop r into two, r0 r1, by a *perfect* tiling (factors whose product is the extent, as
//      MetaSchedule's sample_perfect_tile: no predicate, no tail);
//   2. the loops are reordered  s0.. s1.. r0.. s2.. r1.. s3..  (extent-1 loops first); within a level
//      the spatial loop that indexes the output's last (contiguous) dimension goes last;
//   3. the init is split off before the first r0 loop (decompose_reduction), so the output tile
//      s2 x s3 is initialized, accumulated over the reduction, and left in cache;
//   4. that innermost s3 loop is vectorized (block and init) when it indexes the contiguous
//      dimension and is longer than 1;
//   5. optionally the other s3 loops (and the r1 loops) are unrolled: the register tile;
//   6. an elementwise consumer of the block's output (bias / relu / residual add, the only block
//      reading it) is optionally computed under the last s0 or s1 loop (reverse_compute_at), on the
//      tile while it is in cache (MetaSchedule's fused epilogue / reuse_write);
//   7. the s0 loops (with the extent-1 loops) are fused and parallelized.
//
// Knobs (schedule_knobs.h), each "<block>.<knob>":
//   tile_s<i> / tile_r<j>  index into PerfectTilings(extent, 4 / 2) of the i-th spatial / j-th
//                          reduction loop in nest order (fallback: the heuristic below);
//   unroll                 0: none, 1: the s3 loops other than the lane loop, 2: also the r1 loops;
//   epilogue_at            0: the consumer keeps its own loop nest, 1: under the last s0 loop,
//                          2: under the last s1 loop.
// The fallbacks: the lane loop's s3 = the vector lanes (or the largest divisor of its extent up to
// them), one other spatial loop's s3 up to 4 (rows of the register tile), every s1 and s2 = 1, r1 = the
// largest divisor up to 8; unroll 1, epilogue_at 1. ScheduleDefault (schedule.h) offers the rule per
// block as the knob "<block>.rule" (0: the default schedule; 1: this rule; 2: AddRFactor where that
// applies too, add_rfactor.h), whose fallback is never 1: an untuned build never uses this rule.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "tessera/tir/schedule/schedule.h"
#include "tessera/topi/x86/schedule.h"

namespace tessera::topi::x86 {

/// Whether MultiLevelTiling applies to block `name` of `sch`: a reduction block (an iter var of
/// kind CommReduce) with at least one spatial loop, whose every loop is bound directly to one of
/// its iter vars and has a constant extent (so never for a loop of symbolic extent, dynamic
/// shapes: such a block keeps the default schedule and no "<block>.rule" knob). Pure query.
bool MultiLevelTilingApplies(const tir::Schedule& sch, const std::string& name);

/// Applies the rule to block `name` (steps 1-7 above, decisions from opt.knobs). Returns the names of
/// the blocks it scheduled: the block, its init, and the fused consumer when it moved one; empty when
/// the rule does not apply (MultiLevelTilingApplies), and then the schedule is unchanged. A step the
/// schedule library refuses is skipped; what was applied is a valid schedule of the same computation.
std::set<std::string> MultiLevelTiling(tir::Schedule& sch, const std::string& name, const ScheduleOptions& opt);

/// The ordered factorizations of n >= 1 into `levels` >= 1 positive factors whose product is n, outer
/// factor first, in lexicographic order of (innermost, ..., outermost) factor; factors other than the
/// outermost are at most `max_inner` (a tile larger than that never fits a cache level of interest).
/// The knobs tile_s<i> / tile_r<j> index this list. At most `limit` entries: longer lists are thinned
/// deterministically (every k-th), keeping the first (all inner factors 1).
std::vector<std::vector<int64_t>> PerfectTilings(int64_t n, int levels, int64_t max_inner = 64, size_t limit = 512);

}  // namespace tessera::topi::x86
