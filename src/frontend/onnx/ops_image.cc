// ONNX Resize-10/11/13/18/19 and Upsample-7/9/10 -> image.resize, GridSample-16/20/22 ->
// image.grid_sample (graph/op/image.cc).
//
// When the `scales` or `sizes` operand (or tf_crop_and_resize's roi) is a constant or foldable,
// the output extents and the scale of each axis's coordinate transform are fixed here, at import
// (image.resize). When one is a run-time value, the VM computes them (EmitRunTimeResize: the shape
// function vm.resize_shape and the kernel vm.resize, graph/op/vm.cc) with the same rules:
//   scales given: out = floor(in * scale) (as the reference implementation and ONNX Runtime
//                 do, also for tf_crop_and_resize), the transform uses `scale`;
//   sizes given:  out = size, the transform uses size / in; with keep_aspect_ratio_policy
//                 not_larger / not_smaller one scale s = min / max of size / in over the axes,
//                 out = round(s * in) (half up, as the reference).
// Resize-10 and Upsample have no coordinate_transformation_mode: they are asymmetric, and
// nearest rounds as ONNX Runtime's "simple" mode (floor, or ceil when downsampling).
// Axes whose extent and scale are both unchanged (and not cropped) are left out.
#include <cmath>
#include <sstream>

#include "context.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;

