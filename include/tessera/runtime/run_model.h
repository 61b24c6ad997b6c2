// RunModel: one run of a compiled model on named inputs, and optionally its median latency —
// what `tessera run`, `tessera-runtime run` and the RPC server (rpc/server.h) do with a model.
//
// The model runs once on the inputs (the outputs are that run's); with bench = N > 0 it then
// runs max(3, N / 10) warm-up runs and N timed runs and reports the median wall time of the
// timed ones, in milliseconds (steady clock; the mean of the middle two for even N).
//
// The model's program is a static graph or a VM executable (control flow): MakeExecutor
// (executor.h) picks the GraphExecutor or the VirtualMachine by its format.
//
// Errors (UserError, naming `module.origin()`): an input name the program does not have (the
// message lists them), a dtype or shape other than the program's, an input given twice, an input
// the program needs that was not given, bench < 0 or threads < 0, a program of no known format;
// a failing kernel makes it throw tessera::Error naming the node (graph_executor.h) or the
// instruction (vm.h).
#pragma once

#include <string>
#include <vector>

#include "tessera/runtime/module.h"
#include "tessera/runtime/ndarray.h"

namespace tessera::runtime {

/// A tensor with its program input / output name.
struct NamedTensor {
  std::string name;
  NDArray value;
};

struct RunModelOptions {
  int threads = 0;  ///< thread pool size (SetNumThreads); 0: leave it as it is
  int bench = 0;    ///< timed runs for median_ms; 0: no timing
  bool force_threads = false;  ///< allow more than ThreadLimit() threads (SetNumThreads's force)
};

struct RunModelResult {
  std::vector<NamedTensor> outputs;  ///< every program output, in program order
  double median_ms = -1;             ///< median latency in ms; < 0 when not measured (bench 0)
};

/// Runs `module`'s program on `inputs` (see the header comment).
RunModelResult RunModel(const Module& module, const std::vector<NamedTensor>& inputs,
                        const RunModelOptions& options = {});

class Executor;

/// The median wall time, in seconds, of `n` (at least 1) Run()s of `exec`, each timed on its own (no
/// warm-up: the caller runs it first where that matters). The median, not the mean: on a shared
/// machine other load comes in bursts that only add time. Throws what Run() throws.
double MedianRunSeconds(Executor& exec, int n);

}  // namespace tessera::runtime
