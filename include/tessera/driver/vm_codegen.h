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
// to a fixpoint over the back edge). A call of %f other than in tail position of its own body
// (recursion that is not a loop), or of a function var that is not let-bound, is an
// UnsupportedError.
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
// with control flow, functions as values other than let-bound loops, extents no type relation
// computes ("?": shape functions).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tessera/driver/graph_executor_codegen.h"
#include "tessera/graph/module.h"
#include "tessera/runtime/ndarray.h"

namespace tessera::driver {

/// Whether `mod`'s main holds control flow (If, Let): what the graph executor cannot run and the
/// VM can.
bool HasControlFlow(const graph::IRModule& mod);

/// Whether a type in `mod`'s main (a param, a value) has a symbolic dim: what only the VM runs.
bool HasSymbolicShapes(const graph::IRModule& mod);

/// The VM executable of `fused` (FuseOps and InferType run): ExecutorPlan::graph_json holds the
/// "tessera-vm" JSON; params, kernels and kernel_calls as GraphExecutorCodegen's; num_nodes is the
/// number of InvokePacked instructions, storage_bytes = unplanned_bytes the bytes of all
/// AllocTensor instructions. `output_names` and `input_guards` as GraphExecutorCodegen's.
ExecutorPlan VMCodegen(const graph::IRModule& fused, const std::vector<std::string>& output_names,
                       const std::map<std::string, runtime::NDArray>& input_guards = {});

}  // namespace tessera::driver
