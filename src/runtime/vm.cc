#include "tessera/runtime/vm.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "executor_common.h"
#include "launch_calibration.h"
#include "storage_pool.h"
#include "tessera/runtime/float_formats.h"
#include "tessera/runtime/thread_pool.h"
#include "tessera/runtime/vm_executable.h"
#include "tessera/support/error.h"

namespace tessera::runtime {

struct VirtualMachine::Impl {
  explicit Impl(Module m) : module(std::move(m)) {}

  Module module;
  VMExecutable exe;
  std::map<std::string, NDArray> params;
  // Per instruction, prepared at load: InvokePacked's kernel and argument pointers (filled at
  // each call), LoadConst's param.
  std::vector<TesseraKernelFn> kernels;
  std::vector<std::vector<void*>> args;
  std::vector<NDArray> consts;
  std::vector<NDArray> guard_values;  // per exe.guards entry
  StoragePool pool;
  // Per InvokePacked (by pc): serial or parallel launches (launch_calibration.h).
  LaunchCalibration calibration;
  // The register file, empty between runs; pooled[r]: regs[r] is a view of a pool storage.
  std::vector<NDArray> regs;
  std::vector<uint8_t> pooled;
  // The Executor interface: the inputs set and the outputs of the last successful Run().
  std::vector<NDArray> set_inputs, last_outputs;
  bool has_outputs = false;

  // "module 'm': instruction 3 (If)", for messages.
  std::string Where(size_t pc) const { return "module '" + module.origin() + "': " + DescribeInstruction(exe, pc); }

  const NDArray& Read(size_t pc, int r) const {
    if (!regs[r].defined())
      TESSERA_THROW(Error, Where(pc), " reads register ", r, ", which holds no tensor on the path taken: the "
                    "executable is inconsistent; rebuild the model");
    return regs[r];
  }
  void Write(int r, NDArray value, bool from_pool) {
    regs[r] = std::move(value);
    pooled[r] = from_pool;
  }

