// ONNX ConvTranspose-1/11 (1-D, 2-D and 3-D) as a direct convolution (the gradient of Conv with
// respect to its input; Dumoulin & Visin, "A guide to convolution arithmetic", §4):
//
//   1. zero insertion: x [N, C, H, W] -> [N, C, (H-1)*sh + 1, (W-1)*sw + 1], x at multiples of
//      the stride (reshape to [N, C, H, 1, W, 1], pad the unit dims to the stride, reshape;
//      likewise over D, H, W in 3-D);
//   2. border: pad (zeros; negative amounts crop) by dk - pad_begin before and
//      dk - pad_end + output_padding after, dk = (k - 1) * dilation;
//   3. nn.conv2d (3-D: the Conv of volume.h, one 2-D conv per depth tap), stride 1, same dilation
//      and groups, with the weight W [C, M/group, k...] regrouped to [M, C/group, k...] and
//      flipped along every spatial axis.
//
// The weight's reshape / transpose / flip are graph ops that FoldConstant folds for constant
// weights, so the convolution takes the NCHWc path of any Conv. Padding follows the ONNX spec
// and its reference implementation: output_shape (if given) fixes the total padding, split by
// auto_pad (SAME_UPPER: the larger half at the end; SAME_LOWER / NOTSET without pads: at the
// start, NOTSET with pads: pads' begin), else pads (default 0), else SAME_* for an output of
// in * stride. Cost: the convolution also multiplies the inserted zeros (stride^2 times the
// minimal work); a direct transposed-conv schedule is later work.
#include <algorithm>
#include <limits>

#include "context.h"
#include "graph_build.h"
#include "volume.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

std::vector<int64_t> Ints(NodeContext& ctx, const std::string& name, size_t n, int64_t dflt) {
  std::vector<int64_t> v = ctx.AttrInts(name, std::vector<int64_t>(n, dflt));
  if (v.size() != n)
    ctx.Fail("attribute '" + name + "' must have " + std::to_string(n) + " values, got " + std::to_string(v.size()));
  return v;
}

// [begin..., end...] padding of the `dims` spatial dims of a ConvTranspose.
std::vector<int64_t> TransposePadding(NodeContext& ctx, const std::vector<int64_t>& in,
                                      const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                                      const std::vector<int64_t>& dilations, const std::vector<int64_t>& out_pad) {
  const size_t dims = kernel.size();
  const std::string auto_pad = ctx.AttrString("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER")
    ctx.Fail("unknown auto_pad '" + auto_pad + "' (NOTSET, VALID, SAME_UPPER, SAME_LOWER)");
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  std::vector<int64_t> pads(2 * dims, 0);
  if (auto_pad == "NOTSET" && ctx.HasAttr("pads")) pads = Ints(ctx, "pads", 2 * dims, 0);
  for (int64_t p : pads)
    if (p < 0) ctx.Fail("pads must be >= 0, got " + std::to_string(p));
  if (!ctx.HasAttr("output_shape") && !same) return pads;
  std::vector<int64_t> out_shape = ctx.AttrInts("output_shape", {});
  if (out_shape.size() == dims + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);  // N, C given too
  if (out_shape.empty())
    for (size_t d = 0; d < dims; ++d) out_shape.push_back(in[d] * strides[d]);
  if (out_shape.size() != dims)
    ctx.Fail("attribute 'output_shape' must have " + std::to_string(dims) + " values, got " +
             std::to_string(out_shape.size()));
  for (size_t d = 0; d < dims; ++d) {
    const int64_t total =
        strides[d] * (in[d] - 1) + out_pad[d] + (kernel[d] - 1) * dilations[d] + 1 - out_shape[d];
    int64_t begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    if (auto_pad == "NOTSET") begin = pads[d];
    pads[d] = begin;
    pads[dims + d] = total - begin;
  }
  return pads;
}

