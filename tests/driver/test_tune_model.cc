// driver::TuneModel and the end-to-end check (driver/tune_model.h): tuning records a verdict on the
// tuned build's fingerprint; a build follows the latest verdict on its fingerprint and target (the
// default build, bitwise, when the tuned one was found slower); the check finds a tuned build whose
// outputs differ; a tuned kernel slower in the model is kept at its default schedule (the verdict's
// untuned workloads, followed by the build), and its runner-up replaces it when that one is not
// slower; an input with a symbolic shape is not checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "driver_test_util.h"
#include "tessera/codegen/run_tool.h"
#include "tessera/driver/build.h"
#include "tessera/driver/resolve_target.h"
#include "tessera/driver/tune_model.h"
#include "tessera/runtime/graph_executor.h"
#include "tessera/runtime/thread_pool.h"
#include "tessera/topi/x86/schedule.h"
#include "tessera/tune/model_check.h"
#include "tessera/tune/space.h"

namespace tessera {
namespace {

using namespace tessera::graph;
using driver::testing::Call;
using driver::testing::ConvAttrs;
using driver::testing::F32;
using driver::testing::Random;

// relu(conv3x3(x) + b): x [1, 16, 8, 8], 16 channels out, pad 1.
struct ConvRelu {
  static constexpr int64_t C = 16, H = 8, W = 8;
  runtime::NDArray w = Random({C, C, 3, 3}, 1, -0.2f, 0.2f), b = Random({1, C, 1, 1}, 2);
  IRModule Module() const {
    Var x = VarNode::make("x", F32({1, C, H, W}));
    Expr conv = Call("nn.conv2d", {x, ConstantNode::make(w)}, ConvAttrs(1, {1, 1, 1, 1}));
    return IRModule::FromMain(FunctionNode::make({x}, Call("nn.relu", {Call("add", {conv, ConstantNode::make(b)})})));
  }
  // The model's output on `in`, checked against a double-precision loop (1e-4 abs + rel).
  static runtime::NDArray Run(const runtime::Module& lib, const runtime::NDArray& in) {
    runtime::GraphExecutor exec(lib, 1);
    exec.SetInput("x", in);
    exec.Run();
    return exec.GetOutput("y");
  }
  void ExpectMatchesReference(const runtime::NDArray& in, const runtime::NDArray& out) const {
    int bad = 0;
    for (int64_t k = 0; k < C; ++k)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t x = 0; x < W; ++x) {
          const double acc = b.data<float>()[k] +
                             driver::testing::Conv3x3Pad1At(in.data<float>(), w.data<float>(), C, H, W, 0, k, h, x);
          const double ref = std::max(acc, 0.0), got = out.data<float>()[(k * H + h) * W + x];
          if (std::fabs(got - ref) > 1e-4 + 1e-4 * std::fabs(ref) && bad++ < 5)
            ADD_FAILURE() << "y[" << k << "," << h << "," << x << "] = " << got << ", want " << ref;
        }
  }
};

bool BitwiseEqual(const runtime::NDArray& a, const runtime::NDArray& b) {
  return a.NBytes() == b.NBytes() && std::memcmp(a.raw_data(), b.raw_data(), a.NBytes()) == 0;
}

// The database at `db` with the conv's Winograd tile decided to a value other than its fallback (F(4x4)
// unless that is the fallback): a tuned build that differs from the default one in its kernels and,
// by rounding, in its outputs.
void DecideANonDefaultTile(const ConvRelu& model, const std::string& db, const target::Target& host) {
  driver::BuildOptions options;
  std::vector<tune::RewriteChoice> choices;
  driver::ExtractTasks(model.Module(), {"y"}, options, &choices);
  for (const tune::RewriteChoice& c : choices)
    if (c.knob.rfind("WinogradConv2d.tile", 0) == 0) {
      driver::testing::CommitRewriteDecision(db, c.knob, host.str(), c.fallback == 4 ? 0 : 4);
      return;
    }
  FAIL() << "the conv has no Winograd tile knob";
}

TEST(TuneModel, RecordsAVerdictOnTheTunedBuildsFingerprint) {
  const ConvRelu model;
  const codegen::TempDir dir("tessera-tune-model");
  driver::BuildOptions options;
  options.tuning_db = dir.path() + "/db.jsonl";
  driver::TuneModelOptions tune_options;
  tune_options.tune.max_trials = 4;
  tune_options.tune.batch_size = 2;
  tune_options.tune.confirm_repeats = 0;
  tune_options.tune.measure.num_threads = 1;
  tune_options.check.rounds = 3;
  tune_options.check.min_round_secs = 0.01;
  std::vector<std::string> lines;
  tune_options.log = [&](const std::string& line) { lines.push_back(line); };
  const driver::TuneModelResult r = driver::TuneModel(model.Module(), {"y"}, options, tune_options);
  EXPECT_EQ(r.report.trials, 4);
  ASSERT_TRUE(r.check.checked) << r.check.skipped;
  EXPECT_TRUE(r.check.verdict.error.empty()) << r.check.verdict.error;
  EXPECT_EQ(r.check.verdict.rounds, 3);
  EXPECT_GT(r.check.verdict.default_secs, 0);
  EXPECT_GT(r.check.verdict.tuned_secs, 0);
  EXPECT_EQ(r.check.verdict.apply,
            r.check.verdict.ratio < 1 && r.check.verdict.wins >= tune::MinWinningRounds(3));  // every round
  EXPECT_EQ(r.check.fingerprint, driver::TuningFingerprint(model.Module(), {"y"}, options));
  const std::optional<tune::ModelCheckVerdict> recorded =
      tune::LookupModelCheck(tune::Database(options.tuning_db), r.check.fingerprint, driver::HostTarget().str());
  ASSERT_TRUE(recorded);
  EXPECT_EQ(recorded->apply, r.check.verdict.apply);
  EXPECT_EQ(recorded->rounds, 3);
  EXPECT_EQ(recorded->wins, r.check.verdict.wins);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.back().find("end-to-end check"), std::string::npos) << lines.back();
  // The build follows it.
  runtime::Module lib = driver::BuildJIT(model.Module(), {"y"}, options);
  const runtime::NDArray in = Random({1, ConvRelu::C, ConvRelu::H, ConvRelu::W}, 5);
  model.ExpectMatchesReference(in, ConvRelu::Run(lib, in));
  EXPECT_EQ(driver::Build(model.Module(), {"y"}, options).summary.tuning_rejected, !r.check.verdict.apply);
}

