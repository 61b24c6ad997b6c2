#include "tessera/tune/tuner.h"

#include <stdlib.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <memory>

#include "tessera/support/error.h"
#include "tessera/tir/printer.h"
#include "tessera/tune/cost_model.h"
#include "tessera/tune/feature_extractor.h"
#include "tessera/tune/space.h"

namespace tessera::tune {

double TuneReport::default_latency_s() const {
  double s = 0;
  for (const TaskStatus& t : tasks)
    if (t.rewrite.empty()) s += t.weight * t.default_secs;
  return s;
}

double EstimatedLatency(const std::vector<TaskStatus>& tasks) {
  double s = 0;
  for (const TaskStatus& t : tasks)
    if (t.rewrite.empty()) s += t.weight * (t.best_secs > 0 ? t.best_secs : t.default_secs);
  return s;
}

double TuneReport::best_latency_s() const { return EstimatedLatency(tasks); }

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// The cost model's training score of a measurement: throughput in calls per millisecond (only
/// its order within a task matters: rank:pairwise), 0 for a failed candidate.
double Score(double secs) { return std::isfinite(secs) && secs > 0 ? 1e-3 / secs : 0.0; }

/// A fresh folder for the reference outputs, removed when the run ends.
class WorkDir {
 public:
  explicit WorkDir(const std::string& given) {
    if (!given.empty()) {
      path_ = given;
      std::filesystem::create_directories(path_);
      return;
    }
    std::string tmpl = (std::filesystem::temp_directory_path() / "tessera-tune-XXXXXX").string();
    TESSERA_CHECK(mkdtemp(tmpl.data()) != nullptr, "tuning: cannot create a work folder under ",
                  std::filesystem::temp_directory_path().string());
    path_ = tmpl;
    owned_ = true;
  }
  ~WorkDir() {
    std::error_code ec;
    if (owned_) std::filesystem::remove_all(path_, ec);
  }
  std::string File(const std::string& name) const { return (std::filesystem::path(path_) / name).string(); }

 private:
  std::string path_;
  bool owned_ = false;
};

TuningRecord MakeRecord(const TuneTask& task, const std::string& target, const ProposedCandidate& c,
                        const MeasureResult& r) {
  TuningRecord rec;
  rec.workload_hash = task.workload_hash;
  rec.target = target;
  rec.trace_json = c.candidate.trace.ToJSON();
  rec.run_secs = r.ok() ? r.run_secs : std::vector<double>{};
  rec.error = r.ok() ? "" : (r.error.empty() ? "no timing" : r.error);
  rec.timestamp_s = static_cast<int64_t>(std::time(nullptr));
  rec.config = c.candidate.config;
  rec.features = c.features;
  return rec;
}

/// Trains `model` on every database record with features (every workload, every model).
void WarmStart(const Database& db, XGBCostModel& model, std::map<std::string, int>& groups) {
  std::vector<std::vector<float>> rows;
  std::vector<double> scores;
  std::vector<int> group_ids;
  for (const TuningRecord& r : db.AllRecords()) {
    if (r.features.size() != kFeatureLength) continue;
    rows.push_back(r.features);
    scores.push_back(Score(r.ok() ? r.MeanSecs() : kInf));
    group_ids.push_back(groups.emplace(r.workload_hash + "@" + r.target, static_cast<int>(groups.size())).first->second);
  }
  if (!rows.empty()) model.Update(rows, scores, group_ids);
}

/// The confirmation round (tuner.h): measures each task's best program other than the hand
/// schedule until it has 1 + confirm_repeats measurements, then re-ranks by median; at most three
/// programs per task. Stops when `out_of_time` says so.
void Confirm(const std::vector<TuneTask>& tasks, const target::Target& target, const std::string& target_str,
             Database& db, const TuneOptions& opt,
             const std::vector<Reference>& references, const std::vector<std::string>& default_traces,
             TuneReport& report, const std::function<bool()>& out_of_time, const std::function<void(int)>& notify) {
  if (opt.confirm_repeats <= 0) return;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (!references[i].scheduled.defined()) continue;  // skipped, or never reached
    TaskStatus& status = report.tasks[i];
    for (int round = 0; round < 3; ++round) {
      std::vector<TuningRecord> records = db.Records(tasks[i].workload_hash, target_str);
      std::vector<MeasuredProgram> programs = MeasuredPrograms(records);
      const MeasuredProgram* best = nullptr;
      for (const MeasuredProgram& p : programs)
        if (!best || p.median_secs < best->median_secs) best = &p;
      if (!best) break;
      status.best_secs = best->median_secs;
      if (best->median->trace_json == default_traces[i] || best->count > opt.confirm_repeats) break;
      const TuningRecord model_record = *best->median;
      const tir::PrimFunc scheduled = ReplayTrace(tasks[i].func, tir::Trace::FromJSON(model_record.trace_json));
      std::vector<TuningRecord> batch;
      for (int k = best->count; k <= opt.confirm_repeats && !out_of_time(); ++k) {
        MeasureResult r = Measure(tasks[i], scheduled, target, opt.measure, references[i]);
        TuningRecord rec = model_record;
        rec.run_secs = r.ok() ? r.run_secs : std::vector<double>{};
        rec.error = r.ok() ? "" : (r.error.empty() ? "no timing" : r.error);
        rec.timestamp_s = static_cast<int64_t>(std::time(nullptr));
        batch.push_back(std::move(rec));
        ++status.confirmations;
      }
      db.CommitBatch(batch);
      notify(static_cast<int>(i));
      if (out_of_time()) return;
    }
    std::vector<TuningRecord> records = db.Records(tasks[i].workload_hash, target_str);
    status.best_secs = 0;
    for (const MeasuredProgram& p : MeasuredPrograms(records))
      if (status.best_secs == 0 || p.median_secs < status.best_secs) status.best_secs = p.median_secs;
  }
}

}  // namespace

