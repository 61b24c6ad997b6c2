#include "tessera/topi/x86/schedule.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/op.h"
#include "tessera/tir/functor.h"
#include "tessera/topi/target_layout.h"
#include "tessera/topi/x86/add_rfactor.h"
#include "tessera/topi/x86/attention.h"
#include "tessera/topi/x86/compute_location.h"
#include "tessera/topi/x86/conv2d_nchwc.h"
#include "tessera/topi/x86/dense.h"
#include "tessera/topi/x86/multi_level_tiling.h"
#include "tessera/topi/x86/winograd.h"

#include "block_util.h"

namespace tessera::topi::x86 {

namespace {

std::vector<const tir::BlockRealizeNode*> Realizes(const tir::PrimFunc& f) { return NonRootRealizes(f); }

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

// The loads in a statement, in visiting order; only those of `buffer` when it is given.
std::vector<const tir::BufferLoadNode*> LoadsIn(const tir::Stmt& s, const tir::BufferNode* buffer = nullptr) {
  struct Loads : public tir::StmtExprVisitor {
    const tir::BufferNode* buffer;
    std::vector<const tir::BufferLoadNode*> all;
    void VisitExpr_(const tir::BufferLoadNode* op) override {
      if (!buffer || op->buffer.get() == buffer) all.push_back(op);
      tir::StmtExprVisitor::VisitExpr_(op);
    }
  } loads;
  loads.buffer = buffer;
  loads.VisitStmt(s);
  return loads.all;
}

// Whether a block calls an expensive intrinsic (exp, log, tanh, erf, ...; not fabs, floor,
// sqrt and the like, which cost about as much as a load).
bool CallsTranscendental(const tir::BlockNode* b) {
  struct Calls : public tir::StmtExprVisitor {
    bool found = false;
    void VisitExpr_(const ir::CallNode* op) override {
      static const std::set<std::string> cheap = {"fabs", "floor", "ceil", "round", "trunc", "fma", "sqrt", "rsqrt"};
      found |= !cheap.count(op->op);
      tir::StmtExprVisitor::VisitExpr_(op);
    }
  } calls;
  calls.VisitStmt(b->body);
  return calls.found;
}

// The number of blocks other than `b` that read what `b` writes.
int ConsumerCount(const tir::PrimFunc& f, const tir::BlockNode* b) {
  if (b->writes.empty()) return 0;
  int n = 0;
  for (const auto* other : NonRootBlocks(f))
    n += other != b && !LoadsIn(other->body, b->writes[0].buffer.get()).empty();
  return n;
}

// Step 1: inline every spatial-only intermediate block that compute_inline accepts, except
// one that calls a transcendental and is read by two or more blocks (softmax's exp, read by
// the sum and the division): inlining would compute it once per consumer.
void InlineInjective(Schedule& sch, const std::vector<AnchorSchedule>& anchors) {
  auto kept = [&](const std::string& name) {
    for (const AnchorSchedule& a : anchors)
      if (a.keep_stage && a.keep_stage(name)) return true;
    return false;
  };
  std::set<std::string> refused;
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto* r : Realizes(sch.func())) {
      const tir::BlockNode* b = r->block_node();
      if (refused.count(b->name_hint) || IsReduction(b) || WritesParam(sch.func(), b)) continue;
      if (kept(b->name_hint)) continue;  // a stage of an anchor's template (the NCHWc padding, ...)
      if (CallsTranscendental(b) && ConsumerCount(sch.func(), b) >= 2) continue;
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
// The lane count is the tuning knob "<block>.lanes" (0: serial).
LoopRV SplitLanes(Schedule& sch, const std::string& block, std::vector<LoopRV>& spatial, const ScheduleOptions& opt) {
  LoopRV inner = spatial.back();
  const int64_t ext = ConstExtent(sch, inner);
  if (ext < 0) {
    // A symbolic extent (dynamic shapes): lanes of the full width with a tail, which
    // LoopPartition splits off (the main part's vectors need no predicate).
    const int64_t f = Knob(opt.knobs, block + ".lanes", {0, opt.vector_lanes}, opt.vector_lanes);
    if (f < 2) return LoopRV();
    std::vector<LoopRV> parts = sch.split(inner, {-1, f});
    spatial.back() = parts[0];
    return parts[1];
  }
  std::vector<int64_t> lanes = {0};
  for (int64_t f = 4; f <= 64 && f < ext; f *= 2) lanes.push_back(f);
  if (ext > 1 && ext <= 64) lanes.push_back(ext);
  int64_t fallback = LaneFactor(ext, opt);
  // A long loop the full width does not divide (softmax over 1500 keys): full-width lanes and a
  // tail, which LoopPartition splits off, rather than a quarter of the width all along.
  if (fallback < opt.vector_lanes && ext >= 4 * opt.vector_lanes) fallback = opt.vector_lanes;
  const int64_t f = Knob(opt.knobs, block + ".lanes", lanes, fallback);
  if (f == 0) return LoopRV();
  if (f == ext) {
    spatial.pop_back();
    return inner;
  }
  std::vector<LoopRV> parts = sch.split(inner, {-1, f});
  spatial.back() = parts[0];
  return parts[1];
}

// Whether a block converts an integer expression of the iter var `iv` to floating point: a
// coordinate computed from the output index (resize, grid sample, RoI align), whose float math,
// rounding and clamping are the same for every row and channel.
bool ComputesFloatCoordinateOf(const tir::BlockNode* b, const ir::VarNode* iv) {
  struct Casts : public tir::StmtExprVisitor {
    const ir::VarNode* iv;
    bool found = false, uses = false;
    void VisitExpr_(const ir::CastNode* op) override {
      if (op->dtype.is_floating() && !op->value.dtype().is_floating()) {
        uses = false;
        tir::StmtExprVisitor::VisitExpr(op->value);
        found |= uses;
      }
      tir::StmtExprVisitor::VisitExpr_(op);
    }
    void VisitExpr_(const ir::VarNode* op) override { uses |= op == iv; }
  } casts;
  casts.iv = iv;
  casts.VisitStmt(b->body);
  return casts.found;
}

// An elementwise-style block: vectorize its innermost (spatial) loop. When the block computes a
// float coordinate from the innermost index (a resize along W) and the lanes leave at most 16
// iterations of that loop, those are unrolled: each copy's coordinates, weights and clamped
// indices fold to constants instead of being recomputed per row and channel (DeepLabV3's final
// 14 -> 224 bilinear resize).
void VectorizeInner(Schedule& sch, const std::string& block, std::vector<LoopRV>& spatial, const ScheduleOptions& opt) {
  try {
    LoopRV lane = SplitLanes(sch, block, spatial, opt);
    if (!lane.defined()) return;
    sch.vectorize(lane);
    const int64_t rest = spatial.size() > 1 ? ConstExtent(sch, spatial.back()) : 0;
    const tir::BlockRealizeNode* r = FindRealize(sch.func(), block);
    const tir::BlockNode* b = r ? r->block_node() : nullptr;
    if (rest > 1 && rest <= 16 && b && !b->iter_vars.empty() &&
        ComputesFloatCoordinateOf(b, b->iter_vars.back().var.get_var())) {
      sch.unroll(spatial.back());
      spatial.pop_back();
    }
  } catch (const ScheduleError&) {
    // Leave the loop serial: still correct.
  }
}

// A reduction block: the lane loop goes inside the reduction loops; the init is decomposed
// into its own block so both loops hold a single block and can be vectorized.
void VectorizeReduction(Schedule& sch, const BlockRV& block, std::vector<LoopRV>& spatial,
                        const std::vector<LoopRV>& reduction, const ScheduleOptions& opt) {
  try {
    LoopRV lane = SplitLanes(sch, sch.GetBlock(block)->name_hint, spatial, opt);
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

// How much an index advances when `v` does: e(v + 1) - e(v), simplified.
PrimExpr Step(const PrimExpr& e, const tir::IterVar& v) {
  arith::Analyzer an;
  return an.Simplify(tir::Substitute(e, {{v.var.get_var(), v.var + 1}}) - e);
}

// Whether a reduction reads along its innermost reduction loop and not along its innermost
// spatial one: some load that changes in the reduction is contiguous in `red`, and none is
// contiguous in `spatial` (a row sum, softmax's max and sum, layer norm's mean; not a matmul,
// whose B[k, j] is contiguous in j). Vectorizing the spatial loop would gather with a stride.
// The indices are first simplified within the iter vars' domains, so a reshape inlined into the
// reduction (x[(i * 4096 + k) // 4096, (i * 4096 + k) % 4096] for k < 4096) reads as x[i, k].
bool ReducesAlongRows(const tir::BlockRealizeNode* r, const tir::IterVar* spatial, const tir::IterVar& red) {
  const tir::BlockNode* b = r->block_node();
  const auto* store = b->body.as<tir::BufferStoreNode>();
  if (!store) return false;
  arith::Analyzer an;
  for (const tir::IterVar& iv : b->iter_vars) an.Bind(iv.var, iv.dom);
  auto unit_stride = [](const PrimExpr& index, const tir::IterVar& v) {
    const PrimExpr step = Step(index, v);
    const auto* c = step.as<ir::IntImmNode>();
    return c && c->value == 1;
  };
  bool along_red = false;
  for (const auto* l : LoadsIn(b->body)) {
    if (l->buffer.same_as(store->buffer) || l->indices.empty()) continue;
    std::vector<PrimExpr> indices;
    for (const PrimExpr& x : l->indices) indices.push_back(an.Simplify(x));
    bool varies = false;
    for (const auto& x : indices) varies |= !ir::is_zero(Step(x, red));
    if (!varies) continue;  // invariant in the reduction: read once per output
    if (spatial && unit_stride(indices.back(), *spatial)) return false;
    along_red |= unit_stride(indices.back(), red);
  }
  return along_red;
}

// A reduction along rows (ReducesAlongRows): the innermost reduction loop is split by the
// lane count and rfactor-ed (TensorIR §3.3), so each output keeps `lanes` partial results,
// read with contiguous vector loads; the write-back combines them (lanes scalar steps per
// output). A long row that the full lane count does not divide (softmax over 799 or 1500 keys)
// or whose length the run decides gets full-width lanes and a predicated tail, which
// LoopPartition splits off (the tail's lanes, never visited, keep the reducer's identity from
// the init). Returns false, leaving the block as it was, when the row is too short for that
// and a lane count that divides it is under 4.
bool RfactorRows(Schedule& sch, const BlockRV& block, const std::vector<LoopRV>& reduction, const ScheduleOptions& opt) {
  const LoopRV inner = reduction.back();
  const int64_t ext = ConstExtent(sch, inner);  // -1: symbolic
  int64_t f = LaneFactor(ext, opt);
  // A long row the full width does not divide takes the full width and a tail, even where a
  // narrower lane count divides it (1500 = 375 x 4): 16 partial results, not 4, per step.
  const bool tail = ext < 0 || (f > 0 && ext % opt.vector_lanes != 0 && ext >= 4 * opt.vector_lanes);
  if (tail) f = opt.vector_lanes;
  if (f < 4 || (!tail && ext % f != 0)) return false;
  try {
    LoopRV lane = inner, first = reduction.front();
    if (ext < 0 || f < ext) {
      std::vector<LoopRV> parts = sch.split(inner, {-1, f});
      lane = parts[1];
      if (reduction.size() == 1) first = parts[0];
    }
    BlockRV rf = sch.rfactor(lane, -1);
    BlockRV init = sch.decompose_reduction(rf, first);
    sch.vectorize(lane);
    sch.vectorize(sch.get_loops(init).back());
  } catch (const ScheduleError&) {
    // Whatever was applied is a valid schedule; the rest stays serial.
  }
  return true;
}

bool ScheduleScan(Schedule& sch, const std::string& name, const ScheduleOptions& opt);
void ParallelizeOuter(Schedule& sch, const std::string& name, const std::vector<LoopRV>& spatial,
                      const ScheduleOptions& opt);

// Step 2 for one block: fuse + parallelize the outer spatial loops, vectorize the inner one.
// The first `shared` loops are a row loop the block shares with others (ScheduleRows): they
// are neither vectorized nor parallelized here.
void ScheduleMainBlock(Schedule& sch, const std::string& name, const ScheduleOptions& opt, size_t shared = 0) {
  BlockRV block = sch.get_block(name);
  std::vector<LoopRV> loops = sch.get_loops(block);
  const tir::BlockRealizeNode* r = FindRealize(sch.func(), name);
  if (!r || loops.size() <= shared) return;
  if (shared == 0 && ScheduleScan(sch, name, opt)) return;
  loops.erase(loops.begin(), loops.begin() + static_cast<long>(shared));
  // The spatial loops outside any reduction loop.
  std::vector<LoopRV> spatial;
  const tir::IterVar* inner_iv = nullptr;
  for (const LoopRV& l : loops) {
    const tir::IterVar* iv = SpatialIterOf(r, sch.GetFor(l)->loop_var.get_var());
    if (!iv) break;  // symbolic extents are spatial loops too (parallelized, lanes with a tail)
    spatial.push_back(l);
    inner_iv = iv;
  }
  std::vector<LoopRV> reduction(loops.begin() + spatial.size(), loops.end());
  bool reduction_loops_ok = true;
  for (const LoopRV& l : reduction) reduction_loops_ok &= IsReductionLoop(r, sch.GetFor(l)->loop_var.get_var());
  // No spatial loop: only a reduction over the whole input (a sum to one number) is vectorized.
  if (spatial.empty() && shared == 0 && (reduction.empty() || !reduction_loops_ok)) return;
  const tir::IterVar* red_iv =
      reduction.empty() ? nullptr : IterOf(r, sch.GetFor(reduction.back())->loop_var.get_var());
  if (opt.vectorize && opt.vectorize_reductions && reduction_loops_ok && red_iv &&
      ReducesAlongRows(r, inner_iv, *red_iv) && RfactorRows(sch, block, reduction, opt)) {
    // vectorized along the reduction; the spatial loops are parallelized below
  } else if (opt.vectorize && inner_iv && StoresContiguously(r->block_node(), *inner_iv)) {
    if (reduction.empty()) {
      VectorizeInner(sch, name, spatial, opt);
    } else if (opt.vectorize_reductions && reduction_loops_ok) {
      VectorizeReduction(sch, block, spatial, reduction, opt);
    }
  }

  if (!opt.parallelize || spatial.empty() || shared > 0) return;
  ParallelizeOuter(sch, name, spatial, opt);
}

// Whether the block has a scan (ordered) iter var: te::scan.
bool IsScan(const tir::BlockNode* b) {
  for (const auto& iv : b->iter_vars)
    if (iv.iter_type == tir::IterVarType::kOrdered) return true;
  return false;
}

// A scan block (te::scan) without reduction: its ordered loop stays serial. The spatial loops
// move outside it and are parallelized, except the innermost loop when it is spatial and the
// store is contiguous in it: that one stays inside the ordered loop and is vectorized (a prefix
// sum along rows computes a whole row of lanes per step). Returns false when the block is no
// such scan (a scan with a reduction keeps the per-block schedule, which parallelizes the spatial
// loops outside the ordered one).
bool ScheduleScan(Schedule& sch, const std::string& name, const ScheduleOptions& opt) {
  const tir::BlockRealizeNode* r = FindRealize(sch.func(), name);
  if (!r || !IsScan(r->block_node()) || r->block_node()->init.defined()) return false;
  BlockRV block = sch.get_block(name);
  std::vector<LoopRV> loops = sch.get_loops(block), outer;
  LoopRV ordered, lane;
  for (size_t k = 0; k < loops.size(); ++k) {
    const tir::IterVar* iv = IterOf(r, sch.GetFor(loops[k])->loop_var.get_var());
    if (!iv) return false;  // a fused or split binding: left serial
    if (iv->iter_type == tir::IterVarType::kOrdered) ordered = loops[k];
    else if (k + 1 == loops.size() && opt.vectorize && StoresContiguously(r->block_node(), *iv)) lane = loops[k];
    else outer.push_back(loops[k]);
  }
  std::vector<LoopRV> order = outer;
  order.push_back(ordered);
  if (lane.defined()) order.push_back(lane);
  try {
    sch.reorder(order);
  } catch (const ScheduleError&) {
    return true;  // left as created: serial, still correct
  }
  if (lane.defined()) {
    std::vector<LoopRV> inner{lane};
    VectorizeInner(sch, name, inner, opt);
  }
  if (opt.parallelize && !outer.empty()) ParallelizeOuter(sch, name, outer, opt);
  return true;
}

// Fuses the leading loops of `spatial` until their iterations reach the parallel extent and
// parallelizes the fused loop (failures leave the loops serial).
void ParallelizeOuter(Schedule& sch, const std::string& name, const std::vector<LoopRV>& spatial,
                      const ScheduleOptions& opt) {
  // Tuning knob "<block>.parallel_extent": fuse outer loops until this many iterations.
  const int64_t min_extent =
      Knob(opt.knobs, name + ".parallel_extent", {1, 4, 16, 64, 256, 1024}, opt.min_parallel_extent);
  // A symbolic extent counts as enough (it is a sequence length or a batch, not known here).
  auto extent = [&](const LoopRV& l) {
    const int64_t e = ConstExtent(sch, l);
    return e < 0 ? std::max<int64_t>(min_extent, 1) : e;
  };
  size_t k = 1;
  int64_t prod = extent(spatial[0]);
  while (prod < min_extent && k < spatial.size()) prod *= extent(spatial[k++]);
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

// A block's leading loops that are bound directly to spatial iter vars and have constant
// extents (up to the first other loop): their loop vars and extents.
// Extents are expressions: a symbolic one (dynamic shapes) is a row dimension too when every
// block has the same one.
struct LeadingLoops {
  const tir::BlockRealizeNode* realize = nullptr;  ///< nullptr when the block is not found
  std::vector<const ir::VarNode*> vars;
  std::vector<PrimExpr> extents;
};

LeadingLoops LeadingSpatialLoops(Schedule& sch, const std::string& name) {
  LeadingLoops out;
  out.realize = FindRealize(sch.func(), name);
  if (!out.realize) return out;
  for (const LoopRV& l : sch.get_loops(sch.get_block(name))) {
    const tir::ForNode* f = sch.GetFor(l);
    const ir::VarNode* v = f->loop_var.get_var();
    if (!SpatialIterOf(out.realize, v)) break;
    if (ConstExtent(sch, l) < 0 && !f->extent.as<ir::VarNode>()) break;  // only a bare shape var
    out.vars.push_back(v);
    out.extents.push_back(f->extent);
  }
  return out;
}

bool SameExtent(const PrimExpr& a, const PrimExpr& b) {
  int64_t x = 0, y = 0;
  if (ir::as_const_int(a, &x) && ir::as_const_int(b, &y)) return x == y;
  return a.same_as(b);
}

// Whether an access (a store's or a load's indices) in the block of `r` indexes the first
// dimensions by the iter vars bound to the block's row loops, in order (or by 0 where the row
// extent is 1: a broadcast dimension).
bool RowAligned(const tir::BlockRealizeNode* r, const std::vector<const ir::VarNode*>& row_loops,
                const std::vector<PrimExpr>& rows, const std::vector<PrimExpr>& indices) {
  if (indices.size() < row_loops.size()) return false;
  const tir::BlockNode* b = r->block_node();
  for (size_t d = 0; d < row_loops.size(); ++d) {
    if (ir::is_one(rows[d]) && ir::is_zero(indices[d])) continue;
    const ir::VarNode* v = indices[d].as<ir::VarNode>();
    bool ok = false;
    for (size_t i = 0; v && i < b->iter_vars.size(); ++i)
      ok |= b->iter_vars[i].var.get_var() == v && r->iter_values[i].get() == row_loops[d];
    if (!ok) return false;
  }
  return true;
}

// Step 2 for a kernel of several blocks over the same rows (softmax: max, exp, sum, divide;
// layer norm: mean, variance, normalize), where each block reads what the earlier ones
// wrote only in the same row: the leading spatial loops of the last block are fused into a
// row loop, every earlier block is compute_at that loop (TensorIR §3.3), so one row is
// finished while it is in L1 and its intermediates shrink to one row, and the row loop is
// parallelized. Under it each block is vectorized as in ScheduleMainBlock (reductions along
// the row are rfactor-ed). The row never takes the last block's innermost spatial loop (a pool's
// window reduction and its divide share every spatial loop: the lanes stay under the row).
// Returns `names` when it scheduled them; none (and nothing changed) when the kernel is not of
// that form.
std::vector<std::string> ScheduleRows(Schedule& sch, const std::vector<std::string>& names, const ScheduleOptions& opt) {
  if (names.size() < 2) return {};
  bool any_reduction = false;
  std::vector<LeadingLoops> blocks;
  for (const std::string& n : names) {
    blocks.push_back(LeadingSpatialLoops(sch, n));
    if (!blocks.back().realize) return {};
    any_reduction |= IsReduction(blocks.back().realize->block_node());
  }
  // The rows: the leading extents every block shares.
  const std::vector<PrimExpr>& rows = blocks[0].extents;
  size_t m = rows.size();
  for (const LeadingLoops& b : blocks) {
    size_t k = 0;
    while (k < m && k < b.extents.size() && SameExtent(b.extents[k], rows[k])) ++k;
    m = k;
  }
  // A reduction over axes of its own (a pool's window, a global pool) has every spatial loop of
  // its consumer: keep the innermost one out of the row, for the vector lanes under it.
  if (m > 0 && m == blocks.back().extents.size()) --m;
  if (!any_reduction || m == 0) return {};
  int64_t count = 1;
  bool symbolic = false;
  for (size_t d = 0; d < m; ++d) {
    int64_t e = 0;
    if (ir::as_const_int(rows[d], &e)) count *= e;
    else symbolic = true;  // a sequence length or batch: assumed long enough
  }
  if (!symbolic && count < opt.min_parallel_extent) return {};
  for (LeadingLoops& b : blocks) b.vars.resize(m);
  // Every buffer a block writes is stored and read (by the later blocks) in its own row only.
  for (size_t i = 0; i < blocks.size(); ++i) {
    const auto* st = blocks[i].realize->block_node()->body.as<tir::BufferStoreNode>();
    if (!st || !RowAligned(blocks[i].realize, blocks[i].vars, rows, st->indices)) return {};
    for (size_t j = i + 1; j < blocks.size(); ++j)
      for (const auto* l : LoadsIn(blocks[j].realize->block_node()->body, st->buffer.get()))
        if (!RowAligned(blocks[j].realize, blocks[j].vars, rows, l->indices)) return {};
  }
  std::vector<LoopRV> last = sch.get_loops(sch.get_block(names.back()));
  LoopRV row = last[0];
  if (m > 1) {
    try {
      row = sch.fuse(std::vector<LoopRV>(last.begin(), last.begin() + static_cast<long>(m)));
    } catch (const ScheduleError&) {
      return {};  // nothing changed: the blocks get the per-block schedule
    }
  }
  // A producer that cannot move stays in its own nest (and so do the ones before it).
  std::set<std::string> moved{names.back()};
  for (size_t i = names.size() - 1; i-- > 0;) {
    try {
      sch.compute_at(sch.get_block(names[i]), row);
      moved.insert(names[i]);
    } catch (const ScheduleError&) {
    }
  }
  for (const std::string& n : names) ScheduleMainBlock(sch, n, opt, moved.count(n) ? 1 : 0);
  try {
    if (opt.parallelize) sch.parallel(row);
  } catch (const ScheduleError&) {
  }
  return names;
}

// Dynamic shapes: a reduction over a symbolic extent may be empty (n = 0), and an init left in
// the block runs at the first reduction iteration (LowerInitBlock), i.e. never. Every block that
// still has its init and reduces over a symbolic domain gets it decomposed before its first
// reduction loop, so the output is initialized whatever the extent.
void DecomposeSymbolicReductions(Schedule& sch) {
  for (const auto* r : Realizes(sch.func())) {
    const tir::BlockNode* b = r->block_node();
    if (!b->init.defined()) continue;
    bool symbolic = false;
    for (const auto& iv : b->iter_vars)
      symbolic |= iv.iter_type == tir::IterVarType::kCommReduce && !iv.dom.extent.as<ir::IntImmNode>();
    if (!symbolic) continue;
    try {
      BlockRV block = sch.get_block(b->name_hint);
      for (const LoopRV& l : sch.get_loops(block)) {
        if (IsReductionLoop(r, sch.GetFor(l)->loop_var.get_var())) {
          sch.decompose_reduction(block, l);
          break;
        }
      }
    } catch (const ScheduleError&) {
      // Left as it is: correct for every non-empty extent.
    }
  }
}

}  // namespace

void ScheduleBlockUnderRow(Schedule& sch, const std::string& name, const ScheduleOptions& opt, size_t shared) {
  ScheduleMainBlock(sch, name, opt, shared);
}

void ScheduleBlockDefault(Schedule& sch, const std::string& name, const ScheduleOptions& opt) {
  ScheduleMainBlock(sch, name, opt, 0);
}

ScheduleOptions ScheduleOptionsFor(const target::Target& target) {
  ScheduleOptions opt;
  opt.vector_lanes = static_cast<int>(BlockLanes(target, 32));
  opt.register_lanes = target.VectorLanes(32);
  opt.vector_registers = target.vector_registers;
  if (target.cache.l2_bytes > 0) opt.l2_bytes = target.cache.l2_bytes;
  return opt;
}

std::vector<AnchorSchedule> CpuAnchorSchedules() {
  return {Conv2dNCHWcAnchor(), GemmPackedAnchor(), WinogradAnchor(), AttentionAnchor()};
}

tir::Schedule ScheduleDefault(const tir::PrimFunc& func, const ScheduleOptions& opt) {
  return ScheduleDefault(func, opt, CpuAnchorSchedules());
}

tir::Schedule ScheduleDefault(const tir::PrimFunc& func, const ScheduleOptions& opt,
                              const std::vector<AnchorSchedule>& anchors) {
  Schedule sch(UniquifyBlockNames(func));
  if (opt.inline_injective) InlineInjective(sch, anchors);
  // Blocks with their own template schedule first; the rest get the default.
  std::set<std::string> handled;
  for (const AnchorSchedule& a : anchors)
    for (const std::string& n : a.apply(sch, opt)) handled.insert(n);
  std::vector<std::string> names;
  for (const auto* r : Realizes(sch.func())) {
    if (handled.count(r->block_node()->name_hint)) continue;
    // Only blocks directly under the root's loop nests; nested blocks (blockize) are left alone.
    names.push_back(r->block_node()->name_hint);
  }
  // Tuning knob "<block>.rule": a schedule rule instead of steps 2 and 3 for a reduction block it
  // applies to: 1 MultiLevelTiling (multi_level_tiling.h), 2 AddRFactor (add_rfactor.h).
  std::map<std::string, int64_t> rule;
  for (const std::string& n : names) {
    std::vector<int64_t> rules = {0};
    if (MultiLevelTilingApplies(sch, n)) rules.push_back(1);
    if (AddRFactorApplies(sch, n, opt)) rules.push_back(2);
    if (rules.size() > 1) {
      const int64_t r = Knob(opt.knobs, n + ".rule", rules, AddRFactorByDefault(sch, n, opt) ? 2 : 0);
      if (r != 0) rule[n] = r;
    }
  }
  // Tuning knob "<block>.compute_at": a producer under one of its consumer's loops
  // (RandomComputeLocation, compute_location.h); such a block is scheduled there.
  std::vector<std::string> unruled;
  for (const std::string& n : names)
    if (!rule.count(n)) unruled.push_back(n);
  const std::set<std::string> moved = RandomComputeLocation(sch, unruled, opt);
  handled.insert(moved.begin(), moved.end());
  if (handled.empty() && rule.empty() && !ScheduleRows(sch, names, opt).empty()) {
    DecomposeSymbolicReductions(sch);
    return sch;
  }
  for (const std::string& n : names) {
    if (handled.count(n)) continue;  // moved: a consumer onto its producer's tile, a producer under its consumer
    if (rule.count(n)) {
      const std::set<std::string> done = rule[n] == 1 ? MultiLevelTiling(sch, n, opt) : AddRFactor(sch, n, opt);
      handled.insert(done.begin(), done.end());
      if (!done.empty()) continue;
    }
    ScheduleMainBlock(sch, n, opt);
  }
  DecomposeSymbolicReductions(sch);
  return sch;
}

tir::PrimFunc DefaultSchedule(const tir::PrimFunc& func, const ScheduleOptions& options) {
  return ScheduleDefault(func, options).func();
}

}  // namespace tessera::topi::x86
