// Measure / MeasureReference (measure.h): a forked worker per candidate, its result one line on a
// pipe, the parent enforcing the time limit and reading the worker's fate from waitpid.
#include "tessera/tune/measure.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

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

/// Deterministic inputs: the same for every candidate of a task (a fixed linear congruential
/// sequence per argument).
void FillInput(ArgBuffer& a, uint64_t seed) {
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  auto next = [&] {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(s >> 33);
  };
  const size_t n = a.bytes / std::max(1, a.dtype.bytes());
  if (a.dtype.is_float() && a.dtype.bits() == 32) {
    float* p = static_cast<float*>(a.data.get());
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<float>(next()) / 2147483648.0f - 1.0f;
  } else if (a.dtype.is_float() && a.dtype.bits() == 64) {
    double* p = static_cast<double*>(a.data.get());
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<double>(next()) / 2147483648.0 - 1.0;
  } else {
    // Integers and booleans: 0 or 1 in the low byte (valid indices, valid bools).
    unsigned char* p = static_cast<unsigned char*>(a.data.get());
    const size_t width = static_cast<size_t>(std::max(1, a.dtype.bytes()));
    for (size_t i = 0; i < n; ++i) p[i * width] = static_cast<unsigned char>(next() & 1);
  }
}

/// max |x - r| / max(1, max |r|) over float32 / float64 outputs; NaN where only one side has one
/// is an infinite difference. Other dtypes compare bytes.
std::string Compare(const ArgBuffer& out, const char* ref, double tolerance, size_t index) {
  const size_t n = out.bytes / std::max(1, out.dtype.bytes());
  auto check = [&](auto* x, const auto* r) -> std::string {
    double diff = 0, scale = 1;
    for (size_t i = 0; i < n; ++i) {
      const double a = x[i], b = r[i];
      if (std::isnan(a) != std::isnan(b)) return "NaN differs at element " + std::to_string(i);
      if (std::isnan(a)) continue;
      if (std::isinf(b) || std::isinf(a)) {
        if (a != b) return "infinity differs at element " + std::to_string(i);
        continue;
      }
      diff = std::max(diff, std::fabs(a - b));
      scale = std::max(scale, std::fabs(b));
    }
    if (diff / scale > tolerance) {
      std::ostringstream os;
      os << "output " << index << ": max |out - ref| = " << diff << " (reference max " << scale
         << ", tolerance " << tolerance << " relative)";
      return os.str();
    }
    return "";
  };
  if (out.dtype.is_float() && out.dtype.bits() == 32)
    return check(static_cast<const float*>(out.data.get()), reinterpret_cast<const float*>(ref));
  if (out.dtype.is_float() && out.dtype.bits() == 64)
    return check(static_cast<const double*>(out.data.get()), reinterpret_cast<const double*>(ref));
  if (std::memcmp(out.data.get(), ref, out.bytes) != 0) return "output " + std::to_string(index) + " differs bitwise";
  return "";
}

std::string KernelSymbol(const tir::PrimFunc& f) {
  auto it = f->attrs.find("global_symbol");
  return it != f->attrs.end() ? it->second : f->name;
}

std::string OneLine(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
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
    if (static_cast<int>(i) < task.num_inputs) FillInput(args.back(), 1000 + i);
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
      std::string diff = Compare(args[i], ref.data() + offset, opt.tolerance, i - task.num_inputs);
      if (!diff.empty()) return "error " + prefix + "wrong answer: " + diff;
      offset += args[i].bytes;
    }
    if (write_reference) {
      std::ofstream out(reference_path, std::ios::binary | std::ios::trunc);
      out.write(ref.data(), static_cast<std::streamsize>(ref.size()));
      if (!out) return "error " + prefix + "cannot write the reference file '" + reference_path + "'";
    }
  }

  // Timing.
  std::vector<char> flush(opt.flush_cache ? 64 << 20 : 0);
  auto call = [&](TesseraKernelFn k) {
    if (!flush.empty()) std::memset(flush.data(), static_cast<int>(flush[0] + 1), flush.size());
    return k(ptrs.data());
  };
  int number = opt.flush_cache ? 1 : opt.number;
  if (number <= 0) {
    number = 1;
    for (;;) {
      const Clock::time_point t = Clock::now();
      for (int i = 0; i < number; ++i) call(kernel);
      const double ms = SecondsSince(t) * 1e3;
      if (ms >= opt.min_repeat_ms || number >= (1 << 20)) break;
      number = ms <= 0 ? number * 10 : std::max(number + 1, static_cast<int>(number * opt.min_repeat_ms / ms * 1.1));
    }
  }
  // One repeat of `number` calls of k: mean seconds per call.
  auto time_block = [&](TesseraKernelFn k) {
    double busy = 0;
    for (int i = 0; i < number; ++i) {
      if (!flush.empty()) std::memset(flush.data(), static_cast<int>(flush[0] + 1), flush.size());
      const Clock::time_point t = Clock::now();
      k(ptrs.data());
      busy += SecondsSince(t);
    }
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

/// Runs `job` in a forked worker under the time limit; parses its line.
MeasureResult RunInWorker(const std::function<std::string()>& job, double timeout_s) {
  int fds[2];
  TESSERA_CHECK(pipe(fds) == 0, "tuning: cannot create a pipe for the measurement worker: ", std::strerror(errno));
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  TESSERA_CHECK(pid >= 0, "tuning: cannot fork a measurement worker: ", std::strerror(errno));
  if (pid == 0) {
    close(fds[0]);
    // A fault kills the worker by its signal (the parent reports "crash: SIG..."), whatever handler
    // the tuning process installed (a sanitizer's, a host application's).
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) {
      struct sigaction dfl {};
      dfl.sa_handler = SIG_DFL;
      sigaction(sig, &dfl, nullptr);
    }
    std::string line;
    try {
      line = job();
    } catch (const std::exception& e) {
      line = std::string("error 0 ") + (std::strncmp(e.what(), "build: ", 7) == 0 ? "" : "run: ") + e.what();
    } catch (...) {
      line = "error 0 run: unknown exception";
    }
    line = OneLine(line) + "\n";
    for (size_t done = 0; done < line.size();) {
      const ssize_t w = write(fds[1], line.data() + done, line.size() - done);
      if (w <= 0) break;
      done += static_cast<size_t>(w);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  const Clock::time_point start = Clock::now();
  bool timed_out = false;
  for (;;) {
    const double left = timeout_s - SecondsSince(start);
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int r = poll(&p, 1, static_cast<int>(std::min(left * 1e3 + 1, 1e9)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char buf[4096];
    const ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  MeasureResult res;
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "timeout after %.3g s", timeout_s);
    res.error = buf;
    return res;
  }
  if (WIFSIGNALED(status)) {
    const char* abbrev = sigabbrev_np(WTERMSIG(status));
    res.error = std::string("crash: SIG") + (abbrev ? abbrev : std::to_string(WTERMSIG(status)).c_str());
    return res;
  }
  std::istringstream in(text);
  std::string kind;
  in >> kind >> res.build_secs;
  if (kind == "ok") {
    for (double t; in >> t;) res.run_secs.push_back(t);
    if (res.run_secs.empty()) res.error = "run: the worker reported no timing";
  } else if (kind == "error") {
    std::getline(in >> std::ws, res.error);
  } else {
    res.error = "crash: the worker exited with status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                " without a result";
  }
  return res;
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
