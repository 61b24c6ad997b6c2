// The ops of a Winograd convolution, which graph_lower::WinogradConv2d (winograd_conv2d.h)
// builds from a 3x3 nn.contrib_conv2d_NCHWc, with their FComputes (topi/nn/winograd.h):
//   nn.contrib_conv2d_winograd_input_transform(data NCHWc)        -> V [alpha^2, rows, C]
//   nn.contrib_batch_matmul_pack(V, U packed [alpha^2, NB, C, bn]) -> M [alpha^2, rows, Kp]
//   nn.contrib_conv2d_winograd_output_transform(M)                -> out NCHWc [N, Kp/k, OH, OW, k]
#include "computes.h"
#include "tessera/support/error.h"
#include "tessera/topi/nn/dense_pack.h"
#include "tessera/topi/nn/conv2d_nchwc.h"
#include "tessera/topi/nn/winograd.h"

namespace tessera::graph_lower::detail {

namespace {

const graph::TensorTypeNode& StaticTensorArg(const std::vector<Type>& args, size_t i, const char* op) {
  const auto* t = i < args.size() && args[i] ? args[i]->as<graph::TensorTypeNode>() : nullptr;
  TESSERA_CHECK(t, op, ": argument ", i, " must be a tensor");
  TESSERA_CHECK(graph::StaticShape(t->shape).has_value(), op, ": argument ", i, " must have a static shape, got ",
                graph::ShapeStr(t->shape));
  return *t;
}

std::vector<int64_t> ShapeOfArg(const graph::TensorTypeNode& t) { return *graph::StaticShape(t.shape); }

// data [N, C/c, H, W, c] -> [G alpha^2, rows, C/c * c / G]; attrs tile_size, padding, rows, dilation (default
// 1), groups G (default 1).
Type InputTransformRel(const std::vector<Type>& args, const Attrs& attrs) {
  const char* op = "nn.contrib_conv2d_winograd_input_transform";
  TESSERA_CHECK(args.size() == 1, op, " takes 1 argument");
  const graph::TensorTypeNode& x = StaticTensorArg(args, 0, op);
  std::vector<int64_t> s = ShapeOfArg(x);
  TESSERA_CHECK(s.size() == 5, op, ": data must be 5-D NCHWc, got ", graph::ShapeStr(x.shape));
  const int64_t m = attrs.GetInt("tile_size"), alpha = topi::Winograd3x3(m).alpha;
  const int64_t d = attrs.GetInt("dilation", 1);
  TESSERA_CHECK(d >= 1, op, ": dilation must be >= 1, got ", d);
  topi::Conv2DParams p;
  p.padding = Padding4(attrs);
  p.dilation = {d, d};
  const auto [oh, ow] = topi::Conv2DOutHW(s[2], s[3], 3, 3, p);
  TESSERA_CHECK(oh > 0 && ow > 0, op, ": the padded ", s[2], " x ", s[3], " input is smaller than the dilated kernel");
  const int64_t tiles = topi::WinogradTile(oh, ow, m, d).Tiles(s[0]), rows = attrs.GetInt("rows", tiles);
  TESSERA_CHECK(rows >= tiles, op, ": rows ", rows, " < ", tiles, " tiles");
  const int64_t groups = attrs.GetInt("groups", 1);
  TESSERA_CHECK(groups >= 1 && (s[1] * s[4]) % groups == 0, op, ": ", s[1] * s[4], " channels are not a multiple of ",
                groups, " groups");
  return graph::TensorTypeNode::make(
      {graph::Dim(groups * alpha * alpha), graph::Dim(rows), graph::Dim(s[1] * s[4] / groups)}, x.dtype);
}

// a [B, M, K] times wp [B, NB, K, bn] -> [B, M, units].
Type BatchMatmulPackRel(const std::vector<Type>& args, const Attrs& attrs) {
  const char* op = "nn.contrib_batch_matmul_pack";
  TESSERA_CHECK(args.size() == 2, op, " takes 2 arguments");
  const graph::TensorTypeNode& a = StaticTensorArg(args, 0, op);
  const graph::TensorTypeNode& w = StaticTensorArg(args, 1, op);
  TESSERA_CHECK(a.dtype == w.dtype, op, ": dtypes differ");
  std::vector<int64_t> as = ShapeOfArg(a), ws = ShapeOfArg(w);
  TESSERA_CHECK(as.size() == 3 && ws.size() == 4 && as[0] == ws[0] && as[2] == ws[2], op, ": need a [B, M, K] and wp [B, NB, K, bn], got ",
                graph::ShapeStr(a.shape), " and ", graph::ShapeStr(w.shape));
  const int64_t units = attrs.GetInt("units");
  TESSERA_CHECK(units > 0 && units <= ws[1] * ws[3], op, ": units ", units, " exceed the packed ", ws[1] * ws[3]);
  return graph::TensorTypeNode::make({graph::Dim(as[0]), graph::Dim(as[1]), graph::Dim(units)}, a.dtype);
}

// M [G alpha^2, rows, Kg] -> [N, G Kg / k, OH, OW, k]; attrs tile_size, batch, out_h, out_w, channel_block,
// dilation (default 1), groups G (default 1).
Type OutputTransformRel(const std::vector<Type>& args, const Attrs& attrs) {
  const char* op = "nn.contrib_conv2d_winograd_output_transform";
  TESSERA_CHECK(args.size() == 1, op, " takes 1 argument");
  const graph::TensorTypeNode& x = StaticTensorArg(args, 0, op);
  std::vector<int64_t> s = ShapeOfArg(x);
  const int64_t m = attrs.GetInt("tile_size"), alpha = topi::Winograd3x3(m).alpha;
  const int64_t n = attrs.GetInt("batch"), oh = attrs.GetInt("out_h"), ow = attrs.GetInt("out_w");
  const int64_t k = attrs.GetInt("channel_block");
  const int64_t groups = attrs.GetInt("groups", 1);
  TESSERA_CHECK(groups >= 1 && s.size() == 3 && s[0] == groups * alpha * alpha, op, ": M must be [",
                groups * alpha * alpha, ", rows, K], got ", graph::ShapeStr(x.shape));
  TESSERA_CHECK(s[1] >= topi::WinogradTile(oh, ow, m, attrs.GetInt("dilation", 1)).Tiles(n), op, ": ", s[1],
                " rows are fewer than the tiles");
  TESSERA_CHECK(k > 0 && s[2] % k == 0, op, ": ", s[2], " channels", groups > 1 ? " per group" : "",
                " are not a multiple of the block ", k);
  return graph::TensorTypeNode::make(
      {graph::Dim(n), graph::Dim(groups * s[2] / k), graph::Dim(oh), graph::Dim(ow), graph::Dim(k)}, x.dtype);
}

}  // namespace

void RegisterWinogradComputes(graph::OpRegistry& r) {
  if (!r.Has("nn.contrib_conv2d_winograd_input_transform")) {
    r.Register("nn.contrib_conv2d_winograd_input_transform", 1, graph::kInjective, InputTransformRel,
               "Winograd F(m x m, 3x3) input transform of NCHWc data: B^T d B per tile and channel -> "
               "[G alpha^2, rows, C / G]. attrs: tile_size (m), padding, rows, dilation (d: d x d phases, default 1), "
               "groups (G, default 1)");
    r.Register("nn.contrib_batch_matmul_pack", 2, graph::kOutEWiseFusable, BatchMatmulPackRel,
               "a [B, M, K] times a weight pre-packed as [B, NB, K, bn] -> [B, M, units]. attrs: units, gemm_mr, gemm_nv");
    r.Register("nn.contrib_conv2d_winograd_output_transform", 1, graph::kInjective, OutputTransformRel,
               "Winograd F(m x m, 3x3) output transform A^T M A -> NCHWc [N, K/k, OH, OW, k]. attrs: tile_size, "
               "batch, out_h, out_w, channel_block, dilation (default 1), groups (default 1)");
  }
  r.SetCompute("nn.contrib_conv2d_winograd_input_transform", [](const Attrs& a, const Tensors& in, const Type& t) -> Tensors {
    return {topi::winograd_input_transform(in[0], a.GetInt("tile_size"), Padding4(a), StaticOutShape(t)[1],
                                           a.GetInt("dilation", 1), a.GetInt("groups", 1))};
  });
  r.SetCompute("nn.contrib_batch_matmul_pack", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::batch_matmul_packed(in[0], in[1], a.GetInt("units"), PackedGemmTile(a, in[1]))};
  });
  r.SetCompute("nn.contrib_conv2d_winograd_output_transform", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::winograd_output_transform(in[0], a.GetInt("tile_size"), a.GetInt("batch"), a.GetInt("out_h"),
                                            a.GetInt("out_w"), a.GetInt("channel_block"), a.GetInt("dilation", 1),
                                            a.GetInt("groups", 1))};
  });
}

}  // namespace tessera::graph_lower::detail
