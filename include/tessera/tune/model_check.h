// The end-to-end check of a tuned model (issue 19: a tuned model is "never slower than the untuned
// default"). The tuner chooses every kernel's schedule and every graph rewrite's value from
// kernels timed one at a time; in the model each kernel runs among the others (other data in the
// caches, the thread pool's launches back to back), and the sum of isolated gains does not always
// carry over. So after tuning, driver::TuneModel (driver/tune_model.h) runs the model built with
// the database against the model built without it, on the same inputs, alternately, and records
// the verdict here; `tessera compile --db` builds the tuned model only when the latest verdict for
// that very build applies it, and the default build otherwise.
//
// The builds a verdict is about are named by a fingerprint (TuningFingerprint): FNV-1a 64 over the
// sorted lines "<workload hash> <program> <default program>" of every kernel of the build with the
// database, program being ProgramId of the record the database gave the kernel, or "-" for the
// default schedule, and default program TraceId of the kernel's default schedule (what the build
// without the database runs for it). The graph rewrite decisions change the kernels, hence the
// fingerprint; so does any new best record, and so does a change of a default schedule (another
// Tessera build): the verdict timed the tuned build against the default build of its time, not of
// this one. A build whose fingerprint has no verdict (tuned again since, its defaults changed, or
// never checked) is applied as the records say; `compile --db` notes it when the database holds
// verdicts of other builds (HasModelChecks), and `tessera tune --check-only` checks it again.
//
// The verdict (DecideModelCheck): round i times both builds, each for at least a set duration,
// giving default_i and tuned_i (seconds per run); the tuned build is applied when the median over
// rounds of tuned_i / default_i is below 1 (a paired comparison: the machine's drift between rounds
// cancels) and it was faster in at least MinWinningRounds(rounds) of the rounds. That second rule
// is a one-sided sign test: a build no faster than the default has its median below 1 in half of
// all checks, and wins 7 of 10 rounds in 17 % of them (the A/A spread of a median ratio on a shared
// 2-vCPU machine is about +-2 %, so gains below that are not told apart from noise). A tuned
// build whose outputs differ from the default build's, or that fails, is not applied. When the
// database also decides graph rewrites, a third build is timed in the same rounds: the tuned
// kernels with every rewrite at its fallback (BuildOptions::apply_rewrite_decisions off); the
// verdict is, of the timed tuned builds (these two, and those of the per-kernel check below) that
// pass both rules, the one with the lowest median ratio (rewrites = false: the tuned kernels without
// the rewrites); when none passes, the lowest ratio's, not applied.
//
// Per kernel (the finer check): the whole-build verdict is all or nothing, and one tuned kernel that
// runs slower in the model than on its own (its neighbours' data in the caches, its inputs coming
// cold) costs the model what the others gained. So before the timed rounds the check also profiles
// the default build and the tuned build of the same graph (every rewrite at its fallback) in the
// model in paired rounds (GraphExecutor::Profile), sums each workload's calls per round, and keeps at
// its default schedule every workload whose tuned kernel took longer there by the median paired
// ratio (KernelsSlowerInModel); a record that is the default schedule is not profiled; the tuned
// builds without those records are timed in the same rounds as the others and win when their median
// ratio is lower (ModelCheckVerdict::untuned_workloads).
//
// Second choice: a workload whose best record ran slower in the model may have a runner-up
// (Database::TopPrograms, the second best program, when it is not the default schedule) that
// does not: another tile or loop order, whose cost among the model's other kernels differs.
// So the check profiles a third build, the same graph with those workloads at their runners-up,
// against the default build in the same way, and keeps each runner-up whose kernel was not slower
// in the model by the same rule (at every thread count; none when that build fails or its outputs
// differ from the default build's); the tuned builds without the slower records are timed again
// with those runners-up, in the same rounds as the others (ModelCheckVerdict::workload_programs).
//
// Per thread count: a compiled model runs at whatever thread count its caller sets, and a kernel
// tuned at 2 threads can run slower at 1 (its tiles cut for two cores' share of the work). So the
// check times every build, and profiles every kernel, at each of a list of thread counts (by
// default the tuning's and 1): a workload whose tuned kernel ran slower at any of them keeps its
// default schedule, and a tuned build is applied only when it passes both rules at every one
// (CombineThreadVerdicts); the verdict's numbers are those of its worst thread count.
//
// Record: workload ModelCheckHash(fingerprint) (its text "model-check <fingerprint>"), the target,
// this version (database.h's keys); config {"apply": 0 or 1, "rewrites": 0 or 1, "default_ns", "tuned_ns": the median
// per-run times in nanoseconds, "ratio_ppm": the median ratio in millionths, "rounds", "wins", and
// "untuned <workload hash>": 1 for each of untuned_workloads, "program <workload hash>
// <program id>": 1 for each of workload_programs, "threads": the thread count of the
// times, "checked <n>": 1 for each thread count checked}; run_secs {the tuned median}; error: why
// the tuned build was not applied when it failed or differed ("" otherwise); no trace. The latest
// record wins (LookupModelCheck).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/tune/database.h"

