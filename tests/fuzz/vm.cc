// Fuzz target vm: what the runtime's loader parses of a VM program (runtime/vm.h) embedded in an
// artifact — the executable JSON and the params blob — through a VirtualMachine built over a symbol
// table in memory (no library): ParseVMExecutable (fields, registers, jumps, the dataflow check),
// LoadParams, the kernel and param lookups; then one Invoke on zero inputs (every kernel a no-op;
// every symbolic input dim 1; a program with a LoadShape, whose values may ask for any size, or with
// more than one call site, whose recursion may take exponential time, is built but not run).
// Input: the JSON, a NUL byte, the params blob (no NUL: the JSON alone).
#include <cstring>

#include "fuzz_target.h"
#include "memory_module.h"
#include "tessera/runtime/kernel_abi.h"
#include "tessera/runtime/module.h"
#include "tessera/runtime/vm.h"
#include "tessera/runtime/vm_executable.h"

namespace {

// Bytes the run may allocate (every AllocTensor once) and inputs it makes: bounded so that a
// program asking for terabytes is not "found" as an out-of-memory crash (a valid one may ask that).
constexpr size_t kMaxBytes = size_t{256} << 20;

// A symbolic dim (kDynamicDim) counts as 1: the inputs bind every symbol to 1.
std::vector<int64_t> Concrete(std::vector<int64_t> shape) {
  for (int64_t& d : shape)
    if (d == tessera::runtime::kDynamicDim) d = 1;
  return shape;
}

size_t TensorBytes(const std::vector<int64_t>& symbolic, tessera::runtime::DataType dtype) {
  const std::vector<int64_t> shape = Concrete(symbolic);
  size_t n = (dtype.bits() * static_cast<size_t>(dtype.lanes()) + 7) / 8;
  for (int64_t d : shape) {
    if (d != 0 && n > kMaxBytes / static_cast<size_t>(d)) return kMaxBytes + 1;
    n *= static_cast<size_t>(d);
  }
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::runtime;
  auto [json, blob] = tessera::fuzz::SplitAtNul(tessera::fuzz::Bytes(data, size));
  VMExecutable exe;
  if (!tessera::fuzz::AcceptUserErrors([&] { exe = ParseVMExecutable(json, "fuzz"); })) return 0;
  // A backward jump may loop forever, as a valid program may: only forward-jumping programs run.
  // With functions (version 3), recursion repeats a function's code up to kMaxVMCallDepth times, and
  // two call sites may take exponential time: such a program runs only when it has at most one call
  // site (a chain of calls, at most kMaxVMCallDepth deep) and its functions' allocations repeated
  // that often stay in bounds; otherwise it is built, not run.
  size_t total = 0;
  bool run = true;
  int call_sites = 0;
  auto repeats_of = [&](int func) { return func == kMainFunction ? size_t{1} : static_cast<size_t>(kMaxVMCallDepth); };
  // Instructions a run may execute: a bound on the pushes of any list it stacks.
  size_t runs = 0;
  for (int func = kMainFunction; func < static_cast<int>(exe.functions.size()); ++func)
    runs += exe.Code(func).size() * repeats_of(func);
  auto times = [](size_t bytes, size_t n) { return bytes > kMaxBytes / n ? kMaxBytes + 1 : bytes * n; };
  for (int func = kMainFunction; func < static_cast<int>(exe.functions.size()); ++func) {
    for (const VMInstruction& in : exe.Code(func)) {
      if (in.op == VMOpcode::kLoadShape) run = false;
      if (in.op == VMOpcode::kInvoke || in.op == VMOpcode::kInvokeClosure) ++call_sites;
      const bool jumps_back = ((in.op == VMOpcode::kIf || in.op == VMOpcode::kIfTag) && (in.offset < 0 || in.false_offset < 0)) ||
                              (in.op == VMOpcode::kGoto && in.offset < 0);
      if (jumps_back) return 0;
      if (in.op == VMOpcode::kAllocTensor) total += times(TensorBytes(in.shape, in.dtype), repeats_of(func));
      if (in.op == VMOpcode::kListStack) total += times(times(TensorBytes(in.shape, in.dtype), runs), repeats_of(func));
      if (total > kMaxBytes) return 0;
    }
  }
  if (call_sites > 1) run = false;
  for (const VMTensorInfo& t : exe.inputs) total += TensorBytes(t.shape, t.dtype);
  if (total > kMaxBytes) return 0;
  tessera::fuzz::AcceptUserErrors([&] {
    VirtualMachine vm(Module(std::make_shared<tessera::fuzz::MemorySymbols>(std::move(json), std::move(blob)), "fuzz"));
    if (!run) return;
    std::vector<NDArray> inputs;
    for (int i = 0; i < vm.NumInputs(); ++i) {
      NDArray in = NDArray::Empty(Concrete(vm.InputShape(i)), vm.InputDType(i));
      std::memset(in.raw_data(), 0, in.NBytes());
      inputs.push_back(in);
    }
    vm.Invoke(inputs);
  });
  return 0;
}
