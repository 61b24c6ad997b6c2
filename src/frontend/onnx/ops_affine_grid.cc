// ONNX AffineGrid-20 (2-D and 3-D), composed: a constant homogeneous base grid of normalised
// coordinates times theta^T.
//
//   theta [N, 2, 3], size (N, C, H, W)     -> grid [N, H, W, 2]     (x, y)
//   theta [N, 3, 4], size (N, C, D, H, W)  -> grid [N, D, H, W, 3]  (x, y, z)
//   coordinate i of an axis of extent n: align_corners=1: -1 + 2 i / (n - 1) (-1 when n = 1);
//                                        align_corners=0: -1 + (2 i + 1) / n
//   grid[n, p] = theta[n] @ (x_p, y_p, [z_p,] 1)
// `size` must be known at import. Spec: onnx/reference/ops/op_affine_grid.py.
#include "const_eval.h"
#include "context.h"
#include "graph_build.h"

namespace tessera::frontend::onnx_import {

using graph::Expr;

namespace {

void ConvertAffineGrid(NodeContext& ctx) {
  const std::vector<int64_t> size = ctx.InputInts(1, "size");
  if (size.size() != 4 && size.size() != 5)
    ctx.Fail("size must be (N, C, H, W) or (N, C, D, H, W), got " + std::to_string(size.size()) + " values");
  const int64_t dims = static_cast<int64_t>(size.size()) - 2;
  const std::vector<int64_t> ts = ctx.InputShape(0);
  const DataType dt = ctx.InputType(0).dtype;
  if (!dt.is_float()) ctx.Fail("theta must be a float tensor, got " + dt.str());
  if (ts.size() != 3 || ts[0] != size[0] || ts[1] != dims || ts[2] != dims + 1)
    ctx.Fail("theta must be [N, " + std::to_string(dims) + ", " + std::to_string(dims + 1) + "] with N = size[0] = " +
             std::to_string(size[0]));
  const int64_t align = ctx.AttrInt("align_corners", 0);
  if (align != 0 && align != 1) ctx.Fail("align_corners must be 0 or 1, got " + std::to_string(align));
  std::vector<int64_t> spatial(size.begin() + 2, size.end());  // [D,] H, W
  int64_t points = 1;
  for (int64_t s : spatial) {
    if (s < 1) ctx.Fail("spatial sizes must be >= 1");
    points *= s;
  }
  auto coord = [&](int64_t i, int64_t n) {
    if (align) return n == 1 ? -1.0 : -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(n - 1);
    return -1.0 + (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(n);
  };
  // base [points, dims + 1]: (x, y, [z,] 1) with x along the last spatial axis.
  std::vector<double> base;
  base.reserve(static_cast<size_t>(points * (dims + 1)));
  std::vector<int64_t> idx(spatial.size(), 0);
  for (int64_t p = 0; p < points; ++p) {
    for (int64_t d = dims - 1; d >= 0; --d) base.push_back(coord(idx[d], spatial[d]));
    base.push_back(1.0);
    for (int64_t d = dims - 1; d >= 0; --d) {
      if (++idx[d] < spatial[d]) break;
      idx[d] = 0;
    }
  }
  Expr b = graph::ConstantNode::make(FromDoubles(base, {1, points, dims + 1}, dt));
  Expr grid = ctx.Call("nn.matmul", {b, Transpose(ctx, ctx.Input(0), {0, 2, 1})});  // [N, points, dims]
  std::vector<int64_t> out = {size[0]};
  out.insert(out.end(), spatial.begin(), spatial.end());
  out.push_back(dims);
  ctx.SetOutput(0, Reshape(ctx, grid, out));
}

}  // namespace

void RegisterAffineGridConverters(ConverterTable& t) { t["AffineGrid"] = ConvertAffineGrid; }

}  // namespace tessera::frontend::onnx_import
