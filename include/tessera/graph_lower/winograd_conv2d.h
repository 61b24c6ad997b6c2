// WinogradConv2d: rewrites a 3x3 stride-1 nn.contrib_conv2d_NCHWc with a constant kernel (and
// equal dilations d: a dilated conv becomes d x d undilated ones, topi/nn/winograd.h; any groups
// whose channels are whole blocks) into a
// Winograd convolution F(m x m, 3x3) (topi/nn/winograd.h; Lavin & Gray, CVPR 2016; TVM's
// conv2d_winograd alter-layout with the weight transform folded at compile time), when the x86
// strategy picks a tile for it (RewritesFor(target).winograd_tile, op_strategy.h; on x86
// topi::x86::WinogradTileSize: m = 2 or 4; 0, every other target's default, keeps the direct conv)
// or a tuning decided one (the tile knob, below):
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
// The tile is a knob (topi/schedule_knobs.h) per convolution workload, named by
// WinogradTileKnob, when the target lists tiles a tuner may choose (RewritesFor(target).
// winograd_tiles; x86: topi::x86::WinogradTileCandidates): its candidates are 0 (the direct
// convolution) and those tiles, its fallback winograd_tile's choice. Without a KnobContext, or
// for a knob the context neither sets nor looks up, the fallback: an untuned build is unchanged.
// Every conv with the same knob name takes the same value (the same workload).
//
// Runs type inference first; run it after AlterOpLayout and before FuseOps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/graph/module.h"
#include "tessera/graph/transform/pass.h"
#include "tessera/target/target.h"
#include "tessera/topi/nn/conv2d_nchwc.h"
#include "tessera/topi/schedule_knobs.h"

namespace tessera::graph_lower {

/// The tile knob's name for an NCHWc conv (data [N, C/c, H, W, c], kernel [K/k, C/g/c, 3, 3, c, k]):
/// "WinogradConv2d.tile[data 1x4x56x56x16, kernel 4x4x3x3x16x16, padding 1x1x1x1, dilation 1,
/// groups 1]", stable across machines and runs (it keys the tuner's decisions, tune/rewrite_choice.h).
std::string WinogradTileKnob(const std::vector<int64_t>& data, const std::vector<int64_t>& kernel,
                             const topi::Conv2DParams& p);

/// The tiles and blocks are `target`'s (RewritesFor(target), op_strategy.h); the tile knobs are
/// defined in `knobs` (null: every conv takes its fallback).
graph::IRModule WinogradConv2d(const graph::IRModule& mod, const target::Target& target,
                               topi::KnobContext* knobs = nullptr);

/// WinogradConv2d as a pipeline pass (opt_level 3). `knobs`, when given, must outlive the pass.
graph::transform::Pass WinogradConv2dPass(const target::Target& target, topi::KnobContext* knobs = nullptr);

}  // namespace tessera::graph_lower
