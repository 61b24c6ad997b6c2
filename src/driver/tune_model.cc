// TuneModel and the end-to-end check of a tuned model (driver/tune_model.h).
#include "tessera/driver/tune_model.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "tessera/driver/resolve_target.h"
#include "tessera/runtime/executor.h"
#include "tessera/runtime/graph_executor.h"
#include "tessera/runtime/run_model.h"
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

// A tuned build the check times: its options, its kernels' tuned workloads and what the verdict
// says when it wins.
struct Candidate {
  BuildOptions options;
  std::set<std::string> tuned_workloads;  // scheduled from a record other than the hand schedule
  bool rewrites = true;                   // with the database's graph rewrite decisions
  std::vector<std::string> untuned;       // workloads kept at their default schedule
  std::map<std::string, std::string> programs;  // workloads built with their runner-up: its ProgramId
};

Candidate MakeCandidate(const BuildOptions& options, const TunedBuild& build, bool rewrites) {
  Candidate c{options, {}, rewrites, {}, {}};
  for (const TunedKernel& k : build.kernels)
    if (k.program != "-" && !k.default_program) c.tuned_workloads.insert(k.workload);
  return c;
}

// The tuned builds again without the records of the `slower` workloads: one per candidate that has
// any of them (a candidate without is the same build), in `tuned`'s order.
std::vector<Candidate> WithoutSlower(const std::vector<Candidate>& tuned, const std::vector<std::string>& slower) {
  std::vector<Candidate> out;
  for (const Candidate& t : tuned) {
    Candidate c = t;
    for (const std::string& w : slower)
      if (t.tuned_workloads.count(w)) c.untuned.push_back(w);
    if (c.untuned.empty()) continue;
    c.options.untuned_workloads.insert(c.untuned.begin(), c.untuned.end());
    for (const std::string& w : c.untuned) c.tuned_workloads.erase(w);
    out.push_back(std::move(c));
  }
  return out;
}

// The builds of `without` (WithoutSlower's) again with the `rescued` workloads at their runners-up
// (`second`: workload -> ProgramId) instead of their default schedules: one per build that kept any
// of them at its default, in `without`'s order.
std::vector<Candidate> WithSecondChoices(const std::vector<Candidate>& without, const std::set<std::string>& rescued,
                                         const std::map<std::string, std::string>& second) {
  std::vector<Candidate> out;
  for (const Candidate& w : without) {
    Candidate c = w;
    c.untuned.clear();
    for (const std::string& u : w.untuned) {
      if (!rescued.count(u)) {
        c.untuned.push_back(u);
        continue;
      }
      c.options.untuned_workloads.erase(u);
      c.options.workload_programs[u] = second.at(u);
      c.programs[u] = second.at(u);
      c.tuned_workloads.insert(u);
    }
    if (c.programs.size() > w.programs.size()) out.push_back(std::move(c));
  }
  return out;
}

// The workloads of `slower` that have a runner-up in `second`, sorted.
std::vector<std::string> WithRunnerUp(const std::vector<std::string>& slower,
                                      const std::map<std::string, std::string>& second) {
  std::vector<std::string> out;
  for (const std::string& w : slower)
    if (second.count(w)) out.push_back(w);
  return out;
}

// What the per-kernel profile needs (tune/model_check.h, "Per kernel"): the workloads whose kernels
// the tuned build of the default's graph schedules from a record other than the default schedule,
// sorted, and its kernels' workloads.
struct KernelProfilePlan {
  std::vector<std::string> workloads;
  std::map<std::string, std::string> workload_of;  // kernel name -> workload, for those
};

KernelProfilePlan PlanKernelProfile(const Candidate& same_graph, const TunedBuild& build) {
  KernelProfilePlan plan;
  plan.workloads.assign(same_graph.tuned_workloads.begin(), same_graph.tuned_workloads.end());
  for (const TunedKernel& k : build.kernels)
    if (same_graph.tuned_workloads.count(k.workload)) plan.workload_of[k.kernel] = k.workload;
  return plan;
}

// `plan` narrowed to `workloads` (sorted, each one of plan's).
KernelProfilePlan NarrowPlan(const KernelProfilePlan& plan, const std::vector<std::string>& workloads) {
  KernelProfilePlan out;
  out.workloads = workloads;
  const std::set<std::string> keep(workloads.begin(), workloads.end());
  for (const auto& [kernel, w] : plan.workload_of)
    if (keep.count(w)) out.workload_of[kernel] = w;
  return out;
}

