// Tune: the tuning loop over a model's tasks (issue 19), AutoTVM's and MetaSchedule's loop:
//
//   for every task: store its workload; measure the hand-written schedule (the reference whose
//                   outputs every candidate must match) unless the database already has it
//   warm-start the cost model from every database record with features (all workloads, all
//   models: transfer), then until the budget (trials or seconds) is spent or every task stopped
//   for good (its space exhausted, or unmeasurable):
//     task  = TaskScheduler::Next()                     (task_scheduler.h; when every task rests
//                                                        for patience, TaskScheduler::Revive)
//     batch = TaskSearch::Propose(batch_size, model)    (search.h)
//     measure each candidate in a worker process        (measure.h)
//     commit the batch to the database (fsync)          (database.h)
//     train the cost model on the batch                 (cost_model.h)
//   confirmation (the winner's curse): the best of many noisy measurements is biased low, so each
//   task's best program other than the hand-written one is measured `confirm_repeats` more times
//   (records of the same trace) and programs are ranked by the median of their measurements
//   (Database::Best), as `tessera compile --db` ranks them: a candidate that won by one lucky run
//   falls back behind the default. Up to 3 programs per task, in turn while the best changes.
//
// Resuming: records already in the database for (task, target) count as measured (their
// programs are never measured again) and their best time is the task's starting point, so a
// tuner killed at any moment loses at most the batch in flight.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tessera/target/target.h"
#include "tessera/tune/database.h"
#include "tessera/tune/measure.h"
#include "tessera/tune/search.h"
#include "tessera/tune/task.h"
#include "tessera/tune/task_scheduler.h"

namespace tessera::tune {

struct TuneOptions {
  int64_t max_trials = 0;     ///< measured candidates in all (defaults included); 0: no limit
  double max_seconds = 0;     ///< wall-clock budget; 0: no limit (one of the two must be set)
  int batch_size = 8;         ///< candidates measured per round
  /// Extra measurements of each task's best program at the end (0: none). They do not count as
  /// trials (no new program); with a time budget the search stops at 95 % of it to leave them time,
  /// and they stop at the budget.
  int confirm_repeats = 2;
  uint64_t seed = 0;
  MeasureOptions measure;
  SearchOptions search;
  TaskSchedulerOptions scheduler;
  std::string work_dir;       ///< for the reference outputs; empty: a fresh folder under /tmp
};

/// Where one task stands (TuneReport, progress).
struct TaskStatus {
  std::string name;
  std::string workload_hash;
  int64_t weight = 1;
  double flops = 0;
  std::string rewrite;      ///< TuneTask::rewrite: empty for a kernel of the model as built
  double default_secs = 0;  ///< the hand-written schedule's time (0: unknown)
  double best_secs = 0;     ///< the best time measured (0: none)
  int trials = 0;           ///< candidates measured in this run
  int errors = 0;           ///< of which failed
  int confirmations = 0;    ///< re-measurements of best programs (not trials)
  bool stopped = false;
  std::string not_tuned;    ///< why the task was not tuned (kDynamicShapeNotTuned); empty otherwise
  double best_gflops() const { return best_secs > 0 ? flops / best_secs * 1e-9 : 0; }
};

/// TaskStatus::not_tuned of a kernel with symbolic extents (PrimFunc shape_vars, dynamic shapes).
inline constexpr const char* kDynamicShapeNotTuned = "dynamic shape: not tuned";

/// sum_i weight_i * (best, else default, seconds of task i) over the tasks of the model as built
/// (TaskStatus::rewrite empty): the kernels' share of one model run.
double EstimatedLatency(const std::vector<TaskStatus>& tasks);

struct TuneProgress {
  const std::vector<TaskStatus>& tasks;
  int current = -1;          ///< the task just measured
  int64_t trials = 0;        ///< measured so far in this run
  double elapsed_s = 0;
  double budget_fraction = 0;  ///< of the trial or time budget spent, in [0, 1]
};

struct TuneReport {
  std::vector<TaskStatus> tasks;
  int64_t trials = 0;
  double elapsed_s = 0;
  int revivals = 0;  ///< tasks woken after every task rested with budget left (TaskScheduler::Revive)
  /// sum_i weight_i * secs_i with the default / best schedules over the tasks of the model as
  /// built (the kernels' share of a run; the rewrites' other values are not counted).
  double default_latency_s() const;
  double best_latency_s() const;
};

/// Tunes `tasks` for `target` (which must run on this machine), recording in `db`. Throws
/// UserError when neither budget is set. A task whose hand-written schedule cannot be measured
/// is skipped with a line on stderr naming it and the error (its TaskStatus: stopped, one error),
/// never fatal. A task whose PrimFunc has shape_vars (dynamic shapes) is not tuned: a line on
/// stderr, and its TaskStatus (after the tuned ones, stopped, no trials) has not_tuned =
/// kDynamicShapeNotTuned; `compile --db` finds no record for it and uses the default schedule.
TuneReport Tune(const std::vector<TuneTask>& tasks, const target::Target& target, Database& db,
                const TuneOptions& options, const std::function<void(const TuneProgress&)>& progress = {});

}  // namespace tessera::tune
