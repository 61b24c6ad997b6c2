// MetaSchedule's AddRFactor rule (topi/x86/add_rfactor.h): which reductions it applies to, the
// schedule it builds (reduction loops fused and split, the partial reductions parallel, the
// combining block after them), results equal to a double-precision reference under the hand-picked
// and under every configuration (reference interpreter, flat TIR and LLVM JIT), and traces that
// replay; offered through ScheduleDefault's "<block>.rule" knob and never used untuned.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "tessera/tir/printer.h"
#include "tessera/tir/schedule/trace.h"
#include "tessera/tir/structural_equal.h"
#include "tessera/topi/math.h"
#include "tessera/topi/reduction.h"
#include "tessera/topi/schedule_knobs.h"
#include "tessera/topi/x86/add_rfactor.h"
#include "tessera/topi/x86/schedule.h"
#include "topi_test_util.h"

namespace tessera::topi {
namespace {

using testing::Data;
using testing::CheckScheduledRuns;
const DataType f32 = DataType::Float(32);

// The default schedule of f with `config` and, for every block offering it, the rule knob at 2.
tir::Schedule Factored(const tir::PrimFunc& f, KnobConfig config, std::vector<KnobSpec>* space = nullptr) {
  KnobContext probe(config);
  x86::ScheduleDefault(f, testing::TestOptions(&probe), {});
  for (const KnobSpec& k : probe.space())
    if (k.name.size() > 5 && k.name.substr(k.name.size() - 5) == ".rule" &&
        std::count(k.candidates.begin(), k.candidates.end(), 2))
      config.emplace(k.name, 2);
  KnobContext ctx(config);
  tir::Schedule sch = x86::ScheduleDefault(f, testing::TestOptions(&ctx), {});
  if (space) *space = ctx.space();
  return sch;
}

// Sums (or maxima) over `axes` of an [outer, inner...] tensor, in double precision.
Data Reduce(const Data& x, const std::vector<int64_t>& shape, const std::vector<int64_t>& axes, bool take_max) {
  std::vector<int64_t> out_shape;
  for (size_t d = 0; d < shape.size(); ++d)
    if (!std::count(axes.begin(), axes.end(), static_cast<int64_t>(d))) out_shape.push_back(shape[d]);
  int64_t out_size = 1;
  for (int64_t e : out_shape) out_size *= e;
  Data out(static_cast<size_t>(out_size), take_max ? -INFINITY : 0.0);
  std::vector<int64_t> idx(shape.size(), 0);
  for (size_t flat = 0; flat < x.size(); ++flat) {
    int64_t o = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      if (!std::count(axes.begin(), axes.end(), static_cast<int64_t>(d))) o = o * shape[d] + idx[d];
    double& acc = out[static_cast<size_t>(o)];
    acc = take_max ? std::max(acc, x[flat]) : acc + x[flat];
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

struct Case {
  std::string what;
  std::vector<int64_t> shape, axes;
  bool take_max = false;
};

tir::PrimFunc Func(const Case& c) {
  Tensor x = te::placeholder(MakeShape(c.shape), f32, "x");
  Tensor y = c.take_max ? max(x, c.axes) : sum(x, c.axes);
  return te::create_prim_func({x, y}, "k");
}

std::string BlockOf(const Case& c) { return c.take_max ? "T_max" : "T_sum"; }

TEST(AddRFactor, AWholeTensorSumIsSplitIntoParallelPartialSums) {
  const Case c{"sum of [64, 96]", {64, 96}, {0, 1}};
  const tir::PrimFunc f = Func(c);
  const x86::ScheduleOptions opt = testing::TestOptions(nullptr);
  ASSERT_TRUE(x86::AddRFactorApplies(tir::Schedule(f), "T_sum", opt));
  std::vector<KnobSpec> space;
  tir::Schedule sch = Factored(f, {}, &space);
  std::set<std::string> names;
  for (const KnobSpec& k : space) names.insert(k.name);
  for (const char* n : {"T_sum.rule", "T_sum.rfactor_split", "T_sum.rfactor_loop"}) EXPECT_TRUE(names.count(n)) << n;
  // The hand-picked configuration: the 64 rows (the reduction loops but the innermost) split into
  // 16 partial sums of 4 rows each, those in parallel; the default schedule of the rf block then
  // keeps 16 lanes of partial sums along each row of 96 (its own rfactor); combined after, the
  // 16 partial sums read as one vector.
  EXPECT_EQ(sch.trace().str(),
            "b0 = sch.get_block(\"T_sum\")\n"
            "l1, l2 = sch.get_loops(b0)\n"
            "l3, l4 = sch.split(l1, factors=[16, 4])\n"
            "sch.reorder(l3, l4, l2)\n"
            "b5 = sch.rfactor(l3, factor_axis=0)\n"
            "b6 = sch.get_block(\"T_sum_rf\")\n"
            "l7, l8, l9 = sch.get_loops(b6)\n"
            "l10, l11 = sch.split(l9, factors=[-1, 16])\n"
            "b12 = sch.rfactor(l11, factor_axis=1)\n"
            "b13 = sch.decompose_reduction(b12, l8)\n"
            "sch.vectorize(l11)\n"
            "l14, l15 = sch.get_loops(b13)\n"
            "sch.vectorize(l15)\n"
            "sch.parallel(l7)\n"
            "b16 = sch.get_block(\"T_sum\")\n"
            "l17, = sch.get_loops(b16)\n"
            "b18 = sch.rfactor(l17, factor_axis=0)\n"
            "b19 = sch.decompose_reduction(b18, l17)\n"
            "sch.vectorize(l17)\n"
            "l20, = sch.get_loops(b19)\n"
            "sch.vectorize(l20)\n");
  testing::ParallelShape shape;
  shape.VisitStmt(sch.func()->body);
  EXPECT_EQ(shape.parallel, 1) << tir::AsText(sch.func());
  EXPECT_TRUE(shape.under_parallel.count("T_sum_rf")) << tir::AsText(sch.func());
  EXPECT_FALSE(shape.under_parallel.count("T_sum")) << "the combining block runs after the partials\n"
                                                    << tir::AsText(sch.func());
  EXPECT_GE(shape.vectorized, 1) << tir::AsText(sch.func());
  const Data x = testing::Random(64 * 96, 1);
  CheckScheduledRuns(sch.func(), {x}, 1, Reduce(x, c.shape, c.axes, false), 1e-4, c.what);
}

TEST(AddRFactor, EveryConfigurationComputesTheSameAndReplaysFromItsTrace) {
  const std::vector<Case> cases = {
      {"sum of [64, 96]", {64, 96}, {0, 1}},
      {"row sums of [4, 4096]", {4, 4096}, {1}},
      {"sum over the last two axes of [2, 32, 40]", {2, 32, 40}, {1, 2}},
      {"max of [3, 1000]", {3, 1000}, {1}, true},
  };
  for (const Case& c : cases) {
    const tir::PrimFunc f = Func(c);
    std::vector<KnobSpec> space;
    Factored(f, {}, &space);
    const KnobSpec* split = nullptr;
    for (const KnobSpec& k : space)
      if (k.name == BlockOf(c) + ".rfactor_split") split = &k;
    ASSERT_NE(split, nullptr) << c.what;
    int64_t size = 1;
    for (int64_t e : c.shape) size *= e;
    const Data x = testing::Random(static_cast<size_t>(size), 2);
    const Data want = Reduce(x, c.shape, c.axes, c.take_max);
    std::set<std::string> distinct;
    for (int64_t s : split->candidates) {
      for (int64_t loop : {0, 1}) {
        const KnobConfig config = {{BlockOf(c) + ".rfactor_split", s}, {BlockOf(c) + ".rfactor_loop", loop}};
        tir::Schedule sch = Factored(f, config);
        const std::string what = c.what + " split " + std::to_string(s) + " loop " + std::to_string(loop);
        EXPECT_NE(sch.trace().str().find("sch.rfactor("), std::string::npos) << what;
        distinct.insert(tir::AsText(sch.func()));
        CheckScheduledRuns(sch.func(), {x}, want.size(), want, 1e-4, what);
        tir::Schedule replay(f);
        tir::Trace::FromJSON(sch.trace().ToJSON()).ApplyToSchedule(replay);
        EXPECT_TRUE(tir::StructuralEqual(replay.func(), sch.func())) << what << "\n" << sch.trace().str();
      }
    }
    EXPECT_EQ(distinct.size(), 2 * split->candidates.size()) << c.what;
  }
}

TEST(AddRFactor, AppliesOnlyToReductionsWithFewOutputsAndALongFactorableReduction) {
  const x86::ScheduleOptions opt = testing::TestOptions(nullptr);
  auto applies = [&](const Case& c) { return x86::AddRFactorApplies(tir::Schedule(Func(c)), BlockOf(c), opt); };
  EXPECT_TRUE(applies({"15 row sums", {15, 256}, {1}}));
  EXPECT_FALSE(applies({"16 row sums: enough parallel outputs", {16, 256}, {1}}));
  EXPECT_FALSE(applies({"a short reduction", {2, 63}, {1}}));
  EXPECT_FALSE(applies({"a prime reduction", {1, 4099}, {1}}));
  // An elementwise block and a missing block.
  Tensor a = te::placeholder(MakeShape({4, 256}), f32, "a");
  EXPECT_FALSE(x86::AddRFactorApplies(tir::Schedule(te::create_prim_func({a, relu(a)}, "k")), "T_relu", opt));
  EXPECT_FALSE(x86::AddRFactorApplies(tir::Schedule(Func({"", {64, 96}, {0, 1}})), "no_such_block", opt));
  // Not applying leaves the schedule as it was.
  tir::Schedule wide(Func({"", {16, 256}, {1}}));
  EXPECT_TRUE(x86::AddRFactor(wide, "T_sum", opt).empty());
  EXPECT_EQ(wide.trace().str(), tir::Schedule(Func({"", {16, 256}, {1}})).trace().str());
}

TEST(AddRFactor, TheUntunedDefaultTakesItForLargeReductionsOnly) {
  // The rule knob offers {0, 2} (MultiLevelTiling needs a spatial loop > 1). Below
  // kAddRFactorDefaultElements its fallback is 0: the default vectorizes the whole-tensor sum along
  // its rows (its own rfactor by the lanes), on one core.
  const Case small{"sum of [64, 96]", {64, 96}, {0, 1}};
  KnobContext ctx;
  const tir::Schedule probed = x86::ScheduleDefault(Func(small), testing::TestOptions(&ctx), {});
  const KnobSpec* rule = nullptr;
  for (const KnobSpec& k : ctx.space())
    if (k.name == "T_sum.rule") rule = &k;
  ASSERT_NE(rule, nullptr);
  EXPECT_EQ(rule->candidates, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(rule->fallback, 0);
  const tir::Schedule untuned = x86::ScheduleDefault(Func(small), testing::TestOptions(nullptr), {});
  EXPECT_EQ(untuned.trace().str(), probed.trace().str());
  EXPECT_EQ(untuned.trace().str(),
            "b0 = sch.get_block(\"T_sum\")\n"
            "l1, l2 = sch.get_loops(b0)\n"
            "l3, l4 = sch.split(l2, factors=[-1, 16])\n"
            "b5 = sch.rfactor(l4, factor_axis=0)\n"
            "b6 = sch.decompose_reduction(b5, l1)\n"
            "sch.vectorize(l4)\n"
            "l7, = sch.get_loops(b6)\n"
            "sch.vectorize(l7)\n");
  const Data xs = testing::Random(64 * 96, 4);
  CheckScheduledRuns(untuned.func(), {xs}, 1, Reduce(xs, small.shape, small.axes, false), 1e-4, small.what);
  // From kAddRFactorDefaultElements on, the fallback is the rule: partial sums in parallel.
  const Case large{"sum of [128, 1024]", {128, 1024}, {0, 1}};
  ASSERT_GE(128 * 1024, x86::kAddRFactorDefaultElements);
  EXPECT_TRUE(x86::AddRFactorByDefault(tir::Schedule(Func(large)), "T_sum", testing::TestOptions(nullptr)));
  EXPECT_FALSE(x86::AddRFactorByDefault(tir::Schedule(Func(small)), "T_sum", testing::TestOptions(nullptr)));
  const tir::Schedule big = x86::ScheduleDefault(Func(large), testing::TestOptions(nullptr), {});
  EXPECT_NE(big.trace().str().find("sch.rfactor(l3, factor_axis=0)"), std::string::npos) << big.trace().str();
  testing::ParallelShape shape;
  shape.VisitStmt(big.func()->body);
  EXPECT_EQ(shape.parallel, 1) << tir::AsText(big.func());
  const Data xl = testing::Random(128 * 1024, 5);
  CheckScheduledRuns(big.func(), {xl}, 1, Reduce(xl, large.shape, large.axes, false), 1e-3, large.what);
}

}  // namespace
}  // namespace tessera::topi