  std::vector<NDArray> Invoke(const std::vector<NDArray>& inputs);
  std::vector<NDArray> Execute();
  std::vector<NDArray> Return(size_t pc, const VMInstruction& ret);
};

namespace {

bool Aligned(const NDArray& a) { return reinterpret_cast<uintptr_t>(a.raw_data()) % kAllocAlignment == 0; }

int64_t NumElementsOf(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace

std::vector<NDArray> VirtualMachine::Impl::Invoke(const std::vector<NDArray>& inputs) {
  const std::string& origin = module.origin();
  TESSERA_CHECK(inputs.size() == exe.inputs.size(), "Invoke: module '", origin, "' takes ", exe.inputs.size(),
                " inputs (", QuotedNames(exe.inputs), "), got ", inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    CheckInputValue("Invoke", exe.inputs[i].name, exe.inputs[i].dtype, exe.inputs[i].shape, inputs[i]);
  for (size_t g = 0; g < exe.guards.size(); ++g) {
    const int i = exe.guards[g].input;
    CheckGuard(origin, exe.inputs[i].name, inputs[i], guard_values[g]);
  }
  // Whatever happens, the run leaves no tensor in the registers: their storages go back to the
  // pool and the next run starts clean.
  struct ClearRegisters {
    Impl& m;
    ~ClearRegisters() {
      std::fill(m.regs.begin(), m.regs.end(), NDArray());
      std::fill(m.pooled.begin(), m.pooled.end(), 0);
    }
  } clear{*this};
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (Aligned(inputs[i])) {
      Write(static_cast<int>(i), inputs[i], false);
    } else {  // kernels get 64-byte aligned pointers (kernel_abi.h): an aligned copy
      NDArray copy = pool.Alloc(exe.inputs[i].shape, exe.inputs[i].dtype);
      copy.CopyFrom(inputs[i]);
      Write(static_cast<int>(i), std::move(copy), true);
    }
  }
  return Execute();
}

std::vector<NDArray> VirtualMachine::Impl::Execute() {
  const bool multi_threaded = NumThreads() > 1;
  size_t pc = 0;
  for (;;) {
    const VMInstruction& in = exe.instructions[pc];
    switch (in.op) {
      case VMOpcode::kLoadConst: Write(in.dst, consts[pc], false); break;
      case VMOpcode::kAllocTensor: Write(in.dst, pool.Alloc(in.shape, in.dtype), true); break;
      case VMOpcode::kInvokePacked: {
        std::vector<void*>& a = args[pc];
        for (size_t k = 0; k < in.regs.size(); ++k) a[k] = Read(pc, in.regs[k]).raw_data();
        const LaunchCalibration::Call call = calibration.Next(pc, multi_threaded);
        int32_t status;
        if (call.calibrating) {
          ScopedSerialLaunches serial(call.serial);
          const auto t0 = std::chrono::steady_clock::now();
          status = kernels[pc](a.data());
          calibration.Done(pc, call, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        } else {
          ScopedSerialLaunches serial(call.serial);
          status = kernels[pc](a.data());
        }
        if (status != kKernelOk)
          ThrowKernelFailure(status, "instruction " + std::to_string(pc) + " (InvokePacked, kernel '" + in.name +
                                         "') of module '" + module.origin() + "'",
                             in.checks);
        break;
      }
      case VMOpcode::kReshapeTensor: {
        const NDArray& src = Read(pc, in.src);
        TESSERA_CHECK(src.NumElements() == NumElementsOf(in.shape), Where(pc), ": cannot reshape register ", in.src,
                      " (", src.dtype().str(), " ", ShapeToString(src.shape()), ") to ", ShapeToString(in.shape),
                      ": the element counts differ. The executable is inconsistent; rebuild the model");
        Write(in.dst, src.CreateView(in.shape), pooled[in.src] != 0);
        break;
      }
      case VMOpcode::kMove: {
        NDArray src = Read(pc, in.src);
        Write(in.dst, std::move(src), pooled[in.src] != 0);
        break;
      }
      case VMOpcode::kIf: {
        const NDArray& cond = Read(pc, in.cond);
        TESSERA_CHECK(cond.NumElements() == 1 && cond.dtype().is_scalar(), Where(pc), ": the condition (register ",
                      in.cond, ") is ", cond.dtype().str(), " ", ShapeToString(cond.shape()),
                      ", not one scalar element. The executable is inconsistent; rebuild the model");
        pc = static_cast<size_t>(static_cast<int64_t>(pc) +
                                 (LoadAsDouble(cond.raw_data(), 0, cond.dtype()) != 0 ? in.offset : in.false_offset));
        continue;
      }
      case VMOpcode::kGoto: pc = static_cast<size_t>(static_cast<int64_t>(pc) + in.offset); continue;
      case VMOpcode::kKill:
        for (int r : in.regs) Write(r, NDArray(), false);
        break;
      case VMOpcode::kRet: return Return(pc, in);
      case VMOpcode::kFatal: TESSERA_THROW(UserError, in.name, " (", Where(pc), ")");
    }
    ++pc;
  }
}

// The outputs of the Ret at `pc`: a result that is a pool tensor goes to the caller as it is (the
// registers are cleared after the run, so the caller holds it alone); a param, an input or a
// tensor sharing its storage with an earlier output is copied.
std::vector<NDArray> VirtualMachine::Impl::Return(size_t pc, const VMInstruction& ret) {
  std::vector<NDArray> outputs;
  for (size_t k = 0; k < ret.regs.size(); ++k) {
    const int r = ret.regs[k];
    const NDArray& a = Read(pc, r);
    const VMTensorInfo& o = exe.outputs[k];
    TESSERA_CHECK(a.dtype() == o.dtype && a.shape() == o.shape, Where(pc), ": result ", k, " (register ", r, ") is ",
                  a.dtype().str(), " ", ShapeToString(a.shape()), " but output '", o.name, "' is ", o.dtype.str(), " ",
                  ShapeToString(o.shape), ". The executable is inconsistent; rebuild the model");
    const bool shared = std::any_of(outputs.begin(), outputs.end(),
                                    [&](const NDArray& earlier) { return earlier.SharesStorageWith(a); });
    outputs.push_back(pooled[r] && !shared ? a : a.Clone());
  }
  return outputs;
}

VirtualMachine::VirtualMachine(Module module, int num_threads) : impl_(std::make_unique<Impl>(std::move(module))) {
  if (num_threads > 0) SetNumThreads(num_threads);
  Impl& m = *impl_;
  const std::string& origin = m.module.origin();
  m.exe = ParseVMExecutable(m.module.GraphJson(), origin);
  m.calibration = LaunchCalibration(m.exe.instructions.size());
  m.params = LoadModuleParams(m.module);
  const size_t n = m.exe.instructions.size();
  m.kernels.resize(n);
  m.args.resize(n);
  m.consts.resize(n);
  for (size_t pc = 0; pc < n; ++pc) {
    const VMInstruction& in = m.exe.instructions[pc];
    if (in.op == VMOpcode::kLoadConst) {
      auto it = m.params.find(in.name);
      TESSERA_CHECK(it != m.params.end(), m.Where(pc), " loads parameter '", in.name,
                    "', which the params blob does not contain; rebuild the model");
      m.consts[pc] = it->second;
    } else if (in.op == VMOpcode::kInvokePacked) {
      try {
        m.kernels[pc] = m.module.GetKernel(in.name);
      } catch (const UserError& e) {
        TESSERA_THROW(UserError, m.Where(pc), ": ", e.what());
      }
      m.args[pc].resize(in.regs.size());
    }
  }
  for (const VMGuard& g : m.exe.guards) {
    const VMTensorInfo& input = m.exe.inputs[g.input];
    auto it = m.params.find(g.param);
    TESSERA_CHECK(it != m.params.end() && it->second.dtype() == input.dtype && it->second.shape() == input.shape,
                  "module '", origin, "': the guard of input '", input.name, "' names parameter '", g.param,
                  "', which the params blob lacks or holds with another type; rebuild the model");
    m.guard_values.push_back(it->second);
  }
  m.regs.resize(static_cast<size_t>(m.exe.num_registers));
  m.pooled.resize(m.regs.size(), 0);
  m.set_inputs.resize(m.exe.inputs.size());
}

VirtualMachine::~VirtualMachine() = default;
VirtualMachine::VirtualMachine(VirtualMachine&&) noexcept = default;
VirtualMachine& VirtualMachine::operator=(VirtualMachine&&) noexcept = default;

std::vector<NDArray> VirtualMachine::Invoke(const std::vector<NDArray>& inputs) { return impl_->Invoke(inputs); }

int VirtualMachine::NumInputs() const { return static_cast<int>(impl_->exe.inputs.size()); }
int VirtualMachine::NumOutputs() const { return static_cast<int>(impl_->exe.outputs.size()); }
int VirtualMachine::NumInstructions() const { return static_cast<int>(impl_->exe.instructions.size()); }
size_t VirtualMachine::PoolBytes() const { return impl_->pool.Bytes(); }
int64_t VirtualMachine::PoolAllocations() const { return impl_->pool.Allocations(); }

const std::string& VirtualMachine::InputName(int i) const {
  return impl_->exe.inputs[CheckIndex(i, impl_->exe.inputs, "input")].name;
}
const std::string& VirtualMachine::OutputName(int i) const {
  return impl_->exe.outputs[CheckIndex(i, impl_->exe.outputs, "output")].name;
}
const std::vector<int64_t>& VirtualMachine::InputShape(int i) const {
  return impl_->exe.inputs[CheckIndex(i, impl_->exe.inputs, "input")].shape;
}
const std::vector<int64_t>& VirtualMachine::OutputShape(int i) const {
  return impl_->exe.outputs[CheckIndex(i, impl_->exe.outputs, "output")].shape;
}
DataType VirtualMachine::InputDType(int i) const {
  return impl_->exe.inputs[CheckIndex(i, impl_->exe.inputs, "input")].dtype;
}
DataType VirtualMachine::OutputDType(int i) const {
  return impl_->exe.outputs[CheckIndex(i, impl_->exe.outputs, "output")].dtype;
}
int VirtualMachine::InputIndex(const std::string& name) const { return FindByName(impl_->exe.inputs, name); }
int VirtualMachine::OutputIndex(const std::string& name) const { return FindByName(impl_->exe.outputs, name); }

void VirtualMachine::SetInput(const std::string& name, const NDArray& value) {
  const int i = InputIndex(name);
  TESSERA_CHECK(i >= 0, "SetInput: the model has no input named '", name,
                "'; its inputs are: ", QuotedNames(impl_->exe.inputs));
  SetInput(i, value);
}

void VirtualMachine::SetInput(int index, const NDArray& value) {
  const VMTensorInfo& in = impl_->exe.inputs[CheckIndex(index, impl_->exe.inputs, "input")];
  CheckInputValue("SetInput", in.name, in.dtype, in.shape, value);
  impl_->set_inputs[index] = value;
}

void VirtualMachine::Run() {
  Impl& m = *impl_;
  for (size_t i = 0; i < m.set_inputs.size(); ++i)
    TESSERA_CHECK(m.set_inputs[i].defined(), "Run: input '", m.exe.inputs[i].name, "' of module '", m.module.origin(),
                  "' was not set: call SetInput first");
  // The last run's outputs go back to the pool before this run allocates.
  m.last_outputs.clear();
  m.has_outputs = false;
  m.last_outputs = m.Invoke(m.set_inputs);
  m.has_outputs = true;
}

NDArray VirtualMachine::GetOutput(int index) const {
  const Impl& m = *impl_;
  CheckIndex(index, m.exe.outputs, "output");
  TESSERA_CHECK(m.has_outputs, "GetOutput: module '", m.module.origin(),
                "' has no outputs: its last Run() failed or there was none");
  return m.last_outputs[index].Clone();
}

}  // namespace tessera::runtime
