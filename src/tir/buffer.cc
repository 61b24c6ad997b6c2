// Buffer (tir/buffer.h) and BufferLoad (tir/expr.h).
#include "tessera/tir/buffer.h"

#include "tessera/ir/op.h"
#include "tessera/support/error.h"
#include "tessera/tir/expr.h"

namespace tessera::tir {

Buffer Buffer::make(std::string name, DataType dtype, std::vector<PrimExpr> shape, std::string scope) {
  TESSERA_ICHECK(!name.empty(), "Buffer needs a name");
  TESSERA_ICHECK(dtype.is_scalar(), "Buffer ", name, ": element dtype must be scalar, got ", dtype.str());
  for (const auto& s : shape) {
    TESSERA_ICHECK(s.defined() && (s.dtype().is_int() || s.dtype().is_uint()),
                   "Buffer ", name, ": every shape extent must be an integer expression");
  }
  auto n = std::make_shared<BufferNode>();
  n->data = Var(name, DataType::Handle());
  n->name = std::move(name);
  n->dtype = dtype;
  n->shape = std::move(shape);
  n->scope = std::move(scope);
  return Buffer(std::move(n));
}

int64_t Buffer::NumElements() const {
  int64_t n = 1;
  for (const auto& s : node_->shape) {
    int64_t v = 0;
    TESSERA_ICHECK(ir::as_const_int(s, &v), "Buffer ", node_->name, " has a non-constant shape");
    n *= v;
  }
  return n;
}

PrimExpr Buffer::OffsetOf(const std::vector<PrimExpr>& indices) const {
  TESSERA_ICHECK(indices.size() == node_->shape.size(), "Buffer ", node_->name, ": ", indices.size(),
                 " indices for ", node_->shape.size(), " dimensions");
  if (indices.empty()) return ir::make_zero(DataType::Int(32));
  if (!node_->strides.empty()) {
    PrimExpr off = indices[0] * node_->strides[0];
    for (size_t i = 1; i < indices.size(); ++i) off = off + indices[i] * node_->strides[i];
    return off;
  }
  PrimExpr off = indices[0];
  for (size_t i = 1; i < indices.size(); ++i) off = off * node_->shape[i] + indices[i];
  return off;
}

BufferRegion BufferRegion::FullRegion(const Buffer& buffer) {
  BufferRegion r;
  r.buffer = buffer;
  for (const auto& s : buffer->shape) r.region.emplace_back(ir::make_zero(s.dtype()), s);
  return r;
}

PrimExpr BufferLoadNode::make(Buffer buffer, std::vector<PrimExpr> indices) {
  TESSERA_ICHECK(buffer.defined(), "BufferLoad of an undefined buffer");
  TESSERA_ICHECK(static_cast<int>(indices.size()) == buffer.ndim() || indices.size() == 1,
                 "BufferLoad ", buffer->name, ": ", indices.size(), " indices for a ", buffer.ndim(),
                 "-d buffer");
  int lanes = 1;
  for (const auto& i : indices) {
    TESSERA_ICHECK(i.defined() && (i.dtype().is_int() || i.dtype().is_uint()),
                   "BufferLoad ", buffer->name, ": indices must be integers");
    if (i.dtype().lanes() > 1) {
      TESSERA_ICHECK(lanes == 1 || lanes == i.dtype().lanes(), "BufferLoad ", buffer->name,
                     ": indices of different lanes");
      lanes = i.dtype().lanes();
    }
  }
  DataType t = buffer->dtype.with_lanes(lanes);
  return PrimExpr(std::make_shared<const BufferLoadNode>(t, std::move(buffer), std::move(indices)));
}

}  // namespace tessera::tir
