// compute_inline, reverse_compute_inline, compute_at, reverse_compute_at, cache_read,
// cache_write, decompose_reduction, rfactor, annotate.
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

int CountBlocks(const PrimFunc& f) { return static_cast<int>(sched::CollectBlocks(f->body).size()) - 1; }

TEST(ScheduleComputeInline, ElementwiseChainExpectedIR) {
  PrimFunc f = ElementwiseChain(4, 6);
  Schedule sch(f);
  sch.compute_inline(sch.get_block("B"));
  sch.compute_inline(sch.get_block("C"));
  EXPECT_EQ(CountBlocks(sch.func()), 1);
  // Expected: D[i, j] = (A[i, j] + 1) * 2 + A[i, j], with no intermediate buffers.
  const Buffer& A = f->params[0];
  const Buffer& D = f->params[1];
  Stmt d = MakeCompute("D", D, {{"i", 4}, {"j", 6}}, {}, [&](auto& s, auto&) {
    return (BufferLoadNode::make(A, {s[0], s[1]}) + make_const(DataType::Float(32), 1.0)) * make_const(DataType::Float(32), 2.0) +
           BufferLoadNode::make(A, {s[0], s[1]});
  });
  PrimFunc expected = MakeFunc("chain", {A, D}, {d});
  EXPECT_TRUE(StructuralEqual(sch.func(), expected)) << AsText(sch.func()) << "\nvs\n" << AsText(expected);
  EXPECT_LT(MaxDiff(f, sch.func()), 1e-12);
}

TEST(ScheduleComputeInline, Errors) {
  Schedule sch(MatmulRelu(4, 4, 4));
  EXPECT_SCHEDULE_ERROR(sch.compute_inline(sch.get_block("C")),
                        "compute_inline: block 'C' is a reduction; only blocks that are a single BufferStore of a spatial expression can be inlined");
  EXPECT_SCHEDULE_ERROR(sch.compute_inline(sch.get_block("D")),
                        "compute_inline: block 'D' writes 'D', a parameter of function 'matmul_relu'");
  Schedule sch2(ElementwiseChain(4, 4));
  BlockRV b = sch2.get_block("B");
  sch2.compute_inline(b);
  EXPECT_SCHEDULE_ERROR(sch2.get_loops(b), "get_loops: block 'B' (b0) no longer exists: it was removed by compute_inline");
}

TEST(ScheduleReverseComputeInline, MatmulRelu) {
  PrimFunc f = ElementwiseChain(5, 3);
  Schedule sch(f);
  sch.reverse_compute_inline(sch.get_block("D"));  // D = C + A into C
  sch.reverse_compute_inline(sch.get_block("C"));  // (now writes D) into B
  EXPECT_EQ(CountBlocks(sch.func()), 1);
  EXPECT_LT(MaxDiff(f, sch.func()), 1e-12) << AsText(sch.func());

  Schedule sch2(MatmulRelu(4, 4, 4));
  EXPECT_SCHEDULE_ERROR(sch2.reverse_compute_inline(sch2.get_block("D")),
                        "reverse_compute_inline: producer block 'C' of 'C' is a reduction");
  EXPECT_SCHEDULE_ERROR(sch2.reverse_compute_inline(sch2.get_block("C")),
                        "reverse_compute_inline: block 'C' is a reduction");
}

