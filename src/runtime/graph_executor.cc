#include "tessera/runtime/graph_executor.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "executor_common.h"
#include "launch_calibration.h"
#include "tessera/runtime/graph_plan.h"
#include "tessera/runtime/thread_pool.h"
#include "tessera/support/error.h"

namespace tessera::runtime {

struct GraphExecutor::Impl {
  struct Node {
    std::string name;
    std::string kernel_name;
    TesseraKernelFn kernel;
    std::vector<void*> args;
    std::string arg_shapes;  // for the profile: the shape of every argument
    std::vector<std::string> checks;  // the model nodes whose run-time checks it makes
  };
  struct Guard {
    int input;     // index into inputs
    NDArray value; // what every run must give it
  };
  struct IO {
    std::string name;
    NDArray planned;  // a view into a storage, or a param
    int root = -1;    // the plan value whose arguments Bind* repoints (the value's alias root)
    bool bindable = false;  // outputs: BindOutput may repoint `root` (inputs always can)
  };

  explicit Impl(Module m) : module(std::move(m)) {}

  Module module;
  std::vector<NDArray> storages;
  std::map<std::string, NDArray> params;
  std::vector<IO> inputs, outputs;
  std::vector<Node> nodes;
  std::vector<Guard> guards;
  // For each plan value that is an alias root: every (node, argument) referring to it or to one
  // of its aliases, as Bind* repoints them.
  std::vector<std::vector<std::pair<int, int>>> arg_positions;
  // Per alias root: the caller's array its arguments point at (Bind*), else null (its storage).
  std::vector<NDArray> bound;
  // TESSERA_PROFILE=1: accumulated seconds per node, printed when the executor is destroyed.
  bool profile = std::getenv("TESSERA_PROFILE") != nullptr;
  std::vector<double> node_seconds;
  int64_t profiled_runs = 0;

  // Per-node launch mode, calibrated on the first runs when the pool has workers
  // (launch_calibration.h): short, so it ends within a benchmark's warm-up.
  LaunchCalibration calibration;

  // TESSERA_PROFILE=1 prints the table when the executor goes.
  bool print_profile = profile;

  std::vector<NodeProfile> Profile() const {
    std::vector<NodeProfile> rows;
    if (profiled_runs == 0) return rows;
    for (size_t i = 0; i < nodes.size(); ++i)
      rows.push_back({nodes[i].name, nodes[i].kernel_name, nodes[i].arg_shapes,
                      1e3 * node_seconds[i] / static_cast<double>(profiled_runs), i < calibration.sites() && calibration.Serial(i)});
    std::stable_sort(rows.begin(), rows.end(),
                     [](const NodeProfile& a, const NodeProfile& b) { return a.ms_per_run > b.ms_per_run; });
    return rows;
  }

  ~Impl() {
    if (!print_profile || profiled_runs == 0) return;
    std::vector<NodeProfile> rows = Profile();
    double total = 0;
    for (const NodeProfile& r : rows) total += r.ms_per_run;
    std::fprintf(stderr, "profile: %lld runs, %.4f ms per run in kernels\n", static_cast<long long>(profiled_runs),
                 total);
    for (const NodeProfile& r : rows)
      std::fprintf(stderr, "  %9.4f ms %5.1f%%  %s%s  %s\n", r.ms_per_run, total > 0 ? 100.0 * r.ms_per_run / total : 0.0,
                   r.kernel.c_str(), r.serial ? " (serial)" : "", r.arg_shapes.c_str());
  }

  // Points every argument of `root`'s group at `array`'s data, or back at the planned storage
  // `planned` when `array` is null.
  void Repoint(int root, const NDArray& array, const NDArray& planned) {
    void* data = (array.defined() ? array : planned).raw_data();
    for (const auto& [node, arg] : arg_positions[root]) nodes[node].args[arg] = data;
    bound[root] = array;
  }
  // Where `io`'s bytes are now: a view of the array bound to its root, else its planned value.
  NDArray Current(const IO& io) const {
    const NDArray& b = bound[io.root];
    return b.defined() ? b.CreateView(io.planned.shape(), io.planned.dtype(), 0) : io.planned;
  }

  // Every input the model was specialized for holds its value (graph JSON "guards").
  void CheckGuards() const {
    for (const Guard& g : guards) CheckGuard(module.origin(), inputs[g.input].name, Current(inputs[g.input]), g.value);
  }

