// VirtualMachine: runs a compiled program with control flow (the Relay VM, arXiv 2006.03031 §4:
// a register-based bytecode interpreter whose instructions call compiled kernels).
//
// A model whose main function holds control flow (an ONNX If on a run-time condition) cannot
// be a static executor graph: `tessera compile` then writes a VM executable instead of a graph
// (driver/vm_codegen.h), in the same symbol (__tessera_graph_json, kernel_abi.h) and with the same
// params blob, kernels, target record and content hash. MakeExecutor (executor.h) picks the
// executor by the JSON's "format".
//
// VM executable JSON, version 1, 2, 3 or 4 (this runtime reads all four, with the same fields; a
// writer that uses a dynamic-shape field below, symbols, "shape_args", ShapeOf or LoadShape, writes
// 2, one that uses "functions" or an instruction of "Functions, closures and ADTs" writes 3, one
// that uses CallBuiltin ("Builtins") writes 4, so that a runtime from before them refuses the
// executable by its version):
//
//   {"format": "tessera-vm", "version": 1,
//    "num_registers": 12,
//    "inputs":  [{"name": "input", "dtype": "float32", "shape": [1, 576]}, ...],
//    "outputs": [{"name": "output", "dtype": "float32", "shape": [1, 1]}, ...],
//    "instructions": [ {"op": ...}, ... ],
//    "guards":  [{"input": "sr", "param": "p9"}]}    // optional, as the graph executor's
//
// Input i is in register i when the program starts (number of inputs <= num_registers <= 2^20).
// "inputs" and "outputs" names are unique within each list; dtypes are DataType::str() names of
// tensor element types (not void or handle), extents are >= 0.
//
// Shapes (dynamic shapes: Relay's Any, Nimble arXiv 2006.03031). Every shape, in "inputs",
// "outputs", AllocTensor and ReshapeTensor, is an array whose entries are extents (integers >= 0)
// or symbols: a JSON string naming a run-time int64 extent, e.g.
//
//   "inputs":  [{"name": "ids", "dtype": "int64", "shape": ["batch", "seq"]},
//               {"name": "mask", "dtype": "float32", "shape": ["batch", "seq"]}],
//   "outputs": [{"name": "logits", "dtype": "float32", "shape": ["batch", "seq", 2]}]
//
// A symbol name is non-empty and made of letters, digits and _ . : - (another string is a UserError
// at load). A symbol is bound (given its value in the current run) by
//   - the inputs: Invoke / Run checks them in order; a symbol's first dim binds it to the given
//     array's extent, a later dim naming it must have the same extent (UserError naming both inputs,
//     the dims and the symbol: "input 'mask' dim 1 is 7, but symbol 'seq' is 5 from input 'ids'
//     dim 1"); ranks and static dims are checked as before (InputShape gives -1 for a symbolic dim,
//     InputDimNames its name);
//   - LoadShape (below), which may bind a symbol again (a new value from then on), ListStack's first
//     dim and CallBuiltin's result ("Builtins").
// A symbol's value is at most 2^31 - 1 (kernels compiled for symbolic extents index with int32): a
// larger input extent or LoadShape value is a UserError naming the input / instruction and the symbol.
// AllocTensor and ReshapeTensor evaluate their symbolic dims from the current values; Ret checks
// each output's static dims and that its symbolic dims equal the symbols' values. Every symbol
// used (an AllocTensor / ReshapeTensor shape, an InvokePacked "shape_args", an output's shape) must
// be bound somewhere in the program, by an input's shape or a LoadShape (UserError at load naming the
// instruction, or "outputs[k]", and the symbol); which path binds it is checked at run time: a use
// on a path where it is not bound (its LoadShape skipped) is a UserError naming the instruction
// and the symbol, never a crash. Every run starts with no symbol bound but the inputs'.
//
// The instructions (pc: the index of the running one; offsets are relative to it, as Relay VM's; a
// jump to itself, offset 0, is refused):
//
//   {"op": "LoadConst", "dst": r, "param": "p3"}
//       r = the params-blob tensor "p3" (shared, read-only: no kernel writes it).
//   {"op": "AllocTensor", "dst": r, "dtype": "float32", "shape": [1, 64]}     // or [1, "seq"]
//       r = a new uninitialized tensor (64-byte aligned, from the VM's storage pool); symbolic
//       dims take their symbols' current values.
//   {"op": "InvokePacked", "kernel": "fused_conv2d_3", "args": [r0, r1, r2], "num_outputs": 1,
//    "checks": ["node 'g' (op Gather, domain ai.onnx, opset 13)"],       // checks optional
//    "shape_args": ["batch", "seq"]}                                      // shape_args optional
//       calls the kernel (kernel_abi.h) with the data pointers of the registers, inputs then the
//       last num_outputs registers (0 <= num_outputs <= number of args), which it writes: they
//       must hold tensors of AllocTensor (directly, moved or reshaped), never a param or an input.
//       A kernel compiled with symbolic extents takes one more slot: with a non-empty "shape_args"
//       the VM fills an int64 array with those symbols' current values, in that order (the kernel's
//       order of its shape variables; a symbol may appear twice), and passes its address as
//       args[number of args] (kernel_abi.h). No extra slot when "shape_args" is absent or [].
//   {"op": "ReshapeTensor", "dst": r, "src": s, "shape": [64]}                 // or ["seq", 4]
//       r = a zero-copy view of s with another shape (same dtype, same element count); symbolic
//       dims take their symbols' current values.
//   {"op": "Move", "dst": r, "src": s}
//       r = s (the same tensor; no copy).
//   {"op": "If", "cond": r, "true_offset": 1, "false_offset": 5}
//       r holds one scalar element of any dtype: pc += true_offset when it is non-zero (NaN is
//       non-zero, -0.0 is zero), else pc += false_offset.
//   {"op": "Goto", "offset": 3}
//       pc += offset.
//   {"op": "Kill", "regs": [r, ...]}
//       drops the registers' tensors (storage goes back to the pool when no register holds it);
//       the registers are unassigned until written again.
//   {"op": "Ret", "results": [r, ...]}
//       ends the run; output k is register results[k] (its dtype and shape are checked against
//       "outputs" k).
//   {"op": "Fatal", "message": "..."}
//       ends the run with a UserError: the message, then the instruction and module (as Relay VM's
//       Fatal: e.g. an If branch that cannot run with the shapes the model was compiled for).
//   {"op": "ShapeOf", "dst": r, "src": s}
//       r = a new 1-D int64 tensor (from the pool) holding the shape of s (Relay VM's ShapeOf): the
//       input of a shape function.
//   {"op": "LoadShape", "src": r, "symbols": ["d0", "d1"]}
//       binds each symbol (names unique within the list) to its value in r, in order (a shape
//       function's result): r must hold an int32 or int64 tensor of 0 or 1 dims with exactly as many
//       elements as there are symbols (else a UserError naming the instruction). A symbol already
//       bound gets the new value (e.g. in a loop). A negative value is a UserError naming the
//       instruction and the symbol ("a shape computed at run time has the negative extent -3
//       (symbol 'd1')"), and binds none of the list.
//
// Lists of tensors (Relay's tensor array: a List ADT of tensors, arXiv 1904.08368 §3.3; what an ONNX
// Loop's scan outputs of run-time length accumulate). A register holds a tensor or a list (or, in
// version 3, an ADT or a closure: below); lists are immutable and share their elements (a push is O(1) and leaves the list it extends as it was):
//   {"op": "ListNew", "dst": r}
//       r = an empty list.
//   {"op": "ListPush", "dst": r, "src": l, "value": v}
//       r = the list in l with the tensor in v appended (l unchanged).
//   {"op": "ListLength", "dst": r, "src": l}
//       r = a new int64 scalar tensor (from the pool) holding the length of the list in l.
//   {"op": "ListStack", "dst": r, "src": l, "dtype": "float32", "shape": ["n", 4, "d"]}
//       binds the shape's first dim, which must be a symbol, to the list's length, then r = a new
//       tensor (from the pool) of that shape holding the elements stacked along a new axis 0, in
//       order. Every element must have `dtype` and the rest of the shape (its symbols evaluated):
//       else a UserError naming the instruction and the element.
//   {"op": "ListAt", "dst": r, "src": l, "index": i}
//       r = the element of the list in l at the position in i (one integer: in [-length, length),
//       negative from the end, ONNX SequenceAt; else a UserError naming the instruction). No copy:
//       r shares the element (as a Move, read-only for kernels).
// Builtins (version 4): run-time functions that are no compiled kernel (runtime/vm_builtins.h lists
// them; Relax VM's "vm.builtin.*" calls), e.g. ONNX ImageDecoder, whose result's shape only decoding
// the stream tells:
//   {"op": "CallBuiltin", "dst": r, "name": "image_decode", "args": [s], "attrs": {"pixel_format": "RGB"},
//    "dtype": "uint8", "shape": ["h", "w", 3]}
//       r = a new tensor (from the pool) that the builtin computes from the args' tensors; each
//       symbol of "shape" is bound to the result's extent in that dim (like LoadShape), each static
//       dim and the dtype must match (else a UserError: the executable is inconsistent). At load: the
//       builtin must exist in this runtime (else a UserError listing the ones it has), with its number
//       of args and exactly its attrs (strings, which it checks). A UserError of the builtin (an
//       argument it cannot take) names the instruction.
// Move copies a list like a tensor, Kill drops it (its elements' storages go back to the pool when no
// list or register holds them). A tensor instruction reading a list register, or a list instruction
// reading a tensor (the JSON gives registers no types), is a UserError naming the instruction and
// the kind found ("reads register 2 as a list, but it holds a tensor").
//
// Functions, closures and ADTs (version 3; the Relay VM's Invoke / InvokeClosure / AllocClosure /
// AllocADT / GetField, arXiv 2006.03031 §4, with its GetTag + If fused as IfTag). A version-3
// executable may have a top-level list of functions besides main (main is the top-level program:
// "inputs", "outputs", "instructions", "num_registers"; it is not in "functions"):
//
//   "functions": [
//     {"name": "sum", "num_params": 1, "num_results": 1, "num_registers": 7, "instructions": [...]},
//     ...]
//
// Function k (its index in the list) runs in a frame of its own with num_registers registers
// (num_params <= num_registers <= 2^20; num_params, num_results >= 0); its params are registers
// 0..num_params-1 at entry. Names are non-empty and unique. Every instruction above works in a
// function as in main, on the frame's registers; offsets are relative and stay inside the
// function's instructions, which cannot fall off their end either. In a function, Ret's "results"
// are exactly num_results registers; it returns their values (of any kind) to the caller's "dst"
// registers and pops the frame (its registers go; no tensor is copied). Ret in main is as above
// (results are tensors: another kind is a UserError naming the instruction). The new instructions,
// on registers of the current frame:
//   {"op": "Invoke", "func": k, "args": [r, ...], "dst": [r, ...]}
//       calls functions[k] in a new frame whose params are the values of "args" (as many as its
//       num_params); when it returns, its results go to "dst" (as many as its num_results, distinct
//       registers). The args are read (the caller keeps them), dst are written.
//   {"op": "AllocClosure", "dst": r, "func": k, "captured": [r, ...]}
//       r = a closure: function k with the values of "captured" (at most its num_params).
//   {"op": "InvokeClosure", "closure": c, "args": [r, ...], "dst": [r, ...]}
//       calls the closure in c with params = its captured values then the args; the captured
//       values and args must be as many as the function's num_params and "dst" as many as its
//       num_results (else a UserError naming the instruction, the function and the counts). dst
//       registers are distinct.
//   {"op": "AllocADT", "dst": r, "tag": t, "fields": [r, ...]}
//       r = an ADT value (Relay's ADT object): constructor tag t (an integer >= 0) and the values of
//       "fields" (any kinds, possibly none). Immutable, shared by reference.
//   {"op": "GetField", "dst": r, "src": s, "index": i}
//       r = field i (an integer >= 0) of the ADT in s (shared, no copy). i not below the ADT's field
//       count is a UserError naming the instruction, the tag and the field count.
//   {"op": "IfTag", "src": s, "tag": t, "true_offset": a, "false_offset": b}
//       pc += a when the tag of the ADT in s is t (>= 0), else pc += b (jumps validated as If's).
// A register holds a tensor, a list, an ADT or a closure; ADT fields and closure captures hold any
// of them. An instruction reading a tensor (InvokePacked, ReshapeTensor, ShapeOf, LoadShape, If,
// ListPush's value, ListAt's index, main's Ret) from a register of another kind, a list instruction,
// GetField / IfTag (ADT) or InvokeClosure (closure) reading another kind is a UserError naming the
// instruction, the register and the kind found. Move and Kill take every kind. Symbols are global
// to the run: a function binds and reads main's symbols.
// At load, per function as for main: registers below its num_registers, jumps inside it, no fall
// off its end, definite assignment (its params are assigned at entry; Invoke / InvokeClosure write
// their "dst"; AllocClosure / AllocADT / GetField write "dst"; they read "args", "closure",
// "captured", "fields", "src"), no InvokePacked output that may hold one of its params, a call's
// result or a GetField's field (in main too: any of them may be an input or a param); "func"
// indices in range; Invoke's args / dst counts; AllocClosure's captured count; tags and indices >= 0;
// every symbol used is bound somewhere in main or a function. An executable of version 1 or 2 with
// "functions" or one of these instructions is a UserError naming "functions" / the instruction.
// Messages name the function: "instruction 3 (GetField) of function 'sum'" (main's instructions
// are named as before).
// Run time: calls do not recurse on the C++ stack (the VM keeps a stack of frames). More than
// kMaxVMCallDepth (100,000) nested calls is a UserError naming the instruction ("call depth exceeds
// 100000 (unbounded recursion?)"), and so are frames that would hold more than
// kMaxVMStackRegisters registers in all (2^23, about 64 bytes each). On any error every frame is
// dropped (as the registers: see below). Dropping the last handle to a long chain of ADTs or list
// cells (a million Cons cells) frees it in a loop, never by nested destructor calls. InvokePacked
// calibrates its launches per instruction of each function as in main.
//
// Validation at load (ParseVMExecutable, vm_executable.h; then the VirtualMachine's constructor for
// the kernels and params; for functions see above): the fields above; every register < num_registers; every jump lands
// inside the program; the program cannot fall off its end (the last instruction is a Ret, a Fatal
// or a Goto); Ret returns as many results as there are outputs; every register read (InvokePacked args,
// ReshapeTensor / Move / ShapeOf / LoadShape / List* src, ListPush value, ListAt index, If cond, Ret results) is
// written on every path
// reaching the read
// (inputs are written at entry, Kill unwrites; a forward "definitely assigned" analysis over the
// control-flow graph; code no path reaches is not checked); no InvokePacked output may hold a
// param or an input on any path (nor a call's result, a GetField's field or a ListAt's element,
// which may be one); every kernel exists in the module (Module::GetKernel, looked up
// once), every LoadConst and guard param exists in the blob (a guard's with its input's type);
// every symbol used is bound somewhere (see Shapes).
// A malformed executable is a UserError naming the module and the instruction (index and op:
// "instruction 3 (InvokePacked)"), or the entry ("inputs[1]", "\"version\""); never a crash.
//
// Run time: Invoke checks the number of inputs and each input's dtype and shape against "inputs"
// (UserError naming the input, the expected and the given type; a symbolic dim takes any extent,
// the same for every dim naming the symbol), then the guards, copies nothing
// (an input's register holds the caller's array, which kernels only read; only an input whose data
// is not 64-byte aligned is copied into the pool, kernel_abi.h), runs from pc 0 to a Ret and
// returns the outputs, each an array the caller owns alone (the VM keeps no handle to it): a
// result that is a pool tensor is handed over as it is (its storage returns to the pool when the
// caller drops it); a param, an input, or a tensor sharing its storage with an earlier output is
// copied. The run-time checks are UserErrors naming the instruction: a Ret result whose dtype or
// shape is not its output's (its symbolic dims evaluated), a ReshapeTensor to another element
// count, an If condition that is no single scalar, a symbol used where it is not bound, a LoadShape
// value that is negative or a LoadShape source of another dtype, rank or element count, an
// AllocTensor whose evaluated shape is over 2^63 bytes (and those of "Functions, closures and
// ADTs"). A register read that holds no value (impossible after validation) is a tessera::Error
// naming the instruction. A kernel failure is reported as the graph executor's
// (UserError for kKernelIndexOutOfRange naming `checks`, and kKernelOutOfMemory; tessera::Error
// for other statuses), naming the instruction and its kernel ("instruction 5 (InvokePacked,
// kernel 'k') of module 'm'"). On any error the frames and registers are cleared, the pool keeps its
// storage, and the VM can run again.
//
// Launches: with more than one thread, each InvokePacked's first calls calibrate whether its
// parallel loops run on the calling thread, as the graph executor's nodes (launch_calibration.h;
// TESSERA_LAUNCH_CALIBRATION=0 turns it off).
//
// Memory: AllocTensor (and ShapeOf, and the aligned copy of a misaligned input) takes a storage
// from the pool (the smallest free one whose size is at least the tensor's bytes rounded up to a
// multiple of 64, at least 64, and at most twice that; else a new allocation of that size); a
// storage returns to the pool when no register and no returned output holds it (Kill, a register
// overwritten, the end of a run, the caller dropping an output). Release: at the end of each run
// (successful or not) the pool frees every free storage that no allocation of that run took. So a
// program that runs again and again with the same shapes, its caller keeping no outputs, allocates
// nothing after its first run (each run takes the storages the one before took), and with shapes
// that change from run to run the pool does not grow without bound:
//   PoolBytes() <= 2 * B(previous run) + B(this run) + the bytes of earlier outputs still held
// where B(run) is the sum over the run's allocations of their bytes rounded up to 64 (a storage
// kept from the previous run was taken by one of its allocations, at most twice its size; a new
// one is exactly its allocation's size). For a program without loops or recursion, B is at most the
// bytes its AllocTensors ask for at the largest shapes it runs with. Storages held by ADT fields,
// closure captures and list elements are in use until the last handle to them goes. PoolBytes() / PoolAllocations() report
// it (tests).
//
// Threads: a VirtualMachine is not thread-safe, as GraphExecutor (one Invoke at a time); kernels'
// parallel loops use the process-wide thread pool (thread_pool.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/runtime/executor.h"
#include "tessera/runtime/module.h"
#include "tessera/runtime/ndarray.h"