TEST(TuneModel, ABuildFollowsTheLatestVerdictOnItsFingerprint) {
  const ConvRelu model;
  const target::Target host = driver::HostTarget();
  const codegen::TempDir dir("tessera-model-verdict");
  driver::BuildOptions options, plain;
  options.tuning_db = dir.path() + "/db.jsonl";
  DecideANonDefaultTile(model, options.tuning_db, host);
  const std::string fp = driver::TuningFingerprint(model.Module(), {"y"}, options);
  const runtime::NDArray in = Random({1, ConvRelu::C, ConvRelu::H, ConvRelu::W}, 5);
  const runtime::NDArray untuned = ConvRelu::Run(driver::BuildJIT(model.Module(), {"y"}, plain), in);
  const runtime::NDArray tuned = ConvRelu::Run(driver::BuildJIT(model.Module(), {"y"}, options), in);
  model.ExpectMatchesReference(in, untuned);
  model.ExpectMatchesReference(in, tuned);
  ASSERT_FALSE(BitwiseEqual(untuned, tuned)) << "the decision did not change the build";
  EXPECT_FALSE(driver::Build(model.Module(), {"y"}, options).summary.tuning_rejected);

  // Found slower: the default build, bitwise, and the summary says so.
  tune::Database db(options.tuning_db);
  tune::CommitModelCheck(db, fp, host.str(), tune::DecideModelCheck({1e-3, 1e-3, 1e-3}, {2e-3, 2e-3, 2e-3}));
  const driver::BuiltModel rejected = driver::Build(model.Module(), {"y"}, options);
  EXPECT_TRUE(rejected.summary.tuning_rejected);
  EXPECT_EQ(rejected.summary.tuning_fingerprint, fp);
  EXPECT_TRUE(BitwiseEqual(ConvRelu::Run(driver::BuildJIT(model.Module(), {"y"}, options), in), untuned));
  // apply_model_check off (what the check builds): the tuned build.
  driver::BuildOptions ignore = options;
  ignore.apply_model_check = false;
  EXPECT_TRUE(BitwiseEqual(ConvRelu::Run(driver::BuildJIT(model.Module(), {"y"}, ignore), in), tuned));
  // The tuned kernels without the rewrite decisions: here (no kernel record) the default build.
  tune::ModelCheckVerdict kernels_only = tune::DecideModelCheck({2e-3}, {1e-3});
  kernels_only.rewrites = false;
  tune::CommitModelCheck(db, fp, host.str(), kernels_only);
  const driver::BuiltModel without_rewrites = driver::Build(model.Module(), {"y"}, options);
  EXPECT_TRUE(without_rewrites.summary.rewrites_rejected);
  EXPECT_FALSE(without_rewrites.summary.tuning_rejected);
  EXPECT_TRUE(BitwiseEqual(ConvRelu::Run(driver::BuildJIT(model.Module(), {"y"}, options), in), untuned));
  driver::BuildOptions no_rewrites = ignore;
  no_rewrites.apply_rewrite_decisions = false;
  EXPECT_TRUE(BitwiseEqual(ConvRelu::Run(driver::BuildJIT(model.Module(), {"y"}, no_rewrites), in), untuned));
  // A later verdict for it applies the tuned build again; a verdict of another target or another
  // build changes nothing.
  tune::CommitModelCheck(db, fp, host.str(), tune::DecideModelCheck({2e-3}, {1e-3}));
  EXPECT_TRUE(BitwiseEqual(ConvRelu::Run(driver::BuildJIT(model.Module(), {"y"}, options), in), tuned));
  tune::CommitModelCheck(db, fp, "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=skylake",
                         tune::DecideModelCheck({1e-3}, {2e-3}));
  tune::CommitModelCheck(db, "0123456789abcdef", host.str(), tune::DecideModelCheck({1e-3}, {2e-3}));
  EXPECT_FALSE(driver::Build(model.Module(), {"y"}, options).summary.tuning_rejected);
}

