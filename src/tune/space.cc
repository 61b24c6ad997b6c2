#include "tessera/tune/space.h"

#include <algorithm>

#include "tessera/tir/schedule/schedule.h"

namespace tessera::tune {

Candidate ApplyConfig(const TuneTask& task, const topi::KnobConfig& config, std::vector<topi::KnobSpec>* space) {
  topi::KnobContext ctx(config);
  topi::x86::ScheduleOptions options = task.options;
  options.knobs = &ctx;
  tir::Schedule sch = topi::x86::ScheduleDefault(task.func, options, task.anchors);
  if (space) {
    for (const topi::KnobSpec& k : ctx.space()) {
      auto same = [&](const topi::KnobSpec& s) { return s.name == k.name; };
      if (std::none_of(space->begin(), space->end(), same)) space->push_back(k);
    }
  }
  return {ctx.used(), sch.trace(), sch.func()};
}

std::vector<topi::KnobSpec> DiscoverSpace(const TuneTask& task, uint64_t seed, int probes) {
  std::vector<topi::KnobSpec> space;
  ApplyConfig(task, {}, &space);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < probes && !space.empty(); ++i) ApplyConfig(task, SampleConfig(space, rng), &space);
  return space;
}

double SpaceSize(const std::vector<topi::KnobSpec>& space) {
  double n = 1;
  for (const topi::KnobSpec& k : space) n *= static_cast<double>(k.candidates.size());
  return n;
}

topi::KnobConfig SampleConfig(const std::vector<topi::KnobSpec>& space, std::mt19937_64& rng) {
  topi::KnobConfig c;
  for (const topi::KnobSpec& k : space) {
    std::uniform_int_distribution<size_t> pick(0, k.candidates.size() - 1);
    c[k.name] = k.candidates[pick(rng)];
  }
  return c;
}

topi::KnobConfig MutateConfig(const topi::KnobConfig& config, const std::vector<topi::KnobSpec>& space,
                              std::mt19937_64& rng) {
  topi::KnobConfig c = config;
  std::vector<const topi::KnobSpec*> mutable_knobs;
  for (const topi::KnobSpec& k : space)
    if (k.candidates.size() > 1) mutable_knobs.push_back(&k);
  if (mutable_knobs.empty()) return c;
  const int changes = std::uniform_int_distribution<int>(0, 3)(rng) == 0 ? 2 : 1;
  for (int i = 0; i < changes; ++i) {
    const topi::KnobSpec& k = *mutable_knobs[std::uniform_int_distribution<size_t>(0, mutable_knobs.size() - 1)(rng)];
    auto it = c.find(k.name);
    const int64_t current = it != c.end() ? it->second : k.fallback;
    int64_t v = current;
    while (v == current) v = k.candidates[std::uniform_int_distribution<size_t>(0, k.candidates.size() - 1)(rng)];
    c[k.name] = v;
  }
  return c;
}

std::string ConfigKey(const topi::KnobConfig& config) {
  std::string key;
  for (const auto& [name, value] : config) key += (key.empty() ? "" : ",") + name + "=" + std::to_string(value);
  return key;
}

tir::PrimFunc ReplayTrace(const tir::PrimFunc& func, const tir::Trace& trace) {
  tir::Schedule sch(func);
  trace.ApplyToSchedule(sch);
  return sch.func();
}

}  // namespace tessera::tune