namespace {

std::string Str(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// The scales / sizes operand, or empty when absent or an empty tensor (Resize-11+ allows
// both). `InputConst` is undefined for an absent input.
bool HasValues(NodeContext& ctx, int i) {
  return ctx.HasInput(i) && !(ctx.InputConst(i).defined() && ctx.InputConst(i).NumElements() == 0);
}

struct ResizeRequest {
  std::vector<double> scales;   // one per listed axis, or empty
  std::vector<int64_t> sizes;   // one per listed axis, or empty
  std::vector<double> roi;      // starts then ends of the listed axes, or empty
  std::string mode, coordinate_mode, nearest_mode;
};

// opset 18+: `axes` names the axes the operands list (normalised to [0, rank)); default every
// axis in order.
std::vector<int64_t> ResizeAxes(NodeContext& ctx, int64_t rank) {
  std::vector<int64_t> axes = ctx.AttrInts("axes", {});
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) ctx.Fail("axes entry " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    if (a < 0) a += rank;
  }
  return axes;
}

// The attrs of the interpolation itself, shared by image.resize and vm.resize.
void SetModeAttrs(NodeContext& ctx, const ResizeRequest& req, Attrs& attrs) {
  attrs.Set("mode", req.mode).Set("coordinate_transformation_mode", req.coordinate_mode);
  attrs.Set("nearest_mode", req.nearest_mode);
  attrs.Set("cubic_coeff_a", static_cast<double>(ctx.AttrFloat("cubic_coeff_a", -0.75f)));
  attrs.Set("exclude_outside", ctx.AttrInt("exclude_outside", 0));
  attrs.Set("extrapolation_value", static_cast<double>(ctx.AttrFloat("extrapolation_value", 0.0f)));
  attrs.Set("antialias", ctx.AttrInt("antialias", 0));
}

void EmitResize(NodeContext& ctx, const ResizeRequest& req) {
  const std::vector<int64_t> in = ctx.InputShape(0);
  const int64_t rank = static_cast<int64_t>(in.size());
  const std::vector<int64_t> axes = ResizeAxes(ctx, rank);
  const size_t k = axes.size();
  if (req.scales.empty() == req.sizes.empty())
    ctx.Fail("exactly one of 'scales' and 'sizes' must be given (both are " +
             std::string(req.scales.empty() ? "absent or empty" : "given") + ")");
  const std::vector<double>& given = req.scales;
  if (!given.empty() && given.size() != k)
    ctx.Fail("'scales' has " + std::to_string(given.size()) + " values for " + std::to_string(k) + " axes");
  if (!req.sizes.empty() && req.sizes.size() != k)
    ctx.Fail("'sizes' has " + std::to_string(req.sizes.size()) + " values for " + std::to_string(k) + " axes");
  const bool crop = req.coordinate_mode == "tf_crop_and_resize";
  if (crop && req.roi.size() != 2 * k)
    ctx.Fail("tf_crop_and_resize needs a 'roi' of " + std::to_string(2 * k) + " values (starts, then ends), got " +
             std::to_string(req.roi.size()));

  std::vector<int64_t> sizes(k);
  std::vector<double> scales(k);
  if (!given.empty()) {
    for (size_t a = 0; a < k; ++a) {
      const double s = given[a];
      if (!(s > 0) || !std::isfinite(s)) ctx.Fail("scales must be positive and finite, got " + Str(s));
      const double out = std::floor(static_cast<double>(in[axes[a]]) * s);
      if (out < 1 || out > 9.0e15)
        ctx.Fail("scale " + Str(s) + " gives axis " + std::to_string(axes[a]) + " (extent " +
                 std::to_string(in[axes[a]]) + ") an output extent of " + Str(out));
      sizes[a] = static_cast<int64_t>(out);
      scales[a] = s;
    }
  } else {
    const std::string policy = ctx.AttrString("keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
      ctx.Fail("unknown keep_aspect_ratio_policy '" + policy + "' (stretch, not_larger, not_smaller)");
    for (size_t a = 0; a < k; ++a) {
      if (req.sizes[a] < 1) ctx.Fail("sizes must be >= 1, got " + std::to_string(req.sizes[a]));
      if (in[axes[a]] < 1) ctx.Fail("axis " + std::to_string(axes[a]) + " of the input is empty");
      scales[a] = static_cast<double>(req.sizes[a]) / static_cast<double>(in[axes[a]]);
      sizes[a] = req.sizes[a];
    }
    if (policy != "stretch" && k > 0) {
      double s = scales[0];
      for (double v : scales) s = policy == "not_larger" ? std::min(s, v) : std::max(s, v);
      for (size_t a = 0; a < k; ++a) {
        scales[a] = s;
        sizes[a] = std::max<int64_t>(1, static_cast<int64_t>(std::floor(s * static_cast<double>(in[axes[a]]) + 0.5)));
      }
    }
  }

  Attrs attrs;
  std::vector<int64_t> kept_axes, kept_sizes;
  std::vector<double> kept_scales, roi_start, roi_end;
  for (size_t a = 0; a < k; ++a) {
    if (!crop && sizes[a] == in[axes[a]] && scales[a] == 1.0) continue;  // unchanged axis
    kept_axes.push_back(axes[a]);
    kept_sizes.push_back(sizes[a]);
    kept_scales.push_back(scales[a]);
    if (crop) {
      roi_start.push_back(req.roi[a]);
      roi_end.push_back(req.roi[k + a]);
    }
  }
  if (kept_axes.empty()) return ctx.SetOutput(0, ctx.Input(0));
  attrs.Set("axes", kept_axes).Set("sizes", kept_sizes).Set("scales", kept_scales);
  SetModeAttrs(ctx, req, attrs);
  if (crop) attrs.Set("roi_start", roi_start).Set("roi_end", roi_end);
  ctx.SetOutput(0, ctx.Call("image.resize", {ctx.Input(0)}, attrs));
}

// A scales / sizes / roi operand is given: present and not of length 0 (a constant or a run-time
// tensor whose type says so; Resize-11+ allows an empty one for the absent operand).
bool OperandGiven(NodeContext& ctx, int i) {
  if (!ctx.HasInput(i)) return false;
  if (!ctx.InputIsRunTime(i)) return HasValues(ctx, i);
  const graph::TensorTypeNode& t = ctx.InputType(i);
  return !(t.ndim() == 1 && t.shape[0].is_static() && t.shape[0].value() == 0);
}

// Resize / Upsample whose scales, sizes or (tf_crop_and_resize) roi is a run-time value: the shape
// function vm.resize_shape computes the output extents and the VM's vm.resize kernel reads the
// operands (graph/op/vm.cc). `scales_input` / `sizes_input` / `roi_input`: the operands' input
// positions, -1 where the opset has none.
void EmitRunTimeResize(NodeContext& ctx, const ResizeRequest& req, int scales_input, int sizes_input, int roi_input) {
  const int64_t rank = ctx.InputType(0).ndim();
  const std::vector<int64_t> axes = ResizeAxes(ctx, rank);
  const bool has_scales = scales_input >= 0 && OperandGiven(ctx, scales_input);
  const bool has_sizes = sizes_input >= 0 && OperandGiven(ctx, sizes_input);
  if (has_scales == has_sizes)
    ctx.Fail("exactly one of 'scales' and 'sizes' must be given (both are " +
             std::string(has_scales ? "given" : "absent or empty") + ")");
  const int values_input = has_scales ? scales_input : sizes_input;
  const bool crop = req.coordinate_mode == "tf_crop_and_resize";
  if (crop && (roi_input < 0 || !OperandGiven(ctx, roi_input)))
    ctx.Fail("tf_crop_and_resize needs a 'roi' of " + std::to_string(2 * axes.size()) + " values (starts, then ends)");
  if (roi_input >= 0 && !crop) ctx.IgnoreInput(roi_input);  // roi has an effect only with tf_crop_and_resize
  Attrs shape_attrs{{"axes", axes},
                    {"kind", std::string(has_scales ? "scales" : "sizes")},
                    {"keep_aspect_ratio_policy", ctx.AttrString("keep_aspect_ratio_policy", "stretch")},
                    {"source", ctx.Label()}};
  const graph::Expr values = ctx.Input(values_input);
  const graph::Expr shape = ctx.Call("vm.resize_shape", {ctx.Input(0), values}, shape_attrs);
  Attrs attrs = shape_attrs;
  SetModeAttrs(ctx, req, attrs);
  attrs.Set("symbols", ctx.OutputSymbols(rank));
  // Without tf_crop_and_resize the kernel reads no roi: a placeholder operand.
  const graph::Expr roi = crop ? ctx.Input(roi_input) : ctx.ScalarConst(0, DataType::Float(32));
  ctx.SetOutput(0, ctx.Call("vm.resize", {ctx.Input(0), values, roi, shape}, attrs));
}

// Upsample-1's "bilinear" is Upsample-7's "linear".
std::string ModeAttr(NodeContext& ctx) {
  std::string mode = ctx.AttrString("mode", "nearest");
  if (mode == "bilinear") mode = "linear";
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    ctx.Fail("unknown mode '" + mode + "' (nearest, linear, cubic)");
  return mode;
}

// Resize-11/13/18/19: X, roi, scales, sizes. Resize-10: X, scales.
void ConvertResize(NodeContext& ctx) {
  ResizeRequest req;
  req.mode = ModeAttr(ctx);
  if (ctx.opset() < 11) {
    if (ctx.InputIsRunTime(1)) {
      req.coordinate_mode = "asymmetric";
      req.nearest_mode = "simple";
      return EmitRunTimeResize(ctx, req, 1, -1, -1);
    }
    req.scales = ctx.InputDoubles(1, "Resize's scales");
    req.coordinate_mode = "asymmetric";
    req.nearest_mode = "simple";
    return EmitResize(ctx, req);
  }
  req.coordinate_mode = ctx.AttrString("coordinate_transformation_mode", "half_pixel");
  req.nearest_mode = ctx.AttrString("nearest_mode", "round_prefer_floor");
  const bool crop = req.coordinate_mode == "tf_crop_and_resize";
  const int sizes_input = ctx.NumInputs() > 3 ? 3 : -1;
  if (ctx.InputIsRunTime(2) || (sizes_input > 0 && ctx.InputIsRunTime(3)) || (crop && ctx.InputIsRunTime(1)))
    return EmitRunTimeResize(ctx, req, 2, sizes_input, 1);
  if (crop && HasValues(ctx, 1)) req.roi = ctx.InputDoubles(1, "Resize's roi");
  ctx.IgnoreInput(1);  // roi has an effect only with tf_crop_and_resize (ONNX spec)
  if (HasValues(ctx, 2)) req.scales = ctx.InputDoubles(2, "Resize's scales");
  if (ctx.NumInputs() > 3 && HasValues(ctx, 3)) req.sizes = ctx.InputInts(3, "Resize's sizes");
  EmitResize(ctx, req);
}

// Upsample-7: scales attribute; Upsample-9: scales input (deprecated in 10, same semantics).
void ConvertUpsample(NodeContext& ctx) {
  if (ctx.opset() < 7) ctx.Unsupported("Upsample-1 (experimental height_scale / width_scale form); re-export at opset >= 7");
  ResizeRequest req;
  req.mode = ModeAttr(ctx);
  if (ctx.opset() < 9) {
    for (float s : ctx.AttrFloats("scales")) req.scales.push_back(s);
  } else if (ctx.InputIsRunTime(1)) {
    req.coordinate_mode = "asymmetric";
    req.nearest_mode = "simple";
    return EmitRunTimeResize(ctx, req, 1, -1, -1);
  } else {
    req.scales = ctx.InputDoubles(1, "Upsample's scales");
  }
  req.coordinate_mode = "asymmetric";
  req.nearest_mode = "simple";
  EmitResize(ctx, req);
}

// GridSample-16 (4-D; modes bilinear / nearest / bicubic) and -20/22 (N-D; linear / nearest /
// cubic).
void ConvertGridSample(NodeContext& ctx) {
  std::string mode = ctx.AttrString("mode", ctx.opset() < 20 ? "bilinear" : "linear");
  if (mode == "bilinear") mode = "linear";
  if (mode == "bicubic") mode = "cubic";
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    ctx.Fail("unknown mode '" + mode + "' (linear / bilinear, nearest, cubic / bicubic)");
  Attrs attrs{{"mode", mode},
              {"padding_mode", ctx.AttrString("padding_mode", "zeros")},
              {"align_corners", ctx.AttrInt("align_corners", 0)}};
  ctx.SetOutput(0, ctx.Call("image.grid_sample", {ctx.Input(0), ctx.Input(1)}, attrs));
}

}  // namespace

void RegisterImageConverters(ConverterTable& t) {
  t["GridSample"] = ConvertGridSample;
  t["Resize"] = ConvertResize;
  t["Upsample"] = ConvertUpsample;
}

}  // namespace tessera::frontend::onnx_import
