#include "tessera/runtime/vm.h"
#include "tessera/runtime/vm_builtins.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>

#include "executor_common.h"
#include "launch_calibration.h"
#include "storage_pool.h"
#include "vm_value.h"
#include "tessera/runtime/float_formats.h"
#include "tessera/runtime/thread_pool.h"
#include "tessera/runtime/vm_executable.h"
#include "tessera/support/error.h"

namespace tessera::runtime {

using vm::Value;
using vm::ValueKind;

struct VirtualMachine::Impl {
  explicit Impl(Module m) : module(std::move(m)) {}

  Module module;
  VMExecutable exe;
  std::map<std::string, NDArray> params;
  // Per instruction of main and of every function (its site: site_base[func + 1] + pc, main's
  // instructions first), prepared at load: InvokePacked's kernel and argument pointers (filled at
  // each call), LoadConst's param.
  std::vector<size_t> site_base;
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
  // Per InvokePacked (by site): serial or parallel launches (launch_calibration.h).
  LaunchCalibration calibration;
  // The frames of the run, main's first (empty between runs): each function call pushes one, its
  // Ret pops it. A frame's registers are stack[base, base + its function's num_registers); while a
  // callee runs, the caller's pc is its Invoke / InvokeClosure, whose "dst" takes the results.
  struct Frame {
    int func = kMainFunction;
    size_t base = 0;
    size_t pc = 0;
  };
  std::vector<Frame> frames;
  std::vector<Value> stack;
  std::vector<Value> results;  // a function's results between its Ret and the caller's dst
  // The running frame: its function, its first register in `stack`, its instructions.
  int func = kMainFunction;
  size_t base = 0;
  const VMInstruction* code = nullptr;
  // The Executor interface: the inputs set and the outputs of the last successful Run().
  std::vector<NDArray> set_inputs, last_outputs;
  bool has_outputs = false;

  // "module 'm': instruction 3 (If)" (" of function 'f'"), for messages.
  std::string WhereIn(int f, size_t pc) const {
    return "module '" + module.origin() + "': " + DescribeInstruction(exe, f, pc);
  }
  std::string Where(size_t pc) const { return WhereIn(func, pc); }
  size_t Site(size_t pc) const { return site_base[func + 1] + pc; }

  Value& Reg(int r) { return stack[base + r]; }
  // The value of register r, of any kind (tessera::Error when it holds none: impossible after
  // validation).
  const Value& ReadAny(size_t pc, int r) const {
    const Value& v = stack[base + r];
    if (v.kind == ValueKind::kNone)
      TESSERA_THROW(Error, Where(pc), " reads register ", r, ", which holds no value on the path taken: the "
                    "executable is inconsistent; rebuild the model");
    return v;
  }
  const NDArray& Read(size_t pc, int r) const {
    const Value& v = ReadAny(pc, r);
    if (v.kind != ValueKind::kTensor)  // the JSON gives registers no types: a malformed executable can do this
      TESSERA_THROW(UserError, Where(pc), " reads register ", r, " as a tensor, but it holds ", vm::KindName(v.kind),
                    " on the path taken: the executable is inconsistent; rebuild the model");
    return v.tensor;
  }
  // The list / ADT / closure in register r (UserError when it holds another kind).
  const Value& ReadAs(size_t pc, int r, ValueKind kind) const {
    const Value& v = stack[base + r];
    if (v.kind != kind)
      TESSERA_THROW(UserError, Where(pc), " reads register ", r, " as ", vm::KindName(kind), ", but it holds ",
                    vm::KindName(v.kind), " on the path taken: the executable is inconsistent; rebuild the model");
    return v;
  }
  void Write(int r, NDArray value, bool from_pool) { Reg(r) = Value::Tensor(std::move(value), from_pool); }
  // The values of `regs` (AllocADT fields, AllocClosure captures).
  std::vector<Value> Gather(size_t pc, const std::vector<int>& regs) const {
    std::vector<Value> out;
    out.reserve(regs.size());
    for (int r : regs) out.push_back(ReadAny(pc, r));
    return out;
  }
  void ListStack(size_t pc, const VMInstruction& in);
  void ListAt(size_t pc, const VMInstruction& in);
  void CallBuiltin(size_t pc, const VMInstruction& in);
  void InvokePacked(size_t pc, const VMInstruction& in, bool multi_threaded);
  void GetField(size_t pc, const VMInstruction& in);

