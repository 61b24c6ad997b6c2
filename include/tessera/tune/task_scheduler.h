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
// A task rests when `patience` of its rounds in a row did not improve its best time by more than
// min_gain (relative), and stops for good when its search is exhausted or it cannot be measured
// (Stop). Next() returns -1 once every task rests or has stopped. A budget is there to be spent
// (Ansor and AutoTVM spend their whole trial budget): when budget remains, the tuner calls
// Revive(), which wakes every resting task with its patience doubled, so that the next pass goes
// deeper into the tasks that still had room, weighted as before, and returns false when no task
// rests (every one has stopped for good).
#pragma once

#include <cstdint>
#include <vector>

namespace tessera::tune {

struct TaskSchedulerOptions {
  double alpha = 0.2;       ///< weight of the backward gradient
  int window = 3;           ///< rounds of history for the backward gradient
  int patience = 4;         ///< rounds without improvement before a task rests (doubled by each Revive)
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
  /// Stops task `i` for good (its space is exhausted, or it cannot be measured).
  void Stop(int i);
  /// Wakes every resting task (stopped for patience, not by Stop): its count of rounds without
  /// gain restarts at 0 and its patience doubles. False (nothing changes) when no task rests.
  bool Revive();
  /// Task `i` rests or has stopped: Next() does not choose it.
  bool stopped(int i) const { return tasks_[i].resting || tasks_[i].stopped; }
  /// Times Revive() woke a task.
  int revivals() const { return revivals_; }

 private:
  struct TaskState {
    double weight = 1;
    std::vector<double> best;    // best time after each round
    std::vector<int> trials;     // cumulative trials after each round
    int rounds_without_gain = 0;
    int patience = 0;            // options_.patience, doubled by each Revive
    bool resting = false;        // patience ran out (Revive wakes it)
    bool stopped = false;        // Stop: for good
  };
  TaskSchedulerOptions options_;
  std::vector<TaskState> tasks_;
  int revivals_ = 0;
};

}  // namespace tessera::tune
