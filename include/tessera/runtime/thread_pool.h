// The runtime thread pool: runs the parallel loops of generated kernels.
//
// One process-wide pool of persistent workers (created once, re-created only by
// SetNumThreads). A launch of n tasks signals min(n, NumThreads()) - 1 workers;
// the calling thread runs task 0 and then, like the workers, claims the remaining
// task ids from a shared counter, so any thread may run any task id. Once every id
// is claimed the caller closes the launch and waits only for the workers that
// joined it: a worker the OS has not scheduled yet never delays a launch (the
// caller then simply ran more tasks itself). Idle workers spin for a few tens of
// microseconds (back-to-back kernels find them awake) and then block on a futex
// (std::atomic::wait), so an idle process uses no CPU.
//
// Nesting and concurrency: a launch from inside a task, or while another thread's
// launch holds the pool, runs its tasks serially on the calling thread (never a
// deadlock). Kernels are microseconds, so a launch is a few atomic operations.
//
// fork(): a child process starts its own workers (pthread_atfork), so a forked measurement
// worker (tune/measure.h) runs parallel kernels like its parent. Fork between launches.
//
// Thread count: hardware concurrency by default, or the environment variable
// TESSERA_NUM_THREADS when it is set to a positive integer.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <type_traits>

#include "tessera/runtime/kernel_abi.h"

extern "C" {
/// The runtime's TesseraParallelLaunchFn (kernel_abi.h), stored by Module into each
/// model library's __tessera_parallel_launch. Runs task(i, n, closure) for i in
/// [0, n), n = num_tasks or, when num_tasks <= 0, 8 x NumThreads() shares claimed one at a
/// time (1 share with one thread). Returns 0 when every
/// task returned 0, else the non-zero value of one failed task (all tasks still run).
int32_t TesseraParallelLaunch(TesseraParallelTaskFn task, void* closure, int32_t num_tasks);
}

namespace tessera::runtime {

/// The most threads SetNumThreads accepts, forced or not.
inline constexpr int kMaxThreads = 4096;

/// The most threads SetNumThreads accepts without `force`: 4 x the machine's hardware threads
/// (std::thread::hardware_concurrency; at least 4). More threads than that only oversubscribe
/// the cores, which slows every kernel; a count like 1000000000 is a typo.
int ThreadLimit();

/// Sets the pool's thread count, the caller included (1 <= n <= ThreadLimit(), or up to
/// kMaxThreads with force; 1 = run serially). Joins the old workers and starts n - 1 new ones;
/// waits for a running launch to finish. Throws UserError when n is out of range (naming the
/// limit and how to force it), when called from inside a parallel task, or when the system
/// cannot start the threads (the pool then keeps its previous size). TESSERA_NUM_THREADS, the
/// user's explicit setting, counts as forced.
void SetNumThreads(int n, bool force = false);
/// The pool's thread count, the caller included.
int NumThreads();
/// True while the calling thread runs a task of a parallel launch.
bool InParallelRegion();

/// While alive (and constructed with enable = true), the launches of the calling thread run
/// their tasks serially on it: the same task ids and count, so the same results, without waking
/// any worker. The graph executor uses it for kernels too small to gain from the workers.
class ScopedSerialLaunches {
 public:
  explicit ScopedSerialLaunches(bool enable = true);
  ~ScopedSerialLaunches();
  ScopedSerialLaunches(const ScopedSerialLaunches&) = delete;
  ScopedSerialLaunches& operator=(const ScopedSerialLaunches&) = delete;

 private:
  bool previous_;
};

namespace detail {
template <typename Fn>
struct ParallelForClosure {
  int64_t begin, end;
  Fn* fn;
  std::exception_ptr error;  // written only by the task that fails first
  std::atomic<int> failed{0};
};

template <typename Fn>
int32_t ParallelForTask(int32_t task_id, int32_t num_tasks, void* closure) {
  auto* c = static_cast<ParallelForClosure<Fn>*>(closure);
  int64_t total = c->end - c->begin;
  int64_t chunk = total / num_tasks, rest = total % num_tasks;
  int64_t lo = c->begin + task_id * chunk + (task_id < rest ? task_id : rest);
  int64_t hi = lo + chunk + (task_id < rest ? 1 : 0);
  try {
    for (int64_t i = lo; i < hi; ++i) (*c->fn)(i);
  } catch (...) {
    if (c->failed.exchange(1) == 0) c->error = std::current_exception();
    return -1;
  }
  return 0;
}
}  // namespace detail

/// Calls fn(i) for every i in [begin, end), split into NumThreads() contiguous
/// chunks run in parallel (serially when nested). If any fn throws, the first
/// exception is rethrown here after every chunk has finished.
template <typename Fn>
void ParallelFor(int64_t begin, int64_t end, Fn&& fn) {
  if (end <= begin) return;
  using F = std::remove_reference_t<Fn>;
  int64_t n = end - begin;
  int32_t tasks = static_cast<int32_t>(n < NumThreads() ? n : NumThreads());
  detail::ParallelForClosure<F> closure{begin, end, &fn, nullptr};
  TesseraParallelLaunch(&detail::ParallelForTask<F>, &closure, tasks);
  if (closure.error) std::rethrow_exception(closure.error);
}

}  // namespace tessera::runtime
