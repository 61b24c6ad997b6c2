// Internal: what the graph_lower rewrites (PackGemmWeights, WinogradConv2d) share: running an
// ExprMutator over every function of a module (their expression helpers: graph/expr_util.h).
#pragma once

#include <memory>

#include "tessera/graph/functor.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph_lower/compute_registry.h"

namespace tessera::graph_lower::detail {

/// Registers the computes (and the graph_lower ops), infers types, rewrites every function of
/// `input` with a fresh Mutator(args...) and infers types again.
template <class Mutator, class... Args>
graph::IRModule MutateEachFunction(const graph::IRModule& input, const Args&... args) {
  RegisterComputes();
  graph::IRModule mod = graph::InferType(input);
  graph::IRModule out = graph::IRModule::WithTypesOf(mod);
  for (const auto& [name, fn] : mod.functions())
    out.Add(name, std::static_pointer_cast<const graph::FunctionNode>(Mutator(args...).Mutate(fn)));
  return graph::InferType(out);
}

}  // namespace tessera::graph_lower::detail
