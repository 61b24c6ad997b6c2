// ONNX RoiAlign-10/16/22 (Mask R-CNN's RoIAlign, He et al. 2017), composed from graph ops:
//
//   X [N, C, H, W], rois [R, 4] (x1, y1, x2, y2), batch_indices [R] -> Y [R, C, oh, ow]
//   off = 0.5 (coordinate_transformation_mode half_pixel, opset 16+ default) or 0
//   (output_half_pixel, the only behaviour of opset 10); start = roi * spatial_scale - off;
//   extent = end - start (output_half_pixel: at least 1); bin = extent / o.
//   Each bin holds g_h x g_w samples, y = start_h + ph * bin_h + (iy + 0.5) * bin_h / g_h (x alike),
//   bilinearly interpolated as the reference implementation
//   (onnx/reference/ops/op_roi_align.py): a sample with y < -1 or y > H (x alike) is 0; else y is
//   clamped to >= 0 and, when floor(y) >= H - 1, snapped to H - 1.
//   mode avg: the mean of the samples; mode max: the max over samples of max over the four
//   corners of weight * value (the reference's definition).
// The four corners are gather_elements of X's rows then columns at the per-sample indices.
// sampling_ratio > 0 fixes g; sampling_ratio 0 (adaptive: g = ceil(extent / o) per roi) needs
// rois known at import, and builds one such pipeline per roi.
#include <cmath>

#include "const_eval.h"
#include "context.h"
#include "graph_build.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

struct RoiAlignParams {
  int64_t out_h, out_w;
  double scale, offset;
  bool half_pixel, max_mode;
  int64_t height, width;
};

// Sample coordinates along one axis: [R, o * g] for rois' start / end columns, and the weights
// (low, high) and indices (low, high) of the two interpolation taps.
struct Taps {
  Expr lo_idx, hi_idx, lo_w, hi_w;
};

Taps AxisTaps(NodeContext& ctx, const RoiAlignParams& p, Expr rois, int64_t col_start, int64_t col_end, int64_t out,
              int64_t g, int64_t extent, DataType dt) {
  Expr start = ctx.Call("subtract", {ctx.Call("multiply", {SliceAxis(ctx, rois, 1, col_start, col_start + 1),
                                                            ctx.ScalarConst(p.scale, dt)}),
                                     ctx.ScalarConst(p.offset, dt)});  // [R, 1]
  Expr end = ctx.Call("subtract", {ctx.Call("multiply", {SliceAxis(ctx, rois, 1, col_end, col_end + 1),
                                                          ctx.ScalarConst(p.scale, dt)}),
                                   ctx.ScalarConst(p.offset, dt)});
  Expr size = ctx.Call("subtract", {end, start});
  if (!p.half_pixel) size = ctx.Call("maximum", {size, ctx.ScalarConst(1, dt)});
  Expr bin = ctx.Call("divide", {size, ctx.ScalarConst(static_cast<double>(out), dt)});
  std::vector<double> ph, iy;
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < g; ++i) {
      ph.push_back(static_cast<double>(o));
      iy.push_back(static_cast<double>(i) + 0.5);
    }
  Expr ph_c = graph::ConstantNode::make(FromDoubles(ph, {1, out * g}, dt));
  Expr iy_c = graph::ConstantNode::make(FromDoubles(iy, {1, out * g}, dt));
  // y = start + ph * bin + (iy + 0.5) * bin / g, in the reference's order of operations.
  Expr y = ctx.Call("add", {ctx.Call("add", {start, ctx.Call("multiply", {ph_c, bin})}),
                            ctx.Call("divide", {ctx.Call("multiply", {iy_c, bin}),
                                                ctx.ScalarConst(static_cast<double>(g), dt)})});  // [R, o*g]
  const double last = static_cast<double>(extent - 1);
  Expr valid = ctx.Call("logical_not", {ctx.Call("logical_or", {ctx.Call("less", {y, ctx.ScalarConst(-1, dt)}),
                                                                ctx.Call("greater", {y, ctx.ScalarConst(static_cast<double>(extent), dt)})})});
  y = ctx.Call("maximum", {y, ctx.ScalarConst(0, dt)});
  Expr fl = ctx.Call("floor", {y});
  Expr at_end = ctx.Call("greater_equal", {fl, ctx.ScalarConst(last, dt)});
  Expr lo = ctx.Call("where", {at_end, ctx.ScalarConst(last, dt), fl});
  Expr hi = ctx.Call("where", {at_end, ctx.ScalarConst(last, dt), ctx.Call("add", {fl, ctx.ScalarConst(1, dt)})});
  Expr frac = ctx.Call("where", {at_end, ctx.ScalarConst(0, dt), ctx.Call("subtract", {y, fl})});
  Expr zero = ctx.ScalarConst(0, dt);
  Taps t;
  t.hi_w = ctx.Call("where", {valid, frac, zero});
  t.lo_w = ctx.Call("where", {valid, ctx.Call("subtract", {ctx.ScalarConst(1, dt), frac}), zero});
  const Attrs to_i64{{"dtype", std::string("int64")}};
  t.lo_idx = ctx.Call("cast", {lo}, to_i64);
  t.hi_idx = ctx.Call("cast", {hi}, to_i64);
  return t;
}

