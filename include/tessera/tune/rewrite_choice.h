// Graph-level decisions the tuner owns: the knobs of the graph rewrites (topi/schedule_knobs.h):
// WinogradConv2d's tile per convolution workload (direct, F(2x2, 3x3) or F(4x4, 3x3);
// graph_lower/winograd_conv2d.h) and AlterOpLayout's NCHWc block for the whole model where the
// target lists blocks (graph_lower::kLayoutBlockKnob; AVX-512: 16 or 32 channels). Issue 19 asks
// for the Winograd tile and the NCHWc block sizes among the knobs; a rewrite's
// value changes which kernels a model runs, not how one kernel is scheduled, so it is decided from
// the measured kernels of each value, as TVM's op strategy picks among implementations by their
// tuning records (relay.backend.te_compiler.select_implementation, TVM paper §5).
//
// Extraction (driver::ExtractTasks with choices): the model is built once under every knob at its
// fallback and once per other value of each knob (the others at their fallbacks). A value's kernels
// (RewriteChoice::kernels) are those its build runs beyond what every value's build shares: for a
// Winograd knob, the direct conv with its fused epilogue, or the input transform, the batch GEMM and
// the output transform with the epilogue (and the layout transforms that fuse differently); for the
// block knob, nearly every kernel. The kernels only another value brings are tuning tasks too
// (TuneTask::rewrite). Knobs are decided one at a time, each against the others' fallbacks: a
// knob that exists only under another value of a knob (a Winograd tile under another block: its
// name holds the blocked shapes) keeps its fallback.
//
// Decision (DecideRewrites, after Tune): the cost of a value is the sum over its kernels of calls
// per run x the kernel's best time in the database (Database::Best: the median of the best program's
// measurements); a value with a kernel that has no good record costs +infinity. The least cost wins,
// the fallback on a tie. Each decision is a record of its own workload RewriteHash(knob) (its text:
// "rewrite <knob>"), target and version: config {"value": v, "cost_ns.<w>": each value's cost in
// nanoseconds, -1 for +infinity}, run_secs {the chosen value's cost}, no trace. The latest such
// record wins (LookupRewrite), so a resumed or repeated tuning replaces the decision; a record of
// another target or version is never read (database.h's keys).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tessera/tune/database.h"

namespace tessera::tune {

/// One graph rewrite knob of a model and what each of its values builds.
struct RewriteChoice {
  std::string knob;                 ///< the knob's name, e.g. graph_lower::WinogradTileKnob(...)
  std::vector<int64_t> candidates;  ///< sorted, unique, the fallback among them
  int64_t fallback = 0;             ///< the hand-chosen value (an untuned build's)
  /// value -> the kernels its build runs that not every value's build runs: workload hash
  /// (WorkloadHash) -> calls per model run. Every candidate has an entry (possibly empty).
  std::map<int64_t, std::map<std::string, int64_t>> kernels;
};

/// The choice of `knob` from the kernels of each value's build (`builds`: value -> workload hash ->
/// calls per run; the fallback's build among them): candidates = the values of `builds`, and each
/// value's kernels = its build less what every build shares (per hash, the least calls of all
/// builds). InternalError when `builds` has no entry for `fallback`.
RewriteChoice MakeRewriteChoice(const std::string& knob, int64_t fallback,
                                const std::map<int64_t, std::map<std::string, int64_t>>& builds);

/// What DecideRewrites chose for one knob.
struct RewriteDecision {
  std::string knob;
  int64_t value = 0;     ///< the chosen value
  int64_t fallback = 0;
  /// value -> its kernels' estimated seconds per model run (+infinity: a kernel without a good record).
  std::map<int64_t, double> cost_secs;
};

/// 16 lowercase hex digits: FNV-1a 64 of "rewrite " + knob (the decision records' workload).
std::string RewriteHash(const std::string& knob);

/// Decides every choice from `db`'s records for `target` (see the header comment) and commits the
/// decisions (one batch, and each knob's workload). Returns them in the order of `choices`.
/// Throws UserError when the database cannot be written.
std::vector<RewriteDecision> DecideRewrites(const std::vector<RewriteChoice>& choices, const std::string& target,
                                            Database& db);

/// Seconds per model run the decisions save against their fallbacks: sum of cost(fallback) -
/// cost(value) over the decisions where both are finite (costs from the best times, so this is what
/// the rewrites add to the tuned kernels' estimate).
double SavedSecs(const std::vector<RewriteDecision>& decisions);

/// The value of the latest decision record of `knob` for `target` in `db` (this Tessera version),
/// or nullopt when there is none.
std::optional<int64_t> LookupRewrite(const Database& db, const std::string& knob, const std::string& target);

}  // namespace tessera::tune
