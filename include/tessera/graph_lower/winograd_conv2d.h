// WinogradConv2d: rewrites a 3x3 stride-1 nn.contrib_conv2d_NCHWc with a constant kernel (and
// equal dilations d: a dilated conv becomes d x d undilated ones, topi/nn/winograd.h; any groups
// whose channels are whole blocks) into a
// Winograd convolution F(m x m, 3x3) (topi/nn/winograd.h; Lavin & Gray, CVPR 2016; TVM's
// conv2d_winograd alter-layout with the weight transform folded at compile time), when the x86
// strategy picks a tile for it (RewritesFor(target).winograd_tile, op_strategy.h; on x86
// topi::x86::WinogradTileSize: m = 2 or 4; 0, every other target's default, keeps the direct conv):
//
//   nn.contrib_conv2d_NCHWc(x [N, C/c, H, W, c], Constant W [K/k, C/c, 3, 3, c, k])
//     -> V = nn.contrib_conv2d_winograd_input_transform(x)        [alpha^2, rows, C]
//        M = nn.contrib_batch_matmul_pack(V, Constant Up)          [alpha^2, rows, K]
//        nn.contrib_conv2d_winograd_output_transform(M)            [N, K/k, OH, OW, k]
//
// Up is U[e, c, k] = (G W[k, c] G^T)[e], computed in double and rounded to float32, packed for
// the GEMM micro-kernel as [alpha^2, NB, C, bn] (dense_pack.h) with the tile that
// target's strategy picks for rows x K x C (RewritesFor(target).gemm_tile); rows is the tile
// count (topi::WinogradTiling::Tiles: N * OH/m * OW/m without dilation) rounded up to the
// tile's mr, so the GEMM needs no row padding of its own. The output transform is injective:
// FuseOps fuses the conv's epilogue (bias, relu, residual add) into it.
// A grouped conv (G groups of whole channel blocks) is G GEMMs per tile element: V and M are
// [G alpha^2, rows, C / G] and [G alpha^2, rows, K / G], Up [G alpha^2, NB, C / G, bn]. The
// transforms carry attrs dilation = d when d > 1 and groups = G when G > 1. Calls that are not
// float32 with static shapes, stride 1 and equal dilations, or whose kernel is not a Constant, or
// that the target's winograd_tile does not take, are left alone.
//
// Runs type inference first; run it after AlterOpLayout and before FuseOps.
#pragma once

#include "tessera/graph/module.h"
#include "tessera/graph/transform/pass.h"
#include "tessera/target/target.h"

namespace tessera::graph_lower {

/// The tiles and blocks are `target`'s (RewritesFor(target), op_strategy.h).
graph::IRModule WinogradConv2d(const graph::IRModule& mod, const target::Target& target);

/// WinogradConv2d as a pipeline pass (opt_level 3).
graph::transform::Pass WinogradConv2dPass(const target::Target& target);

}  // namespace tessera::graph_lower
