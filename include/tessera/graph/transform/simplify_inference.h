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
//   power(x, c) with a constant scalar exponent c in {1, 2, 3, 4} and x of the result's type
//     -> x or multiplies of x (a pow call per element otherwise: GPT-2's tanh GELU).
//   nn.conv2d (NCHW / OIHW, static shapes) whose leading or trailing kernel taps read only padding
//     for every output (along H or W): those taps are sliced off the weight (strided_slice on axes
//     2 / 3, folded by FoldConstant) and the padding shrinks by their span, e.g. a 3 x 3 atrous
//     conv of dilation 24, padding 24 on a 14 x 14 map -> the 1 x 1 conv of its center taps,
//     padding 0 (DeepLabV3's ASPP). Same outputs (the dropped taps multiplied zeros).
//   nn.conv2d (NCHW / OIHW, static shapes) whose taps along H or W read only padding for most
//     outputs (under half of the tap x output positions along that axis live: DeepLabV3's ASPP
//     at rate 12 on a 14 x 14 map) -> along that axis (H, then each part along W), one conv per
//     live tap over the outputs it reaches: the tap's weight slice (extent 1), the input rows
//     it reads (strided_slice, no padding), zero-padded (pad) back to the output's extent, the
//     parts summed. The same sums in another order (float rounding).
//
// Runs InferType first; the result has untyped new nodes (run InferType again).
#pragma once

#include "tessera/graph/module.h"

namespace tessera::graph::transform {

IRModule SimplifyInference(const IRModule& mod);

}  // namespace tessera::graph::transform
