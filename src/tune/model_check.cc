// The end-to-end check's verdicts (tune/model_check.h).
#include "tessera/tune/model_check.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>
#include <string_view>

#include "tessera/support/error.h"
#include "tessera/support/version.h"
#include "tessera/tune/task.h"

namespace tessera::tune {

namespace {

constexpr const char* kApplyKey = "apply";
constexpr const char* kRewritesKey = "rewrites";
constexpr std::string_view kUntunedPrefix = "untuned ";
constexpr std::string_view kProgramPrefix = "program ";
constexpr const char* kThreadsKey = "threads";
constexpr std::string_view kCheckedPrefix = "checked ";
constexpr const char* kModelCheckName = "model-check";  // the verdicts' workload name

// The median of `v` (the mean of the middle two for an even count).
double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int64_t Nanoseconds(double secs) { return static_cast<int64_t>(std::llround(secs * 1e9)); }

}  // namespace

std::string TraceId(const std::string& trace_json) { return Fnv1a64Hex(trace_json); }

std::string ProgramId(const TuningRecord& record) { return TraceId(record.trace_json); }

std::string TuningFingerprint(std::vector<KernelPrograms> kernels) {
  std::vector<std::string> lines;
  for (const KernelPrograms& k : kernels) lines.push_back(k.workload + " " + k.program + " " + k.default_id + "\n");
  std::sort(lines.begin(), lines.end());
  std::string text;
  for (const std::string& line : lines) text += line;
  return Fnv1a64Hex(text);
}

std::string ModelCheckHash(const std::string& fingerprint) {
  return Fnv1a64Hex(std::string(kModelCheckName) + " " + fingerprint);
}

int MinWinningRounds(int rounds) {
  TESSERA_ICHECK(rounds >= 1, "MinWinningRounds: ", rounds, " rounds");
  constexpr double kFalseApply = 0.2;  // the chance a build no faster than the default is applied
  // tail = P(X >= k), X ~ Binomial(rounds, 1/2), from k = rounds down: P(X = k) = C(rounds, k) / 2^rounds.
  double term = std::pow(0.5, rounds);  // P(X = rounds)
  double tail = term;
  int k = rounds;
  while (k > 0 && tail <= kFalseApply) {
    term *= static_cast<double>(k) / (rounds - k + 1);  // P(X = k - 1)
    if (tail + term > kFalseApply) break;
    tail += term;
    --k;
  }
  return k;
}

ModelCheckVerdict DecideModelCheck(const std::vector<double>& default_secs, const std::vector<double>& tuned_secs) {
  TESSERA_ICHECK(!default_secs.empty() && default_secs.size() == tuned_secs.size(), "DecideModelCheck: ",
                 default_secs.size(), " default and ", tuned_secs.size(), " tuned timings");
  std::vector<double> ratios;
  for (size_t i = 0; i < default_secs.size(); ++i) {
    TESSERA_ICHECK(default_secs[i] > 0 && tuned_secs[i] > 0, "DecideModelCheck: round ", i, " has a time <= 0");
    ratios.push_back(tuned_secs[i] / default_secs[i]);
  }
  ModelCheckVerdict v;
  v.default_secs = Median(default_secs);
  v.tuned_secs = Median(tuned_secs);
  v.ratio = Median(ratios);
  v.rounds = static_cast<int>(ratios.size());
  v.wins = static_cast<int>(std::count_if(ratios.begin(), ratios.end(), [](double r) { return r < 1; }));
  v.apply = v.ratio < 1 && v.wins >= MinWinningRounds(v.rounds);
  return v;
}

InModelKernelTime SummarizeKernelRounds(const std::string& workload, const std::vector<double>& default_secs,
                                        const std::vector<double>& tuned_secs) {
  TESSERA_ICHECK(!default_secs.empty() && default_secs.size() == tuned_secs.size(), "SummarizeKernelRounds: ",
                 default_secs.size(), " default and ", tuned_secs.size(), " tuned rounds");
  std::vector<double> ratios;
  for (size_t i = 0; i < default_secs.size(); ++i) {
    TESSERA_ICHECK(default_secs[i] >= 0 && tuned_secs[i] >= 0, "SummarizeKernelRounds: round ", i,
                   " has a negative time");
    ratios.push_back(default_secs[i] > 0 ? tuned_secs[i] / default_secs[i] : 0);
  }
  const bool all_timed = std::all_of(default_secs.begin(), default_secs.end(), [](double t) { return t > 0; });
  return {workload, Median(default_secs), Median(tuned_secs), all_timed ? Median(ratios) : 0};
}

std::vector<std::string> KernelsSlowerInModel(const std::vector<InModelKernelTime>& kernels, double margin,
                                              double min_secs) {
  TESSERA_ICHECK(margin >= 0 && min_secs >= 0, "KernelsSlowerInModel: margin ", margin, ", min_secs ", min_secs);
  std::vector<std::string> slower;
  for (const InModelKernelTime& k : kernels) {
    TESSERA_ICHECK(k.default_secs >= 0 && k.tuned_secs >= 0 && k.ratio >= 0, "KernelsSlowerInModel: workload ",
                   k.workload, " has a negative time or ratio");
    if (k.ratio > 1 + margin && k.tuned_secs - k.default_secs > min_secs)
      slower.push_back(k.workload);
  }
  std::sort(slower.begin(), slower.end());
  slower.erase(std::unique(slower.begin(), slower.end()), slower.end());
  return slower;
}

ModelCheckVerdict CombineThreadVerdicts(const std::vector<ModelCheckVerdict>& per_threads) {
  TESSERA_ICHECK(!per_threads.empty(), "CombineThreadVerdicts: no verdict");
  ModelCheckVerdict out = per_threads[0];
  std::vector<int> counts;
  for (const ModelCheckVerdict& v : per_threads) {
    TESSERA_ICHECK(v.threads > 0, "CombineThreadVerdicts: a verdict without its thread count");
    counts.push_back(v.threads);
    if (v.ratio > out.ratio) {
      out.default_secs = v.default_secs;
      out.tuned_secs = v.tuned_secs;
      out.ratio = v.ratio;
      out.rounds = v.rounds;
      out.wins = v.wins;
      out.threads = v.threads;
    }
  }
  std::sort(counts.begin(), counts.end());
  TESSERA_ICHECK(std::adjacent_find(counts.begin(), counts.end()) == counts.end(),
                 "CombineThreadVerdicts: a thread count twice");
  out.apply = std::all_of(per_threads.begin(), per_threads.end(), [](const ModelCheckVerdict& v) { return v.apply; });
  out.checked_threads = counts;
  return out;
}

void CommitModelCheck(Database& db, const std::string& fingerprint, const std::string& target,
                      const ModelCheckVerdict& verdict) {
  TuningRecord r;
  r.workload_hash = ModelCheckHash(fingerprint);
  r.target = target;
  r.timestamp_s = static_cast<int64_t>(std::time(nullptr));
  r.config[kApplyKey] = verdict.apply ? 1 : 0;
  r.config[kRewritesKey] = verdict.rewrites ? 1 : 0;
  r.config["default_ns"] = Nanoseconds(verdict.default_secs);
  r.config["tuned_ns"] = Nanoseconds(verdict.tuned_secs);
  r.config["ratio_ppm"] = static_cast<int64_t>(std::llround(verdict.ratio * 1e6));
  r.config["rounds"] = verdict.rounds;
  r.config["wins"] = verdict.wins;
  for (const std::string& w : verdict.untuned_workloads) r.config[std::string(kUntunedPrefix) + w] = 1;
  for (const auto& [w, program] : verdict.workload_programs)
    r.config[std::string(kProgramPrefix) + w + " " + program] = 1;
  if (verdict.threads > 0) r.config[kThreadsKey] = verdict.threads;
  for (int t : verdict.checked_threads) r.config[std::string(kCheckedPrefix) + std::to_string(t)] = 1;
  if (verdict.tuned_secs > 0) r.run_secs = {verdict.tuned_secs};
  r.error = verdict.error;
  db.CommitWorkload({r.workload_hash, kModelCheckName, std::string(kModelCheckName) + " " + fingerprint});
  db.CommitBatch({r});
}

bool HasModelChecks(const Database& db, const std::string& target) {
  for (const TuningRecord& r : db.AllRecords()) {
    if (r.target != target || r.version != TESSERA_VERSION) continue;
    const Workload* w = db.FindWorkload(r.workload_hash);
    if (w && w->name == kModelCheckName) return true;
  }
  return false;
}

std::optional<ModelCheckVerdict> LookupModelCheck(const Database& db, const std::string& fingerprint,
                                                  const std::string& target) {
  const std::vector<TuningRecord> records = db.Records(ModelCheckHash(fingerprint), target);
  for (auto it = records.rbegin(); it != records.rend(); ++it) {
    auto apply = it->config.find(kApplyKey);
    if (apply == it->config.end()) continue;
    auto get = [&](const char* key) {
      auto v = it->config.find(key);
      return v == it->config.end() ? int64_t{0} : v->second;
    };
    ModelCheckVerdict v;
    v.apply = apply->second != 0;
    v.rewrites = it->config.count(kRewritesKey) == 0 || it->config.at(kRewritesKey) != 0;
    v.default_secs = static_cast<double>(get("default_ns")) * 1e-9;
    v.tuned_secs = static_cast<double>(get("tuned_ns")) * 1e-9;
    v.ratio = static_cast<double>(get("ratio_ppm")) * 1e-6;
    v.rounds = static_cast<int>(get("rounds"));
    v.wins = static_cast<int>(get("wins"));
    v.error = it->error;
    v.threads = static_cast<int>(get(kThreadsKey));
    for (const auto& [key, value] : it->config) {  // std::map: the hashes come sorted
      if (key.starts_with(kUntunedPrefix) && value != 0) v.untuned_workloads.push_back(key.substr(kUntunedPrefix.size()));
      if (const size_t space = key.find(' ', kProgramPrefix.size());
          key.starts_with(kProgramPrefix) && value != 0 && space != std::string::npos)
        v.workload_programs[key.substr(kProgramPrefix.size(), space - kProgramPrefix.size())] = key.substr(space + 1);
      int t = 0;
      const std::string_view count = std::string_view(key).substr(std::min(key.size(), kCheckedPrefix.size()));
      if (key.starts_with(kCheckedPrefix) && value != 0 &&
          std::from_chars(count.data(), count.data() + count.size(), t).ec == std::errc() && t > 0)
        v.checked_threads.push_back(t);  // a key that does not parse is some other version's: skipped
    }
    std::sort(v.checked_threads.begin(), v.checked_threads.end());  // "checked 12" sorts before "checked 2"
    return v;
  }
  return std::nullopt;
}

}  // namespace tessera::tune
