// ONNX CenterCropPad-18: each listed axis is center-cropped or zero-padded to `shape`; when the
// difference d is odd, the extra element is cropped / padded at the end (begin d / 2, end
// d - d / 2), as the reference implementation (onnx/reference/ops/op_center_crop_pad.py).
// One graph `pad` does both (a negative amount crops); with a run-time `shape` the amounts are
// graph ops on it and the VM pads (RunTimePad, graph/op/vm.cc vm.pad_params / vm.pad).
#include "const_eval.h"
#include "context.h"
#include "graph_build.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;

namespace {

// The run-time form: d = shape - x's extents over the axes, begin = sign(d) * (|d| / 2), end = d - begin.
void RunTimeCenterCropPad(NodeContext& ctx, const std::vector<int64_t>& xs, const std::vector<int64_t>& axes) {
  const DataType i64 = DataType::Int(64);
  if (ctx.RunTimeShapeLength(1, "CenterCropPad's shape") != static_cast<int64_t>(axes.size()))
    ctx.Fail("shape has " + std::to_string(ctx.InputType(1).shape[0].value()) + " values but there are " +
             std::to_string(axes.size()) + " axes");
  std::vector<int64_t> extents;
  for (int64_t a : axes) extents.push_back(xs[a]);
  const graph::Expr d = ctx.Call("subtract", {ctx.Input(1), graph::ConstantNode::make(MakeInts(extents))});
  const graph::Expr half = ctx.Call("divide", {ctx.Call("abs", {d}), ctx.ScalarConst(2, i64)});
  const graph::Expr begin = ctx.Call("where", {ctx.Call("greater_equal", {d, ctx.ScalarConst(0, i64)}), half,
                                               ctx.Call("negative", {half})});
  const graph::Expr pads = Concat(ctx, {begin, ctx.Call("subtract", {d, begin})}, 0);
  ctx.SetOutput(0, RunTimePad(ctx, ctx.Input(0), pads, graph::ConstantNode::make(MakeInts(axes)),
                              ctx.ScalarConst(0, ctx.InputType(0).dtype), "constant"));
}

void ConvertCenterCropPad(NodeContext& ctx) {
  const std::vector<int64_t> xs = ctx.InputShape(0);
  const int64_t rank = static_cast<int64_t>(xs.size());
  std::vector<int64_t> axes;
  for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  axes = ctx.AttrInts("axes", axes);
  std::vector<bool> seen(rank, false);
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) ctx.Fail("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    if (a < 0) a += rank;
    if (seen[a]) ctx.Fail("axis " + std::to_string(a) + " is repeated");
    seen[a] = true;
  }
  if (ctx.InputIsRunTime(1)) return RunTimeCenterCropPad(ctx, xs, axes);
  const std::vector<int64_t> target = ctx.InputInts(1, "shape");
  if (target.size() != axes.size())
    ctx.Fail("shape has " + std::to_string(target.size()) + " values but there are " + std::to_string(axes.size()) +
             " axes");
  std::vector<int64_t> before(rank, 0), after(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = axes[i];
    if (target[i] < 0) ctx.Fail("shape values must be >= 0, got " + std::to_string(target[i]));
    const int64_t d = target[i] - xs[a];  // > 0 pads, < 0 crops
    const int64_t half = (d >= 0 ? d : -d) / 2;
    before[a] = d >= 0 ? half : -half;
    after[a] = d - before[a];
  }
  ctx.SetOutput(0, ctx.Call("pad", {ctx.Input(0)}, Attrs{{"pad_before", before}, {"pad_after", after}}));
}

}  // namespace

void RegisterCenterCropPadConverters(ConverterTable& t) { t["CenterCropPad"] = ConvertCenterCropPad; }

}  // namespace tessera::frontend::onnx_import
