// ONNX Resize (opsets 10, 11, 13, 18, 19) and Upsample as one TE compute: nearest, N-linear and
// N-cubic interpolation over any set of axes, every coordinate transformation mode, every
// nearest rounding mode, exclude_outside, tf_crop_and_resize with its extrapolation value, and
// antialiased (widened-filter) linear / cubic downsampling.
//
// Source: the ONNX operator spec (onnx/docs/Operators.md#Resize) and its reference
// implementation (onnx/reference/ops/op_resize.py), whose outputs the backend suite holds.
// The interpolation is separable: an output element is
//     sum over taps t_a of every resized axis a of  prod_a w_a(o_a, t_a) * x[..., i_a(o_a, t_a), ...]
// where, per axis, the source coordinate c = T(o) is the coordinate transformation of the
// output index o, and the taps and weights follow from c (their indices clamped into the axis,
// which is the reference's edge padding):
//   nearest   one tap, rounded by nearest_mode;
//   linear    floor(c), floor(c) + 1 with weights 1 - f, f (f = c - floor(c));
//   cubic     floor(c) - 1 .. floor(c) + 2 with Keys' cubic convolution weights (coefficient A);
//   antialias (linear / cubic with scale < 1) the filter widened by 1 / scale: taps
//             floor(c) + start .. , weights filter((start + j - f) * scale), normalised to sum 1.
// exclude_outside zeroes the weights of taps outside the axis and renormalises them.
// Coordinates and weights are computed in float64 (as the reference does); the weighted sum
// in float32 for float32 and 16-bit floats, float64 otherwise; integer outputs are rounded half
// to even and saturated (the reference's saturate_cast). Normalised weights (antialias,
// exclude_outside) are bound once per element with Let, which keeps such kernels scalar. Nearest copies values and works on any dtype.
// Where a nearest index map is an affine floor division of the output index (integer up- and
// downsampling in the usual modes), it is emitted as integer arithmetic (checked on every
// index at compile time); so is linear interpolation's floor when its fraction repeats with a
// period p <= 8 (x2, x4, x1.5, ...), the fraction then a select over o mod p of compile-time
// constants. Otherwise the float64 coordinate is computed per element.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/topi/util.h"

namespace tessera::topi {

struct ResizeParams {
  std::vector<int64_t> axes;       ///< the resized axes of x, distinct, in [0, rank)
  std::vector<int64_t> sizes;      ///< output extent of each resized axis (>= 1)
  std::vector<double> scales;      ///< per resized axis: the scale of the coordinate transform (> 0)
  std::vector<double> roi_start;   ///< per resized axis, tf_crop_and_resize only (normalised [0, 1])
  std::vector<double> roi_end;     ///< per resized axis, tf_crop_and_resize only
  /// "nearest", "linear" or "cubic".
  std::string mode = "nearest";
  /// "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
  /// "tf_half_pixel_for_nn", "tf_crop_and_resize".
  std::string coordinate_transformation_mode = "half_pixel";
  /// "round_prefer_floor", "round_prefer_ceil", "floor", "ceil", or "simple" (Resize-10 and
  /// Upsample, as ONNX Runtime: ceil when the axis is downsampled, floor otherwise).
  std::string nearest_mode = "round_prefer_floor";
  double cubic_coeff_a = -0.75;
  bool exclude_outside = false;
  double extrapolation_value = 0.0;  ///< tf_crop_and_resize: the value of points outside x
  bool antialias = false;
};

/// UserError naming the bad field when `p` is inconsistent with a tensor of shape `in_shape`
/// (unknown mode, axis out of range or repeated, sizes / scales / roi of the wrong length,
/// non-positive sizes or scales, linear / cubic on bool).
void CheckResizeParams(const std::vector<int64_t>& in_shape, DataType dtype, const ResizeParams& p);

/// The output shape: in_shape with every resized axis replaced by its size.
std::vector<int64_t> ResizeOutShape(const std::vector<int64_t>& in_shape, const ResizeParams& p);

/// out = Resize(x) as documented above; tag "injective"; dtype of x; shape ResizeOutShape.
Tensor resize(const Tensor& x, const ResizeParams& p);

/// The operands of a Resize known only at run time (ONNX Resize / Upsample whose scales, sizes or
/// roi are computed by the model or fed by the user: the VM's vm.resize, graph/op/vm.cc), one
/// entry per resized axis in ResizeParams::axes order, as expressions the kernel evaluates.
struct ResizeRunTimeOperands {
  std::vector<PrimExpr> sizes;      ///< output extent (an index expression: the output's dims)
  std::vector<PrimExpr> scales;     ///< float64 scale of the coordinate transform (> 0)
  std::vector<PrimExpr> roi_start;  ///< float64, tf_crop_and_resize only (normalised [0, 1])
  std::vector<PrimExpr> roi_end;    ///< float64, tf_crop_and_resize only
  /// The output's extents, every dim (the VM gives its type's symbols, bound to x's extents on the
  /// axes not resized); empty: x's with each resized axis's extent sizes[a].
  std::vector<PrimExpr> shape;
};

/// out = Resize(x) with p's modes and axes (p.sizes, p.scales and p.roi_* are not read) and the
/// run-time operands `rt`; x's extents may be symbolic. The same arithmetic as the compile-time
/// compute (float64 coordinates and weights, the weighted sum in AccumulateType) without its
/// compile-time index tables: nearest is one tap; linear / cubic sum over a reduction of 2 / 4
/// taps per axis, and with antialias over the filter widened by 1 / scale when scale < 1, a tap
/// count the kernel computes (2 - 2 * (floor(-support / scale) + 1), support 1 or 2); weights
/// normalised by their per-output sum (stages T_resize_wsum<a>) with antialias or
/// exclude_outside. Tag "injective" (the result; the sum stage is a reduction); dtype of x;
/// shape rt.shape, or x's with each resized axis's extent rt.sizes[a]. UserError on unknown modes,
/// bool interpolation, or operand counts that differ from p.axes' (x's rank for rt.shape).
Tensor resize(const Tensor& x, const ResizeParams& p, const ResizeRunTimeOperands& rt);

}  // namespace tessera::topi