TEST(CheckTunedModel, ATunedBuildWithOtherOutputsIsNotApplied) {
  const ConvRelu model;
  const target::Target host = driver::HostTarget();
  const codegen::TempDir dir("tessera-model-wrong");
  driver::BuildOptions options;
  options.tuning_db = dir.path() + "/db.jsonl";
  DecideANonDefaultTile(model, options.tuning_db, host);
  driver::ModelCheckOptions check;
  check.rounds = 2;
  check.min_round_secs = 0;
  // Exact comparison: the other tile's rounding is a wrong answer.
  check.tolerance = 0;
  driver::ModelCheckResult r = driver::CheckTunedModel(model.Module(), {"y"}, options, check, 1);
  ASSERT_TRUE(r.checked) << r.skipped;
  EXPECT_FALSE(r.verdict.apply);
  EXPECT_EQ(r.verdict.error.rfind("wrong answer: y: output 0", 0), 0u) << r.verdict.error;
  EXPECT_TRUE(driver::Build(model.Module(), {"y"}, options).summary.tuning_rejected);
  // Within 1e-3 the outputs agree, and the timed verdict replaces the first.
  check.tolerance = 1e-3;
  r = driver::CheckTunedModel(model.Module(), {"y"}, options, check, 1);
  ASSERT_TRUE(r.checked) << r.skipped;
  EXPECT_TRUE(r.verdict.error.empty()) << r.verdict.error;
  EXPECT_EQ(r.verdict.rounds, 2);
  const driver::BuildSummary built = driver::Build(model.Module(), {"y"}, options).summary;
  EXPECT_EQ(built.tuning_rejected, !r.verdict.apply);
  EXPECT_EQ(built.rewrites_rejected, r.verdict.apply && !r.verdict.rewrites);
}

// relu(dense(x, w) + b): x [32, 256], w [256, 256]; one kernel, a packed GEMM with knobs.
struct DenseRelu {
  static constexpr int64_t M = 32, K = 256, N = 256;
  runtime::NDArray w = Random({N, K}, 11, -0.1f, 0.1f), b = Random({N}, 12);
  IRModule Module() const {
    Var x = VarNode::make("x", F32({M, K}));
    Expr y = Call("nn.dense", {x, ConstantNode::make(w)});
    return IRModule::FromMain(FunctionNode::make({x}, Call("nn.relu", {Call("add", {y, ConstantNode::make(b)})})));
  }
  static runtime::NDArray Run(const runtime::Module& lib, const runtime::NDArray& in) {
    runtime::GraphExecutor exec(lib, 1);
    exec.SetInput("x", in);
    exec.Run();
    return exec.GetOutput("y");
  }
};

