// PackGemmWeights: packs the constant right operand of every nn.dense and 2-D nn.matmul at
// compile time into the blocked layout of the x86 GEMM micro-kernel (topi/nn/dense_pack.h),
// TVM's "dense_pack" alter-layout for x86 (arXiv 1802.04799 §4.3, pre-packed weights).
//
//   nn.dense(x, Constant w [N, K])      -> nn.contrib_dense_pack(x, Constant wp [NB, K, bn])
//   nn.matmul(x, Constant b [K, N])     -> nn.contrib_dense_pack(x, Constant wp [NB, K, bn])
// with attrs units = N, gemm_mr, gemm_nv (the tile the target's strategy picks for the call's
// static M x N x K: RewritesFor(target).gemm_tile, op_strategy.h; bn = the layout block, 16 float32;
// NB * bn = N rounded up to a multiple of gemm_nv * bn, zero padded).
// nn.contrib_dense_pack is registered by graph_lower::RegisterComputes (type relation:
// x [..., K], wp [NB, K, bn] -> [..., units]; pattern out_elemwise_fusable, like nn.dense) and
// lowers to topi::dense_packed. A symbolic row count (dynamic shapes: x [1, seq, K], the dim before
// K) is packed too, the tile chosen as for 128 rows (the kernel runs any count, with a tail tile).
// Calls whose operand is not a Constant, or with any other symbolic dim, are left alone: their
// computes pack inside the kernel (the same micro-kernel).
//
// Runs type inference first (when needed); run it after constant folding and before FuseOps.
#pragma once

#include "tessera/graph/module.h"
#include "tessera/graph/transform/pass.h"
#include "tessera/target/target.h"

namespace tessera::graph_lower {

/// The tiles and blocks are `target`'s (RewritesFor(target), op_strategy.h).
graph::IRModule PackGemmWeights(const graph::IRModule& mod, const target::Target& target);

/// PackGemmWeights as a pipeline pass (opt_level 3).
graph::transform::Pass PackGemmWeightsPass(const target::Target& target);

}  // namespace tessera::graph_lower
