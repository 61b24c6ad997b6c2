#include "tessera/runtime/vm.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>

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
  std::vector<std::vector<int64_t>> shape_args;  // InvokePacked: the values of its "shape_args"
  std::vector<NDArray> guard_values;  // per exe.guards entry
  // Per symbol (exe.symbols): its value in the current run, kUnbound before its binding; and for
  // a symbol bound by an input, which input and dim bound it (for messages).
  static constexpr int64_t kUnbound = -1;
  // The largest value of a symbol: kernels compiled for symbolic extents index with int32
  // (graph_lower::DimExtent).
  static constexpr int64_t kMaxSymbolValue = INT32_MAX;
  std::vector<int64_t> symbol_values;
  std::vector<std::pair<int, int>> symbol_origins;
  std::vector<int64_t> shape_scratch;  // a symbolic shape evaluated
  StoragePool pool;
  // Per InvokePacked (by pc): serial or parallel launches (launch_calibration.h).
  LaunchCalibration calibration;
  // The register file, empty between runs; pooled[r]: regs[r] is a view of a pool storage.
  std::vector<NDArray> regs;
  std::vector<uint8_t> pooled;
  // Lists of tensors (ListNew, ListPush): immutable cons cells, so a push is O(1) and shares the
  // list it extends (Relay's tensor array, a List ADT). lists[r].held: register r holds a list
  // (then regs[r] is empty).
  struct ListCell {
    NDArray value;
    std::shared_ptr<const ListCell> prev;
  };
  struct TensorList {
    bool held = false;
    std::shared_ptr<const ListCell> last;
    int64_t length = 0;
  };
  std::vector<TensorList> lists;
  // The Executor interface: the inputs set and the outputs of the last successful Run().
  std::vector<NDArray> set_inputs, last_outputs;
  bool has_outputs = false;

  // "module 'm': instruction 3 (If)", for messages.
  std::string Where(size_t pc) const { return "module '" + module.origin() + "': " + DescribeInstruction(exe, pc); }

  const NDArray& Read(size_t pc, int r) const {
    if (lists[r].held)  // the JSON gives registers no types: a malformed executable can do this
      TESSERA_THROW(UserError, Where(pc), " reads register ", r, " as a tensor, but it holds a list on the path taken: "
                    "the executable is inconsistent; rebuild the model");
    if (!regs[r].defined())
      TESSERA_THROW(Error, Where(pc), " reads register ", r, ", which holds no tensor on the path taken: the "
                    "executable is inconsistent; rebuild the model");
    return regs[r];
  }
  void Write(int r, NDArray value, bool from_pool) {
    regs[r] = std::move(value);
    pooled[r] = from_pool;
    lists[r] = TensorList();
  }
  const TensorList& ReadList(size_t pc, int r) const {
    if (!lists[r].held)
      TESSERA_THROW(UserError, Where(pc), " reads register ", r, " as a list, but it holds ",
                    regs[r].defined() ? "a tensor" : "nothing", " on the path taken: the executable is inconsistent; "
                    "rebuild the model");
    return lists[r];
  }
  void WriteList(int r, TensorList list) {
    regs[r] = NDArray();
    pooled[r] = 0;
    list.held = true;
    lists[r] = std::move(list);
  }
  void ListStack(size_t pc, const VMInstruction& in);
  void ListAt(size_t pc, const VMInstruction& in);

  // The value of symbol `s` for instruction `pc` (UserError when no instruction bound it on the
  // path taken).
  int64_t Symbol(size_t pc, int s) const {
    if (symbol_values[s] == kUnbound)
      TESSERA_THROW(UserError, Where(pc), " uses symbol '", exe.symbols[s], "', which is not bound on the path taken "
                    "(no input's shape binds it and the LoadShape that binds it did not run). The executable is "
                    "inconsistent; rebuild the model");
    return symbol_values[s];
  }
  // `shape` of instruction `pc` with its symbols' values (`dim_symbols` empty: `shape` itself).
  // UserError when the tensor of `dtype` would take more than PTRDIFF_MAX bytes.
  const std::vector<int64_t>& Evaluate(size_t pc, const std::vector<int64_t>& shape, const std::vector<int>& dim_symbols,
                                       DataType dtype);
  // "[seq, 4]": a shape of the executable with its symbols' names.
  std::string Symbolic(const std::vector<int64_t>& shape, const std::vector<int>& dim_symbols) const {
    std::vector<std::string> names(dim_symbols.size());
    for (size_t d = 0; d < dim_symbols.size(); ++d)
      if (dim_symbols[d] >= 0) names[d] = exe.symbols[dim_symbols[d]];
    return ShapeToString(shape, names);
  }
  void BindInputSymbols(const std::vector<NDArray>& inputs);
  void LoadShape(size_t pc, const VMInstruction& in);

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
    CheckInputValue("Invoke", exe.inputs[i].name, exe.inputs[i].dtype, exe.inputs[i].shape, inputs[i],
                    exe.inputs[i].dim_names);
  BindInputSymbols(inputs);
  for (size_t g = 0; g < exe.guards.size(); ++g) {
    const int i = exe.guards[g].input;
    CheckGuard(origin, exe.inputs[i].name, inputs[i], guard_values[g]);
  }
  // Whatever happens, the run leaves no tensor in the registers: their storages go back to the
  // pool and the next run starts clean.
  // Then the pool frees what this run left idle (vm.h "Memory").
  pool.BeginRun();
  struct ClearRegisters {
    Impl& m;
    ~ClearRegisters() {
      std::fill(m.regs.begin(), m.regs.end(), NDArray());
      std::fill(m.pooled.begin(), m.pooled.end(), 0);
      std::fill(m.lists.begin(), m.lists.end(), TensorList());
      m.pool.EndRun();
    }
  } clear{*this};
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (Aligned(inputs[i])) {
      Write(static_cast<int>(i), inputs[i], false);
    } else {  // kernels get 64-byte aligned pointers (kernel_abi.h): an aligned copy
      NDArray copy = pool.Alloc(inputs[i].shape(), exe.inputs[i].dtype);
      copy.CopyFrom(inputs[i]);
      Write(static_cast<int>(i), std::move(copy), true);
    }
  }
  return Execute();
}

