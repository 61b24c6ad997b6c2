// Prints the overhead of TesseraParallelLaunch (not a test: no timing assertions).
//   runtime_launch_bench [threads] [launches]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "tessera/runtime/thread_pool.h"

namespace {
int32_t EmptyTask(int32_t, int32_t, void* closure) {
  static_cast<std::atomic<int>*>(closure)->fetch_add(1, std::memory_order_relaxed);
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : tessera::runtime::NumThreads();
  int launches = argc > 2 ? std::atoi(argv[2]) : 100000;
  tessera::runtime::SetNumThreads(threads);
  std::atomic<int> count{0};
  for (int i = 0; i < 1000; ++i) TesseraParallelLaunch(&EmptyTask, &count, 0);  // warm up
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < launches; ++i) TesseraParallelLaunch(&EmptyTask, &count, 0);
  auto t1 = std::chrono::steady_clock::now();
  double us = std::chrono::duration<double, std::micro>(t1 - t0).count() / launches;
  std::printf("threads=%d launches=%d: %.3f us per launch of %d empty tasks (back to back)\n", threads,
              launches, us, threads);
  return 0;
}
