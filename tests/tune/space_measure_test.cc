// The search space of a conv2d_NCHWc + bias + relu task (template knobs), candidates whose traces
// replay, and measurement in worker processes that survives crashing, hanging and wrong candidates.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <set>

#include "tessera/driver/resolve_target.h"
#include "tessera/ir/op.h"
#include "tessera/te/tensor.h"
#include "tessera/tir/expr.h"
#include "tessera/tir/functor.h"
#include "tessera/tir/printer.h"
#include "tessera/tir/stmt.h"
#include "tessera/tir/structural_equal.h"
#include "tessera/topi/broadcast.h"
#include "tessera/topi/math.h"
#include "tessera/topi/util.h"
#include "tessera/topi/nn/conv2d_nchwc.h"
#include "tessera/topi/x86/schedule.h"
#include "tessera/tune/measure.h"
#include "tessera/tune/space.h"
#include "test_tasks.h"

namespace tessera::tune {
namespace {

const DataType f32 = DataType::Float(32);

// conv2d_NCHWc 32 -> 32 channels (NCHW16c), 3x3, 14x14, with bias + relu.
TuneTask ConvTask() {
  using te::Tensor;
  Tensor data = te::placeholder(topi::MakeShape({1, 2, 16, 16, 16}), f32, "data");
  Tensor kernel = te::placeholder(topi::MakeShape({2, 2, 3, 3, 16, 16}), f32, "kernel");
  Tensor bias = te::placeholder(topi::MakeShape({1, 2, 1, 1, 16}), f32, "bias");
  topi::Conv2DParams p;
  Tensor out = topi::relu(topi::add(topi::conv2d_NCHWc(data, kernel, p), bias));
  return MakeTask("conv_bias_relu", {data, kernel, bias}, out);
}

TEST(Space, ConvTaskHasTheTemplateKnobsWithTheHandScheduleAsFallback) {
  TuneTask t = ConvTask();
  EXPECT_EQ(t.flops, 2.0 * 32 * 32 * 9 * 14 * 14 + 2.0 * 32 * 14 * 14);  // FMA = 2, bias add + relu (max)
  std::vector<topi::KnobSpec> space = DiscoverSpace(t);
  std::set<std::string> names;
  for (const auto& k : space) {
    names.insert(k.name);
    EXPECT_TRUE(std::count(k.candidates.begin(), k.candidates.end(), k.fallback)) << k.name;
  }
  for (const char* n : {"conv2d_NCHWc.ow_tile", "conv2d_NCHWc.oc_vectors", "conv2d_NCHWc.rows_outer"})
    EXPECT_TRUE(names.count(n)) << n;
  EXPECT_GT(SpaceSize(space), 50);
  // The empty configuration is the hand schedule.
  Candidate def = ApplyConfig(t, {});
  tir::PrimFunc hand = topi::x86::ScheduleDefault(t.func, t.options, t.anchors).func();
  EXPECT_TRUE(tir::StructuralEqual(def.scheduled, hand));
}

TEST(Space, EverySampledCandidateReplaysFromItsTrace) {
  TuneTask t = ConvTask();
  std::vector<topi::KnobSpec> space = DiscoverSpace(t);
  std::mt19937_64 rng(7);
  std::set<std::string> distinct;
  for (int i = 0; i < 12; ++i) {
    Candidate c = ApplyConfig(t, i % 2 ? SampleConfig(space, rng) : MutateConfig({}, space, rng));
    distinct.insert(tir::AsText(c.scheduled));
    // The trace, through JSON, rebuilds the same function without the templates.
    tir::PrimFunc replayed = ReplayTrace(t.func, tir::Trace::FromJSON(c.trace.ToJSON()));
    EXPECT_TRUE(tir::StructuralEqual(replayed, c.scheduled)) << c.trace.str();
  }
  EXPECT_GE(distinct.size(), 6u);  // the knobs change the schedule
}

TEST(Space, AnyReductionGetsTheMultiLevelTilingRuleAndItsCandidatesReplay) {
  TuneTask t = MatmulTask();
  std::vector<topi::KnobSpec> space = DiscoverSpace(t);
  std::map<std::string, const topi::KnobSpec*> by_name;
  for (const auto& k : space) by_name[k.name] = &k;
  ASSERT_TRUE(by_name.count("C.rule"));
  EXPECT_EQ(by_name["C.rule"]->fallback, 0);  // the hand schedule stays the default
  for (const char* n : {"C.tile_s0", "C.tile_s1", "C.tile_r0", "C.unroll", "C.epilogue_at"})
    EXPECT_TRUE(by_name.count(n)) << n;
  std::mt19937_64 rng(3);
  int tiled = 0;
  for (int i = 0; i < 10; ++i) {
    topi::KnobConfig config = SampleConfig(space, rng);
    tiled += config["C.rule"];
    Candidate c = ApplyConfig(t, config);
    tir::PrimFunc replayed = ReplayTrace(t.func, tir::Trace::FromJSON(c.trace.ToJSON()));
    EXPECT_TRUE(tir::StructuralEqual(replayed, c.scheduled)) << c.trace.str();
  }
  EXPECT_GT(tiled, 0);
}

TEST(Space, WorkloadHashIgnoresTheKernelNameOnly) {
  TuneTask a = ConvTask();
  tir::PrimFunc renamed = tir::PrimFunc::make("other_name", a.func->params, a.func->body, a.func->attrs);
  EXPECT_EQ(WorkloadHash(renamed), a.workload_hash);
  EXPECT_EQ(a.workload_hash.size(), 16u);
  Candidate c = ApplyConfig(a, {});
  EXPECT_NE(WorkloadHash(c.scheduled), a.workload_hash);
}

class MeasureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    task_ = ConvTask();
    target_ = driver::ResolveTarget("native");
    ref_ = (std::filesystem::temp_directory_path() / ("tessera_tune_ref_" + std::to_string(getpid()))).string();
    opt_.timeout_s = 60;
    opt_.min_repeat_ms = 2;
    const tir::PrimFunc hand = ApplyConfig(task_, {}).scheduled;
    MeasureResult r = MeasureReference(task_, hand, target_, opt_, ref_);
    ASSERT_TRUE(r.ok()) << r.error;
    reference_ = Reference{hand, ref_, r.MedianSecs()};
  }
  void TearDown() override { std::filesystem::remove(ref_); }

