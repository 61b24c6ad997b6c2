// 3-D (NCDHW) Conv, MaxPool, AveragePool and LpPool, composed from the 2-D ops (volume.h):
//
//   pools are separable over the box window: a 2-D pool over (H, W) of [N, C*D, H, W], then
//   a (kd x 1) pool over D of [N, C, D, H'*W']. Max of maxes is the max; for averages the
//   divisor of a box is the product of the per-axis divisors (counting or not counting the
//   padding, with ceil_mode's clipped windows), so the average of averages is exact.
//   Conv: the depth taps kd = 0..KD-1 each a 2-D conv of the depth slices
//   x[:, :, kd*dd + d*sd] (d < D_out) folded into the batch, with the weight slice w[:, :, kd];
//   their sum is the 3-D conv (the work of the direct one, no im2col).
// Padding from pads ([d, h, w] begins then ends) or auto_pad (SAME_*: output ceil(in / stride),
// the odd unit at the end (UPPER) or the beginning (LOWER)).
#include "volume.h"

#include <algorithm>

#include "graph_build.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

struct Window3D {
  std::vector<int64_t> kernel, strides, dilations, begin, end;  // each 3 values: d, h, w
};

std::vector<int64_t> Three(NodeContext& ctx, const std::string& name, const std::vector<int64_t>& dflt) {
  std::vector<int64_t> v = ctx.AttrInts(name, dflt);
  if (v.size() != 3) ctx.Fail("attribute '" + name + "' must have 3 values for a 3-D window, got " + std::to_string(v.size()));
  return v;
}

Window3D ReadWindow(NodeContext& ctx, const std::vector<int64_t>& kernel) {
  Window3D w;
  w.kernel = kernel;
  w.strides = Three(ctx, "strides", {1, 1, 1});
  w.dilations = Three(ctx, "dilations", {1, 1, 1});
  for (int d = 0; d < 3; ++d)
    if (w.strides[d] < 1 || w.dilations[d] < 1 || w.kernel[d] < 1)
      ctx.Fail("kernel_shape, strides and dilations must be >= 1");
  const std::string auto_pad = ctx.AttrString("auto_pad", "NOTSET");
  const std::vector<int64_t> in = ctx.InputShape(0);
  if (auto_pad == "NOTSET") {
    std::vector<int64_t> pads = ctx.AttrInts("pads", std::vector<int64_t>(6, 0));
    if (pads.size() != 6) ctx.Fail("attribute 'pads' must have 6 values for a 3-D window, got " + std::to_string(pads.size()));
    w.begin.assign(pads.begin(), pads.begin() + 3);
    w.end.assign(pads.begin() + 3, pads.end());
  } else if (auto_pad == "VALID") {
    w.begin = w.end = {0, 0, 0};
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (int d = 0; d < 3; ++d) {
      const int64_t n = in[2 + d], out = (n + w.strides[d] - 1) / w.strides[d];
      const int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[d] + (w.kernel[d] - 1) * w.dilations[d] + 1 - n);
      const int64_t small = total / 2, begin = auto_pad == "SAME_UPPER" ? small : total - small;
      w.begin.push_back(begin);
      w.end.push_back(total - begin);
    }
  } else {
    ctx.Fail("unknown auto_pad '" + auto_pad + "' (NOTSET, VALID, SAME_UPPER, SAME_LOWER)");
  }
  return w;
}

// The separable 3-D pool of `x` (pool_op "nn.max_pool2d" / "nn.avg_pool2d", extra attrs).
Expr Pool3D(NodeContext& ctx, Expr x, const Window3D& w, const std::string& pool_op, const Attrs& extra) {
  const std::vector<int64_t> s = StaticShape(ctx, x);  // N, C, D, H, W
  auto pool = [&](Expr in, std::vector<int64_t> k, std::vector<int64_t> st, std::vector<int64_t> dil,
                  std::vector<int64_t> pad) {
    Attrs a = extra;
    a.Set("pool_size", k).Set("strides", st).Set("dilation", dil).Set("padding", pad);
    a.Set("layout", std::string("NCHW")).Set("ceil_mode", ctx.AttrInt("ceil_mode", 0));
    return ctx.Call(pool_op, {std::move(in)}, a);
  };
  Expr hw = pool(Reshape(ctx, x, {s[0], s[1] * s[2], s[3], s[4]}), {w.kernel[1], w.kernel[2]},
                 {w.strides[1], w.strides[2]}, {w.dilations[1], w.dilations[2]},
                 {w.begin[1], w.begin[2], w.end[1], w.end[2]});
  const std::vector<int64_t> hs = StaticShape(ctx, hw);
  Expr d = pool(Reshape(ctx, hw, {s[0], s[1], s[2], hs[2] * hs[3]}), {w.kernel[0], 1}, {w.strides[0], 1},
                {w.dilations[0], 1}, {w.begin[0], 0, w.end[0], 0});
  const std::vector<int64_t> ds = StaticShape(ctx, d);
  return Reshape(ctx, d, {s[0], s[1], ds[2], hs[2], hs[3]});
}

}  // namespace

