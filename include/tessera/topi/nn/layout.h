// Layout transforms between NCHW and the blocked NCHW[x]c layouts (TVM's layout_transform).
//
// A blocked layout is written "NCHW<b>c" (b >= 1 channels per block); "NCHW" is the plain one.
// NCHW<b>c of a tensor with C channels has ceil(C / b) blocks; the channels past C are zero.
//   NCHW      -> NCHW<b>c : out[n, co, h, w, ci] = c < C ? x[n, c, h, w] : 0,   c = co*b + ci
//   NCHW<a>c  -> NCHW      : out[n, c, h, w]     = x[n, c / a, h, w, c % a]
//   NCHW<a>c  -> NCHW<b>c  : out[n, co, h, w, ci] = c < C ? x[n, c / a, h, w, c % a] : 0
// `channels` is C, the real channel count (the blocked shape loses it when C % b != 0).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/topi/util.h"

namespace tessera::topi {

/// The block of a layout string: 0 for "NCHW", b for "NCHW<b>c"; UserError for anything else.
int64_t ParseNCHWcBlock(const std::string& layout);
/// "NCHW" for 0, else "NCHW<b>c".
std::string NCHWcLayoutName(int64_t block);

/// Tag "injective", name "T_layout_trans". UserError on a bad layout or shape.
Tensor layout_transform(const Tensor& x, const std::string& src_layout, const std::string& dst_layout,
                        int64_t channels);

/// Host-side packing of an OIHW float32 weight [K, C, KH, KW] into [ceil(K/k), ceil(C/c), KH, KW, c, k]
/// (zero-padded), the kernel layout of conv2d_NCHWc.
std::vector<float> PackConv2dWeightNCHWc(const float* w, int64_t K, int64_t C, int64_t KH, int64_t KW, int64_t c,
                                         int64_t k);
/// Host-side packing of a depthwise weight [C, 1, KH, KW] into [ceil(C/c), 1, KH, KW, 1, c] (zero-padded).
std::vector<float> PackDepthwiseWeightNCHWc(const float* w, int64_t C, int64_t KH, int64_t KW, int64_t c);

}  // namespace tessera::topi