// The runner-up of each of `plan`'s workloads in `db` on `target` (workload -> ProgramId): its
// second best program, when it is not the workload's default schedule (`build`'s default ids).
std::map<std::string, std::string> RunnersUp(const tune::Database& db, const std::string& target,
                                             const KernelProfilePlan& plan, const TunedBuild& build) {
  std::map<std::string, std::string> default_id;
  for (const TunedKernel& k : build.kernels) default_id[k.workload] = k.default_id;
  std::map<std::string, std::string> out;
  for (const std::string& w : plan.workloads) {
    const std::vector<tune::TuningRecord> top = db.TopPrograms(w, target, 2);
    if (top.size() == 2 && tune::TraceId(top[1].trace_json) != default_id[w]) out[w] = tune::ProgramId(top[1]);
  }
  return out;
}

// Each workload's in-model seconds per run in `base` (the default build) and `tuned` (the same
// graph, tuned kernels), over `rounds` paired rounds of `n` runs of each (the lead alternating).
// Empty when either is not a graph program or the two call other kernels.
std::vector<tune::InModelKernelTime> ProfileKernels(runtime::Executor& base, runtime::Executor& tuned,
                                                    const KernelProfilePlan& plan, int rounds, int n) {
  auto* b = dynamic_cast<runtime::GraphExecutor*>(&base);
  auto* t = dynamic_cast<runtime::GraphExecutor*>(&tuned);
  if (!b || !t || rounds <= 0 || plan.workloads.empty()) return {};
  // One round's seconds per run of each workload of `e`, appended to `into`; `calls` its kernel calls.
  auto add_round = [&](const runtime::GraphExecutor& e, std::map<std::string, std::vector<double>>& into,
                       std::multiset<std::string>& calls) {
    std::map<std::string, double> secs;
    for (const std::string& w : plan.workloads) secs[w] = 0;
    for (const runtime::GraphExecutor::NodeProfile& p : e.Profile()) {
      calls.insert(p.node + " " + p.kernel);
      if (auto w = plan.workload_of.find(p.kernel); w != plan.workload_of.end()) secs[w->second] += p.ms_per_run * 1e-3;
    }
    for (const auto& [w, s] : secs) into[w].push_back(s);
  };
  std::map<std::string, std::vector<double>> default_secs, tuned_secs;
  bool same_calls = true;
  for (int r = 0; r < rounds && same_calls; ++r) {
    b->SetProfiling(true);  // counters reset
    t->SetProfiling(true);
    runtime::MedianRunSeconds(r % 2 ? *t : *b, n);
    runtime::MedianRunSeconds(r % 2 ? *b : *t, n);
    std::multiset<std::string> base_calls, tuned_calls;
    add_round(*b, default_secs, base_calls);
    add_round(*t, tuned_secs, tuned_calls);
    same_calls = base_calls == tuned_calls;
  }
  b->SetProfiling(false);
  t->SetProfiling(false);
  if (!same_calls) return {};
  std::vector<tune::InModelKernelTime> out;
  for (const std::string& w : plan.workloads)
    out.push_back(tune::SummarizeKernelRounds(w, default_secs.at(w), tuned_secs.at(w)));
  return out;
}

using Inputs = std::vector<std::pair<std::string, runtime::NDArray>>;

// The inputs every build of the check runs on: the input guards' values, else tune::
// FillPseudoRandom's. Empty `why` when all have static shapes; else why not (the input named).
Inputs CheckInputs(const runtime::Executor& base, const BuildOptions& options, std::string* why) {
  Inputs inputs;
  for (int i = 0; i < base.NumInputs(); ++i) {
    const std::string& name = base.InputName(i);
    const std::vector<int64_t>& shape = base.InputShape(i);
    if (auto g = options.input_guards.find(name); g != options.input_guards.end()) {
      inputs.emplace_back(name, g->second);
      continue;
    }
    if (std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; })) {
      *why = "input '" + name + "' has a symbolic shape " + runtime::ShapeToString(shape, base.InputDimNames(i));
      return {};
    }
    runtime::NDArray value = runtime::NDArray::Empty(shape, base.InputDType(i));
    tune::FillPseudoRandom(value.raw_data(), value.NBytes(), value.dtype(), 1000 + static_cast<uint64_t>(i));
    inputs.emplace_back(name, value);
  }
  return inputs;
}

