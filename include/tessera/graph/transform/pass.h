// Graph-level passes on the shared pass infrastructure (ir/pass.h): the Pass and Sequential
// of graph::IRModule, and the pass objects of the graph passes.
//
// Each pass lives in its own file with one function IRModule -> IRModule (fold_constant.h,
// fuse_ops.h, ...); its *Pass() factory, declared here next to the others, carries its
// PassInfo (name, summary, opt_level) — the one place a pass declares itself.
//
//   pass                    opt_level  what it does
//   InferType               required   fills checked types (infer_type.h)
//   SimplifyInference       0          nn.batch_norm -> multiply/add; identity ops removed;
//                                      power by 1, 2, 3, 4 -> multiplies
//   FoldConstant            2          evaluates constant subgraphs (needs an evaluator)
//   FoldScaleAxis           3          folds per-channel scales into conv2d / dense weights
//   EliminateCommonSubexpr  3          merges identical calls and identical constants
//   DeadCodeElimination     1          drops unused let bindings and tuple fields
//   UnflattenReductions     2          per-sample reductions over a flattened [N, 1, M] view
//                                      run over the tensor's own axes (GroupNorm(1))
//   FuseAttention           2          matmul -> scale -> [+ bias] -> softmax -> matmul becomes
//                                      one nn.attention (fuse_attention.h)
//   FuseOps                 required   groups calls into primitive functions (fusion only
//                                      when the context's opt_level >= 1)
#pragma once

#include <string>

#include "tessera/graph/module.h"
#include "tessera/graph/printer.h"
#include "tessera/ir/pass.h"

namespace tessera::ir {
template <>
struct ModuleTraits<graph::IRModule> {
  static std::string Print(const graph::IRModule& m) { return graph::PrintModule(m); }
};
}  // namespace tessera::ir

namespace tessera::graph::transform {

using Pass = ir::Pass<IRModule>;
using Sequential = ir::Sequential<IRModule>;
using ir::PassContext;
using ir::PassInfo;

Pass InferTypePass();
Pass SimplifyInferencePass();
Pass UnflattenReductionsPass();
Pass FuseAttentionPass();
Pass FoldScaleAxisPass();
Pass EliminateCommonSubexprPass();
Pass DeadCodeEliminationPass();
/// Reads the context: fusion happens when opt_level >= 1; option "FuseOps.max_depth".
Pass FuseOpsPass();
// FoldConstantPass(evaluator) is declared in fold_constant.h (it needs the evaluator).

}  // namespace tessera::graph::transform
