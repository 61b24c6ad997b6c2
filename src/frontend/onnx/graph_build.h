// Small graph-building helpers shared by the converters that compose ONNX ops from graph ops
// (attention, rotary embedding, einsum, 3-D windows): typed calls through NodeContext::Call,
// so that type errors carry the node's location.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "context.h"

namespace tessera::frontend::onnx_import {

/// An ONNX axis attribute normalized into [0, rank); Fail (at the node) when outside [-rank, rank).
inline int64_t NormAxis(NodeContext& ctx, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    ctx.Fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

inline graph::Expr Reshape(NodeContext& ctx, graph::Expr x, std::vector<int64_t> shape) {
  return ctx.Call("reshape", {std::move(x)}, graph::Attrs{{"newshape", std::move(shape)}});
}

inline graph::Expr Transpose(NodeContext& ctx, graph::Expr x, std::vector<int64_t> axes) {
  return ctx.Call("transpose", {std::move(x)}, graph::Attrs{{"axes", std::move(axes)}});
}

/// x[begin:end:stride] along one axis.
inline graph::Expr SliceAxis(NodeContext& ctx, graph::Expr x, int64_t axis, int64_t begin, int64_t end,
                             int64_t stride = 1) {
  return ctx.Call("strided_slice", {std::move(x)},
                  graph::Attrs{{"begin", std::vector<int64_t>{begin}},
                               {"end", std::vector<int64_t>{end}},
                               {"strides", std::vector<int64_t>{stride}},
                               {"axes", std::vector<int64_t>{axis}}});
}

inline graph::Expr Concat(NodeContext& ctx, std::vector<graph::Expr> parts, int64_t axis) {
  return ctx.Call("concatenate", {graph::TupleNode::make(std::move(parts))}, graph::Attrs{{"axis", axis}});
}

/// ONNX Slice with operands read at run time (each int64 [k]; graph/op/vm.cc vm.slice_params and
/// vm.slice): the per-dim first index, step and extent of slicing xs[0] are computed once (a shape
/// function; its extents bind symbols named after the node's output `output`), then every tensor of
/// `xs` (all of xs[0]'s shape) is sliced with them. `checks`: vm.slice_params' check attrs, which
/// make operands it would clamp fail the run naming the node: check_ends = 1 (TopK's k: an end
/// outside [0, dim]), split_part = 1 / 2 (a Split part: unless 0 <= start <= end <= dim; the last
/// part also unless end = dim). Defined with Slice's converter (ops_tensor.cc).
std::vector<graph::Expr> RunTimeSlice(NodeContext& ctx, const std::vector<graph::Expr>& xs, graph::Expr starts,
                                      graph::Expr ends, graph::Expr axes, graph::Expr steps, graph::Attrs checks = {},
                                      int output = 0);

/// ONNX Pad of x with run-time amounts (graph/op/vm.cc vm.pad_params and vm.pad): pads int64 [2k] (k
/// begins, then k ends; negative crops) over axes int64 [k], value a one-element tensor of x's
/// dtype, mode constant / reflect / edge / wrap; the output's extents bind symbols named after the
/// node's output 0. Amounts the mode cannot take fail the run naming the output dim. Defined with
/// Pad's converter (ops_shape.cc).
graph::Expr RunTimePad(NodeContext& ctx, const graph::Expr& x, const graph::Expr& pads, const graph::Expr& axes,
                       const graph::Expr& value, const std::string& mode);

/// The static shape of a typed expression; a UserError at the node when it has symbolic dims.
std::vector<int64_t> StaticShape(NodeContext& ctx, const graph::Expr& e);

}  // namespace tessera::frontend::onnx_import
