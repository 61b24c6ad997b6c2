// Scaled dot-product attention as one compute (graph op nn.attention; graph/transform
// FuseAttention finds it in matmul -> scale -> [+ bias] -> softmax -> matmul):
//
//   out[b.., i, d] = sum_j softmax_j(scale * sum_k q[b.., i, k] * k_t[b.., k, j] + bias[b.., i, j]) * v[b.., j, d]
//
// q [B.., M, D], k_t [B.., D, N] (the keys transposed: the right operand of the scores' matmul),
// v [B.., N, Dv], optional bias broadcastable (numpy rules) to [B.., M, N] (BERT's additive mask);
// the batch dims B.. of q, k_t and v are equal. float32 or float64, static shapes. Output
// [B.., M, Dv] of q's dtype.
//
// Stages (block names; the CPU schedule, topi/x86/attention.h, finds them by name):
//   T_attn_score[b.., i, j] = sum_k q * k_t          the scores (a reduction over D)
//   T_attn_logit            = score * scale + bias   (injective: inlined into its readers)
//   T_attn_max[b.., i]      = max_j logit            the softmax's stabilizing shift
//   T_attn_exp[b.., i, j]   = exp(logit - max)
//   T_attn_sum[b.., i]      = sum_j exp
//   T_attn_pv[b.., i, d]    = sum_j exp * v          the unnormalized output
//   T_attn[b.., i, d]       = pv / sum               normalized once per output, not per score
// Normalizing after the product (softmax(x) v = (exp(x - m) v) / sum) is exact in real
// arithmetic; in floating point it differs from the unfused graph by rounding only. A row whose
// logits are all -inf gives NaN, as the unfused softmax does (ONNX Softmax).
#pragma once

#include <optional>

#include "tessera/topi/util.h"

namespace tessera::topi {

/// The block names of the stages above.
inline constexpr const char* kAttentionScore = "T_attn_score";
inline constexpr const char* kAttentionLogit = "T_attn_logit";
inline constexpr const char* kAttentionMax = "T_attn_max";
inline constexpr const char* kAttentionExp = "T_attn_exp";
inline constexpr const char* kAttentionSum = "T_attn_sum";
inline constexpr const char* kAttentionPV = "T_attn_pv";
inline constexpr const char* kAttentionOut = "T_attn";

/// The attention compute above. UserError when ranks, batch dims, reduction extents or dtypes
/// do not agree, or the bias does not broadcast to [B.., M, N].
Tensor attention(const Tensor& q, const Tensor& k_t, const Tensor& v, const std::optional<Tensor>& bias,
                 double scale);

}  // namespace tessera::topi
