#include "tessera/graph/expr_util.h"

namespace tessera::graph {

Expr CallOp(const std::string& name, std::vector<Expr> args, Attrs attrs) {
  return CallNode::make(OpNode::Get(name), std::move(args), std::move(attrs));
}

const TensorTypeNode* TensorTypeOf(const Expr& e) {
  if (!e || !e->has_checked_type()) return nullptr;
  return e->checked_type()->as<TensorTypeNode>();
}

std::optional<std::vector<int64_t>> StaticShapeOf(const Expr& e) {
  const TensorTypeNode* t = TensorTypeOf(e);
  if (!t) return std::nullopt;
  return StaticShape(t->shape);
}

}  // namespace tessera::graph
