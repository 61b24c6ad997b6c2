// The end-to-end check's pieces (tune/model_check.h, tune/test_data.h, tune/worker.h): fingerprints,
// the paired verdict, the per-kernel decision, the verdict records (the latest wins, another
// target's or version's is never read, the workloads kept at their default schedules); the shared test data and output comparison; the worker's outcomes.
#include "tessera/tune/model_check.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <limits>
#include <vector>

#include "tessera/support/error.h"
#include "tessera/tune/task.h"
#include "tessera/tune/test_data.h"
#include "tessera/tune/worker.h"

namespace tessera::tune {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTarget = "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver3";

class ModelCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "tessera_model_check_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = (fs::path(dir_) / "tuning.jsonl").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_, path_;
};

TEST(TuningFingerprint, NamesTheSetOfKernelProgramsInAnyOrder) {
  const std::vector<KernelPrograms> a = {{"00000000000000a1", "-", "00000000000000d1"},
                                         {"00000000000000b2", "1234567890abcdef", "00000000000000d2"}};
  const std::string fp = TuningFingerprint(a);
  EXPECT_EQ(fp.size(), 16u);
  EXPECT_EQ(fp, TuningFingerprint({a[1], a[0]}));
  // Its text: one sorted line per kernel.
  EXPECT_EQ(fp, Fnv1a64Hex("00000000000000a1 - 00000000000000d1\n00000000000000b2 1234567890abcdef 00000000000000d2\n"));
  // Another program of a kernel, a kernel more or less: another build.
  EXPECT_NE(fp, TuningFingerprint({a[0], {"00000000000000b2", "-", "00000000000000d2"}}));
  EXPECT_NE(fp, TuningFingerprint({a[0]}));
  EXPECT_NE(fp, TuningFingerprint({a[0], a[1], {"00000000000000c3", "-", "00000000000000d3"}}));
  // The same tuned programs against another default schedule (a kernel's hand schedule changed, in
  // another Tessera build): another pair of builds, so an old verdict does not apply.
  EXPECT_NE(fp, TuningFingerprint({a[0], {"00000000000000b2", "1234567890abcdef", "00000000000000e2"}}));
  EXPECT_NE(fp, TuningFingerprint({{"00000000000000a1", "-", "00000000000000e1"}, a[1]}));
  EXPECT_EQ(ModelCheckHash(fp), Fnv1a64Hex("model-check " + fp));
  TuningRecord r;
  r.trace_json = R"({"instructions":[]})";
  EXPECT_EQ(ProgramId(r), Fnv1a64Hex(r.trace_json));
  EXPECT_EQ(TraceId(r.trace_json), ProgramId(r));
}

TEST(DecideModelCheck, AppliesTheTunedBuildWhenTheMedianPairedRatioIsBelowOne) {
  // Drift: round 2 is slow for both builds; the tuned build is 10 % faster in every round.
  ModelCheckVerdict v = DecideModelCheck({10e-3, 10e-3, 20e-3}, {9e-3, 9e-3, 18e-3});
  EXPECT_TRUE(v.apply);
  EXPECT_NEAR(v.ratio, 0.9, 1e-12);
  EXPECT_DOUBLE_EQ(v.default_secs, 10e-3);
  EXPECT_DOUBLE_EQ(v.tuned_secs, 9e-3);
  EXPECT_EQ(v.rounds, 3);
  EXPECT_TRUE(v.error.empty());
  // Faster in one round of three only: not applied; a tie is not applied either.
  EXPECT_FALSE(DecideModelCheck({10e-3, 10e-3, 10e-3}, {5e-3, 11e-3, 12e-3}).apply);
  EXPECT_FALSE(DecideModelCheck({10e-3, 10e-3}, {10e-3, 10e-3}).apply);
  // An even count: the median is the mean of the middle two ratios.
  EXPECT_NEAR(DecideModelCheck({1, 1, 1, 1}, {0.5, 0.9, 1.05, 2}).ratio, 0.975, 1e-12);
  EXPECT_EQ(v.wins, 3);
  EXPECT_THROW(DecideModelCheck({}, {}), InternalError);
  EXPECT_THROW(DecideModelCheck({1, 1}, {1}), InternalError);
  EXPECT_THROW(DecideModelCheck({1}, {0}), InternalError);
}

