// Matrix products (tag "dense"): Relay nn.dense, nn.matmul (numpy) and nn.batch_matmul.
#pragma once

#include "tessera/topi/util.h"

namespace tessera::topi {

/// x [..., K], w [N, K] -> [..., N]: out[.., n] = sum_k x[.., k] * w[n, k].
Tensor dense(const Tensor& x, const Tensor& w);

/// numpy.matmul: 1-D operands are promoted (a: [K] -> [1, K], b: [K] -> [K, 1]) and the promoted
/// dim is dropped from the result; the batch dims (all but the last two) broadcast.
Tensor matmul(const Tensor& a, const Tensor& b);

/// x [B, M, K] ([B, K, M] when transpose_a), y [B, N, K] (transpose_b, Relay's default) or
/// [B, K, N]; a batch extent of 1 broadcasts against the other. -> [B, M, N].
Tensor batch_matmul(const Tensor& x, const Tensor& y, bool transpose_a = false, bool transpose_b = true);

}  // namespace tessera::topi
