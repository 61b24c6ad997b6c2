// Schedule primitives and lowering passes on symbolic extents (dynamic shapes: PrimFunc
// shape_vars): split of a symbolic loop (a guarded tail, or none when the extent is provably a
// multiple), fuse, LoopPartition of the guarded loop, CompactBufferAllocation, numerics on the
// reference interpreter at several values of the shape var.
#include <gtest/gtest.h>

#ifdef TESSERA_SCHEDULE_TEST_TE

#include <vector>

#include "schedule_test_util.h"
#include "tessera/ir/op.h"
#include "tessera/te/tensor.h"
#include "tessera/tir/functor.h"
#include "tessera/tir/transform/lower.h"
#include "tessera/tir/transform/unroll_loop.h"
#include "tir_interp.h"

namespace tessera::tir {
namespace {

using ir::make_const;
const DataType f32 = DataType::Float(32);
const DataType i32 = DataType::Int(32);

// B[n, 16] = A[n, 16] * 2 + 1 through an intermediate T (two blocks).
PrimFunc TwoStage(const ir::Var& n) {
  te::Tensor a = te::placeholder({n, make_const(i32, 16)}, f32, "A");
  te::Tensor t = te::compute({n, make_const(i32, 16)}, [&](const std::vector<ir::Var>& i) { return a({i[0], i[1]}) * 2.0f; }, "T");
  te::Tensor b = te::compute({n, make_const(i32, 16)}, [&](const std::vector<ir::Var>& i) { return t({i[0], i[1]}) + 1.0f; }, "B");
  return te::create_prim_func({a, b}, "two_stage");
}

// Runs f at n on A = 0, 1, 2, ... and returns B.
std::vector<double> RunAt(const PrimFunc& f, int64_t n) {
  std::vector<double> a(n * 16), b(n * 16, -1);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i);
  testing::RunPrimFunc(f, {&a, &b}, {n});
  return b;
}

void ExpectSameAt(const PrimFunc& f, const std::vector<int64_t>& ns) {
  for (int64_t n : ns) {
    std::vector<double> b = RunAt(f, n);
    for (int64_t i = 0; i < n * 16; ++i) ASSERT_EQ(b[i], 2.0 * i + 1) << "n = " << n << ", element " << i << "\n" << f;
  }
}

bool HasIf(const Stmt& s) {
  struct V : StmtExprVisitor {
    bool found = false;
    void VisitStmt_(const IfThenElseNode* op) override { found = true; }
    void VisitStmt_(const BlockRealizeNode* op) override {
      found |= op->predicate.defined() && !ir::is_one(op->predicate);
      StmtExprVisitor::VisitStmt_(op);
    }
  } v;
  v.VisitStmt(s);
  return v.found;
}

TEST(DynamicShapeSchedule, SplitOfASymbolicLoopHasAGuardedTail) {
  ir::Var n("n");
  Schedule sch(TwoStage(n));
  auto loops = sch.get_loops(sch.get_block("B"));
  auto parts = sch.split(loops[0], {-1, 8});
  EXPECT_EQ(AsText(sch.GetFor(parts[0])->extent), "(n + 7) // 8");
  EXPECT_EQ(ir::get_const_int(sch.GetFor(parts[1])->extent), 8);
  EXPECT_TRUE(HasIf(sch.func()->body));
  EXPECT_EQ(sch.func()->shape_vars.size(), 1u);
  testing::ExpectTraceRoundTrip(sch, [&] { return TwoStage(n); });
  ExpectSameAt(sch.func(), {0, 1, 7, 8, 9, 17});
  // Lowered: LoopPartition splits the whole tiles (no guard) from the tail.
  PrimFunc flat = transform::LowerToFlat(sch.func());
  ExpectSameAt(flat, {0, 1, 7, 8, 9, 17, 64});
  bool main_unguarded = false, tail_guarded = false;
  struct Loops : StmtExprVisitor {
    std::vector<const ForNode*> top;
    int depth = 0;
    void VisitStmt_(const ForNode* op) override {
      if (depth == 0) top.push_back(op);
      ++depth;
      StmtExprVisitor::VisitStmt_(op);
      --depth;
    }
  } l;
  l.VisitStmt(flat->body);
  for (const ForNode* f : l.top) {
    if (!f->min.as<ir::IntImmNode>()) tail_guarded |= HasIf(f->body);
    else if (f->loop_var->name_hint.find("i_0") == 0) main_unguarded |= !HasIf(f->body);
  }
  EXPECT_TRUE(main_unguarded) << flat;
  EXPECT_TRUE(tail_guarded) << flat;
}

TEST(DynamicShapeSchedule, SplitOfASymbolicLoopNeedsAnInferredFactor) {
  ir::Var n("n");
  Schedule sch(TwoStage(n));
  auto loops = sch.get_loops(sch.get_block("B"));
  EXPECT_SCHEDULE_ERROR(sch.split(loops[0], {2, 8}), "symbolic extent n");
}

TEST(DynamicShapeSchedule, SplitOfAPaddedExtentIsExact) {
  ir::Var n("n");
  const PrimExpr padded = ir::floordiv(n + 5, make_const(i32, 6)) * make_const(i32, 6);
  te::Tensor a = te::placeholder({n}, f32, "A");
  te::Tensor t = te::compute({padded}, [&](const std::vector<ir::Var>& i) { return a({ir::min(i[0], n - 1)}) * 2.0f; }, "T");
  te::Tensor b = te::compute({n}, [&](const std::vector<ir::Var>& i) { return t({i[0]}); }, "B");
  Schedule sch(te::create_prim_func({a, b}, "padded"));
  auto parts = sch.split(sch.get_loops(sch.get_block("T"))[0], {-1, 6});
  EXPECT_EQ(AsText(sch.GetFor(parts[0])->extent), "(n + 5) // 6");
  EXPECT_FALSE(HasIf(sch.func()->body)) << sch.func();
}

TEST(DynamicShapeSchedule, FuseOfSymbolicLoops) {
  ir::Var n("n");
  Schedule sch(TwoStage(n));
  auto loops = sch.get_loops(sch.get_block("B"));
  LoopRV f = sch.fuse(loops);
  EXPECT_EQ(AsText(sch.GetFor(f)->extent), "n * 16");
  sch.parallel(f);
  ExpectSameAt(sch.func(), {0, 1, 5});
  ExpectSameAt(transform::LowerToFlat(sch.func()), {0, 1, 5, 33});
}

TEST(DynamicShapeSchedule, ComputeAtCompactsASymbolicIntermediate) {
  ir::Var n("n");
  Schedule sch(TwoStage(n));
  auto loops = sch.get_loops(sch.get_block("B"));
  sch.compute_at(sch.get_block("T"), loops[0]);
  PrimFunc flat = transform::LowerToFlat(sch.func());
  // T [n, 16] shrinks to one row, allocated inside the row loop.
  struct Allocs : StmtExprVisitor {
    std::vector<Buffer> bufs;
    void VisitStmt_(const AllocateNode* op) override {
      bufs.push_back(op->buffer);
      StmtExprVisitor::VisitStmt_(op);
    }
  } allocs;
  allocs.VisitStmt(flat->body);
  ASSERT_EQ(allocs.bufs.size(), 1u) << flat;
  EXPECT_EQ(allocs.bufs[0].NumElements(), 16) << flat;
  ExpectSameAt(flat, {0, 1, 3, 20});
}

TEST(DynamicShapeSchedule, UnrollOfASymbolicLoopIsRefused) {
  ir::Var n("n");
  Schedule sch(TwoStage(n));
  auto loops = sch.get_loops(sch.get_block("B"));
  EXPECT_SCHEDULE_ERROR(sch.unroll(loops[0]), "non-constant extent");
  // A loop marked unrolled some other way stays a loop through UnrollLoop (LLVM unrolls it).
  PrimFunc f = sch.func();
  struct MarkUnrolled : StmtExprMutator {
    Stmt VisitStmt_(const ForNode* op, const Stmt& s) override {
      Stmt body = VisitStmt(op->body);
      return ForNode::make(op->loop_var, op->min, op->extent,
                           op->extent.as<ir::IntImmNode>() ? op->for_kind : ForKind::kUnrolled, body, op->annotations);
    }
  };
  PrimFunc flat = transform::LowerToFlat(f);
  ExpectSameAt(transform::UnrollLoop(flat.WithBody(MarkUnrolled().VisitStmt(flat->body))), {0, 1, 4});
}

}  // namespace
}  // namespace tessera::tir

#endif  // TESSERA_SCHEDULE_TEST_TE