TEST(DecideModelCheck, MinWinningRoundsIsTheOneSidedSignTestAtTwentyPercent) {
  // P(X >= k), X ~ Binomial(n, 1/2): n = 10: P(>= 7) = 176/1024 = 0.172, P(>= 6) = 0.377.
  EXPECT_EQ(MinWinningRounds(10), 7);
  EXPECT_EQ(MinWinningRounds(5), 4);    // P(>= 4) = 6/32 = 0.1875, P(>= 3) = 0.5
  EXPECT_EQ(MinWinningRounds(20), 13);  // P(>= 13) = 0.132, P(>= 12) = 0.252
  EXPECT_EQ(MinWinningRounds(3), 3);    // P(3) = 0.125
  EXPECT_EQ(MinWinningRounds(2), 2);    // even 2 of 2 (0.25) is likelier than 0.2: every round
  EXPECT_EQ(MinWinningRounds(1), 1);
  EXPECT_THROW(MinWinningRounds(0), InternalError);
}

TEST(DecideModelCheck, AMedianBelowOneFromTooFewWinningRoundsIsNotApplied) {
  const std::vector<double> base(10, 1e-3);
  // 6 of 10 rounds faster (median ratio 0.99): a noisy tie; not applied.
  std::vector<double> six = {0.98e-3, 0.98e-3, 0.99e-3, 0.99e-3, 0.99e-3, 0.99e-3, 1.01e-3, 1.01e-3, 1.02e-3, 1.02e-3};
  ModelCheckVerdict v = DecideModelCheck(base, six);
  EXPECT_LT(v.ratio, 1);
  EXPECT_EQ(v.wins, 6);
  EXPECT_FALSE(v.apply);
  // 7 of 10: applied.
  six[6] = 0.995e-3;
  v = DecideModelCheck(base, six);
  EXPECT_EQ(v.wins, 7);
  EXPECT_TRUE(v.apply);
  // Ties are not wins, and a median of 1 is not below 1.
  EXPECT_FALSE(DecideModelCheck(base, base).apply);
  EXPECT_EQ(DecideModelCheck(base, base).wins, 0);
}

TEST_F(ModelCheckTest, TheLatestVerdictOfTheBuildOnTheTargetIsRead) {
  const std::string fp = "0123456789abcdef";
  EXPECT_EQ(LookupModelCheck(Database(path_), fp, kTarget), std::nullopt);
  EXPECT_FALSE(HasModelChecks(Database(path_), kTarget));
  Database db(path_);
  ModelCheckVerdict slower = DecideModelCheck({1e-3, 1e-3, 1e-3}, {1.2e-3, 1.1e-3, 1.3e-3});
  CommitModelCheck(db, fp, kTarget, slower);
  std::optional<ModelCheckVerdict> got = LookupModelCheck(Database(path_), fp, kTarget);
  ASSERT_TRUE(got);
  EXPECT_FALSE(got->apply);
  EXPECT_NEAR(got->default_secs, 1e-3, 1e-9);
  EXPECT_NEAR(got->tuned_secs, 1.2e-3, 1e-9);
  EXPECT_NEAR(got->ratio, 1.2, 1e-6);
  EXPECT_EQ(got->rounds, 3);
  EXPECT_EQ(got->wins, 0);
  EXPECT_TRUE(Database(path_).HasWorkload(ModelCheckHash(fp)));
  // A later verdict replaces it; one that failed keeps its error.
  ModelCheckVerdict wrong;
  wrong.apply = false;
  wrong.error = "wrong answer: output 0 differs";
  CommitModelCheck(db, fp, kTarget, DecideModelCheck({1e-3}, {0.5e-3}));
  EXPECT_TRUE(LookupModelCheck(Database(path_), fp, kTarget)->apply);
  CommitModelCheck(db, fp, kTarget, wrong);
  got = LookupModelCheck(Database(path_), fp, kTarget);
  EXPECT_FALSE(got->apply);
  EXPECT_EQ(got->error, wrong.error);
  // The tuned kernels with the graph rewrites at their fallbacks.
  ModelCheckVerdict kernels_only = DecideModelCheck({1e-3}, {0.9e-3});
  kernels_only.rewrites = false;
  CommitModelCheck(db, fp, kTarget, kernels_only);
  got = LookupModelCheck(Database(path_), fp, kTarget);
  EXPECT_TRUE(got->apply);
  EXPECT_FALSE(got->rewrites);
  EXPECT_EQ(got->wins, 1);
  // Another build, another target: nothing; the database holds verdicts for this target only.
  EXPECT_EQ(LookupModelCheck(Database(path_), "fedcba9876543210", kTarget), std::nullopt);
  EXPECT_EQ(LookupModelCheck(Database(path_), fp, "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=skylake"), std::nullopt);
  EXPECT_TRUE(HasModelChecks(Database(path_), kTarget));
  EXPECT_FALSE(HasModelChecks(Database(path_), "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=skylake"));
}

