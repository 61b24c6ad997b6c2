// 2-D convolution, NCHW data / OIHW weight (Relay nn.conv2d, ONNX Conv).
//
//   data   [N, C, H, W]
//   weight [O, C / groups, KH, KW]           (O divisible by groups)
//   out    [N, O, OH, OW], OH = (H + pad_top + pad_bottom - ((KH-1)*dil_h + 1)) / stride_h + 1
//   out[n, o, y, x] = sum_{c, ky, kx} pad(data)[n, g*(C/groups) + c, y*sh + ky*dh, x*sw + kx*dw]
//                     * weight[o, c, ky, kx],  g = o / (O / groups)
// groups == C == O is depthwise. Padding is a "pad_temp" stage (tag injective) that the default
// schedule inlines; the output is a reduction tagged "conv2d_nchw". Accumulates in data's dtype.
#pragma once

#include <array>
#include <vector>

#include "tessera/topi/util.h"

namespace tessera::topi {

struct Conv2DParams {
  std::array<int64_t, 2> strides{1, 1};
  std::array<int64_t, 4> padding{0, 0, 0, 0};  ///< top, left, bottom, right
  std::array<int64_t, 2> dilation{1, 1};
  int64_t groups = 1;
};

/// UserError on inconsistent shapes (channels vs groups) or a non-positive output extent.
Tensor conv2d_nchw(const Tensor& data, const Tensor& weight, const Conv2DParams& p);

}  // namespace tessera::topi
