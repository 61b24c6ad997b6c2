// Prints the cost of TesseraParallelLaunch (not a test: no timing assertions).
//   runtime_launch_bench [threads] [launches] [work_iters]
// work_iters = 0: empty tasks (pure launch overhead). work_iters > 0: each of the
// `threads` tasks runs a dependent floating-point chain of that length, and the
// time is compared with running all of them serially on the calling thread.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "tessera/runtime/thread_pool.h"

namespace {

struct Work {
  int iters;
  std::atomic<double> sink{0};
};

int32_t WorkTask(int32_t, int32_t, void* closure) {
  auto* w = static_cast<Work*>(closure);
  double x = 1.0;
  for (int i = 0; i < w->iters; ++i) x = x * 1.0000001 + 1e-9;
  w->sink.store(x, std::memory_order_relaxed);
  return 0;
}

double MicrosPerLaunch(int launches, int tasks, Work* w, bool serial) {
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < launches; ++i) {
    if (serial) {
      for (int t = 0; t < tasks; ++t) WorkTask(t, tasks, w);
    } else {
      TesseraParallelLaunch(&WorkTask, w, tasks);
    }
  }
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::micro>(t1 - t0).count() / launches;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : tessera::runtime::NumThreads();
  int launches = argc > 2 ? std::atoi(argv[2]) : 100000;
  int iters = argc > 3 ? std::atoi(argv[3]) : 0;
  tessera::runtime::SetNumThreads(threads);
  Work w{iters};
  MicrosPerLaunch(1000, threads, &w, false);  // warm up
  double par = MicrosPerLaunch(launches, threads, &w, false);
  if (iters == 0) {
    std::printf("threads=%d: %.3f us per launch of %d empty tasks (back to back)\n", threads, par, threads);
  } else {
    double ser = MicrosPerLaunch(launches, threads, &w, true);
    std::printf("threads=%d work=%d iters/task: parallel %.2f us, serial %.2f us per launch (speedup %.2fx)\n",
                threads, iters, par, ser, ser / par);
  }
  return 0;
}