// Commits for the model's one task a record of its schedule under `config`, claimed to have run in
// 1 ns so that it is the database's best. Returns the task.
tune::TuneTask CommitARecord(const IRModule& mod, const std::string& db_path, const target::Target& host,
                             const topi::KnobConfig& config) {
  std::vector<tune::TuneTask> tasks = driver::ExtractTasks(mod, {"y"}, {});
  EXPECT_EQ(tasks.size(), 1u);
  const tune::TuneTask& task = tasks.at(0);
  tune::TuningRecord r;
  r.workload_hash = task.workload_hash;
  r.target = host.str();
  r.trace_json = tune::ApplyConfig(task, config).trace.ToJSON();
  r.run_secs = {1e-9};
  r.config = config;
  tune::Database db(db_path);
  db.CommitWorkload({task.workload_hash, task.name, "test"});
  db.CommitBatch({r});
  return task;
}

// A record of the schedule with every knob at its smallest candidate (one-row, one-vector
// micro-kernels: a kernel several times slower than the hand schedule).
tune::TuneTask CommitASlowRecord(const IRModule& mod, const std::string& db_path, const target::Target& host) {
  topi::KnobConfig slow;
  for (const topi::KnobSpec& k : tune::DiscoverSpace(driver::ExtractTasks(mod, {"y"}, {}).at(0)))
    slow[k.name] = *std::min_element(k.candidates.begin(), k.candidates.end());
  EXPECT_FALSE(slow.empty()) << "the task has no knobs";
  return CommitARecord(mod, db_path, host, slow);
}

TEST(TuneModel, ARecordOfTheHandScheduleIsTheDefaultKernel) {
  const DenseRelu model;
  const target::Target host = driver::HostTarget();
  const codegen::TempDir dir("tessera-model-hand-record");
  driver::BuildOptions options, plain;
  options.tuning_db = dir.path() + "/db.jsonl";
  const tune::TuneTask task = CommitARecord(model.Module(), options.tuning_db, host, {});
  const driver::TunedBuild described = driver::DescribeTunedBuild(model.Module(), {"y"}, options);
  ASSERT_EQ(described.kernels.size(), 1u);
  EXPECT_NE(described.kernels[0].program, "-");  // a record (the fingerprint names it) ...
  EXPECT_TRUE(described.kernels[0].default_program);  // ... of the default schedule
  const runtime::NDArray in = Random({DenseRelu::M, DenseRelu::K}, 13);
  EXPECT_TRUE(BitwiseEqual(DenseRelu::Run(driver::BuildJIT(model.Module(), {"y"}, options), in),
                           DenseRelu::Run(driver::BuildJIT(model.Module(), {"y"}, plain), in)));
  // The check does not profile it: it is the default kernel.
  driver::ModelCheckOptions check;
  check.rounds = 2;
  check.min_round_secs = 0.01;
  const driver::ModelCheckResult r = driver::CheckTunedModel(model.Module(), {"y"}, options, check, 1);
  ASSERT_TRUE(r.checked) << r.skipped;
  EXPECT_TRUE(r.kernels.empty());
  EXPECT_TRUE(r.verdict.untuned_workloads.empty());
}

