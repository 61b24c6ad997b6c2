// 2-D pooling on NCHW (Relay nn.max_pool2d / nn.avg_pool2d / nn.global_avg_pool2d; ONNX
// MaxPool / AveragePool / GlobalAveragePool).
//
// Output extent per spatial dim: floor((in + pad_total - ((k-1)*dil + 1)) / stride) + 1; with
// ceil_mode, ceil instead, minus one when the last window would start inside the end padding
// (PyTorch / ONNX). Window taps past the padded input (ceil mode) are ignored.
// avg_pool2d divides by the number of taps inside the input plus, with count_include_pad, the
// taps on the explicit padding (never the ceil-mode overhang), as PyTorch and ONNX do.
// The window reduction is tagged "pool"; avg's division is a separate elemwise compute.
// Every function also takes the blocked layout NCHW<b>c ([N, C/b, H, W, b], 5-D): it pools over
// H and W (dims 2 and 3) and keeps the block dim, so the output is [N, C/b, OH, OW, b].
#pragma once

#include <array>

#include "tessera/topi/util.h"

namespace tessera::topi {

struct Pool2DParams {
  std::array<int64_t, 2> pool_size{1, 1};
  std::array<int64_t, 2> strides{1, 1};
  std::array<int64_t, 2> dilation{1, 1};
  std::array<int64_t, 4> padding{0, 0, 0, 0};  ///< top, left, bottom, right
  bool ceil_mode = false;
  bool count_include_pad = false;  ///< avg only
};

/// The pooled extent of one dim (see above); UserError when it is < 1.
int64_t PoolOutDim(int64_t in, int64_t pad_begin, int64_t pad_end, int64_t k, int64_t stride, int64_t dilation,
                   bool ceil_mode);

Tensor max_pool2d(const Tensor& data, const Pool2DParams& p);
/// The position of each window's maximum in `data` (NCHW, 4-D only), as ONNX MaxPool's Indices
/// output: int64 flat indices into data, row-major ((n C + c) H + h) W + w, or with
/// `column_major` (storage_order = 1) ((n C + c) W + w) H + h. Padding is never chosen; ties go
/// to the first tap in row-major window order (ONNX Runtime's).
Tensor max_pool2d_indices(const Tensor& data, const Pool2DParams& p, bool column_major);
Tensor avg_pool2d(const Tensor& data, const Pool2DParams& p);
/// [N, C, H, W] -> [N, C, 1, 1], the mean over H and W.
Tensor global_avg_pool2d(const Tensor& data);

}  // namespace tessera::topi
