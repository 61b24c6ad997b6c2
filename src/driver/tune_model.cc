// TuneModel and the end-to-end check of a tuned model (driver/tune_model.h).
#include "tessera/driver/tune_model.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <set>
#include <sstream>

#include "tessera/driver/resolve_target.h"
#include "tessera/runtime/executor.h"
#include "tessera/runtime/thread_pool.h"
#include "tessera/support/error.h"
#include "tessera/tune/database.h"
#include "tessera/tune/test_data.h"
#include "tessera/tune/worker.h"

namespace tessera::driver {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A worker error that means "not checked" rather than "the tuned build is unusable".
constexpr const char* kSkip = "skip: ";

// Seconds per run of `n` runs of `e`.
double TimeRuns(runtime::Executor& e, int n) {
  const Clock::time_point t = Clock::now();
  for (int i = 0; i < n; ++i) e.Run();
  return SecondsSince(t) / n;
}

// The check's worker job (see tune_model.h): the default build against each of `tuned` (one or two
// builds). Its line is "ok <build secs> d0 t0 [k0] d1 t1 [k1] ..." (each round's seconds per run of
// the default build and of each tuned one) or "error <build secs> <why>".
std::string CheckJob(const graph::IRModule& mod, const std::vector<std::string>& output_names,
                     const BuildOptions& options, const std::vector<BuildOptions>& tuned, const target::Target& target,
                     const ModelCheckOptions& check, int num_threads) {
  if (num_threads > 0) runtime::SetNumThreads(num_threads);
  const Clock::time_point t0 = Clock::now();
  BuildOptions untuned = options;
  untuned.tuning_db.clear();
  std::vector<std::unique_ptr<runtime::Executor>> builds;  // the default build, then `tuned`
  try {
    builds.push_back(runtime::MakeExecutor(BuildJIT(mod, output_names, target, untuned)));
  } catch (const std::exception& e) {
    return std::string("error 0 ") + kSkip + "the default build failed: " + e.what();
  }
  for (const BuildOptions& t : tuned) {
    try {
      builds.push_back(runtime::MakeExecutor(BuildJIT(mod, output_names, target, t)));
    } catch (const std::exception& e) {
      return std::string("error 0 build: the tuned build failed: ") + e.what();
    }
  }
  runtime::Executor& base = *builds[0];
  const std::string prefix = std::to_string(SecondsSince(t0)) + " ";
  for (int i = 0; i < base.NumInputs(); ++i) {
    const std::string& name = base.InputName(i);
    const std::vector<int64_t>& shape = base.InputShape(i);
    runtime::NDArray value;
    if (auto g = options.input_guards.find(name); g != options.input_guards.end()) {
      value = g->second;
    } else {
      if (std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; }))
        return "error " + prefix + kSkip + "input '" + name + "' has a symbolic shape " +
               runtime::ShapeToString(shape, base.InputDimNames(i));
      value = runtime::NDArray::Empty(shape, base.InputDType(i));
      tune::FillPseudoRandom(value.raw_data(), value.NBytes(), value.dtype(), 1000 + static_cast<uint64_t>(i));
    }
    for (auto& b : builds) b->SetInput(name, value);
  }
  try {
    base.Run();
  } catch (const std::exception& e) {
    return "error " + prefix + kSkip + "the default build failed to run: " + e.what();
  }
  for (size_t b = 1; b < builds.size(); ++b) {
    runtime::Executor& cand = *builds[b];
    cand.Run();
    for (int o = 0; o < base.NumOutputs(); ++o) {
      const runtime::NDArray want = base.GetOutput(o);
      const runtime::NDArray got = cand.GetOutput(cand.OutputIndex(base.OutputName(o)));
      if (got.shape() != want.shape() || got.dtype() != want.dtype())
        return "error " + prefix + "wrong answer: output '" + base.OutputName(o) + "' has shape " +
               runtime::ShapeToString(got.shape(), {}) + " instead of " + runtime::ShapeToString(want.shape(), {});
      const std::string diff = tune::CompareOutput(got.raw_data(), want.raw_data(), want.NBytes(), want.dtype(),
                                                   check.tolerance, static_cast<size_t>(o));
      if (!diff.empty()) return "error " + prefix + "wrong answer: " + base.OutputName(o) + ": " + diff;
    }
  }
  // Runs per round: enough for min_round_secs of the slowest build (one warm run of each first).
  double slowest = 0;
  for (auto& b : builds) slowest = std::max(slowest, TimeRuns(*b, 1));
  const int n = std::max(1, static_cast<int>(std::ceil(check.min_round_secs / std::max(slowest, 1e-9))));
  std::ostringstream line;
  line.precision(9);
  line << "ok " << prefix;
  std::vector<double> secs(builds.size());
  for (int r = 0; r < check.rounds; ++r) {
    // Round r starts with build r mod k, so that each build leads as often as the others.
    for (size_t j = 0; j < builds.size(); ++j) {
      const size_t b = (static_cast<size_t>(r) + j) % builds.size();
      secs[b] = TimeRuns(*builds[b], n);
    }
    for (double t : secs) line << t << " ";
  }
  return line.str();
}