TEST(TuneModel, ABuildKeepsTheWorkloadsOfItsVerdictAtTheirDefaultSchedules) {
  const DenseRelu model;
  const target::Target host = driver::HostTarget();
  const codegen::TempDir dir("tessera-model-untuned");
  driver::BuildOptions options, plain;
  options.tuning_db = dir.path() + "/db.jsonl";
  const tune::TuneTask task = CommitASlowRecord(model.Module(), options.tuning_db, host);
  // The tuned build as the database makes it: its one kernel from the record.
  const driver::TunedBuild described = driver::DescribeTunedBuild(model.Module(), {"y"}, options);
  ASSERT_EQ(described.kernels.size(), 1u);
  EXPECT_EQ(described.kernels[0].kernel, task.name);
  EXPECT_EQ(described.kernels[0].workload, task.workload_hash);
  const std::optional<tune::TuningRecord> best = tune::Database(options.tuning_db).Best(task.workload_hash, host.str());
  ASSERT_TRUE(best);
  EXPECT_EQ(described.kernels[0].program, tune::ProgramId(*best));
  EXPECT_FALSE(described.kernels[0].default_program);
  // The pair of builds: the record's program against the kernel's default schedule.
  const std::string default_id = tune::TraceId(topi::x86::ScheduleDefault(task.func, task.options, task.anchors).trace().ToJSON());
  EXPECT_EQ(described.kernels[0].default_id, default_id);
  EXPECT_EQ(described.fingerprint, tune::TuningFingerprint({{task.workload_hash, tune::ProgramId(*best), default_id}}));
  EXPECT_EQ(described.fingerprint, driver::TuningFingerprint(model.Module(), {"y"}, options));

  const runtime::NDArray in = Random({DenseRelu::M, DenseRelu::K}, 13);
  const runtime::NDArray untuned = DenseRelu::Run(driver::BuildJIT(model.Module(), {"y"}, plain), in);
  const runtime::NDArray tuned = DenseRelu::Run(driver::BuildJIT(model.Module(), {"y"}, options), in);
  EXPECT_EQ(driver::Build(model.Module(), {"y"}, options).summary.tuned_kernels, 1);
  // The workload named by the options: the default schedule, bitwise, and the program "-".
  driver::BuildOptions keep = options;
  keep.untuned_workloads = {task.workload_hash};
  EXPECT_TRUE(BitwiseEqual(DenseRelu::Run(driver::BuildJIT(model.Module(), {"y"}, keep), in), untuned));
  EXPECT_EQ(driver::DescribeTunedBuild(model.Module(), {"y"}, keep).kernels.at(0).program, "-");
  // A verdict naming it: the same build, the summary says so, the fingerprint stays the tuned one's.
  tune::ModelCheckVerdict v = tune::DecideModelCheck({1e-3}, {0.9e-3});
  v.untuned_workloads = {task.workload_hash};
  tune::Database db(options.tuning_db);
  tune::CommitModelCheck(db, described.fingerprint, host.str(), v);
  const driver::BuildSummary followed = driver::Build(model.Module(), {"y"}, options).summary;
  EXPECT_EQ(followed.untuned_kernels, 1);
  EXPECT_EQ(followed.tuned_kernels, 0);
  EXPECT_FALSE(followed.tuning_rejected);
  EXPECT_FALSE(followed.rewrites_rejected);
  EXPECT_EQ(followed.tuning_fingerprint, described.fingerprint);
  EXPECT_TRUE(BitwiseEqual(DenseRelu::Run(driver::BuildJIT(model.Module(), {"y"}, options), in), untuned));
  // What the check builds (the verdict not followed): the tuned kernel.
  driver::BuildOptions ignore = options;
  ignore.apply_model_check = false;
  EXPECT_TRUE(BitwiseEqual(DenseRelu::Run(driver::BuildJIT(model.Module(), {"y"}, ignore), in), tuned));
}