// Runs `cand` on `inputs` and compares its outputs with `base`'s last run: "" when they agree
// (tune::CompareOutput, `tolerance` relative), else a "wrong answer: ..." line.
std::string CompareWithDefault(runtime::Executor& base, runtime::Executor& cand, const Inputs& inputs,
                               double tolerance) {
  for (const auto& [name, value] : inputs) cand.SetInput(name, value);
  cand.Run();
  for (int o = 0; o < base.NumOutputs(); ++o) {
    const runtime::NDArray want = base.GetOutput(o);
    const runtime::NDArray got = cand.GetOutput(cand.OutputIndex(base.OutputName(o)));
    if (got.shape() != want.shape() || got.dtype() != want.dtype())
      return "wrong answer: output '" + base.OutputName(o) + "' has shape " + runtime::ShapeToString(got.shape(), {}) +
             " instead of " + runtime::ShapeToString(want.shape(), {});
    const std::string diff = tune::CompareOutput(got.raw_data(), want.raw_data(), want.NBytes(), want.dtype(),
                                                 tolerance, static_cast<size_t>(o));
    if (!diff.empty()) return "wrong answer: " + base.OutputName(o) + ": " + diff;
  }
  return "";
}

// The runners-up to keep: those of `runners` whose kernel the second choice's profile (`profiled`,
// empty when it was not profiled) did not find slower in the model at any thread count.
std::set<std::string> Rescued(const std::vector<std::string>& runners,
                              const std::vector<tune::InModelKernelTime>& profiled, const ModelCheckOptions& check) {
  if (profiled.empty()) return {};
  std::set<std::string> out(runners.begin(), runners.end());
  for (const std::string& w : tune::KernelsSlowerInModel(profiled, check.kernel_margin, check.kernel_min_secs))
    out.erase(w);
  return out;
}