  // The conv's scheduled function with its first BufferStore's value replaced.
  tir::PrimFunc Sabotaged(const std::function<tir::Stmt(const tir::BufferStoreNode*)>& make) {
    struct M : tir::StmtExprMutator {
      std::function<tir::Stmt(const tir::BufferStoreNode*)> make;
      bool done = false;
      tir::Stmt VisitStmt_(const tir::BufferStoreNode* op, const tir::Stmt& s) override {
        if (done || op->buffer->name != "T_relu") return s;
        done = true;
        return make(op);
      }
    } m;
    m.make = make;
    tir::PrimFunc f = ApplyConfig(task_, {}).scheduled;
    tir::PrimFunc out = f.WithBody(m.VisitStmt(f->body));
    EXPECT_TRUE(m.done);
    return out;
  }

  TuneTask task_;
  target::Target target_;
  std::string ref_;
  Reference reference_;
  MeasureOptions opt_;
};

TEST_F(MeasureTest, ACandidateMatchesAndIsTimed) {
  std::vector<topi::KnobSpec> space = DiscoverSpace(task_);
  topi::KnobConfig c = {{"conv2d_NCHWc.ow_tile", 7}, {"conv2d_NCHWc.oc_vectors", 1}};
  MeasureResult r = Measure(task_, ApplyConfig(task_, c).scheduled, target_, opt_, reference_);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.run_secs.size(), 3u);
  EXPECT_GT(r.MedianSecs(), 0);
  EXPECT_LT(r.MedianSecs(), 0.1);
  EXPECT_GT(r.build_secs, 0);
}

// Cold weights (measure.h): with every input after the first evicted before every call, a candidate
// is still checked (a wrong answer is still one) and timed on the reference's scale.
TEST_F(MeasureTest, ColdWeightsAreEvictedAndStillChecked) {
  MeasureOptions cold = opt_;
  cold.cold_weights_bytes = 0;
  const topi::KnobConfig c = {{"conv2d_NCHWc.ow_tile", 7}, {"conv2d_NCHWc.oc_vectors", 1}};
  MeasureResult r = Measure(task_, ApplyConfig(task_, c).scheduled, target_, cold, reference_);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.run_secs.size(), 3u);
  EXPECT_GT(r.MedianSecs(), 0);
  EXPECT_LT(r.MedianSecs(), 0.1);
  tir::PrimFunc wrong = Sabotaged([](const tir::BufferStoreNode* op) {
    return tir::BufferStoreNode::make(op->buffer, op->value + ir::make_const(f32, 0.5), op->indices);
  });
  EXPECT_EQ(Measure(task_, wrong, target_, cold, reference_).error.rfind("wrong answer: output 0", 0), 0u);
}

