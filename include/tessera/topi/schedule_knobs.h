// Knobs of the template schedules: AutoTVM's configuration space (arXiv 1805.08166 §3, "schedule
// templates with knobs"), defined by a template as it runs, as `cfg.define_knob` does in TVM.
//
// A template asks for each decision it could make differently through Knob(): the knob's name
// (unique within one kernel, prefixed by the block it concerns: "conv2d_NCHWc.ow_tile"), the
// values a search may choose, and the value the hand-written heuristic chose (the fallback).
// Without a KnobContext (a normal build) Knob() returns the fallback, so the hand schedule is the
// configuration where every knob takes its fallback, and it is always in the space. With a
// context, Knob() returns the context's configured value when it is one of the candidates (else the
// fallback) and records the knob, so one run of the schedule discovers the space (space()) and the
// configuration it really used (used()).
//
// The space is discovered, not declared up front: a knob that a template defines only in some
// configurations (a reduction chunk only when blocking) appears when it is defined. A search
// samples values for the knobs it knows, runs the schedule, and reads used() and space() back.
//
// The graph rewrites' decisions are knobs too (WinogradConv2d's tile per convolution workload,
// graph_lower/winograd_conv2d.h): the tuner builds the model under each value and measures the
// kernels it brings (tune/rewrite_choice.h). A build with a tuning database resolves them through
// the context's lookup, which answers a knob the configuration does not set (the database's
// decision for it), so the decisions need not be known before the pipeline runs.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tessera::topi {

/// A configuration: knob name -> value (AutoTVM's ConfigEntity).
using KnobConfig = std::map<std::string, int64_t>;

/// One knob: its name, the values a search may choose (sorted, unique, the fallback among them)
/// and the hand-chosen value.
struct KnobSpec {
  std::string name;
  std::vector<int64_t> candidates;
  int64_t fallback = 0;
};

/// The configuration a schedule runs under, and the record of the knobs it defined.
class KnobContext {
 public:
  /// Answers a knob the configuration does not set (nullopt: no answer, the fallback).
  using Lookup = std::function<std::optional<int64_t>(const std::string& name)>;

  explicit KnobContext(KnobConfig config = {}, Lookup lookup = {})
      : config_(std::move(config)), lookup_(std::move(lookup)) {}

  /// The value of knob `name`: config()[name] when set, else lookup(name) when it answers; that
  /// value when it is among `candidates`, else `fallback`.
  /// Records the knob (candidates sorted, deduplicated, fallback added) and the value used. A knob
  /// defined twice keeps its first record and value (the same decision asked again).
  int64_t Define(const std::string& name, std::vector<int64_t> candidates, int64_t fallback);

  const KnobConfig& config() const { return config_; }
  /// The knobs defined so far, in definition order.
  const std::vector<KnobSpec>& space() const { return space_; }
  /// Knob name -> the value Define returned.
  const KnobConfig& used() const { return used_; }

 private:
  KnobConfig config_;
  Lookup lookup_;
  std::vector<KnobSpec> space_;
  KnobConfig used_;
};

/// ctx->Define(name, candidates, fallback), or `fallback` when ctx is null (a normal build).
int64_t Knob(KnobContext* ctx, const std::string& name, std::vector<int64_t> candidates, int64_t fallback);

/// The divisors d of n with lo <= d <= hi, ascending (empty when n < 1).
std::vector<int64_t> DivisorsInRange(int64_t n, int64_t lo, int64_t hi);

}  // namespace tessera::topi