TEST(CheckTunedModel, AKernelSlowerInTheModelIsKeptAtItsDefaultSchedule) {
  const DenseRelu model;
  const target::Target host = driver::HostTarget();
  const codegen::TempDir dir("tessera-model-slow-kernel");
  driver::BuildOptions options;
  options.tuning_db = dir.path() + "/db.jsonl";
  const tune::TuneTask task = CommitASlowRecord(model.Module(), options.tuning_db, host);
  driver::ModelCheckOptions check;
  check.rounds = 3;
  check.min_round_secs = 0.02;
  const driver::ModelCheckResult r = driver::CheckTunedModel(model.Module(), {"y"}, options, check, 1);
  ASSERT_TRUE(r.checked) << r.skipped;
  EXPECT_TRUE(r.verdict.error.empty()) << r.verdict.error;
  // The profile: the one tuned workload, clearly slower in the model. How much depends on the
  // machine: the 1 x 16-lane tile with K chunks of 32 was >= 1.5x the default on AVX2 and Zen 5,
  // 1.19-1.45x on Zen 4 (one zmm FMA per cycle, so the default tile gains less), so the bound is
  // well above KernelsSlowerInModel's margin (3 %) rather than a fixed multiple.
  ASSERT_EQ(r.kernels.size(), 1u);
  EXPECT_EQ(r.kernels[0].workload, task.workload_hash);
  EXPECT_GT(r.kernels[0].default_secs, 0);
  EXPECT_GT(r.kernels[0].ratio, 1.1);
  EXPECT_GT(r.kernels[0].tuned_secs, r.kernels[0].default_secs + check.kernel_min_secs)
      << "the smallest micro-kernels were not slower: " << r.kernels[0].tuned_secs << " s against "
      << r.kernels[0].default_secs << " s";
  EXPECT_EQ(tune::KernelsSlowerInModel(r.kernels, check.kernel_margin, check.kernel_min_secs),
            std::vector<std::string>{task.workload_hash});
  // The full tuned build is slower; the one without the slow record is the default build, so the
  // verdict either keeps the default or applies the tuned build without that record.
  if (r.verdict.apply) {
    EXPECT_EQ(r.verdict.untuned_workloads, std::vector<std::string>{task.workload_hash});
  }
  // Timed: the tuned build, then the one without the slow record.
  ASSERT_EQ(r.builds.size(), 2u);
  EXPECT_TRUE(r.builds[0].untuned_workloads.empty());
  EXPECT_EQ(r.builds[1].untuned_workloads, std::vector<std::string>{task.workload_hash});
  EXPECT_GT(r.builds[0].ratio, r.builds[1].ratio);
  EXPECT_EQ(r.verdict.ratio, r.builds[1].ratio);
  const std::optional<tune::ModelCheckVerdict> recorded =
      tune::LookupModelCheck(tune::Database(options.tuning_db), r.fingerprint, host.str());
  ASSERT_TRUE(recorded);
  EXPECT_EQ(recorded->untuned_workloads, r.verdict.untuned_workloads);
  // Either way `compile --db` builds the kernel with its default schedule.
  const driver::BuildSummary built = driver::Build(model.Module(), {"y"}, options).summary;
  EXPECT_EQ(built.tuned_kernels, 0);
  // At 2 threads and 1: the profile and the rounds at each, the slow record dropped for both.
  check.thread_counts = {2, 1};
  const driver::ModelCheckResult both = driver::CheckTunedModel(model.Module(), {"y"}, options, check, 1);
  ASSERT_TRUE(both.checked) << both.skipped;
  ASSERT_EQ(both.kernels.size(), 2u);
  EXPECT_EQ(both.kernels[0].threads, 2);
  EXPECT_EQ(both.kernels[1].threads, 1);
  for (const tune::InModelKernelTime& k : both.kernels) EXPECT_EQ(k.workload, task.workload_hash);
  ASSERT_EQ(both.builds.size(), 4u);  // the tuned build and the one without the slow record, at 2 then 1
  EXPECT_EQ(both.builds[0].threads, 2);
  EXPECT_EQ(both.builds[1].threads, 2);
  EXPECT_EQ(both.builds[2].threads, 1);
  EXPECT_EQ(both.builds[1].untuned_workloads, std::vector<std::string>{task.workload_hash});
  EXPECT_EQ(both.builds[3].untuned_workloads, std::vector<std::string>{task.workload_hash});
  EXPECT_EQ(both.verdict.checked_threads, (std::vector<int>{1, 2}));
  EXPECT_TRUE(both.verdict.threads == 1 || both.verdict.threads == 2) << both.verdict.threads;
  // Applied only when the build it names passed at both counts.
  for (const tune::ModelCheckVerdict& b : both.builds)
    if (both.verdict.apply && b.untuned_workloads == both.verdict.untuned_workloads) EXPECT_TRUE(b.apply);
  const std::optional<tune::ModelCheckVerdict> recorded_both =
      tune::LookupModelCheck(tune::Database(options.tuning_db), both.fingerprint, host.str());
  ASSERT_TRUE(recorded_both);
  EXPECT_EQ(recorded_both->checked_threads, (std::vector<int>{1, 2}));
  EXPECT_EQ(recorded_both->threads, both.verdict.threads);
  EXPECT_EQ(driver::Build(model.Module(), {"y"}, options).summary.tuned_kernels, 0);
  check.thread_counts.clear();
  // Without the profile: no build without the slow kernel, and an empty profile.
  check.profile_rounds = 0;
  const driver::ModelCheckResult off = driver::CheckTunedModel(model.Module(), {"y"}, options, check, 1);
  ASSERT_TRUE(off.checked) << off.skipped;
  EXPECT_TRUE(off.kernels.empty());
  EXPECT_TRUE(off.verdict.untuned_workloads.empty());
}

