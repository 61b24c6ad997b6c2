// ONNX AffineGrid-20 (2-D and 3-D), composed: a constant homogeneous base grid of normalised
// coordinates times theta^T.
//
//   theta [N, 2, 3], size (N, C, H, W)     -> grid [N, H, W, 2]     (x, y)
//   theta [N, 3, 4], size (N, C, D, H, W)  -> grid [N, D, H, W, 3]  (x, y, z)
//   coordinate i of an axis of extent n: align_corners=1: -1 + 2 i / (n - 1) (-1 when n = 1);
//                                        align_corners=0: -1 + (2 i + 1) / n
//   grid[n, p] = theta[n] @ (x_p, y_p, [z_p,] 1)
// A run-time `size` is read by the VM (RunTimeAffineGrid); a size[0] other than theta's N fails the
// run. Spec: onnx/reference/ops/op_affine_grid.py.
#include "const_eval.h"
#include "context.h"
#include "graph_build.h"

namespace tessera::frontend::onnx_import {

using graph::Expr;

namespace {

// A run-time size: each spatial axis's coordinates are computed over vm.range(0, extent) (graph/op/
// vm.cc; its extent binds the output's dim symbol) in float64, cast to theta's dtype, and
// grid[..., k] = theta[:, k, 0] x + theta[:, k, 1] y [+ theta[:, k, 2] z] + theta[:, k, dims], in the
// matmul's order, by broadcasting [N, 1, ..] against each axis's [1, .., extent, .., 1].
void RunTimeAffineGrid(NodeContext& ctx, int64_t align) {
  const int64_t len = ctx.RunTimeShapeLength(1, "AffineGrid's size");
  if (len != 4 && len != 5) ctx.Fail("size must be (N, C, H, W) or (N, C, D, H, W), got " + std::to_string(len) + " values");
  const int64_t dims = len - 2;
  const std::vector<int64_t> ts = ctx.InputShape(0);
  const DataType dt = ctx.InputType(0).dtype, i64 = DataType::Int(64), f64 = DataType::Float(64);
  if (!dt.is_float()) ctx.Fail("theta must be a float tensor, got " + dt.str());
  if (ts.size() != 3 || ts[1] != dims || ts[2] != dims + 1)
    ctx.Fail("theta must be [N, " + std::to_string(dims) + ", " + std::to_string(dims + 1) + "]");
  auto cast = [&](const Expr& e, DataType t) { return ctx.Call("cast", {e}, graph::Attrs{{"dtype", t.str()}}); };
  auto c = [&](double v) { return ctx.ScalarConst(v, f64); };
  // coords[d]: the coordinates of spatial axis d ([D,] H, W), shaped [1, .., extent at 1 + d, .., 1].
  std::vector<Expr> coords;
  const Expr zero = ctx.ScalarConst(0, i64), one = ctx.ScalarConst(1, i64);
  for (int64_t d = 0; d < dims; ++d) {
    const Expr n = ctx.Call("take", {ctx.Input(1), ctx.ScalarConst(static_cast<double>(2 + d), i64)},
                            graph::Attrs{{"axis", int64_t{0}}});
    const Expr length = ctx.Call("vm.range_shape", {zero, n, one}, graph::Attrs{{"source", ctx.Label()}});
    const Expr i = cast(ctx.Call("vm.range", {zero, one, length},
                                 graph::Attrs{{"symbols", ctx.OutputSymbol(0, static_cast<int>(1 + d))}}),
                        f64);
    const Expr nf = cast(n, f64);
    Expr v;
    if (align) {  // -1 + 2 i / (n - 1), and -1 when n = 1
      v = ctx.Call("add", {c(-1), ctx.Call("divide", {ctx.Call("multiply", {c(2), i}), ctx.Call("subtract", {nf, c(1)})})});
      v = ctx.Call("where", {ctx.Call("equal", {nf, c(1)}), c(-1), v});
    } else {  // -1 + (2 i + 1) / n
      v = ctx.Call("add", {c(-1), ctx.Call("divide", {ctx.Call("add", {ctx.Call("multiply", {c(2), i}), c(1)}), nf})});
    }
    // [extent] -> [1, .., extent at 1 + d, .., 1] (expand_dims keeps the symbol; a reshape to -1 would not).
    Expr e = ctx.Call("expand_dims", {cast(v, dt)}, graph::Attrs{{"axis", int64_t{0}}, {"num_newaxis", 1 + d}});
    if (dims - 1 - d > 0)
      e = ctx.Call("expand_dims", {e}, graph::Attrs{{"axis", 2 + d}, {"num_newaxis", dims - 1 - d}});
    coords.push_back(e);
  }
  // size[0] must be theta's N: a zero taken at index 2 (size[0] - N), outside [-1, 1) unless they are
  // equal, fails the run naming the node (take's mode raise); it is added to the grid.
  const Expr n_diff = ctx.Call("subtract", {ctx.Call("take", {ctx.Input(1), zero}, graph::Attrs{{"axis", int64_t{0}}}),
                                            ctx.ScalarConst(static_cast<double>(ts[0]), i64)});
  const Expr check = ctx.Call("take", {graph::ConstantNode::make(FromDoubles({0.0}, {1}, dt)),
                                       ctx.Call("multiply", {n_diff, ctx.ScalarConst(2, i64)})},
                              graph::Attrs{{"axis", int64_t{0}}, {"mode", std::string("raise")}, {"source", ctx.Label()}});
  std::vector<Expr> components;
  for (int64_t k = 0; k < dims; ++k) {
    auto t = [&](int64_t j) {  // theta[:, k, j] as [N, 1, .., 1]
      std::vector<int64_t> shape(static_cast<size_t>(dims + 1), 1);
      shape[0] = ts[0];
      return Reshape(ctx, SliceAxis(ctx, SliceAxis(ctx, ctx.Input(0), 1, k, k + 1), 2, j, j + 1), shape);
    };
    // x is the last spatial axis, y the one before, z the first (3-D).
    Expr acc;
    for (int64_t j = 0; j < dims; ++j) {
      const Expr term = ctx.Call("multiply", {coords[static_cast<size_t>(dims - 1 - j)], t(j)});
      acc = acc ? ctx.Call("add", {acc, term}) : term;
    }
    acc = ctx.Call("add", {acc, t(dims)});
    if (k == 0) acc = ctx.Call("add", {acc, check});
    components.push_back(ctx.Call("expand_dims", {acc}, graph::Attrs{{"axis", dims + 1}, {"num_newaxis", int64_t{1}}}));
  }
  ctx.SetOutput(0, Concat(ctx, components, dims + 1));
}

void ConvertAffineGrid(NodeContext& ctx) {
  const int64_t align = ctx.AttrInt("align_corners", 0);
  if (align != 0 && align != 1) ctx.Fail("align_corners must be 0 or 1, got " + std::to_string(align));
  if (ctx.InputIsRunTime(1)) return RunTimeAffineGrid(ctx, align);
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