TEST_F(ModelCheckTest, AVerdictWithoutARewritesKeyAppliesTheRewrites) {
  const std::string fp = "0123456789abcdef";
  TuningRecord r;
  r.workload_hash = ModelCheckHash(fp);
  r.target = kTarget;
  r.config = {{"apply", 1}};
  Database(path_).CommitBatch({r});
  const std::optional<ModelCheckVerdict> got = LookupModelCheck(Database(path_), fp, kTarget);
  ASSERT_TRUE(got);
  EXPECT_TRUE(got->apply && got->rewrites);
}

TEST_F(ModelCheckTest, AVerdictOfAnotherVersionIsNotRead) {
  const std::string fp = "0123456789abcdef";
  TuningRecord r;
  r.workload_hash = ModelCheckHash(fp);
  r.target = kTarget;
  r.version = "0.0.1";
  r.config = {{"apply", 0}};
  Database(path_).CommitBatch({r});
  EXPECT_EQ(LookupModelCheck(Database(path_), fp, kTarget), std::nullopt);
}

TEST(CombineThreadVerdicts, AppliesOnlyWhenEveryThreadCountDoesAndReportsTheWorst) {
  auto at = [](int threads, std::vector<double> d, std::vector<double> t) {
    ModelCheckVerdict v = DecideModelCheck(d, t);
    v.threads = threads;
    return v;
  };
  // Faster at 2 threads (ratio 0.8), slower at 1 (1.1): not applied, the numbers are 1 thread's.
  const ModelCheckVerdict two = at(2, {1e-3, 1e-3, 1e-3}, {0.8e-3, 0.8e-3, 0.8e-3});
  const ModelCheckVerdict one = at(1, {2e-3, 2e-3, 2e-3}, {2.2e-3, 2.2e-3, 2.2e-3});
  ASSERT_TRUE(two.apply);
  ASSERT_FALSE(one.apply);
  ModelCheckVerdict v = CombineThreadVerdicts({two, one});
  EXPECT_FALSE(v.apply);
  EXPECT_EQ(v.threads, 1);
  EXPECT_NEAR(v.ratio, 1.1, 1e-12);
  EXPECT_NEAR(v.default_secs, 2e-3, 1e-12);
  EXPECT_NEAR(v.tuned_secs, 2.2e-3, 1e-12);
  EXPECT_EQ(v.wins, 0);
  EXPECT_EQ(v.checked_threads, (std::vector<int>{1, 2}));
  // Faster at both: applied, with the smaller gain's numbers (1 thread: 0.9).
  v = CombineThreadVerdicts({two, at(1, {2e-3, 2e-3, 2e-3}, {1.8e-3, 1.8e-3, 1.8e-3})});
  EXPECT_TRUE(v.apply);
  EXPECT_EQ(v.threads, 1);
  EXPECT_NEAR(v.ratio, 0.9, 1e-12);
  // One thread count: that verdict, its count listed.
  v = CombineThreadVerdicts({two});
  EXPECT_TRUE(v.apply);
  EXPECT_EQ(v.threads, 2);
  EXPECT_EQ(v.checked_threads, std::vector<int>{2});
  // No verdict, a verdict without its count, a count twice: internal errors.
  EXPECT_THROW(CombineThreadVerdicts({}), InternalError);
  EXPECT_THROW(CombineThreadVerdicts({DecideModelCheck({1e-3}, {1e-3})}), InternalError);
  EXPECT_THROW(CombineThreadVerdicts({two, two}), InternalError);
}

