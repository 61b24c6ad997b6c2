// The default x86 schedule: structure (inlined pad, parallel and vectorized loops) and
// results equal to the unscheduled function on dividing and non-dividing shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "tessera/tir/functor.h"
#include "tessera/tir/printer.h"
#include "tessera/topi/broadcast.h"
#include "tessera/topi/image/resize.h"
#include "tessera/topi/math.h"
#include "tessera/topi/nn/conv2d.h"
#include "tessera/topi/nn/dense.h"
#include "tessera/topi/nn/pooling.h"
#include "tessera/topi/nn/softmax.h"
#include "tessera/topi/reduction.h"
#include "tessera/topi/transform.h"
#include "tessera/topi/x86/schedule.h"
#include "tir_interp.h"
#include "topi_test_util.h"

namespace tessera::topi {
namespace {

using testing::Data;
const DataType f32 = DataType::Float(32);

using Summary = testing::LoopKinds;  // blocks, parallel and vectorized loops

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

// The extent of every vectorized loop of `f`.
std::vector<int64_t> VectorExtents(const tir::PrimFunc& f) {
  struct : tir::StmtExprVisitor {
    std::vector<int64_t> out;
    void VisitStmt_(const tir::ForNode* op) override {
      int64_t e = 0;
      if (op->for_kind == tir::ForKind::kVectorized && ir::as_const_int(op->extent, &e)) out.push_back(e);
      StmtExprVisitor::VisitStmt_(op);
    }
  } v;
  v.VisitStmt(f->body);
  return v.out;
}

TEST(TopiX86Schedule, ALongLoopTheFullWidthDoesNotDivideGetsFullLanesAndATail) {
  // exp over rows of 1500 (Whisper's attention scores: 1500 = 93 * 16 + 12, divisible by 4 only)
  // and of 1000 (divisible by 8): the lanes are the full width, the tail a split's guarded remainder
  // (LoopPartition splits it off), not a half or a quarter of the width all along.
  const x86::ScheduleOptions opt;
  for (int64_t n : {1500, 1000}) {
    Tensor x = te::placeholder(MakeShape({3, n}), f32, "x");
    Tensor y = exp(x);
    tir::PrimFunc f = x86::DefaultSchedule(te::create_prim_func({x, y}, "k"), opt);
    EXPECT_EQ(VectorExtents(f), (std::vector<int64_t>{opt.vector_lanes})) << tir::AsText(f);
    Data d = testing::Random(3 * n, 5, -3.0, 3.0), want;
    for (double v : d) want.push_back(std::exp(v));
    testing::CheckAllModes({x}, y, {d}, want, 1e-5);
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

// The blocks under each parallel loop, by name.
struct ParallelScopes : tir::StmtExprVisitor {
  std::vector<std::set<std::string>> scopes;
  int depth = 0;
  void VisitStmt_(const tir::ForNode* op) override {
    const bool par = op->for_kind == tir::ForKind::kParallel;
    if (par) scopes.emplace_back();
    depth += par;
    StmtExprVisitor::VisitStmt_(op);
    depth -= par;
  }
  void VisitStmt_(const tir::BlockNode* op) override {
    if (depth > 0) scopes.back().insert(op->name_hint);
    StmtExprVisitor::VisitStmt_(op);
  }
};

// Softmax of each of `rows` rows of n values (the reference, in double).
Data SoftmaxRows(const Data& d, int64_t rows, int64_t n) {
  Data out(rows * n);
  for (int64_t r = 0; r < rows; ++r) {
    double m = -INFINITY, sum = 0;
    for (int64_t i = 0; i < n; ++i) m = std::max(m, d[r * n + i]);
    for (int64_t i = 0; i < n; ++i) sum += std::exp(d[r * n + i] - m);
    for (int64_t i = 0; i < n; ++i) out[r * n + i] = std::exp(d[r * n + i] - m) / sum;
  }
  return out;
}

TEST(TopiX86Schedule, SoftmaxRowsShareOneParallelLoop) {
  const int64_t rows = 4 * 8, n = 48;
  Tensor x = te::placeholder(MakeShape({4, 8, n}), f32, "x");
  Tensor y = softmax(x, -1);
  tir::PrimFunc f = x86::DefaultSchedule(te::create_prim_func({x, y}, "k"));
  ParallelScopes par;
  par.VisitStmt(f->body);
  // One row loop: the max, the exp (kept as a stage: the sum and the normalization both read
  // it), the sum and the normalization of a row all run under it.
  ASSERT_EQ(par.scopes.size(), 1u) << tir::AsText(f);
  const std::set<std::string> want = {"T_softmax_maxelem_rf_init", "T_softmax_maxelem_rf", "T_softmax_maxelem",
                                      "T_softmax_exp", "T_softmax_expsum_rf_init", "T_softmax_expsum_rf",
                                      "T_softmax_expsum", "T_softmax_norm"};
  EXPECT_EQ(par.scopes[0], want) << tir::AsText(f);
  // Vectorized: both rf inits and updates (16 partial results per row), the exp and the norm.
  EXPECT_EQ(Summarize(f).vectorized, 6) << tir::AsText(f);
  Data d = testing::Random(rows * n, 9, -4.0, 4.0);
  testing::CheckAllModes({x}, y, {d}, SoftmaxRows(d, rows, n), 1e-5);
}

TEST(TopiX86Schedule, RowReductionsAreRfactored) {
  // A sum along the contiguous axis: 16 partial sums per row (rfactor), vectorized; a short length
  // that 16, 8 and 4 do not divide keeps the lanes across rows; a long one (799, Wav2Vec2's
  // attention rows) is rfactored with full lanes and a guarded tail. All equal the plain sum.
  for (int64_t n : {64, 37, 799}) {
    Tensor x = te::placeholder(MakeShape({20, n}), f32, "x");
    Tensor y = sum(x, {1});
    tir::PrimFunc f = x86::DefaultSchedule(te::create_prim_func({x, y}, "k"));
    Summary s = Summarize(f);
    EXPECT_EQ(s.blocks.count("T_sum_rf"), n == 37 ? 0u : 1u) << tir::AsText(f);
    EXPECT_EQ(s.vectorized, 2) << tir::AsText(f);  // the init's lanes and the update's
    EXPECT_EQ(s.parallel, 1);
    Data d = testing::Random(20 * n, 3), want;
    for (int64_t r = 0; r < 20; ++r) {
      double acc = 0;
      for (int64_t i = 0; i < n; ++i) acc += d[r * n + i];
      want.push_back(acc);
    }
    testing::CheckAllModes({x}, y, {d}, want, 1e-5);
  }
}

TEST(TopiX86Schedule, ARowReductionThroughAReshapeIsRfactoredAlongItsRows) {
  // The row sums of x [20, 64] reshaped to [20, 2, 32] (axes 1, 2): the inlined reshape indexes x by
  // floordiv / floormod of a flat index, which within the iter vars' domains is x[i, j * 32 + k],
  // contiguous in k. Before the indices were simplified so, the 20 outputs' lanes were vectorized
  // instead: a gather with a stride of a row.
  Tensor x = te::placeholder(MakeShape({20, 64}), f32, "x");
  Tensor y = sum(reshape(x, {20, 2, 32}), {1, 2});
  tir::PrimFunc f = x86::DefaultSchedule(te::create_prim_func({x, y}, "k"));
  Summary s = Summarize(f);
  EXPECT_EQ(s.blocks.count("T_sum_rf"), 1u) << tir::AsText(f);
  EXPECT_EQ(s.vectorized, 2) << tir::AsText(f);
  Data d = testing::Random(20 * 64, 4), want;
  for (int64_t r = 0; r < 20; ++r) {
    double acc = 0;
    for (int64_t i = 0; i < 64; ++i) acc += d[r * 64 + i];
    want.push_back(acc);
  }
  testing::CheckAllModes({x}, y, {d}, want, 1e-5);
}

TEST(TopiX86Schedule, SoftmaxOverRowsTheLanesDoNotDivideIsRfactoredWithATail) {
  // Softmax over 799 keys (799 = 49 * 16 + 15): the max and the sum each keep 16 partial results
  // per row (the tail's lanes never visited keep the init's -inf / 0), as over 48 keys.
  const int64_t rows = 6, n = 799;
  Tensor x = te::placeholder(MakeShape({rows, n}), f32, "x");
  Tensor y = softmax(x, -1);
  tir::PrimFunc f = x86::DefaultSchedule(te::create_prim_func({x, y}, "k"));
  Summary s = Summarize(f);
  EXPECT_EQ(s.blocks.count("T_softmax_maxelem_rf"), 1u) << tir::AsText(f);
  EXPECT_EQ(s.blocks.count("T_softmax_expsum_rf"), 1u) << tir::AsText(f);
  EXPECT_EQ(s.vectorized, 6) << tir::AsText(f);
  for (double lo : {-4.0, -1e4}) {  // all-negative rows: a lane left at -inf must not win the max
    Data d = testing::Random(rows * n, 11, lo, lo + 8.0);
    testing::CheckAllModes({x}, y, {d}, SoftmaxRows(d, rows, n), 1e-5);
  }
}

TEST(TopiX86Schedule, AResizesFewVectorsPerRowAreUnrolledAndTheCoordinatesFold) {
  // A bilinear 7 -> 112 resize along W (and 5 -> 9 along H): 7 vectors of 16 per output row. The
  // loop over them is unrolled (its float coordinates fold per copy). A 16 -> 20 resize (a scale
  // of 5 / 4: topi's exact integer coordinates and a table of 5 weights, no float coordinate) and
  // a nearest 4 -> 8 resize (one vector of 8: no loop left) are not. All equal the unscheduled
  // compute.
  struct Case {
    std::vector<int64_t> in;
    int64_t out_h, out_w;
    std::string mode;
    int unrolled;
  };
  for (const Case& c : {Case{{2, 3, 5, 7}, 9, 112, "linear", 1}, Case{{1, 2, 6, 16}, 6, 20, "linear", 0},
                        Case{{1, 3, 4, 4}, 8, 8, "nearest", 0}}) {
    SCOPED_TRACE(c.mode + " to " + std::to_string(c.out_w));
    ResizeParams p;
    p.axes = {2, 3};
    p.sizes = {c.out_h, c.out_w};
    p.scales = {static_cast<double>(c.out_h) / c.in[2], static_cast<double>(c.out_w) / c.in[3]};
    p.mode = c.mode;
    Tensor x = te::placeholder(MakeShape(c.in), f32, "x");
    Tensor y = resize(x, p);
    tir::PrimFunc f = x86::DefaultSchedule(te::create_prim_func({x, y}, "k"));
    Summary s = Summarize(f);
    EXPECT_EQ(s.unrolled, c.unrolled) << tir::AsText(f);
    EXPECT_EQ(s.vectorized, 1) << tir::AsText(f);
    int64_t n = 1;
    for (int64_t e : c.in) n *= e;
    Data d = testing::Random(n, 17);
    Data u = testing::Run({x}, {y}, {d}, testing::Mode::kUnscheduled)[0];
    testing::CheckAllModes({x}, y, {d}, u, 1e-6);
  }
}

TEST(TopiX86Schedule, AveragePoolOfABlockedLayoutKeepsItsLanesUnderTheRow) {
  // An avg pool 3x3 / 1 / pad 1 over NCHW16c (Inception's branch pools): the window sum and the
  // divide share every spatial loop; the row takes the outer four (1 * 2 * 7 * 6 = 84, parallel)
  // and the 16 channel lanes stay under it, vectorized in the sum's init, its update and the divide
  // (was one scalar element per row iteration, 20x slower).
  Tensor x = te::placeholder(MakeShape({1, 2, 7, 6, 16}), f32, "x");
  Pool2DParams p;
  p.pool_size = {3, 3};
  p.padding = {1, 1, 1, 1};
  Tensor y = avg_pool2d(x, p);
  tir::PrimFunc f = x86::DefaultSchedule(te::create_prim_func({x, y}, "pool"));
  ParallelScopes par;
  par.VisitStmt(f->body);
  ASSERT_EQ(par.scopes.size(), 1u) << tir::AsText(f);
  EXPECT_EQ(par.scopes[0], (std::set<std::string>{"pool_sum_init", "pool_sum", "pool_avg"})) << tir::AsText(f);
  EXPECT_EQ(Summarize(f).vectorized, 3) << tir::AsText(f);
  // Against a direct average over the in-image taps (count_include_pad = 0).
  Data d = testing::Random(2 * 7 * 6 * 16, 4), want;
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t h = 0; h < 7; ++h)
      for (int64_t w = 0; w < 6; ++w)
        for (int64_t l = 0; l < 16; ++l) {
          double acc = 0;
          int taps = 0;
          for (int64_t y0 = h - 1; y0 <= h + 1; ++y0)
            for (int64_t x0 = w - 1; x0 <= w + 1; ++x0)
              if (y0 >= 0 && y0 < 7 && x0 >= 0 && x0 < 6) acc += d[((c * 7 + y0) * 6 + x0) * 16 + l], ++taps;
          want.push_back(acc / taps);
        }
  testing::CheckAllModes({x}, y, {d}, want, 1e-5);
}

}  // namespace
}  // namespace tessera::topi