namespace tessera::tune {

/// What the end-to-end check found.
struct ModelCheckVerdict {
  bool apply = true;        ///< build the tuned model (else the default one)
  bool rewrites = true;     ///< with apply: the graph rewrite decisions too (else their fallbacks)
  double default_secs = 0;  ///< the default build's median seconds per run (0: not timed)
  double tuned_secs = 0;    ///< the tuned build's
  double ratio = 0;         ///< the median over rounds of tuned / default (0: not timed)
  int rounds = 0;           ///< timed rounds
  int wins = 0;             ///< of which the tuned build was faster (tuned_i < default_i)
  std::string error;        ///< why the tuned build is not applied when it failed or its outputs differ
  /// With apply: the workloads (hashes, sorted) built with their default schedule although the
  /// database has a record, the record's kernel having run slower in the model (KernelsSlowerInModel).
  std::vector<std::string> untuned_workloads;
  /// With apply: workload hash -> ProgramId of the record its kernels are built with instead of
  /// their best one, whose kernel ran slower in the model while this runner-up's did not ("Second
  /// choice" above; driver::BuildOptions::workload_programs).
  std::map<std::string, std::string> workload_programs;
  int threads = 0;                   ///< the runtime thread count of the times above (0: not recorded)
  std::vector<int> checked_threads;  ///< every thread count the check timed, ascending (empty: not recorded)
};

/// One workload of a model as the check profiled it, over paired rounds (each round profiles both
/// builds): per round, the summed seconds per run of the kernel calls of that workload in the
/// default build and in the tuned build of the same graph; here the medians over rounds.
struct InModelKernelTime {
  std::string workload;
  double default_secs = 0;  ///< median per-round seconds per run, default build
  double tuned_secs = 0;    ///< the same, tuned build
  double ratio = 0;         ///< median over rounds of tuned / default (0: a round without default time)
  int threads = 0;          ///< the runtime thread count profiled at (0: not recorded)
};

/// The medians of paired per-round times (InModelKernelTime): default_secs[i], tuned_secs[i] are round
/// i's. InternalError for empty or unequal lengths or a negative time.
InModelKernelTime SummarizeKernelRounds(const std::string& workload, const std::vector<double>& default_secs,
                                        const std::vector<double>& tuned_secs);

/// The workloads (sorted) whose tuned kernel ran slower in the model than the default one: ratio >
/// 1 + margin and tuned_secs - default_secs > min_secs (both >= 0; a gap under either is the
/// profile's noise). InternalError for a negative time, ratio, margin or min_secs.
std::vector<std::string> KernelsSlowerInModel(const std::vector<InModelKernelTime>& kernels, double margin,
                                              double min_secs);

/// 16 hex digits naming a program: FNV-1a 64 of its trace (tir::Trace::ToJSON text).
std::string TraceId(const std::string& trace_json);

/// 16 hex digits naming the program a record schedules: TraceId(record.trace_json).
std::string ProgramId(const TuningRecord& record);

/// One kernel of a build, as its fingerprint names it.
struct KernelPrograms {
  std::string workload;         ///< WorkloadHash of its unscheduled PrimFunc
  std::string program;          ///< ProgramId of the record that schedules it, "-" for the default schedule
  std::string default_id;       ///< TraceId of its default schedule's trace
};

/// The fingerprint of a pair of builds, with and without the database: `kernels` holds every kernel
/// of the one with the database, in any order. 16 hex digits.
std::string TuningFingerprint(std::vector<KernelPrograms> kernels);

/// 16 hex digits: FNV-1a 64 of "model-check " + fingerprint (the verdict records' workload).
std::string ModelCheckHash(const std::string& fingerprint);

/// The fewest of `rounds` (>= 1: InternalError otherwise) paired rounds a tuned build must win to
/// be applied: the smallest k with P(X >= k) <= 0.2 for X ~ Binomial(rounds, 1/2), the chance that
/// a build no faster than the default wins k rounds by noise alone; `rounds` itself when no k <=
/// rounds is that unlikely (rounds 1 and 2: every round). 10 rounds: 7; 5: 4; 20: 13.
int MinWinningRounds(int rounds);

/// The verdict from paired timings: `default_secs[i]` and `tuned_secs[i]` are round i's seconds per
/// run of each build (both non-empty, the same length: InternalError otherwise). apply iff the
/// median of tuned_i / default_i is below 1 and wins >= MinWinningRounds(rounds); default_secs /
/// tuned_secs are the medians of each side.
ModelCheckVerdict DecideModelCheck(const std::vector<double>& default_secs, const std::vector<double>& tuned_secs);

/// One build's verdict over thread counts: `per_threads` holds its DecideModelCheck verdict at each
/// (non-empty, each with its `threads` set, no count twice: InternalError otherwise). apply iff every
/// one applies; the numbers (times, ratio, rounds, wins, threads) are the highest ratio's (the first
/// among equals); checked_threads the counts, ascending; rewrites, untuned_workloads,
/// workload_programs and error the first's.
ModelCheckVerdict CombineThreadVerdicts(const std::vector<ModelCheckVerdict>& per_threads);

/// Commits `verdict` for the build `fingerprint` on `target` (one record and its workload).
/// UserError when the database cannot be written.
void CommitModelCheck(Database& db, const std::string& fingerprint, const std::string& target,
                      const ModelCheckVerdict& verdict);

/// Whether `db` holds a verdict of any build on `target` (this version).
bool HasModelChecks(const Database& db, const std::string& target);

/// The latest verdict for the build `fingerprint` on `target` (this version), or nullopt.
std::optional<ModelCheckVerdict> LookupModelCheck(const Database& db, const std::string& fingerprint,
                                                  const std::string& target);

}  // namespace tessera::tune
