// The 2-D convolution of an ONNX Conv-like node (Conv, ConvInteger, QLinearConv) from operands
// the caller prepared (e.g. zero points already subtracted): kernel_shape, strides, dilations,
// group and pads / auto_pad are read from the node's attributes, the window (auto_pad) from input 0's shape, the kernel from w's.
#pragma once

#include "context.h"

namespace tessera::frontend::onnx_import {

/// nn.conv2d of x [N, C, H, W] and w [O, C/group, kH, kW] (NCHW / OIHW) with the node's window
/// attributes; UserError at the node for a weight of another rank or a kernel_shape that does
/// not match w. Defined in ops_nn.cc.
graph::Expr BuildConv2D(NodeContext& ctx, graph::Expr x, graph::Expr w);

}  // namespace tessera::frontend::onnx_import
