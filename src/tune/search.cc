#include "tessera/tune/search.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "tessera/tir/transform/lower.h"
#include "tessera/tune/feature_extractor.h"

namespace tessera::tune {

std::vector<float> CandidateFeatures(const tir::PrimFunc& scheduled) {
  return ExtractFeatures(tir::transform::LowerToFlat(scheduled));
}

TaskSearch::TaskSearch(const TuneTask& task, uint64_t seed) : task_(task), rng_(seed) {
  space_ = DiscoverSpace(task, seed);
}

ProposedCandidate TaskSearch::Make(const topi::KnobConfig& config) {
  ProposedCandidate p;
  p.candidate = ApplyConfig(task_, config, &space_);
  p.program_hash = WorkloadHash(p.candidate.scheduled);
  return p;
}

ProposedCandidate TaskSearch::Default() {
  ProposedCandidate p = Make({});
  p.features = CandidateFeatures(p.candidate.scheduled);
  return p;
}

void TaskSearch::Observe(const ProposedCandidate& c, double secs) {
  measured_.insert(c.program_hash);
  if (std::isfinite(secs)) best_.emplace_back(secs, c.candidate.config);
  std::sort(best_.begin(), best_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
}

void TaskSearch::ObserveRecord(const topi::KnobConfig& config, double secs) {
  Observe(Make(config), secs);
}

std::vector<ProposedCandidate> TaskSearch::Propose(int batch, const XGBCostModel& model, const SearchOptions& opt) {
  // Unmeasured programs seen in this call, by hash, with their predicted score.
  std::map<std::string, ProposedCandidate> pool;
  std::map<std::string, double> score;
  auto consider = [&](const topi::KnobConfig& config) -> const std::string* {
    ProposedCandidate p = Make(config);
    if (measured_.count(p.program_hash)) return nullptr;
    auto [it, fresh] = pool.emplace(p.program_hash, std::move(p));
    if (fresh) it->second.features = CandidateFeatures(it->second.candidate.scheduled);
    return &it->first;
  };
  auto predict = [&](const std::vector<std::string>& hashes) {
    std::vector<std::vector<float>> rows;
    std::vector<std::string> unscored;
    for (const std::string& h : hashes) {
      if (score.count(h)) continue;
      rows.push_back(pool.at(h).features);
      unscored.push_back(h);
    }
    if (rows.empty()) return;
    std::vector<double> s = model.Predict(rows);
    for (size_t i = 0; i < unscored.size(); ++i) score[unscored[i]] = s[i];
  };

  // 1. The population: the best measured configurations and random samples.
  std::vector<topi::KnobConfig> members;
  for (size_t i = 0; i < best_.size() && members.size() < static_cast<size_t>(opt.population / 2); ++i)
    members.push_back(best_[i].second);
  while (members.size() < static_cast<size_t>(opt.population)) members.push_back(SampleConfig(space_, rng_));
  // 2. Evolution: mutate, score, keep the best (measured parents stay as seeds, never as output).
  for (int g = 0; g < opt.generations; ++g) {
    std::vector<std::pair<double, topi::KnobConfig>> next;
    std::vector<std::string> hashes;
    std::vector<topi::KnobConfig> configs;
    for (const topi::KnobConfig& m : members) {
      for (const topi::KnobConfig& c : {m, MutateConfig(m, space_, rng_)}) {
        if (const std::string* h = consider(c)) hashes.push_back(*h), configs.push_back(c);
      }
    }
    predict(hashes);
    for (size_t i = 0; i < hashes.size(); ++i) next.emplace_back(score.at(hashes[i]), configs[i]);
    std::stable_sort(next.begin(), next.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    if (next.size() > static_cast<size_t>(opt.population)) next.resize(opt.population);
    members.clear();
    for (auto& [s, c] : next) members.push_back(c);
    // Measured parents keep seeding the next generation.
    for (size_t i = 0; i < best_.size() && i < 4; ++i) members.push_back(best_[i].second);
    if (members.empty()) break;
  }

  // 3. The batch: ε-greedy over the pool.
  std::vector<std::string> ranked;
  for (const auto& [h, p] : pool) ranked.push_back(h);
  predict(ranked);
  std::stable_sort(ranked.begin(), ranked.end(), [&](const std::string& a, const std::string& b) { return score.at(a) > score.at(b); });
  const int explore = static_cast<int>(std::round(batch * opt.epsilon));
  std::vector<std::string> chosen(ranked.begin(), ranked.begin() + std::min<size_t>(ranked.size(), batch - explore));
  std::vector<std::string> rest(ranked.begin() + chosen.size(), ranked.end());
  std::shuffle(rest.begin(), rest.end(), rng_);
  for (size_t i = 0; i < rest.size() && chosen.size() < static_cast<size_t>(batch); ++i) chosen.push_back(rest[i]);
  std::vector<ProposedCandidate> out;
  for (const std::string& h : chosen) out.push_back(std::move(pool.at(h)));
  exhausted_ = out.empty();
  return out;
}

}  // namespace tessera::tune
