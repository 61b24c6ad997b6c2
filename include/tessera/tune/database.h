// The tuning database (issue 19, "Database"): measured candidates of every tuning task, kept in
// two JSON-lines files that only ever grow, so a tuner killed at any moment (kill -9, power
// loss after the last fsync) loses at most the batch it was writing, and `tessera tune` resumes
// from what is there.
//
// Files, for a database path P (e.g. "tuning.jsonl"):
//   P                                  one TuningRecord per line
//   <P without ".jsonl">.workloads.jsonl  one Workload per line (P + ".workloads.jsonl" when P
//                                      does not end in ".jsonl")
// A record line:
//   {"workload":"0123456789abcdef","target":"<target string>","version":"0.1.0",
//    "trace":{"instructions":[...]},"run_secs":[1.2e-05,...],"error":"","timestamp":1700000000,
//    "config":{"tile_x":8,...},"features":[0.0,1.58,...]}   ("features" only when present)
// ("trace" is the trace's JSON object itself (tir::Trace::ToJSON), not an escaped string; null
// for an empty trace_json.) A workload line:
//   {"hash":"0123456789abcdef","name":"fused_conv2d_relu","func":"<printed PrimFunc>"}
//
// Durability: CommitWorkload / CommitBatch append their lines with one write() and fsync the
// file before returning (and fsync the folder when they create the file), so what they returned
// from is on disk. Loading tolerates a torn last line (a writer killed in the middle of a
// write: the last line has no '\n'): it is skipped, and the next commit cuts it off before
// appending, so the file stays valid JSON lines. A malformed line anywhere else is corruption:
// UserError naming the file and the line number.
//
// Keys: records are looked up by (workload hash, target string) and only those of this
// Tessera's version (TESSERA_VERSION, support/version.h) are returned, so a record measured on
// another CPU or by another compiler version is never applied. The target string is compared
// exactly: pass the same canonical spelling when writing and reading (the resolved target's
// string, not "native").
//
// Concurrency: one writer per database at a time (the tuner). Each commit holds an exclusive
// flock on the file while it appends, so a second writer cannot interleave inside a line, but a
// Database object sees only the records that were in the files when it was opened plus its own
// commits. Readers in other processes (e.g. `tessera compile --db`) may open the files at any
// time: they see every batch committed before they opened them. Not thread-safe: guard a shared
// Database with a mutex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tessera::tune {

/// A tuning task's function, stored once per hash so a record's workload can be recovered.
struct Workload {
  std::string hash;       ///< 16 lowercase hex digits: the caller's structural hash of the function
  std::string name;       ///< a readable name, e.g. the fused kernel's name
  std::string func_text;  ///< the printed PrimFunc (or any serialization the caller chooses)
};

/// One measured (or failed) candidate of a workload on a target.
struct TuningRecord {
  std::string workload_hash;   ///< Workload::hash
  std::string target;          ///< the target string it was measured on (compared exactly)
  std::string version;         ///< the Tessera version that measured it; "" = this one (filled at commit)
  std::string trace_json;      ///< tir::Trace::ToJSON() text; "" when there is no trace
  std::vector<double> run_secs;  ///< one run time per repeat, seconds (finite, >= 0)
  std::string error;           ///< "" for a good candidate, else why it failed ("timeout", "crash: SIGSEGV",
                               ///< "wrong answer: max abs diff ...", a schedule error's message)
  int64_t timestamp_s = 0;     ///< when it was measured, seconds since the Unix epoch
  std::map<std::string, int64_t> config;  ///< the candidate's knob values (may be empty)
  /// The candidate's cost-model features (feature_extractor.h ExtractFeatures; may be empty):
  /// what lets a later tuning warm-start its model from records of workloads it does not have.
  std::vector<float> features;

  /// The mean of run_secs; +infinity when !ok().
  double MeanSecs() const;
  /// No error and at least one run time.
  bool ok() const { return error.empty() && !run_secs.empty(); }
};

/// The database files' paths for a database path (see the header comment).
std::string WorkloadsPathFor(const std::string& records_path);

/// One program (trace) of a workload and how it measured: every ok() record with that trace_json.
struct MeasuredProgram {
  const TuningRecord* median = nullptr;  ///< the record whose MeanSecs is the median (lower middle)
  double median_secs = 0;                ///< that MeanSecs
  int count = 0;                         ///< how many records measured it
};

/// The ok() records of `records` grouped by trace_json, in order of first appearance. The pointers
/// point into `records`.
std::vector<MeasuredProgram> MeasuredPrograms(const std::vector<TuningRecord>& records);

class Database {
 public:
  /// Opens (loads) the database at `path`; neither file needs to exist (they are created by the
  /// first commit). UserError naming the file and line for a corrupt line (other than a torn
  /// last one), or when a file cannot be read.
  explicit Database(std::string path);

  /// Appends `workload` to the workloads file unless its hash is already there (a workload
  /// committed twice is stored once; the first one's name and text are kept). UserError when
  /// the hash is not 16 lowercase hex digits or the file cannot be written.
  void CommitWorkload(const Workload& workload);

  /// Appends every record, in order, with one write, then fsyncs. An empty batch writes
  /// nothing. A record with an empty version gets TESSERA_VERSION. UserError when a record is
  /// malformed (bad hash, empty target, trace_json that is not a JSON object, a non-finite or
  /// negative run time) or the file cannot be written; nothing of the batch is kept then.
  void CommitBatch(const std::vector<TuningRecord>& records);

  /// The records of (`workload_hash`, `target`) measured by this Tessera version, in commit order.
  std::vector<TuningRecord> Records(const std::string& workload_hash, const std::string& target) const;
  /// The best program of Records(workload_hash, target): the ok() records grouped by program
  /// (MeasuredPrograms), the one with the least median time (the earliest on a tie); of its records,
  /// the one whose MeanSecs is that median (the lower middle of an even count). nullopt when there is
  /// no ok() record. A program measured once is scored by that one time; the tuner's confirmation
  /// round (tuner.h) measures the best ones again, so one lucky run does not win.
  std::optional<TuningRecord> Best(const std::string& workload_hash, const std::string& target) const;
  /// The `k` best programs of Records(workload_hash, target) in Best's order (least median time
  /// first, the earliest among equals), each as Best gives it; fewer when there are fewer. The
  /// first is Best's. The end-to-end check tries the runner-up of a program that ran slower in the
  /// model (tune/model_check.h, "Second choice").
  std::vector<TuningRecord> TopPrograms(const std::string& workload_hash, const std::string& target, size_t k) const;

  /// Every record, of every target and version, in file order.
  const std::vector<TuningRecord>& AllRecords() const { return records_; }
  /// Every workload, in file order.
  const std::vector<Workload>& AllWorkloads() const { return workloads_; }
  bool HasWorkload(const std::string& hash) const { return workload_index_.count(hash) != 0; }
  /// The workload of `hash`, or nullptr.
  const Workload* FindWorkload(const std::string& hash) const;
  /// Number of records (of every target and version).
  size_t size() const { return records_.size(); }

  const std::string& path() const { return path_; }
  const std::string& workloads_path() const { return workloads_path_; }

 private:
  void Load();

  std::string path_;
  std::string workloads_path_;
  std::vector<TuningRecord> records_;
  std::vector<Workload> workloads_;
  std::map<std::string, size_t> workload_index_;                         // hash -> workloads_ index
  std::map<std::pair<std::string, std::string>, std::vector<size_t>> by_key_;  // (hash, target) -> records_
};

}  // namespace tessera::tune
