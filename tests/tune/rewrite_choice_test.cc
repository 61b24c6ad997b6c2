// Graph rewrite decisions (tune/rewrite_choice.h): each value's cost from its kernels' best records,
// the least cost chosen, a value with an unmeasured kernel never chosen, the decision records (the
// latest wins, another target's or version's is never read).
#include "tessera/tune/rewrite_choice.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "tessera/support/error.h"
#include "tessera/support/version.h"
#include "tessera/tune/task.h"

namespace tessera::tune {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTarget = "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver3";
constexpr const char* kKnob = "WinogradConv2d.tile[data 1x4x56x56x16, kernel 4x4x3x3x16x16, padding 1x1x1x1, dilation 1, groups 1]";
// Kernels: the direct conv (value 0); F(2x2)'s input transform, GEMM, output transform (value 2);
// F(4x4)'s three (value 4).
constexpr const char* kDirect = "00000000000000d0";
constexpr const char* kIn2 = "00000000000000a2";
constexpr const char* kGemm2 = "00000000000000b2";
constexpr const char* kOut2 = "00000000000000c2";
constexpr const char* kIn4 = "00000000000000a4";
constexpr const char* kGemm4 = "00000000000000b4";
constexpr const char* kOut4 = "00000000000000c4";

class RewriteChoiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "tessera_rewrite_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = (fs::path(dir_) / "tuning.jsonl").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A measured program of `hash`: one record per time (seconds), `trace` telling programs apart.
  static std::vector<TuningRecord> Program(const std::string& hash, std::vector<double> secs, int trace = 0,
                                           const std::string& target = kTarget) {
    std::vector<TuningRecord> out;
    for (double s : secs) {
      TuningRecord r;
      r.workload_hash = hash;
      r.target = target;
      r.trace_json = R"({"instructions":[],"n":)" + std::to_string(trace) + "}";
      r.run_secs = {s};
      r.timestamp_s = 1700000000;
      out.push_back(r);
    }
    return out;
  }

  // The knob with every kernel called twice per run (two convs of the workload).
  static RewriteChoice Choice() {
    RewriteChoice c{kKnob, {0, 2, 4}, 2, {}};
    c.kernels[0] = {{kDirect, 2}};
    c.kernels[2] = {{kIn2, 2}, {kGemm2, 2}, {kOut2, 2}};
    c.kernels[4] = {{kIn4, 2}, {kGemm4, 2}, {kOut4, 2}};
    return c;
  }

  std::string dir_, path_;
};

TEST_F(RewriteChoiceTest, TheValueWhoseKernelsAreFastestIsChosenAndLookedUp) {
  Database db(path_);
  db.CommitBatch(Program(kDirect, {3e-3}));
  // F(2x2): 0.2 + 1.0 + 0.3 ms per call; the GEMM's best program is the faster of two (median 1.0).
  db.CommitBatch(Program(kIn2, {2e-4}));
  db.CommitBatch(Program(kGemm2, {1.3e-3}, 0));
  db.CommitBatch(Program(kGemm2, {1.0e-3, 0.9e-3, 1.1e-3}, 1));
  db.CommitBatch(Program(kOut2, {3e-4}));
  // F(4x4): 0.1 + 0.8 + 0.2 ms per call.
  db.CommitBatch(Program(kIn4, {1e-4}));
  db.CommitBatch(Program(kGemm4, {8e-4}));
  db.CommitBatch(Program(kOut4, {2e-4}));
  const std::vector<RewriteDecision> d = DecideRewrites({Choice()}, kTarget, db);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].knob, kKnob);
  EXPECT_EQ(d[0].value, 4);
  EXPECT_EQ(d[0].fallback, 2);
  EXPECT_NEAR(d[0].cost_secs.at(0), 6e-3, 1e-12);
  EXPECT_NEAR(d[0].cost_secs.at(2), 3.0e-3, 1e-12);
  EXPECT_NEAR(d[0].cost_secs.at(4), 2.2e-3, 1e-12);
  EXPECT_NEAR(SavedSecs(d), 0.8e-3, 1e-12);
  EXPECT_EQ(LookupRewrite(db, kKnob, kTarget), 4);

  // The record on disk: its own workload, the value and every value's cost in nanoseconds.
  Database reread(path_);
  EXPECT_EQ(LookupRewrite(reread, kKnob, kTarget), 4);
  const std::vector<TuningRecord> records = reread.Records(RewriteHash(kKnob), kTarget);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].config, (std::map<std::string, int64_t>{
                                   {"value", 4}, {"cost_ns.0", 6000000}, {"cost_ns.2", 3000000}, {"cost_ns.4", 2200000}}));
  EXPECT_EQ(records[0].run_secs.size(), 1u);
  EXPECT_NEAR(records[0].run_secs[0], 2.2e-3, 1e-12);
  EXPECT_EQ(records[0].version, TESSERA_VERSION);
  ASSERT_NE(reread.FindWorkload(RewriteHash(kKnob)), nullptr);
  EXPECT_EQ(reread.FindWorkload(RewriteHash(kKnob))->func_text, std::string("rewrite ") + kKnob);
}