namespace {
TuneReport TuneStatic(const std::vector<TuneTask>& tasks, const target::Target& target, Database& db,
                      const TuneOptions& opt, const std::function<void(const TuneProgress&)>& progress);
}  // namespace

TuneReport Tune(const std::vector<TuneTask>& tasks, const target::Target& target, Database& db,
                const TuneOptions& opt, const std::function<void(const TuneProgress&)>& progress) {
  TESSERA_CHECK(opt.max_trials > 0 || opt.max_seconds > 0,
                "tuning needs a budget: a number of trials (--trials N) or a time (--time 10m)");
  // A kernel with symbolic extents (dynamic shapes) is not a tuning task: its measurements would
  // hold for one value of its shape vars only; it keeps the default schedule.
  std::vector<TuneTask> tunable;
  std::vector<TaskStatus> skipped;
  for (const TuneTask& t : tasks) {
    if (t.func.defined() && !t.func->shape_vars.empty()) {
      TaskStatus s;
      s.name = t.name;
      s.workload_hash = t.workload_hash;
      s.weight = t.weight;
      s.flops = t.flops;
      s.rewrite = t.rewrite;
      s.stopped = true;
      s.not_tuned = kDynamicShapeNotTuned;
      std::cerr << "tessera tune: task '" << t.name << "': " << kDynamicShapeNotTuned << "\n";
      skipped.push_back(std::move(s));
    } else {
      tunable.push_back(t);
    }
  }
  TuneReport report;
  if (!tunable.empty()) report = TuneStatic(tunable, target, db, opt, progress);
  report.tasks.insert(report.tasks.end(), skipped.begin(), skipped.end());
  return report;
}

