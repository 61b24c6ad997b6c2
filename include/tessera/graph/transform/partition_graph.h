// Graph partitioning for external backends (BYOC, arXiv 2105.03215 §3.2-3.3; TVM's
// AnnotateTarget, MergeCompilerRegions and PartitionGraph), three IRModule -> IRModule passes
// run in this order (after MergeComposite, merge_composite.h):
//
// AnnotateTarget(backends): every call an external backend supports (the first in the list whose
//   `supports` accepts it; a composite function whose Composite attr is "<backend>.<name>" belongs
//   to that backend) is wrapped as
//     annotation.compiler_end(op(annotation.compiler_begin(a0), ...), compiler=B)
//   each argument in a compiler_begin and the result in a compiler_end (attr compiler = B).
// MergeCompilerRegions: a call whose argument is compiler_begin(compiler_end(p)) of the same
//   backend joins p's region (the pair disappears) unless that would make a cycle: another input
//   of the call depends on p's region through a node outside it. Each call joins at most one
//   producer region (the first argument's that allows it); annotations stay at region borders.
// PartitionGraph: each region (calls connected by arguments without annotations between them)
//   becomes a function called in its place:
//     fn(%<B>_<k>_i0, ...) { <the region> }  attrs Compiler = B, global_symbol = "<B>_<k>"
//   (k numbers the regions in post-order), params for the region's compiler_begin inputs, a tuple
//   of results when several of its values leave it, in the post-order of their compiler_end
//   (users outside read them by TupleGetItem). No annotation remains.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tessera/graph/module.h"
#include "tessera/graph/transform/pass.h"

namespace tessera::graph::transform {

/// An external backend as the partitioner sees it.
struct ExternalBackend {
  std::string name;  ///< "dnnl", "csource": the Compiler attr and the composites' prefix
  /// Whether the backend runs this op call (its op, attrs, checked types). Empty: only the
  /// backend's composites.
  std::function<bool(const CallNode& call)> supports;
};

/// The ops an external function runs, in post-order, each once (a composite by its Composite
/// name, e.g. "dnnl.conv2d_bias_relu"): what `tessera inspect` lists per external function.
std::vector<std::string> ExternalFunctionOps(const FunctionNode& fn);

IRModule AnnotateTarget(const IRModule& mod, const std::vector<ExternalBackend>& backends);

/// Undoes PartitionGraph for the external functions `keep` refuses: their body takes the call's
/// place (parameters bound to the arguments; a tuple result's fields read directly), so their ops
/// go back to Tessera's path. For a backend to drop regions not worth a call (a lone add).
IRModule InlineExternalFunctions(const IRModule& mod, const std::function<bool(const FunctionNode&)>& keep);
/// As a pipeline pass (opt_level 0), named "InlineExternalFunctions".
Pass InlineExternalFunctionsPass(std::function<bool(const FunctionNode&)> keep);
IRModule MergeCompilerRegions(const IRModule& mod);
IRModule PartitionGraph(const IRModule& mod);

/// The three as pipeline passes (opt_level 0).
Pass AnnotateTargetPass(std::vector<ExternalBackend> backends);
Pass MergeCompilerRegionsPass();
Pass PartitionGraphPass();

}  // namespace tessera::graph::transform
