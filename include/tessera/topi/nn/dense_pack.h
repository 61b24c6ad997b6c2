// Matrix products over a pre-packed ("blocked") right-hand operand, for register-blocked
// GEMM micro-kernels (the GotoBLAS / BLIS packing, arXiv 1802.04799 §4.3 "pre-packed
// weights"; TVM's dense_pack).
//
// The packed layout of a right-hand matrix B (logically [K, N], out = A · B) is
//   Bp[nb, k, l] = B[k, nb * bn + l]    nb in [0, NB), l in [0, bn), NB * bn >= N
// zero for nb * bn + l >= N (padding). With bn = 16 float32 lanes (one zmm register) the
// inner loop of a GEMM is one contiguous vector load of Bp[nb, k, :] per k, an A scalar
// broadcast, and an FMA.
//
// The GEMM computes carry block annotations that topi::x86::ScheduleGemm reads (the tile
// chosen by topi::x86::ChooseGemmTile): "gemm_mr" (rows of the micro-kernel), "gemm_nv"
// (zmm vectors of it, the padded N is a multiple of nv * bn), "gemm_batch" (how many leading
// output loops index the batch of Bp; the other leading loops are rows of A, fused into M).
// When the padded N exceeds N, or the rows are padded to a multiple of mr (2-D x of dense_packed,
// every batch_matmul_packed; padded rows read row M - 1), the GEMM writes a padded intermediate
// "T_gemm_packed" and a copy "T_gemm_unpad" slices off the real rows and columns.
#pragma once

#include <cstdint>

#include "tessera/topi/util.h"

namespace tessera::topi {

/// Tile of the packed GEMM: micro-kernel rows and vectors, the lanes per vector.
struct GemmPackTile {
  int64_t mr = 6;
  int64_t nv = 2;
  int64_t bn = 16;
  /// N rounded up to a multiple of nv * bn: the packed weight's NB * bn.
  int64_t PaddedN(int64_t n) const { return (n + nv * bn - 1) / (nv * bn) * (nv * bn); }
};

/// w [N, K] (nn.dense's weight) -> [NB, K, bn] with NB * bn = tile.PaddedN(N), zero padded.
Tensor pack_dense_weight(const Tensor& w, const GemmPackTile& tile);

/// b [..., K, N] (numpy matmul's right operand, or batch_matmul's y with transpose_b = false)
/// -> [..., NB, K, bn]; with `transposed`, b is [..., N, K] (batch_matmul's default y). N and K
/// may be symbolic (dynamic shapes; batch dims static): NB is then an expression.
Tensor pack_matmul_b(const Tensor& b, const GemmPackTile& tile, bool transposed);

/// x [..., K] times a packed weight wp [NB, K, bn] (pack_dense_weight of a [N, K] weight)
/// -> [..., N]: out[.., n] = sum_k x[.., k] * wp[n / bn, k, n % bn]. Used for nn.dense and
/// for nn.matmul whose right operand is 2-D. Dynamic shapes: the row dimension of x (the one
/// before K; [seq, K], [1, seq, K], [batch, seq, K]) may be a symbolic extent, and so may the
/// dims before it (K must be static: UnsupportedError otherwise): the GEMM
/// rows are then padded to floordiv(seq + mr - 1, mr) * mr and always sliced by T_gemm_unpad,
/// so topi::x86::ScheduleGemmPacked tiles them with the same micro-kernel as static rows.
Tensor dense_packed(const Tensor& x, const Tensor& wp, int64_t n, const GemmPackTile& tile);

/// a [..., M, K] ([..., K, M] when transpose_a) times packed bp [..., NB, K, bn]
/// (pack_matmul_b) -> [batch..., M, N]; the batch dims (all but the last two of a, all but the
/// last three of bp) broadcast numpy-style (an extent-1 dim broadcasts).
Tensor batch_matmul_packed(const Tensor& a, const Tensor& bp, int64_t n, const GemmPackTile& tile,
                           bool transpose_a = false);
/// Dynamic shapes: M, N and K may be symbolic extents (BERT's attention, [12, seq, 64] x
/// [12, seq, 64]^T and [12, seq, seq] x [12, seq, 64]); batch dims must be static. pack_matmul_b
/// of a b with a symbolic N or K gives NB = floordiv(N + nv*bn - 1, nv*bn) * nv (zero columns
/// past N); the rows are padded to floordiv(M + mr - 1, mr) * mr and T_gemm_unpad slices off the
/// real [..., M, N]. The int64 overload forwards here when a or bp has a symbolic extent.
Tensor batch_matmul_packed(const Tensor& a, const Tensor& bp, const PrimExpr& n, const GemmPackTile& tile,
                           bool transpose_a = false);

}  // namespace tessera::topi