// Y [R, C, oh, ow] for `rois` [R, 4] with g_h x g_w samples per bin.
Expr RoiAlignPipeline(NodeContext& ctx, const RoiAlignParams& p, Expr x, Expr rois, Expr batch, int64_t gh, int64_t gw,
                      DataType dt) {
  const int64_t r = StaticShape(ctx, rois)[0], c = StaticShape(ctx, x)[1];
  const int64_t sh = p.out_h * gh, sw = p.out_w * gw;
  Taps ty = AxisTaps(ctx, p, rois, 1, 3, p.out_h, gh, p.height, dt);
  Taps tx = AxisTaps(ctx, p, rois, 0, 2, p.out_w, gw, p.width, dt);
  Expr xr = ctx.Call("take", {x, batch}, Attrs{{"axis", int64_t{0}}});  // [R, C, H, W]
  auto rows = [&](Expr idx) {
    Expr i = ctx.Call("broadcast_to", {Reshape(ctx, idx, {r, 1, sh, 1})}, Attrs{{"shape", std::vector<int64_t>{r, c, sh, p.width}}});
    return ctx.Call("gather_elements", {xr, i}, Attrs{{"axis", int64_t{2}}});  // [R, C, sh, W]
  };
  auto cols = [&](Expr m, Expr idx) {
    Expr i = ctx.Call("broadcast_to", {Reshape(ctx, idx, {r, 1, 1, sw})}, Attrs{{"shape", std::vector<int64_t>{r, c, sh, sw}}});
    return ctx.Call("gather_elements", {m, i}, Attrs{{"axis", int64_t{3}}});  // [R, C, sh, sw]
  };
  Expr row_lo = rows(ty.lo_idx), row_hi = rows(ty.hi_idx);
  auto wy = [&](Expr w) { return Reshape(ctx, w, {r, 1, sh, 1}); };
  auto wx = [&](Expr w) { return Reshape(ctx, w, {r, 1, 1, sw}); };
  Expr terms[4] = {
      ctx.Call("multiply", {ctx.Call("multiply", {wy(ty.lo_w), wx(tx.lo_w)}), cols(row_lo, tx.lo_idx)}),
      ctx.Call("multiply", {ctx.Call("multiply", {wy(ty.lo_w), wx(tx.hi_w)}), cols(row_lo, tx.hi_idx)}),
      ctx.Call("multiply", {ctx.Call("multiply", {wy(ty.hi_w), wx(tx.lo_w)}), cols(row_hi, tx.lo_idx)}),
      ctx.Call("multiply", {ctx.Call("multiply", {wy(ty.hi_w), wx(tx.hi_w)}), cols(row_hi, tx.hi_idx)})};
  const char* combine = p.max_mode ? "maximum" : "add";
  Expr v = ctx.Call(combine, {ctx.Call(combine, {terms[0], terms[1]}), ctx.Call(combine, {terms[2], terms[3]})});
  v = Reshape(ctx, v, {r, c, p.out_h, gh, p.out_w, gw});
  const Attrs over_bin{{"axis", std::vector<int64_t>{3, 5}}, {"keepdims", int64_t{0}}};
  if (p.max_mode) return ctx.Call("max", {v}, over_bin);
  return ctx.Call("divide", {ctx.Call("sum", {v}, over_bin), ctx.ScalarConst(static_cast<double>(std::max<int64_t>(gh * gw, 1)), dt)});
}

