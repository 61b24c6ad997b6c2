#include "tessera/runtime/graph_executor.h"

#include <map>

#include "graph_plan.h"
#include "tessera/runtime/param_io.h"
#include "tessera/runtime/thread_pool.h"
#include "tessera/support/error.h"

namespace tessera::runtime {

struct GraphExecutor::Impl {
  struct Node {
    std::string name;
    std::string kernel_name;
    TesseraKernelFn kernel;
    std::vector<void*> args;
  };
  struct IO {
    std::string name;
    NDArray value;  // a view into a storage, or a param
  };

  explicit Impl(Module m) : module(std::move(m)) {}

  Module module;
  std::vector<NDArray> storages;
  std::map<std::string, NDArray> params;
  std::vector<IO> inputs, outputs;
  std::vector<Node> nodes;

  int CheckIndex(int index, const std::vector<IO>& list, const char* what) const {
    TESSERA_CHECK(index >= 0 && index < static_cast<int>(list.size()), what, " index ", index,
                  " is out of range: the model has ", list.size(), " ", what, "s");
    return index;
  }
  static std::string Names(const std::vector<IO>& list) {
    std::string s;
    for (const IO& io : list) s += (s.empty() ? "'" : ", '") + io.name + "'";
    return s.empty() ? "(none)" : s;
  }
  static int Find(const std::vector<IO>& list, const std::string& name) {
    for (size_t i = 0; i < list.size(); ++i)
      if (list[i].name == name) return static_cast<int>(i);
    return -1;
  }
};

GraphExecutor::GraphExecutor(Module module, int num_threads)
    : impl_(std::make_unique<Impl>(std::move(module))) {
  if (num_threads > 0) SetNumThreads(num_threads);
  Impl& m = *impl_;
  const std::string& origin = m.module.origin();
  detail::GraphPlan plan = detail::ParseGraphPlan(m.module.GraphJson(), origin);

  std::string_view blob = m.module.ParamsBlob();
  if (!blob.empty()) {
    try {
      m.params = LoadParams(blob.data(), blob.size());
    } catch (const UserError& e) {
      TESSERA_THROW(UserError, "module '", origin, "': ", e.what());
    }
  }

  for (const auto& s : plan.storages)
    m.storages.push_back(NDArray::Empty({static_cast<int64_t>(s.size_bytes)}, DataType::UInt(8)));

  std::vector<NDArray> values;
  values.reserve(plan.values.size());
  for (const detail::PlanValue& v : plan.values) {
    if (v.kind == detail::PlanValue::Kind::kParam) {
      auto it = m.params.find(v.param);
      TESSERA_CHECK(it != m.params.end(), "module '", origin, "': value ", v.id, " uses parameter '",
                    v.param, "', which the params blob does not contain; rebuild the model");
      TESSERA_CHECK(it->second.dtype() == v.dtype && it->second.shape() == v.shape, "module '", origin,
                    "': parameter '", v.param, "' is ", it->second.dtype().str(), " ",
                    ShapeToString(it->second.shape()), " in the params blob but the graph expects ",
                    v.dtype.str(), " ", ShapeToString(v.shape), "; rebuild the model");
      values.push_back(it->second);
    } else {
      values.push_back(m.storages[v.storage].CreateView(v.shape, v.dtype, v.offset_bytes));
    }
  }

  for (const auto& io : plan.inputs) m.inputs.push_back({io.name, values[io.value]});
  for (const auto& io : plan.outputs) m.outputs.push_back({io.name, values[io.value]});

  for (const detail::PlanNode& n : plan.nodes) {
    void* sym = m.module.Lookup(n.kernel);
    TESSERA_CHECK(sym != nullptr, "module '", origin, "': node '", n.name, "' calls kernel '", n.kernel,
                  "', which the library does not define; rebuild the model");
    Impl::Node node{n.name, n.kernel, reinterpret_cast<TesseraKernelFn>(sym), {}};
    for (int a : n.args) node.args.push_back(values[a].raw_data());
    m.nodes.push_back(std::move(node));
  }
}

GraphExecutor::~GraphExecutor() = default;
GraphExecutor::GraphExecutor(GraphExecutor&&) noexcept = default;
GraphExecutor& GraphExecutor::operator=(GraphExecutor&&) noexcept = default;

int GraphExecutor::NumInputs() const { return static_cast<int>(impl_->inputs.size()); }
int GraphExecutor::NumOutputs() const { return static_cast<int>(impl_->outputs.size()); }
int GraphExecutor::NumNodes() const { return static_cast<int>(impl_->nodes.size()); }

size_t GraphExecutor::StorageBytes() const {
  size_t total = 0;
  for (const NDArray& s : impl_->storages) total += s.NBytes();
  return total;
}

const std::string& GraphExecutor::InputName(int i) const {
  return impl_->inputs[impl_->CheckIndex(i, impl_->inputs, "input")].name;
}
const std::string& GraphExecutor::OutputName(int i) const {
  return impl_->outputs[impl_->CheckIndex(i, impl_->outputs, "output")].name;
}
const std::vector<int64_t>& GraphExecutor::InputShape(int i) const {
  return impl_->inputs[impl_->CheckIndex(i, impl_->inputs, "input")].value.shape();
}
const std::vector<int64_t>& GraphExecutor::OutputShape(int i) const {
  return impl_->outputs[impl_->CheckIndex(i, impl_->outputs, "output")].value.shape();
}
DataType GraphExecutor::InputDType(int i) const {
  return impl_->inputs[impl_->CheckIndex(i, impl_->inputs, "input")].value.dtype();
}
DataType GraphExecutor::OutputDType(int i) const {
  return impl_->outputs[impl_->CheckIndex(i, impl_->outputs, "output")].value.dtype();
}
int GraphExecutor::InputIndex(const std::string& name) const { return Impl::Find(impl_->inputs, name); }
int GraphExecutor::OutputIndex(const std::string& name) const { return Impl::Find(impl_->outputs, name); }

void GraphExecutor::SetInput(const std::string& name, const NDArray& value) {
  int i = InputIndex(name);
  TESSERA_CHECK(i >= 0, "SetInput: the model has no input named '", name,
                "'; its inputs are: ", Impl::Names(impl_->inputs));
  SetInput(i, value);
}

void GraphExecutor::SetInput(int index, const NDArray& value) {
  const Impl::IO& in = impl_->inputs[impl_->CheckIndex(index, impl_->inputs, "input")];
  TESSERA_CHECK(value.defined(), "SetInput: the array given for input '", in.name, "' is null");
  TESSERA_CHECK(value.dtype() == in.value.dtype(), "SetInput: input '", in.name, "' expects dtype ",
                in.value.dtype().str(), ", got ", value.dtype().str());
  TESSERA_CHECK(value.shape() == in.value.shape(), "SetInput: input '", in.name, "' expects shape ",
                ShapeToString(in.value.shape()), ", got ", ShapeToString(value.shape()));
  in.value.CopyFrom(value);
}

void GraphExecutor::Run() {
  for (const Impl::Node& n : impl_->nodes) {
    int32_t r = n.kernel(n.args.data());
    if (r != 0)
      TESSERA_THROW(Error, "node '", n.name, "' (kernel '", n.kernel_name, "') of module '",
                    impl_->module.origin(), "' failed with status ", r);
  }
}

NDArray GraphExecutor::GetOutput(int index) const {
  return impl_->outputs[impl_->CheckIndex(index, impl_->outputs, "output")].value.Clone();
}

NDArray GraphExecutor::GetOutput(const std::string& name) const {
  int i = OutputIndex(name);
  TESSERA_CHECK(i >= 0, "GetOutput: the model has no output named '", name,
                "'; its outputs are: ", Impl::Names(impl_->outputs));
  return GetOutput(i);
}

}  // namespace tessera::runtime
