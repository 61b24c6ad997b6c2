// Graph-building helpers shared by the driver tests: tensor types, op calls, random inputs.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tessera/graph/expr.h"
#include "tessera/runtime/ndarray.h"

namespace tessera::driver::testing {

/// A float32 tensor type of a static shape.
inline graph::Type F32(std::vector<int64_t> shape) {
  return graph::TensorTypeNode::make(std::move(shape), DataType::Float(32));
}

/// A call of the registered op `op`.
inline graph::Expr Call(const std::string& op, std::vector<graph::Expr> args, graph::Attrs attrs = {}) {
  return graph::CallNode::make(graph::OpNode::Get(op), std::move(args), std::move(attrs));
}

/// A float32 array of seeded uniform [lo, hi) values.
inline runtime::NDArray Random(std::vector<int64_t> shape, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  auto a = runtime::NDArray::Empty(shape, DataType::Float(32));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  for (int64_t i = 0; i < a.NumElements(); ++i) a.data<float>()[i] = u(rng);
  return a;
}

}  // namespace tessera::driver::testing
