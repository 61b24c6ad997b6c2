// TaskScheduler (task_scheduler.h): warm-up in order, then the steepest weighted gradient;
// resting on patience, stopping for good on exhaustion; Revive wakes the resting ones.
#include "tessera/tune/task_scheduler.h"

#include <gtest/gtest.h>

#include <limits>

namespace tessera::tune {
namespace {

TEST(TaskScheduler, WarmsUpEveryTaskInOrderThenPrefersTheHeaviestShare) {
  TaskScheduler s({1, 4, 1});
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(s.Next(), i);
    s.Update(i, 8, 1e-3);  // every task: 1 ms after 8 trials
  }
  // Equal times and trials: the task called 4 times per run has 4x the optimistic gradient.
  EXPECT_EQ(s.Next(), 1);
}

TEST(TaskScheduler, ATaskThatImprovesRecentlyIsPreferred) {
  TaskSchedulerOptions o;
  o.alpha = 0.9;  // mostly the backward gradient
  TaskScheduler s({1, 1}, o);
  s.Update(0, 8, 2e-3);
  s.Update(1, 8, 2e-3);
  s.Update(0, 8, 1e-3);  // task 0 halved its time in its last round
  s.Update(1, 8, 2e-3);  // task 1 did not move
  EXPECT_EQ(s.Next(), 0);
}

TEST(TaskScheduler, StopsATaskAfterPatienceRoundsWithoutGainAndEndsWhenAllStop) {
  TaskSchedulerOptions o;
  o.patience = 2;
  TaskScheduler s({1, 1}, o);
  s.Update(0, 8, 1e-3);
  s.Update(1, 8, 1e-3);
  s.Update(0, 8, 1e-3);
  EXPECT_FALSE(s.stopped(0));
  s.Update(0, 8, 0.999e-3);  // under min_gain: still no gain
  EXPECT_TRUE(s.stopped(0));
  EXPECT_EQ(s.Next(), 1);
  s.Stop(1);
  EXPECT_EQ(s.Next(), -1);
}

TEST(TaskScheduler, ReviveWakesTheRestingTasksWithTheirPatienceDoubledButNotTheStoppedOnes) {
  TaskSchedulerOptions o;
  o.patience = 1;
  TaskScheduler s({1, 1, 1}, o);
  for (int i = 0; i < 3; ++i) s.Update(i, 8, 1e-3);
  s.Update(0, 8, 1e-3);  // no gain: rests after 1 round
  s.Update(1, 8, 1e-3);
  s.Stop(2);             // exhausted
  ASSERT_TRUE(s.stopped(0) && s.stopped(1) && s.stopped(2));
  EXPECT_EQ(s.Next(), -1);
  EXPECT_EQ(s.revivals(), 0);

  ASSERT_TRUE(s.Revive());
  EXPECT_EQ(s.revivals(), 2);
  EXPECT_FALSE(s.stopped(0));
  EXPECT_FALSE(s.stopped(1));
  EXPECT_TRUE(s.stopped(2));  // Stop is for good
  EXPECT_NE(s.Next(), -1);
  EXPECT_NE(s.Next(), 2);
  // Patience is now 2: one round without gain is not enough, two are; a gain resets the count.
  s.Update(0, 8, 1e-3);
  EXPECT_FALSE(s.stopped(0));
  s.Update(0, 8, 0.5e-3);
  s.Update(0, 8, 0.5e-3);
  EXPECT_FALSE(s.stopped(0));
  s.Update(0, 8, 0.5e-3);
  EXPECT_TRUE(s.stopped(0));
  s.Stop(1);
  EXPECT_EQ(s.Next(), -1);
  ASSERT_TRUE(s.Revive());  // task 0 rests again: woken with patience 4
  EXPECT_EQ(s.revivals(), 3);
  EXPECT_EQ(s.Next(), 0);
  for (int r = 0; r < 3; ++r) s.Update(0, 8, 0.5e-3);
  EXPECT_FALSE(s.stopped(0));
  s.Update(0, 8, 0.5e-3);
  EXPECT_TRUE(s.stopped(0));
  s.Stop(0);
  EXPECT_FALSE(s.Revive());  // nothing rests: every task stopped for good
  EXPECT_EQ(s.revivals(), 3);
  EXPECT_EQ(s.Next(), -1);
}

TEST(TaskScheduler, ATaskWithoutAnyMeasurementIsRetriedFirst) {
  TaskScheduler s({1, 1});
  s.Update(0, 8, 1e-3);
  s.Update(1, 8, std::numeric_limits<double>::infinity());  // every candidate failed
  EXPECT_EQ(s.Next(), 1);
}

}  // namespace
}  // namespace tessera::tune