namespace {
TuneReport TuneStatic(const std::vector<TuneTask>& tasks, const target::Target& target, Database& db,
                      const TuneOptions& opt, const std::function<void(const TuneProgress&)>& progress) {
  TESSERA_CHECK(opt.max_trials > 0 || opt.max_seconds > 0,
                "tuning needs a budget: a number of trials (--trials N) or a time (--time 10m)");
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  const std::string target_str = target.str();
  WorkDir work(opt.work_dir);

  XGBCostModel model;
  std::map<std::string, int> groups;
  WarmStart(db, model, groups);

  TuneReport report;
  std::vector<std::unique_ptr<TaskSearch>> searches;
  std::vector<double> weights;
  std::vector<Reference> references(tasks.size());
  std::vector<std::string> default_traces(tasks.size());  // the hand schedule's trace JSON per task
  for (size_t i = 0; i < tasks.size(); ++i) {
    const TuneTask& t = tasks[i];
    db.CommitWorkload({t.workload_hash, t.name, tir::AsText(t.func)});
    searches.push_back(std::make_unique<TaskSearch>(t, opt.seed + i));
    TaskStatus s;
    s.name = t.name;
    s.workload_hash = t.workload_hash;
    s.weight = t.weight;
    s.flops = t.flops;
    s.rewrite = t.rewrite;
    // Resume: what the database already measured for this task on this target.
    for (const TuningRecord& r : db.Records(t.workload_hash, target_str)) {
      searches[i]->ObserveRecord(r.config, r.ok() ? r.MeanSecs() : kInf);
      if (r.ok() && (s.best_secs == 0 || r.MeanSecs() < s.best_secs)) s.best_secs = r.MeanSecs();
    }
    report.tasks.push_back(s);
    weights.push_back(static_cast<double>(std::max<int64_t>(1, t.weight)));
  }
  TaskScheduler scheduler(weights, opt.scheduler);

  const double search_seconds = opt.max_seconds * (opt.confirm_repeats > 0 ? 0.95 : 1.0);
  auto spent = [&] {
    if (opt.max_trials > 0 && report.trials >= opt.max_trials) return true;
    return opt.max_seconds > 0 && elapsed() >= search_seconds;
  };
  auto notify = [&](int current) {
    if (!progress) return;
    double f = 0;
    if (opt.max_trials > 0) f = std::max(f, static_cast<double>(report.trials) / opt.max_trials);
    if (opt.max_seconds > 0) f = std::max(f, elapsed() / opt.max_seconds);
    progress(TuneProgress{report.tasks, current, report.trials, elapsed(), std::min(1.0, f)});
  };

  while (!spent()) {
    int i = scheduler.Next();
    if (i < 0 && scheduler.Revive()) {  // every task rests, budget remains: a deeper pass
      for (size_t t = 0; t < tasks.size(); ++t) report.tasks[t].stopped = scheduler.stopped(static_cast<int>(t));
      i = scheduler.Next();
    }
    if (i < 0) break;
    const TuneTask& task = tasks[i];
    TaskSearch& search = *searches[i];
    TaskStatus& status = report.tasks[i];
    Reference& reference = references[i];
    std::vector<TuningRecord> records;
    std::vector<std::vector<float>> rows;
    std::vector<double> scores;
    int measured = 0;
    auto account = [&](const ProposedCandidate& c, const MeasureResult& r, bool commit) {
      const double secs = r.ok() ? r.MedianSecs() : kInf;
      search.Observe(c, secs);
      ++measured;
      ++report.trials;
      ++status.trials;
      if (!r.ok()) ++status.errors;
      if (r.ok() && (status.best_secs == 0 || secs < status.best_secs)) status.best_secs = secs;
      if (commit) {
        records.push_back(MakeRecord(task, target_str, c, r));
        rows.push_back(c.features);
        scores.push_back(Score(secs));
      }
      notify(i);
    };

    // The first round of a task measures its hand-written schedule: the reference.
    if (!reference.scheduled.defined()) {
      ProposedCandidate def = search.Default();
      const bool known = search.IsMeasured(def.program_hash);
      const std::string outputs = work.File(task.workload_hash + ".ref");
      MeasureResult r = MeasureReference(task, def.candidate.scheduled, target, opt.measure, outputs);
      if (!r.ok()) {
        std::cerr << "tessera tune: task '" << task.name << "' skipped: its default schedule failed (" << r.error
                  << ")\n";
        status.errors++;
        status.stopped = true;
        scheduler.Stop(i);
        continue;
      }
      reference = Reference{def.candidate.scheduled, outputs, r.MedianSecs()};
      default_traces[i] = def.candidate.trace.ToJSON();
      status.default_secs = r.MedianSecs();
      account(def, r, /*commit=*/!known);
    }
    const int want = opt.batch_size - measured;
    std::vector<ProposedCandidate> batch = want > 0 ? search.Propose(want, model, opt.search) : std::vector<ProposedCandidate>{};
    for (const ProposedCandidate& c : batch) {
      if (spent()) break;
      account(c, Measure(task, c.candidate.scheduled, target, opt.measure, reference), true);
    }
    db.CommitBatch(records);
    if (!rows.empty()) {
      const int g = groups.emplace(task.workload_hash + "@" + target_str, static_cast<int>(groups.size())).first->second;
      model.Update(rows, scores, std::vector<int>(rows.size(), g));
    }
    scheduler.Update(i, measured, status.best_secs > 0 ? status.best_secs : kInf);
    if (batch.empty() && search.exhausted()) scheduler.Stop(i);
    status.stopped = scheduler.stopped(i);
  }
  Confirm(tasks, target, target_str, db, opt, references, default_traces, report, [&] {
    return opt.max_seconds > 0 && elapsed() >= opt.max_seconds;
  }, notify);
  report.revivals = scheduler.revivals();
  report.elapsed_s = elapsed();
  return report;
}
}  // namespace

}  // namespace tessera::tune
