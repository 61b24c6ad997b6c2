// FoldScaleAxis: folds a per-channel scale next to a conv2d / dense into the constant weight
// (Relay's FoldScaleAxis, src/relay/transforms/fold_scale_axis.cc: its forward and backward
// folding, restricted here to scales that are constants).
//
// Backward (the scale follows the op; SimplifyInference's batch-norm scale is this case):
//   multiply(conv2d(x, W), S)                 -> conv2d(x, multiply(W, S as [K, 1, 1, 1]))
//   multiply(bias_add(conv2d(x, W), b), S)    -> bias_add(conv2d(x, W * S'), multiply(b, S as [K]))
//   multiply(add(conv2d(x, W), B), S)         -> add(conv2d(x, W * S'), multiply(B, S))
//   multiply(dense(x, W), S)                  -> dense(x, multiply(W, S as [N, 1])) (bias likewise)
// where S is a constant whose only non-1 extent is the output-channel axis (axis 1 of the
// NCHW conv output, the last axis of dense), and each intermediate has one use.
// Forward (the scale precedes the op, per input channel C):
//   conv2d(multiply(x, S), W)  -> conv2d(x, multiply(W, T)),  T[k, j] = S[group(k) * C/g + j]
//                                 shaped [K, C/g, 1, 1] (any groups, depthwise included)
//   dense(multiply(x, S), W)   -> dense(x, multiply(W, S as [K]))
// Zero padding commutes with a per-channel scale, so padded convolutions fold too.
// Multiply is matched in both operand orders. The weight products are left to FoldConstant.
// Runs InferType first; the result has untyped new nodes.
#pragma once

#include "tessera/graph/module.h"

namespace tessera::graph::transform {

IRModule FoldScaleAxis(const IRModule& mod);

}  // namespace tessera::graph::transform
