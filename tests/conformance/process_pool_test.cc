#include "process_pool.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>

namespace tessera::conformance {
namespace {

CaseResult Pass(std::string msg = "") {
  CaseResult r;
  r.status = Status::kPass;
  r.message = std::move(msg);
  return r;
}

TEST(ProcessPool, ReturnsEachChildsResultByIndex) {
  PoolOptions o;
  o.jobs = 2;
  int done = 0;
  auto results = RunInChildren(
      5, o,
      [](size_t i) {
        CaseResult r;
        r.status = i % 2 ? Status::kFail : Status::kUnsupported;
        r.message = "item " + std::to_string(i) + "\nsecond line";
        return r;
      },
      [&](size_t, const CaseResult&) { ++done; });
  ASSERT_EQ(results.size(), 5u);
  EXPECT_EQ(done, 5);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(results[i].status, i % 2 ? Status::kFail : Status::kUnsupported);
    EXPECT_EQ(results[i].message, "item " + std::to_string(i) + "\nsecond line");
  }
}

TEST(ProcessPool, ASignalIsACrashAndTheRunGoesOn) {
  PoolOptions o;
  o.jobs = 2;
  auto results = RunInChildren(3, o, [](size_t i) {
    if (i == 1) {
      std::fprintf(stderr, "about to fault\n");
      raise(SIGSEGV);
    }
    return Pass();
  });
  EXPECT_EQ(results[0].status, Status::kPass);
  EXPECT_EQ(results[1].status, Status::kCrash);
  EXPECT_NE(results[1].message.find("killed by signal 11"), std::string::npos) << results[1].message;
  EXPECT_NE(results[1].message.find("about to fault"), std::string::npos) << results[1].message;
  EXPECT_EQ(results[2].status, Status::kPass);
}

TEST(ProcessPool, AbortExitAndExceptionsAreCrashes) {
  PoolOptions o;
  auto results = RunInChildren(3, o, [](size_t i) -> CaseResult {
    if (i == 0) abort();
    if (i == 1) _exit(3);
    throw std::runtime_error("boom");
  });
  EXPECT_EQ(results[0].status, Status::kCrash);
  EXPECT_NE(results[0].message.find("signal 6"), std::string::npos) << results[0].message;
  EXPECT_EQ(results[1].status, Status::kCrash);
  EXPECT_NE(results[1].message.find("exited with code 3 without a result"), std::string::npos) << results[1].message;
  EXPECT_EQ(results[2].status, Status::kCrash);
  EXPECT_NE(results[2].message.find("uncaught exception: boom"), std::string::npos) << results[2].message;
}

TEST(ProcessPool, ATimeOutKillsTheChild) {
  PoolOptions o;
  o.jobs = 2;
  o.timeout_s = 0.5;
  auto t0 = std::chrono::steady_clock::now();
  auto results = RunInChildren(2, o, [](size_t i) {
    if (i == 0) std::this_thread::sleep_for(std::chrono::seconds(30));
    return Pass();
  });
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 5.0);
  EXPECT_EQ(results[0].status, Status::kCrash);
  EXPECT_NE(results[0].message.find("timed out after 0.5 s"), std::string::npos) << results[0].message;
  EXPECT_EQ(results[1].status, Status::kPass);
}

TEST(ProcessPool, ChattyChildDoesNotBlock) {
  PoolOptions o;
  auto results = RunInChildren(1, o, [](size_t) {
    std::string line(1000, 'x');
    for (int i = 0; i < 2000; ++i) std::printf("%s\n", line.c_str());  // 2 MB, far more than a pipe holds
    std::fflush(stdout);
    return Pass("ok");
  });
  EXPECT_EQ(results[0].status, Status::kPass);
  EXPECT_EQ(results[0].message, "ok");
}

TEST(ProcessPool, RunsJobsInParallel) {
  PoolOptions o;
  o.jobs = 4;
  auto t0 = std::chrono::steady_clock::now();
  auto results = RunInChildren(4, o, [](size_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    return Pass();
  });
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 1.2);  // serially it would take 1.6 s
  for (const auto& r : results) {
    EXPECT_EQ(r.status, Status::kPass);
    EXPECT_GE(r.seconds, 0.35);
  }
}

}  // namespace
}  // namespace tessera::conformance
