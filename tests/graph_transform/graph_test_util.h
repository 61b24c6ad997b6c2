// Builders shared by the graph pass tests: float32 types and constants, op calls, a module of one
// main function, and its printed text (what IR-before / IR-after comparisons compare).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/graph/infer_type.h"
#include "tessera/graph/printer.h"

namespace tessera::graph::testing {

/// A float32 tensor type of `shape`.
inline Type F32(std::vector<int64_t> shape) { return TensorTypeNode::make(shape, DataType::Float(32)); }

/// A float32 constant of `shape` holding `v` repeated.
inline Constant Values(std::vector<int64_t> shape, std::vector<float> v) {
  auto a = runtime::NDArray::Empty(shape, DataType::Float(32));
  for (int64_t i = 0; i < a.NumElements(); ++i) a.data<float>()[i] = v[static_cast<size_t>(i) % v.size()];
  return ConstantNode::make(a);
}

/// A call of the registered op `op`.
inline Expr Call(const std::string& op, std::vector<Expr> args, Attrs attrs = {}) {
  return CallNode::make(OpNode::Get(op), std::move(args), std::move(attrs));
}

/// A typed module whose main is fn(params) { body }.
inline IRModule Main(std::vector<Var> params, Expr body) {
  return InferType(IRModule::FromMain(FunctionNode::make(params, body)));
}

/// The module's printed text after InferType.
inline std::string Text(const IRModule& m) { return PrintModule(InferType(m)); }

}  // namespace tessera::graph::testing
