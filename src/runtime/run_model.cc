// RunModel (run_model.h).
#include "tessera/runtime/run_model.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "tessera/runtime/executor.h"
#include "tessera/runtime/thread_pool.h"
#include "tessera/support/error.h"

namespace tessera::runtime {

double MedianRunSeconds(Executor& exec, int n) {
  using Clock = std::chrono::steady_clock;
  std::vector<double> secs(static_cast<size_t>(std::max(n, 1)));
  for (double& s : secs) {
    const Clock::time_point t0 = Clock::now();
    exec.Run();
    s = std::chrono::duration<double>(Clock::now() - t0).count();
  }
  std::sort(secs.begin(), secs.end());
  const size_t m = secs.size();
  return m % 2 ? secs[m / 2] : 0.5 * (secs[m / 2 - 1] + secs[m / 2]);
}

namespace {

double MedianMs(Executor& exec, int n) {
  for (int i = 0; i < std::max(3, n / 10); ++i) exec.Run();  // warm-up
  return MedianRunSeconds(exec, n) * 1e3;
}

}  // namespace

RunModelResult RunModel(const Module& module, const std::vector<NamedTensor>& inputs, const RunModelOptions& options) {
  TESSERA_CHECK(options.threads >= 0, "'", module.origin(), "': the thread count must be >= 0 (0: all cores), not ",
                options.threads);
  TESSERA_CHECK(options.bench >= 0, "'", module.origin(), "': the number of timed runs must be >= 0, not ",
                options.bench);
  if (options.threads > 0) SetNumThreads(options.threads, options.force_threads);
  std::unique_ptr<Executor> executor = MakeExecutor(module);  // a graph or a VM, by the program's format
  Executor& exec = *executor;
  std::vector<bool> given(exec.NumInputs(), false);
  for (const NamedTensor& in : inputs) {
    const int index = exec.InputIndex(in.name);
    TESSERA_CHECK(index < 0 || !given[index], "'", module.origin(), "': input '", in.name, "' was given twice");
    exec.SetInput(in.name, in.value);  // checks the name (listing the valid ones), shape and dtype
    given[index] = true;
  }
  for (int i = 0; i < exec.NumInputs(); ++i) {
    TESSERA_CHECK(given[i], "'", module.origin(), "': input '", exec.InputName(i), "' (shape ",
                  ShapeToString(exec.InputShape(i), exec.InputDimNames(i)), ", ", exec.InputDType(i).str(),
                  ") was not given: pass --input ", exec.InputName(i), "=FILE.npy");
  }
  exec.Run();
  RunModelResult result;
  for (int i = 0; i < exec.NumOutputs(); ++i) result.outputs.push_back({exec.OutputName(i), exec.GetOutput(i)});
  if (options.bench > 0) result.median_ms = MedianMs(exec, options.bench);
  return result;
}

}  // namespace tessera::runtime
