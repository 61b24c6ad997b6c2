// 2-D convolution in the blocked NCHWc layout (TVM §4, topi x86 conv2d_NCHWc).
//
//   data   [N, C/c, H, W, c]                  (c: the data's channel block, any value >= 1)
//   kernel [K/k, C/c, KH, KW, c, k]           (pre-packed at compile time; see layout.h)
//   out    [N, K/k, OH, OW, k]
//   out[n, ko, y, x, ki] = sum_{co, ky, kx, ci} pad(data)[n, co, y*sh + ky*dh, x*sw + kx*dw, ci]
//                          * kernel[ko, co, ky, kx, ci, ki]
// Channel counts that are not a multiple of the block are zero-padded by the producer
// (layout_transform) and the weight packing, so the kernel never sees a partial block.
//
// Padding is its own stage "data_pad_NCHWc" (computed into a buffer before the convolution, so
// the inner loop reads plain in-bounds addresses; the x86 schedule keeps it as a stage).
// The reduction block is named "conv2d_NCHWc" (tag kConv2dNCHWc); the x86 schedule
// (x86/conv2d_nchwc.h) recognises it by that name.
//
// Grouped (groups g > 1, the dense form per group; AlterOpLayout merges groups smaller than a
// block into block-diagonal ones): kernel [K/k, C/(c g), KH, KW, c, k]; output block ko reads the
// C/(c g) data blocks of its group, which starts at block (ko / (K/(k g))) * C/(c g).
//
// Depthwise (groups == C == K):
//   data   [N, C/c, H, W, c], kernel [C/c, 1, KH, KW, 1, c], out [N, C/c, OH, OW, c]
//   out[n, b, y, x, i] = sum_{ky, kx} pad(data)[n, b, y*sh + ky*dh, x*sw + kx*dw, i] * kernel[b, 0, ky, kx, 0, i]
// The block is named "depthwise_conv2d_NCHWc".
#pragma once

#include "tessera/topi/nn/conv2d.h"

namespace tessera::topi {

namespace tag {
inline constexpr const char* kConv2dNCHWc = "conv2d_NCHWc";
inline constexpr const char* kDepthwiseConv2dNCHWc = "depthwise_conv2d_NCHWc";
}  // namespace tag

/// Name of the explicit padding stage of the NCHWc convolutions.
inline constexpr const char* kNCHWcPadName = "data_pad_NCHWc";
/// The padding stage kNCHWcPadName of data [N, C/c, H, W, c]: zeros outside
/// [top, top + H) x [left, left + W) of dims 2 and 3; data itself when the padding is all zero.
Tensor PadNCHWcStage(const Tensor& data, const std::array<int64_t, 4>& padding);

/// Name of the subsampling stage of a strided 1x1 conv2d_NCHWc: out[.., y, x, .] =
/// data[.., y * sh, x * sw, .], after which the conv runs with stride 1 on contiguous pixels
/// (as oneDNN's 1x1 convolution does: the micro-kernel's broadcasts then read consecutive
/// pixels, and the stage is a quarter of the input at stride 2).
inline constexpr const char* kNCHWcSubsampleName = "data_subsample_NCHWc";

/// Name of the im2col stage of a conv2d_NCHWc with `im2col`:
///   col[n, co, ky, kx, y * OW + x, ci] = pad(data)[n, co, y*sh + ky*dh, x*sw + kx*dw, ci]
/// (KH x KW x OH x OW pixels per input channel). The convolution then reads
/// col[n, rco, ry, rx, y * OW + x, rci]: output pixels are contiguous across rows, so a
/// schedule can tile the fused (y, x) pixel loop whatever OW is (7x7: 8 x 6 + 1).
inline constexpr const char* kNCHWcIm2colName = "data_im2col_NCHWc";

/// Dense (p.groups 1) or grouped (p.groups dividing both channel block counts) NCHWc convolution.
/// UserError on inconsistent shapes. A 1x1 kernel with stride > 1 and no padding reads a
/// kNCHWcSubsampleName stage; with `im2col` (ignored for 1x1 kernels) a kNCHWcIm2colName stage.
Tensor conv2d_NCHWc(const Tensor& data, const Tensor& kernel, const Conv2DParams& p, bool im2col = false);

/// Whether an NCHWc convolution of these shapes is the depthwise form (kernel [C/c, 1, KH, KW, 1, c]
/// with groups > 1: depthwise_conv2d_NCHWc) rather than the dense or grouped one (conv2d_NCHWc).
bool IsDepthwiseNCHWc(const std::vector<int64_t>& data, const std::vector<int64_t>& kernel, int64_t groups);

/// Depthwise; p.groups is ignored (the kernel's layout says it). UserError on inconsistent shapes.
Tensor depthwise_conv2d_NCHWc(const Tensor& data, const Tensor& kernel, const Conv2DParams& p);

/// The output spatial extents of a window op (shared with the type relation's formula).
std::array<int64_t, 2> Conv2DOutHW(int64_t h, int64_t w, int64_t kh, int64_t kw, const Conv2DParams& p);

}  // namespace tessera::topi
