// Winograd convolution F(m x m, 3 x 3) on NCHWc data (Lavin & Gray, "Fast Algorithms for
// Convolutional Neural Networks", CVPR 2016, §4; TVM's topi conv2d_winograd).
//
// A 3x3, stride-1 convolution computes each m x m output tile from an alpha x alpha input tile
// (alpha = m + 2) with alpha^2 multiplications per (input channel, output channel) pair instead
// of 9 m^2:
//   U[e, c, k] = (G g[k, c] G^T)[eps, nu]            e = eps * alpha + nu   (weights, compile time)
//   V[e, p, c] = (B^T d[p, c] B)[eps, nu]            d: the input tile p of channel c
//   M[e, p, k] = sum_c V[e, p, c] * U[e, c, k]        alpha^2 independent GEMMs
//   Y[p, k]    = A^T M[., p, k] A                     the m x m output tile
// F(2x2, 3x3): 16 products per 4 outputs (2.25x fewer); F(4x4, 3x3): 36 per 16 (4x fewer), with
// larger rounding error (coefficients up to 8 in A and 1/24 in G, §5 of the paper).
//
// Here the three stages are separate computes, so that the GEMM is the packed batch GEMM
// (dense_pack.h) over the batch e; graph_lower::WinogradConv2d builds that chain.
//
// Dilation d (atrous convolution; DeepLab's backbone and ASPP) by phase decomposition, the
// space-to-batch identity of atrous convolution (Chen et al., DeepLab, arXiv 1606.00915 §3.1):
// the outputs (y, x) with y % d = py, x % d = px read only the padded input rows py + d * i and
// columns px + d * j, so each of the d x d phases is an undilated 3x3 convolution of that
// sub-image. Tiles are taken per (image, phase), th x tw of them over the phase's
// ceil(OH / d) x ceil(OW / d) outputs; the weights and their transform are unchanged.
//
// Groups G (RegNet's and ResNeXt's grouped 3x3 convs): each group is its own GEMM over its
// C / G input channels, so the batch of the GEMMs is (group, e): b = g * alpha^2 + e, V is
// [G alpha^2, rows, C / G] and M [G alpha^2, rows, K / G].
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "tessera/topi/nn/conv2d.h"
#include "tessera/topi/util.h"

namespace tessera::topi {

/// The transform matrices of F(m x m, 3 x 3), row-major, for m in {2, 4} (the paper's points
/// 0, +-1 and 0, +-1, +-2 with the point at infinity).
struct WinogradMatrices {
  int64_t m = 0;               ///< output tile
  int64_t alpha = 0;           ///< input tile: m + 2
  std::vector<double> AT;      ///< [m, alpha]      output transform
  std::vector<double> BT;      ///< [alpha, alpha]  input transform
  std::vector<double> G;       ///< [alpha, 3]      kernel transform
};

/// UserError unless m is 2 or 4.
WinogradMatrices Winograd3x3(int64_t m);

/// One 3x3 filter g (row-major) -> its alpha x alpha transform G g G^T (row-major), in double.
std::vector<double> WinogradKernelTransform(const WinogradMatrices& w, const float* g);

/// Name of the input transform block (the x86 schedule recognises it).
inline constexpr const char* kWinogradInputName = "winograd_input_transform";
/// Name of the output transform block.
inline constexpr const char* kWinogradOutputName = "winograd_output_transform";

/// Block annotation of both transform blocks: the output tile m.
inline constexpr const char* kWinogradTileAttr = "winograd_tile";
/// Block annotation of the output transform block: the dilation d (only when d > 1; its schedule
/// unrolls m * d outputs).
inline constexpr const char* kWinogradDilationAttr = "winograd_dilation";

/// The tiles of a Winograd convolution: th x tw tiles of m x m outputs per image and phase (the
/// last row and column of tiles are partial when m does not divide the phase's output), d x d
/// phases per image for dilation d.
struct WinogradTiling {
  int64_t m = 2, th = 0, tw = 0, d = 1;
  /// tiles of all n images: tile p = (((n * d + py) * d + px) * th + ty) * tw + tx
  int64_t Tiles(int64_t n) const { return n * d * d * th * tw; }
};

/// The tiling of an oh x ow output with dilation d: th = ceil(ceil(oh / d) / m), tw likewise.
/// UserError on an empty output or d < 1.
WinogradTiling WinogradTile(int64_t oh, int64_t ow, int64_t m, int64_t d = 1);

/// data [N, C/c, H, W, c] (float32, NCHWc), a 3x3 stride-1 convolution's `padding` (top, left,
/// bottom, right), dilation d and groups G -> V [G alpha^2, rows, C/c * c / G]:
///   V[g alpha^2 + e, p, ci] = sum_{i, j} BT[eps, i] BT[nu, j]
///                 pad(data)[n, C' / c, py + d * (ty * m + i), px + d * (tx * m + j), C' % c]
/// with C' = g * C / G + ci the input channel
/// for tile p of (n, py, px, ty, tx) (WinogradTiling::Tiles; d = 1: p = (n * th + ty) * tw + tx);
/// rows >= the tile count (rows past the last tile repeat it, for a GEMM whose row count is a
/// multiple of its micro-kernel's). Zero coefficients are left out and +-1 ones become
/// additions, so a schedule that unrolls e folds each V element to its few terms. Padding is its
/// own stage (kNCHWcPadName, conv2d_nchwc.h), extended below and right by zeros for partial
/// tiles (to d * (th * m + 2) rows, d = 1: th * m - OH more). Block kWinogradInputName. UserError
/// on a bad rank, rows, d, or channels that G does not divide.
Tensor winograd_input_transform(const Tensor& data, int64_t m, const std::array<int64_t, 4>& padding, int64_t rows,
                                int64_t d = 1, int64_t groups = 1);

/// M [G alpha^2, rows, Kg] (the batch GEMM's product; G = 1: Kg = Kp >= K) -> out
/// [N, G Kg / k, OH, OW, k]:
///   out[n, ko, y, x, ki] = sum_{a, b} AT[(y / d) % m, a] AT[(x / d) % m, b] M[g alpha^2 + a * alpha + b, p, j]
/// for channel ko * k + ki = g * Kg + j and the tile p of (n, y % d, x % d, y / d / m, x / d / m).
/// Block kWinogradOutputName. UserError when Kg is not a multiple of k (a group's channels are
/// whole blocks), M's batch is not G alpha^2 or rows < the tile count.
Tensor winograd_output_transform(const Tensor& mm, int64_t m, int64_t n, int64_t oh, int64_t ow, int64_t k_block,
                                 int64_t d = 1, int64_t groups = 1);

}  // namespace tessera::topi
