// Session: a loaded model for the Python package (python/tessera/_model.py's CompiledModel): one
// runtime::Module and a pool of executors (runtime::MakeExecutor: a GraphExecutor for a static
// program, a VirtualMachine for one with control flow), so that several Python threads can run the
// same model at once (each call leases an executor; graph_executor.h, "Threads").
//
// Run() on a graph program binds the caller's input arrays and fresh output arrays to the executor
// (BindInput / BindOutput): kernels read the inputs from the caller's memory and write the outputs
// into the arrays it returns; an input that is not 64-byte aligned, or an output that cannot be
// bound, is copied instead. On a VM program the kernels read the caller's inputs and the outputs
// are the VM's fresh arrays (vm.h); Profile() is for graph programs only (UserError otherwise).
// An input with symbolic dims (a VM program's, vm.h "Shapes") takes arrays of any extent there;
// the VM checks that the inputs agree on each symbol. Errors are tessera::UserError (wrong count,
// name, dtype, rank or static extent of an input, inputs disagreeing on a symbol) or
// tessera::Error (a failing kernel), naming the model.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tessera/runtime/executor.h"
#include "tessera/runtime/graph_executor.h"
#include "tessera/runtime/vm.h"
#include "tessera/runtime/module.h"
#include "tessera/runtime/ndarray.h"

namespace tessera::python {

/// A graph input or output: its name, shape and element type ("float32"). A VM program's symbolic
/// dim (runtime/executor.h) is -1 in `shape` and named in `dim_names` ("" for a static dim).
struct TensorInfo {
  std::string name;
  std::vector<int64_t> shape;
  std::string dtype;
  std::vector<std::string> dim_names;
};

class Session {
 public:
  /// Loads a model library (runtime::Module::LoadFromFile: UserError when it is missing, corrupt,
  /// for another machine or another Tessera version) and builds its first executor (external
  /// functions initialize now).
  explicit Session(const std::string& path);

  const std::vector<TensorInfo>& inputs() const { return inputs_; }
  const std::vector<TensorInfo>& outputs() const { return outputs_; }
  const std::string& path() const { return path_; }

  /// One run on `inputs` (graph input order, one per input); returns every output in graph order.
  /// Safe to call from several threads at once. Call without the GIL.
  std::vector<runtime::NDArray> Run(const std::vector<runtime::NDArray>& inputs);

  /// `warmup` untimed runs, then `repeat` timed runs on the same inputs; each run's wall time in
  /// seconds (steady clock). Call without the GIL.
  std::vector<double> Benchmark(const std::vector<runtime::NDArray>& inputs, int warmup, int repeat);

  /// `runs` profiled runs after one warm-up run: every kernel call's mean time (slowest first).
  std::vector<runtime::GraphExecutor::NodeProfile> Profile(const std::vector<runtime::NDArray>& inputs, int runs);

 private:
  class Lease;
  std::unique_ptr<runtime::Executor> Acquire();
  void Release(std::unique_ptr<runtime::Executor> executor);
  void BindInputs(runtime::Executor& ex, const std::vector<runtime::NDArray>& inputs) const;

  std::string path_;
  runtime::Module module_;
  std::vector<TensorInfo> inputs_, outputs_;
  std::vector<runtime::DataType> input_dtypes_;  // inputs_[i].dtype, parsed (checked every call)
  std::mutex mu_;
  std::vector<std::unique_ptr<runtime::Executor>> idle_;  // guarded by mu_
};

}  // namespace tessera::python