// The check's worker job (see tune_model.h): the default build against each of `tuned`, the last
// of which has the default build's graph, at each of `threads` (runtime thread counts); with
// `plan`'s workloads, the per-kernel profile at each thread count and the tuned builds without the
// kernels slower at any of them after the others; with `second` (the runners-up), the second
// choice's profile of the slower workloads that have one (tune/model_check.h) and the builds of
// WithSecondChoices after those. Its line is "ok <build secs> T" then, per thread count, "t P d_1
// t_1 r_1 ... d_P t_P r_P" (P: the workloads profiled, 0 or plan.workloads.size(), and their
// in-model InModelKernelTime numbers in plan.workloads' order), then the same per thread count for
// the second choice's profile (P: 0 or the size of WithRunnerUp's list, in its order), then, per
// thread count, each round's seconds per run of the default build and of each tuned one, then of
// WithoutSlower's builds, then of WithSecondChoices'; or "error <build secs> <why>".
std::string CheckJob(const graph::IRModule& mod, const std::vector<std::string>& output_names,
                     const BuildOptions& options, const std::vector<Candidate>& tuned, const KernelProfilePlan& plan,
                     const std::map<std::string, std::string>& second, const target::Target& target,
                     const ModelCheckOptions& check, const std::vector<int>& threads) {
  runtime::SetNumThreads(threads[0], true);
  const Clock::time_point t0 = Clock::now();
  BuildOptions untuned = options;
  untuned.tuning_db.clear();
  std::vector<std::unique_ptr<runtime::Executor>> builds;  // the default build, then `tuned`
  try {
    builds.push_back(runtime::MakeExecutor(BuildJIT(mod, output_names, target, untuned)));
  } catch (const std::exception& e) {
    return std::string("error 0 ") + kSkip + "the default build failed: " + e.what();
  }
  auto build_tuned = [&](const BuildOptions& t) -> std::string {
    try {
      builds.push_back(runtime::MakeExecutor(BuildJIT(mod, output_names, target, t)));
    } catch (const std::exception& e) {
      return std::string("the tuned build failed: ") + e.what();
    }
    return "";
  };
  for (const Candidate& t : tuned)
    if (std::string err = build_tuned(t.options); !err.empty()) return "error 0 build: " + err;
  runtime::Executor& base = *builds[0];
  auto error = [&](const std::string& why) { return "error " + std::to_string(SecondsSince(t0)) + " " + why; };
  std::string symbolic;
  const Inputs inputs = CheckInputs(base, options, &symbolic);
  if (!symbolic.empty()) return error(kSkip + symbolic);
  for (const auto& [name, value] : inputs) base.SetInput(name, value);
  try {
    base.Run();
  } catch (const std::exception& e) {
    return error(kSkip + std::string("the default build failed to run: ") + e.what());
  }
  // Each tuned build from `first` on: the same inputs, outputs compared with the default build's.
  auto compare = [&](size_t first) -> std::string {
    for (size_t b = first; b < builds.size(); ++b)
      if (std::string err = CompareWithDefault(base, *builds[b], inputs, check.tolerance); !err.empty()) return err;
    return "";
  };
  if (std::string err = compare(1); !err.empty()) return error(err);
  // Runs per round: enough for min_round_secs of the slowest build (one warm run of each first).
  auto runs_per_round = [&] {
    double slowest = 0;
    for (auto& b : builds) slowest = std::max(slowest, runtime::MedianRunSeconds(*b, 1));
    return std::max(1, static_cast<int>(std::ceil(check.min_round_secs / std::max(slowest, 1e-9))));
  };
  std::ostringstream line;
  line.precision(9);
  line << threads.size() << " ";
  // The per-kernel profile at each thread count, and the tuned builds without the kernels it found
  // slower at any.
  std::vector<tune::InModelKernelTime> kernels;
  for (int t : threads) {
    runtime::SetNumThreads(t, true);
    const std::vector<tune::InModelKernelTime> at =
        ProfileKernels(base, *builds.back(), plan, check.profile_rounds, runs_per_round());
    line << t << " " << at.size() << " ";
    for (const tune::InModelKernelTime& k : at) line << k.default_secs << " " << k.tuned_secs << " " << k.ratio << " ";
    kernels.insert(kernels.end(), at.begin(), at.end());
  }
  const std::vector<std::string> slower = tune::KernelsSlowerInModel(kernels, check.kernel_margin, check.kernel_min_secs);
  const std::vector<Candidate> without = WithoutSlower(tuned, slower);
  // The second choice: the same graph with the slower workloads that have a runner-up at it,
  // profiled against the default build; the runners-up not slower at any thread count are kept.
  // A build of them that fails or computes other outputs is not profiled (none is kept).
  const std::vector<std::string> runners = WithRunnerUp(slower, second);
  std::vector<tune::InModelKernelTime> second_kernels;
  std::unique_ptr<runtime::Executor> runner_build;
  if (!runners.empty()) {
    BuildOptions with_runners = tuned.back().options;
    for (const std::string& w : runners) with_runners.workload_programs[w] = second.at(w);
    runtime::SetNumThreads(threads[0], true);
    try {
      runner_build = runtime::MakeExecutor(BuildJIT(mod, output_names, target, with_runners));
      if (!CompareWithDefault(base, *runner_build, inputs, check.tolerance).empty()) runner_build.reset();
    } catch (const std::exception&) {
      runner_build.reset();
    }
  }
  if (runner_build) {
    const KernelProfilePlan narrow = NarrowPlan(plan, runners);
    for (int t : threads) {
      runtime::SetNumThreads(t, true);
      const std::vector<tune::InModelKernelTime> at =
          ProfileKernels(base, *runner_build, narrow, check.profile_rounds, runs_per_round());
      line << t << " " << at.size() << " ";
      for (const tune::InModelKernelTime& k : at) line << k.default_secs << " " << k.tuned_secs << " " << k.ratio << " ";
      second_kernels.insert(second_kernels.end(), at.begin(), at.end());
    }
  } else {
    for (int t : threads) line << t << " 0 ";
  }
  const std::set<std::string> rescued = Rescued(runners, second_kernels, check);
  const size_t first = builds.size();
  for (const Candidate& t : without)
    if (std::string err = build_tuned(t.options); !err.empty()) return error("build: " + err);
  for (const Candidate& t : WithSecondChoices(without, rescued, second))
    if (std::string err = build_tuned(t.options); !err.empty()) return error("build: " + err);
  runtime::SetNumThreads(threads[0], true);
  if (std::string err = compare(first); !err.empty()) return error(err);
  std::vector<double> secs(builds.size());
  for (int t : threads) {
    runtime::SetNumThreads(t, true);
    const int n = runs_per_round();
    for (int r = 0; r < check.rounds; ++r) {
      // Round r starts with build r mod k, so that each build leads as often as the others.
      for (size_t j = 0; j < builds.size(); ++j) {
        const size_t b = (static_cast<size_t>(r) + j) % builds.size();
        secs[b] = runtime::MedianRunSeconds(*builds[b], n);
      }
      for (double s : secs) line << s << " ";
    }
  }
  std::ostringstream head;
  head.precision(9);
  head << "ok " << SecondsSince(t0) << " ";
  return head.str() + line.str();
}

