#include "tessera/runtime/thread_pool.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <system_error>
#include <new>
#include <thread>

#include <pthread.h>
#include <vector>

#include "tessera/support/error.h"

namespace tessera::runtime {
namespace {

thread_local bool t_in_parallel = false;
thread_local bool t_serial_launches = false;  // ScopedSerialLaunches

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// How long an idle worker (or a caller waiting for workers) polls before blocking
// on a futex: about 20-80 us of pause instructions, long enough to span the gap
// between two back-to-back kernels, short enough not to burn a core when idle.
constexpr int kSpinIterations = 1 << 12;
// A launch without a task count splits its loop into this many shares per thread, claimed one at
// a time: when one core runs slower (a busy SMT sibling; on this machine the second vCPU's FMA
// throughput changes from run to run), the other takes more shares instead of waiting for it.
// Static halves at 2 threads: ResNet-50 60.2 / 64.3 ms, 8 shares: 59.2 / 58.0 (medians of 6
// alternated runs in two series); MobileNetV2 5.16 -> 4.91 ms.
constexpr int kSharesPerThread = 8;

constexpr uint64_t kClosed = uint64_t{1} << 31;
constexpr uint64_t kJoinedMask = kClosed - 1;

int DefaultNumThreads() {
  if (const char* env = std::getenv("TESSERA_NUM_THREADS")) {
    char* end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && v >= 1 && v <= kMaxThreads) return static_cast<int>(v);
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw ? static_cast<int>(hw) : 1;
}

// One per worker, on its own cache line: the caller stores the job's epoch there
// to signal the worker, and the worker waits on it.
struct alignas(64) WorkerSlot {
  std::atomic<uint32_t> epoch{0};
};

class Pool {
 public:
  static Pool& Global() {
    static Pool pool(DefaultNumThreads());
    return pool;
  }

  explicit Pool(int n) {
    Start(n);
    // A forked child (the tuner's measurement workers, tune/measure.h) has only the forking
    // thread: the workers this pool started are gone there, so it starts its own.
    static std::once_flag registered;
    std::call_once(registered, [] { pthread_atfork(nullptr, nullptr, [] { Global().RestartInChild(); }); });
  }
  ~Pool() { Stop(); }

  int num_threads() const { return num_threads_.load(std::memory_order_relaxed); }

  void SetNumThreads(int n, bool force) {
    TESSERA_CHECK(n >= 1 && n <= kMaxThreads, "SetNumThreads(", n, "): the thread count must be in [1, ",
                  kMaxThreads, "]");
    TESSERA_CHECK(force || n <= ThreadLimit(), "SetNumThreads(", n, "): ", n, " threads is more than 4 x the ",
                  std::thread::hardware_concurrency(), " hardware threads of this machine (", ThreadLimit(),
                  "): oversubscribed cores slow every kernel. To use them anyway, force it (tessera run "
                  "--force-threads, tessera.set_num_threads(n, force=True))");
    TESSERA_CHECK(!t_in_parallel, "SetNumThreads cannot be called from inside a parallel task");
    std::lock_guard<std::mutex> lock(launch_mu_);
    const int previous = num_threads();
    if (n == previous) return;
    Stop();
    try {
      Start(n);
    } catch (const std::system_error& e) {  // the system refused a thread: keep the old pool
      Stop();
      Start(previous);
      TESSERA_THROW(UserError, "SetNumThreads(", n, "): the system could not start that many threads (", e.what(),
                    "); the pool keeps ", previous, " threads");
    }
  }

  int32_t Launch(TesseraParallelTaskFn task, void* closure, int32_t n) {
    if (n <= 0) n = num_threads() > 1 ? num_threads() * kSharesPerThread : 1;
    if (n <= 1 || num_threads() <= 1 || t_in_parallel || t_serial_launches) return RunSerial(task, closure, n);
    std::unique_lock<std::mutex> lock(launch_mu_, std::try_to_lock);
    if (!lock.owns_lock()) return RunSerial(task, closure, n);  // another thread holds the pool
    // Counted under the lock: a SetNumThreads on another thread may have replaced the workers
    // (and their slots) since num_threads() was read above.
    const int helpers = std::min<int>(n, num_threads()) - 1;
    if (helpers <= 0) return RunSerial(task, closure, n);

    uint32_t epoch = ++job_epoch_;
    if (epoch == 0) epoch = ++job_epoch_;  // 0 is every slot's initial value
    task_ = task;
    closure_ = closure;
    n_ = n;
    next_.store(1, std::memory_order_relaxed);  // task 0 is the caller's
    status_.store(0, std::memory_order_relaxed);
    state_.store(static_cast<uint64_t>(epoch) << 32, std::memory_order_release);  // open, none joined
    for (int w = 0; w < helpers; ++w) {
      slots_[w].epoch.store(epoch, std::memory_order_release);
      slots_[w].epoch.notify_one();
    }

    t_in_parallel = true;
    int32_t r = task(0, n, closure);
    if (r != 0) status_.store(r, std::memory_order_relaxed);
    RunTasks();
    t_in_parallel = false;

    // Every task id is claimed: close the job so late workers stay out, then wait
    // only for the workers that joined (not for ones the OS has not scheduled yet).
    uint64_t s = state_.fetch_or(kClosed, std::memory_order_acq_rel) | kClosed;
    for (int i = 0; (s & kJoinedMask) != 0 && i < kSpinIterations; ++i) {
      CpuRelax();
      s = state_.load(std::memory_order_acquire);
    }
    while ((s & kJoinedMask) != 0) {
      state_.wait(s, std::memory_order_acquire);
      s = state_.load(std::memory_order_acquire);
    }
    return status_.load(std::memory_order_relaxed);
  }

