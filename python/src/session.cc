#include "session.h"

#include <chrono>

#include "tessera/support/error.h"

namespace tessera::python {

using runtime::Executor;
using runtime::GraphExecutor;
using runtime::NDArray;
using runtime::VirtualMachine;

// An executor borrowed from the pool for one call, returned on every path (also on errors).
class Session::Lease {
 public:
  explicit Lease(Session& s) : session_(s), executor_(s.Acquire()) {}
  ~Lease() {
    if (auto* graph = dynamic_cast<GraphExecutor*>(executor_.get())) {
      graph->ReleaseBindings();  // drop the caller's arrays: the pool must not keep them alive
      graph->SetProfiling(false);
    }
    session_.Release(std::move(executor_));
  }
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  Executor& operator*() { return *executor_; }
  Executor* operator->() { return executor_.get(); }
  /// The executor as a graph executor (zero-copy bindings, profiling), or nullptr for a VM.
  GraphExecutor* graph() { return dynamic_cast<GraphExecutor*>(executor_.get()); }
  VirtualMachine* vm() { return dynamic_cast<VirtualMachine*>(executor_.get()); }

 private:
  Session& session_;
  std::unique_ptr<Executor> executor_;
};

Session::Session(const std::string& path) : path_(path), module_(runtime::Module::LoadFromFile(path)) {
  std::unique_ptr<Executor> first = runtime::MakeExecutor(module_);
  for (int i = 0; i < first->NumInputs(); ++i) {
    inputs_.push_back(
        {first->InputName(i), first->InputShape(i), first->InputDType(i).str(), first->InputDimNames(i)});
    input_dtypes_.push_back(first->InputDType(i));
  }
  for (int i = 0; i < first->NumOutputs(); ++i)
    outputs_.push_back(
        {first->OutputName(i), first->OutputShape(i), first->OutputDType(i).str(), first->OutputDimNames(i)});
  idle_.push_back(std::move(first));
}

std::unique_ptr<Executor> Session::Acquire() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      auto ex = std::move(idle_.back());
      idle_.pop_back();
      return ex;
    }
  }
  // Another thread holds every executor: a new one (num_threads 0: the pool is left as it is).
  return runtime::MakeExecutor(module_);
}

void Session::Release(std::unique_ptr<Executor> executor) {
  std::lock_guard<std::mutex> lock(mu_);
  idle_.push_back(std::move(executor));
}

void Session::BindInputs(Executor& ex, const std::vector<NDArray>& inputs) const {
  TESSERA_CHECK(inputs.size() == inputs_.size(), "model '", path_, "' takes ", inputs_.size(), " input",
                inputs_.size() == 1 ? "" : "s", ", got ", inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorInfo& info = inputs_[i];
    const NDArray& a = inputs[i];
    TESSERA_CHECK(a.dtype() == input_dtypes_[i] && runtime::ShapeAccepts(info.shape, a.shape()), "input '",
                  info.name, "' expects ", info.dtype, " ", runtime::ShapeToString(info.shape, info.dim_names),
                  ", got ", a.dtype().str(), " ", runtime::ShapeToString(a.shape()));
    if (auto* graph = dynamic_cast<GraphExecutor*>(&ex)) graph->BindInput(static_cast<int>(i), a);
    else ex.SetInput(static_cast<int>(i), a);  // the VM keeps a handle, copies nothing
  }
}

std::vector<NDArray> Session::Run(const std::vector<NDArray>& inputs) {
  Lease ex(*this);
  BindInputs(*ex, inputs);
  if (VirtualMachine* vm = ex.vm()) return vm->Invoke(inputs);  // fresh outputs, no copy
  GraphExecutor& graph = *ex.graph();
  std::vector<NDArray> outputs(outputs_.size());
  std::vector<bool> bound(outputs_.size());
  for (size_t i = 0; i < outputs_.size(); ++i) {
    outputs[i] = NDArray::Empty(graph.OutputShape(static_cast<int>(i)), graph.OutputDType(static_cast<int>(i)));
    bound[i] = graph.BindOutput(static_cast<int>(i), outputs[i]);
  }
  graph.Run();
  for (size_t i = 0; i < outputs_.size(); ++i)
    if (!bound[i]) outputs[i] = ex->GetOutput(static_cast<int>(i));
  return outputs;
}

std::vector<double> Session::Benchmark(const std::vector<NDArray>& inputs, int warmup, int repeat) {
  TESSERA_CHECK(warmup >= 0 && repeat > 0, "benchmark: repeat must be positive and warmup non-negative, got repeat=",
                repeat, ", warmup=", warmup);
  Lease ex(*this);
  BindInputs(*ex, inputs);
  for (int i = 0; i < warmup; ++i) ex->Run();
  std::vector<double> seconds;
  seconds.reserve(static_cast<size_t>(repeat));
  for (int i = 0; i < repeat; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    ex->Run();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return seconds;
}

std::vector<GraphExecutor::NodeProfile> Session::Profile(const std::vector<NDArray>& inputs, int runs) {
  TESSERA_CHECK(runs > 0, "profile: runs must be positive, got ", runs);
  Lease ex(*this);
  GraphExecutor* graph = ex.graph();
  TESSERA_CHECK(graph != nullptr, "model '", path_, "' is a VM program (it has control flow): per-kernel profiles are "
                "only available for graph programs; time it with benchmark()");
  BindInputs(*graph, inputs);
  graph->Run();  // warm-up: first touch of the storages, launch calibration
  graph->SetProfiling(true);
  for (int i = 0; i < runs; ++i) graph->Run();
  return graph->Profile();
}

}  // namespace tessera::python