namespace tessera::runtime {

/// The most nested function calls a run may make (vm.h "Functions, closures and ADTs").
inline constexpr int kMaxVMCallDepth = 100000;
/// The most registers the frames of a run may hold together (main's and every active call's).
inline constexpr size_t kMaxVMStackRegisters = size_t{1} << 23;

class VirtualMachine final : public Executor {
 public:
  /// Loads `module`'s VM executable (UserError when its JSON is no valid "tessera-vm" program,
  /// see above). num_threads > 0 sets the process-wide thread pool size (SetNumThreads).
  explicit VirtualMachine(Module module, int num_threads = 0);
  ~VirtualMachine() override;
  VirtualMachine(VirtualMachine&&) noexcept;
  VirtualMachine& operator=(VirtualMachine&&) noexcept;

  /// Runs the program on `inputs` (one per "inputs" entry, in order) and returns the outputs.
  std::vector<NDArray> Invoke(const std::vector<NDArray>& inputs);

  // Executor: SetInput checks the array and keeps a handle to it (no copy: the following Run()s
  // read its current contents); Run() invokes with the inputs set (UserError naming the first
  // input not set) and keeps the outputs until the next Run(); GetOutput copies one of them
  // (UserError when the last Run() failed or there was none).
  int NumInputs() const override;
  int NumOutputs() const override;
  const std::string& InputName(int index) const override;
  const std::string& OutputName(int index) const override;
  const std::vector<int64_t>& InputShape(int index) const override;
  const std::vector<int64_t>& OutputShape(int index) const override;
  std::vector<std::string> InputDimNames(int index) const override;
  std::vector<std::string> OutputDimNames(int index) const override;
  DataType InputDType(int index) const override;
  DataType OutputDType(int index) const override;
  int InputIndex(const std::string& name) const override;
  int OutputIndex(const std::string& name) const override;
  void SetInput(const std::string& name, const NDArray& value) override;
  void SetInput(int index, const NDArray& value) override;
  void Run() override;
  NDArray GetOutput(int index) const override;

  /// Bytes held by the storage pool (free and in use) and the number of allocations it made
  /// since the VM was built.
  size_t PoolBytes() const;
  int64_t PoolAllocations() const;
  /// Number of instructions of the program (main's).
  int NumInstructions() const;
  /// The symbols the program names (vm.h "Shapes"), in order of first appearance.
  const std::vector<std::string>& Symbols() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::runtime
