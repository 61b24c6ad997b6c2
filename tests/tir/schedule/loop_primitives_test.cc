// get_block, get_loops, split, fuse, reorder, parallel, vectorize, unroll.
#include <gtest/gtest.h>

#include "tir_interp.h"
#include "funcs.h"
#include "schedule_test_util.h"
#include "tessera/tir/printer.h"
#include "tessera/tir/schedule/schedule.h"
#include "tessera/tir/structural_equal.h"

namespace tessera::tir {
namespace {

using namespace testing;  // NOLINT
using ir::make_const;

std::vector<int64_t> Extents(const Schedule& sch, const std::vector<LoopRV>& loops) {
  std::vector<int64_t> out;
  for (auto& l : loops) out.push_back(ir::get_const_int(sch.GetFor(l)->extent));
  return out;
}

TEST(ScheduleLookup, GetBlockAndLoops) {
  Schedule sch(Matmul(8, 8, 8));
  BlockRV c = sch.get_block("C");
  EXPECT_EQ(sch.GetBlock(c)->name_hint, "C");
  auto loops = sch.get_loops(c);
  ASSERT_EQ(loops.size(), 3u);
  EXPECT_EQ(sch.GetFor(loops[0])->loop_var->name_hint, "i");
  EXPECT_EQ(sch.GetFor(loops[2])->loop_var->name_hint, "k");
  EXPECT_SCHEDULE_ERROR(sch.get_block("D"), "get_block: no block named 'D' in function 'matmul' (blocks: 'C')");
  EXPECT_SCHEDULE_ERROR(sch.get_block("root"), "root block");
}

TEST(ScheduleSplit, DividingFactorsExpectedIR) {
  PrimFunc f = Matmul(32, 8, 4);
  Schedule sch(f);
  auto loops = sch.get_loops(sch.get_block("C"));
  auto parts = sch.split(loops[0], {4, 8});
  EXPECT_EQ(Extents(sch, parts), (std::vector<int64_t>{4, 8}));

  // Expected: for i_0 in 4, i_1 in 8, j, k: vi = i_0 * 8 + i_1, no predicate.
  const BlockRealizeNode* orig = nullptr;
  for (auto& b : sched::CollectBlocks(f->body)) {
    if (b.block->name_hint == "C") orig = b.realize;
  }
  DataType i32 = DataType::Int(32);
  Var i0("i_0"), i1("i_1"), j("j"), k("k");
  Stmt realize = BlockRealizeNode::make({i0 * make_const(i32, 8) + i1, j, k}, PrimExpr(), orig->block);
  Stmt nest = ForNode::make(k, 0, 4, ForKind::kSerial, realize);
  nest = ForNode::make(j, 0, 8, ForKind::kSerial, nest);
  nest = ForNode::make(i1, 0, 8, ForKind::kSerial, nest);
  nest = ForNode::make(i0, 0, 4, ForKind::kSerial, nest);
  PrimFunc expected = MakeFunc("matmul", f->params, {nest});
  EXPECT_TRUE(StructuralEqual(sch.func(), expected)) << AsText(sch.func()) << "\nvs\n" << AsText(expected);
  EXPECT_EQ(MaxDiff(f, sch.func()), 0.0);
}

TEST(ScheduleSplit, NonDividingFactorAddsPredicate) {
  PrimFunc f = Matmul(10, 7, 5);
  Schedule sch(f);
  auto loops = sch.get_loops(sch.get_block("C"));
  auto parts = sch.split(loops[0], {-1, 4});  // ceil(10 / 4) = 3
  EXPECT_EQ(Extents(sch, parts), (std::vector<int64_t>{3, 4}));
  auto jp = sch.split(loops[1], {2, -1, 2});  // 2 * 2 * 2 = 8 >= 7
  EXPECT_EQ(Extents(sch, jp), (std::vector<int64_t>{2, 2, 2}));
  const std::string text = AsText(sch.func());
  EXPECT_NE(text.find("i_0 * 4 + i_1 < 10"), std::string::npos) << text;
  EXPECT_LT(MaxDiff(f, sch.func()), 1e-9) << text;
}

TEST(ScheduleSplit, Errors) {
  Schedule sch(Matmul(10, 8, 8));
  auto loops = sch.get_loops(sch.get_block("C"));
  EXPECT_SCHEDULE_ERROR(sch.split(loops[0], {2, 3}), "split: factors [2, 3] cover 6 iterations but loop i has extent 10");
  EXPECT_SCHEDULE_ERROR(sch.split(loops[0], {-1, -1}), "at most one factor may be -1");
  EXPECT_SCHEDULE_ERROR(sch.split(loops[0], {0, -1}), "split: factor 0 at position 0");
  EXPECT_SCHEDULE_ERROR(sch.split(loops[0], {10}), "at least 2 factors");
  sch.split(loops[0], {2, 5});
  EXPECT_SCHEDULE_ERROR(sch.split(loops[0], {2, 5}), "split: loop i (l1) no longer exists: it was removed by split");
  // A failed primitive records nothing.
  EXPECT_EQ(sch.trace().size(), 3u);
}

TEST(ScheduleFuse, FuseAndSplitBack) {
  PrimFunc f = Matmul(6, 10, 3);
  Schedule sch(f);
  auto loops = sch.get_loops(sch.get_block("C"));
  LoopRV fused = sch.fuse({loops[0], loops[1]});
  EXPECT_EQ(sch.GetFor(fused)->loop_var->name_hint, "i_j_fused");
  EXPECT_EQ(ir::get_const_int(sch.GetFor(fused)->extent), 60);
  const std::string text = AsText(sch.func());
  EXPECT_NE(text.find("i_j_fused // 10"), std::string::npos) << text;
  EXPECT_NE(text.find("i_j_fused % 10"), std::string::npos) << text;
  auto parts = sch.split(fused, {-1, 16});  // 64 > 60: predicate
  sch.parallel(parts[0]);
  EXPECT_EQ(MaxDiff(f, sch.func()), 0.0) << AsText(sch.func());
}

TEST(ScheduleFuse, Errors) {
  Schedule sch(Matmul(6, 10, 3));
  auto loops = sch.get_loops(sch.get_block("C"));
  EXPECT_SCHEDULE_ERROR(sch.fuse({loops[0], loops[2]}), "fuse: loop k is not directly nested in loop i");
  EXPECT_SCHEDULE_ERROR(sch.fuse({loops[1], loops[0]}), "fuse: loop i is not directly nested in loop j");
  EXPECT_SCHEDULE_ERROR(sch.fuse({loops[0]}), "fuse: needs at least 2 loops");
  sch.parallel(loops[0]);
  EXPECT_SCHEDULE_ERROR(sch.fuse({loops[0], loops[1]}), "fuse: loop i is parallel");
}

TEST(ScheduleReorder, TileMatmul) {
  PrimFunc f = Matmul(20, 12, 9);
  Schedule sch(f);
  auto l = sch.get_loops(sch.get_block("C"));
  auto i = sch.split(l[0], {-1, 8});
  auto j = sch.split(l[1], {-1, 4});
  sch.reorder({i[0], j[0], l[2], i[1], j[1]});
  std::vector<std::string> names;
  for (auto& rv : sch.get_loops(sch.get_block("C"))) names.push_back(sch.GetFor(rv)->loop_var->name_hint);
  EXPECT_EQ(names, (std::vector<std::string>{"i_0", "j_0", "k", "i_1", "j_1"}));
  sch.vectorize(j[1]);
  sch.unroll(i[1]);
  sch.parallel(i[0]);
  EXPECT_LT(MaxDiff(f, sch.func()), 1e-9) << AsText(sch.func());
}

TEST(ScheduleReorder, Errors) {
  PrimFunc f = ElementwiseChain(4, 4);
  Schedule sch(f);
  auto lb = sch.get_loops(sch.get_block("B"));
  auto lc = sch.get_loops(sch.get_block("C"));
  EXPECT_SCHEDULE_ERROR(sch.reorder({lb[0], lc[1]}), "reorder: loops i and j are not in the same loop nest");
  EXPECT_SCHEDULE_ERROR(sch.reorder({lb[0], lb[0]}), "reorder: loop i appears twice");
  Schedule sch2(PadConv1D(8));
  auto lp = sch2.get_loops(sch2.get_block("P"));
  auto lconv = sch2.get_loops(sch2.get_block("C"));
  sch2.compute_at(sch2.get_block("P"), lconv[0]);
  // The body of i is now [P's nest; r]: not a perfect nest.
  EXPECT_SCHEDULE_ERROR(sch2.reorder({lconv[1], lconv[0]}), "not perfectly nested: the body of loop i is not a single loop");
  (void)lp;
}

TEST(ScheduleForKind, Errors) {
  Schedule sch(Matmul(8, 7, 4));
  auto l = sch.get_loops(sch.get_block("C"));
  EXPECT_SCHEDULE_ERROR(sch.parallel(l[2]),
                        "parallel: loop k is bound to reduction iter var 'vk' of block 'C'; only loops over spatial iter vars");
  EXPECT_SCHEDULE_ERROR(sch.vectorize(l[2]), "vectorize: loop k is bound to reduction iter var 'vk'");
  EXPECT_SCHEDULE_ERROR(sch.vectorize(l[0]), "vectorize: loop i contains loop j; only innermost loops can be vectorized");
  sch.parallel(l[0]);
  EXPECT_SCHEDULE_ERROR(sch.parallel(l[1]), "parallel: loop j is nested inside parallel loop i");
  EXPECT_SCHEDULE_ERROR(sch.unroll(l[0]), "unroll: loop i is already parallel");
  sch.unroll(l[2]);
  EXPECT_EQ(sch.GetFor(l[2])->for_kind, ForKind::kUnrolled);
}

}  // namespace
}  // namespace tessera::tir