// The thread counts the check runs at: `listed` when given (each in [1, runtime::ThreadLimit()],
// none twice: UserError otherwise), else the tuning's (`num_threads`, 0: the runtime's default) and 1.
std::vector<int> CheckThreadCounts(const std::vector<int>& listed, int num_threads) {
  for (int t : listed)
    TESSERA_CHECK(t >= 1 && t <= runtime::ThreadLimit(), "the end-to-end check's thread counts must lie in [1, ",
                  runtime::ThreadLimit(), "] on this machine; got ", t);
  std::vector<int> out = listed;
  if (out.empty()) out = {num_threads > 0 ? num_threads : runtime::NumThreads(), 1};
  std::vector<int> seen;
  for (int t : out)
    if (std::find(seen.begin(), seen.end(), t) == seen.end()) seen.push_back(t);
  TESSERA_CHECK(listed.empty() || seen.size() == listed.size(), "the end-to-end check's thread counts list one twice");
  return seen;
}

// The geometric mean of the ratios of `per_threads` (each > 0).
double GeomeanRatio(const std::vector<tune::ModelCheckVerdict>& per_threads) {
  double log_sum = 0;
  for (const tune::ModelCheckVerdict& v : per_threads) log_sum += std::log(v.ratio);
  return std::exp(log_sum / static_cast<double>(per_threads.size()));
}

std::string Ms(double secs) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g ms", secs * 1e3);
  return buf;
}

}  // namespace

ModelCheckResult CheckTunedModel(const graph::IRModule& mod, const std::vector<std::string>& output_names,
                                 const BuildOptions& options, const ModelCheckOptions& check, int num_threads) {
  TESSERA_CHECK(check.rounds > 0 && check.min_round_secs >= 0 && check.tolerance >= 0 && check.timeout_s > 0 &&
                    check.profile_rounds >= 0 && check.kernel_margin >= 0 && check.kernel_min_secs >= 0,
                "the end-to-end check needs rounds > 0, min_round_secs >= 0, tolerance >= 0, timeout_s > 0, "
                "profile_rounds >= 0, kernel_margin >= 0 and kernel_min_secs >= 0");
  const Clock::time_point t0 = Clock::now();
  const target::Target target = ResolveTarget(options.target);
  TESSERA_CHECK(RunsOnHost(target), "the end-to-end check runs the model on this machine, which cannot run code for '",
                target.str(), "'");
  ModelCheckResult out;
  // The tuned build, and the tuned kernels with the rewrites at their fallbacks when that differs:
  // the last has the default build's graph.
  BuildOptions full_options = options;
  full_options.apply_model_check = false;
  const TunedBuild full = DescribeTunedBuild(mod, output_names, full_options);
  out.fingerprint = full.fingerprint;
  BuildOptions kernels_options = full_options;
  kernels_options.apply_rewrite_decisions = false;
  const TunedBuild same_graph = DescribeTunedBuild(mod, output_names, kernels_options);
  std::vector<Candidate> tuned = {MakeCandidate(full_options, full, true)};
  if (same_graph.fingerprint != full.fingerprint) tuned.push_back(MakeCandidate(kernels_options, same_graph, false));
  const KernelProfilePlan plan = PlanKernelProfile(tuned.back(), same_graph);
  tune::Database db(options.tuning_db);  // nothing writes it until the verdict below
  const std::map<std::string, std::string> second = RunnersUp(db, target.str(), plan, same_graph);
  const std::vector<int> threads = CheckThreadCounts(check.thread_counts, num_threads);
  const tune::MeasureResult m = tune::RunInWorker(
      [&] { return CheckJob(mod, output_names, options, tuned, plan, second, target, check, threads); },
      check.timeout_s);
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
    // The line: the per-kernel profile at each thread count, then the rounds (CheckJob).
    const std::vector<double>& v = m.run_secs;
    size_t at = 0;
    auto next = [&]() {
      TESSERA_ICHECK(at < v.size(), "the check's worker reported a short line");
      return v[at++];
    };
    TESSERA_ICHECK(static_cast<size_t>(next()) == threads.size(), "the check's worker ran another list of thread counts");
    // One profile at each thread count: `workloads`' InModelKernelTime numbers, appended to `into`.
    auto read_profile = [&](const std::vector<std::string>& workloads, std::vector<tune::InModelKernelTime>& into) {
      for (int t : threads) {
        TESSERA_ICHECK(static_cast<int>(next()) == t, "the check's worker profiled another thread count");
        const size_t p = static_cast<size_t>(next());
        TESSERA_ICHECK(p == 0 || p == workloads.size(), "the check's worker profiled ", p, " workloads of ",
                       workloads.size());
        for (size_t i = 0; i < p; ++i) {
          tune::InModelKernelTime k{workloads[i], 0, 0, 0, t};
          k.default_secs = next();
          k.tuned_secs = next();
          k.ratio = next();
          into.push_back(k);
        }
      }
    };
    read_profile(plan.workloads, out.kernels);
    const std::vector<std::string> slower =
        tune::KernelsSlowerInModel(out.kernels, check.kernel_margin, check.kernel_min_secs);
    const std::vector<std::string> runners = WithRunnerUp(slower, second);
    read_profile(runners, out.second_kernels);
    std::vector<Candidate> timed = tuned;
    const std::vector<Candidate> without = WithoutSlower(tuned, slower);
    timed.insert(timed.end(), without.begin(), without.end());
    for (Candidate& t : WithSecondChoices(without, Rescued(runners, out.second_kernels, check), second))
      timed.push_back(std::move(t));
    const size_t k = timed.size() + 1;
    TESSERA_ICHECK(v.size() - at == k * static_cast<size_t>(check.rounds) * threads.size(), "the check's worker reported ",
                   v.size() - at, " times for ", check.rounds, " rounds of ", k, " builds at ", threads.size(),
                   " thread counts");
    // per_threads[c]: tuned build c's verdict at each thread count.
    std::vector<std::vector<tune::ModelCheckVerdict>> per_threads(timed.size());
    for (int t : threads) {
      std::vector<std::vector<double>> secs(k);
      for (size_t i = 0; i < k * static_cast<size_t>(check.rounds); ++i) secs[i % k].push_back(next());
      for (size_t c = 0; c < timed.size(); ++c) {
        tune::ModelCheckVerdict verdict = tune::DecideModelCheck(secs[0], secs[c + 1]);
        verdict.rewrites = timed[c].rewrites;
        verdict.untuned_workloads = timed[c].untuned;
        verdict.workload_programs = timed[c].programs;
        verdict.threads = t;
        out.builds.push_back(verdict);
        per_threads[c].push_back(verdict);
      }
    }
    // Of the tuned builds that pass the verdict's rules at every thread count, the one with the lowest
    // geometric mean of its ratios (the first among equals); when none passes, the lowest's, not applied.
    double best_score = 0;
    for (size_t c = 0; c < timed.size(); ++c) {
      const tune::ModelCheckVerdict verdict = tune::CombineThreadVerdicts(per_threads[c]);
      const double score = GeomeanRatio(per_threads[c]);
      const bool better = verdict.apply != out.verdict.apply ? verdict.apply : score < best_score;
      if (c == 0 || better) {
        out.verdict = verdict;
        best_score = score;
      }
    }
    if (!out.verdict.apply) {
      out.verdict.untuned_workloads.clear();
      out.verdict.workload_programs.clear();
    }
  }
  tune::CommitModelCheck(db, out.fingerprint, target.str(), out.verdict);
  out.checked = true;
  return out;
}

