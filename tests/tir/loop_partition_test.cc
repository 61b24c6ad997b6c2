// LoopPartition: the tail of a non-dividing split becomes its own loop; the main part loses
// its guard (after Simplify); numerics unchanged; the copy defines fresh variables.
#include <gtest/gtest.h>


#include "ref_eval.h"
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

}  // namespace
}  // namespace tessera::tir
