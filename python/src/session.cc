#include "session.h"

#include <chrono>

#include "tessera/support/error.h"

namespace tessera::python {

using runtime::GraphExecutor;
using runtime::NDArray;

// An executor borrowed from the pool for one call, returned on every path (also on errors).
class Session::Lease {
 public:
  explicit Lease(Session& s) : session_(s), executor_(s.Acquire()) {}
  ~Lease() {
    executor_->ReleaseBindings();  // drop the caller's arrays: the pool must not keep them alive
    executor_->SetProfiling(false);
    session_.Release(std::move(executor_));
  }
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  GraphExecutor& operator*() { return *executor_; }
  GraphExecutor* operator->() { return executor_.get(); }

 private:
  Session& session_;
  std::unique_ptr<GraphExecutor> executor_;
};

Session::Session(const std::string& path) : path_(path), module_(runtime::Module::LoadFromFile(path)) {
  auto first = std::make_unique<GraphExecutor>(module_);
  for (int i = 0; i < first->NumInputs(); ++i) {
    inputs_.push_back({first->InputName(i), first->InputShape(i), first->InputDType(i).str()});
    input_dtypes_.push_back(first->InputDType(i));
  }
  for (int i = 0; i < first->NumOutputs(); ++i)
    outputs_.push_back({first->OutputName(i), first->OutputShape(i), first->OutputDType(i).str()});
  idle_.push_back(std::move(first));
}

std::unique_ptr<GraphExecutor> Session::Acquire() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      auto ex = std::move(idle_.back());
      idle_.pop_back();
      return ex;
    }
  }
  // Another thread holds every executor: a new one (num_threads 0: the pool is left as it is).
  return std::make_unique<GraphExecutor>(module_);
}

void Session::Release(std::unique_ptr<GraphExecutor> executor) {
  std::lock_guard<std::mutex> lock(mu_);
  idle_.push_back(std::move(executor));
}

void Session::BindInputs(GraphExecutor& ex, const std::vector<NDArray>& inputs) const {
  TESSERA_CHECK(inputs.size() == inputs_.size(), "model '", path_, "' takes ", inputs_.size(), " input",
                inputs_.size() == 1 ? "" : "s", ", got ", inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorInfo& info = inputs_[i];
    const NDArray& a = inputs[i];
    TESSERA_CHECK(a.dtype() == input_dtypes_[i] && a.shape() == info.shape, "input '", info.name, "' expects ",
                  info.dtype, " ", runtime::ShapeToString(info.shape), ", got ", a.dtype().str(), " ",
                  runtime::ShapeToString(a.shape()));
    ex.BindInput(static_cast<int>(i), a);
  }
}

std::vector<NDArray> Session::Run(const std::vector<NDArray>& inputs) {
  Lease ex(*this);
  BindInputs(*ex, inputs);
  std::vector<NDArray> outputs(outputs_.size());
  std::vector<bool> bound(outputs_.size());
  for (size_t i = 0; i < outputs_.size(); ++i) {
    outputs[i] = NDArray::Empty(ex->OutputShape(static_cast<int>(i)), ex->OutputDType(static_cast<int>(i)));
    bound[i] = ex->BindOutput(static_cast<int>(i), outputs[i]);
  }
  ex->Run();
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
  BindInputs(*ex, inputs);
  ex->Run();  // warm-up: first touch of the storages, launch calibration
  ex->SetProfiling(true);
  for (int i = 0; i < runs; ++i) ex->Run();
  return ex->Profile();
}

}  // namespace tessera::python
