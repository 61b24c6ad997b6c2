// SimplifyInference: rewrites training-time ops into their inference form (Relay's
// SimplifyInference, src/relay/transforms/simplify_inference.cc, followed in spirit).
//
//   nn.batch_norm(x, gamma, beta, mean, var; axis, epsilon)
//     -> add(multiply(x, scale), shift)
//        scale = gamma / sqrt(var + epsilon), shift = beta - mean * scale,
//        both shaped [C, 1, ..., 1] so they broadcast along `axis`. When gamma, beta, mean
//        and var are float32 / float64 constants, scale and shift are computed here (in
//        double precision) and become constants; otherwise they are built as expressions
//        for FoldConstant.
//   identities removed (Dropout already is, by the ONNX importer): copy(x), cast(x) to x's own
//   dtype, reshape(x) to x's own shape, transpose(x) with the identity permutation -> x.
//
// Runs InferType first; the result has untyped new nodes (run InferType again).
#pragma once

#include "tessera/graph/module.h"

namespace tessera::graph::transform {

IRModule SimplifyInference(const IRModule& mod);

}  // namespace tessera::graph::transform