TEST_F(ModelCheckTest, AVerdictKeepsItsThreadCounts) {
  const std::string fp = "0123456789abcdef";
  ModelCheckVerdict v = DecideModelCheck({1e-3}, {0.9e-3});
  v.threads = 12;
  v.checked_threads = {2, 12};  // "checked 12" sorts before "checked 2" in the record
  Database db(path_);
  CommitModelCheck(db, fp, kTarget, v);
  std::optional<ModelCheckVerdict> got = LookupModelCheck(Database(path_), fp, kTarget);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->threads, 12);
  EXPECT_EQ(got->checked_threads, (std::vector<int>{2, 12}));
  // A verdict of before thread counts were recorded, or with a key that does not parse: none.
  TuningRecord r;
  r.workload_hash = ModelCheckHash(fp);
  r.target = kTarget;
  r.config = {{"apply", 1}, {"checked x", 1}, {"checked ", 1}, {"checked -3", 1}};
  db.CommitBatch({r});
  got = LookupModelCheck(Database(path_), fp, kTarget);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->threads, 0);
  EXPECT_TRUE(got->checked_threads.empty());
}

TEST(KernelsSlowerInModel, NamesTheWorkloadsSlowerTunedByMoreThanBothMargins) {
  const std::vector<InModelKernelTime> kernels = {
      {"00000000000000c3", 100e-6, 130e-6, 1.3},  // 30 % and 30 us slower: kept at the default
      {"00000000000000a1", 100e-6, 90e-6, 0.9},   // faster
      {"00000000000000b2", 100e-6, 102e-6, 1.02},  // 2 % slower: within the margin
      {"00000000000000d4", 10e-6, 14e-6, 1.4},    // 40 % but 4 us slower: within min_secs
      {"00000000000000e5", 0, 6e-6, 0},           // no paired ratio (a round without default time)
      {"00000000000000f6", 100e-6, 120e-6, 1.01},  // the medians differ, the paired ratio does not
      {"00000000000000c3", 100e-6, 130e-6, 1.3},  // listed twice: once in the result
  };
  EXPECT_EQ(KernelsSlowerInModel(kernels, 0.03, 5e-6), std::vector<std::string>{"00000000000000c3"});
  // No margin: every slower kernel, sorted.
  EXPECT_EQ(KernelsSlowerInModel(kernels, 0, 0),
            (std::vector<std::string>{"00000000000000b2", "00000000000000c3", "00000000000000d4", "00000000000000f6"}));
  EXPECT_TRUE(KernelsSlowerInModel({}, 0.03, 5e-6).empty());
  EXPECT_TRUE(KernelsSlowerInModel({{"00000000000000a1", 1e-3, 1e-3, 1}}, 0, 0).empty());  // a tie
  EXPECT_THROW(KernelsSlowerInModel(kernels, -0.1, 0), InternalError);
  EXPECT_THROW(KernelsSlowerInModel(kernels, 0, -1), InternalError);
  EXPECT_THROW(KernelsSlowerInModel({{"00000000000000a1", -1, 0, 0}}, 0, 0), InternalError);
}

