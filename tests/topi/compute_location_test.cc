// MetaSchedule's RandomComputeLocation rule (topi/x86/compute_location.h): which producers are
// offered "<block>.compute_at" and at which of their consumer's loops, the schedule each location
// gives (the producer under that loop, the consumer's parallel loop outside it), results equal to a
// double-precision reference at every location (reference interpreter, flat TIR and LLVM JIT),
// traces that replay, and an untuned build that never moves a block.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include "tessera/tir/printer.h"
#include "tessera/tir/schedule/trace.h"
#include "tessera/tir/structural_equal.h"
#include "tessera/topi/broadcast.h"
#include "tessera/topi/reduction.h"
#include "tessera/topi/schedule_knobs.h"
#include "tessera/topi/x86/compute_location.h"
#include "tessera/topi/x86/schedule.h"
#include "topi_test_util.h"

namespace tessera::topi {
namespace {

using testing::CheckScheduledRuns;
using testing::Data;
const DataType f32 = DataType::Float(32);

// y[i, j] = x[i, j] - max_k x[i, k] for x [rows, cols]: a row reduction (T_max, a stage of its
// own) and its one elementwise reader.
struct RowMaxSub {
  Tensor x, y;
  int64_t rows, cols;
  RowMaxSub(int64_t r, int64_t c) : rows(r), cols(c) {
    x = te::placeholder(MakeShape({rows, cols}), f32, "x");
    y = subtract(x, max(x, {1}, true));
  }
  tir::PrimFunc Func() const { return te::create_prim_func({x, y}, "k"); }
  Data Want(const Data& dx) const {
    Data want(dx.size());
    for (int64_t i = 0; i < rows; ++i) {
      double m = -INFINITY;
      for (int64_t j = 0; j < cols; ++j) m = std::max(m, dx[static_cast<size_t>(i * cols + j)]);
      for (int64_t j = 0; j < cols; ++j) want[static_cast<size_t>(i * cols + j)] = dx[static_cast<size_t>(i * cols + j)] - m;
    }
    return want;
  }
};

TEST(RandomComputeLocation, ARowReductionIsOfferedEveryLoopOfItsReader) {
  const RowMaxSub k(24, 40);
  const tir::PrimFunc f = k.Func();
  const std::vector<std::string> blocks = {"T_max", "T_subtract"};
  EXPECT_EQ(x86::ComputeLocationCandidates(tir::Schedule(f), "T_max", blocks), (std::vector<int64_t>{0, 1, 2}));
  // The reader writes the output: nothing reads it, so it is not offered the knob.
  EXPECT_TRUE(x86::ComputeLocationCandidates(tir::Schedule(f), "T_subtract", blocks).empty());
  // A reader that is not one of the default schedule's blocks (a template's) is not a location.
  EXPECT_TRUE(x86::ComputeLocationCandidates(tir::Schedule(f), "T_max", {"T_max"}).empty());
  EXPECT_TRUE(x86::ComputeLocationCandidates(tir::Schedule(f), "no_such_block", blocks).empty());
}

// The number of loops around each block.
struct LoopDepths : tir::StmtExprVisitor {
  std::map<std::string, int> depth;
  int loops = 0;
  void VisitStmt_(const tir::ForNode* op) override {
    ++loops;
    StmtExprVisitor::VisitStmt_(op);
    --loops;
  }
  void VisitStmt_(const tir::BlockNode* op) override {
    depth[op->name_hint] = loops;
    StmtExprVisitor::VisitStmt_(op);
  }
};

TEST(RandomComputeLocation, EveryLocationComputesTheSameAndReplaysFromItsTrace) {
  const RowMaxSub k(24, 40);
  const tir::PrimFunc f = k.Func();
  const Data x = testing::Random(24 * 40, 3);
  const Data want = k.Want(x);
  const std::string untuned = x86::ScheduleDefault(f, testing::TestOptions(nullptr), {}).trace().str();
  std::map<int64_t, int> depth;
  for (int64_t at : {0, 1, 2}) {
    KnobContext ctx({{"T_max.compute_at", at}});
    const tir::Schedule sch = x86::ScheduleDefault(f, testing::TestOptions(&ctx), {});
    const std::string what = "T_max.compute_at=" + std::to_string(at);
    bool offered = false;
    for (const KnobSpec& spec : ctx.space()) offered |= spec.name == "T_max.compute_at";
    EXPECT_TRUE(offered) << what;
    // 0 is the default's own choice (its row schedule computes the max under the row loop); 1 puts
    // it under the reader's row loop, 2 under its column loop (recomputed per element); both inside
    // the reader's one parallel loop.
    EXPECT_EQ(sch.trace().str() == untuned, at == 0) << what << "\n" << sch.trace().str();
    testing::ParallelShape shape;
    shape.VisitStmt(sch.func()->body);
    EXPECT_EQ(shape.parallel, 1) << what << "\n" << tir::AsText(sch.func());
    EXPECT_TRUE(shape.under_parallel.count("T_max")) << what << "\n" << tir::AsText(sch.func());
    LoopDepths d;
    d.VisitStmt(sch.func()->body);
    depth[at] = d.depth["T_max"];
    CheckScheduledRuns(sch.func(), {x}, want.size(), want, 1e-6, what);
    tir::Schedule replay(f);
    tir::Trace::FromJSON(sch.trace().ToJSON()).ApplyToSchedule(replay);
    EXPECT_TRUE(tir::StructuralEqual(replay.func(), sch.func())) << what << "\n" << sch.trace().str();
  }
  EXPECT_GT(depth[2], depth[1]) << "under the column loop the max sits deeper than under the row loop";
}

TEST(RandomComputeLocation, TheUntunedDefaultNeverMovesABlock) {
  const RowMaxSub k(24, 40);
  const tir::PrimFunc f = k.Func();
  KnobContext ctx;
  const tir::Schedule probed = x86::ScheduleDefault(f, testing::TestOptions(&ctx), {});
  const tir::Schedule untuned = x86::ScheduleDefault(f, testing::TestOptions(nullptr), {});
  EXPECT_EQ(untuned.trace().str(), probed.trace().str());
  // A producer with two readers is not offered the knob: outputs x - max and x * max.
  Tensor x = te::placeholder(MakeShape({24, 40}), f32, "x");
  Tensor m = max(x, {1}, true);
  tir::Schedule two(te::create_prim_func({x, subtract(x, m), multiply(x, m)}, "k2"));
  EXPECT_TRUE(x86::ComputeLocationCandidates(two, "T_max", {"T_max", "T_subtract", "T_multiply"}).empty());
}

}  // namespace
}  // namespace tessera::topi
