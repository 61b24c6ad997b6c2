// FuseOps: groups the operator calls of a dataflow graph into primitive functions, each of
// which becomes one kernel (TVM §3 "Operator fusion"; Relay's FuseOps).
//
// Rules, by op pattern kind (graph/op_registry.h):
//   - an out-elemwise-fusable op (conv2d, dense) takes the elemwise / broadcast ops that
//     follow it (bias, batch-norm scale, relu, clip, residual add...), with whatever injective
//     ops feed their other operands (an RNN step's add of a slice of the input projection);
//   - chains of injective ops (elemwise, broadcast, reshape, transpose, concatenate...) fuse,
//     except that a concatenate takes into its inputs only elementwise / broadcast ops and data
//     movement (reshape, transpose, layout_transform, squeeze, expand_dims, strided_slice, copy,
//     broadcast_to): its compute selects an input per element with every input evaluated, so a
//     fused resize or gather would run once per input for every element;
//   - a reduction takes the injective ops that feed it;
//   - opaque ops stay alone.
// A producer joins its consumer's group only when every use of it is inside that group: the
// consumer is its only use, or (a diamond, TVM's post-dominator rule) all its users already
// joined, as in GELU's y * (1 + erf(y / sqrt 2)) / 2 after a dense. So every group has exactly
// one output (its last call) and grouping never creates a cycle. A group holds at most
// `max_fuse_depth` calls.
//
// Every global function is fused (main and the functions it calls, each on its own; primitive and
// external functions stay as they are). After the pass, their bodies call ops only through
// functions with attribute "Primitive" = 1, whose
// parameters are the group's external inputs (graph inputs, constants, other groups'
// outputs) in first-use order. Requires types (run InferType first); the result needs
// InferType again. An If stays as it is: its condition and each branch's result are used by it
// as a whole (nothing fuses into the If), the calls inside a branch are grouped like any others
// (a producer outside joins a group in a branch only when every use of it is in that group, so it
// then runs only when the branch is taken). A let-bound function (a loop the VM runs, importer's
// Loop and driver/vm_codegen.h) stays: the calls in its body are grouped likewise (a producer outside
// used only in one of its groups joins it, and is then computed per iteration); a call of the
// function's Var is no group. A match stays, as an If: the matched value and each clause's result
// are read as a whole; calls of globals, closures and constructors are no group.
#pragma once

#include "tessera/graph/module.h"

namespace tessera::graph::transform {

struct FuseOpsOptions {
  int max_fuse_depth = 256;
  /// 0 puts every call in its own primitive function (what opt_level 0 does).
  int fuse_opt_level = 1;
};

IRModule FuseOps(const IRModule& mod, const FuseOpsOptions& options = {});

}  // namespace tessera::graph::transform