TEST(SummarizeKernelRounds, GivesTheMediansAndTheMedianPairedRatio) {
  // Round 2 is slow for both builds; the tuned kernel is 20 % slower in every round.
  const InModelKernelTime k = SummarizeKernelRounds("00000000000000a1", {10e-6, 10e-6, 40e-6}, {12e-6, 12e-6, 48e-6});
  EXPECT_EQ(k.workload, "00000000000000a1");
  EXPECT_DOUBLE_EQ(k.default_secs, 10e-6);
  EXPECT_DOUBLE_EQ(k.tuned_secs, 12e-6);
  EXPECT_NEAR(k.ratio, 1.2, 1e-12);
  // One noisy round does not move the ratio.
  EXPECT_NEAR(SummarizeKernelRounds("a", {1, 1, 1}, {0.9, 5, 0.9}).ratio, 0.9, 1e-12);
  // A round without a default time: no ratio.
  EXPECT_EQ(SummarizeKernelRounds("a", {1, 0}, {1, 1}).ratio, 0);
  EXPECT_THROW(SummarizeKernelRounds("a", {}, {}), InternalError);
  EXPECT_THROW(SummarizeKernelRounds("a", {1}, {1, 1}), InternalError);
  EXPECT_THROW(SummarizeKernelRounds("a", {1}, {-1}), InternalError);
}

TEST_F(ModelCheckTest, AVerdictKeepsTheWorkloadsItBuildsAtTheirDefaultSchedules) {
  const std::string fp = "0123456789abcdef";
  Database db(path_);
  ModelCheckVerdict v = DecideModelCheck({1e-3, 1e-3}, {0.9e-3, 0.9e-3});
  v.untuned_workloads = {"00000000000000b2", "00000000000000a1"};
  CommitModelCheck(db, fp, kTarget, v);
  std::optional<ModelCheckVerdict> got = LookupModelCheck(Database(path_), fp, kTarget);
  ASSERT_TRUE(got);
  EXPECT_TRUE(got->apply);
  EXPECT_EQ(got->untuned_workloads, (std::vector<std::string>{"00000000000000a1", "00000000000000b2"}));
  // One key per workload in the record's config.
  const std::vector<TuningRecord> records = Database(path_).Records(ModelCheckHash(fp), kTarget);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].config.at("untuned 00000000000000a1"), 1);
  EXPECT_EQ(records[0].config.at("untuned 00000000000000b2"), 1);
  // A later verdict without them replaces it.
  CommitModelCheck(db, fp, kTarget, DecideModelCheck({1e-3}, {0.9e-3}));
  got = LookupModelCheck(Database(path_), fp, kTarget);
  ASSERT_TRUE(got);
  EXPECT_TRUE(got->untuned_workloads.empty());
}

TEST_F(ModelCheckTest, AVerdictKeepsTheRunnersUpItBuilds) {
  const std::string fp = "0123456789abcdef";
  Database db(path_);
  ModelCheckVerdict v = DecideModelCheck({1e-3, 1e-3}, {0.9e-3, 0.9e-3});
  v.untuned_workloads = {"00000000000000c3"};
  v.workload_programs = {{"00000000000000b2", "fedcba9876543210"}, {"00000000000000a1", "0000000000000001"}};
  CommitModelCheck(db, fp, kTarget, v);
  const std::vector<TuningRecord> records = Database(path_).Records(ModelCheckHash(fp), kTarget);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].config.at("program 00000000000000a1 0000000000000001"), 1);
  EXPECT_EQ(records[0].config.at("program 00000000000000b2 fedcba9876543210"), 1);
  std::optional<ModelCheckVerdict> got = LookupModelCheck(Database(path_), fp, kTarget);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->workload_programs, v.workload_programs);
  EXPECT_EQ(got->untuned_workloads, std::vector<std::string>{"00000000000000c3"});
  // A later verdict without them replaces it.
  CommitModelCheck(db, fp, kTarget, DecideModelCheck({1e-3}, {0.9e-3}));
  got = LookupModelCheck(Database(path_), fp, kTarget);
  ASSERT_TRUE(got);
  EXPECT_TRUE(got->workload_programs.empty());
}

