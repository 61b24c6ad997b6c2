// The search of one task's space (AutoTVM §4-5, MetaSchedule's EvolutionarySearch): proposes
// the next batch of candidates to measure from the cost model's predictions.
//
// Each Propose:
//   1. the population: the best measured configurations so far (up to population / 2) and fresh
//      random samples of the space;
//   2. `generations` rounds of evolution: every member's mutations (MutateConfig) are scored by
//      the cost model (features of the lowered candidate, feature_extractor.h) and the best
//      `population` of members and children survive;
//   3. the batch: (1 - epsilon) of it the best-predicted candidates not measured yet, epsilon of
//      it random unmeasured ones (ε-greedy: exploration keeps the model honest).
// Candidates are identified by their scheduled program (WorkloadHash of the scheduled PrimFunc),
// so two configurations that give the same program are measured once. Deterministic for a seed
// (and a deterministic cost model).
#pragma once

#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tessera/tune/cost_model.h"
#include "tessera/tune/space.h"

namespace tessera::tune {

struct SearchOptions {
  int population = 48;     ///< members kept per generation
  int generations = 3;     ///< rounds of mutation + selection per Propose
  double epsilon = 0.25;   ///< share of each batch drawn at random
};

/// A candidate ready to measure: its schedule and its cost-model features.
struct ProposedCandidate {
  Candidate candidate;
  std::vector<float> features;  ///< ExtractFeatures of the lowered candidate
  std::string program_hash;     ///< WorkloadHash(candidate.scheduled)
};

/// The features of a scheduled candidate: ExtractFeatures(LowerToFlat(scheduled)).
std::vector<float> CandidateFeatures(const tir::PrimFunc& scheduled);

class TaskSearch {
 public:
  TaskSearch(const TuneTask& task, uint64_t seed);

  const std::vector<topi::KnobSpec>& space() const { return space_; }

  /// The hand-written schedule as a candidate (the first one every task measures).
  ProposedCandidate Default();

  /// Records a measurement: `secs` the candidate's time, +infinity for a failed one.
  void Observe(const ProposedCandidate& c, double secs);
  /// Records a program measured before (a database record): its config and time.
  void ObserveRecord(const topi::KnobConfig& config, double secs);

  /// Up to `batch` unmeasured candidates (fewer when the space has no more).
  std::vector<ProposedCandidate> Propose(int batch, const XGBCostModel& model, const SearchOptions& options);

  /// Whether the last Propose found nothing new.
  bool exhausted() const { return exhausted_; }
  /// Whether the program with this hash (ProposedCandidate::program_hash) was measured.
  bool IsMeasured(const std::string& program_hash) const { return measured_.count(program_hash) != 0; }
  /// The number of distinct programs measured.
  size_t num_measured() const { return measured_.size(); }

 private:
  ProposedCandidate Make(const topi::KnobConfig& config);

  const TuneTask& task_;
  std::mt19937_64 rng_;
  std::vector<topi::KnobSpec> space_;
  std::set<std::string> measured_;                          // program hashes
  std::vector<std::pair<double, topi::KnobConfig>> best_;   // measured (secs, config), ok ones
  bool exhausted_ = false;
};

}  // namespace tessera::tune