TuneModelResult TuneModel(const graph::IRModule& mod, const std::vector<std::string>& output_names,
                          const BuildOptions& options, const TuneModelOptions& tune_options,
                          const std::function<void(const tune::TuneProgress&)>& progress) {
  TESSERA_CHECK(!options.tuning_db.empty(), "tuning needs a database to record in (--db FILE)");
  TESSERA_CHECK(tune_options.check_share >= 0 && tune_options.check_share < 1, "check_share must lie in [0, 1)");
  // Bad thread counts for the check fail now, not after the search.
  if (tune_options.check.rounds > 0) CheckThreadCounts(tune_options.check.thread_counts, tune_options.tune.measure.num_threads);
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
        std::to_string(v.ratio) + " over " + std::to_string(v.rounds) + " rounds, faster in " +
        std::to_string(v.wins) + "): " +
        (!v.apply      ? "the default build is kept"
         : v.rewrites ? "the tuned build is applied"
                      : "the tuned kernels are applied, the graph rewrites at their defaults") +
        (v.apply && !v.untuned_workloads.empty()
             ? ", but for the kernels of " + std::to_string(v.untuned_workloads.size()) +
                   " workload(s) that ran slower in the model (default schedules)"
             : std::string()) +
        (v.apply && !v.workload_programs.empty()
             ? ", " + std::to_string(v.workload_programs.size()) +
                   " workload(s) with their runner-up records (their best ran slower in the model)"
             : std::string()));
  return out;
}

}  // namespace tessera::driver
