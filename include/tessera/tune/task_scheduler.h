// The task scheduler (Ansor, arXiv 2006.06762 §6 "gradient-based task scheduler"): which task
// gets the next round of measurements, so that a global budget goes where the model's latency
// falls fastest.
//
// The objective is the model's latency, sum_i w_i * g_i, with g_i task i's best time and w_i its
// calls per run. After a warm-up round per task (in order), the next task is the one whose
// estimated gradient of the objective per trial is steepest:
//   dg_i ~ alpha * (g_i(now) - g_i(window rounds ago)) / trials in those rounds      (backward)
//        + (1 - alpha) * (-g_i(now) / trials_i)                                      (optimistic)
//   priority_i = -w_i * dg_i
// A task stops (never chosen again) when its search is exhausted or `patience` of its rounds in
// a row did not improve its best time by more than min_gain (relative); Next() returns -1 once
// every task has stopped.
#pragma once

#include <cstdint>
#include <vector>

namespace tessera::tune {

struct TaskSchedulerOptions {
  double alpha = 0.2;       ///< weight of the backward gradient
  int window = 3;           ///< rounds of history for the backward gradient
  int patience = 4;         ///< rounds without improvement before a task stops
  double min_gain = 0.005;  ///< relative improvement that counts
};

class TaskScheduler {
 public:
  /// `weights`: w_i, calls per model run, one per task (> 0).
  TaskScheduler(std::vector<double> weights, TaskSchedulerOptions options = {});

  /// The task for the next round, or -1 when every task has stopped.
  int Next() const;
  /// Task `i` finished a round of `trials` measurements; its best time is now `best_secs`
  /// (+infinity while it has none).
  void Update(int i, int trials, double best_secs);
  /// Stops task `i` (its space is exhausted, or it cannot be measured).
  void Stop(int i);
  bool stopped(int i) const { return tasks_[i].stopped; }

 private:
  struct TaskState {
    double weight = 1;
    std::vector<double> best;    // best time after each round
    std::vector<int> trials;     // cumulative trials after each round
    int rounds_without_gain = 0;
    bool stopped = false;
  };
  TaskSchedulerOptions options_;
  std::vector<TaskState> tasks_;
};

}  // namespace tessera::tune
