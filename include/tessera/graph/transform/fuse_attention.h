// FuseAttention: scaled dot-product attention, as exporters write it, becomes one nn.attention
// call (topi/nn/attention.h), computed a block of query rows at a time so the scores never leave
// the cache (the 4 x 1500 x 1500 scores of Whisper's encoder are 36 MB per layer when written out).
//
//   s = nn.matmul(q, k_t)                          or nn.batch_matmul(q, k, transpose_a=0, transpose_b)
//   s = multiply(s, c) | multiply(c, s) | divide(s, c)     (optional; c a constant of one value)
//   s = add(s, bias) | add(bias, s)                         (optional; bias broadcasts to s's shape)
//   p = nn.softmax(s, axis = last)
//   o = nn.matmul(p, v)                            or nn.batch_matmul(p, v, transpose_a=0, transpose_b)
// ->
//   o = nn.attention(q, k_t, v[, bias], scale = c or 1 / c or 1)
// (a batch_matmul's transposed operand gets a transpose of its last two axes). Only when every
// value between q and o is used once (nothing else reads the scores or the probabilities), the
// shapes are static, q, k_t and v have one rank >= 2 with equal batch dims (no broadcasting), and
// the dtype is float32 or float64. Anything else is left as it is.
//
// Numerics: the kernel normalizes after the product with v (see attention.h) and multiplies by
// 1 / c where the graph divided by c: results differ from the unfused graph by rounding only.
//
// Runs InferType first and returns a typed module.
#pragma once

#include "tessera/graph/module.h"

namespace tessera::graph::transform {

IRModule FuseAttention(const IRModule& mod);

}  // namespace tessera::graph::transform