TEST_F(RewriteChoiceTest, AValueWithAnUnmeasuredOrFailedKernelIsNeverChosen) {
  Database db(path_);
  db.CommitBatch(Program(kDirect, {3e-3}));
  db.CommitBatch(Program(kIn2, {2e-4}));
  db.CommitBatch(Program(kGemm2, {1e-3}));
  db.CommitBatch(Program(kOut2, {3e-4}));
  db.CommitBatch(Program(kIn4, {1e-5}));  // F(4x4) fast where measured, but its GEMM only failed
  std::vector<TuningRecord> failed = Program(kGemm4, {1e-5});
  failed[0].run_secs.clear();
  failed[0].error = "wrong answer: max abs diff 3";
  db.CommitBatch(failed);
  const std::vector<RewriteDecision> d = DecideRewrites({Choice()}, kTarget, db);
  EXPECT_EQ(d[0].value, 2);
  EXPECT_TRUE(std::isinf(d[0].cost_secs.at(4)));
  EXPECT_EQ(SavedSecs(d), 0.0);
  const std::vector<TuningRecord> records = db.Records(RewriteHash(kKnob), kTarget);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].config.at("cost_ns.4"), -1);
}

TEST_F(RewriteChoiceTest, NothingMeasuredKeepsTheFallback) {
  Database db(path_);
  const std::vector<RewriteDecision> d = DecideRewrites({Choice()}, kTarget, db);
  EXPECT_EQ(d[0].value, 2);
  EXPECT_EQ(LookupRewrite(db, kKnob, kTarget), 2);
  const std::vector<TuningRecord> records = db.Records(RewriteHash(kKnob), kTarget);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_FALSE(records[0].ok());  // a decision without a cost is recorded as such
}

TEST_F(RewriteChoiceTest, TheLatestDecisionWins) {
  Database db(path_);
  for (const char* h : {kIn2, kGemm2, kOut2, kIn4, kGemm4, kOut4}) db.CommitBatch(Program(h, {1e-3}));
  db.CommitBatch(Program(kDirect, {1e-3}));  // direct: 2 ms per run against 6 ms
  EXPECT_EQ(DecideRewrites({Choice()}, kTarget, db)[0].value, 0);
  // A later tuning measures the direct conv's program again, slower: its median is now 9 ms.
  db.CommitBatch(Program(kDirect, {9e-3, 9e-3, 9e-3}));
  EXPECT_EQ(DecideRewrites({Choice()}, kTarget, db)[0].value, 2);
  EXPECT_EQ(LookupRewrite(Database(path_), kKnob, kTarget), 2);
  EXPECT_EQ(Database(path_).Records(RewriteHash(kKnob), kTarget).size(), 2u);
}

TEST_F(RewriteChoiceTest, ADecisionOfAnotherTargetOrVersionIsNotRead) {
  Database db(path_);
  TuningRecord other;
  other.workload_hash = RewriteHash(kKnob);
  other.target = "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=skylake-avx512";
  other.config = {{"value", 4}};
  other.run_secs = {1e-3};
  TuningRecord old = other;
  old.target = kTarget;
  old.version = "0.0.1";
  db.CommitBatch({other, old});
  EXPECT_EQ(LookupRewrite(Database(path_), kKnob, kTarget), std::nullopt);
  EXPECT_EQ(LookupRewrite(Database(path_), kKnob, other.target), 4);
  EXPECT_EQ(LookupRewrite(Database(path_), "WinogradConv2d.tile[another workload]", other.target), std::nullopt);
}

// Each value's kernels are its build less what every build shares, per kernel by calls: two convs of
// a workload share an epilogue kernel in every build (1 call each), the direct value has the conv
// twice, F(2x2) its three kernels twice and one more call of the shared kernel.
TEST(MakeRewriteChoice, AValuesKernelsAreWhatNotEveryBuildShares) {
  const std::map<int64_t, std::map<std::string, int64_t>> builds = {
      {0, {{"pool", 1}, {"shared", 1}, {kDirect, 2}}},
      {2, {{"pool", 1}, {"shared", 2}, {kIn2, 2}, {kGemm2, 2}, {kOut2, 2}}},
      {4, {{"pool", 1}, {"shared", 1}, {kIn4, 2}, {kGemm4, 2}, {kOut4, 2}}}};
  const RewriteChoice c = MakeRewriteChoice(kKnob, 2, builds);
  EXPECT_EQ(c.knob, kKnob);
  EXPECT_EQ(c.fallback, 2);
  EXPECT_EQ(c.candidates, (std::vector<int64_t>{0, 2, 4}));
  using M = std::map<std::string, int64_t>;
  EXPECT_EQ(c.kernels.at(0), (M{{kDirect, 2}}));
  EXPECT_EQ(c.kernels.at(2), (M{{"shared", 1}, {kIn2, 2}, {kGemm2, 2}, {kOut2, 2}}));
  EXPECT_EQ(c.kernels.at(4), (M{{kIn4, 2}, {kGemm4, 2}, {kOut4, 2}}));
  EXPECT_THROW(MakeRewriteChoice(kKnob, 6, builds), InternalError);
}

TEST(RewriteHash, IsStableAndDistinctFromTheKnobsText) {
  EXPECT_EQ(RewriteHash(kKnob), RewriteHash(std::string(kKnob)));
  EXPECT_EQ(RewriteHash(kKnob).size(), 16u);
  EXPECT_NE(RewriteHash(kKnob), Fnv1a64Hex(kKnob));
  EXPECT_EQ(RewriteHash(kKnob), Fnv1a64Hex(std::string("rewrite ") + kKnob));
  EXPECT_EQ(Fnv1a64Hex(""), "cbf29ce484222325");  // FNV-1a 64's offset basis
}

}  // namespace
}  // namespace tessera::tune
