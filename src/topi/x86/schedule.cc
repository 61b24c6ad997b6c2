#include "tessera/topi/x86/schedule.h"

#include <set>
#include <string>
#include <vector>

#include "tessera/ir/op.h"
#include "tessera/tir/functor.h"
#include "tessera/topi/x86/conv2d_nchwc.h"
#include "tessera/topi/x86/dense.h"

#include "block_util.h"

namespace tessera::topi::x86 {

namespace {

std::vector<const tir::BlockRealizeNode*> Realizes(const tir::PrimFunc& f) { return NonRootRealizes(f); }

const tir::BlockRealizeNode* FindRealize(const tir::PrimFunc& f, const std::string& name) {
  for (const auto* r : Realizes(f))
    if (r->block_node()->name_hint == name) return r;
  return nullptr;
}

bool IsReduction(const tir::BlockNode* b) {
  if (b->init.defined()) return true;
  for (const auto& iv : b->iter_vars)
    if (iv.iter_type != tir::IterVarType::kDataPar) return true;
  return false;
}

bool WritesParam(const tir::PrimFunc& f, const tir::BlockNode* b) {
  for (const auto& w : b->writes)
    for (const auto& p : f->params)
      if (w.buffer.same_as(p)) return true;
  return false;
}

// Step 1: inline every spatial-only intermediate block that compute_inline accepts.
void InlineInjective(Schedule& sch) {
  std::set<std::string> refused;
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto* r : Realizes(sch.func())) {
      const tir::BlockNode* b = r->block_node();
      if (refused.count(b->name_hint) || IsReduction(b) || WritesParam(sch.func(), b)) continue;
      if (KeepAsStage(b->name_hint)) continue;  // e.g. the NCHWc conv padding stage
      if (KeepGemmStage(b->name_hint)) continue;  // the packing of a GEMM operand (dense.h)
      try {
        sch.compute_inline(sch.get_block(b->name_hint));
        changed = true;
        break;  // the function changed: collect the blocks again
      } catch (const ScheduleError&) {
        refused.insert(b->name_hint);
      }
    }
  }
}

// The loop var bound *directly* to a spatial iter var of the block, per loop; nullptr otherwise.
const tir::IterVar* SpatialIterOf(const tir::BlockRealizeNode* r, const ir::VarNode* loop_var) {
  const tir::BlockNode* b = r->block_node();
  for (size_t i = 0; i < b->iter_vars.size(); ++i) {
    if (r->iter_values[i].get() == loop_var)
      return b->iter_vars[i].iter_type == tir::IterVarType::kDataPar ? &b->iter_vars[i] : nullptr;
  }
  return nullptr;
}

// Whether the block's store writes its last dim with `iv` (contiguous lanes).
bool StoresContiguously(const tir::BlockNode* b, const tir::IterVar& iv) {
  const auto* store = b->body.as<tir::BufferStoreNode>();
  return store && !store->indices.empty() && store->indices.back().get() == iv.var.get();
}

// Whether the loop var is bound directly to a reduction iter var of the block.
bool IsReductionLoop(const tir::BlockRealizeNode* r, const ir::VarNode* loop_var) {
  const tir::BlockNode* b = r->block_node();
  for (size_t i = 0; i < b->iter_vars.size(); ++i)
    if (r->iter_values[i].get() == loop_var) return b->iter_vars[i].iter_type == tir::IterVarType::kCommReduce;
  return false;
}

// The lane count for a loop of extent ext: the whole loop when it fits one register; else
// the full lane count or half / a quarter of it when that divides ext (no predicate, so
// VectorizeLoop can emit plain vector code); else the full lane count with a predicate
// (vectorize_partial). 0 when the loop should stay serial.
int64_t LaneFactor(int64_t ext, const ScheduleOptions& opt) {
  const int64_t lanes = opt.vector_lanes;
  if (ext <= 1) return 0;
  if (ext <= lanes) return ext;
  for (int64_t f = lanes; f >= 4 && f >= lanes / 4; f /= 2)
    if (ext % f == 0) return f;
  return opt.vectorize_partial ? lanes : 0;
}

// Splits off (when longer than the lane factor) and returns the lane loop of spatial.back(),
// updating `spatial` to the loops left for parallelization. Undefined when there is none.
LoopRV SplitLanes(Schedule& sch, std::vector<LoopRV>& spatial, const ScheduleOptions& opt) {
  LoopRV inner = spatial.back();
  const int64_t ext = ConstExtent(sch, inner);
  const int64_t f = LaneFactor(ext, opt);
  if (f == 0) return LoopRV();
  if (f == ext) {
    spatial.pop_back();
    return inner;
  }
  std::vector<LoopRV> parts = sch.split(inner, {-1, f});
  spatial.back() = parts[0];
  return parts[1];
}

