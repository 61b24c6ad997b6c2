#include "tessera/topi/x86/multi_level_tiling.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "tessera/ir/op.h"
#include "tessera/tir/functor.h"
#include "tessera/topi/schedule_knobs.h"

#include "block_util.h"

namespace tessera::topi::x86 {

namespace {

// The largest divisor of n that is at most cap (>= 1).
int64_t LargestDivisorUpTo(int64_t n, int64_t cap) { return DivisorsInRange(n, 1, std::max<int64_t>(1, cap)).back(); }

void Enumerate(int64_t rest, int levels_left, int64_t max_inner, std::vector<int64_t>& inner,
               std::vector<std::vector<int64_t>>& out) {
  if (levels_left == 1) {
    std::vector<int64_t> t = {rest};
    t.insert(t.end(), inner.rbegin(), inner.rend());
    out.push_back(std::move(t));
    return;
  }
  for (int64_t d = 1; d <= std::min(rest, max_inner); ++d) {
    if (rest % d != 0) continue;
    inner.push_back(d);
    Enumerate(rest / d, levels_left - 1, max_inner, inner, out);
    inner.pop_back();
  }
}

// Unrolls loops (innermost first) while the product of the unrolled extents stays <= 256: a register
// tile, not a code-size explosion.
void UnrollBounded(Schedule& sch, const std::vector<LoopRV>& loops) {
  int64_t product = 1;
  for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
    const int64_t e = ConstExtent(sch, *it);
    if (e <= 1) continue;
    if (product * e > 256) break;
    product *= e;
    sch.unroll(*it);
  }
}

// The innermost loop of a moved consumer: vectorized when it fits the lanes, else split by them
// when they divide it.
void VectorizeInnermost(Schedule& sch, const BlockRV& block, const ScheduleOptions& opt) {
  if (!opt.vectorize) return;
  try {
    std::vector<LoopRV> loops = sch.get_loops(block);
    if (loops.empty()) return;
    const int64_t ext = ConstExtent(sch, loops.back());
    if (ext <= 1) return;
    if (ext <= opt.vector_lanes) {
      sch.vectorize(loops.back());
    } else if (ext % opt.vector_lanes == 0) {
      sch.vectorize(sch.split(loops.back(), {-1, opt.vector_lanes})[1]);
    }
  } catch (const ScheduleError& err) {
    DebugRefusedStep("multi_level_tiling", "epilogue vectorize", err);
  }
}

}  // namespace

std::vector<std::vector<int64_t>> PerfectTilings(int64_t n, int levels, int64_t max_inner, size_t limit) {
  std::vector<std::vector<int64_t>> all;
  if (n < 1 || levels < 1) return all;
  std::vector<int64_t> inner;
  Enumerate(n, levels, std::max<int64_t>(1, max_inner), inner, all);
  if (limit == 0 || all.size() <= limit) return all;
  const size_t step = (all.size() + limit - 1) / limit;
  std::vector<std::vector<int64_t>> kept;
  for (size_t i = 0; i < all.size(); i += step) kept.push_back(all[i]);
  return kept;
}

bool MultiLevelTilingApplies(const tir::Schedule& sch, const std::string& name) {
  const BlockLoopNest nest = FindLoopNest(sch.func(), name);
  if (!nest.realize || !nest.perfect || nest.loops.empty()) return false;
  const tir::BlockNode* b = nest.realize->block_node();
  if (!b->init.defined() || b->writes.size() != 1) return false;
  bool spatial = false, reduction = false;
  for (const tir::ForNode* loop : nest.loops) {
    const tir::IterVar* iv = IterOf(nest.realize, loop->loop_var.get_var());
    const int64_t ext = ConstExtentOf(loop);
    if (!iv || ext < 1 || loop->for_kind != tir::ForKind::kSerial) return false;
    if (iv->iter_type == tir::IterVarType::kDataPar) spatial |= ext > 1;
    else if (iv->iter_type == tir::IterVarType::kCommReduce) reduction |= ext > 1;
    else return false;
  }
  return spatial && reduction;
}

