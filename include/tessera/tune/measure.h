// Measurement of candidates (AutoTVM's builder + runner, MetaSchedule's LocalBuilder /
// LocalRunner): each candidate is lowered (tir/transform/lower.h), compiled (codegen BuildJIT)
// and timed in its own forked worker process, so that whatever a candidate does, the tuner goes on:
//
//   * a schedule or compile error    -> error "build: <message>"
//   * a crash (SIGSEGV, SIGILL, ...)  -> error "crash: <signal name>"
//   * a hang past timeout_s           -> the worker is killed; error "timeout after <t> s"
//   * a wrong answer                  -> error "wrong answer: ..." (outputs differ from the
//                                        reference's on the same inputs beyond the tolerance)
//
// Drift: this machine's speed changes by tens of percent over minutes (a busy sibling core, clock
// changes), so times taken minutes apart are not comparable. A candidate is therefore compiled
// together with the task's hand-written schedule (Reference::scheduled) and each of its repeats
// is followed by one of the baseline's; its recorded time is (candidate / baseline) of each
// repeat times the baseline's reference time (Reference::secs): every candidate of a task on one
// scale. (Without a Reference schedule, the candidate's own times.)
//
// Inputs: every kernel parameter before task.num_inputs gets deterministic pseudo-random values
// (FillPseudoRandom, test_data.h: floats uniform in [-1, 1), integers and booleans 0 or 1): the
// same for every candidate of a task; outputs are compared by CompareOutput. The reference is the task's hand-written schedule, run once
// (MeasureReference); its outputs are kept in a file the candidates' workers read.
//
// Timing: one untimed call, then `repeat` repeats of `number` calls each; run_secs holds the
// mean seconds per call of each repeat. number = 0 picks the smallest count whose repeat lasts at
// least min_repeat_ms (sub-millisecond kernels are otherwise timed by the clock's resolution).
// A kernel faster than 30 us is timed a second time with serial launches
// (runtime::ScopedSerialLaunches), and the faster of the two is its time, as the graph executor
// runs such a node serially when that is faster.
//
// Cold weights: in a model every weight is read once per run, from memory (the other kernels' weights
// pass through the caches in between), while a kernel's first input was just written by the kernel
// before it. Timed over and over on its own, a kernel finds its weights in the caches, and a schedule
// that wins there can lose in the model (BERT-base on znver4, tuned at 2 threads with warm weights:
// its kernels faster one by one, the model 2 % slower end to end; tuned with cold weights, 1.4 %
// faster). So when a kernel's inputs after the first (weights, biases, a
// residual) hold at least cold_weights_bytes, they are evicted from every cache level before every
// call (x86 clflush; AArch64 dc civac) and only the call is timed: TVM's enable_cpu_cache_flush,
// which evicts every argument but the first. The default, 1 MiB, is a core's L2 on the machines we
// tune on: smaller weights can stay in the caches across a run.
// The pool's thread count is num_threads (0: the runtime's default, TESSERA_NUM_THREADS).
//
// The worker is a fork of the calling process (RunInWorker, worker.h): the caller must not be
// inside a parallel launch, and the runtime thread pool restarts in the child (runtime/thread_pool.h).
#pragma once

#include <string>
#include <vector>

#include "tessera/target/target.h"
#include "tessera/tir/function.h"
#include "tessera/tune/task.h"

namespace tessera::tune {

struct MeasureOptions {
  int number = 0;            ///< calls per repeat; 0: chosen from min_repeat_ms
  int repeat = 3;            ///< timed repeats
  int min_repeat_ms = 20;    ///< with number = 0: the least duration of one repeat
  double timeout_s = 30;     ///< build + run, per candidate
  /// Evict the inputs after the first before every call when they hold at least this many bytes
  /// (0: always; negative: never). See "Cold weights" above.
  int64_t cold_weights_bytes = int64_t{1} << 20;
  int num_threads = 0;       ///< runtime threads; 0: the runtime's default
  double tolerance = 1e-4;   ///< max |out - ref| / max(1, max |ref|) for float outputs; ints exact
};

struct MeasureResult {
  std::vector<double> run_secs;  ///< per repeat: mean seconds per call
  std::string error;             ///< empty when the candidate built, ran and matched
  double build_secs = 0;         ///< lowering + LLVM compile time in the worker
  bool ok() const { return error.empty() && !run_secs.empty(); }
  /// The median of run_secs (0 when none).
  double MedianSecs() const;
};

/// The hand-written schedule of a task, once measured: what its candidates are checked and timed
/// against.
struct Reference {
  tir::PrimFunc scheduled;   ///< its scheduled PrimFunc; undefined: candidates timed on their own
  std::string outputs_path;  ///< its outputs (MeasureReference); empty: outputs not checked
  double secs = 0;           ///< its median time (MeasureReference): the scale of candidates' times
};

/// Measures the hand-written schedule of `task` (`scheduled` is its scheduled PrimFunc) and writes
/// its outputs to `outputs_path`, which later candidates are checked against.
MeasureResult MeasureReference(const TuneTask& task, const tir::PrimFunc& scheduled, const target::Target& target,
                               const MeasureOptions& options, const std::string& outputs_path);

/// Measures one candidate against `reference` (outputs compared, times drift-corrected: see
/// above). `target` must run on this machine (driver::RunsOnHost); otherwise error "build: ...".
MeasureResult Measure(const TuneTask& task, const tir::PrimFunc& scheduled, const target::Target& target,
                      const MeasureOptions& options, const Reference& reference);

}  // namespace tessera::tune
