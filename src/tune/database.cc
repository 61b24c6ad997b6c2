#include "tessera/tune/database.h"

#include <algorithm>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "jsonl_file.h"
#include "tessera/support/error.h"
#include "tessera/support/version.h"

namespace tessera::tune {
namespace {

using nlohmann::json;

constexpr const char* kRecordsKind = "tuning database";
constexpr const char* kWorkloadsKind = "tuning database workloads file";

bool IsWorkloadHash(const std::string& h) {
  if (h.size() != 16) return false;
  for (char c : h) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

void CheckHash(const std::string& hash, const char* what) {
  TESSERA_CHECK(IsWorkloadHash(hash), what, ": workload hash '", hash,
                "' is not 16 lowercase hex digits");
}

// ---- serialization -------------------------------------------------------------------------

std::string RecordLine(const TuningRecord& r) {
  CheckHash(r.workload_hash, "tuning record");
  TESSERA_CHECK(!r.target.empty(), "tuning record of workload ", r.workload_hash, ": the target string is empty");
  json j;
  j["workload"] = r.workload_hash;
  j["target"] = r.target;
  j["version"] = r.version.empty() ? std::string(TESSERA_VERSION) : r.version;
  if (r.trace_json.empty()) {
    j["trace"] = nullptr;
  } else {
    json trace = json::parse(r.trace_json, nullptr, /*allow_exceptions=*/false);
    TESSERA_CHECK(trace.is_object(), "tuning record of workload ", r.workload_hash,
                  ": trace_json is not a JSON object (expected tir::Trace::ToJSON text): '",
                  r.trace_json.substr(0, 80), "'");
    j["trace"] = std::move(trace);
  }
  for (double s : r.run_secs) {
    TESSERA_CHECK(std::isfinite(s) && s >= 0, "tuning record of workload ", r.workload_hash,
                  ": run time ", s, " is not a finite number of seconds >= 0");
  }
  j["run_secs"] = r.run_secs;
  j["error"] = r.error;
  j["timestamp"] = r.timestamp_s;
  j["config"] = json::object();
  for (const auto& [k, v] : r.config) j["config"][k] = v;
  if (!r.features.empty()) j["features"] = r.features;
  // dump() escapes control characters (a '\n' in an error message becomes "\\n"): one line.
  return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

[[noreturn]] void ThrowCorrupt(const std::string& path, size_t line, const std::string& why) {
  TESSERA_THROW(UserError, "corrupt tuning database '", path, "', line ", line, ": ", why,
                " (every line must be one JSON object written by Tessera; only a torn last line "
                "is skipped)");
}

template <typename T>
T Field(const json& j, const char* key, const std::string& path, size_t line) {
  auto it = j.find(key);
  if (it == j.end()) ThrowCorrupt(path, line, std::string("missing field \"") + key + "\"");
  try {
    return it->get<T>();
  } catch (const json::exception& e) {
    ThrowCorrupt(path, line, std::string("field \"") + key + "\" has the wrong type (" + e.what() + ")");
  }
}

TuningRecord ParseRecord(const json& j, const std::string& path, size_t line) {
  if (!j.is_object()) ThrowCorrupt(path, line, "not a JSON object");
  TuningRecord r;
  r.workload_hash = Field<std::string>(j, "workload", path, line);
  if (!IsWorkloadHash(r.workload_hash)) ThrowCorrupt(path, line, "workload hash '" + r.workload_hash + "' is not 16 hex digits");
  r.target = Field<std::string>(j, "target", path, line);
  r.version = Field<std::string>(j, "version", path, line);
  auto trace = j.find("trace");
  if (trace == j.end()) ThrowCorrupt(path, line, "missing field \"trace\"");
  if (trace->is_object()) {
    r.trace_json = trace->dump();
  } else if (!trace->is_null()) {
    ThrowCorrupt(path, line, "field \"trace\" is neither an object nor null");
  }
  r.run_secs = Field<std::vector<double>>(j, "run_secs", path, line);
  if (j.contains("error")) r.error = Field<std::string>(j, "error", path, line);
  r.timestamp_s = Field<int64_t>(j, "timestamp", path, line);
  if (j.contains("config")) r.config = Field<std::map<std::string, int64_t>>(j, "config", path, line);
  if (j.contains("features")) r.features = Field<std::vector<float>>(j, "features", path, line);
  return r;
}

std::string WorkloadLine(const Workload& w) {
  CheckHash(w.hash, "workload");
  json j{{"hash", w.hash}, {"name", w.name}, {"func", w.func_text}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

Workload ParseWorkload(const json& j, const std::string& path, size_t line) {
  if (!j.is_object()) ThrowCorrupt(path, line, "not a JSON object");
  Workload w;
  w.hash = Field<std::string>(j, "hash", path, line);
  if (!IsWorkloadHash(w.hash)) ThrowCorrupt(path, line, "workload hash '" + w.hash + "' is not 16 hex digits");
  w.name = Field<std::string>(j, "name", path, line);
  w.func_text = Field<std::string>(j, "func", path, line);
  return w;
}

json ParseLine(const detail::JsonLine& line, const std::string& path) {
  json j = json::parse(line.text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) ThrowCorrupt(path, line.number, "not valid JSON");
  return j;
}

}  // namespace

double TuningRecord::MeanSecs() const {
  if (!ok()) return std::numeric_limits<double>::infinity();
  double sum = 0;
  for (double s : run_secs) sum += s;
  return sum / static_cast<double>(run_secs.size());
}

std::string WorkloadsPathFor(const std::string& records_path) {
  const std::string ext = ".jsonl";
  if (records_path.size() >= ext.size() &&
      records_path.compare(records_path.size() - ext.size(), ext.size(), ext) == 0) {
    return records_path.substr(0, records_path.size() - ext.size()) + ".workloads.jsonl";
  }
  return records_path + ".workloads.jsonl";
}

Database::Database(std::string path) : path_(std::move(path)), workloads_path_(WorkloadsPathFor(path_)) {
  TESSERA_CHECK(!path_.empty(), "the tuning database path is empty");
  Load();
}

void Database::Load() {
  for (const auto& line : detail::ReadJsonLines(workloads_path_, kWorkloadsKind)) {
    Workload w = ParseWorkload(ParseLine(line, workloads_path_), workloads_path_, line.number);
    if (workload_index_.count(w.hash)) continue;  // stored twice (two writers): the first wins
    workload_index_.emplace(w.hash, workloads_.size());
    workloads_.push_back(std::move(w));
  }
  for (const auto& line : detail::ReadJsonLines(path_, kRecordsKind)) {
    TuningRecord r = ParseRecord(ParseLine(line, path_), path_, line.number);
    by_key_[{r.workload_hash, r.target}].push_back(records_.size());
    records_.push_back(std::move(r));
  }
}

void Database::CommitWorkload(const Workload& workload) {
  const std::string line = WorkloadLine(workload);
  if (HasWorkload(workload.hash)) return;
  detail::AppendJsonLines(workloads_path_, kWorkloadsKind, line);
  workload_index_.emplace(workload.hash, workloads_.size());
  workloads_.push_back(workload);
}

void Database::CommitBatch(const std::vector<TuningRecord>& records) {
  if (records.empty()) return;
  std::string lines;
  for (const auto& r : records) lines += RecordLine(r);  // validates every record first
  detail::AppendJsonLines(path_, kRecordsKind, lines);
  for (const auto& r : records) {
    by_key_[{r.workload_hash, r.target}].push_back(records_.size());
    records_.push_back(r);
    if (records_.back().version.empty()) records_.back().version = TESSERA_VERSION;
  }
}

std::vector<TuningRecord> Database::Records(const std::string& workload_hash, const std::string& target) const {
  std::vector<TuningRecord> out;
  auto it = by_key_.find({workload_hash, target});
  if (it == by_key_.end()) return out;
  for (size_t i : it->second) {
    if (records_[i].version == TESSERA_VERSION) out.push_back(records_[i]);
  }
  return out;
}

std::vector<MeasuredProgram> MeasuredPrograms(const std::vector<TuningRecord>& records) {
  std::map<std::string, std::vector<const TuningRecord*>> by_trace;
  std::vector<std::string> order;
  for (const TuningRecord& r : records) {
    if (!r.ok()) continue;
    auto [it, fresh] = by_trace.try_emplace(r.trace_json);
    if (fresh) order.push_back(r.trace_json);
    it->second.push_back(&r);
  }
  std::vector<MeasuredProgram> programs;
  for (const std::string& trace : order) {
    std::vector<const TuningRecord*> rs = by_trace[trace];
    std::stable_sort(rs.begin(), rs.end(),
                     [](const TuningRecord* a, const TuningRecord* b) { return a->MeanSecs() < b->MeanSecs(); });
    const TuningRecord* mid = rs[(rs.size() - 1) / 2];
    programs.push_back({mid, mid->MeanSecs(), static_cast<int>(rs.size())});
  }
  return programs;
}

std::optional<TuningRecord> Database::Best(const std::string& workload_hash, const std::string& target) const {
  std::vector<TuningRecord> top = TopPrograms(workload_hash, target, 1);
  if (top.empty()) return std::nullopt;
  return std::move(top.front());
}

std::vector<TuningRecord> Database::TopPrograms(const std::string& workload_hash, const std::string& target,
                                                size_t k) const {
  const std::vector<TuningRecord> records = Records(workload_hash, target);
  std::vector<MeasuredProgram> programs = MeasuredPrograms(records);
  std::stable_sort(programs.begin(), programs.end(),
                   [](const MeasuredProgram& a, const MeasuredProgram& b) { return a.median_secs < b.median_secs; });
  std::vector<TuningRecord> out;
  for (size_t i = 0; i < programs.size() && i < k; ++i) out.push_back(*programs[i].median);
  return out;
}

const Workload* Database::FindWorkload(const std::string& hash) const {
  auto it = workload_index_.find(hash);
  return it == workload_index_.end() ? nullptr : &workloads_[it->second];
}

}  // namespace tessera::tune