std::set<std::string> MultiLevelTiling(Schedule& sch, const std::string& name, const ScheduleOptions& opt) {
  if (!MultiLevelTilingApplies(sch, name)) return {};
  const BlockLoopNest nest = FindLoopNest(sch.func(), name);
  const tir::BlockNode* b = nest.realize->block_node();
  const auto* store = b->body.as<tir::BufferStoreNode>();
  // The consumer computed on the tile: only an elementwise (spatial-only) one; a reduction over the
  // output (a row sum after a matmul) needs whole rows, not one tile.
  std::string epilogue = IsParam(sch.func(), b->writes[0].buffer) ? "" : SoleReader(sch.func(), b);
  if (!epilogue.empty()) {
    const BlockLoopNest consumer = FindLoopNest(sch.func(), epilogue);
    const tir::BlockNode* cb = consumer.realize ? consumer.realize->block_node() : nullptr;
    bool spatial_only = cb && !cb->init.defined();
    for (size_t i = 0; spatial_only && i < cb->iter_vars.size(); ++i)
      spatial_only = cb->iter_vars[i].iter_type == tir::IterVarType::kDataPar;
    if (!spatial_only) epilogue.clear();
  }

  // The loops' roles, in nest order; the lane loop indexes the output's last dimension.
  struct Role {
    bool spatial = false;
    bool lane = false;
    int64_t extent = 1;
  };
  std::vector<Role> roles;
  int64_t last_row = -1;  // the innermost spatial loop > 1 other than the lane loop
  for (const tir::ForNode* loop : nest.loops) {
    const tir::IterVar* iv = IterOf(nest.realize, loop->loop_var.get_var());
    Role role;
    role.spatial = iv->iter_type == tir::IterVarType::kDataPar;
    role.extent = ConstExtentOf(loop);
    role.lane = role.spatial && store && !store->indices.empty() && store->indices.back().get() == iv->var.get();
    if (role.spatial && !role.lane && role.extent > 1) last_row = static_cast<int64_t>(roles.size());
    roles.push_back(role);
  }

  // The knobs: one perfect tiling per loop longer than 1; the hand-picked fallback is a register
  // tile of (up to 4 rows) x (the vector lanes) over an 8-step reduction chunk.
  std::vector<std::vector<int64_t>> tiling(roles.size());
  int spatial_index = 0, reduction_index = 0;
  for (size_t i = 0; i < roles.size(); ++i) {
    const Role& role = roles[i];
    if (role.extent == 1) continue;
    const int levels = role.spatial ? 4 : 2;
    std::vector<std::vector<int64_t>> options = PerfectTilings(role.extent, levels);
    std::vector<int64_t> want(levels, 1);
    if (role.spatial) {
      want[3] = role.lane ? LargestDivisorUpTo(role.extent, opt.vector_lanes)
                          : (static_cast<int64_t>(i) == last_row ? LargestDivisorUpTo(role.extent, 4) : 1);
    } else {
      want[1] = LargestDivisorUpTo(role.extent, 8);
    }
    want[0] = role.extent / std::accumulate(want.begin() + 1, want.end(), int64_t{1}, std::multiplies<>());
    auto it = std::find(options.begin(), options.end(), want);
    if (it == options.end()) it = options.insert(options.end(), want);  // thinned away: keep it offered
    std::vector<int64_t> indices(options.size());
    std::iota(indices.begin(), indices.end(), int64_t{0});
    const std::string knob =
        name + (role.spatial ? ".tile_s" + std::to_string(spatial_index++) : ".tile_r" + std::to_string(reduction_index++));
    const int64_t chosen = Knob(opt.knobs, knob, indices, it - options.begin());
    tiling[i] = options[static_cast<size_t>(chosen)];
  }
  const int64_t unroll = Knob(opt.knobs, name + ".unroll", {0, 1, 2}, 1);
  const int64_t epilogue_at = epilogue.empty() ? 0 : Knob(opt.knobs, name + ".epilogue_at", {0, 1, 2}, 1);

  std::set<std::string> handled = {name};
  try {
    BlockRV block = sch.get_block(name);
    const std::vector<LoopRV> loops = sch.get_loops(block);
    // Levels: units, s0, s1, r0, s2, r1, s3 (the lane loop's parts last within each level).
    std::vector<LoopRV> units, s[4], r[2], lane_parts;
    for (size_t i = 0; i < roles.size(); ++i) {
      if (roles[i].extent == 1) {
        units.push_back(loops[i]);
        continue;
      }
      std::vector<LoopRV> parts = sch.split(loops[i], tiling[i]);
      if (roles[i].lane) {
        lane_parts = parts;
      } else if (roles[i].spatial) {
        for (int lv = 0; lv < 4; ++lv) s[lv].push_back(parts[static_cast<size_t>(lv)]);
      } else {
        r[0].push_back(parts[0]);
        r[1].push_back(parts[1]);
      }
    }
    if (!lane_parts.empty())
      for (int lv = 0; lv < 4; ++lv) s[lv].push_back(lane_parts[static_cast<size_t>(lv)]);
    std::vector<LoopRV> order = units;
    for (const std::vector<LoopRV>* level : {&s[0], &s[1], &r[0], &s[2], &r[1], &s[3]})
      order.insert(order.end(), level->begin(), level->end());
    sch.reorder(order);

    BlockRV init = sch.decompose_reduction(block, r[0].front());
    handled.insert(sch.GetBlock(init)->name_hint);

    // The register tile: the lane loop vectorized, the other s3 loops (and r1) unrolled.
    const LoopRV* lane3 = lane_parts.empty() ? nullptr : &lane_parts[3];
    if (opt.vectorize && lane3 && ConstExtent(sch, *lane3) > 1) sch.vectorize(*lane3);
    std::vector<LoopRV> unrolled;
    if (unroll >= 2) unrolled.insert(unrolled.end(), r[1].begin(), r[1].end());
    if (unroll >= 1)
      for (const LoopRV& l : s[3])
        if (!lane3 || l.id != lane3->id) unrolled.push_back(l);
    UnrollBounded(sch, unrolled);
    // The init's copies of s2 and s3, under the last s1 loop.
    std::vector<LoopRV> init_loops = sch.get_loops(init);
    const size_t shared = units.size() + s[0].size() + s[1].size();
    if (init_loops.size() > shared) {
      std::vector<LoopRV> own(init_loops.begin() + static_cast<long>(shared), init_loops.end());
      if (opt.vectorize && lane3 && ConstExtent(sch, own.back()) > 1) {
        sch.vectorize(own.back());
        own.pop_back();
      }
      if (unroll >= 1) UnrollBounded(sch, own);
    }

    // The consumer on the tile while it is in cache.
    std::vector<LoopRV> outer = units;
    outer.insert(outer.end(), s[0].begin(), s[0].end());
    if (epilogue_at > 0) {
      std::vector<LoopRV> at = outer;
      if (epilogue_at == 2) at.insert(at.end(), s[1].begin(), s[1].end());
      try {
        BlockRV e = sch.get_block(epilogue);
        sch.reverse_compute_at(e, at.back());
        VectorizeInnermost(sch, e, opt);
        handled.insert(epilogue);
      } catch (const ScheduleError& err) {
        DebugRefusedStep("multi_level_tiling", "epilogue", err);
      }
    }

    if (opt.parallelize && !outer.empty()) {
      LoopRV par = outer.size() > 1 ? sch.fuse(outer) : outer[0];
      sch.parallel(par);
    }
  } catch (const ScheduleError& err) {
    // Whatever was applied is a valid schedule of the same computation.
    DebugRefusedStep("multi_level_tiling", "tiling", err);
  }
  return handled;
}

}  // namespace tessera::topi::x86
