// Internal: the annotation ops of the BYOC passes (partition_graph.h).
#pragma once

#include <string>

#include "tessera/graph/expr.h"

namespace tessera::graph::transform::byoc {

inline const char* kBegin = "annotation.compiler_begin";
inline const char* kEnd = "annotation.compiler_end";

/// The call when `e` is a call of the op `name`, else nullptr.
inline const CallNode* CallOf(const Expr& e, const std::string& name) {
  const auto* c = e ? e->as<CallNode>() : nullptr;
  const auto* op = c ? c->op->as<OpNode>() : nullptr;
  return op && op->name == name ? c : nullptr;
}

inline Expr Annotate(const std::string& op, Expr x, const std::string& compiler) {
  return CallNode::make(OpNode::Get(op), {std::move(x)}, Attrs{{"compiler", compiler}});
}

}  // namespace tessera::graph::transform::byoc
