// Small builders for graph IR tests.
#pragma once

#include <string>
#include <vector>

#include "tessera/graph/expr.h"
#include "tessera/graph/infer_type.h"

namespace tessera::graph::testing {

inline Type F32(std::vector<Dim> shape) { return TensorTypeNode::make(Shape(std::move(shape)), DataType::Float(32)); }

/// A float32 constant of `shape` filled with `value`.
inline Constant ConstF32(const std::vector<int64_t>& shape, float value = 0.f) {
  runtime::NDArray a = runtime::NDArray::Empty(shape, DataType::Float(32));
  for (int64_t i = 0; i < a.NumElements(); ++i) a.data<float>()[i] = value;
  return ConstantNode::make(a);
}

inline Expr CallOp(const std::string& op, std::vector<Expr> args, Attrs attrs = {}) {
  return CallNode::make(OpNode::Get(op), std::move(args), std::move(attrs));
}

/// The type of op(args) where each arg is a fresh var of the given type.
inline Type RelType(const std::string& op, const std::vector<Type>& arg_types, Attrs attrs = {}) {
  std::vector<Expr> args;
  for (size_t i = 0; i < arg_types.size(); ++i) args.push_back(VarNode::make("a" + std::to_string(i), arg_types[i]));
  return InferExprType(CallOp(op, args, std::move(attrs)));
}

}  // namespace tessera::graph::testing
