// VM codegen: turns a fused main function that holds control flow into a VM executable
// (runtime/vm.h: bytecode over registers, Relay VM, arXiv 2006.03031 §4), with its params and the
// primitive functions to lower, one kernel each, as GraphExecutorCodegen does for static graphs.
//
// main's parameters are registers 0..n-1; each constant is a LoadConst of a param "pN"; each call
// of a primitive function is an AllocTensor of its output and an InvokePacked of its kernel
// (structurally identical functions share a kernel; a reshape-only function is a zero-copy
// ReshapeTensor); tuples and TupleGetItem only regroup registers. An If compiles to
//
//     If cond, +1, +k        ; then block: what only the then branch needs, Moves into the join registers
//     ...                    ; Goto past the else block
//     ...                    ; else block, ending with the same Moves
//
// so a value that only a branch needs is computed only when that branch is taken (a value first
// needed inside a branch and again after the If is computed again there). Registers are killed
// right after their last use on every path (a liveness analysis over the structured code: a register
// live before an If but not in one of its branches is killed at that branch's start), so the VM's
// storage pool reuses memory as the graph executor's static plan does.
//
// Loops (Relay's loop, arXiv 1904.08368 §3.2; the importer's ONNX Loop): a let-bound function
// `let %f = fn (params) { body }; ... %f(args) ...` whose body calls %f only in tail position
// compiles, at each call of %f, to
//
//     Move params <- args    ; the first iteration's arguments
//     <body>                 ; a tail call %f(next): every next value into fresh registers, then
//                            ;   Moves into the params and a Goto back to <body>'s start
//                            ; any other result: Moves into the loop's result registers, a Goto past it
//
// (If in tail position splits the two; the VM's register values are reference-counted, so each
// iteration's tensors return to the pool when the next one overwrites the params). A value of the
// body that does not depend on the params is computed per iteration unless it is also needed
// before the loop. Registers read in a later iteration stay live through the whole body (liveness
// to a fixpoint over the back edge). A let-bound function is such a loop when it calls itself only
// in tail position (an If's branch, a let's body; not a match clause) and is otherwise only called,
// never used as a value; any other function value is a closure (below).
//
// Functions, closures and ADTs (Relay as a language; executable version 3, runtime/vm.h):
//   - a global function @f (graph::GlobalVar) is a VM function of its own, compiled once after main
//     (in order of first use) with its params in registers 0..; `@f(args)` is an Invoke, and recursion
//     and mutual recursion are plain calls (the VM keeps the frames; its depth limit makes unbounded
//     recursion a UserError). @f used as a value is a closure that captures nothing;
//   - a function value (a `fn` that is no loop and no primitive function) is lifted to a VM function
//     whose first params are its free variables (graph::FreeVars; Relay's LambdaLift) and is an
//     AllocClosure that captures their registers; a call of a closure (a Var of function type, a
//     param, a function value) is an InvokeClosure. A let-bound function that names itself and is no
//     loop (`let %fact = fn (%k) { ... %fact(...) ... }`) is a recursive closure: its VM function
//     rebuilds the closure from its captured params at entry for the calls in its body;
//   - a constructor call `Cons(%x, %xs)` is an AllocADT with the constructor's tag;
//   - `match (v) { p => e, ... }` is a block that tests the clauses in order: a constructor pattern is
//     an IfTag (then block: GetField of each field a sub-pattern reads, then the sub-patterns' tests),
//     a variable binds the value's registers, `_` and tuple patterns test nothing of their own; the
//     first clause whose tests pass moves its result into the match's registers and leaves the block;
//     when none does, a Fatal ("no clause of a match ... matches the value").
// Tuples are no VM values: an Invoke's args and dst, a function's params and results, an ADT's
// fields and a closure's captures hold a tuple's fields flattened, left to right (a GetField's index
// counts flattened fields). A program's inputs and outputs stay tensors (an ADT or closure there is
// an UnsupportedError).
//
// A primitive function that is one vm.shape_of call is a ShapeOf (a tensor's extents at run time).
// One vm.image_decode call is a CallBuiltin of the runtime's image_decode (runtime/vm_builtins.h),
// whose result binds the output's symbols (executable version 4).
//
// A primitive function that is one vm.fatal call (an If branch that cannot run with the compiled
// shapes, graph/op/vm.cc) compiles to a Fatal instruction with its message.
//
// Symbolic shapes (dynamic shapes: graph::Dim::Symbolic, kept by the importer): a symbolic dim is a
// VM symbol of the same name (runtime/vm.h), bound from the inputs' shapes at each run; inputs,
// outputs, AllocTensor and ReshapeTensor shapes name it, and an InvokePacked of a kernel with
// symbolic extents passes them as "shape_args" (the kernel's shape_vars order: first appearance
// over its params' shapes, then its outputs'). The kernel is compiled once for every extent.
// A data-dependent shape (a primitive function that is one vm.reshape / vm.full / vm.reduce /
// vm.broadcast_to / vm.tile / vm.slice call, graph/op/vm.cc) first binds its output's symbols with a LoadShape
// of its shape operand (a shape function's result); vm.reshape is then a ReshapeTensor, no kernel.
//
// Not supported here (UnsupportedError with the reason): external functions (BYOC) in a program
// with control flow, extents no type relation computes ("?": shape functions), a call of @main, a
// loop function used as a value.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tessera/driver/graph_executor_codegen.h"
#include "tessera/graph/module.h"
#include "tessera/runtime/ndarray.h"

namespace tessera::driver {

/// Whether `mod`'s main holds control flow or the language's values (If, Let, Match, a call of a
/// global, a constructor, a function value): what the graph executor cannot run and the VM can.
bool HasControlFlow(const graph::IRModule& mod);

/// Whether a type in `mod`'s main (a param, a value) has a symbolic dim: what only the VM runs.
bool HasSymbolicShapes(const graph::IRModule& mod);

/// The VM executable of `fused` (FuseOps and InferType run; main and the functions it calls): ExecutorPlan::graph_json holds the
/// "tessera-vm" JSON; params, kernels and kernel_calls as GraphExecutorCodegen's; num_nodes is the
/// number of InvokePacked instructions, storage_bytes = unplanned_bytes the bytes of all
/// AllocTensor instructions. `output_names` and `input_guards` as GraphExecutorCodegen's.
ExecutorPlan VMCodegen(const graph::IRModule& fused, const std::vector<std::string>& output_names,
                       const std::map<std::string, runtime::NDArray>& input_guards = {});

}  // namespace tessera::driver
