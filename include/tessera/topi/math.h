// Elementwise math (tag "elemwise"). Float ops take float tensors; relu, negative, clip and
// cast also accept ints. Shapes: out = x.
#pragma once

#include "tessera/tir/float_format_cast.h"
#include "tessera/topi/elemwise.h"

namespace tessera::topi {

Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor tanh(const Tensor& x);
/// 1 / (1 + exp(-x)).
Tensor sigmoid(const Tensor& x);
Tensor negative(const Tensor& x);
Tensor abs(const Tensor& x);
/// max(x, 0).
Tensor relu(const Tensor& x);
/// min(max(x, a_min), a_max) (ONNX Clip, Relay clip).
Tensor clip(const Tensor& x, double a_min, double a_max);
/// clip(alpha * x + beta, 0, 1) (ONNX HardSigmoid; defaults alpha 0.2, beta 0.5).
Tensor hard_sigmoid(const Tensor& x, double alpha = 0.2, double beta = 0.5);
/// x * hard_sigmoid(x, 1/6, 0.5) (ONNX HardSwish).
Tensor hard_swish(const Tensor& x);
/// Converts every element to dtype: C conversion semantics of ir::cast between the compute
/// types; to and from the storage-only types (float16, bfloat16, float8, float4, int4, int2)
/// ONNX Cast's, with its `saturate` / `round_mode` in `options` (tir/float_format_cast.h).
Tensor cast(const Tensor& x, DataType dtype, const tir::FloatCastOptions& options = {});
/// The bits of every element read as dtype (same width; ir::reinterpret).
Tensor reinterpret(const Tensor& x, DataType dtype);

}  // namespace tessera::topi