  // Function calls (vm.h "Functions, closures and ADTs").
  void Enter(int f, size_t frame_base) {
    func = f;
    base = frame_base;
    code = exe.Code(f).data();
  }
  // Pushes a frame for function `callee` called by instruction `pc` (Invoke / InvokeClosure `in`),
  // its params the closure's captured values (if any) then the args; runs it from its pc 0.
  void Call(size_t pc, const VMInstruction& in, int callee, const vm::Object* closure);
  const vm::Object& Closure(size_t pc, const VMInstruction& in);
  // Ret `ret` of a function: pops its frame, writes its results into the caller's dst; the pc to go on at.
  size_t ReturnToCaller(const VMInstruction& ret);
  // Drops every frame and value of the run (the pool keeps its storage).
  void ClearFrames();

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
  // Whatever happens, the run leaves no frame and no value in the registers: their storages go
  // back to the pool and the next run starts clean.
  // Then the pool frees what this run left idle (vm.h "Memory").
  pool.BeginRun();
  struct ClearRegisters {
    Impl& m;
    ~ClearRegisters() {
      m.ClearFrames();
      m.pool.EndRun();
    }
  } clear{*this};
  frames.push_back(Frame());
  stack.resize(static_cast<size_t>(exe.num_registers));
  Enter(kMainFunction, 0);
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
  const Value list = ReadAs(pc, in.src, ValueKind::kList);  // a copy: dst may be src
  TESSERA_CHECK(list.length <= kMaxSymbolValue, Where(pc), ": a list of ", list.length,
                " tensors, over 2^31 - 1: kernels compiled for symbolic extents index with 32 bits");
  symbol_values[in.dim_symbols[0]] = list.length;
  const std::vector<int64_t> shape = Evaluate(pc, in.shape, in.dim_symbols, in.dtype);
  const std::vector<int64_t> element(shape.begin() + 1, shape.end());
  NDArray out = pool.Alloc(shape, in.dtype);
  const size_t bytes = static_cast<size_t>(NumElementsOf(element) * in.dtype.bytes());
  int64_t k = list.length;
  for (const vm::ListCell* cell = list.list.get(); cell; cell = cell->prev.get()) {
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

// CallBuiltin: the builtin's result (from the pool), whose dims bind the instruction's symbols;
// its dtype and static dims must be the instruction's.
void VirtualMachine::Impl::CallBuiltin(size_t pc, const VMInstruction& in) {
  const VMBuiltin* builtin = FindVMBuiltin(in.name);  // the loader checked that it exists
  std::vector<NDArray> args;
  for (int r : in.regs) args.push_back(Read(pc, r));
  NDArray out;
  try {
    out = builtin->run(args, in.attrs, [&](const std::vector<int64_t>& shape, DataType dtype) {
      return pool.Alloc(shape, dtype);
    });
  } catch (const UserError& e) {
    TESSERA_THROW(UserError, Where(pc), ": builtin ", in.name, ": ", e.what());
  }
  TESSERA_CHECK(out.dtype() == in.dtype && out.ndim() == static_cast<int>(in.shape.size()), Where(pc), ": builtin ",
                in.name, " returned ", out.dtype().str(), " ", ShapeToString(out.shape()), ", not ", in.dtype.str(), " ",
                Symbolic(in.shape, in.dim_symbols), ". The executable is inconsistent; rebuild the model");
  for (size_t d = 0; d < in.shape.size(); ++d) {
    const int64_t v = out.shape()[d];
    const int symbol = in.dim_symbols.empty() ? -1 : in.dim_symbols[d];
    if (symbol < 0) {
      TESSERA_CHECK(v == in.shape[d], Where(pc), ": builtin ", in.name, " returned ", ShapeToString(out.shape()),
                    ", whose dim ", d, " should be ", in.shape[d], ". The executable is inconsistent; rebuild the model");
      continue;
    }
    TESSERA_CHECK(v <= kMaxSymbolValue, Where(pc), ": builtin ", in.name, " returned the extent ", v, " (symbol '",
                  exe.symbols[symbol], "'), over 2^31 - 1: kernels compiled for symbolic extents index with 32 bits");
    symbol_values[symbol] = v;
  }
  Write(in.dst, std::move(out), true);
}

// ListAt: the element at a position (ONNX SequenceAt: in [-length, length), negative from the end);
// the register shares the element (no copy).
void VirtualMachine::Impl::ListAt(size_t pc, const VMInstruction& in) {
  const Value& list = ReadAs(pc, in.src, ValueKind::kList);
  const NDArray& index = Read(pc, in.value);
  TESSERA_CHECK(index.NumElements() == 1 && index.dtype().is_int(), Where(pc), ": the position (register ", in.value,
                ") is ", index.dtype().str(), " ", ShapeToString(index.shape()), ", not one integer");
  int64_t p = static_cast<int64_t>(LoadAsDouble(index.raw_data(), 0, index.dtype()));
  TESSERA_CHECK(p >= -list.length && p < list.length, Where(pc), ": position ", p, " is out of range [", -list.length,
                ", ", list.length - 1, "] for a list of ", list.length, " tensors: check the model's inputs");
  if (p < 0) p += list.length;
  const vm::ListCell* cell = list.list.get();
  for (int64_t k = list.length - 1; k > p; --k) cell = cell->prev.get();
  NDArray element = cell->value;
  Write(in.dst, std::move(element), false);
}

void VirtualMachine::Impl::InvokePacked(size_t pc, const VMInstruction& in, bool multi_threaded) {
  const size_t site = Site(pc);
  std::vector<void*>& a = args[site];
  for (size_t k = 0; k < in.regs.size(); ++k) a[k] = Read(pc, in.regs[k]).raw_data();
  if (!in.symbols.empty()) {  // kernel_abi.h: args[num_buffers] points to the shape variables
    std::vector<int64_t>& values = shape_args[site];
    for (size_t k = 0; k < in.symbols.size(); ++k) values[k] = Symbol(pc, in.symbols[k]);
    a[in.regs.size()] = values.data();
  }
  const LaunchCalibration::Call call = calibration.Next(site, multi_threaded);
  int32_t status;
  if (call.calibrating) {
    ScopedSerialLaunches serial(call.serial);
    const auto t0 = std::chrono::steady_clock::now();
    status = kernels[site](a.data());
    calibration.Done(site, call, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  } else {
    ScopedSerialLaunches serial(call.serial);
    status = kernels[site](a.data());
  }
  if (status != kKernelOk)
    ThrowKernelFailure(status,
                       "instruction " + std::to_string(pc) + " (InvokePacked, kernel '" + in.name + "')" +
                           (func == kMainFunction ? "" : " of function '" + exe.functions[func].name + "'") +
                           " of module '" + module.origin() + "'",
                       in.checks);
}

// GetField: the register shares the field (no copy).
void VirtualMachine::Impl::GetField(size_t pc, const VMInstruction& in) {
  const vm::Object& adt = *ReadAs(pc, in.src, ValueKind::kADT).object;
  TESSERA_CHECK(in.index < static_cast<int64_t>(adt.fields.size()), Where(pc), ": field ", in.index,
                " is out of range: the ADT in register ", in.src, " (tag ", adt.tag, ") has ", adt.fields.size(),
                " fields. The executable is inconsistent; rebuild the model");
  Value field = adt.fields[static_cast<size_t>(in.index)];  // a copy: dst may be src
  Reg(in.dst) = std::move(field);
}

// InvokeClosure: the closure in "closure", whose function must take its captured values and the
// args as params, and return as many results as "dst" takes.
const vm::Object& VirtualMachine::Impl::Closure(size_t pc, const VMInstruction& in) {
  const vm::Object& closure = *ReadAs(pc, in.src, ValueKind::kClosure).object;
  const VMFunction& f = exe.functions[static_cast<size_t>(closure.tag)];
  const size_t captured = closure.fields.size();
  TESSERA_CHECK(captured + in.regs.size() == static_cast<size_t>(f.num_params) &&
                    in.dsts.size() == static_cast<size_t>(f.num_results),
                Where(pc), ": the closure in register ", in.src, " is function '", f.name, "' with ", captured,
                " captured values, called with ", in.regs.size(), " args and ", in.dsts.size(),
                " results in \"dst\", but function '", f.name, "' takes ", f.num_params,
                " params (num_params) and returns ", f.num_results,
                " results (num_results). The executable is inconsistent; rebuild the model");
  return closure;
}

void VirtualMachine::Impl::Call(size_t pc, const VMInstruction& in, int callee, const vm::Object* closure) {
  const VMFunction& f = exe.functions[static_cast<size_t>(callee)];
  TESSERA_CHECK(frames.size() <= static_cast<size_t>(kMaxVMCallDepth), Where(pc), ": call depth exceeds ",
                kMaxVMCallDepth, " (unbounded recursion?) calling function '", f.name, "'");
  TESSERA_CHECK(stack.size() + static_cast<size_t>(f.num_registers) <= kMaxVMStackRegisters, Where(pc),
                ": the registers of ", frames.size(), " nested frames exceed ", kMaxVMStackRegisters,
                " calling function '", f.name, "' (", f.num_registers, " registers; unbounded recursion?)");
  const size_t callee_base = stack.size();
  stack.resize(callee_base + static_cast<size_t>(f.num_registers));
  size_t param = callee_base;
  if (closure)
    for (const Value& v : closure->fields) stack[param++] = v;
  for (int r : in.regs) stack[param++] = ReadAny(pc, r);
  frames.back().pc = pc;
  frames.push_back({callee, callee_base, 0});
  Enter(callee, callee_base);
}

size_t VirtualMachine::Impl::ReturnToCaller(const VMInstruction& ret) {
  results.clear();
  for (int r : ret.regs) results.push_back(Reg(r));  // copies of handles: a register may be returned twice
  stack.resize(base);  // the callee's registers go
  frames.pop_back();
  const Frame& caller = frames.back();
  Enter(caller.func, caller.base);
  const VMInstruction& call = code[caller.pc];
  for (size_t k = 0; k < call.dsts.size(); ++k) Reg(call.dsts[k]) = std::move(results[k]);
  results.clear();
  return caller.pc + 1;
}

void VirtualMachine::Impl::ClearFrames() {
  results.clear();
  stack.clear();
  frames.clear();
  // A deep recursion's frames leave large buffers: give them back.
  constexpr size_t kKeep = 1 << 16;
  if (stack.capacity() > std::max(kKeep, static_cast<size_t>(exe.num_registers))) std::vector<Value>().swap(stack);
  if (frames.capacity() > kKeep) std::vector<Frame>().swap(frames);
  Enter(kMainFunction, 0);
}

std::vector<NDArray> VirtualMachine::Impl::Execute() {
  const bool multi_threaded = NumThreads() > 1;
  size_t pc = 0;
  for (;;) {
    const VMInstruction& in = code[pc];
    switch (in.op) {
      case VMOpcode::kLoadConst: Write(in.dst, consts[Site(pc)], false); break;
      case VMOpcode::kAllocTensor:
        Write(in.dst, pool.Alloc(Evaluate(pc, in.shape, in.dim_symbols, in.dtype), in.dtype), true);
        break;
      case VMOpcode::kInvokePacked: InvokePacked(pc, in, multi_threaded); break;
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
        Write(in.dst, src.CreateView(shape), Reg(in.src).pooled);
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
        Value v = ReadAny(pc, in.src);  // any kind
        Reg(in.dst) = std::move(v);
        break;
      }
      case VMOpcode::kListNew: Reg(in.dst) = Value::EmptyList(); break;
      case VMOpcode::kListPush: {
        Value pushed = Value::Push(ReadAs(pc, in.src, ValueKind::kList), Read(pc, in.value));
        Reg(in.dst) = std::move(pushed);
        break;
      }
      case VMOpcode::kListLength: {
        const int64_t length = ReadAs(pc, in.src, ValueKind::kList).length;
        NDArray out = pool.Alloc({}, DataType::Int(64));
        out.data<int64_t>()[0] = length;
        Write(in.dst, std::move(out), true);
        break;
      }
      case VMOpcode::kListStack: ListStack(pc, in); break;
      case VMOpcode::kCallBuiltin: CallBuiltin(pc, in); break;
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
        for (int r : in.regs) Reg(r) = Value();
        break;
      case VMOpcode::kRet:
        if (frames.size() == 1) return Return(pc, in);
        pc = ReturnToCaller(in);
        continue;
      case VMOpcode::kFatal: TESSERA_THROW(UserError, in.name, " (", Where(pc), ")");
      case VMOpcode::kInvoke:
        Call(pc, in, in.func, nullptr);
        pc = 0;
        continue;
      case VMOpcode::kInvokeClosure: {
        const vm::Object& closure = Closure(pc, in);
        Call(pc, in, static_cast<int>(closure.tag), &closure);  // the caller's register keeps it alive
        pc = 0;
        continue;
      }
      case VMOpcode::kAllocClosure: {
        Value closure = Value::Closure(in.func, Gather(pc, in.regs));
        Reg(in.dst) = std::move(closure);
        break;
      }
      case VMOpcode::kAllocADT: {
        Value adt = Value::ADT(in.tag, Gather(pc, in.regs));
        Reg(in.dst) = std::move(adt);
        break;
      }
      case VMOpcode::kGetField: GetField(pc, in); break;
      case VMOpcode::kIfTag: {
        const int64_t tag = ReadAs(pc, in.src, ValueKind::kADT).object->tag;
        pc = static_cast<size_t>(static_cast<int64_t>(pc) + (tag == in.tag ? in.offset : in.false_offset));
        continue;
      }
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
    outputs.push_back(Reg(r).pooled && !shared ? a : a.Clone());
  }
  return outputs;
}

VirtualMachine::VirtualMachine(Module module, int num_threads) : impl_(std::make_unique<Impl>(std::move(module))) {
  if (num_threads > 0) SetNumThreads(num_threads);
  Impl& m = *impl_;
  const std::string& origin = m.module.origin();
  m.exe = ParseVMExecutable(m.module.GraphJson(), origin);
  m.params = LoadModuleParams(m.module);
  const int num_functions = static_cast<int>(m.exe.functions.size());
  m.site_base.push_back(0);
  for (int f = kMainFunction; f < num_functions; ++f) m.site_base.push_back(m.site_base.back() + m.exe.Code(f).size());
  const size_t sites = m.site_base.back();
  m.calibration = LaunchCalibration(sites);
  m.kernels.resize(sites);
  m.args.resize(sites);
  m.consts.resize(sites);
  m.shape_args.resize(sites);
  m.symbol_values.assign(m.exe.symbols.size(), Impl::kUnbound);
  m.symbol_origins.assign(m.exe.symbols.size(), {-1, -1});
  for (int f = kMainFunction; f < num_functions; ++f) {
    const std::vector<VMInstruction>& code = m.exe.Code(f);
    for (size_t pc = 0; pc < code.size(); ++pc) {
      const VMInstruction& in = code[pc];
      const size_t site = m.site_base[f + 1] + pc;
      if (in.op == VMOpcode::kLoadConst) {
        auto it = m.params.find(in.name);
        TESSERA_CHECK(it != m.params.end(), m.WhereIn(f, pc), " loads parameter '", in.name,
                      "', which the params blob does not contain; rebuild the model");
        m.consts[site] = it->second;
      } else if (in.op == VMOpcode::kInvokePacked) {
        try {
          m.kernels[site] = m.module.GetKernel(in.name);
        } catch (const UserError& e) {
          TESSERA_THROW(UserError, m.WhereIn(f, pc), ": ", e.what());
        }
        m.args[site].resize(in.regs.size() + (in.symbols.empty() ? 0 : 1));
        m.shape_args[site].resize(in.symbols.size());
      }
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
  m.Enter(kMainFunction, 0);
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
