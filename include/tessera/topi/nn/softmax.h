// Numerically stable softmax along one axis (tag "softmax" on each stage):
//   m = max_axis(x); e = exp(x - m); s = sum_axis(e); out = e / s.
// Float tensors only; negative axis counts from the end.
#pragma once

#include "tessera/topi/util.h"

namespace tessera::topi {

Tensor softmax(const Tensor& x, int64_t axis = -1);

/// log(softmax(x)) along `axis`, computed stably as x - max - log(sum(exp(x - max))) (ONNX LogSoftmax).
Tensor log_softmax(const Tensor& x, int64_t axis = -1);

}  // namespace tessera::topi