  // Throws the error of a kernel that returned `status` (kernel_abi.h).
  [[noreturn]] void Fail(const Node& node, int32_t status) const {
    ThrowKernelFailure(status, "node '" + node.name + "' (kernel '" + node.kernel_name + "') of module '" +
                                   module.origin() + "'",
                       node.checks);
  }
};

GraphExecutor::GraphExecutor(Module module, int num_threads)
    : impl_(std::make_unique<Impl>(std::move(module))) {
  if (num_threads > 0) SetNumThreads(num_threads);
  Impl& m = *impl_;
  const std::string& origin = m.module.origin();
  GraphPlan plan = ParseGraphPlan(m.module.GraphJson(), origin);

  m.params = LoadModuleParams(m.module);

  for (const auto& s : plan.storages)
    m.storages.push_back(NDArray::Empty({static_cast<int64_t>(s.size_bytes)}, DataType::UInt(8)));

  std::vector<NDArray> values;
  values.reserve(plan.values.size());
  for (const PlanValue& v : plan.values) {
    if (v.kind == PlanValue::Kind::kParam) {
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

  auto root_of = [&](int v) { return plan.values[v].alias_of >= 0 ? plan.values[v].alias_of : v; };
  for (const auto& io : plan.inputs) m.inputs.push_back({io.name, values[io.value], root_of(io.value), false});
  std::vector<int> bound_roots;
  for (const auto& io : plan.outputs) {
    const int root = root_of(io.value);
    // An output can be written into the caller's array when a kernel writes it: not an input or
    // a param, and not the same bytes as an earlier output.
    const bool bindable = plan.values[root].kind == PlanValue::Kind::kIntermediate &&
                          std::find(bound_roots.begin(), bound_roots.end(), root) == bound_roots.end();
    if (bindable) bound_roots.push_back(root);
    m.outputs.push_back({io.name, values[io.value], root, bindable});
  }
  m.arg_positions.resize(plan.values.size());
  m.bound.resize(plan.values.size());

  for (const PlanNode& n : plan.nodes) {
    void* sym = m.module.Lookup(n.kernel);
    TESSERA_CHECK(sym != nullptr, "module '", origin, "': node '", n.name, "' calls kernel '", n.kernel,
                  "', which the library does not define; rebuild the model");
    Impl::Node node{n.name, n.kernel, reinterpret_cast<TesseraKernelFn>(sym), {}, {}, n.checks};
    for (int a : n.args) {
      m.arg_positions[root_of(a)].emplace_back(static_cast<int>(m.nodes.size()), static_cast<int>(node.args.size()));
      node.args.push_back(values[a].raw_data());
      node.arg_shapes += ShapeToString(values[a].shape());
    }
    m.nodes.push_back(std::move(node));
  }
  for (const PlanGuard& g : plan.guards) {
    auto it = m.params.find(g.param);
    const NDArray& planned = m.inputs[g.input].planned;
    TESSERA_CHECK(it != m.params.end() && it->second.dtype() == planned.dtype() &&
                      it->second.shape() == planned.shape(),
                  "module '", origin, "': the guard of input '", m.inputs[g.input].name, "' names parameter '", g.param,
                  "', which the params blob lacks or holds with another type; rebuild the model");
    m.guards.push_back({g.input, it->second});
  }
  // External kernels (BYOC) prepare their state now, so that a failure is a load-time error.
  for (const PlanExternal& x : plan.external) {
    void* init = m.module.Lookup(x.symbol + kKernelInitSuffix);
    if (!init) continue;
    char message[1024] = {0};
    if (reinterpret_cast<TesseraKernelInitFn>(init)(message, sizeof message) != 0) {
      message[sizeof message - 1] = '\0';
      TESSERA_THROW(UserError, "module '", origin, "': external function '", x.symbol, "' (BYOC backend '", x.compiler,
                    "') failed to initialize: ", message[0] ? message : "no reason given",
                    "; check that the backend's library works on this machine, or compile without --byoc ",
                    x.compiler);
    }
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
  return impl_->inputs[CheckIndex(i, impl_->inputs, "input")].name;
}
const std::string& GraphExecutor::OutputName(int i) const {
  return impl_->outputs[CheckIndex(i, impl_->outputs, "output")].name;
}
const std::vector<int64_t>& GraphExecutor::InputShape(int i) const {
  return impl_->inputs[CheckIndex(i, impl_->inputs, "input")].planned.shape();
}
const std::vector<int64_t>& GraphExecutor::OutputShape(int i) const {
  return impl_->outputs[CheckIndex(i, impl_->outputs, "output")].planned.shape();
}
DataType GraphExecutor::InputDType(int i) const {
  return impl_->inputs[CheckIndex(i, impl_->inputs, "input")].planned.dtype();
}
DataType GraphExecutor::OutputDType(int i) const {
  return impl_->outputs[CheckIndex(i, impl_->outputs, "output")].planned.dtype();
}
int GraphExecutor::InputIndex(const std::string& name) const { return FindByName(impl_->inputs, name); }
int GraphExecutor::OutputIndex(const std::string& name) const { return FindByName(impl_->outputs, name); }

void GraphExecutor::SetInput(const std::string& name, const NDArray& value) {
  int i = InputIndex(name);
  TESSERA_CHECK(i >= 0, "SetInput: the model has no input named '", name,
                "'; its inputs are: ", QuotedNames(impl_->inputs));
  SetInput(i, value);
}

void GraphExecutor::SetInput(int index, const NDArray& value) {
  const Impl::IO& in = impl_->inputs[CheckIndex(index, impl_->inputs, "input")];
  CheckInputValue("SetInput", in.name, in.planned.dtype(), in.planned.shape(), value);
  if (impl_->bound[in.root].defined()) impl_->Repoint(in.root, NDArray(), in.planned);  // undo a BindInput
  in.planned.CopyFrom(value);
}

namespace {
bool Aligned(const NDArray& a) { return reinterpret_cast<uintptr_t>(a.raw_data()) % kAllocAlignment == 0; }
}  // namespace

bool GraphExecutor::BindInput(int index, const NDArray& value) {
  Impl::IO& io = impl_->inputs[CheckIndex(index, impl_->inputs, "input")];
  if (!value.defined() || !Aligned(value)) {
    SetInput(index, value);  // checks, then copies
    return false;
  }
  CheckInputValue("BindInput", io.name, io.planned.dtype(), io.planned.shape(), value);
  impl_->Repoint(io.root, value, io.planned);
  return true;
}

bool GraphExecutor::BindOutput(int index, const NDArray& value) {
  Impl::IO& io = impl_->outputs[CheckIndex(index, impl_->outputs, "output")];
  TESSERA_CHECK(value.defined(), "BindOutput: the array given for output '", io.name, "' is null");
  TESSERA_CHECK(value.dtype() == io.planned.dtype(), "BindOutput: output '", io.name, "' is ", io.planned.dtype().str(),
                ", got an array of ", value.dtype().str());
  TESSERA_CHECK(value.shape() == io.planned.shape(), "BindOutput: output '", io.name, "' has shape ",
                ShapeToString(io.planned.shape()), ", got an array of shape ", ShapeToString(value.shape()));
  if (!io.bindable || !Aligned(value)) return false;
  impl_->Repoint(io.root, value, io.planned);
  return true;
}

void GraphExecutor::Run() {
  Impl& m = *impl_;
  const size_t n = m.nodes.size();
  if (m.calibration.sites() != n) m.calibration = LaunchCalibration(n);
  auto check = [&](const Impl::Node& node, int32_t r) {
    if (r != kKernelOk) m.Fail(node, r);
  };
  m.CheckGuards();
  const bool multi_threaded = NumThreads() > 1;
  if ((m.calibration.Finished() || !multi_threaded) && !m.profile) {
    for (size_t i = 0; i < n; ++i) {
      const Impl::Node& node = m.nodes[i];
      ScopedSerialLaunches serial(m.calibration.Serial(i));
      check(node, node.kernel(node.args.data()));
    }
    return;
  }
  if (m.profile) m.node_seconds.resize(n, 0.0);
  for (size_t i = 0; i < n; ++i) {
    const Impl::Node& node = m.nodes[i];
    const LaunchCalibration::Call call = m.calibration.Next(i, multi_threaded);
    ScopedSerialLaunches serial(call.serial);
    auto t0 = std::chrono::steady_clock::now();
    int32_t r = node.kernel(node.args.data());
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    check(node, r);
    m.calibration.Done(i, call, dt);
    if (m.profile) m.node_seconds[i] += dt;
  }
  if (m.profile) ++m.profiled_runs;
}

void GraphExecutor::ReleaseBindings() {
  Impl& m = *impl_;
  for (const Impl::IO& io : m.inputs)
    if (m.bound[io.root].defined()) m.Repoint(io.root, NDArray(), io.planned);
  for (const Impl::IO& io : m.outputs)
    if (m.bound[io.root].defined()) m.Repoint(io.root, NDArray(), io.planned);
}

void GraphExecutor::SetProfiling(bool on) {
  Impl& m = *impl_;
  m.profile = on;
  if (on) {
    m.node_seconds.assign(m.nodes.size(), 0.0);
    m.profiled_runs = 0;
  }
}

std::vector<GraphExecutor::NodeProfile> GraphExecutor::Profile() const { return impl_->Profile(); }
int64_t GraphExecutor::ProfiledRuns() const { return impl_->profiled_runs; }

NDArray GraphExecutor::GetOutput(int index) const {
  return impl_->Current(impl_->outputs[CheckIndex(index, impl_->outputs, "output")]).Clone();
}

NDArray GraphExecutor::GetOutput(const std::string& name) const {
  int i = OutputIndex(name);
  TESSERA_CHECK(i >= 0, "GetOutput: the model has no output named '", name,
                "'; its outputs are: ", QuotedNames(impl_->outputs));
  return GetOutput(i);
}

}  // namespace tessera::runtime
