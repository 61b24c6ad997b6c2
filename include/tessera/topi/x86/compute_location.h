// MetaSchedule's RandomComputeLocation schedule rule (TVM's ScheduleRule::RandomComputeLocation;
// TensorIR, arXiv 2207.04296 §4.2: "the compute location of a block is a sampled decision"), as a
// tuning knob: where a producer block that stays a stage of its own (a reduction such as softmax's
// max or a layer norm's mean, a stage the default schedule does not inline) is computed. At the
// root it runs over its whole output before its consumer starts; under one of its consumer's loops
// it computes only the part the iteration reads, while that part is still in cache, at the price of
// recomputing what iterations share.
//
// A block P is offered the knob "<P>.compute_at" when it is one of the default schedule's blocks (no
// template schedules it, no other rule took it), sits in its own loop nest at the root, does not
// write a parameter, and has a sole reader C that is one of those blocks too. Its candidates: 0 (P
// stays at the root: the fallback, so an untuned build never moves a block), and every i >= 1 for
// which compute_at(P, the i-th loop of C, outermost first) is legal on the function as the default
// schedule finds it (tried on a scratch schedule). A block moved under C's i-th loop gets the
// default schedule of a block under a shared row loop below it (ScheduleBlockUnderRow: its own
// loops vectorized, nothing parallelized); C then gets its own default schedule, the parallel loop
// outside P's location. Without a KnobContext (an untuned build) nothing is tried or moved.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "tessera/tir/schedule/schedule.h"
#include "tessera/topi/x86/schedule.h"

namespace tessera::topi::x86 {

/// The candidates of "<producer>.compute_at" (see above) for block `producer` of `sch` among the
/// default schedule's blocks `blocks`: {0, i...}; empty when the block is not offered the knob.
/// Pure query: the schedule is unchanged.
std::vector<int64_t> ComputeLocationCandidates(const tir::Schedule& sch, const std::string& producer,
                                               const std::vector<std::string>& blocks);

/// Asks "<block>.compute_at" for every block of `blocks` offered it (with opt.knobs only) and moves
/// those whose value is not 0 under their consumer's loop (compute_at), scheduling each moved block
/// as described above. Returns the names of the moved blocks (the default schedule's per-block step
/// must skip them). A block whose move the library refuses stays where it was and is not returned.
std::set<std::string> RandomComputeLocation(tir::Schedule& sch, const std::vector<std::string>& blocks,
                                            const ScheduleOptions& opt);

}  // namespace tessera::topi::x86