// Binds the symbols of the inputs' shapes, in order: a symbol's first dim binds it, a later one
// must have the same extent.
void VirtualMachine::Impl::BindInputSymbols(const std::vector<NDArray>& inputs) {
  std::fill(symbol_values.begin(), symbol_values.end(), kUnbound);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::vector<int>& syms = exe.inputs[i].dim_symbols;
    for (size_t d = 0; d < syms.size(); ++d) {
      const int s = syms[d];
      if (s < 0) continue;
      const int64_t extent = inputs[i].shape()[d];
      TESSERA_CHECK(extent <= kMaxSymbolValue, "module '", module.origin(), "': input '", exe.inputs[i].name, "' dim ",
                    d, " is ", extent, " (symbol '", exe.symbols[s],
                    "'), over 2^31 - 1: kernels compiled for symbolic extents index with 32 bits");
      if (symbol_values[s] == kUnbound) {
        symbol_values[s] = extent;
        symbol_origins[s] = {static_cast<int>(i), static_cast<int>(d)};
        continue;
      }
      const auto [from, from_dim] = symbol_origins[s];
      TESSERA_CHECK(symbol_values[s] == extent, "module '", module.origin(), "': input '", exe.inputs[i].name, "' dim ",
                    d, " is ", extent, ", but symbol '", exe.symbols[s], "' is ", symbol_values[s], " from input '",
                    exe.inputs[from].name, "' dim ", from_dim, " (input '", exe.inputs[i].name, "' is ",
                    ShapeToString(exe.inputs[i].shape, exe.inputs[i].dim_names), ", input '", exe.inputs[from].name,
                    "' is ", ShapeToString(exe.inputs[from].shape, exe.inputs[from].dim_names),
                    "): the inputs' shapes disagree");
    }
  }
}

