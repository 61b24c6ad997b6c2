// Schedules on functions lowered by te::create_prim_func (when the te layer is built).
#include <gtest/gtest.h>

#ifdef TESSERA_SCHEDULE_TEST_TE
#include "tir_interp.h"
#include "tessera/te/tensor.h"
#include "tessera/tir/printer.h"
#include "tessera/tir/schedule/schedule.h"

namespace tessera::tir {
namespace {

TEST(ScheduleTe, MatmulBiasReluTiled) {
  const int M = 13, N = 10, K = 7;  // tiles of 4 / 8 do not divide
  auto f32 = DataType::Float(32);
  auto A = te::placeholder({M, K}, f32, "A");
  auto B = te::placeholder({K, N}, f32, "B");
  auto k = te::reduce_axis(Range(0, K), "k");
  auto C = te::compute({M, N}, [&](const std::vector<Var>& i) {
    return te::sum(A({i[0], k.var}) * B({k.var, i[1]}), {k});
  }, "C");
  auto D = te::compute({M, N}, [&](const std::vector<Var>& i) { return C({i[0], i[1]}) + ir::make_const(f32, 1.0); }, "D");
  auto E = te::compute({M, N}, [&](const std::vector<Var>& i) { return ir::max(D({i[0], i[1]}), ir::make_const(f32, 0.0)); }, "E");
  PrimFunc f = te::create_prim_func({A, B, E}, "mm");

  Schedule sch(f);
  sch.compute_inline(sch.get_block("D"));
  BlockRV c = sch.get_block("C");
  auto l = sch.get_loops(c);
  auto i = sch.split(l[0], {-1, 4});
  auto j = sch.split(l[1], {-1, 8});
  sch.reorder({i[0], j[0], l[2], i[1], j[1]});
  sch.reverse_compute_at(sch.get_block("E"), j[0]);
  sch.decompose_reduction(c, l[2]);
  sch.vectorize(j[1]);
  sch.parallel(i[0]);
  EXPECT_LT(testing::MaxDiff(f, sch.func()), 1e-9) << AsText(sch.func());

  Schedule replay(f);
  Trace::FromJSON(sch.trace().ToJSON()).ApplyToSchedule(replay);
  EXPECT_EQ(AsText(replay.func()), AsText(sch.func()));
}

// Per output plane a, the pixels (i, j) fused and split in tiles of 4 with a guarded tail
// (8 iterations for 6 pixels): what loop a produces is the whole 2 x 3 plane. Its index bounds
// (i up to 7 / 3 = 2) leave the buffer and are clipped to it, so the region is a box and E
// goes under a (the NCHWc conv with fused pixels has this shape).
TEST(ScheduleTe, ReverseComputeAtOverAFusedPlaneWithATail) {
  auto f32 = DataType::Float(32);
  auto A = te::placeholder({3, 2, 3}, f32, "A");
  auto C = te::compute({3, 2, 3}, [&](const std::vector<Var>& i) { return A({i[0], i[1], i[2]}) * ir::make_const(f32, 2.0); }, "C");
  auto E = te::compute({3, 2, 3}, [&](const std::vector<Var>& i) { return C({i[0], i[1], i[2]}) + ir::make_const(f32, 1.0); }, "E");
  PrimFunc f = te::create_prim_func({A, E}, "plane");
  Schedule sch(f);
  auto l = sch.get_loops(sch.get_block("C"));
  sch.split(sch.fuse({l[1], l[2]}), {-1, 4});
  BlockRV e = sch.get_block("E");
  sch.reverse_compute_at(e, l[0]);
  EXPECT_EQ(sch.get_loops(e).size(), 3u);  // a, then E's own i and j
  EXPECT_LT(testing::MaxDiff(f, sch.func()), 1e-12) << AsText(sch.func());
}

}  // namespace
}  // namespace tessera::tir
#endif
