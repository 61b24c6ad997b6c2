// The search space of a task: the knobs of its template schedules (topi/schedule_knobs.h),
// AutoTVM's configuration space, and the candidates they give.
//
// A candidate is a configuration (knob name -> value), the TensorIR trace ScheduleDefault recorded
// under it, and the scheduled PrimFunc. The empty configuration is the hand-written schedule, so
// the default is always in the space. Records store the trace; ReplayTrace rebuilds a schedule
// from it without the templates (tir/schedule/trace.h).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tessera/tir/schedule/trace.h"
#include "tessera/topi/schedule_knobs.h"
#include "tessera/tune/task.h"

namespace tessera::tune {

struct Candidate {
  topi::KnobConfig config;  ///< the values the schedule used (KnobContext::used): canonical
  tir::Trace trace;         ///< the primitives applied to task.func
  tir::PrimFunc scheduled;  ///< task.func after the trace (blocks; LowerToFlat comes later)
};

/// Schedules task.func under `config` (unknown knobs and values off the candidates fall back to
/// the hand-chosen values). When `space` is given, the knobs the schedule defined are added to it
/// (a knob already there is kept). Never throws for a legal task: a template step the schedule
/// library refuses is skipped (topi/x86/schedule.h).
Candidate ApplyConfig(const TuneTask& task, const topi::KnobConfig& config, std::vector<topi::KnobSpec>* space = nullptr);

/// The task's knobs: those the hand schedule defines, plus those that appear under `probes`
/// random configurations (a knob defined only in some configurations, e.g. a reduction chunk).
/// Deterministic for a seed.
std::vector<topi::KnobSpec> DiscoverSpace(const TuneTask& task, uint64_t seed = 0, int probes = 8);

/// The number of configurations of `space` (product of the candidate counts; 1 when empty).
double SpaceSize(const std::vector<topi::KnobSpec>& space);

/// A configuration with every knob drawn uniformly from its candidates.
topi::KnobConfig SampleConfig(const std::vector<topi::KnobSpec>& space, std::mt19937_64& rng);

/// `config` with one knob (or, with probability 1/4, two) changed to another of its candidates.
topi::KnobConfig MutateConfig(const topi::KnobConfig& config, const std::vector<topi::KnobSpec>& space,
                              std::mt19937_64& rng);

/// "name=value,..." in name order: the identity of a configuration.
std::string ConfigKey(const topi::KnobConfig& config);

/// A fresh schedule of `func` (a task's unscheduled function) with `trace` replayed onto it: the
/// scheduled PrimFunc. Throws ScheduleError when an instruction is illegal on it (a trace recorded
/// on another function), UserError for an unknown instruction.
tir::PrimFunc ReplayTrace(const tir::PrimFunc& func, const tir::Trace& trace);

}  // namespace tessera::tune
