// Tune spends its budget: when every task rests for patience with budget left, the scheduler wakes
// them (TaskScheduler::Revive) and the search goes on until the budget is spent.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "tessera/driver/resolve_target.h"
#include "tessera/tune/tuner.h"
#include "test_tasks.h"

namespace tessera::tune {
namespace {

TEST(TunerBudget, EveryTaskRestingEarlyDoesNotEndTheRunBeforeItsTrials) {
  namespace fs = std::filesystem;
  std::string dir = (fs::temp_directory_path() / "tessera_budget_XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  {
    const TuneTask task = MatmulTask();
    Database db(dir + "/db.jsonl");
    TuneOptions opt;
    opt.max_trials = 12;
    opt.batch_size = 2;
    opt.confirm_repeats = 0;
    opt.work_dir = dir;
    opt.measure.number = 1;
    opt.measure.repeat = 1;
    opt.measure.min_repeat_ms = 0;
    // No round counts as a gain: the task rests after every round.
    opt.scheduler.patience = 1;
    opt.scheduler.min_gain = 0.999;
    TuneReport r = Tune({task}, driver::ResolveTarget("native"), db, opt);
    ASSERT_EQ(r.tasks.size(), 1u);
    EXPECT_EQ(r.trials, 12);  // without Revive: 4 (the warm-up round and one more, 2 each)
    EXPECT_EQ(r.tasks[0].trials, 12);
    // 6 rounds of 2: the task rests after round 2 (patience 1) and round 4 (patience 2, after the first
    // wake-up); rounds 5 and 6 run with patience 4.
    EXPECT_EQ(r.revivals, 2);
    std::set<std::string> programs;
    for (const TuningRecord& rec : db.Records(task.workload_hash, driver::ResolveTarget("native").str()))
      programs.insert(rec.trace_json);
    EXPECT_EQ(programs.size(), 12u);  // every trial a new program
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tessera::tune
