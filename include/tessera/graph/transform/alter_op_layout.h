// AlterOpLayout: NCHW -> NCHWc (TVM §3 "data layout transformation"; Relay's AlterOpLayout +
// ConvertLayout for x86 conv2d_NCHWc).
//
// Rewrites, on every function of the module (b = options.out_block: the target's
// topi::BlockLanes, 16 float32 on x86, written as 16 below):
//   nn.conv2d(x, W) (groups 1, W a float32 OIHW Constant)
//       -> nn.contrib_conv2d_NCHWc(x as NCHW<c>c, W packed to [K/16, C/c, KH, KW, c, 16])
//          c = x's block when x is already blocked, else the largest divisor of C that is <= 16;
//          output NCHW16c (K padded to a multiple of 16 with zero weights); with options.wide_block
//          w, a conv whose K is a multiple of w and >= options.wide_min_channels outputs NCHW<w>c.
//   nn.conv2d depthwise (groups == C == K, W [C, 1, KH, KW] Constant)
//       -> nn.contrib_conv2d_NCHWc(x as NCHW16c, W packed to [C/16, 1, KH, KW, 1, 16], groups = C);
//          x's block instead when it is the wide block (no conversion).
//   nn.conv2d grouped (1 < groups, W [K, C/groups, KH, KW] Constant)
//       -> nn.contrib_conv2d_NCHWc(x as NCHW<c>c, W packed to [K/16, C/(c g'), KH, KW, c, 16],
//          groups = g' = groups / m), m the smallest divisor of groups (<= 8) that makes m C/groups
//          a multiple of c and m K/groups one of k: m adjacent groups merge into one whose weights
//          across them are zero (block-diagonal: m times the layer's work). (c, k) = (x's block or
//          16, 16) or (8, 8), whichever needs the smaller m (16 on a tie): groups of 120 channels
//          (RegNetX-8GF) take 8-wide blocks unmerged, not 16-wide ones at m = 2; neither fits: 4
//          (output NCHW<k>c); none: unchanged. For K >= options.wide_min_channels, (x's block or w,
//          w) is tried first (a tie in m goes to it); when x has another block than 16, (16, 16) is
//          tried after (x's block, 16).
// and propagates the blocked layout through layout-agnostic ops, so consecutive convolutions
// stay in NCHWc:
//   unary elementwise ops that keep finite values finite (nn.relu, clip, sigmoid, tanh,
//   hard_sigmoid, hard_swish, exp, negative, abs, copy, erf, nn.gelu, nn.elu, nn.leaky_relu, floor,
//   ceil, round, sin, cos); any other one-input elementwise op (kElemWise: sqrt, log, ...) when the
//   tensor has no padded channels;
//   add / subtract / multiply / maximum / minimum (and divide by a constant, or by anything when
//   there are no padded channels) of two blocked tensors (of two blocks: the right one converted to
//   the left one's block by layout_transform), or of a blocked tensor
//   and a constant that is a scalar or per channel ([C, 1, 1] / [1, C, 1, 1]; packed at compile
//   time to [1, C/c, 1, 1, c]), or a computed scalar, or a computed per-sample [N, 1, 1, 1] value
//   (reshaped to [N, 1, 1, 1, 1]); a 4-D operand of the result's shape is converted to the blocked
//   layout;
//   sum / mean / max / min / prod over axes 1, 2, 3 with keepdims (a per-sample statistic: group
//   norm with one group, see unflatten_reductions.h) of a blocked tensor without padded channels:
//   reduced over the blocked axes 1-4 and reshaped to [N, 1, 1, 1] (the elements' order does not
//   matter to the reduction);
//   nn.bias_add on axis 1 with a constant bias (becomes add with the packed bias);
//   concatenate on axis 1 of blocked tensors whose channel counts are multiples of their least
//   block (the others converted to it);
//   nn.max_pool2d / nn.avg_pool2d / nn.global_avg_pool2d of a blocked tensor (layout="NCHW<c>c":
//   pooled over H and W, the block kept);
//   multiply etc. of a blocked tensor and a computed per-channel [N, C, 1, 1] value (squeeze-excite
//   scales), C a multiple of the block: the value is reshaped to [N, C/c, 1, 1, c].
// A [N, C, 1, 1] value whose C is a multiple of the block converts between NCHW and NCHW<c>c by a
// (zero-copy) reshape, both ways, since both orders are the same.
// Every other consumer (reshape, transpose, softmax, dense, ...) and the function's result get
// NCHW back through layout_transform; each conversion of a value is inserted once.
// Channels past C of a padded blocked tensor hold finite values that no consumer reads
// (packed weights are zero there; NCHW conversion drops them).
//
// Only float32 4-D convolutions with static shapes are rewritten. Inside an If's branches the
// rules are the same; each branch's result goes back to NCHW, so the If keeps its type. Functions
// with let or nested functions are left unchanged. Runs InferType first and returns a typed module.
#pragma once

#include "tessera/graph/module.h"
#include "tessera/graph/transform/pass.h"

namespace tessera::graph::transform {

struct AlterOpLayoutOptions {
  /// Output channel block: the target's topi::BlockLanes (16 float32 lanes: one zmm, two ymm);
  /// the driver sets it from the target.
  int64_t out_block = 16;
  /// A wider output block for wide convolutions (0: none): a conv (groups 1) whose K is a multiple
  /// of it and >= wide_min_channels outputs NCHW<wide>c; a grouped one of such K tries it first
  /// (the least merge still wins). AVX-512: 32 (two zmm per block, the register tile of 14 x 2
  /// vectors, topi::x86::ChooseConvTile) from 256 channels (graph_lower::kWideBlockMinChannels).
  int64_t wide_block = 0;
  int64_t wide_min_channels = 0;  ///< 0: no conv takes the wide block
};

IRModule AlterOpLayout(const IRModule& mod, const AlterOpLayoutOptions& options = {});

/// opt_level 3: "AlterOpLayout" with `options`.
Pass AlterOpLayoutPass(const AlterOpLayoutOptions& options);

}  // namespace tessera::graph::transform
