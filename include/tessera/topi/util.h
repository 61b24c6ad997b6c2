// Small helpers shared by the topi computes: shapes and index constants.
//
// An extent is an int32 constant, or (dynamic shapes) an int32 ir::Var, a kernel's shape var.
// The computes that take symbolic extents (elementwise, broadcast, reductions, softmax, dense /
// matmul / batch_matmul, transpose, expand_dims, squeeze, take) read extents as PrimExprs
// (the Extent helpers below); the others need static shapes (ConstShape). Index arithmetic uses
// int32 (the dtype of te's axis variables).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/ir/op.h"
#include "tessera/te/tensor.h"

namespace tessera::topi {

using ir::PrimExpr;
using ir::Range;
using ir::Var;
using te::Tensor;

/// An int32 index constant.
inline PrimExpr Index(int64_t v) { return ir::make_const(DataType::Int(32), v); }
/// Extents as int32 constants.
std::vector<PrimExpr> MakeShape(const std::vector<int64_t>& dims);
/// The static extents of t; InternalError naming t when some extent is not a constant.
std::vector<int64_t> ConstShape(const Tensor& t);
/// Whether extent e is the constant v.
bool IsConst(const PrimExpr& e, int64_t v);
/// Whether two extents are equal at compile time: the same constant or the same shape var.
bool SameExtent(const PrimExpr& a, const PrimExpr& b);
/// SameExtent dim by dim (and the same rank).
bool SameExtents(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b);
/// numpy broadcasting of two shapes whose extents may be shape vars: equal extents, or one of
/// them the constant 1. UserError naming both shapes otherwise (a shape var against another
/// extent is not decidable at compile time).
std::vector<PrimExpr> BroadcastExtents(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b);
/// The product of the extents (int32; 1 for a scalar).
PrimExpr ExtentProduct(const std::vector<PrimExpr>& shape);
/// "[n, 3, 4]": a shape for messages.
std::string ShapeString(const std::vector<PrimExpr>& dims);
/// "[2, 3, 4]": a static shape for messages.
std::string ShapeString(const std::vector<int64_t>& dims);
/// Product of the extents (1 for a scalar).
int64_t Product(const std::vector<int64_t>& dims);
/// Maps axis in [-ndim, ndim) to [0, ndim); UserError naming `op` otherwise.
int NormalizeAxis(int64_t axis, int ndim, const std::string& op);
/// The vars as PrimExprs (te::Tensor reads take a vector<PrimExpr>).
std::vector<PrimExpr> AsExprs(const std::vector<Var>& vars);
/// Row-major unravel of a flat index into `shape`.
std::vector<PrimExpr> Unravel(PrimExpr flat, const std::vector<int64_t>& shape);
/// The same over extents that may be symbolic (shape vars).
std::vector<PrimExpr> Unravel(PrimExpr flat, const std::vector<PrimExpr>& shape);
/// Row-major ravel of `indices` in `shape`.
PrimExpr Ravel(const std::vector<PrimExpr>& indices, const std::vector<int64_t>& shape);

}  // namespace tessera::topi
