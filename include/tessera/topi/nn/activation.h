// Activation functions of the ONNX spec (tag "elemwise"; prelu "broadcast"), float tensors,
// out shape = x's shape. log_softmax is in nn/softmax.h.
#pragma once

#include "tessera/topi/util.h"

namespace tessera::topi {

/// x < 0 ? alpha * x : x (ONNX LeakyRelu, default alpha 0.01).
Tensor leaky_relu(const Tensor& x, double alpha);
/// x < 0 ? alpha * (exp(x) - 1) : x (ONNX Elu, default alpha 1).
Tensor elu(const Tensor& x, double alpha);
/// gamma * (x <= 0 ? alpha * (exp(x) - 1) : x) (ONNX Selu).
Tensor selu(const Tensor& x, double alpha, double gamma);
/// max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) (ONNX Celu).
Tensor celu(const Tensor& x, double alpha);
/// x > alpha ? x : 0 (ONNX ThresholdedRelu, default alpha 1).
Tensor thresholded_relu(const Tensor& x, double alpha);
/// log(1 + exp(x)), computed as max(x, 0) + log(1 + exp(-|x|)) so large x does not overflow.
Tensor softplus(const Tensor& x);
/// x / (1 + |x|).
Tensor softsign(const Tensor& x);
/// x * tanh(softplus(x)).
Tensor mish(const Tensor& x);
/// 0.5 x (1 + erf(x / sqrt 2)); approximate_tanh: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
Tensor gelu(const Tensor& x, bool approximate_tanh);
/// x * sigmoid(alpha * x) (ONNX Swish, alpha 1 = SiLU).
Tensor swish(const Tensor& x, double alpha);
/// x < -lambd ? x + bias : x > lambd ? x - bias : 0 (ONNX Shrink); ints allowed.
Tensor shrink(const Tensor& x, double lambd, double bias);
/// x < 0 ? slope * x : x, slope broadcast against x (numpy rules; ONNX PRelu).
Tensor prelu(const Tensor& x, const Tensor& slope);

}  // namespace tessera::topi
