// Small helpers shared by the topi computes: static shapes and index constants.
//
// topi works on static shapes only: every tensor extent is an integer constant. Index
// arithmetic uses int32 (the dtype of te's axis variables).
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
/// Row-major ravel of `indices` in `shape`.
PrimExpr Ravel(const std::vector<PrimExpr>& indices, const std::vector<int64_t>& shape);

}  // namespace tessera::topi
