// ONNX CenterCropPad-18: each listed axis is center-cropped or zero-padded to `shape`; when the
// difference d is odd, the extra element is cropped / padded at the end (begin d / 2, end
// d - d / 2), as the reference implementation (onnx/reference/ops/op_center_crop_pad.py).
// One graph `pad` does both (a negative amount crops). `shape` must be known at import.
#include "context.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;

namespace {

void ConvertCenterCropPad(NodeContext& ctx) {
  const std::vector<int64_t> xs = ctx.InputShape(0);
  const int64_t rank = static_cast<int64_t>(xs.size());
  const std::vector<int64_t> target = ctx.InputInts(1, "shape");
  std::vector<int64_t> axes;
  for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  axes = ctx.AttrInts("axes", axes);
  if (target.size() != axes.size())
    ctx.Fail("shape has " + std::to_string(target.size()) + " values but there are " + std::to_string(axes.size()) +
             " axes");
  std::vector<int64_t> before(rank, 0), after(rank, 0);
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i];
    if (a < -rank || a >= rank) ctx.Fail("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    if (a < 0) a += rank;
    if (seen[a]) ctx.Fail("axis " + std::to_string(axes[i]) + " is repeated");
    seen[a] = true;
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
