// TensorIR expressions: the arithmetic nodes of ir/expr.h plus BufferLoad.
#pragma once

#include <vector>

#include "tessera/ir/expr.h"
#include "tessera/ir/op.h"
#include "tessera/tir/buffer.h"

namespace tessera::tir {

using ir::ExprKind;
using ir::PrimExprNode;

/// buffer[indices]. With a Ramp index (after vectorize) it loads several lanes;
/// dtype is the buffer's dtype with the index's lanes.
struct BufferLoadNode : PrimExprNode {
  static constexpr ExprKind kKind = ExprKind::kBufferLoad;
  Buffer buffer;
  std::vector<PrimExpr> indices;
  BufferLoadNode(DataType t, Buffer b, std::vector<PrimExpr> i)
      : PrimExprNode(kKind, t), buffer(std::move(b)), indices(std::move(i)) {}
  /// Checks that the number of indices equals buffer.ndim() (or 1 once flattened).
  static PrimExpr make(Buffer buffer, std::vector<PrimExpr> indices);
};

}  // namespace tessera::tir
