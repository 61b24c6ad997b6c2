// Internal: what the graph_lower rewrites (PackGemmWeights, WinogradConv2d) share: the static
// shape of a typed expression, and running an ExprMutator over every function of a module.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "tessera/graph/functor.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph_lower/compute_registry.h"

namespace tessera::graph_lower::detail {

/// The static shape of a tensor-typed expression (after type inference), or nullopt.
inline std::optional<std::vector<int64_t>> StaticShapeOf(const graph::Expr& e) {
  if (!e->has_checked_type()) return std::nullopt;
  const auto* tt = e->checked_type()->as<graph::TensorTypeNode>();
  if (!tt) return std::nullopt;
  return graph::StaticShape(tt->shape);
}

/// Registers the computes (and the graph_lower ops), infers types, rewrites every function of
/// `input` with a fresh Mutator and infers types again.
template <class Mutator>
graph::IRModule MutateEachFunction(const graph::IRModule& input) {
  RegisterComputes();
  graph::IRModule mod = graph::InferType(input);
  graph::IRModule out;
  for (const auto& [name, fn] : mod.functions())
    out.Add(name, std::static_pointer_cast<const graph::FunctionNode>(Mutator().Mutate(fn)));
  return graph::InferType(out);
}

}  // namespace tessera::graph_lower::detail
