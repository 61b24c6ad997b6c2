// Buffer: a multi-dimensional view of memory that TensorIR reads and writes.
//
// A buffer has a data pointer variable (dtype handle), an element dtype, a shape
// (PrimExpr per dimension; static in this version) and a scope: "global" for
// function parameters and tensors in main memory, "local" for per-thread scratch
// (cache_read / cache_write). Strides are empty for a dense row-major buffer.
// Before FlattenBuffer every access is N-dimensional; after it, 1-dimensional.
#pragma once

#include <string>
#include <vector>

#include "tessera/ir/expr.h"

namespace tessera::tir {

using ir::PrimExpr;
using ir::Range;
using ir::Var;

struct BufferNode {
  std::string name;
  Var data;                     ///< handle variable holding the base pointer
  DataType dtype;               ///< element type (scalar)
  std::vector<PrimExpr> shape;  ///< extent of each dimension, outermost first
  std::vector<PrimExpr> strides;  ///< empty: dense row-major
  std::string scope = "global";
};

class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::shared_ptr<const BufferNode> n) : node_(std::move(n)) {}
  /// A fresh dense buffer with its own data variable.
  static Buffer make(std::string name, DataType dtype, std::vector<PrimExpr> shape,
                     std::string scope = "global");

  bool defined() const { return node_.get() != nullptr; }
  const BufferNode* operator->() const { return node_.get(); }
  const BufferNode* get() const { return node_.get(); }
  bool same_as(const Buffer& o) const { return node_.get() == o.node_.get(); }
  bool operator<(const Buffer& o) const { return node_.get() < o.node_.get(); }

  int ndim() const { return static_cast<int>(node_->shape.size()); }
  /// Number of elements when every dimension is constant; throws InternalError otherwise.
  int64_t NumElements() const;
  /// Row-major linear offset of `indices` (uses strides when present).
  PrimExpr OffsetOf(const std::vector<PrimExpr>& indices) const;

 private:
  std::shared_ptr<const BufferNode> node_;
};

/// A rectangular region of a buffer: one Range per dimension (TensorIR §3.1 read / write regions).
struct BufferRegion {
  Buffer buffer;
  std::vector<Range> region;
  /// The whole buffer.
  static BufferRegion FullRegion(const Buffer& buffer);
};

}  // namespace tessera::tir
