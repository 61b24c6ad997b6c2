// Pieces shared by the two Resize computes (topi/image/resize.h): resize.cc, whose scales and
// extents are compile-time values, and resize_run_time.cc, whose scales, sizes and roi the kernel
// reads at run time. Internal to topi.
#pragma once

#include <string>

#include "tessera/topi/image/resize.h"

namespace tessera::topi::resize_detail {

inline PrimExpr F64(double v) { return ir::make_const(DataType::Float(64), v); }

/// Keys' cubic convolution filter with coefficient A at distance d (float64, source pixels).
PrimExpr CubicKernel(const PrimExpr& d, double A);

/// The dtype of the weighted sum: float64 for integers, whose results are rounded (a float32
/// sum moves values near .5 across the rounding boundary), and for float64; float32 otherwise.
DataType AccumulateType(DataType t);

/// The weighted sum (AccumulateType(dt)) as an element of dt: a float cast, an integer rounded
/// half to even and saturated (the reference's saturate_cast).
PrimExpr ToOutput(const PrimExpr& sum, DataType dt);

/// UserError naming the field when p's mode, coordinate_transformation_mode or nearest_mode is
/// unknown, or when a bool tensor is interpolated other than by nearest.
void CheckResizeModes(DataType dtype, const ResizeParams& p);

}  // namespace tessera::topi::resize_detail