// An elementwise-style block: vectorize its innermost (spatial) loop.
void VectorizeInner(Schedule& sch, std::vector<LoopRV>& spatial, const ScheduleOptions& opt) {
  try {
    LoopRV lane = SplitLanes(sch, spatial, opt);
    if (lane.defined()) sch.vectorize(lane);
  } catch (const ScheduleError&) {
    // Leave the loop serial: still correct.
  }
}

// A reduction block: the lane loop goes inside the reduction loops; the init is decomposed
// into its own block so both loops hold a single block and can be vectorized.
void VectorizeReduction(Schedule& sch, const BlockRV& block, std::vector<LoopRV>& spatial,
                        const std::vector<LoopRV>& reduction, const ScheduleOptions& opt) {
  try {
    LoopRV lane = SplitLanes(sch, spatial, opt);
    if (!lane.defined()) return;
    std::vector<LoopRV> order = reduction;
    order.push_back(lane);
    sch.reorder(order);
    BlockRV init = sch.decompose_reduction(block, reduction.front());
    sch.vectorize(lane);
    // The init's own lane loop (decompose_reduction re-creates the spatial loops under
    // `reduction.front()` for it); never one of the outer loops it shares with the update.
    std::vector<LoopRV> init_loops = sch.get_loops(init);
    if (init_loops.empty()) return;
    const ir::VarNode* v = sch.GetFor(init_loops.back())->loop_var.get_var();
    for (const LoopRV& l : spatial)
      if (sch.GetFor(l)->loop_var.get_var() == v) return;
    sch.vectorize(init_loops.back());
  } catch (const ScheduleError&) {
    // Whatever was applied is a valid schedule; the rest stays serial.
  }
}

// Step 2 for one block: fuse + parallelize the outer spatial loops, vectorize the inner one.
void ScheduleMainBlock(Schedule& sch, const std::string& name, const ScheduleOptions& opt) {
  BlockRV block = sch.get_block(name);
  std::vector<LoopRV> loops = sch.get_loops(block);
  const tir::BlockRealizeNode* r = FindRealize(sch.func(), name);
  if (!r || loops.empty()) return;
  // The spatial loops outside any reduction loop.
  std::vector<LoopRV> spatial;
  const tir::IterVar* inner_iv = nullptr;
  for (const LoopRV& l : loops) {
    const tir::IterVar* iv = SpatialIterOf(r, sch.GetFor(l)->loop_var.get_var());
    if (!iv || ConstExtent(sch, l) < 0) break;
    spatial.push_back(l);
    inner_iv = iv;
  }
  if (spatial.empty()) return;

  std::vector<LoopRV> reduction(loops.begin() + spatial.size(), loops.end());
  bool reduction_loops_ok = true;
  for (const LoopRV& l : reduction) reduction_loops_ok &= IsReductionLoop(r, sch.GetFor(l)->loop_var.get_var());
  if (opt.vectorize && StoresContiguously(r->block_node(), *inner_iv)) {
    if (reduction.empty()) {
      VectorizeInner(sch, spatial, opt);
    } else if (opt.vectorize_reductions && reduction_loops_ok) {
      VectorizeReduction(sch, block, spatial, reduction, opt);
    }
  }

  if (!opt.parallelize || spatial.empty()) return;
  size_t k = 1;
  int64_t prod = ConstExtent(sch, spatial[0]);
  while (prod < opt.min_parallel_extent && k < spatial.size()) prod *= ConstExtent(sch, spatial[k++]);
  LoopRV outer = spatial[0];
  if (k > 1) {
    try {
      outer = sch.fuse(std::vector<LoopRV>(spatial.begin(), spatial.begin() + k));
    } catch (const ScheduleError&) {
      outer = spatial[0];
    }
  }
  try {
    sch.parallel(outer);
  } catch (const ScheduleError&) {
  }
}

}  // namespace

tir::Schedule ScheduleDefault(const tir::PrimFunc& func, const ScheduleOptions& opt) {
  Schedule sch(UniquifyBlockNames(func));
  if (opt.inline_injective) InlineInjective(sch);
  // Blocks with their own x86 schedule (conv2d_nchwc.h) first; the rest get the default.
  std::set<std::string> handled = ScheduleConv2dNCHWc(sch, opt);
  for (const std::string& n : ScheduleGemmPacked(sch, opt)) handled.insert(n);  // dense.h
  std::vector<std::string> names;
  for (const auto* r : Realizes(sch.func())) {
    if (handled.count(r->block_node()->name_hint)) continue;
    // Only blocks directly under the root's loop nests; nested blocks (blockize) are left alone.
    names.push_back(r->block_node()->name_hint);
  }
  for (const std::string& n : names) ScheduleMainBlock(sch, n, opt);
  return sch;
}

tir::PrimFunc DefaultSchedule(const tir::PrimFunc& func, const ScheduleOptions& options) {
  return ScheduleDefault(func, options).func();
}

}  // namespace tessera::topi::x86