TEST(TestData, PseudoRandomInputsAreDeterministicAndInRange) {
  std::vector<float> a(1000), b(1000), c(1000);
  FillPseudoRandom(a.data(), a.size() * 4, runtime::DataType::Float(32), 7);
  FillPseudoRandom(b.data(), b.size() * 4, runtime::DataType::Float(32), 7);
  FillPseudoRandom(c.data(), c.size() * 4, runtime::DataType::Float(32), 8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  float lo = 1, hi = -1;
  for (float x : a) lo = std::min(lo, x), hi = std::max(hi, x);
  EXPECT_GE(lo, -1.f);
  EXPECT_LT(hi, 1.f);
  EXPECT_LT(lo, -0.9f);
  EXPECT_GT(hi, 0.9f);
  std::vector<int64_t> ids(100, -5);
  FillPseudoRandom(ids.data(), ids.size() * 8, runtime::DataType::Int(64), 3);
  int ones = 0;
  for (int64_t v : ids) {
    EXPECT_TRUE(v == 0 || v == 1) << v;
    ones += static_cast<int>(v);
  }
  EXPECT_GT(ones, 20);
  EXPECT_LT(ones, 80);
}

TEST(TestData, OutputsCompareWithinARelativeTolerance) {
  const runtime::DataType f32 = runtime::DataType::Float(32);
  std::vector<float> ref = {10, -20, 0.5f}, out = ref;
  EXPECT_EQ(CompareOutput(out.data(), ref.data(), 12, f32, 0, 0), "");
  out[1] = -20.001f;  // 1e-3 off, 5e-5 of the largest magnitude
  EXPECT_EQ(CompareOutput(out.data(), ref.data(), 12, f32, 1e-4, 0), "");
  const std::string diff = CompareOutput(out.data(), ref.data(), 12, f32, 1e-5, 3);
  EXPECT_NE(diff.find("output 3"), std::string::npos) << diff;
  out = ref;
  out[2] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_NE(CompareOutput(out.data(), ref.data(), 12, f32, 1, 0).find("NaN"), std::string::npos);
  out[2] = std::numeric_limits<float>::infinity();
  EXPECT_NE(CompareOutput(out.data(), ref.data(), 12, f32, 1, 0).find("infinity"), std::string::npos);
  // Integers compare bitwise.
  std::vector<int32_t> ia = {1, 2, 3}, ib = {1, 2, 4};
  EXPECT_EQ(CompareOutput(ia.data(), ia.data(), 12, runtime::DataType::Int(32), 1, 0), "");
  EXPECT_NE(CompareOutput(ia.data(), ib.data(), 12, runtime::DataType::Int(32), 1, 1).find("bitwise"), std::string::npos);
}

TEST(RunInWorker, ReportsTimesErrorsCrashesAndTimeouts) {
  MeasureResult ok = RunInWorker([] { return std::string("ok 0.5 3e-3 1e-3 2e-3"); }, 30);
  ASSERT_TRUE(ok.ok()) << ok.error;
  EXPECT_EQ(ok.run_secs, (std::vector<double>{3e-3, 1e-3, 2e-3}));  // in the job's order
  EXPECT_DOUBLE_EQ(ok.build_secs, 0.5);
  EXPECT_EQ(RunInWorker([] { return std::string("error 0 wrong answer: x"); }, 30).error, "wrong answer: x");
  EXPECT_EQ(RunInWorker([]() -> std::string { throw UserError("bad"); }, 30).error.rfind("run: ", 0), 0u);
  EXPECT_EQ(RunInWorker([]() -> std::string { std::raise(SIGSEGV); return ""; }, 30).error, "crash: SIGSEGV");
  EXPECT_EQ(RunInWorker([]() -> std::string { for (;;) ::pause(); }, 0.3).error.rfind("timeout", 0), 0u);
  EXPECT_EQ(RunInWorker([] { return std::string("garbage"); }, 30).error.rfind("crash: ", 0), 0u);
}

}  // namespace
}  // namespace tessera::tune