const std::vector<int64_t>& VirtualMachine::Impl::Evaluate(size_t pc, const std::vector<int64_t>& shape,
                                                           const std::vector<int>& dim_symbols, DataType dtype) {
  if (dim_symbols.empty()) return shape;
  shape_scratch.resize(shape.size());
  size_t bytes = static_cast<size_t>(dtype.bytes());
  bool overflow = false;
  for (size_t d = 0; d < shape.size(); ++d) {
    shape_scratch[d] = dim_symbols[d] >= 0 ? Symbol(pc, dim_symbols[d]) : shape[d];
    overflow = overflow || __builtin_mul_overflow(bytes, static_cast<size_t>(shape_scratch[d]), &bytes);
  }
  TESSERA_CHECK(!overflow && bytes <= static_cast<size_t>(PTRDIFF_MAX), Where(pc), ": shape ",
                Symbolic(shape, dim_symbols), " is ", ShapeToString(shape_scratch), " in this run, too large for ",
                dtype.str(), " (over 2^63 bytes)");
  return shape_scratch;
}

// LoadShape: binds its symbols to the values of an int32 / int64 tensor of 0 or 1 dims.
void VirtualMachine::Impl::LoadShape(size_t pc, const VMInstruction& in) {
  const NDArray& src = Read(pc, in.src);
  const DataType t = src.dtype();
  auto symbol_list = [&] {
    std::string names;
    for (int s : in.symbols) names += (names.empty() ? "'" : ", '") + exe.symbols[s] + "'";
    return names;
  };
  TESSERA_CHECK((t == DataType::Int(32) || t == DataType::Int(64)) && src.ndim() <= 1, Where(pc), ": register ",
                in.src, " holds ", t.str(), " ", ShapeToString(src.shape()),
                ", not an int32 or int64 tensor of 0 or 1 dims (the values of symbols ", symbol_list(),
                "). The executable is inconsistent; rebuild the model");
  TESSERA_CHECK(src.NumElements() == static_cast<int64_t>(in.symbols.size()), Where(pc), ": register ", in.src,
                " holds ", src.NumElements(), " values (", t.str(), " ", ShapeToString(src.shape()), ") but it binds ",
                in.symbols.size(), " symbols (", symbol_list(), "). The executable is inconsistent; rebuild the model");
  for (size_t k = 0; k < in.symbols.size(); ++k) {
    const int64_t v = t == DataType::Int(32) ? src.data<int32_t>()[k] : src.data<int64_t>()[k];
    TESSERA_CHECK(v >= 0, Where(pc), ": a shape computed at run time has the negative extent ", v, " (symbol '",
                  exe.symbols[in.symbols[k]], "'): check the model's inputs");
    TESSERA_CHECK(v <= kMaxSymbolValue, Where(pc), ": a shape computed at run time has the extent ", v, " (symbol '",
                  exe.symbols[in.symbols[k]], "'), over 2^31 - 1: kernels compiled for symbolic extents index with 32 bits");
  }
  for (size_t k = 0; k < in.symbols.size(); ++k)
    symbol_values[in.symbols[k]] = t == DataType::Int(32) ? src.data<int32_t>()[k] : src.data<int64_t>()[k];
}

