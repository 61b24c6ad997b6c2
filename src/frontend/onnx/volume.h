// 3-D (NCDHW) windows composed from the 2-D ops (ops_volume.cc); the converters of Conv,
// MaxPool, AveragePool and LpPool (ops_nn.cc) hand 5-D inputs to them.
#pragma once

#include <string>
#include <vector>

#include "context.h"

namespace tessera::frontend::onnx_import {

/// Conv of a 5-D input: one 2-D conv per depth tap over the depth slices folded into the batch.
void ConvertConv3D(NodeContext& ctx);
/// The 3-D conv of x [N, C, D, H, W] (static) and `weight` of shape ws [M, C/group, kD, kH, kW]
/// with per-axis (d, h, w) strides, paddings and dilations, as ConvertConv3D builds it (no bias).
/// Fails (ctx.Fail) when the channels do not match or the depth window exceeds the padded input.
graph::Expr BuildConv3D(NodeContext& ctx, graph::Expr x, graph::Expr weight, const std::vector<int64_t>& ws,
                        const std::vector<int64_t>& strides, const std::vector<int64_t>& pad_begin,
                        const std::vector<int64_t>& pad_end, const std::vector<int64_t>& dilations, int64_t group);
/// MaxPool ("max"), AveragePool ("avg") or LpPool ("lp") of a 5-D input: a 2-D pool over
/// (H, W), then one over D.
void ConvertPool3D(NodeContext& ctx, const std::string& kind);

}  // namespace tessera::frontend::onnx_import