std::string Ms(double secs) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g ms", secs * 1e3);
  return buf;
}

}  // namespace

ModelCheckResult CheckTunedModel(const graph::IRModule& mod, const std::vector<std::string>& output_names,
                                 const BuildOptions& options, const ModelCheckOptions& check, int num_threads) {
  TESSERA_CHECK(check.rounds > 0 && check.min_round_secs >= 0 && check.tolerance >= 0 && check.timeout_s > 0,
                "the end-to-end check needs rounds > 0, min_round_secs >= 0, tolerance >= 0 and timeout_s > 0");
  const Clock::time_point t0 = Clock::now();
  const target::Target target = ResolveTarget(options.target);
  TESSERA_CHECK(RunsOnHost(target), "the end-to-end check runs the model on this machine, which cannot run code for '",
                target.str(), "'");
  ModelCheckResult out;
  out.fingerprint = TuningFingerprint(mod, output_names, options);
  // The tuned build, and the tuned kernels with the rewrites at their fallbacks when that differs.
  std::vector<BuildOptions> tuned(1, options);
  tuned[0].apply_model_check = false;
  BuildOptions kernels_only = tuned[0];
  kernels_only.apply_rewrite_decisions = false;
  if (TuningFingerprint(mod, output_names, kernels_only) != out.fingerprint) tuned.push_back(kernels_only);
  const tune::MeasureResult m = tune::RunInWorker(
      [&] { return CheckJob(mod, output_names, options, tuned, target, check, num_threads); }, check.timeout_s);
  out.elapsed_s = SecondsSince(t0);
  if (m.error.rfind(kSkip, 0) == 0) {
    out.skipped = m.error.substr(std::char_traits<char>::length(kSkip));
    return out;
  }
  if (m.error.rfind("timeout", 0) == 0) {
    out.skipped = "the check's worker ran out of time (" + m.error + ")";
    return out;
  }
  if (!m.error.empty()) {
    out.verdict.apply = false;
    out.verdict.error = m.error;
  } else {
    const size_t k = tuned.size() + 1;
    TESSERA_ICHECK(m.run_secs.size() == k * static_cast<size_t>(check.rounds), "the check's worker reported ",
                   m.run_secs.size(), " times for ", check.rounds, " rounds of ", k, " builds");
    std::vector<std::vector<double>> secs(k);
    for (size_t i = 0; i < m.run_secs.size(); ++i) secs[i % k].push_back(m.run_secs[i]);
    out.verdict = tune::DecideModelCheck(secs[0], secs[1]);
    if (k == 3) {
      tune::ModelCheckVerdict without = tune::DecideModelCheck(secs[0], secs[2]);
      if (without.ratio < out.verdict.ratio) {
        out.verdict = without;
        out.verdict.rewrites = false;
      }
    }
  }
  tune::Database db(options.tuning_db);
  tune::CommitModelCheck(db, out.fingerprint, target.str(), out.verdict);
  out.checked = true;
  return out;
}

