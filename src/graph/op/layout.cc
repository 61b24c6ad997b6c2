// Ops of the blocked NCHWc layout that AlterOpLayout introduces (TVM's
// nn.contrib_conv2d_NCHWc and layout_transform).
#include "op_groups.h"
#include "op_util.h"
#include "tessera/support/error.h"

namespace tessera::graph::op {

namespace {

// "NCHW" -> 0, "NCHW<b>c" -> b; UserError otherwise.
int64_t BlockOf(const std::string& layout) {
  if (layout == "NCHW") return 0;
  bool ok = layout.size() > 5 && layout.compare(0, 4, "NCHW") == 0 && layout.back() == 'c';
  int64_t b = 0;
  for (size_t i = 4; ok && i + 1 < layout.size(); ++i) {
    ok = layout[i] >= '0' && layout[i] <= '9';
    b = b * 10 + (layout[i] - '0');
  }
  TESSERA_CHECK(ok && b >= 1, "layout '", layout, "' is not NCHW or NCHW<b>c");
  return b;
}

// data [N, C/c, H, W, c]; kernel [K/k, C/(c g), KH, KW, c, k] (dense g = 1, or g groups of whole
// blocks) or [C/c, 1, KH, KW, 1, c] (depthwise, groups > 1) -> [N, K/k, OH, OW, k].
Type Conv2DNCHWcRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const TensorTypeNode& w = TensorArg(args, 1);
  CheckSameDtype(x, w);
  TESSERA_CHECK(x.ndim() == 5, "data must be 5-D NCHWc, got ", ShapeStr(x.shape));
  TESSERA_CHECK(w.ndim() == 6, "kernel must be 6-D, got ", ShapeStr(w.shape));
  auto ws = StaticShape(w.shape);
  TESSERA_CHECK(ws.has_value() && x.shape[1].is_static() && x.shape[4].is_static(),
                "kernel and data channel blocks must be static");
  const int64_t groups = attrs.GetInt("groups", 1);
  const int64_t cb = x.shape[1].value(), c = x.shape[4].value();
  const int64_t data_block = BlockOf(attrs.GetString("data_layout", "NCHW" + std::to_string(c) + "c"));
  TESSERA_CHECK(data_block == c, "data_layout block ", data_block, " does not match the data's last dim ", c);
  Dim out_c, out_b;
  // As topi::IsDepthwiseNCHWc.
  const bool depthwise = groups > 1 && (*ws)[0] == cb && (*ws)[1] == 1 && (*ws)[4] == 1 && (*ws)[5] == c;
  if (!depthwise) {  // dense, or grouped: each group's output blocks read its cb / groups data blocks
    TESSERA_CHECK(groups >= 1 && (*ws)[1] * groups == cb && (*ws)[4] == c && (*ws)[0] % groups == 0, "kernel ",
                  ShapeStr(w.shape), " does not match data channel blocks ", cb, "x", c, " in ", groups, " groups");
    out_c = Dim((*ws)[0]);
    out_b = Dim((*ws)[5]);
  } else {
    TESSERA_CHECK((*ws)[0] == cb && (*ws)[1] == 1 && (*ws)[4] == 1 && (*ws)[5] == c, "depthwise kernel ",
                  ShapeStr(w.shape), " must be [", cb, ", 1, KH, KW, 1, ", c, "]");
    out_c = Dim(cb);
    out_b = Dim(c);
  }
  std::vector<int64_t> strides = attrs.GetInts("strides", {1, 1});
  std::vector<int64_t> dilation = attrs.GetInts("dilation", {1, 1});
  TESSERA_CHECK(strides.size() == 2 && dilation.size() == 2, "strides and dilation must have 2 values");
  std::vector<int64_t> pad = Padding2D(attrs);
  Dim oh = WindowOutDim(x.shape[2], pad[0] + pad[2], (*ws)[2], strides[0], dilation[0], false, pad[0]);
  Dim ow = WindowOutDim(x.shape[3], pad[1] + pad[3], (*ws)[3], strides[1], dilation[1], false, pad[1]);
  return TensorTypeNode::make({x.shape[0], out_c, oh, ow, out_b}, x.dtype);
}

// NCHW / NCHW<a>c -> NCHW / NCHW<b>c; attr channels = the real channel count C.
Type LayoutTransformRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const int64_t a = BlockOf(attrs.GetString("src_layout")), b = BlockOf(attrs.GetString("dst_layout"));
  const int64_t C = attrs.GetInt("channels");
  TESSERA_CHECK(x.ndim() == (a ? 5 : 4), "input ", ShapeStr(x.shape), " is not ", attrs.GetString("src_layout"));
  if (x.shape[1].is_static())
    TESSERA_CHECK(a ? (C + a - 1) / a == x.shape[1].value() : C == x.shape[1].value(), "channels ", C,
                  " do not match ", ShapeStr(x.shape));
  Shape out = {x.shape[0], Dim(b ? (C + b - 1) / b : C), x.shape[2], x.shape[3]};
  if (b) out.push_back(Dim(b));
  return TensorTypeNode::make(out, x.dtype);
}

}  // namespace

void RegisterLayoutOps(OpRegistry& r) {
  r.Register("nn.contrib_conv2d_NCHWc", 2, kOutEWiseFusable, Conv2DNCHWcRel,
             "2-D convolution in NCHWc: data [N, C/c, H, W, c], kernel [K/k, C/c, KH, KW, c, k] (groups 1) or "
             "[C/c, 1, KH, KW, 1, c] (depthwise, groups = C). attrs: strides, padding, dilation, groups, "
             "data_layout \"NCHW<c>c\", out_layout \"NCHW<k>c\"");
  r.Register("layout_transform", 1, kInjective, LayoutTransformRel,
             "NCHW <-> NCHW<b>c (channels past C are zero). attrs: src_layout, dst_layout, channels");
}

}  // namespace tessera::graph::op