// ListStack: the list's elements stacked along a new axis 0 (each must have the instruction's dtype
// and the rest of its shape); binds the shape's first symbol to the length.
void VirtualMachine::Impl::ListStack(size_t pc, const VMInstruction& in) {
  const TensorList list = ReadList(pc, in.src);  // a copy: dst may be src
  TESSERA_CHECK(list.length <= kMaxSymbolValue, Where(pc), ": a list of ", list.length,
                " tensors, over 2^31 - 1: kernels compiled for symbolic extents index with 32 bits");
  symbol_values[in.dim_symbols[0]] = list.length;
  const std::vector<int64_t> shape = Evaluate(pc, in.shape, in.dim_symbols, in.dtype);
  const std::vector<int64_t> element(shape.begin() + 1, shape.end());
  NDArray out = pool.Alloc(shape, in.dtype);
  const size_t bytes = static_cast<size_t>(NumElementsOf(element) * in.dtype.bytes());
  int64_t k = list.length;
  for (const ListCell* cell = list.last.get(); cell; cell = cell->prev.get()) {
    --k;
    const NDArray& v = cell->value;
    TESSERA_CHECK(v.dtype() == in.dtype && v.shape() == element, Where(pc), ": element ", k, " of the list is ",
                  v.dtype().str(), " ", ShapeToString(v.shape()), ", but the stacked tensor ",
                  Symbolic(in.shape, in.dim_symbols), " takes ", in.dtype.str(), " ", ShapeToString(element),
                  ": the loop's scan output changed its shape across iterations");
    if (bytes > 0) std::memcpy(static_cast<char*>(out.raw_data()) + static_cast<size_t>(k) * bytes, v.raw_data(), bytes);
  }
  Write(in.dst, std::move(out), true);
}

// ListAt: the element at a position (ONNX SequenceAt: in [-length, length), negative from the end);
// the register shares the element (no copy).
void VirtualMachine::Impl::ListAt(size_t pc, const VMInstruction& in) {
  const TensorList& list = ReadList(pc, in.src);
  const NDArray& index = Read(pc, in.value);
  TESSERA_CHECK(index.NumElements() == 1 && index.dtype().is_int(), Where(pc), ": the position (register ", in.value,
                ") is ", index.dtype().str(), " ", ShapeToString(index.shape()), ", not one integer");
  int64_t p = static_cast<int64_t>(LoadAsDouble(index.raw_data(), 0, index.dtype()));
  TESSERA_CHECK(p >= -list.length && p < list.length, Where(pc), ": position ", p, " is out of range [", -list.length,
                ", ", list.length - 1, "] for a list of ", list.length, " tensors: check the model's inputs");
  if (p < 0) p += list.length;
  const ListCell* cell = list.last.get();
  for (int64_t k = list.length - 1; k > p; --k) cell = cell->prev.get();
  NDArray element = cell->value;
  Write(in.dst, std::move(element), false);
}

