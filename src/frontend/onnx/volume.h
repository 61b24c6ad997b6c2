// 3-D (NCDHW) windows composed from the 2-D ops (ops_volume.cc); the converters of Conv,
// MaxPool, AveragePool and LpPool (ops_nn.cc) hand 5-D inputs to them.
#pragma once

#include <string>

#include "context.h"

namespace tessera::frontend::onnx_import {

/// Conv of a 5-D input: one 2-D conv per depth tap over the depth slices folded into the batch.
void ConvertConv3D(NodeContext& ctx);
/// MaxPool ("max"), AveragePool ("avg") or LpPool ("lp") of a 5-D input: a 2-D pool over
/// (H, W), then one over D.
void ConvertPool3D(NodeContext& ctx, const std::string& kind);

}  // namespace tessera::frontend::onnx_import
