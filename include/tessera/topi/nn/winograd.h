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

/// The tiles of a Winograd convolution: th x tw tiles of m x m outputs per image (the last row and
/// column of tiles are partial when m does not divide the output).
struct WinogradTiling {
  int64_t m = 2, th = 0, tw = 0;
  /// tiles of all n images
  int64_t Tiles(int64_t n) const { return n * th * tw; }
};

/// The tiling of an oh x ow output: th = ceil(oh / m), tw = ceil(ow / m). UserError on an empty output.
WinogradTiling WinogradTile(int64_t oh, int64_t ow, int64_t m);

/// data [N, C/c, H, W, c] (float32, NCHWc), a 3x3 stride-1 convolution's `padding` (top, left,
/// bottom, right) -> V [alpha^2, rows, C/c * c]:
///   V[e, p, ci] = sum_{i, j} BT[eps, i] BT[nu, j] pad(data)[n, ci / c, ty * m + i, tx * m + j, ci % c]
/// for tile p = (n * th + ty) * tw + tx; rows >= N * th * tw (rows past the last tile repeat it,
/// for a GEMM whose row count is a multiple of its micro-kernel's). Zero coefficients are left
/// out and +-1 ones become additions, so a schedule that unrolls e folds each V element to its
/// few terms. Padding is its own stage (kNCHWcPadName, conv2d_nchwc.h), extended below and right
/// by th * m - OH and tw * m - OW zeros for partial tiles. Block kWinogradInputName. UserError on
/// a bad rank or rows.
Tensor winograd_input_transform(const Tensor& data, int64_t m, const std::array<int64_t, 4>& padding, int64_t rows);

/// M [alpha^2, rows, Kp] (the batch GEMM's product, Kp >= K) -> out [N, Kp / k, OH, OW, k]:
///   out[n, ko, y, x, ki] = sum_{a, b} AT[y % m, a] AT[x % m, b] M[a * alpha + b, p, ko * k + ki]
/// for the tile p of (n, y / m, x / m). Block kWinogradOutputName. UserError when Kp is not a
/// multiple of k or rows < N * th * tw.
Tensor winograd_output_transform(const Tensor& mm, int64_t m, int64_t n, int64_t oh, int64_t ow, int64_t k_block);

}  // namespace tessera::topi