std::vector<NDArray> VirtualMachine::Impl::Execute() {
  const bool multi_threaded = NumThreads() > 1;
  size_t pc = 0;
  for (;;) {
    const VMInstruction& in = exe.instructions[pc];
    switch (in.op) {
      case VMOpcode::kLoadConst: Write(in.dst, consts[pc], false); break;
      case VMOpcode::kAllocTensor:
        Write(in.dst, pool.Alloc(Evaluate(pc, in.shape, in.dim_symbols, in.dtype), in.dtype), true);
        break;
      case VMOpcode::kInvokePacked: {
        std::vector<void*>& a = args[pc];
        for (size_t k = 0; k < in.regs.size(); ++k) a[k] = Read(pc, in.regs[k]).raw_data();
        if (!in.symbols.empty()) {  // kernel_abi.h: args[num_buffers] points to the shape variables
          std::vector<int64_t>& values = shape_args[pc];
          for (size_t k = 0; k < in.symbols.size(); ++k) values[k] = Symbol(pc, in.symbols[k]);
          a[in.regs.size()] = values.data();
        }
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
        const std::vector<int64_t>& shape = Evaluate(pc, in.shape, in.dim_symbols, DataType::UInt(8));
        TESSERA_CHECK(src.NumElements() == NumElementsOf(shape), Where(pc), ": cannot reshape register ", in.src,
                      " (", src.dtype().str(), " ", ShapeToString(src.shape()), ") to ",
                      in.dim_symbols.empty() ? ShapeToString(shape)
                                             : Symbolic(in.shape, in.dim_symbols) + " = " + ShapeToString(shape),
                      ": the element counts differ",
                      in.dim_symbols.empty()
                          ? ". The executable is inconsistent; rebuild the model"
                          : " (a shape computed at run time, e.g. an ONNX Reshape's shape input, does not fit the "
                            "tensor: check the model's inputs)");
        Write(in.dst, src.CreateView(shape), pooled[in.src] != 0);
        break;
      }
      case VMOpcode::kShapeOf: {
        const std::vector<int64_t> shape = Read(pc, in.src).shape();  // a copy: dst may be src
        NDArray out = pool.Alloc({static_cast<int64_t>(shape.size())}, DataType::Int(64));
        std::copy(shape.begin(), shape.end(), out.data<int64_t>());
        Write(in.dst, std::move(out), true);
        break;
      }
      case VMOpcode::kLoadShape: LoadShape(pc, in); break;
      case VMOpcode::kMove: {
        if (lists[in.src].held) {
          TensorList list = lists[in.src];
          WriteList(in.dst, std::move(list));
          break;
        }
        NDArray src = Read(pc, in.src);
        Write(in.dst, std::move(src), pooled[in.src] != 0);
        break;
      }
      case VMOpcode::kListNew: WriteList(in.dst, TensorList()); break;
      case VMOpcode::kListPush: {
        const TensorList& src = ReadList(pc, in.src);
        TensorList pushed;
        pushed.last = std::make_shared<const ListCell>(ListCell{Read(pc, in.value), src.last});
        pushed.length = src.length + 1;
        WriteList(in.dst, std::move(pushed));
        break;
      }
      case VMOpcode::kListLength: {
        const int64_t length = ReadList(pc, in.src).length;
        NDArray out = pool.Alloc({}, DataType::Int(64));
        out.data<int64_t>()[0] = length;
        Write(in.dst, std::move(out), true);
        break;
      }
      case VMOpcode::kListStack: ListStack(pc, in); break;
      case VMOpcode::kListAt: ListAt(pc, in); break;
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
    const std::vector<int64_t>& expected = Evaluate(pc, o.shape, o.dim_symbols, o.dtype);
    TESSERA_CHECK(a.dtype() == o.dtype && a.shape() == expected, Where(pc), ": result ", k, " (register ", r, ") is ",
                  a.dtype().str(), " ", ShapeToString(a.shape()), " but output '", o.name, "' is ", o.dtype.str(), " ",
                  ShapeToString(o.shape, o.dim_names),
                  o.dim_symbols.empty() ? std::string() : " = " + ShapeToString(expected) + " in this run",
                  ". The executable is inconsistent; rebuild the model");
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
  m.shape_args.resize(n);
  m.symbol_values.assign(m.exe.symbols.size(), Impl::kUnbound);
  m.symbol_origins.assign(m.exe.symbols.size(), {-1, -1});
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
      m.args[pc].resize(in.regs.size() + (in.symbols.empty() ? 0 : 1));
      m.shape_args[pc].resize(in.symbols.size());
    }
  }
  for (const VMGuard& g : m.exe.guards) {
    const VMTensorInfo& input = m.exe.inputs[g.input];
    auto it = m.params.find(g.param);
    TESSERA_CHECK(it != m.params.end() && it->second.dtype() == input.dtype && ShapeAccepts(input.shape, it->second.shape()),
                  "module '", origin, "': the guard of input '", input.name, "' names parameter '", g.param,
                  "', which the params blob lacks or holds with another type; rebuild the model");
    m.guard_values.push_back(it->second);
  }
  m.regs.resize(static_cast<size_t>(m.exe.num_registers));
  m.lists.resize(m.regs.size());
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
std::vector<std::string> VirtualMachine::InputDimNames(int i) const {
  return impl_->exe.inputs[CheckIndex(i, impl_->exe.inputs, "input")].dim_names;
}
std::vector<std::string> VirtualMachine::OutputDimNames(int i) const {
  return impl_->exe.outputs[CheckIndex(i, impl_->exe.outputs, "output")].dim_names;
}
const std::vector<std::string>& VirtualMachine::Symbols() const { return impl_->exe.symbols; }
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
  CheckInputValue("SetInput", in.name, in.dtype, in.shape, value, in.dim_names);
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
