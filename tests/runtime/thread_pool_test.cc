#include "tessera/runtime/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <set>
#include <mutex>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "tessera/support/error.h"
#include "test_util.h"

namespace tessera::runtime {
namespace {

// Restores the default thread count after each test.
class ThreadPoolTest : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = NumThreads(); }
  void TearDown() override { SetNumThreads(saved_, /*force=*/true); }
  int saved_ = 1;
};

struct Counts {
  std::vector<std::atomic<int>> hits;
  std::atomic<int> seen_num_tasks{0};
  explicit Counts(int n) : hits(n) {}
};

int32_t CountTask(int32_t i, int32_t n, void* closure) {
  auto* c = static_cast<Counts*>(closure);
  c->hits[i].fetch_add(1);
  c->seen_num_tasks.store(n);
  return InParallelRegion() ? 0 : 99;
}

void ExpectEachOnce(const Counts& c) {
  for (size_t i = 0; i < c.hits.size(); ++i) ASSERT_EQ(c.hits[i].load(), 1) << "task " << i;
}

TEST_F(ThreadPoolTest, RunsEveryTaskExactlyOnce) {
  for (int threads : {1, 2, 3, 8}) {
    SetNumThreads(threads);
    EXPECT_EQ(NumThreads(), threads);
    for (int n : {1, 2, 3, 7, 64, 1000}) {
      Counts c(n);
      EXPECT_EQ(TesseraParallelLaunch(&CountTask, &c, n), 0);
      ExpectEachOnce(c);
      EXPECT_EQ(c.seen_num_tasks.load(), n);
    }
  }
  EXPECT_FALSE(InParallelRegion());
}

TEST_F(ThreadPoolTest, NonPositiveTaskCountMeansEightSharesPerThread) {
  // The pool picks 8 shares per thread (claimed one at a time), and one share with one thread.
  SetNumThreads(3);
  Counts c(24);
  EXPECT_EQ(TesseraParallelLaunch(&CountTask, &c, 0), 0);
  ExpectEachOnce(c);
  EXPECT_EQ(c.seen_num_tasks.load(), 24);
  Counts d(24);
  EXPECT_EQ(TesseraParallelLaunch(&CountTask, &d, -1), 0);
  ExpectEachOnce(d);
  SetNumThreads(1);
  Counts e(1);
  EXPECT_EQ(TesseraParallelLaunch(&CountTask, &e, 0), 0);
  ExpectEachOnce(e);
  EXPECT_EQ(e.seen_num_tasks.load(), 1);
}

TEST_F(ThreadPoolTest, UsesSeveralThreads) {
  SetNumThreads(2);
  // Each task waits (bounded) until both tasks run at the same time: only possible
  // when a worker, not only the caller, runs one of them.
  struct Meet {
    std::atomic<int> arrived{0};
    std::atomic<bool> met{false};
    std::mutex mu;
    std::set<std::thread::id> ids;
  } meet;
  auto task = [](int32_t, int32_t, void* closure) -> int32_t {
    auto* m = static_cast<Meet*>(closure);
    {
      std::lock_guard<std::mutex> lock(m->mu);
      m->ids.insert(std::this_thread::get_id());
    }
    m->arrived.fetch_add(1);
    for (int i = 0; i < 2000000 && m->arrived.load() < 2; ++i) std::this_thread::yield();
    if (m->arrived.load() >= 2) m->met.store(true);
    return 0;
  };
  EXPECT_EQ(TesseraParallelLaunch(task, &meet, 2), 0);
  EXPECT_TRUE(meet.met.load());
  EXPECT_EQ(meet.ids.size(), 2u);
}

// A worker that idled past its spin blocks on a futex and so joins a launch late (or after
// the caller already claimed every task): each launch still runs every task exactly once, and
// a late worker never runs a task of the next launch with the old one's closure.
TEST_F(ThreadPoolTest, LaunchAfterWorkerSleptRunsEveryTaskOnce) {
  SetNumThreads(2);
  for (int round = 0; round < 20; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the worker is asleep now
    for (int n : {2, 3, 16}) {
      Counts first(n), second(n);
      ASSERT_EQ(TesseraParallelLaunch(&CountTask, &first, n), 0);
      ASSERT_EQ(TesseraParallelLaunch(&CountTask, &second, n), 0);  // back to back
      ExpectEachOnce(first);
      ExpectEachOnce(second);
    }
  }
}