void ConvertPool3D(NodeContext& ctx, const std::string& kind) {
  if (!ctx.HasAttr("kernel_shape")) ctx.Fail("required attribute 'kernel_shape' is missing");
  const Window3D w = ReadWindow(ctx, Three(ctx, "kernel_shape", {}));
  Expr x = ctx.Input(0);
  if (kind == "max") {
    if (ctx.AttrInt("storage_order", 0) != 0) ctx.Unsupported("attribute storage_order=1 is not supported");
    ctx.CheckMaxOutputs(1, "MaxPool's Indices output is not supported");
    return ctx.SetOutput(0, Pool3D(ctx, x, w, "nn.max_pool2d", {}));
  }
  if (kind == "avg") {
    return ctx.SetOutput(0, Pool3D(ctx, x, w, "nn.avg_pool2d",
                                   Attrs{{"count_include_pad", ctx.AttrInt("count_include_pad", 0)}}));
  }
  // Lp: (sum |x|^p)^(1/p) = (avg of |x|^p counting the padding * window)^(1/p).
  const DataType dt = ctx.InputType(0).dtype;
  if (!dt.is_floating()) ctx.Fail("input must be a float tensor, got " + dt.str());
  const double p = static_cast<double>(ctx.AttrInt("p", 2));
  if (p < 1) ctx.Fail("p must be >= 1");
  x = ctx.Call("power", {ctx.Call("abs", {x}), ctx.ScalarConst(p, dt)});
  Expr avg = Pool3D(ctx, x, w, "nn.avg_pool2d", Attrs{{"count_include_pad", int64_t{1}}});
  const double window = static_cast<double>(w.kernel[0] * w.kernel[1] * w.kernel[2]);
  Expr sum = ctx.Call("multiply", {avg, ctx.ScalarConst(window, dt)});
  ctx.SetOutput(0, ctx.Call("power", {sum, ctx.ScalarConst(1.0 / p, dt)}));
}

Expr BuildConv3D(NodeContext& ctx, Expr x, Expr weight, const std::vector<int64_t>& ws, const std::vector<int64_t>& strides,
                 const std::vector<int64_t>& pad_begin, const std::vector<int64_t>& pad_end,
                 const std::vector<int64_t>& dilations, int64_t group) {
  const std::vector<int64_t> xs = StaticShape(ctx, x);
  const int64_t n = xs[0], c = xs[1], m = ws[0];
  if (group < 1 || c % group != 0 || ws[1] * group != c)
    ctx.Fail("the weight's channels (" + std::to_string(ws[1]) + " x group " + std::to_string(group) +
             ") must equal the input channels (" + std::to_string(c) + ")");
  if (pad_begin[0] || pad_end[0]) {
    x = ctx.Call("pad", {x}, Attrs{{"pad_before", std::vector<int64_t>{0, 0, pad_begin[0], 0, 0}},
                                   {"pad_after", std::vector<int64_t>{0, 0, pad_end[0], 0, 0}}});
  }
  const int64_t depth = xs[2] + pad_begin[0] + pad_end[0];
  const int64_t span = (ws[2] - 1) * dilations[0] + 1;
  if (depth < span) ctx.Fail("the depth window (" + std::to_string(span) + ") is larger than the padded input (" + std::to_string(depth) + ")");
  const int64_t d_out = (depth - span) / strides[0] + 1;
  Attrs conv{{"strides", std::vector<int64_t>{strides[1], strides[2]}},
             {"padding", std::vector<int64_t>{pad_begin[1], pad_begin[2], pad_end[1], pad_end[2]}},
             {"dilation", std::vector<int64_t>{dilations[1], dilations[2]}},
             {"groups", group},
             {"data_layout", std::string("NCHW")},
             {"kernel_layout", std::string("OIHW")}};
  Expr sum;
  for (int64_t kd = 0; kd < ws[2]; ++kd) {
    const int64_t first = kd * dilations[0];
    Expr xs_kd = SliceAxis(ctx, x, 2, first, first + (d_out - 1) * strides[0] + 1, strides[0]);
    xs_kd = Transpose(ctx, xs_kd, {0, 2, 1, 3, 4});
    xs_kd = Reshape(ctx, xs_kd, {n * d_out, c, xs[3], xs[4]});
    Expr w_kd = SliceAxis(ctx, weight, 2, kd, kd + 1);
    w_kd = Reshape(ctx, w_kd, {m, ws[1], ws[3], ws[4]});
    Expr y = ctx.Call("nn.conv2d", {xs_kd, w_kd}, conv);
    sum = sum ? ctx.Call("add", {sum, y}) : y;
  }
  const std::vector<int64_t> ys = StaticShape(ctx, sum);
  return Transpose(ctx, Reshape(ctx, sum, {n, d_out, m, ys[2], ys[3]}), {0, 2, 1, 3, 4});
}

void ConvertConv3D(NodeContext& ctx) {
  const std::vector<int64_t> ws = ctx.InputShape(1);
  if (ws.size() != 5) ctx.Fail("weight must be 5-D [M, C/group, kD, kH, kW]");
  const std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  if (ctx.AttrInts("kernel_shape", kernel) != kernel) ctx.Fail("kernel_shape does not match the weight shape");
  const Window3D w = ReadWindow(ctx, kernel);
  Expr out = BuildConv3D(ctx, ctx.Input(0), ctx.Input(1), ws, w.strides, w.begin, w.end, w.dilations, ctx.AttrInt("group", 1));
  if (ctx.HasInput(2)) out = ctx.Call("nn.bias_add", {out, ctx.Input(2)}, Attrs{{"axis", int64_t{1}}});
  ctx.SetOutput(0, out);
}

}  // namespace tessera::frontend::onnx_import