void ConvertConvTranspose(NodeContext& ctx) {
  const int64_t rank = ctx.InputType(0).ndim();
  if (rank < 3 || rank > 5)
    ctx.Unsupported("only 1-D, 2-D and 3-D ConvTranspose (an input of rank 3, 4 or 5) are supported; the input has rank " +
                    std::to_string(rank));
  const size_t dims = static_cast<size_t>(rank - 2);
  std::vector<int64_t> xs = ctx.InputShape(0), ws = ctx.InputShape(1);
  if (static_cast<int64_t>(ws.size()) != rank)
    ctx.Fail("weight must have rank " + std::to_string(rank) + " [C, M/group, k...], got rank " +
             std::to_string(ws.size()));
  const int64_t group = ctx.AttrInt("group", 1);
  if (group < 1 || xs[1] % group != 0 || ws[0] != xs[1])
    ctx.Fail("the weight's first dim (" + std::to_string(ws[0]) + ") must equal the input channels (" +
             std::to_string(xs[1]) + "), divisible by group " + std::to_string(group));
  const std::vector<int64_t> kernel_w(ws.begin() + 2, ws.end());
  if (ctx.AttrInts("kernel_shape", kernel_w) != kernel_w) ctx.Fail("kernel_shape does not match the weight shape");
  std::vector<int64_t> strides = Ints(ctx, "strides", dims, 1), dilations = Ints(ctx, "dilations", dims, 1);
  std::vector<int64_t> out_pad = Ints(ctx, "output_padding", dims, 0);
  for (size_t d = 0; d < dims; ++d) {
    if (strides[d] < 1 || dilations[d] < 1)
      ctx.Fail("strides and dilations must be >= 1");
    if (out_pad[d] < 0 || (out_pad[d] >= strides[d] && out_pad[d] >= dilations[d]))
      ctx.Fail("output_padding " + std::to_string(out_pad[d]) + " must be >= 0 and smaller than the stride or the dilation");
  }
  const std::vector<int64_t> in(xs.begin() + 2, xs.end());
  std::vector<int64_t> pads = TransposePadding(ctx, in, kernel_w, strides, dilations, out_pad);

  // 1-D runs as 2-D over [N, C, 1, L]; sd = the spatial dims of the convolution (2 or 3).
  const size_t sd = std::max<size_t>(dims, 2);
  auto lift = [&](std::vector<int64_t> v, int64_t fill) {
    if (dims == 1) v.insert(v.begin(), fill);
    return v;
  };
  const std::vector<int64_t> st = lift(strides, 1), dil = lift(dilations, 1), k = lift(kernel_w, 1);
  const std::vector<int64_t> sp = lift(in, 1), op = lift(out_pad, 0);
  const std::vector<int64_t> pb = lift(std::vector<int64_t>(pads.begin(), pads.begin() + dims), 0);
  const std::vector<int64_t> pe = lift(std::vector<int64_t>(pads.begin() + dims, pads.end()), 0);
  const int64_t n = xs[0], c = xs[1], m = ws[1] * group;

  Expr x = ctx.Input(0), w = ctx.Input(1);
  if (dims == 1) {
    x = ctx.Call("expand_dims", {x}, Attrs{{"axis", int64_t{2}}, {"num_newaxis", int64_t{1}}});
    w = ctx.Call("expand_dims", {w}, Attrs{{"axis", int64_t{2}}, {"num_newaxis", int64_t{1}}});
  }
  // 1. zero insertion: [N, C, D0, 1, D1, 1, ...] padded to the strides after each unit dim.
  bool strided = false;
  for (int64_t s : st) strided |= s > 1;
  if (strided) {
    std::vector<int64_t> split = {n, c}, after(2, 0), inserted = {n, c};
    for (size_t d = 0; d < sd; ++d) {
      split.insert(split.end(), {sp[d], 1});
      after.insert(after.end(), {0, st[d] - 1});
      inserted.push_back(sp[d] * st[d]);
    }
    x = Reshape(ctx, x, split);
    x = ctx.Call("pad", {x}, Attrs{{"pad_before", std::vector<int64_t>(split.size(), 0)}, {"pad_after", after}});
    x = Reshape(ctx, x, inserted);
  }
  // 2. border (the zero insertion left stride - 1 zeros after the last element).
  std::vector<int64_t> before(2, 0), after(2, 0);
  for (size_t d = 0; d < sd; ++d) {
    const int64_t dk = (k[d] - 1) * dil[d];
    before.push_back(dk - pb[d]);
    after.push_back(dk - pe[d] + op[d] - (st[d] - 1));
  }
  for (size_t d = 0; d < sd; ++d)
    if (sp[d] * st[d] + before[2 + d] + after[2 + d] < (k[d] - 1) * dil[d] + 1)
      ctx.Fail("the padding leaves an empty output (pads larger than the transposed extent)");
  if (before != std::vector<int64_t>(2 + sd, 0) || after != std::vector<int64_t>(2 + sd, 0))
    x = ctx.Call("pad", {x}, Attrs{{"pad_before", before}, {"pad_after", after}});
  // 3. the weight as a Conv weight: [C, M/g, k...] -> [g, C/g, M/g, k...] -> [g, M/g, C/g, k...]
  //    -> [M, C/g, k...], flipped along every spatial axis.
  std::vector<int64_t> grouped = {group, c / group, m / group}, perm = {0, 2, 1}, conv_w = {m, c / group}, flip_axes;
  for (size_t d = 0; d < sd; ++d) {
    grouped.push_back(k[d]);
    perm.push_back(static_cast<int64_t>(3 + d));
    conv_w.push_back(k[d]);
    flip_axes.push_back(static_cast<int64_t>(2 + d));
  }
  w = Reshape(ctx, w, grouped);
  w = Transpose(ctx, w, perm);
  w = Reshape(ctx, w, conv_w);
  const int64_t lowest = std::numeric_limits<int64_t>::min();
  w = ctx.Call("strided_slice", {w}, Attrs{{"begin", std::vector<int64_t>(sd, -1)},
                                           {"end", std::vector<int64_t>(sd, lowest)},
                                           {"strides", std::vector<int64_t>(sd, -1)},
                                           {"axes", flip_axes}});
  Expr out;
  if (sd == 3) {
    out = BuildConv3D(ctx, x, w, conv_w, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, dil, group);
  } else {
    Attrs attrs{{"strides", std::vector<int64_t>{1, 1}},
                {"padding", std::vector<int64_t>{0, 0, 0, 0}},
                {"dilation", dil},
                {"groups", group},
                {"data_layout", std::string("NCHW")},
                {"kernel_layout", std::string("OIHW")}};
    out = ctx.Call("nn.conv2d", {x, w}, attrs);
  }
  if (dims == 1) out = ctx.Call("squeeze", {out}, Attrs{{"axis", std::vector<int64_t>{2}}});
  if (ctx.HasInput(2)) out = ctx.Call("nn.bias_add", {out, ctx.Input(2)}, Attrs{{"axis", int64_t{1}}});
  ctx.SetOutput(0, out);
}

}  // namespace

void RegisterConvTransposeConverters(ConverterTable& t) { t["ConvTranspose"] = ConvertConvTranspose; }

}  // namespace tessera::frontend::onnx_import
