// ONNX DeformConv-19/22 (2-D; Dai et al. 2017, with the modulation mask of Zhu et al. 2019),
// composed from graph ops:
//
//   X [N, C, H, W], W [O, C/group, kh, kw], offset [N, G*kh*kw*2, oh, ow] (dy, dx per tap),
//   B [O] optional, mask [N, G*kh*kw, oh, ow] optional (default 1), G = offset_group.
//   tap (i, j) of output (p, q) samples channel c (offset group c / (C/G)) at
//     y = p * stride_h - pad_top + i * dilation_h + dy,   x = q * stride_w - pad_left + j * dilation_w + dx
//   bilinearly with zero padding (corners outside the image count 0), times the mask; the sampled
//   columns [N, C * kh * kw, oh * ow] are then multiplied by W per group, plus B.
// The sampling is image.grid_sample (bilinear, zeros, align_corners=1) over [N*G, C/G, H, W] with
// the pixel coordinates normalised as 2 y / (H - 1) - 1 — the reference implementation's own
// route (onnx/reference/ops/op_deform_conv.py), so H or W of 1 is as undefined there as here.
#include "const_eval.h"
#include "context.h"
#include "graph_build.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

void ConvertDeformConv(NodeContext& ctx) {
  const std::vector<int64_t> xs = ctx.InputShape(0), ws = ctx.InputShape(1), os = ctx.InputShape(2);
  const DataType dt = ctx.InputType(0).dtype;
  if (!dt.is_float()) ctx.Fail("X must be a float tensor, got " + dt.str());
  if (xs.size() != 4)
    ctx.Unsupported("only 2-D DeformConv (X of rank 4) is supported; X has rank " + std::to_string(xs.size()));
  if (ws.size() != 4 || os.size() != 4) ctx.Fail("W and offset must have rank 4");
  const int64_t n = xs[0], c = xs[1], h = xs[2], w = xs[3], o = ws[0];
  const int64_t group = ctx.AttrInt("group", 1), og = ctx.AttrInt("offset_group", 1);
  if (group < 1 || c != ws[1] * group || o % group != 0)
    ctx.Fail("W must be [O, C/group, kh, kw] with O divisible by group " + std::to_string(group));
  if (og < 1 || c % og != 0) ctx.Fail("the input channels must be divisible by offset_group " + std::to_string(og));
  const std::vector<int64_t> kernel = ctx.AttrInts("kernel_shape", {ws[2], ws[3]});
  if (kernel != std::vector<int64_t>{ws[2], ws[3]}) ctx.Fail("kernel_shape does not match W's shape");
  const std::vector<int64_t> strides = ctx.AttrInts("strides", {1, 1}), dil = ctx.AttrInts("dilations", {1, 1});
  const std::vector<int64_t> pads = ctx.AttrInts("pads", {0, 0, 0, 0});
  if (strides.size() != 2 || dil.size() != 2 || pads.size() != 4) ctx.Fail("strides / dilations need 2 values, pads 4");
  for (int d = 0; d < 2; ++d)
    if (strides[d] < 1 || dil[d] < 1) ctx.Fail("strides and dilations must be >= 1");
  const int64_t kh = ws[2], kw = ws[3], k = kh * kw;
  const int64_t oh = (h + pads[0] + pads[2] - ((kh - 1) * dil[0] + 1)) / strides[0] + 1;
  const int64_t ow = (w + pads[1] + pads[3] - ((kw - 1) * dil[1] + 1)) / strides[1] + 1;
  if (os != std::vector<int64_t>{n, og * k * 2, oh, ow})
    ctx.Fail("offset must be [N, offset_group * kh * kw * 2, oh, ow] = [" + std::to_string(n) + ", " +
             std::to_string(og * k * 2) + ", " + std::to_string(oh) + ", " + std::to_string(ow) + "]");
  // Base sampling positions [1, 1, kh, kw, oh, ow] per axis, normalised for align_corners=1.
  std::vector<double> by, bx;
  for (int64_t i = 0; i < kh; ++i)
    for (int64_t j = 0; j < kw; ++j)
      for (int64_t p = 0; p < oh; ++p)
        for (int64_t q = 0; q < ow; ++q) {
          by.push_back(static_cast<double>(p * strides[0] - pads[0] + i * dil[0]));
          bx.push_back(static_cast<double>(q * strides[1] - pads[1] + j * dil[1]));
        }
  const std::vector<int64_t> base_shape = {1, 1, kh, kw, oh, ow};
  Expr off = Reshape(ctx, ctx.Input(2), {n, og, kh, kw, 2, oh, ow});
  auto coord = [&](const std::vector<double>& base, int64_t which, int64_t extent) {
    Expr d = Reshape(ctx, SliceAxis(ctx, off, 4, which, which + 1), {n, og, kh, kw, oh, ow});
    Expr pos = ctx.Call("add", {graph::ConstantNode::make(FromDoubles(base, base_shape, dt)), d});
    pos = ctx.Call("subtract", {ctx.Call("multiply", {pos, ctx.ScalarConst(2.0 / static_cast<double>(extent - 1), dt)}),
                                ctx.ScalarConst(1, dt)});
    return Reshape(ctx, pos, {n * og, k * oh, ow, 1});
  };
  Expr grid = Concat(ctx, {coord(bx, 1, w), coord(by, 0, h)}, 3);  // (x, y) last
  Expr sampled = ctx.Call("image.grid_sample", {Reshape(ctx, ctx.Input(0), {n * og, c / og, h, w}), grid},
                          Attrs{{"mode", std::string("linear")},
                                {"padding_mode", std::string("zeros")},
                                {"align_corners", int64_t{1}}});  // [N*G, C/G, K*oh, ow]
  Expr cols = Reshape(ctx, sampled, {n, og, c / og, k, oh * ow});
  if (ctx.HasInput(4)) {
    if (ctx.InputShape(4) != std::vector<int64_t>{n, og * k, oh, ow}) ctx.Fail("mask must be [N, offset_group * kh * kw, oh, ow]");
    cols = ctx.Call("multiply", {cols, Reshape(ctx, ctx.Input(4), {n, og, 1, k, oh * ow})});
  }
  cols = Reshape(ctx, cols, {n, group, (c / group) * k, oh * ow});
  Expr wg = Reshape(ctx, ctx.Input(1), {group, o / group, (c / group) * k});
  Expr out = Reshape(ctx, ctx.Call("nn.matmul", {wg, cols}), {n, o, oh, ow});
  if (ctx.HasInput(3)) out = ctx.Call("nn.bias_add", {out, ctx.Input(3)}, Attrs{{"axis", int64_t{1}}});
  ctx.SetOutput(0, out);
}

}  // namespace

void RegisterDeformConvConverters(ConverterTable& t) { t["DeformConv"] = ConvertDeformConv; }

}  // namespace tessera::frontend::onnx_import
