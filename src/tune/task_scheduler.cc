#include "tessera/tune/task_scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tessera/support/error.h"

namespace tessera::tune {

TaskScheduler::TaskScheduler(std::vector<double> weights, TaskSchedulerOptions options) : options_(options) {
  for (double w : weights) {
    TESSERA_ICHECK(w > 0, "task weight ", w, " must be > 0");
    TaskState s;
    s.weight = w;
    s.patience = options_.patience;
    tasks_.push_back(s);
  }
}

int TaskScheduler::Next() const {
  // Warm-up: every task once, in order.
  for (size_t i = 0; i < tasks_.size(); ++i)
    if (!stopped(static_cast<int>(i)) && tasks_[i].best.empty()) return static_cast<int>(i);
  int best = -1;
  double best_priority = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < tasks_.size(); ++i) {
    const TaskState& t = tasks_[i];
    if (stopped(static_cast<int>(i))) continue;
    const double g = t.best.back();
    double priority;
    if (!std::isfinite(g)) {
      priority = std::numeric_limits<double>::max();  // nothing measured yet: try again first
    } else {
      const size_t n = t.best.size();
      const size_t k = n > static_cast<size_t>(options_.window) ? n - 1 - options_.window : 0;
      const double dtrials = std::max(1, t.trials.back() - (k < n - 1 ? t.trials[k] : 0));
      const double before = std::isfinite(t.best[k]) ? t.best[k] : g;
      const double backward = (g - before) / dtrials;
      const double optimistic = -g / std::max(1, t.trials.back());
      priority = -t.weight * (options_.alpha * backward + (1 - options_.alpha) * optimistic);
    }
    if (priority > best_priority) best_priority = priority, best = static_cast<int>(i);
  }
  return best;
}

void TaskScheduler::Update(int i, int trials, double best_secs) {
  TaskState& t = tasks_.at(i);
  const double previous = t.best.empty() ? std::numeric_limits<double>::infinity() : t.best.back();
  const bool gained = !std::isfinite(previous) ? std::isfinite(best_secs)
                                                : best_secs < previous * (1 - options_.min_gain);
  t.rounds_without_gain = gained ? 0 : t.rounds_without_gain + 1;
  t.best.push_back(best_secs);
  t.trials.push_back((t.trials.empty() ? 0 : t.trials.back()) + trials);
  if (t.best.size() > 1 && t.rounds_without_gain >= t.patience) t.resting = true;
}

void TaskScheduler::Stop(int i) { tasks_.at(i).stopped = true; }

bool TaskScheduler::Revive() {
  bool woke = false;
  for (TaskState& t : tasks_) {
    if (!t.resting || t.stopped) continue;
    t.resting = false;
    t.rounds_without_gain = 0;
    t.patience = std::max(1, 2 * t.patience);
    ++revivals_;
    woke = true;
  }
  return woke;
}

}  // namespace tessera::tune
