// Measure / MeasureReference (measure.h): a forked worker per candidate (worker.h), its result one
// line on a pipe.
#include "tessera/tune/measure.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>

#include "tessera/codegen/codegen_llvm.h"
#include "tessera/ir/op.h"
#include "tessera/runtime/thread_pool.h"
#include "tessera/support/error.h"
#include "tessera/tir/transform/lower.h"
#include "tessera/tune/test_data.h"
#include "tessera/tune/worker.h"

namespace tessera::tune {

double MeasureResult::MedianSecs() const {
  if (run_secs.empty()) return 0;
  std::vector<double> v = run_secs;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

namespace {

using Clock = std::chrono::steady_clock;

// The graph executor runs a node this small serially when that is faster (its kSmallNodeSeconds).
constexpr double kSmallKernelSeconds = 30e-6;

double SecondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// One kernel argument: 64-byte aligned host memory.
struct ArgBuffer {
  DataType dtype;
  size_t bytes = 0;
  std::unique_ptr<void, void (*)(void*)> data{nullptr, std::free};
};

ArgBuffer Allocate(const tir::Buffer& b) {
  ArgBuffer a;
  a.dtype = b->dtype;
  int64_t n = 1;
  for (const ir::PrimExpr& d : b->shape) n *= ir::get_const_int(d);
  a.bytes = static_cast<size_t>(n) * static_cast<size_t>(b->dtype.bytes());
  const size_t rounded = std::max<size_t>(64, (a.bytes + 63) / 64 * 64);
  a.data.reset(std::aligned_alloc(64, rounded));
  TESSERA_CHECK(a.data, "cannot allocate ", rounded, " bytes for kernel argument '", b->name, "'");
  std::memset(a.data.get(), 0, rounded);
  return a;
}

// Writes back and evicts every cache line of [p, p + bytes) from every cache level (x86 clflush,
// AArch64 dc civac); elsewhere nothing.
void EvictFromCaches(const void* p, size_t bytes) {
  const char* c = static_cast<const char*>(p);
#if defined(__x86_64__) || defined(__i386__)
  for (size_t off = 0; off < bytes; off += 64) _mm_clflush(c + off);
  _mm_mfence();
#elif defined(__aarch64__)
  for (size_t off = 0; off < bytes; off += 64) asm volatile("dc civac, %0" ::"r"(c + off) : "memory");
  asm volatile("dsb ish" ::: "memory");
#else
  (void)c;
  (void)bytes;
#endif
}

std::string KernelSymbol(const tir::PrimFunc& f) {
  auto it = f->attrs.find("global_symbol");
  return it != f->attrs.end() ? it->second : f->name;
}

/// The worker's job: build, run, check / write the reference, time. Returns the result line.
std::string WorkerJob(const TuneTask& task, const tir::PrimFunc& scheduled, const target::Target& target,
                      const MeasureOptions& opt, const Reference& ref, bool write_reference) {
  if (opt.num_threads > 0) runtime::SetNumThreads(opt.num_threads);
  const std::string& reference_path = ref.outputs_path;
  const Clock::time_point t0 = Clock::now();
  tir::IRModule mod;
  mod.Add(scheduled);
  // The baseline (the hand-written schedule) compiled beside the candidate under its own symbol.
  const bool interleave = !write_reference && ref.scheduled.defined() && ref.secs > 0;
  const std::string baseline_symbol = KernelSymbol(scheduled) + "__baseline";
  if (interleave) {
    std::map<std::string, std::string> attrs = ref.scheduled->attrs;
    attrs["global_symbol"] = baseline_symbol;
    mod.Add(tir::PrimFunc::make(baseline_symbol, ref.scheduled->params, ref.scheduled->body, attrs,
                                ref.scheduled->shape_vars));
  }
  runtime::Module module = [&] {
    try {
      return codegen::BuildJIT(tir::transform::LowerToFlat(mod, tir::transform::PassContext()), target);
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string("build: ") + e.what());
    }
  }();
  TesseraKernelFn kernel = module.GetKernel(KernelSymbol(scheduled));
  TesseraKernelFn baseline = interleave ? module.GetKernel(baseline_symbol) : nullptr;
  const double build_secs = SecondsSince(t0);
  const std::string prefix = std::to_string(build_secs) + " ";

  std::vector<ArgBuffer> args;
  std::vector<void*> ptrs;
  for (size_t i = 0; i < scheduled->params.size(); ++i) {
    args.push_back(Allocate(scheduled->params[i]));
    if (static_cast<int>(i) < task.num_inputs) FillPseudoRandom(args.back().data.get(), args.back().bytes, args.back().dtype, 1000 + i);
    ptrs.push_back(args.back().data.get());
  }
  if (int32_t st = kernel(ptrs.data()); st != 0) return "error " + prefix + "run: the kernel returned status " + std::to_string(st);

  // Check against (or write) the reference outputs.
  if (!reference_path.empty()) {
    std::string ref;
    if (!write_reference) {
      std::ifstream in(reference_path, std::ios::binary);
      ref.assign(std::istreambuf_iterator<char>(in), {});
    }
    size_t offset = 0;
    for (size_t i = task.num_inputs; i < args.size(); ++i) {
      if (write_reference) {
        ref.append(static_cast<const char*>(args[i].data.get()), args[i].bytes);
        continue;
      }
      if (offset + args[i].bytes > ref.size()) return "error " + prefix + "reference file '" + reference_path + "' is too short";
      std::string diff = CompareOutput(args[i].data.get(), ref.data() + offset, args[i].bytes, args[i].dtype, opt.tolerance,
                                       i - task.num_inputs);
      if (!diff.empty()) return "error " + prefix + "wrong answer: " + diff;
      offset += args[i].bytes;
    }
    if (write_reference) {
      std::ofstream out(reference_path, std::ios::binary | std::ios::trunc);
      out.write(ref.data(), static_cast<std::streamsize>(ref.size()));
      if (!out) return "error " + prefix + "cannot write the reference file '" + reference_path + "'";
    }
  }

  // Timing. Cold weights (MeasureOptions::cold_weights_bytes): the inputs after the first are
  // evicted from the caches before every call, and only the call is timed.
  std::vector<const ArgBuffer*> cold;
  size_t cold_bytes = 0;
  for (size_t i = 1; i < args.size() && static_cast<int>(i) < task.num_inputs; ++i) {
    cold.push_back(&args[i]);
    cold_bytes += args[i].bytes;
  }
  if (opt.cold_weights_bytes < 0 || cold_bytes < static_cast<size_t>(opt.cold_weights_bytes)) cold.clear();
  auto timed_call = [&](TesseraKernelFn k) {
    for (const ArgBuffer* a : cold) EvictFromCaches(a->data.get(), a->bytes);
    const Clock::time_point t = Clock::now();
    k(ptrs.data());
    return SecondsSince(t);
  };
  int number = opt.number;
  if (number <= 0) {
    number = 1;
    for (;;) {
      double busy = 0;
      for (int i = 0; i < number; ++i) busy += timed_call(kernel);
      const double ms = busy * 1e3;
      if (ms >= opt.min_repeat_ms || number >= (1 << 20)) break;
      number = ms <= 0 ? number * 10 : std::max(number + 1, static_cast<int>(number * opt.min_repeat_ms / ms * 1.1));
    }
  }
  // One repeat of `number` calls of k: mean seconds per call.
  auto time_block = [&](TesseraKernelFn k) {
    double busy = 0;
    for (int i = 0; i < number; ++i) busy += timed_call(k);
    return busy / number;
  };
  // The repeats of the candidate and, with a baseline, of the baseline right after each.
  struct Repeats {
    std::vector<double> candidate, baseline;
    double Median() const {
      std::vector<double> v = candidate;
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    }
  };
  auto time_repeats = [&] {
    Repeats r;
    for (int i = 0; i < std::max(1, opt.repeat); ++i) {
      r.candidate.push_back(time_block(kernel));
      if (baseline) r.baseline.push_back(time_block(baseline));
    }
    return r;
  };
  Repeats reps = time_repeats();
  // As the graph executor does for a small node (runtime/graph_executor.cc, kSmallNodeSeconds):
  // when launching serially is faster, that is the time the kernel takes in the model.
  if (reps.Median() < kSmallKernelSeconds) {
    runtime::ScopedSerialLaunches serial;
    Repeats serial_reps = time_repeats();
    if (serial_reps.Median() < reps.Median()) reps = serial_reps;
  }
  std::vector<double> secs = reps.candidate;
  if (baseline) {
    // Drift-corrected: the candidate's time relative to the baseline's in the same repeat, on
    // the scale of the baseline's reference time.
    for (size_t i = 0; i < secs.size(); ++i)
      if (reps.baseline[i] > 0) secs[i] = secs[i] / reps.baseline[i] * ref.secs;
  }
  std::sort(secs.begin(), secs.end());
  std::string line = "ok " + prefix;
  for (double s : secs) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.9g ", s);
    line += buf;
  }
  return line;
}

}  // namespace

MeasureResult MeasureReference(const TuneTask& task, const tir::PrimFunc& scheduled, const target::Target& target,
                               const MeasureOptions& options, const std::string& outputs_path) {
  const Reference ref{tir::PrimFunc(), outputs_path, 0};
  return RunInWorker([&] { return WorkerJob(task, scheduled, target, options, ref, true); }, options.timeout_s);
}

MeasureResult Measure(const TuneTask& task, const tir::PrimFunc& scheduled, const target::Target& target,
                      const MeasureOptions& options, const Reference& reference) {
  return RunInWorker([&] { return WorkerJob(task, scheduled, target, options, reference, false); }, options.timeout_s);
}

}  // namespace tessera::tune
