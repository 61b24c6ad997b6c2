// More elementwise math (tag "elemwise"), out shape = x's shape: the ONNX unary math ops
// (Erf, Floor, Ceil, Round, Reciprocal, Sign, trigonometric and hyperbolic functions, IsNaN,
// IsInf). Float ops take float tensors; sign also takes ints.
#pragma once

#include <string>

#include "tessera/topi/elemwise.h"

namespace tessera::topi {

/// The float unary function `op` applied elementwise. op is one of: erf, floor, ceil, round
/// (half to even), reciprocal, sin, cos, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh.
/// UserError for another name or a non-float x.
Tensor float_unary(const Tensor& x, const std::string& op);

/// -1, 0 or 1 with x's dtype (ONNX Sign; NaN maps to 0).
Tensor sign(const Tensor& x);
/// bool: x is NaN.
Tensor isnan(const Tensor& x);
/// bool: x is +inf (when detect_positive) or -inf (when detect_negative) (ONNX IsInf).
Tensor isinf(const Tensor& x, bool detect_positive = true, bool detect_negative = true);

}  // namespace tessera::topi