 private:
  static int32_t RunSerial(TesseraParallelTaskFn task, void* closure, int32_t n) {
    bool outer = t_in_parallel;
    t_in_parallel = true;
    int32_t status = 0;
    for (int32_t i = 0; i < n; ++i) {
      int32_t r = task(i, n, closure);
      if (r != 0) status = r;
    }
    t_in_parallel = outer;
    return status;
  }

  // Claims task ids from next_ until none is left.
  void RunTasks() {
    const int32_t n = n_;
    for (;;) {
      int32_t i = next_.fetch_add(1, std::memory_order_relaxed);
      if (i >= n) break;
      int32_t r = task_(i, n, closure_);
      if (r != 0) status_.store(r, std::memory_order_relaxed);
    }
  }

  void WorkerLoop(int index) {
    WorkerSlot& slot = slots_[index];
    uint32_t seen = 0;
    for (;;) {
      uint32_t e = slot.epoch.load(std::memory_order_acquire);
      for (int i = 0; e == seen && i < kSpinIterations; ++i) {
        CpuRelax();
        e = slot.epoch.load(std::memory_order_acquire);
      }
      while (e == seen) {
        slot.epoch.wait(seen, std::memory_order_acquire);
        e = slot.epoch.load(std::memory_order_acquire);
      }
      seen = e;
      if (stop_.load(std::memory_order_acquire)) return;
      // Join job `e` unless it is already closed (or long gone).
      uint64_t s = state_.load(std::memory_order_acquire);
      bool joined = false;
      while ((s >> 32) == e && !(s & kClosed)) {
        if (state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
          joined = true;
          break;
        }
      }
      if (!joined) continue;
      t_in_parallel = true;
      RunTasks();
      t_in_parallel = false;
      uint64_t old = state_.fetch_sub(1, std::memory_order_acq_rel);
      if ((old & kClosed) && (old & kJoinedMask) == 1) state_.notify_one();
    }
  }

  // In a forked child: the parent's worker threads do not exist here, so their std::thread
  // objects are abandoned (never joined: that would wait forever) and a fresh set is started.
  // The fork happened between launches of the forking thread (the only thread left), so
  // no launch is in flight; the launch mutex is re-created in case another parent thread held it.
  void RestartInChild() {
    new (&launch_mu_) std::mutex();
    new std::vector<std::thread>(std::move(workers_));  // leaked on purpose: see above
    workers_ = std::vector<std::thread>();
    state_.store(0, std::memory_order_relaxed);
    job_epoch_ = 0;
    Start(num_threads());
  }

  void Start(int n) {
    num_threads_.store(n, std::memory_order_relaxed);
    stop_.store(false, std::memory_order_relaxed);
    slots_ = std::make_unique<WorkerSlot[]>(n);
    workers_.reserve(n - 1);
    for (int w = 0; w < n - 1; ++w) workers_.emplace_back([this, w] { WorkerLoop(w); });
  }

  void Stop() {
    stop_.store(true, std::memory_order_release);
    for (size_t w = 0; w < workers_.size(); ++w) {
      slots_[w].epoch.fetch_add(1, std::memory_order_release);
      slots_[w].epoch.notify_one();
    }
    for (auto& t : workers_) t.join();
    workers_.clear();
  }

  std::mutex launch_mu_;  // held by the one launch (or SetNumThreads) using the workers
  std::atomic<int> num_threads_{1};
  std::atomic<bool> stop_{false};
  std::vector<std::thread> workers_;
  std::unique_ptr<WorkerSlot[]> slots_;

  // The current job: written by the caller before it bumps the epochs.
  TesseraParallelTaskFn task_ = nullptr;
  void* closure_ = nullptr;
  int32_t n_ = 0;
  uint32_t job_epoch_ = 0;  // id of the latest launch (never 0)
  alignas(64) std::atomic<int32_t> next_{0};  // next task id to claim
  // The job's epoch (high 32 bits), kClosed, and how many workers joined and have
  // not finished yet (low bits). Workers join with a CAS that fails once the caller
  // closed the job or a newer job replaced it, so a late worker never touches it.
  alignas(64) std::atomic<uint64_t> state_{0};
  std::atomic<int32_t> status_{0};  // a non-zero task result, if any
};

}  // namespace

int ThreadLimit() { return 4 * std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }
void SetNumThreads(int n, bool force) { Pool::Global().SetNumThreads(n, force); }
int NumThreads() { return Pool::Global().num_threads(); }
bool InParallelRegion() { return t_in_parallel; }

ScopedSerialLaunches::ScopedSerialLaunches(bool enable) : previous_(t_serial_launches) {
  if (enable) t_serial_launches = true;
}
ScopedSerialLaunches::~ScopedSerialLaunches() { t_serial_launches = previous_; }

}  // namespace tessera::runtime

extern "C" int32_t TesseraParallelLaunch(TesseraParallelTaskFn task, void* closure,
                                         int32_t num_tasks) {
  return tessera::runtime::Pool::Global().Launch(task, closure, num_tasks);
}
