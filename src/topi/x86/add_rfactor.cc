#include "tessera/topi/x86/add_rfactor.h"

#include <optional>
#include <vector>

#include "tessera/topi/schedule_knobs.h"
#include "tessera/topi/x86/multi_level_tiling.h"

#include "block_util.h"

namespace tessera::topi::x86 {

namespace {

// What the rule needs to know of a block it applies to.
struct Shape {
  size_t spatial_loops = 0;   // the leading loops, spatial
  size_t split_loops = 0;     // the leading reduction loops the rule fuses and splits
  int64_t spatial = 1;        // S: the product of the spatial extents
  int64_t reduction = 1;      // R: the product of the reduction extents
  std::vector<std::vector<int64_t>> splits;  // perfect tilings of the split loops into two factors >= 2
};

std::vector<std::vector<int64_t>> TwoFactorSplits(int64_t n) {
  std::vector<std::vector<int64_t>> out;
  for (const std::vector<int64_t>& t : PerfectTilings(n, 2, n))
    if (t[0] >= 2 && t[1] >= 2) out.push_back(t);
  return out;
}

std::optional<Shape> Analyze(const tir::PrimFunc& f, const std::string& name, const ScheduleOptions& opt) {
  const BlockLoopNest nest = FindLoopNest(f, name);
  if (!nest.realize || !nest.perfect || nest.loops.empty()) return std::nullopt;
  const tir::BlockNode* b = nest.realize->block_node();
  if (!b->init.defined() || b->writes.size() != 1) return std::nullopt;
  Shape shape;
  std::vector<int64_t> reduction_extents;  // the loops after the spatial ones
  for (const tir::ForNode* loop : nest.loops) {
    const tir::IterVar* iv = IterOf(nest.realize, loop->loop_var.get_var());
    const int64_t ext = ConstExtentOf(loop);
    if (!iv || ext < 1 || loop->for_kind != tir::ForKind::kSerial) return std::nullopt;
    if (iv->iter_type == tir::IterVarType::kDataPar) {
      if (!reduction_extents.empty()) return std::nullopt;  // a spatial loop inside the reduction
      ++shape.spatial_loops;
      shape.spatial *= ext;
    } else if (iv->iter_type == tir::IterVarType::kCommReduce) {
      shape.reduction *= ext;
      reduction_extents.push_back(ext);
    } else {
      return std::nullopt;
    }
  }
  if (reduction_extents.empty() || shape.spatial >= opt.min_parallel_extent || shape.reduction < 4 * opt.min_parallel_extent ||
      shape.reduction <= shape.spatial)
    return std::nullopt;
  // The loops split: every reduction loop but the innermost when they can be (its index is then the
  // original contiguous one, which the default schedule vectorizes), else all of them.
  if (reduction_extents.size() > 1) {
    shape.splits = TwoFactorSplits(shape.reduction / reduction_extents.back());
    shape.split_loops = reduction_extents.size() - 1;
  }
  if (shape.splits.empty()) {
    shape.splits = TwoFactorSplits(shape.reduction);
    shape.split_loops = reduction_extents.size();
  }
  if (shape.splits.empty()) return std::nullopt;  // R prime: nothing to factor
  return shape;
}

// The fallback split: r0 partial results, as many as the spatial loops lack for the parallel extent.
size_t FallbackSplit(const Shape& shape, const ScheduleOptions& opt) {
  const int64_t want = (opt.min_parallel_extent + shape.spatial - 1) / shape.spatial;
  size_t best = 0;  // splits are in order of r1 ascending, so r0 descending
  bool found = false;
  for (size_t i = 0; i < shape.splits.size(); ++i) {
    if (shape.splits[i][0] <= want && (!found || shape.splits[i][0] > shape.splits[best][0])) best = i, found = true;
  }
  if (!found)  // every r0 above the want: the smallest
    for (size_t i = 0; i < shape.splits.size(); ++i)
      if (shape.splits[i][0] < shape.splits[best][0]) best = i;
  return best;
}

// Steps 1-3: the split loops fused and split, the factored loop moved outermost, rfactor. The rf
// block's loops are then (factored, spatial..., the other, the reduction loops not split); the
// combining block's (spatial..., f).
BlockRV FactorReduction(Schedule& sch, const std::string& name, const Shape& shape, const std::vector<int64_t>& split,
                        bool inner) {
  BlockRV block = sch.get_block(name);
  const std::vector<LoopRV> loops = sch.get_loops(block);
  const auto at = [&](size_t i) { return loops.begin() + static_cast<long>(i); };
  const std::vector<LoopRV> spatial(loops.begin(), at(shape.spatial_loops));
  const std::vector<LoopRV> fused(at(shape.spatial_loops), at(shape.spatial_loops + shape.split_loops));
  const std::vector<LoopRV> rest(at(shape.spatial_loops + shape.split_loops), loops.end());
  const LoopRV r = fused.size() > 1 ? sch.fuse(fused) : fused[0];
  const std::vector<LoopRV> parts = sch.split(r, split);
  const LoopRV factored = parts[inner ? 1 : 0], other = parts[inner ? 0 : 1];
  std::vector<LoopRV> order = {factored};
  order.insert(order.end(), spatial.begin(), spatial.end());
  order.push_back(other);
  order.insert(order.end(), rest.begin(), rest.end());
  sch.reorder(order);
  return sch.rfactor(factored, 0);
}

}  // namespace

bool AddRFactorApplies(const tir::Schedule& sch, const std::string& name, const ScheduleOptions& opt) {
  const std::optional<Shape> shape = Analyze(sch.func(), name, opt);
  if (!shape) return false;
  try {
    Schedule scratch(sch.func());
    FactorReduction(scratch, name, *shape, shape->splits[FallbackSplit(*shape, opt)], false);
    return true;
  } catch (const ScheduleError&) {
    return false;  // not a combiner rfactor takes (an argmax's pair, a store of a reduction index)
  }
}

bool AddRFactorByDefault(const tir::Schedule& sch, const std::string& name, const ScheduleOptions& opt) {
  const std::optional<Shape> shape = Analyze(sch.func(), name, opt);
  return shape && shape->spatial * shape->reduction >= kAddRFactorDefaultElements;
}

std::set<std::string> AddRFactor(Schedule& sch, const std::string& name, const ScheduleOptions& opt) {
  const std::optional<Shape> analyzed = Analyze(sch.func(), name, opt);
  if (!analyzed) return {};
  const Shape& shape = *analyzed;
  std::vector<int64_t> indices(shape.splits.size());
  for (size_t i = 0; i < indices.size(); ++i) indices[i] = static_cast<int64_t>(i);
  const int64_t split = Knob(opt.knobs, name + ".rfactor_split", indices, static_cast<int64_t>(FallbackSplit(shape, opt)));
  const bool inner = Knob(opt.knobs, name + ".rfactor_loop", {0, 1}, 0) == 1;
  std::set<std::string> before;
  for (const tir::BlockNode* b : NonRootBlocks(sch.func())) before.insert(b->name_hint);
  // rfactor's conditions are on the block and the loop kinds, not the extents: where Applies() factored
  // the block with the fallback split, any perfect split and either loop factor alike.
  BlockRV rf;
  try {
    rf = FactorReduction(sch, name, shape, shape.splits[static_cast<size_t>(split)], inner);
  } catch (const ScheduleError& err) {
    DebugRefusedStep("add_rfactor", "rfactor", err);
    return {};  // the block keeps whatever was applied (valid) for the default schedule
  }
  const std::string rf_name = sch.GetBlock(rf)->name_hint;
  ScheduleBlockDefault(sch, rf_name, opt);
  ScheduleBlockDefault(sch, name, opt);
  std::set<std::string> handled = {name, rf_name};
  for (const tir::BlockNode* b : NonRootBlocks(sch.func()))
    if (!before.count(b->name_hint)) handled.insert(b->name_hint);
  return handled;
}

}  // namespace tessera::topi::x86
