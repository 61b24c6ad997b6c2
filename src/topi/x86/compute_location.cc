#include "tessera/topi/x86/compute_location.h"

#include <algorithm>

#include "tessera/topi/schedule_knobs.h"

#include "block_util.h"

namespace tessera::topi::x86 {

namespace {

// The sole reader of `producer` when it is one of `blocks` and the producer has its own loop nest
// at the root; empty otherwise.
std::string MovableInto(const tir::PrimFunc& f, const std::string& producer, const std::vector<std::string>& blocks) {
  const tir::BlockRealizeNode* r = FindRealize(f, producer);
  if (!r) return "";
  const tir::BlockNode* b = r->block_node();
  if (b->writes.empty() || IsParam(f, b->writes[0].buffer)) return "";
  const std::string consumer = SoleReader(f, b);
  if (consumer.empty() || std::find(blocks.begin(), blocks.end(), consumer) == blocks.end()) return "";
  const BlockLoopNest own = FindLoopNest(f, producer), theirs = FindLoopNest(f, consumer);
  if (own.loops.empty() || theirs.loops.empty()) return "";
  if (std::find(theirs.loops.begin(), theirs.loops.end(), own.loops.front()) != theirs.loops.end()) return "";  // shared
  return consumer;
}

}  // namespace

std::vector<int64_t> ComputeLocationCandidates(const tir::Schedule& sch, const std::string& producer,
                                               const std::vector<std::string>& blocks) {
  const std::string consumer = MovableInto(sch.func(), producer, blocks);
  if (consumer.empty()) return {};
  std::vector<int64_t> candidates = {0};
  const size_t depth = FindLoopNest(sch.func(), consumer).loops.size();
  for (size_t i = 1; i <= depth; ++i) {
    try {
      Schedule scratch(sch.func());
      const std::vector<LoopRV> loops = scratch.get_loops(scratch.get_block(consumer));
      scratch.compute_at(scratch.get_block(producer), loops[i - 1]);
      candidates.push_back(static_cast<int64_t>(i));
    } catch (const ScheduleError&) {
      // not a legal location (the consumer's iteration does not cover a region of the producer)
    }
  }
  if (candidates.size() < 2) return {};
  return candidates;
}

std::set<std::string> RandomComputeLocation(Schedule& sch, const std::vector<std::string>& blocks,
                                            const ScheduleOptions& opt) {
  std::set<std::string> moved;
  if (!opt.knobs) return moved;  // untuned: every candidate's fallback is 0, nothing to try
  for (const std::string& producer : blocks) {
    const std::vector<int64_t> candidates = ComputeLocationCandidates(sch, producer, blocks);
    if (candidates.empty()) continue;
    const int64_t at = Knob(opt.knobs, producer + ".compute_at", candidates, 0);
    if (at == 0) continue;
    try {
      const std::string consumer = MovableInto(sch.func(), producer, blocks);
      const std::vector<LoopRV> loops = sch.get_loops(sch.get_block(consumer));
      sch.compute_at(sch.get_block(producer), loops[static_cast<size_t>(at - 1)]);
      moved.insert(producer);
      ScheduleBlockUnderRow(sch, producer, opt, static_cast<size_t>(at));
    } catch (const ScheduleError& err) {
      DebugRefusedStep("compute_location", "compute_at", err);
    }
  }
  return moved;
}

}  // namespace tessera::topi::x86
