// Inference batch normalisation (Relay nn.batch_norm's first output, ONNX BatchNormalization):
//   out = (x - mean[c]) / sqrt(var[c] + epsilon) * gamma[c] + beta[c],  c = index on `axis`.
// gamma, beta, mean, var are 1-D of extent data.shape[axis]. One compute, tag "broadcast".
#pragma once

#include "tessera/topi/util.h"

namespace tessera::topi {

Tensor batch_norm_inference(const Tensor& data, const Tensor& gamma, const Tensor& beta, const Tensor& mean,
                            const Tensor& var, int64_t axis = 1, double epsilon = 1e-5);

}  // namespace tessera::topi