TuneModelResult TuneModel(const graph::IRModule& mod, const std::vector<std::string>& output_names,
                          const BuildOptions& options, const TuneModelOptions& tune_options,
                          const std::function<void(const tune::TuneProgress&)>& progress) {
  TESSERA_CHECK(!options.tuning_db.empty(), "tuning needs a database to record in (--db FILE)");
  TESSERA_CHECK(tune_options.check_share >= 0 && tune_options.check_share < 1, "check_share must lie in [0, 1)");
  const target::Target target = ResolveTarget(options.target);
  TESSERA_CHECK(RunsOnHost(target), "tuning measures on this machine, which cannot run code for '", target.str(),
                "'; tune with --target native (remote measurement is not supported yet)");
  auto log = [&](const std::string& line) {
    if (tune_options.log) tune_options.log(line);
  };
  std::vector<tune::RewriteChoice> choices;
  std::vector<tune::TuneTask> tasks = ExtractTasks(mod, output_names, options, &choices);  // reads no database
  if (!tune_options.tasks.empty()) {
    std::vector<tune::TuneTask> chosen;
    std::string names;
    for (tune::TuneTask& t : tasks) {
      names += "\n  " + t.name;
      if (t.name.find(tune_options.tasks) != std::string::npos) chosen.push_back(std::move(t));
    }
    TESSERA_CHECK(!chosen.empty(), "--tasks '", tune_options.tasks, "': no task of the model has that in its name; ",
                  "its tasks are:", names);
    tasks = std::move(chosen);
    // A graph rewrite knob is decided only when every kernel of every value is still a task: a
    // decision from kernels this run does not measure would be the fallback, recorded for nothing.
    std::set<std::string> kept;
    for (const tune::TuneTask& t : tasks) kept.insert(t.workload_hash);
    std::erase_if(choices, [&](const tune::RewriteChoice& c) {
      for (const auto& [value, kernels] : c.kernels)
        for (const auto& [hash, calls] : kernels)
          if (!kept.count(hash)) return true;
      return false;
    });
  }
  TuneModelResult out;
  {
    tune::Database db(options.tuning_db);
    log("tuning for " + target.str() + ": " + std::to_string(tasks.size()) + " tasks (" +
        std::to_string(choices.size()) + " graph rewrite knobs), database " + options.tuning_db + " (" +
        std::to_string(db.size()) + " records)");
    tune::TuneOptions search = tune_options.tune;
    const bool check = tune_options.check.rounds > 0;
    if (check && search.max_seconds > 0) search.max_seconds *= 1 - tune_options.check_share;
    out.report = tune::Tune(tasks, target, db, search, progress);
    out.decisions = tune::DecideRewrites(choices, target.str(), db);
    if (!check) {
      out.check.skipped = "off";
      return out;
    }
  }
  log("end-to-end check: the model with and without the database, " + std::to_string(tune_options.check.rounds) +
      " rounds");
  out.check = CheckTunedModel(mod, output_names, options, tune_options.check, tune_options.tune.measure.num_threads);
  const tune::ModelCheckVerdict& v = out.check.verdict;
  if (!out.check.checked)
    log("end-to-end check not recorded: " + out.check.skipped);
  else if (!v.error.empty())
    log("end-to-end check: the tuned build is not applied: " + v.error);
  else
    log("end-to-end check: " + Ms(v.default_secs) + " default, " + Ms(v.tuned_secs) + " tuned per run (median ratio " +
        std::to_string(v.ratio) + " over " + std::to_string(v.rounds) + " rounds): " +
        (!v.apply      ? "the default build is kept"
         : v.rewrites ? "the tuned build is applied"
                      : "the tuned kernels are applied, the graph rewrites at their defaults"));
  return out;
}

}  // namespace tessera::driver
