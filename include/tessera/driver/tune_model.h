// TuneModel: tuning a whole model, what `tessera tune` and `tessera.tune()` run (issue 19):
//
//   ExtractTasks (with the graph rewrite knobs)       build.h
//   [keep only the tasks named by `tasks`]
//   Tune: the search, recording in the database         tune/tuner.h
//   DecideRewrites: each graph rewrite knob's value     tune/rewrite_choice.h
//   the end-to-end check: the model built with the database against the model built without it,
//   in one forked worker (tune/worker.h):
//     both builds JIT-compiled, and a third when the database decides graph rewrites: the tuned
//     kernels with every rewrite at its fallback (BuildOptions::apply_rewrite_decisions off); the
//     same inputs (the input guards' values, else tune::FillPseudoRandom's); each tuned build's
//     outputs compared with the default build's (tune::CompareOutput, ModelCheckOptions::
//     tolerance); then the per-kernel profile (tune/model_check.h, "Per kernel"): the default build
//     and the tuned build of its graph profiled in the model over `profile_rounds` alternated
//     rounds, and for the workloads whose tuned kernels ran slower there (tune::KernelsSlowerInModel,
//     kernel_margin, kernel_min_secs) each tuned build that has them again without their records
//     (its outputs compared too); then the second choice (tune/model_check.h, "Second choice"):
//     those workloads' runners-up (tune::Database::TopPrograms) profiled the same way, and the
//     builds without the slower records built once more with each runner-up not slower there
//     (BuildOptions::workload_programs); then `rounds` rounds, each timing every build for at least
//     min_round_secs (a round's time: the median of its runs, robust to bursts of other load), each
//     round led by the next build. The profile and the rounds run at each of the check's thread
//     counts (ModelCheckOptions::thread_counts; by default the tuning's and 1): a kernel slower at
//     any of them keeps its default schedule. The verdict (tune::DecideModelCheck at each thread
//     count, tune::CombineThreadVerdicts over them: of the tuned builds whose median paired ratio is
//     below 1 and that won a sign test's share of the rounds, 7 of 10, at every thread count, the
//     one with the lowest geometric mean of its ratios; the default build when none did) is recorded
//     for the tuned build's fingerprint (tune/model_check.h), which `tessera compile --db` follows.
//
// A time budget (tune.max_seconds) covers the check: the search gets (1 - check_share) of it. The
// check is not recorded (ModelCheckResult::skipped says why) when it is off (rounds 0), when an
// input has a symbolic shape, when the default build cannot be built or run, or when the worker
// times out; `compile --db` then applies the records as they are. A tuned build that fails to build
// or run, crashes or computes other outputs is recorded as not applied, with the error.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tessera/driver/build.h"
#include "tessera/graph/module.h"
#include "tessera/tune/model_check.h"
#include "tessera/tune/rewrite_choice.h"
#include "tessera/tune/tuner.h"

namespace tessera::driver {

struct ModelCheckOptions {
  int rounds = 10;              ///< alternated rounds of both builds; 0: no check
  double min_round_secs = 0.2;  ///< each build runs at least this long per round (and at least once)
  double tolerance = 1e-3;      ///< CompareOutput's relative tolerance, tuned outputs against default ones
  double timeout_s = 3600;      ///< the worker's limit: both builds and every run
  /// Alternated rounds (each of min_round_secs per build) of the per-kernel profile; 0: no profile,
  /// so no build without the kernels that ran slower in the model. A VM program is not profiled.
  int profile_rounds = 6;
  double kernel_margin = 0.03;    ///< KernelsSlowerInModel's margin: 3 % slower in the model
  double kernel_min_secs = 5e-6;  ///< and slower by more than 5 us per run
  /// The runtime thread counts the profile and the rounds run at, each in turn (tune/model_check.h,
  /// "Per thread count"); empty: the tuning's thread count (0: the runtime's default) and 1. UserError
  /// for a count outside [1, runtime::ThreadLimit()] or listed twice.
  std::vector<int> thread_counts;
};

struct TuneModelOptions {
  tune::TuneOptions tune;  ///< the search; tune.measure.num_threads is also the check's first thread count
  /// Tune only the tasks whose name contains this text (empty: every task). A graph rewrite knob is
  /// decided only when every kernel of every value is among them. UserError when none matches.
  std::string tasks;
  ModelCheckOptions check;
  double check_share = 0.1;  ///< of a time budget kept for the check, in [0, 1)
  /// Lines on what happens beside the search (the tasks found, the check); may be empty.
  std::function<void(const std::string&)> log;
};

struct ModelCheckResult {
  bool checked = false;         ///< a verdict was measured and recorded
  std::string skipped;          ///< why not, when not checked
  std::string fingerprint;      ///< the tuned build's (tune::TuningFingerprint)
  tune::ModelCheckVerdict verdict;
  /// The per-kernel profile: every workload the tuned build of the default's graph schedules from a
  /// record other than the default schedule (TunedKernel::default_program), in-model seconds per run
  /// of both builds, at each thread count in turn (InModelKernelTime::threads; empty when not profiled).
  std::vector<tune::InModelKernelTime> kernels;
  /// The second choice's profile (tune/model_check.h): the workloads of `kernels` slower in the
  /// model that have a runner-up, that runner-up's in-model time against the default's, at each
  /// thread count (tuned_secs: the runner-up's; empty when none was profiled).
  std::vector<tune::InModelKernelTime> second_kernels;
  /// Every tuned build timed at every thread count (the counts' order, then the worker's order of
  /// builds), as the verdict at that count would read: its threads, rewrites, untuned_workloads,
  /// workload_programs and median paired ratio.
  std::vector<tune::ModelCheckVerdict> builds;
  double elapsed_s = 0;         ///< the check's wall time (builds included)
};

struct TuneModelResult {
  tune::TuneReport report;
  std::vector<tune::RewriteDecision> decisions;
  ModelCheckResult check;
};

/// Tunes `mod` (see the header comment). `options` are the build's: target (which must run on this
/// machine), input guards, and tuning_db, the database to record in (created when missing). Throws
/// UserError without a database or budget, for a target this machine cannot run, bad check thread
/// counts (before the search), or a `tasks` text no task matches (the message lists the tasks);
/// otherwise as ExtractTasks and tune::Tune do.
TuneModelResult TuneModel(const graph::IRModule& mod, const std::vector<std::string>& output_names,
                          const BuildOptions& options, const TuneModelOptions& tune_options,
                          const std::function<void(const tune::TuneProgress&)>& progress = {});

/// The end-to-end check alone, for the database as it is (TuneModel's last step): measures, records
/// and returns the verdict on the build with `options.tuning_db`.
ModelCheckResult CheckTunedModel(const graph::IRModule& mod, const std::vector<std::string>& output_names,
                                 const BuildOptions& options, const ModelCheckOptions& check, int num_threads = 0);

}  // namespace tessera::driver