// A consumer that reads a unit dimension at 0 (as broadcasts index it) and has an iter var of
// extent 1 that indexes nothing: B[i, j] = A[i, j] * 2, C[i, j] = B[0, j] + 1 over [1, 6].
TEST(ScheduleReverseComputeInline, UnitDimensionIndexedByZero) {
  Buffer A = F32("A", {1, 6}), B = F32("B", {1, 6}), C = F32("C", {1, 6});
  auto f1 = make_const(DataType::Float(32), 1.0), f2 = make_const(DataType::Float(32), 2.0);
  auto zero = make_const(DataType::Int(32), 0);
  Stmt b = MakeCompute("B", B, {{"i", 1}, {"j", 6}}, {}, [&](auto& s, auto&) { return BufferLoadNode::make(A, {s[0], s[1]}) * f2; });
  Stmt c = MakeCompute("C", C, {{"i", 1}, {"j", 6}}, {}, [&](auto& s, auto&) { return BufferLoadNode::make(B, {zero, s[1]}) + f1; });
  PrimFunc f = MakeFunc("unit", {A, C}, {b, c}, {B});
  Schedule sch(f);
  sch.reverse_compute_inline(sch.get_block("C"));
  // Expected: one block B (its iter vars and loops) storing C[0, j] = A[i, j] * 2 + 1.
  EXPECT_EQ(AsText(sch.func()), R"(@prim_func
def unit(A: Buffer((1, 6), "float32"), C: Buffer((1, 6), "float32")):
  with block("root"):
    for i in range(0, 1):
      for j in range(0, 6):
        with block("B"):
          vi = spatial(0, 1, i)
          vj = spatial(0, 6, j)
          reads(A[vi, vj])
          writes(C[0, vj])
          C[0, vj] = A[vi, vj] * 2.0f + 1.0f
)");
  EXPECT_LT(MaxDiff(f, sch.func()), 1e-12);
  // A 0 on a dimension of extent 2 is not the whole buffer.
  Buffer A2 = F32("A", {2, 6}), B2 = F32("B", {2, 6}), C2 = F32("C", {1, 6});
  Stmt b2 = MakeCompute("B", B2, {{"i", 2}, {"j", 6}}, {}, [&](auto& s, auto&) { return BufferLoadNode::make(A2, {s[0], s[1]}) * f2; });
  Stmt c2 = MakeCompute("C", C2, {{"i", 1}, {"j", 6}}, {}, [&](auto& s, auto&) { return BufferLoadNode::make(B2, {zero, s[1]}) + f1; });
  Schedule sch2(MakeFunc("row0", {A2, C2}, {b2, c2}, {B2}));
  EXPECT_SCHEDULE_ERROR(sch2.reverse_compute_inline(sch2.get_block("C")),
                        "reverse_compute_inline: block 'C' reads B[0, vj]; the load indices must be the block's iter vars, "
                        "each once (or 0 on a dimension of extent 1)");
}

TEST(ScheduleComputeAt, PadConvTiled) {
  for (int64_t n : {16, 13}) {  // 13: the tile size 4 does not divide
    PrimFunc f = PadConv1D(n);
    Schedule sch = PadConvTiledComputeAt(n);
    BlockRV p = sch.get_block("P");
    // P now computes the 4 + 2 = 6 padded elements tile t needs.
    auto lp = sch.get_loops(p);
    ASSERT_EQ(lp.size(), 2u);
    EXPECT_EQ(ir::get_const_int(sch.GetFor(lp[1])->extent), 6);
    EXPECT_LT(MaxDiff(f, sch.func()), 1e-9) << AsText(sch.func());
  }
}

TEST(ScheduleComputeAt, InnermostAndErrors) {
  PrimFunc f = PadConv1D(10);
  Schedule sch(f);
  BlockRV p = sch.get_block("P");
  auto l = sch.get_loops(sch.get_block("C"));
  sch.compute_at(p, l[1]);  // under the reduction loop: a single element
  EXPECT_EQ(sch.get_loops(p).size(), 2u);
  EXPECT_LT(MaxDiff(f, sch.func()), 1e-9) << AsText(sch.func());

  Schedule sch2(MatmulRelu(4, 4, 4));
  auto lc = sch2.get_loops(sch2.get_block("C"));
  EXPECT_SCHEDULE_ERROR(sch2.compute_at(sch2.get_block("D"), lc[0]),
                        "compute_at: loop i comes before block 'D'");
  Schedule sch3(ElementwiseChain(4, 4));
  auto ldd = sch3.get_loops(sch3.get_block("D"));
  EXPECT_SCHEDULE_ERROR(sch3.compute_at(sch3.get_block("B"), ldd[0]),
                        "compute_at: block 'C' reads 'B' but is not under loop i; every consumer of 'B' must be inside the target loop");
}

TEST(ScheduleReverseComputeAt, MatmulRelu) {
  PrimFunc f = MatmulRelu(10, 12, 5);
  Schedule sch(f);
  auto l = sch.get_loops(sch.get_block("C"));
  auto i = sch.split(l[0], {-1, 4});
  BlockRV d = sch.get_block("D");
  sch.reverse_compute_at(d, i[0]);
  auto ld = sch.get_loops(d);
  ASSERT_EQ(ld.size(), 3u);
  EXPECT_EQ(ir::get_const_int(sch.GetFor(ld[1])->extent), 4);
  EXPECT_EQ(ir::get_const_int(sch.GetFor(ld[2])->extent), 12);
  EXPECT_LT(MaxDiff(f, sch.func()), 1e-9) << AsText(sch.func());
}