// Commits for `task` a record of its default schedule under another program id (the trace with a
// key the trace reader ignores), claimed to have run in 2 ns: the runner-up of a record claimed 1 ns.
// Returns its ProgramId.
std::string CommitTheDefaultAsARunnerUp(const tune::TuneTask& task, const std::string& db_path,
                                        const target::Target& host) {
  nlohmann::json trace =
      nlohmann::json::parse(topi::x86::ScheduleDefault(task.func, task.options, task.anchors).trace().ToJSON());
  trace["variant"] = "the default schedule under another program id";
  tune::TuningRecord r;
  r.workload_hash = task.workload_hash;
  r.target = host.str();
  r.trace_json = trace.dump();
  r.run_secs = {2e-9};
  tune::Database(db_path).CommitBatch({r});
  return tune::ProgramId(r);
}

TEST(CheckTunedModel, ARunnerUpNotSlowerInTheModelReplacesASlowerBest) {
  const DenseRelu model;
  const target::Target host = driver::HostTarget();
  const codegen::TempDir dir("tessera-model-runner-up");
  driver::BuildOptions options, plain;
  options.tuning_db = dir.path() + "/db.jsonl";
  const tune::TuneTask task = CommitASlowRecord(model.Module(), options.tuning_db, host);
  const std::string runner_up = CommitTheDefaultAsARunnerUp(task, options.tuning_db, host);
  const std::vector<tune::TuningRecord> top =
      tune::Database(options.tuning_db).TopPrograms(task.workload_hash, host.str(), 2);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(tune::ProgramId(top[1]), runner_up);
  const runtime::NDArray in = Random({DenseRelu::M, DenseRelu::K}, 13);
  const runtime::NDArray untuned = DenseRelu::Run(driver::BuildJIT(model.Module(), {"y"}, plain), in);
  // A build naming the runner-up schedules the kernel with it: the default schedule's outputs.
  driver::BuildOptions second = options;
  second.workload_programs = {{task.workload_hash, runner_up}};
  EXPECT_EQ(driver::DescribeTunedBuild(model.Module(), {"y"}, second).kernels.at(0).program, runner_up);
  EXPECT_TRUE(BitwiseEqual(DenseRelu::Run(driver::BuildJIT(model.Module(), {"y"}, second), in), untuned));
  // A program the database does not have: the default schedule.
  second.workload_programs[task.workload_hash] = "0000000000000000";
  EXPECT_EQ(driver::DescribeTunedBuild(model.Module(), {"y"}, second).kernels.at(0).program, "-");

  // The check: the best record runs slower in the model, the runner-up (the default schedule) not.
  driver::ModelCheckOptions check;
  check.rounds = 3;
  check.min_round_secs = 0.02;
  const driver::ModelCheckResult r = driver::CheckTunedModel(model.Module(), {"y"}, options, check, 1);
  ASSERT_TRUE(r.checked) << r.skipped;
  EXPECT_TRUE(r.verdict.error.empty()) << r.verdict.error;
  ASSERT_EQ(r.kernels.size(), 1u);
  EXPECT_GT(r.kernels[0].ratio, 1.1);
  ASSERT_EQ(r.second_kernels.size(), 1u);
  EXPECT_EQ(r.second_kernels[0].workload, task.workload_hash);
  EXPECT_GT(r.second_kernels[0].default_secs, 0);
  // The same code on both sides: within the profile's noise margins (3 % or 5 us per run).
  EXPECT_TRUE(tune::KernelsSlowerInModel(r.second_kernels, check.kernel_margin, check.kernel_min_secs).empty())
      << "the runner-up (the default schedule) ran " << r.second_kernels[0].ratio << "x the default";
  // Timed: the tuned build, the one without the slow record, the one with the runner-up for it.
  ASSERT_EQ(r.builds.size(), 3u);
  EXPECT_EQ(r.builds[1].untuned_workloads, std::vector<std::string>{task.workload_hash});
  EXPECT_TRUE(r.builds[1].workload_programs.empty());
  EXPECT_TRUE(r.builds[2].untuned_workloads.empty());
  EXPECT_EQ(r.builds[2].workload_programs, (std::map<std::string, std::string>{{task.workload_hash, runner_up}}));
  const std::optional<tune::ModelCheckVerdict> recorded =
      tune::LookupModelCheck(tune::Database(options.tuning_db), r.fingerprint, host.str());
  ASSERT_TRUE(recorded);
  EXPECT_EQ(recorded->workload_programs, r.verdict.workload_programs);
  // `compile --db` follows the verdict: the runner-up when it won, else the default schedule or the
  // default build; the default schedule's outputs every way.
  const driver::BuildSummary built = driver::Build(model.Module(), {"y"}, options).summary;
  EXPECT_EQ(built.tuned_kernels, r.verdict.apply && !r.verdict.workload_programs.empty() ? 1 : 0);
  EXPECT_TRUE(BitwiseEqual(DenseRelu::Run(driver::BuildJIT(model.Module(), {"y"}, options), in), untuned));
}

