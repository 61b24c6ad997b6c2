// LoopPartition: the tail of a non-dividing split becomes its own loop; the main part loses
// its guard (after Simplify); numerics unchanged; the copy defines fresh variables.
#include <gtest/gtest.h>


#include "tir_interp.h"
#include "schedule/funcs.h"
#include "tessera/tir/printer.h"
#include "tessera/tir/schedule/schedule.h"
#include "tessera/tir/transform/flatten_buffer.h"
#include "tessera/tir/transform/loop_partition.h"
#include "tessera/tir/transform/lower.h"
#include "tessera/tir/transform/lower_blocks.h"
#include "tessera/tir/transform/lower_init_block.h"
#include "tessera/tir/transform/simplify.h"
#include "tessera/tir/transform/verify_flat.h"

namespace tessera::tir {
namespace {

using namespace testing;  // NOLINT
namespace T = tessera::tir::transform;
using ir::make_const;

const DataType i32 = DataType::Int(32);

int CountIfs(const Stmt& s) {
  struct C : StmtExprVisitor {
    int n = 0;
    void VisitStmt_(const IfThenElseNode* op) override {
      ++n;
      StmtExprVisitor::VisitStmt_(op);
    }
  } c;
  c.VisitStmt(s);
  return c.n;
}

TEST(LoopPartition, GuardedTailBecomesItsOwnLoop) {
  // for io in [0, 3): for ii in [0, 4): if io * 4 + ii < 10: C[io*4+ii] = A[io*4+ii] + 1
  Buffer a = Buffer::make("A", DataType::Float(32), {make_const(i32, 10)});
  Buffer c = Buffer::make("C", DataType::Float(32), {make_const(i32, 10)});
  Var io("io"), ii("ii");
  PrimExpr idx = io * 4 + ii;
  Stmt store = BufferStoreNode::make(c, BufferLoadNode::make(a, {idx}) + make_const(DataType::Float(32), 1.0), {idx});
  Stmt body = ForNode::make(io, make_const(i32, 0), make_const(i32, 3), ForKind::kSerial,
                            ForNode::make(ii, make_const(i32, 0), make_const(i32, 4), ForKind::kSerial,
                                          IfThenElseNode::make(idx < make_const(i32, 10), store)));
  PrimFunc f = PrimFunc::make("tail", {a, c}, body);
  PrimFunc g = T::Simplify(T::LoopPartition(f));
  const std::string text = AsText(g);
  // Main part: io in [0, 2), no guard; tail: io = 2 with the guard ii < 2 left.
  EXPECT_NE(text.find("for io in range(0, 2)"), std::string::npos) << text;
  EXPECT_EQ(CountIfs(g->body), 1) << text;
  T::VerifyFlat(g);
  EXPECT_EQ(RunFlatOnRandomInputs(f, f), RunFlatOnRandomInputs(g, f));
}

TEST(LoopPartition, ExpressionLetsInTheCopiedTailGetFreshVariables) {
  // As above, with C[i] = let t = A[i] * 2 in t + t: the tail's copy must define t_t, not t again.
  Buffer a = Buffer::make("A", DataType::Float(32), {make_const(i32, 10)});
  Buffer c = Buffer::make("C", DataType::Float(32), {make_const(i32, 10)});
  Var io("io"), ii("ii"), t("t", DataType::Float(32));
  PrimExpr idx = io * 4 + ii;
  PrimExpr value = ir::LetNode::make(t, BufferLoadNode::make(a, {idx}) * make_const(DataType::Float(32), 2.0), t + t);
  Stmt body = ForNode::make(io, make_const(i32, 0), make_const(i32, 3), ForKind::kSerial,
                            ForNode::make(ii, make_const(i32, 0), make_const(i32, 4), ForKind::kSerial,
                                          IfThenElseNode::make(idx < make_const(i32, 10),
                                                               BufferStoreNode::make(c, value, {idx}))));
  PrimFunc f = PrimFunc::make("let_tail", {a, c}, body);
  PrimFunc g = T::Simplify(T::LoopPartition(f));
  const std::string text = AsText(g);
  EXPECT_NE(text.find("t_t"), std::string::npos) << text;
  T::VerifyFlat(g);
  EXPECT_EQ(RunFlatOnRandomInputs(f, f), RunFlatOnRandomInputs(g, f));
}

TEST(LoopPartition, NonDividingTileUnrollsAndVectorizesAfterLowering) {
  // matmul + relu, rows split by 4 (10 = 2 x 4 + 2), relu under the tile loop, its row loop
  // unrolled and its column loop vectorized: LowerToFlat must partition the tile loop so the
  // guard does not stop either, and the result must match the unscheduled function.
  PrimFunc f = MatmulRelu(10, 12, 5);
  Schedule sch(f);
  auto l = sch.get_loops(sch.get_block("C"));
  auto i = sch.split(l[0], {-1, 4});
  sch.reverse_compute_at(sch.get_block("D"), i[0]);
  auto ld = sch.get_loops(sch.get_block("D"));
  sch.unroll(ld[1]);
  sch.vectorize(ld[2]);
  PrimFunc lowered = T::LowerToFlat(sch.func());
  PrimFunc reference = T::FlattenBuffer(T::LowerBlocks(T::LowerInitBlock(f)));
  EXPECT_EQ(RunFlatOnRandomInputs(reference, f), RunFlatOnRandomInputs(lowered, f)) << AsText(lowered);
  // D is stored as whole 12-lane vectors, its 4-row tile unrolled: 4 stores in the main part
  // (i_0 in [0, 2)) and 2 in the tail (rows 8 and 9), none under a guard.
  const std::string text = AsText(lowered);
  size_t stores = 0;
  for (size_t p = text.find("D[ramp("); p != std::string::npos; p = text.find("D[ramp(", p + 1)) ++stores;
  EXPECT_EQ(stores, 6u) << text;
}

TEST(LoopPartition, LeavesLoopsWithoutAProvablePrefixAlone) {
  // A guard true only on a suffix (io >= 1) is not partitioned: the function is unchanged.
  Buffer c = Buffer::make("C", DataType::Float(32), {make_const(i32, 4)});
  Var io("io");
  Stmt body = ForNode::make(io, make_const(i32, 0), make_const(i32, 4), ForKind::kSerial,
                            IfThenElseNode::make(io >= make_const(i32, 1),
                                                 BufferStoreNode::make(c, make_const(DataType::Float(32), 2.0), {io})));
  PrimFunc f = PrimFunc::make("suffix", {c}, body);
  EXPECT_EQ(T::LoopPartition(f)->body.get(), f->body.get());
}


// ---------------------------------------------------------------- selects (inlined padding)

const DataType f32 = DataType::Float(32);

int CountSelects(const Stmt& s) {
  struct C : StmtExprVisitor {
    int n = 0;
    void VisitExpr_(const ir::SelectNode* op) override {
      ++n;
      StmtExprVisitor::VisitExpr_(op);
    }
  } c;
  c.VisitStmt(s);
  return c.n;
}

/// C[i] += select(0 <= i + k - 1 < n, A[clamp(i + k - 1, 0, n - 1)], 0) * W[k] for k in [0, 3):
/// a 1-D convolution with its padding inlined, the row index `i` given by `row`.
Stmt PaddedConvRow(const Buffer& a, const Buffer& w, const Buffer& c, const PrimExpr& row, const Var& k, int64_t n) {
  PrimExpr x = row + k - 1;
  PrimExpr inside = x >= make_const(i32, 0) && x < make_const(i32, n);
  PrimExpr clamped = ir::min(ir::max(x, make_const(i32, 0)), make_const(i32, n - 1));
  PrimExpr v = ir::select(inside, BufferLoadNode::make(a, {clamped}), make_const(f32, 0.0));
  return ForNode::make(k, make_const(i32, 0), make_const(i32, 3), ForKind::kSerial,
                       BufferStoreNode::make(c, BufferLoadNode::make(c, {row}) + v * BufferLoadNode::make(w, {k}), {row}));
}

/// A[n], W[3], C[n] and `loop` (serial or parallel) over the rows of PaddedConvRow.
PrimFunc PaddedConv1d(const std::string& name, int64_t n, ForKind loop) {
  Buffer a = Buffer::make("A", f32, {make_const(i32, n)});
  Buffer w = Buffer::make("W", f32, {make_const(i32, 3)});
  Buffer c = Buffer::make("C", f32, {make_const(i32, n)});
  Var row(loop == ForKind::kParallel ? "r" : "i"), k("k");
  Stmt body = ForNode::make(row, make_const(i32, 0), make_const(i32, n), loop, PaddedConvRow(a, w, c, row, k, n));
  return PrimFunc::make(name, {a, w, c}, body);
}

TEST(LoopPartition, SelectsSplitIntoBorderAndInterior) {
  // for i in [0, 10): for k in [0, 3): C[i] += select(0 <= i + k - 1 < 10, A[clamp], 0) * W[k]
  // -> i = 0, i in [1, 9) with a plain load of A[i + k - 1], i = 9.
  PrimFunc f = PaddedConv1d("pad1d", 10, ForKind::kSerial);
  PrimFunc g = T::Simplify(T::LoopPartition(f));
  // The border iterations are single: i is substituted, and their kernel loops partition in
  // turn (the tap that reads the padding multiplies a zero).
  const std::string expected =
      "C[0] = C[0] + 0.0f * W[0]\n"
      "for k_t in range(1, 3):\n"
      "  C[0] = C[0] + A[k_t - 1] * W[k_t]\n"
      "for i in range(1, 9):\n"
      "  for k in range(0, 3):\n"
      "    C[i] = C[i] + A[i + k - 1] * W[k]\n"
      "for k_t_1 in range(0, 2):\n"
      "  C[9] = C[9] + A[k_t_1 + 8] * W[k_t_1]\n"
      "C[9] = C[9] + 0.0f * W[2]\n";
  EXPECT_EQ(AsText(g->body), expected);
  T::VerifyFlat(g);
  EXPECT_EQ(RunFlatOnRandomInputs(f, f), RunFlatOnRandomInputs(g, f));
}

TEST(LoopPartition, SelectBoundsMayUseOuterLoops) {
  // The row comes from an outer parallel loop (as a fused (channel, row) loop does): the kernel
  // loop's interior [max(0, 1 - r), min(3, 9 - r)) is symbolic, and only it loses the select.
  PrimFunc f = PaddedConv1d("pad_rows", 8, ForKind::kParallel);
  PrimFunc g = T::Simplify(T::LoopPartition(f));
  const std::string text = AsText(g->body);
  EXPECT_EQ(CountSelects(g->body), 2) << text;  // the two border pieces
  EXPECT_NE(text.find("C[r] = C[r] + A[r + k - 1] * W[k]"), std::string::npos) << text;
  T::VerifyFlat(g);
  EXPECT_EQ(RunFlatOnRandomInputs(f, f), RunFlatOnRandomInputs(g, f));
}

TEST(LoopPartition, LeavesSelectsItCannotBoundAlone) {
  // i * i is not affine in i: unchanged.
  Buffer c = Buffer::make("C", f32, {make_const(i32, 6)});
  Var i("i"), j("j");
  Stmt sq = BufferStoreNode::make(c, ir::select(i * i < make_const(i32, 9), make_const(f32, 1.0), make_const(f32, 0.0)), {i});
  PrimFunc f = PrimFunc::make("square", {c}, ForNode::make(i, make_const(i32, 0), make_const(i32, 6), ForKind::kSerial, sq));
  EXPECT_EQ(T::LoopPartition(f)->body.get(), f->body.get());
  // u = int(C[j]) is defined inside the loop: `u + j >= 2` says nothing about j alone.
  Var u("u");
  Stmt let = LetStmtNode::make(
      u, ir::CastNode::make(i32, BufferLoadNode::make(c, {j})),
      BufferStoreNode::make(c, ir::select(u + j >= make_const(i32, 2), make_const(f32, 1.0), make_const(f32, 0.0)), {j}));
  PrimFunc h = PrimFunc::make("let", {c}, ForNode::make(j, make_const(i32, 0), make_const(i32, 6), ForKind::kSerial, let));
  EXPECT_EQ(T::LoopPartition(h)->body.get(), h->body.get());
}

}  // namespace
}  // namespace tessera::tir
