#include "tessera/topi/x86/attention.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "tessera/ir/expr_functor.h"
#include "tessera/topi/nn/attention.h"
#include "tessera/topi/schedule_knobs.h"
#include "block_util.h"

namespace tessera::topi::x86 {

namespace {

constexpr const char* kSchedule = "attention";

// Whether `e` reads the variable `v`.
bool Uses(const PrimExpr& e, const ir::VarNode* v) {
  struct Finder : ir::ExprVisitor {
    const ir::VarNode* var = nullptr;
    bool found = false;
    void VisitExpr_(const ir::VarNode* op) override { found |= op == var; }
  } f;
  f.var = v;
  f.VisitExpr(e);
  return f.found;
}

// For each iter var of the block, the loop (after the first `shared`) whose variable its binding
// reads; nullopt for an iter var bound to no such loop (a span of one: a constant or the shared
// loop alone).
std::vector<std::optional<LoopRV>> LoopsOfIters(Schedule& sch, const std::string& name, size_t shared) {
  const BlockRV block = sch.get_block(name);
  const std::vector<LoopRV> loops = sch.get_loops(block);
  const tir::BlockRealizeNode* realize = FindRealize(sch.func(), name);
  std::vector<std::optional<LoopRV>> out(realize ? realize->iter_values.size() : 0);
  for (size_t l = shared; l < loops.size() && realize; ++l) {
    const ir::VarNode* var = sch.GetFor(loops[l])->loop_var.get_var();
    for (size_t i = 0; i < out.size(); ++i)
      if (!out[i] && Uses(realize->iter_values[i], var)) out[i] = loops[l];
  }
  return out;
}

// The lanes of a loop of `extent` vectorized without a guard: the full lane count, or half / a
// quarter of it, when that divides the extent; 0 when none does.
int64_t DividingLanes(int64_t extent, int64_t lanes) {
  for (int64_t l = lanes; l >= 4 && l >= lanes / 4; l /= 2)
    if (extent % l == 0) return l;
  return 0;
}

// The largest divisor of `n` in [1, hi].
int64_t LargestDivisorUpTo(int64_t n, int64_t hi) {
  for (int64_t d = std::min(n, hi); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

// The most rows of a micro-kernel tile (unrolled).
constexpr int64_t kMaxTileRows = 12;

// The micro-kernel's rows: the largest divisor of the block's rows whose accumulators
// (regs_per_row vector registers a row) leave 4 of the target's vector registers for the loads
// (AVX2: 12 of 16; AVX-512: 28 of 32), at most kMaxTileRows.
int64_t TileRows(int64_t rows, int64_t regs_per_row, const ScheduleOptions& opt) {
  const int64_t budget = std::max<int64_t>(1, (opt.vector_registers - 4) / regs_per_row);
  return LargestDivisorUpTo(rows, std::min(kMaxTileRows, budget));
}

// The query rows of a block when the knob is not set: a divisor of M in [12, 24] (the largest);
// else the divisor of M in [4, 64] nearest 16; else M itself when it is at most 64; else 16 (a
// guarded last block).
int64_t DefaultRows(int64_t m) {
  const std::vector<int64_t> mid = DivisorsInRange(m, 12, 24);
  if (!mid.empty()) return mid.back();
  int64_t best = 0;
  for (int64_t d : DivisorsInRange(m, 4, 64))
    if (best == 0 || std::abs(d - 16) < std::abs(best - 16)) best = d;
  if (best > 0) return best;
  return m <= 64 ? m : 16;
}

// Runs a schedule step; a refusal is reported (TESSERA_DEBUG_SCHEDULE) and returns false.
template <typename F>
bool Try(const char* step, F&& f) {
  try {
    f();
    return true;
  } catch (const ScheduleError& err) {
    DebugRefusedStep(kSchedule, step, err);
    return false;
  }
}

// A micro-kernel under the block loop: loops (i: rows, n: the lane dim, r: the reduction) become
//   for n / lanes (when `n_outside`), for i / mr, [for n / lanes], init; for r: unroll mr, [unroll n
//   vectors], vectorize lanes
// T_attn_score runs its j panels outside the row tiles (k_t's panel stays in L1 across rows),
// T_attn_pv keeps all Dv lanes of a row tile in registers (n inside, whole).
void MicroKernel(Schedule& sch, const std::string& name, const LoopRV& i, const LoopRV& n, const LoopRV& r,
                 int64_t mr, int64_t lanes, bool n_outside, const ScheduleOptions& opt) {
  const BlockRV block = sch.get_block(name);
  const int64_t rows = ConstExtent(sch, i), n_ext = ConstExtent(sch, n);
  LoopRV io = i, ii = i;
  bool row_tile = false;
  if (mr > 1 && mr < rows) row_tile = Try("split rows", [&] {
    const std::vector<LoopRV> s = sch.split(i, {-1, mr});
    io = s[0];
    ii = s[1];
  });
  LoopRV no = n, nv = n, nl = n;
  bool vectors = false, lane_loop = false;
  if (lanes > 0 && n_ext > lanes) {
    if (n_outside) {
      lane_loop = Try("split lanes", [&] {
        const std::vector<LoopRV> s = sch.split(n, {-1, lanes});
        no = s[0];
        nl = s[1];
      });
    } else {
      lane_loop = vectors = Try("split lanes", [&] {
        const std::vector<LoopRV> s = sch.split(n, {-1, lanes});
        nv = s[0];
        nl = s[1];
      });
    }
  } else {
    lane_loop = lanes > 0;
  }
  // The rows inside the reduction (unrolled) when they are a tile, outside it when mr is 1.
  const bool rows_inside = row_tile || (mr > 1 && mr == rows);
  std::vector<LoopRV> order;
  if (n_outside && lane_loop && n_ext > lanes) order.push_back(no);
  if (row_tile) order.push_back(io);
  else if (!rows_inside) order.push_back(i);
  order.push_back(r);
  if (rows_inside) order.push_back(ii);
  if (vectors) order.push_back(nv);
  order.push_back(nl);
  if (!Try("reorder", [&] { sch.reorder(order); })) return;
  std::optional<BlockRV> init;
  Try("decompose_reduction", [&] { init = sch.decompose_reduction(block, r); });
  if (rows_inside) Try("unroll rows", [&] { sch.unroll(ii); });
  if (vectors) Try("unroll vectors", [&] { sch.unroll(nv); });
  if (opt.vectorize && lane_loop) Try("vectorize", [&] { sch.vectorize(nl); });
  if (init && opt.vectorize && lane_loop) {
    const std::vector<LoopRV> il = sch.get_loops(*init);
    if (!il.empty()) Try("vectorize init", [&] { sch.vectorize(il.back()); });
  }
}

}  // namespace

std::set<std::string> ScheduleAttention(Schedule& sch, const ScheduleOptions& opt) {
  const std::vector<std::string> producers = {kAttentionPV, kAttentionSum, kAttentionExp, kAttentionMax,
                                              kAttentionScore};
  if (!FindRealize(sch.func(), kAttentionOut)) return {};
  // The default schedule's inlining runs first; without it (inline_injective off) inline it here.
  if (FindRealize(sch.func(), kAttentionLogit))
    Try("inline logit", [&] { sch.compute_inline(sch.get_block(kAttentionLogit)); });

  // T_attn: batch.., i, d. The query block loop: fuse(batch.., i / rows).
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block(kAttentionOut));
  if (loops.size() < 2) return {};
  const LoopRV i = loops[loops.size() - 2];
  const int64_t m = ConstExtent(sch, i);
  if (m < 1) return {};
  std::vector<int64_t> candidates = {4, 8, 12, 16, 24, 32, 48, 64};
  for (int64_t d : DivisorsInRange(m, 4, 64)) candidates.push_back(d);
  const int64_t rows = std::min(m, Knob(opt.knobs, std::string(kAttentionOut) + ".rows", candidates, DefaultRows(m)));
  std::vector<LoopRV> batch(loops.begin(), loops.end() - 2);
  // The block loop: fuse(batch.., i / rows) when rows divide M; else the blocks of one batch entry
  // run serially under the parallel batch loop (if any), where LoopPartition splits the guarded
  // last block off (a guard on a fused parallel loop would stay in every block).
  std::optional<LoopRV> io;
  if (rows < m) {
    std::vector<LoopRV> s;
    if (!Try("split query rows", [&] { s = sch.split(i, {-1, rows}); })) return {};
    io = s[0];
  }
  std::vector<LoopRV> parallel_loops = batch;
  const bool serial_blocks = io && m % rows != 0;
  if (io && !serial_blocks) parallel_loops.push_back(*io);
  std::optional<LoopRV> par;
  if (!parallel_loops.empty()) {
    par = parallel_loops[0];
    if (parallel_loops.size() > 1 && !Try("fuse", [&] { par = sch.fuse(parallel_loops); })) return {};
  }
  if (!serial_blocks && !par) return {};  // one block of every row and no batch: the default does as well
  const LoopRV block = serial_blocks ? *io : *par;

  std::set<std::string> moved{kAttentionOut};
  for (const std::string& p : producers) {
    if (!Try("compute_at", [&] { sch.compute_at(sch.get_block(p), block); })) break;  // the rest stay out
    moved.insert(p);
  }
  const size_t shared = serial_blocks && par ? 2 : 1;  // the loops down to the block loop
  // The scores: iter vars batch.., i, j, k.
  if (moved.count(kAttentionScore)) {
    const auto l = LoopsOfIters(sch, kAttentionScore, shared);
    const size_t nb = l.size() >= 3 ? l.size() - 3 : 0;
    if (l.size() >= 3 && l[nb] && l[nb + 1] && l[nb + 2]) {
      const int64_t lanes = opt.vector_lanes, regs_per_row = std::max<int64_t>(1, lanes / opt.register_lanes);
      const int64_t mr = Knob(opt.knobs, std::string(kAttentionScore) + ".mr", DivisorsInRange(rows, 1, kMaxTileRows),
                              TileRows(rows, regs_per_row, opt));
      MicroKernel(sch, kAttentionScore, *l[nb], *l[nb + 1], *l[nb + 2], mr, lanes, true, opt);
    }
  }
  // exp x v: iter vars batch.., i, d, j.
  if (moved.count(kAttentionPV)) {
    const auto l = LoopsOfIters(sch, kAttentionPV, shared);
    const size_t nb = l.size() >= 3 ? l.size() - 3 : 0;
    if (l.size() >= 3 && l[nb] && l[nb + 1] && l[nb + 2]) {
      const int64_t dv = ConstExtent(sch, *l[nb + 1]);
      const int64_t lanes = DividingLanes(dv, opt.vector_lanes);
      const int64_t regs_per_row =
          lanes > 0 ? std::max<int64_t>(1, dv / opt.register_lanes) : std::max<int64_t>(1, dv);
      const int64_t mr = Knob(opt.knobs, std::string(kAttentionPV) + ".mr", DivisorsInRange(rows, 1, kMaxTileRows),
                              TileRows(rows, regs_per_row, opt));
      MicroKernel(sch, kAttentionPV, *l[nb], *l[nb + 1], *l[nb + 2], mr, lanes, false, opt);
    }
  }
  // The softmax and the normalization: every loop but the innermost (j, or d for T_attn) is the
  // block loop or a row of it.
  for (const char* b : {kAttentionMax, kAttentionExp, kAttentionSum, kAttentionOut}) {
    if (!moved.count(b)) continue;
    const size_t n = sch.get_loops(sch.get_block(b)).size();
    if (n >= 2) ScheduleBlockUnderRow(sch, b, opt, n - 1);
  }
  if (opt.parallelize && par) Try("parallel", [&] { sch.parallel(*par); });
  return moved;
}

AnchorSchedule AttentionAnchor() {
  AnchorSchedule a;
  a.name = kSchedule;
  a.apply = [](tir::Schedule& sch, const ScheduleOptions& opt) { return ScheduleAttention(sch, opt); };
  return a;
}

}  // namespace tessera::topi::x86