void ConvertRoiAlign(NodeContext& ctx) {
  const std::vector<int64_t> xs = ctx.InputShape(0), rs = ctx.InputShape(1), bs = ctx.InputShape(2);
  const DataType dt = ctx.InputType(0).dtype;
  if (!dt.is_float()) ctx.Fail("X must be a float tensor, got " + dt.str());
  if (xs.size() != 4) ctx.Fail("X must be [N, C, H, W], got rank " + std::to_string(xs.size()));
  if (rs.size() != 2 || rs[1] != 4) ctx.Fail("rois must be [num_rois, 4]");
  if (bs.size() != 1 || bs[0] != rs[0]) ctx.Fail("batch_indices must be [num_rois]");
  if (!ctx.InputType(2).dtype.is_int()) ctx.Fail("batch_indices must be an integer tensor");
  if (ctx.InputType(1).dtype != dt) ctx.Fail("rois must have X's element type");
  RoiAlignParams p;
  p.out_h = ctx.AttrInt("output_height", 1);
  p.out_w = ctx.AttrInt("output_width", 1);
  if (p.out_h < 1 || p.out_w < 1) ctx.Fail("output_height and output_width must be >= 1");
  p.scale = ctx.AttrFloat("spatial_scale", 1.0f);
  const std::string mode = ctx.AttrString("mode", "avg");
  if (mode != "avg" && mode != "max") ctx.Fail("unknown mode '" + mode + "' (avg, max)");
  p.max_mode = mode == "max";
  const std::string ctm = ctx.AttrString("coordinate_transformation_mode", ctx.opset() >= 16 ? "half_pixel" : "output_half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    ctx.Fail("unknown coordinate_transformation_mode '" + ctm + "' (half_pixel, output_half_pixel)");
  p.half_pixel = ctm == "half_pixel";
  p.offset = p.half_pixel ? 0.5 : 0.0;
  p.height = xs[2];
  p.width = xs[3];
  const int64_t ratio = ctx.AttrInt("sampling_ratio", 0);
  if (ratio < 0) ctx.Fail("sampling_ratio must be >= 0, got " + std::to_string(ratio));
  Expr x = ctx.Input(0), batch = ctx.Input(2);
  if (ctx.InputType(2).dtype != DataType::Int(64)) batch = ctx.Call("cast", {batch}, Attrs{{"dtype", std::string("int64")}});
  if (rs[0] == 0) ctx.Unsupported("RoiAlign with no rois (an empty output)");
  if (ratio > 0) return ctx.SetOutput(0, RoiAlignPipeline(ctx, p, x, ctx.Input(1), batch, ratio, ratio, dt));
  // Adaptive: each roi's grid from its known extent.
  const std::vector<double> rois = ctx.InputDoubles(1, "rois (sampling_ratio 0 sizes each roi's sample grid)");
  std::vector<Expr> parts;
  for (int64_t i = 0; i < rs[0]; ++i) {
    auto extent = [&](int64_t a, int64_t b, int64_t o) {
      double e = (rois[i * 4 + b] - rois[i * 4 + a]) * p.scale;
      if (!p.half_pixel) e = std::max(e, 1.0);
      return static_cast<int64_t>(std::ceil(e / static_cast<double>(o)));
    };
    const int64_t gh = extent(1, 3, p.out_h), gw = extent(0, 2, p.out_w);
    Expr roi = SliceAxis(ctx, ctx.Input(1), 0, i, i + 1), bi = SliceAxis(ctx, batch, 0, i, i + 1);
    if (gh <= 0 || gw <= 0) {  // an empty sample grid: the reference leaves 0
      parts.push_back(ctx.Call("broadcast_to", {ctx.ScalarConst(0, dt)},
                               Attrs{{"shape", std::vector<int64_t>{1, xs[1], p.out_h, p.out_w}}}));
      continue;
    }
    parts.push_back(RoiAlignPipeline(ctx, p, x, roi, bi, gh, gw, dt));
  }
  ctx.SetOutput(0, parts.size() == 1 ? parts[0] : Concat(ctx, parts, 0));
}

}  // namespace

void RegisterRoiAlignConverters(ConverterTable& t) { t["RoiAlign"] = ConvertRoiAlign; }

}  // namespace tessera::frontend::onnx_import
