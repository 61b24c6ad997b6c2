// The default x86 schedule: structure (inlined pad, parallel and vectorized loops) and
// results equal to the unscheduled function on dividing and non-dividing shapes.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tessera/tir/functor.h"
#include "tessera/topi/broadcast.h"
#include "tessera/topi/math.h"
#include "tessera/topi/nn/conv2d.h"
#include "tessera/topi/nn/dense.h"
#include "tessera/topi/x86/schedule.h"
#include "tir_interp.h"
#include "topi_test_util.h"

namespace tessera::topi {
namespace {

using testing::Data;
const DataType f32 = DataType::Float(32);

struct Summary : tir::StmtExprVisitor {
  std::set<std::string> blocks;
  int parallel = 0, vectorized = 0;
  void VisitStmt_(const tir::BlockNode* op) override {
    blocks.insert(op->name_hint);
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const tir::ForNode* op) override {
    parallel += op->for_kind == tir::ForKind::kParallel;
    vectorized += op->for_kind == tir::ForKind::kVectorized;
    StmtExprVisitor::VisitStmt_(op);
  }
};

Summary Summarize(const tir::PrimFunc& f) {
  Summary s;
  s.VisitStmt(f->body);
  return s;
}

TEST(TopiX86Schedule, ElemwiseIsParallelAndVectorized) {
  for (int64_t inner : {64, 37, 7}) {
    Tensor a = te::placeholder(MakeShape({1, 3, inner}), f32, "a");
    Tensor b = te::placeholder(MakeShape({1, 3, inner}), f32, "b");
    Tensor y = relu(add(a, b));
    tir::PrimFunc f = x86::DefaultSchedule(te::create_prim_func({a, b, y}, "k"));
    Summary s = Summarize(f);
    EXPECT_EQ(s.blocks.count("T_add"), 0u) << "the add is inlined into the relu";
    EXPECT_EQ(s.parallel, 1) << inner;
    EXPECT_EQ(s.vectorized, 1) << inner;
    Data da = testing::Random(3 * inner, 1), db = testing::Random(3 * inner, 2), want;
    for (int64_t i = 0; i < 3 * inner; ++i) want.push_back(std::max(da[i] + db[i], 0.0));
    testing::CheckAllModes({a, b}, y, {da, db}, want);
  }
}

TEST(TopiX86Schedule, ConvPadInlinedAndParallel) {
  Tensor x = te::placeholder(MakeShape({1, 3, 10, 11}), f32, "x");
  Tensor w = te::placeholder(MakeShape({5, 3, 3, 3}), f32, "w");
  Conv2DParams p;
  p.padding = {1, 1, 1, 1};
  Tensor y = conv2d_nchw(x, w, p);
  tir::PrimFunc f0 = te::create_prim_func({x, w, y}, "conv");
  tir::PrimFunc f = x86::DefaultSchedule(f0);
  Summary s = Summarize(f);
  EXPECT_EQ(s.blocks.count("pad_temp"), 0u);
  EXPECT_GE(s.parallel, 1);
  Data dx = testing::Random(330, 3), dw = testing::Random(135, 4);
  Data out0(5 * 10 * 11), out1(5 * 10 * 11);
  testing::RunPrimFunc(f0, {&dx, &dw, &out0});
  testing::RunPrimFunc(f, {&dx, &dw, &out1});
  testing::ExpectNear(out1, out0, 1e-5, "scheduled vs unscheduled conv");
}

TEST(TopiX86Schedule, DuplicateBlockNamesAreRenamed) {
  Tensor a = te::placeholder(MakeShape({4, 5}), f32, "a");
  Tensor y = add(add(a, a), a);  // two computes named T_add
  tir::PrimFunc f = te::create_prim_func({a, y}, "k");
  Summary s = Summarize(x86::UniquifyBlockNames(f));
  EXPECT_TRUE(s.blocks.count("T_add"));
  Data d = testing::Random(20, 5), want;
  for (double v : d) want.push_back(3 * v);
  testing::CheckAllModes({a}, y, {d}, want);
}

TEST(TopiX86Schedule, DenseNonDividing) {
  Tensor x = te::placeholder(MakeShape({1, 23}), f32, "x");
  Tensor w = te::placeholder(MakeShape({35, 23}), f32, "w");
  Tensor y = dense(x, w);
  Data dx = testing::Random(23, 1), dw = testing::Random(35 * 23, 2);
  Data u = testing::Run({x, w}, {y}, {dx, dw}, testing::Mode::kUnscheduled)[0];
  Data s = testing::Run({x, w}, {y}, {dx, dw}, testing::Mode::kScheduled)[0];
  testing::ExpectNear(s, u, 1e-6, "scheduled vs unscheduled dense");
  EXPECT_GE(Summarize(x86::DefaultSchedule(te::create_prim_func({x, w, y}, "d"))).parallel, 1);
}

}  // namespace
}  // namespace tessera::topi