// With tasks that take long, the caller does not keep the work to itself: a worker (woken
// from its futex sleep) runs some of the tasks too, and every task still runs once.
TEST_F(ThreadPoolTest, LongTasksRunOnBothThreads) {
  SetNumThreads(2);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the worker is asleep now
  struct Shared {
    std::mutex mu;
    std::set<std::thread::id> ids;
    std::vector<std::atomic<int>> hits = std::vector<std::atomic<int>>(8);
  } shared;
  auto task = [](int32_t i, int32_t, void* closure) -> int32_t {
    auto* c = static_cast<Shared*>(closure);
    c->hits[i].fetch_add(1);
    auto seen = [c] {
      std::lock_guard<std::mutex> lock(c->mu);
      c->ids.insert(std::this_thread::get_id());
      return c->ids.size();
    };
    // A long task: runs until a second thread has started one too (bounded, so a failure is
    // an assertion rather than a hang).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (seen() < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    return 0;
  };
  ASSERT_EQ(TesseraParallelLaunch(task, &shared, 8), 0);
  EXPECT_EQ(shared.ids.size(), 2u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(shared.hits[i].load(), 1) << "task " << i;
}

TEST_F(ThreadPoolTest, ReportsFailedTasksAfterRunningAll) {
  SetNumThreads(4);
  struct C {
    std::atomic<int> ran{0};
  } c;
  auto task = [](int32_t i, int32_t, void* closure) -> int32_t {
    static_cast<C*>(closure)->ran.fetch_add(1);
    return i == 5 ? 17 : 0;
  };
  EXPECT_EQ(TesseraParallelLaunch(task, &c, 32), 17);
  EXPECT_EQ(c.ran.load(), 32);
  // The pool is healthy afterwards.
  Counts ok(16);
  EXPECT_EQ(TesseraParallelLaunch(&CountTask, &ok, 16), 0);
  ExpectEachOnce(ok);
}

TEST_F(ThreadPoolTest, NestedLaunchRunsSerially) {
  SetNumThreads(4);
  struct Outer {
    std::deque<Counts> inner;  // deque: Counts is not movable
    std::atomic<int> nested_status{0};
    Outer() {
      for (int i = 0; i < 8; ++i) inner.emplace_back(5);
    }
  } outer;
  auto task = [](int32_t i, int32_t, void* closure) -> int32_t {
    auto* o = static_cast<Outer*>(closure);
    auto self = std::this_thread::get_id();
    struct Inner {
      Counts* counts;
      std::thread::id thread;
      std::atomic<int> other_thread{0};
    } in{&o->inner[i], self};
    auto inner_task = [](int32_t j, int32_t n, void* c) -> int32_t {
      auto* in = static_cast<Inner*>(c);
      if (std::this_thread::get_id() != in->thread) in->other_thread.fetch_add(1);
      return CountTask(j, n, in->counts);
    };
    int32_t r = TesseraParallelLaunch(inner_task, &in, 5);
    if (r != 0 || in.other_thread.load() != 0) o->nested_status.store(1);
    return r;
  };
  EXPECT_EQ(TesseraParallelLaunch(task, &outer, 8), 0);
  EXPECT_EQ(outer.nested_status.load(), 0);
  for (const Counts& c : outer.inner) ExpectEachOnce(c);
}

TEST_F(ThreadPoolTest, SetNumThreadsValidates) {
  EXPECT_THROW(SetNumThreads(0), UserError);
  EXPECT_THROW(SetNumThreads(kMaxThreads + 1), UserError);
  EXPECT_THROW(SetNumThreads(-3), UserError);
  EXPECT_THROW(SetNumThreads(kMaxThreads + 1, /*force=*/true), UserError);
  // Above 4 x the hardware threads only when forced; the error says how.
  EXPECT_GE(ThreadLimit(), 4);
  SetNumThreads(2);
  EXPECT_THROW_WITH(SetNumThreads(ThreadLimit() + 1), UserError, "4 x the", "force");
  EXPECT_EQ(NumThreads(), 2);
  SetNumThreads(ThreadLimit() + 1, /*force=*/true);
  EXPECT_EQ(NumThreads(), ThreadLimit() + 1);
  SetNumThreads(2);
  std::atomic<int> threw{0};
  auto task = [](int32_t, int32_t, void* closure) -> int32_t {
    try {
      SetNumThreads(3);
    } catch (const UserError&) {
      static_cast<std::atomic<int>*>(closure)->fetch_add(1);
    }
    return 0;
  };
  EXPECT_EQ(TesseraParallelLaunch(task, &threw, 2), 0);
  EXPECT_EQ(threw.load(), 2);
  EXPECT_EQ(NumThreads(), 2);
}

TEST_F(ThreadPoolTest, ManyBackToBackLaunchesAndResizes) {
  for (int round = 0; round < 4; ++round) {
    SetNumThreads(1 + round % 3);
    for (int k = 0; k < 3000; ++k) {
      Counts c(3);
      ASSERT_EQ(TesseraParallelLaunch(&CountTask, &c, 3), 0);
      ExpectEachOnce(c);
    }
  }
}

TEST_F(ThreadPoolTest, ConcurrentLaunchesFromSeveralThreads) {
  SetNumThreads(3);
  std::atomic<int> failures{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&failures] {
      for (int k = 0; k < 500; ++k) {
        Counts c(9);
        if (TesseraParallelLaunch(&CountTask, &c, 9) != 0) failures.fetch_add(1);
        for (auto& h : c.hits)
          if (h.load() != 1) failures.fetch_add(1);
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(ThreadPoolTest, ParallelForCoversRange) {
  SetNumThreads(3);
  std::vector<int> v(1001, 0);
  ParallelFor(5, 1001, [&](int64_t i) { v[i] += static_cast<int>(i); });
  for (int i = 0; i < 1001; ++i) ASSERT_EQ(v[i], i < 5 ? 0 : i) << i;
  int calls = 0;
  ParallelFor(3, 3, [&](int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
  std::atomic<int> one{0};
  ParallelFor(0, 1, [&](int64_t) { one.fetch_add(1); });
  EXPECT_EQ(one.load(), 1);
}

TEST_F(ThreadPoolTest, ParallelForRethrowsFirstException) {
  SetNumThreads(4);
  std::atomic<int> done{0};
  EXPECT_THROW(ParallelFor(0, 100,
                           [&](int64_t i) {
                             if (i == 42) throw UserError("boom");
                             done.fetch_add(1);
                           }),
               UserError);
  EXPECT_GT(done.load(), 0);
  // Nested ParallelFor inside ParallelFor.
  std::vector<std::atomic<int>> grid(64);
  ParallelFor(0, 8, [&](int64_t i) { ParallelFor(0, 8, [&](int64_t j) { grid[i * 8 + j].fetch_add(1); }); });
  for (auto& g : grid) EXPECT_EQ(g.load(), 1);
}

// ScopedSerialLaunches: every task id still runs once, all on the calling thread; the pool is
// used again once the scope ends.
int32_t RecordThreadTask(int32_t i, int32_t, void* closure) {
  auto* ids = static_cast<std::vector<std::thread::id>*>(closure);
  (*ids)[i] = std::this_thread::get_id();
  return 0;
}

TEST_F(ThreadPoolTest, ScopedSerialLaunchesRunOnTheCaller) {
  SetNumThreads(2);
  std::vector<std::thread::id> ids(16);
  {
    ScopedSerialLaunches serial;
    ASSERT_EQ(TesseraParallelLaunch(RecordThreadTask, &ids, 16), 0);
    for (const auto& id : ids) EXPECT_EQ(id, std::this_thread::get_id());
    {
      ScopedSerialLaunches not_enabled(false);  // keeps the enclosing scope's serial mode
      ASSERT_EQ(TesseraParallelLaunch(RecordThreadTask, &ids, 16), 0);
      for (const auto& id : ids) EXPECT_EQ(id, std::this_thread::get_id());
    }
  }
  Counts c(8);
  EXPECT_EQ(TesseraParallelLaunch(CountTask, &c, 8), 0);
  ExpectEachOnce(c);
  EXPECT_EQ(c.seen_num_tasks.load(), 8);
}

TEST_F(ThreadPoolTest, AForkedChildRunsParallelLaunchesWithItsOwnWorkers) {
  // The tuner measures candidates in forked children (tune/measure.h): the parent's workers are
  // gone there, and a launch must neither hang on them nor run serially.
  SetNumThreads(2);
  Counts warm(16);
  ASSERT_EQ(TesseraParallelLaunch(CountTask, &warm, 16), 0);  // the parent's workers exist
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(30);  // a hang on the parent's workers ends the child with SIGALRM: a failure, not a stuck test
    std::atomic<int> other_threads{0};
    const std::thread::id self = std::this_thread::get_id();
    struct Seen {
      std::atomic<int>* other;
      std::thread::id self;
    } seen{&other_threads, self};
    for (int rep = 0; rep < 200 && other_threads.load() == 0; ++rep) {
      TesseraParallelLaunch(
          [](int32_t, int32_t, void* c) -> int32_t {
            auto* s = static_cast<Seen*>(c);
            if (std::this_thread::get_id() != s->self) s->other->fetch_add(1);
            std::this_thread::sleep_for(std::chrono::microseconds(200));
            return 0;
          },
          &seen, 8);
    }
    _exit(other_threads.load() > 0 ? 0 : 3);  // 3: every task ran on the forking thread
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child did not exit normally (status " << status << ")";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's launches never used a worker thread";
}

}  // namespace
}  // namespace tessera::runtime