TEST(MeasureRule, AMultiLevelTilingCandidateMatchesTheHandSchedule) {
  TuneTask task = MatmulTask();
  const target::Target target = driver::ResolveTarget("native");
  const std::string ref = (std::filesystem::temp_directory_path() / ("tessera_tune_mlt_" + std::to_string(getpid()))).string();
  MeasureOptions opt;
  opt.timeout_s = 60;
  opt.min_repeat_ms = 2;
  const tir::PrimFunc hand = ApplyConfig(task, {}).scheduled;
  MeasureResult r0 = MeasureReference(task, hand, target, opt, ref);
  ASSERT_TRUE(r0.ok()) << r0.error;
  Reference reference{hand, ref, r0.MedianSecs()};
  // The rule's hand-picked tiles, r1 unrolled too, the relu under the s1 tile loop.
  const topi::KnobConfig config = {{"C.rule", 1}, {"C.unroll", 2}, {"C.epilogue_at", 2}};
  MeasureResult r = Measure(task, ApplyConfig(task, config).scheduled, target, opt, reference);
  std::filesystem::remove(ref);
  ASSERT_TRUE(r.ok()) << r.error;  // checked against the hand schedule's outputs
  EXPECT_GT(r.MedianSecs(), 0);
}

TEST_F(MeasureTest, TimesAreOnTheReferenceScale) {
  // The hand schedule against itself, with the reference's time declared as 1 s: each repeat's
  // ratio to the baseline right after it is ~1, so the recorded time is ~1 s, not the kernel's
  // ~20 us (bounds for a loaded machine: two back-to-back repeats within 4x).
  Reference declared = reference_;
  declared.secs = 1.0;
  MeasureResult r = Measure(task_, reference_.scheduled, target_, opt_, declared);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_GT(r.MedianSecs(), 0.25);
  EXPECT_LT(r.MedianSecs(), 4.0);
}

TEST_F(MeasureTest, AWrongAnswerIsAnErrorNotAResult) {
  tir::PrimFunc wrong = Sabotaged([](const tir::BufferStoreNode* op) {
    return tir::BufferStoreNode::make(op->buffer, op->value + ir::make_const(f32, 0.5), op->indices);
  });
  MeasureResult r = Measure(task_, wrong, target_, opt_, reference_);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error.rfind("wrong answer: output 0", 0), 0u) << r.error;
}

TEST_F(MeasureTest, ACrashingCandidateIsSurvived) {
  // A store 400 MB past its buffer (in the index's own type): SIGSEGV in the worker.
  tir::PrimFunc crash = Sabotaged([](const tir::BufferStoreNode* op) {
    std::vector<ir::PrimExpr> idx = op->indices;
    idx.back() = idx.back() + ir::make_const(idx.back().dtype(), int64_t{100000000});
    return tir::BufferStoreNode::make(op->buffer, op->value, idx);
  });
  MeasureResult r = Measure(task_, crash, target_, opt_, reference_);
  EXPECT_FALSE(r.ok());
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer may keep its own SEGV handler (it reports, then exits 1).
  EXPECT_EQ(r.error.rfind("crash: ", 0), 0u) << r.error;
#else
  EXPECT_EQ(r.error, "crash: SIGSEGV");
#endif
  // The tuner goes on: the next candidate measures normally.
  EXPECT_TRUE(Measure(task_, ApplyConfig(task_, {}).scheduled, target_, opt_, reference_).ok());
}

TEST_F(MeasureTest, AHangingCandidateIsKilledAtTheTimeout) {
  // A loop of 2^62 float accumulations (not foldable without fast-math) after the store.
  tir::PrimFunc hang = Sabotaged([](const tir::BufferStoreNode* op) {
    tir::Var v("forever", DataType::Int(64));
    tir::Stmt acc = tir::BufferStoreNode::make(
        op->buffer, tir::BufferLoadNode::make(op->buffer, op->indices) + ir::make_const(f32, 1e-30), op->indices);
    tir::Stmt loop = tir::ForNode::make(v, ir::make_const(DataType::Int(64), 0),
                                        ir::make_const(DataType::Int(64), int64_t{1} << 62), tir::ForKind::kSerial, acc);
    return tir::SeqStmtNode::make({tir::BufferStoreNode::make(op->buffer, op->value, op->indices), loop});
  });
  MeasureOptions opt = opt_;
  opt.timeout_s = 3;
  MeasureResult r = Measure(task_, hang, target_, opt, reference_);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error, "timeout after 3 s");
}

}  // namespace
}  // namespace tessera::tune