// Under a loop over tiles of the fused (i, j) of C, a tile of 4 of the 2 x 3 points is not a
// box of C: D would read elements of C that a later tile writes. A tile of 3 (one row) is.
TEST(ScheduleReverseComputeAt, RefusesAProducedRegionThatIsNotABox) {
  PrimFunc f = ElementwiseChain(2, 3);
  Schedule sch(f);
  BlockRV c = sch.get_block("C");
  auto l = sch.get_loops(c);
  auto tiles = sch.split(sch.fuse({l[0], l[1]}), {-1, 4});
  EXPECT_SCHEDULE_ERROR(sch.reverse_compute_at(sch.get_block("D"), tiles[0]),
                        "reverse_compute_at: block 'C' under loop i_j_fused_0 writes a part of 'C' that is not a box "
                        "(its indices mix the inner loops, e.g. rows fused across dimensions), so block 'D' would "
                        "read elements a later iteration produces");
  Schedule rows(f);
  auto lr = rows.get_loops(rows.get_block("C"));
  auto row_tiles = rows.split(rows.fuse({lr[0], lr[1]}), {-1, 3});
  BlockRV d = rows.get_block("D");
  rows.reverse_compute_at(d, row_tiles[0]);
  EXPECT_EQ(rows.get_loops(d).size(), 2u);  // the row tile, then D's j (its i is one point: no loop)
  EXPECT_LT(MaxDiff(f, rows.func()), 1e-12) << AsText(rows.func());
}

TEST(ScheduleCache, ReadAndWrite) {
  PrimFunc f = Matmul(6, 5, 4);
  Schedule sch(f);
  BlockRV c = sch.get_block("C");
  BlockRV ar = sch.cache_read(c, 0, "local");
  EXPECT_EQ(sch.GetBlock(ar)->name_hint, "A_local");
  BlockRV cw = sch.cache_write(c, 0, "local");
  EXPECT_EQ(sch.GetBlock(cw)->name_hint, "C_local");
  EXPECT_EQ(sch.GetBlock(c)->writes[0].buffer->scope, "local");
  EXPECT_EQ(CountBlocks(sch.func()), 3);
  EXPECT_LT(MaxDiff(f, sch.func()), 1e-9) << AsText(sch.func());
  EXPECT_SCHEDULE_ERROR(sch.cache_read(c, 7, "local"), "cache_read: block 'C' reads 2 buffers; read_buffer_index 7 is out of range");
  EXPECT_SCHEDULE_ERROR(sch.cache_read(c, 0, "texture"), "cache_read: storage scope 'texture' is not one of");
}

TEST(ScheduleDecomposeReduction, Matmul) {
  PrimFunc f = Matmul(9, 6, 7);
  Schedule sch(f);
  BlockRV c = sch.get_block("C");
  auto l = sch.get_loops(c);
  auto k = sch.split(l[2], {-1, 2});  // 8 > 7: predicate on the reduction
  sch.reorder({k[0], l[1]});
  BlockRV init = sch.decompose_reduction(c, k[0]);
  EXPECT_EQ(sch.GetBlock(init)->name_hint, "C_init");
  EXPECT_FALSE(sch.GetBlock(c)->init.defined());
  EXPECT_EQ(sch.get_loops(init).size(), 2u);  // i, j_init
  EXPECT_LT(MaxDiff(f, sch.func()), 1e-9) << AsText(sch.func());
  EXPECT_SCHEDULE_ERROR(sch.decompose_reduction(c, l[0]), "decompose_reduction: block 'C' has no init");

  Schedule sch2(Matmul(4, 4, 4));
  auto l2 = sch2.get_loops(sch2.get_block("C"));
  sch2.reorder({l2[2], l2[0]});
  EXPECT_SCHEDULE_ERROR(sch2.decompose_reduction(sch2.get_block("C"), l2[0]),
                        "decompose_reduction: loop k above loop i is bound to a reduction iter var");
}