TEST(CheckTunedModel, AnInputWithASymbolicShapeIsNotChecked) {
  const codegen::TempDir dir("tessera-model-any");
  Var x = VarNode::make("x", TensorTypeNode::make(Shape{Dim::Symbolic("n"), Dim(4)}, DataType::Float(32)));
  const IRModule mod = IRModule::FromMain(FunctionNode::make({x}, Call("nn.relu", {x})));
  driver::BuildOptions options;
  options.tuning_db = dir.path() + "/db.jsonl";
  driver::testing::CommitRewriteDecision(options.tuning_db, "no such knob", driver::HostTarget().str(), 0);
  driver::ModelCheckOptions check;
  check.rounds = 1;
  const driver::ModelCheckResult r = driver::CheckTunedModel(mod, {"y"}, options, check, 1);
  EXPECT_FALSE(r.checked);
  EXPECT_NE(r.skipped.find("input 'x' has a symbolic shape [n, 4]"), std::string::npos) << r.skipped;
  EXPECT_EQ(tune::LookupModelCheck(tune::Database(options.tuning_db), r.fingerprint, driver::HostTarget().str()),
            std::nullopt);
}

TEST(TuneModel, BadArgumentsAreUserErrors) {
  const ConvRelu model;
  driver::BuildOptions options;
  driver::TuneModelOptions tune_options;
  tune_options.tune.max_trials = 1;
  EXPECT_THROW(driver::TuneModel(model.Module(), {"y"}, options, tune_options), UserError);  // no database
  const codegen::TempDir dir("tessera-tune-model-bad");
  options.tuning_db = dir.path() + "/db.jsonl";
  tune_options.tasks = "no_such_kernel";
  try {
    driver::TuneModel(model.Module(), {"y"}, options, tune_options);
    ADD_FAILURE() << "no error for a --tasks text no task has";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("its tasks are:"), std::string::npos) << e.what();
  }
  tune_options.tasks.clear();
  tune_options.check_share = 1;
  EXPECT_THROW(driver::TuneModel(model.Module(), {"y"}, options, tune_options), UserError);
  // Bad check thread counts: before the search, nothing recorded.
  tune_options.check_share = 0.1;
  tune_options.check.thread_counts = {2, 2};
  EXPECT_THROW(driver::TuneModel(model.Module(), {"y"}, options, tune_options), UserError);
  EXPECT_EQ(tune::Database(options.tuning_db).size(), 0u);
  tune_options.check.thread_counts.clear();
  // The check's options: each out of range is a UserError.
  for (auto bad : std::vector<std::function<void(driver::ModelCheckOptions&)>>{
           [](driver::ModelCheckOptions& c) { c.rounds = 0; },
           [](driver::ModelCheckOptions& c) { c.profile_rounds = -1; },
           [](driver::ModelCheckOptions& c) { c.kernel_margin = -0.01; },
           [](driver::ModelCheckOptions& c) { c.kernel_min_secs = -1e-6; },
           [](driver::ModelCheckOptions& c) { c.thread_counts = {0}; },
           [](driver::ModelCheckOptions& c) { c.thread_counts = {1, 2, 1}; },
           [](driver::ModelCheckOptions& c) { c.thread_counts = {runtime::ThreadLimit() + 1}; }}) {
    driver::ModelCheckOptions check;
    bad(check);
    EXPECT_THROW(driver::CheckTunedModel(model.Module(), {"y"}, options, check, 1), UserError);
  }
  options.target = "aarch64";
  tune_options.check_share = 0.1;
  EXPECT_THROW(driver::TuneModel(model.Module(), {"y"}, options, tune_options), UserError);
}

}  // namespace
}  // namespace tessera
