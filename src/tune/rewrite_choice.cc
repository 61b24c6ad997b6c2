// Graph rewrite decisions from measured kernels (tune/rewrite_choice.h).
#include "tessera/tune/rewrite_choice.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>

#include "tessera/support/error.h"
#include "tessera/tune/task.h"

namespace tessera::tune {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr const char* kValueKey = "value";

double Cost(const std::map<std::string, int64_t>& kernels, const std::string& target, const Database& db) {
  double secs = 0;
  for (const auto& [hash, calls] : kernels) {
    const std::optional<TuningRecord> best = db.Best(hash, target);
    if (!best) return kInf;
    secs += static_cast<double>(calls) * best->MeanSecs();
  }
  return secs;
}

}  // namespace

RewriteChoice MakeRewriteChoice(const std::string& knob, int64_t fallback,
                                const std::map<int64_t, std::map<std::string, int64_t>>& builds) {
  TESSERA_ICHECK(builds.count(fallback), "rewrite knob '", knob, "': no build of its fallback ", fallback);
  RewriteChoice c{knob, {}, fallback, {}};
  std::map<std::string, int64_t> common = builds.at(fallback);
  for (const auto& [value, calls] : builds) {
    c.candidates.push_back(value);
    for (auto it = common.begin(); it != common.end();) {
      auto found = calls.find(it->first);
      if (found == calls.end()) {
        it = common.erase(it);
      } else {
        it->second = std::min(it->second, found->second);
        ++it;
      }
    }
  }
  for (const auto& [value, calls] : builds) {
    std::map<std::string, int64_t>& own = c.kernels[value];
    for (const auto& [hash, n] : calls) {
      auto shared = common.find(hash);
      const int64_t extra = n - (shared == common.end() ? 0 : shared->second);
      if (extra > 0) own[hash] = extra;
    }
  }
  return c;
}

std::string RewriteHash(const std::string& knob) { return Fnv1a64Hex("rewrite " + knob); }

std::vector<RewriteDecision> DecideRewrites(const std::vector<RewriteChoice>& choices, const std::string& target,
                                            Database& db) {
  std::vector<RewriteDecision> decisions;
  std::vector<TuningRecord> batch;
  for (const RewriteChoice& c : choices) {
    RewriteDecision d{c.knob, c.fallback, c.fallback, {}};
    for (int64_t v : c.candidates) {
      auto it = c.kernels.find(v);
      d.cost_secs[v] = it == c.kernels.end() ? kInf : Cost(it->second, target, db);
    }
    for (const auto& [v, secs] : d.cost_secs)
      if (secs < d.cost_secs[d.value]) d.value = v;
    TuningRecord r;
    r.workload_hash = RewriteHash(c.knob);
    r.target = target;
    r.timestamp_s = static_cast<int64_t>(std::time(nullptr));
    r.config[kValueKey] = d.value;
    for (const auto& [v, secs] : d.cost_secs)
      r.config["cost_ns." + std::to_string(v)] = std::isfinite(secs) ? static_cast<int64_t>(std::llround(secs * 1e9)) : -1;
    const double chosen = d.cost_secs[d.value];
    if (std::isfinite(chosen))
      r.run_secs = {chosen};
    else
      r.error = "no value of the knob has all its kernels measured";
    db.CommitWorkload({r.workload_hash, c.knob, "rewrite " + c.knob});
    batch.push_back(std::move(r));
    decisions.push_back(std::move(d));
  }
  db.CommitBatch(batch);
  return decisions;
}

double SavedSecs(const std::vector<RewriteDecision>& decisions) {
  double s = 0;
  for (const RewriteDecision& d : decisions) {
    const double saved = d.cost_secs.at(d.fallback) - d.cost_secs.at(d.value);
    if (std::isfinite(saved)) s += saved;
  }
  return s;
}

std::optional<int64_t> LookupRewrite(const Database& db, const std::string& knob, const std::string& target) {
  const std::vector<TuningRecord> records = db.Records(RewriteHash(knob), target);
  for (auto it = records.rbegin(); it != records.rend(); ++it)
    if (auto v = it->config.find(kValueKey); v != it->config.end()) return v->second;
  return std::nullopt;
}

}  // namespace tessera::tune