TEST(ScheduleRfactor, RowSumExpectedIR) {
  PrimFunc f = RowSum(3, 32);
  Schedule sch(f);
  BlockRV b = sch.get_block("B");
  auto l = sch.get_loops(b);
  auto k = sch.split(l[1], {-1, 8});
  BlockRV rf = sch.rfactor(k[1], -1);
  EXPECT_EQ(sch.GetBlock(rf)->name_hint, "B_rf");
  EXPECT_EQ(sch.GetBlock(b)->name_hint, "B");  // the handle now names the write-back block
  // Expected: 8 partial sums per row, spatial in k_1, then the write-back adds them.
  const std::string expected = R"(@prim_func
def rowsum(A: Buffer((3, 32), "float32"), B: Buffer((3,), "float32")):
  with block("root"):
    B_rf = alloc_buffer((3, 8), "float32")
    for i in range(0, 3):
      for k_0 in range(0, 4):
        for k_1 in range(0, 8):
          with block("B_rf"):
            vi = spatial(0, 3, i)
            vk_0 = reduce(0, 4, k_0)
            vk_1 = spatial(0, 8, k_1)
            reads(A[vi, vk_0 * 8 + vk_1])
            writes(B_rf[vi, vk_1])
            with init():
              B_rf[vi, vk_1] = 0.0f
            B_rf[vi, vk_1] = B_rf[vi, vk_1] + A[vi, vk_0 * 8 + vk_1]
      for k_1_wb in range(0, 8):
        with block("B"):
          vi_1 = spatial(0, 3, i)
          vk_1_1 = reduce(0, 8, k_1_wb)
          reads(B_rf[vi_1, vk_1_1])
          writes(B[vi_1])
          with init():
            B[vi_1] = 0.0f
          B[vi_1] = B[vi_1] + B_rf[vi_1, vk_1_1]
)";
  EXPECT_EQ(AsText(sch.func()), expected);
  // Equal up to float32 reassociation (partial sums of 8, then their sum).
  EXPECT_LT(MaxDiff(f, sch.func()), 1e-5) << AsText(sch.func());
  ExpectTraceRoundTrip(sch, [] { return RowSum(3, 32); });

  // The rf block's factored loop is spatial: it can be vectorized after decompose_reduction.
  auto lrf = sch.get_loops(rf);
  sch.decompose_reduction(rf, lrf[1]);
  sch.vectorize(lrf[2]);
  EXPECT_LT(MaxDiff(f, sch.func()), 1e-5) << AsText(sch.func());
}

TEST(ScheduleRfactor, FactorAxisFirstAndErrors) {
  PrimFunc f = RowSum(3, 32);
  Schedule sch(f);
  auto l = sch.get_loops(sch.get_block("B"));
  EXPECT_SCHEDULE_ERROR(sch.rfactor(l[0], 0), "rfactor: loop i is not bound to a reduction iter var of block 'B'");
  EXPECT_SCHEDULE_ERROR(sch.rfactor(l[1], 2), "rfactor: factor_axis is out of range for 'B' of rank 1 (expected -2 .. 1)");
  BlockRV rf = sch.rfactor(l[1], 0);
  EXPECT_EQ(sch.GetBlock(rf)->writes[0].buffer->shape.size(), 2u);
  EXPECT_EQ(ir::get_const_int(sch.GetBlock(rf)->writes[0].buffer->shape[0]), 32);
  EXPECT_LT(MaxDiff(f, sch.func()), 1e-5) << AsText(sch.func());

  Schedule sch2(MatmulRelu(4, 4, 4));
  EXPECT_SCHEDULE_ERROR(sch2.rfactor(sch2.get_loops(sch2.get_block("C"))[1], 0),
                        "rfactor: loop j is not bound to a reduction iter var of block 'C'");
  EXPECT_SCHEDULE_ERROR(sch2.rfactor(sch2.get_loops(sch2.get_block("D"))[1], 0), "rfactor: block 'D' is not a reduction");
}

TEST(ScheduleAnnotate, LoopAndBlock) {
  Schedule sch(Matmul(4, 4, 4));
  BlockRV c = sch.get_block("C");
  auto l = sch.get_loops(c);
  sch.annotate(l[0], "pragma_auto_unroll_max_step", make_const(DataType::Int(32), 16));
  sch.annotate(c, "schedule_rule", ir::StringImmNode::make("matmul"));
  EXPECT_TRUE(sch.GetFor(l[0])->annotations.count("pragma_auto_unroll_max_step"));
  EXPECT_TRUE(sch.GetBlock(c)->annotations.count("schedule_rule"));
  EXPECT_SCHEDULE_ERROR(sch.annotate(l[0], "x", Var("v")), "annotate: the value for loop i must be an integer, float or string immediate");
}

}  // namespace
}  // namespace tessera::tir
