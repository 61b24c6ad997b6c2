#include "tessera/topi/x86/dense.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/op.h"
#include "tessera/topi/target_layout.h"
#include "tessera/tir/functor.h"
#include "block_util.h"

namespace tessera::topi::x86 {

namespace {

constexpr const char* kGemmName = "T_gemm_packed";
constexpr const char* kPackName = "T_pack_b";

std::vector<std::string> BlockNames(const tir::PrimFunc& f) {
  std::vector<std::string> out;
  for (const tir::BlockNode* b : NonRootBlocks(f)) out.push_back(b->name_hint);
  return out;
}

// Parallelizes the fusion of `loops` (or the first of them alone when fuse is refused).
void ParallelOuter(Schedule& sch, const std::vector<LoopRV>& loops) {
  if (loops.empty()) return;
  LoopRV outer = loops[0];
  if (loops.size() > 1) {
    try {
      outer = sch.fuse(loops);
    } catch (const ScheduleError&) {
    }
  }
  try {
    sch.parallel(outer);
  } catch (const ScheduleError&) {
  }
}

// T_pack_b: loops batch..., nb, k, l.
void SchedulePack(Schedule& sch, const std::string& name, const ScheduleOptions& opt) {
  BlockRV block = sch.get_block(name);
  std::vector<LoopRV> loops = sch.get_loops(block);
  if (loops.size() < 3) return;
  try {
    if (opt.vectorize) sch.vectorize(loops.back());
  } catch (const ScheduleError&) {
  }
  if (opt.parallelize) ParallelOuter(sch, std::vector<LoopRV>(loops.begin(), loops.end() - 2));
}

// T_gemm_packed: loops batch..., m..., n, k. Returns the epilogue it put under the tile loop
// (empty when none).
std::string ScheduleGemm(Schedule& sch, const std::string& name, const ScheduleOptions& opt) {
  BlockRV block = sch.get_block(name);
  const tir::BlockNode* b = sch.GetBlock(block);
  const std::string epilogue = IsParam(sch.func(), b->writes[0].buffer) ? "" : SoleReader(sch.func(), b);
  std::string fused;
  int64_t mr_want = IntAnnotation(b, "gemm_mr", 6), nv = IntAnnotation(b, "gemm_nv", 1);
  const int64_t nbatch = IntAnnotation(b, "gemm_batch", 0);
  const int64_t lanes = opt.vector_lanes;
  std::vector<LoopRV> loops = sch.get_loops(block);
  if (loops.size() < 2 + static_cast<size_t>(nbatch)) return fused;
  // Dynamic shapes: any loop may have a symbolic extent; rows are padded to a multiple of mr
  // and columns to a multiple of nv * lanes by the computes (dense_pack.h), K is not blocked.
  std::vector<LoopRV> batch(loops.begin(), loops.begin() + nbatch);
  // The row loops; those of extent 1 (batch 1 of a [1, S, K] x) stay where they are, so the
  // tile's row index is the one loop left and the epilogue's region under it is exact.
  std::vector<LoopRV> ms, units;
  for (auto it = loops.begin() + nbatch; it != loops.end() - 2; ++it)
    (ConstExtent(sch, *it) == 1 ? units : ms).push_back(*it);
  // Symbolic row dims (dynamic shapes: [batch, seq, K]): only the last one is padded to a multiple
  // of mr, so the rows are not fused; the ones before it are outer loops like the batch.
  bool symbolic_rows = false;
  for (const LoopRV& l : ms) symbolic_rows |= ConstExtent(sch, l) < 0;
  if (symbolic_rows && ms.size() > 1) {
    batch.insert(batch.end(), ms.begin(), ms.end() - 1);
    ms.erase(ms.begin(), ms.end() - 1);
  }
  LoopRV n = loops[loops.size() - 2], k = loops.back();
  // Several static row loops (a channels-last [1, 56, 56, C] activation): when a row tile near
  // the wanted one divides the innermost row loop, the tile takes rows of that loop only and
  // the outer row loops stay tile loops, so the epilogue's region under the tile is a box
  // (fusing the rows and splitting them by mr cuts tiles across rows: the epilogue cannot
  // follow the tile, which then accumulates in a global buffer instead of registers).
  int64_t rows_total = 1;  // -1: symbolic
  for (const LoopRV& l : ms) rows_total = rows_total < 0 || ConstExtent(sch, l) < 0 ? -1 : rows_total * ConstExtent(sch, l);
  std::vector<LoopRV> outer_rows;
  int64_t inner_rows = 0;
  if (rows_total > 0 && ms.size() > 1) {
    inner_rows = ConstExtent(sch, ms.back());
    int64_t d = std::min(mr_want, inner_rows);
    while (inner_rows % d != 0) --d;
    if (2 * d >= std::min(mr_want, rows_total)) mr_want = d;
    else inner_rows = 0;
  }
  try {
    LoopRV m;
    const int64_t n_ext = ConstExtent(sch, n);
    if (n_ext < 0) {
      // A symbolic N: the padded compute's extent is provably a multiple of nv * lanes.
      arith::Analyzer an;
      if (!ir::is_zero(an.Simplify(ir::floormod(sch.GetFor(n)->extent, ir::make_const(sch.GetFor(n)->extent.dtype(),
                                                                                       nv * lanes))))) {
        return fused;
      }
    } else if (n_ext % (nv * lanes) != 0) {
      return fused;  // not the padded compute: leave it to the default
    }
    // Tuning knobs (schedule_knobs.h): the micro-kernel's rows and column vectors. A row tile that
    // does not divide the rows leaves a predicated tail; the column vectors divide the padded N.
    // A symbolic row count counts as at least 12 rows (mr_want, the tile the compute padded to).
    auto m_extent = [&] { return rows_total < 0 ? std::max<int64_t>(12, mr_want) : rows_total; };
    if (!ms.empty()) {
      std::vector<int64_t> rows;
      for (int64_t r = 1; r <= std::min<int64_t>(m_extent(), 12); ++r) rows.push_back(r);
      mr_want = Knob(opt.knobs, name + ".mr", rows, std::min(mr_want, m_extent()));
    }
    bool rows_cut = false;  // the rows fused from several loops: a row tile may span two of them
    if (inner_rows > 0 && inner_rows % mr_want == 0) {
      outer_rows.assign(ms.begin(), ms.end() - 1);
      m = ms.back();
    } else if (ms.size() > 1) {
      m = sch.fuse(ms);
      rows_cut = true;
    } else if (ms.size() == 1) {
      m = ms[0];
    }
    const int64_t m_rows = outer_rows.empty() ? m_extent() : inner_rows;
    if (n_ext > 0) nv = Knob(opt.knobs, name + ".nv", DivisorsInRange(n_ext / lanes, 1, 4), nv);
    std::vector<LoopRV> ns = sch.split(n, {-1, nv, lanes});
    LoopRV no = ns[0], nvl = ns[1], nl = ns[2];
    std::vector<LoopRV> order = {no};
    LoopRV mo, mi;
    if (m.defined()) {
      const int64_t m_ext = m_rows;
      const int64_t mr = std::min(mr_want, m_ext);
      if (mr < m_ext || ConstExtent(sch, m) < 0) {
        std::vector<LoopRV> mm = sch.split(m, {-1, mr});
        mo = mm[0], mi = mm[1];
      } else {
        mi = m;
      }
    }
    // Tuning knob "kc" (GotoBLAS's K blocking): with several row tiles, the reduction in chunks of kc
    // outside the row tiles, so a chunk of the panel (kc x nv*16) stays in L1 for every row tile
    // instead of streaming the whole panel from L2 per tile; the C tiles then accumulate in memory
    // across chunks. The fallback is K: no blocking (the hand schedule).
    const int64_t k_ext = ConstExtent(sch, k);  // -1: symbolic, not blocked
    int64_t kc = k_ext;
    if ((mo.defined() || !outer_rows.empty()) && k_ext > 0) {
      std::vector<int64_t> chunks = DivisorsInRange(k_ext, 32, std::min<int64_t>(k_ext - 1, 1024));
      chunks.push_back(k_ext);
      kc = Knob(opt.knobs, name + ".kc", chunks, k_ext);
    }
    LoopRV k_outer = k;  // the loop the init is decomposed before (and parallelization stops at)
    if (kc < k_ext) {
      std::vector<LoopRV> ks = sch.split(k, {-1, kc});
      k_outer = ks[0];
      order.push_back(ks[0]);
      order.insert(order.end(), outer_rows.begin(), outer_rows.end());
      if (mo.defined()) order.push_back(mo);
      order.push_back(ks[1]);
    } else {
      order.insert(order.end(), outer_rows.begin(), outer_rows.end());
      if (mo.defined()) order.push_back(mo);
      order.push_back(k);
    }
    if (mi.defined()) order.push_back(mi);
    order.push_back(nvl);
    order.push_back(nl);
    sch.reorder(order);
    BlockRV init = sch.decompose_reduction(block, k_outer);
    if (opt.vectorize) sch.vectorize(nl);
    sch.unroll(nvl);
    if (mi.defined()) sch.unroll(mi);
    // The init's own tile loops (mi, nv, l) under the tile loop; with K blocking the init is
    // before the chunk loop and also has its copy of mo, which stays a loop.
    std::vector<LoopRV> il = sch.get_loops(init);
    const size_t outer = batch.size() + units.size() + 1 + outer_rows.size() + (mo.defined() ? 1 : 0);
    if (il.size() > outer) {
      if (opt.vectorize) sch.vectorize(il.back());
      for (size_t i = outer; i + 1 < il.size(); ++i) sch.unroll(il[i]);
    }
    // The epilogue computes each tile right after its k loop, from the tile still in L1 (with K
    // blocking: each column panel after its last chunk, from L2). When the row tiles cut across
    // row loops ([1, 14, 14, C] in 6-row tiles) the epilogue cannot follow a tile (its region is
    // not a box): it goes under the column panel instead, as with K blocking, so that the output
    // is a panel-sized buffer and not the whole [M, N] one that every k step reads and writes
    // (Swin-B's [196, 512] x [512, 2048] with GELU on AVX2: 8.95 -> 3.4 ms at 2 threads, what
    // tuning found with any kc). That needs enough panels to parallelize over them alone.
    const int64_t panels = ConstExtent(sch, no);  // -1: a symbolic N
    const bool panel_epilogue = kc < k_ext || (rows_cut && mo.defined() && panels >= 8);
    const LoopRV& tile_loop =
        panel_epilogue ? no : mo.defined() ? mo : !outer_rows.empty() ? outer_rows.back() : no;
    const bool epilogue_fused = FuseEpilogue(sch, epilogue, tile_loop, opt, "gemm");
    if (epilogue_fused) fused = epilogue;
    if (opt.parallelize) {
      // Every loop outside the reduction loop k, in nest order: batch, the column and row tile
      // loops, and the unit row loops wherever they ended up. A unit loop between the row loops
      // (x [S, 1, K]: an RNN's input [T, B, I] at batch 1) sits under the tile loops; listing
      // them as batch, units, tiles made the fuse fail and left only that unit loop parallel,
      // and the GEMM ran on one thread.
      // With the epilogue under the column panel loop, the row tiles under it are not alone there:
      // the parallel loops stop at the panel loop.
      const tir::ForNode* k_for = sch.GetFor(k_outer);
      const tir::ForNode* last = panel_epilogue && epilogue_fused ? sch.GetFor(no) : nullptr;
      std::vector<LoopRV> par;
      for (const LoopRV& l : sch.get_loops(block)) {
        if (sch.GetFor(l) == k_for) break;
        par.push_back(l);
        if (sch.GetFor(l) == last) break;
      }
      ParallelOuter(sch, par);
    }
  } catch (const ScheduleError&) {
    // Whatever was applied is a valid schedule of the same computation.
  }
  return fused;
}

}  // namespace

GemmPackTile ChooseGemmTile(int64_t m, int64_t n, int64_t k, const target::Target& target) {
  GemmPackTile best;
  best.bn = BlockLanes(target, 32);
  if (const char* env = std::getenv("TESSERA_GEMM_TILE")) {
    int a = 0, b = 0;
    if (std::sscanf(env, "%d,%d", &a, &b) == 2 && a > 0 && b > 0) {
      best.mr = a;
      best.nv = b;
      return best;
    }
  }
  // The target's vector registers: 32 zmm with AVX-512, else 16 ymm, where one 16-lane vector
  // of the tile takes two registers.
  const int64_t regs = target.vector_registers;
  const int64_t per_vec = std::max<int64_t>(1, best.bn / target.VectorLanes(32));
  const bool many_regs = regs >= 32;
  const double ideal_acc = many_regs ? 16 : 12;  // accumulators that hide FMA latency and B loads
  double best_score = -1;
  const int64_t nvec = (n + best.bn - 1) / best.bn;
  // A symbolic row count (m <= 0, dynamic shapes): chosen as for many rows, where the row tile's
  // padding costs nothing; the tail tile is the only padded one.
  if (m <= 0) m = 1 << 16;
  if (n <= 0) n = 4096;  // a symbolic N likewise
  if (k <= 0) k = 256;   // a symbolic K (a sequence length): a panel that does not stay in L1
  for (int64_t nv = 1; nv <= 8; ++nv) {
    for (int64_t mr = 1; mr <= 14; ++mr) {
      const int64_t acc = mr * nv * per_vec;
      // Accumulators + the B vectors (reused by every row: in registers when mr > 1) + a broadcast.
      const int64_t live = acc + (mr > 1 ? nv * per_vec : 0) + 1;
      if (live > regs || (many_regs && acc > 28)) continue;
      if (mr > m && mr > 1) continue;
      if (nv > nvec && nv > 1) continue;
      GemmPackTile t;
      t.mr = mr, t.nv = nv;
      const int64_t mpad = (m + mr - 1) / mr * mr, npad = t.PaddedN(n);
      double score = static_cast<double>(m) / mpad * static_cast<double>(n) / npad;
      // One row (a matrix-vector product): no B vector is reused from a register, so the
      // accumulators only hide the FMA latency (2 FMAs per cycle x 4 cycles = 8 vectors).
      score *= std::min(1.0, 0.6 + 0.4 * acc / (mr == 1 ? 8.0 : ideal_acc));
      if (npad != n || mpad != m) score *= 0.97;  // the unpadding copy
      // B bytes per cycle from L2 when the panel Bp[no] (K x nv x 64 B) does not stay in L1
      // between row tiles: each 64-byte B vector feeds mr FMA cycles. With one row tile the panel
      // is read once whatever its size (a matrix-vector product streams B).
      if (mpad / mr > 1 && k * nv * 64 > 24 * 1024) score *= std::min(1.0, 20.0 / (64.0 / mr));
      // Two threads: an odd number of tiles leaves one idle for a tile.
      const int64_t tiles = (mpad / mr) * (npad / (nv * best.bn));
      if (tiles < 8) score *= static_cast<double>(tiles) / ((tiles + 1) / 2 * 2);
      score *= 1.0 + 0.001 * mr;  // ties: taller tiles reuse each B vector more
      if (score > best_score) best_score = score, best = t;
    }
  }
  (void)k;
  return best;
}

bool KeepGemmStage(const std::string& block_name) { return StartsWith(block_name, kPackName); }

std::set<std::string> ScheduleGemmPacked(Schedule& sch, const ScheduleOptions& opt) {
  std::set<std::string> handled;
  for (const std::string& name : BlockNames(sch.func())) {
    if (StartsWith(name, kPackName)) {
      SchedulePack(sch, name, opt);
      handled.insert(name);
    } else if (StartsWith(name, kGemmName)) {
      std::string epilogue = ScheduleGemm(sch, name, opt);
      if (!epilogue.empty()) handled.insert(epilogue);
    }
  }
  // The GEMM blocks and their decomposed inits.
  for (const std::string& name : BlockNames(sch.func()))
    if (StartsWith(name, kGemmName)) handled.insert(name);
  return handled;
}

AnchorSchedule GemmPackedAnchor() { return {"gemm_packed", ScheduleGemmPacked, KeepGemmStage}; }

}  // namespace tessera::topi::x86
