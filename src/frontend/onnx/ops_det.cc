// ONNX Det-11/22: the determinant of each [M, M] matrix of X [*, M, M] -> [*], composed as LU
// factorisation with partial pivoting (Golub & Van Loan, "Matrix Computations", §3.4), unrolled
// over the static M:
//
//   for k in 0 .. M-2:
//     p     = k + argmax_{i >= k} |A[i, k]|            (per matrix)
//     swap rows k and p (a gather along the row axis); sign *= (p != k ? -1 : 1)
//     A[i, :] -= (A[i, k] / A[k, k]) * A[k, :]   for i > k   (no update when A[k, k] = 0: the
//                                                             whole column is then 0)
//   det = sign * prod_k A[k, k]
// Float inputs only; M must be static.
#include "const_eval.h"
#include "context.h"
#include "graph_build.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

void ConvertDet(NodeContext& ctx) {
  const std::vector<int64_t> xs = ctx.InputShape(0);
  const DataType dt = ctx.InputType(0).dtype;
  if (!dt.is_floating()) ctx.Fail("X must be a float tensor, got " + dt.str());
  const int64_t rank = static_cast<int64_t>(xs.size());
  if (rank < 2 || xs[rank - 1] != xs[rank - 2])
    ctx.Fail("X must be [*, M, M] (square in the last two dims)");
  const int64_t m = xs[rank - 1], row_axis = rank - 2, col_axis = rank - 1;
  const DataType i64 = DataType::Int(64);
  Expr a = ctx.Input(0);
  Expr sign = ctx.ScalarConst(1, dt);
  std::vector<int64_t> iota(m);
  for (int64_t i = 0; i < m; ++i) iota[i] = i;
  Expr rows = graph::ConstantNode::make(FromInts(iota, {m, 1}, i64));
  for (int64_t k = 0; k + 1 < m; ++k) {
    Expr col = SliceAxis(ctx, SliceAxis(ctx, a, col_axis, k, k + 1), row_axis, k, m);  // [*, M-k, 1]
    Expr p = ctx.Call("argmax", {ctx.Call("abs", {col})}, Attrs{{"axis", row_axis}, {"keepdims", int64_t{1}}});
    Expr kc = ctx.ScalarConst(static_cast<double>(k), i64);
    Expr pk = ctx.Call("add", {p, kc});  // [*, 1, 1]
    Expr idx = ctx.Call("where", {ctx.Call("equal", {rows, kc}), pk,
                                  ctx.Call("where", {ctx.Call("equal", {rows, pk}), kc, rows})});  // [*, M, 1]
    idx = ctx.Call("broadcast_to", {idx}, Attrs{{"shape", xs}});
    a = ctx.Call("gather_elements", {a, idx}, Attrs{{"axis", row_axis}});
    sign = ctx.Call("multiply", {sign, ctx.Call("where", {ctx.Call("equal", {p, ctx.ScalarConst(0, i64)}),
                                                          ctx.ScalarConst(1, dt), ctx.ScalarConst(-1, dt)})});
    Expr pivot = SliceAxis(ctx, SliceAxis(ctx, a, col_axis, k, k + 1), row_axis, k, k + 1);  // [*, 1, 1]
    Expr zero = ctx.ScalarConst(0, dt);
    Expr safe = ctx.Call("where", {ctx.Call("equal", {pivot, zero}), ctx.ScalarConst(1, dt), pivot});
    std::vector<double> below(m);
    for (int64_t i = 0; i < m; ++i) below[i] = i > k ? 1.0 : 0.0;
    Expr mask = graph::ConstantNode::make(FromDoubles(below, {m, 1}, dt));
    Expr factor = ctx.Call("divide", {ctx.Call("multiply", {SliceAxis(ctx, a, col_axis, k, k + 1), mask}), safe});
    a = ctx.Call("subtract", {a, ctx.Call("multiply", {factor, SliceAxis(ctx, a, row_axis, k, k + 1)})});
  }
  std::vector<double> eye(static_cast<size_t>(m * m), 0.0);
  for (int64_t i = 0; i < m; ++i) eye[i * m + i] = 1.0;
  Expr diag = ctx.Call("sum", {ctx.Call("multiply", {a, graph::ConstantNode::make(FromDoubles(eye, {m, m}, dt))})},
                       Attrs{{"axis", std::vector<int64_t>{col_axis}}, {"keepdims", int64_t{0}}});  // [*, M]
  Expr det = ctx.Call("prod", {diag}, Attrs{{"axis", std::vector<int64_t>{row_axis}}, {"keepdims", int64_t{0}}});
  if (m > 1) det = ctx.Call("multiply", {det, Reshape(ctx, sign, std::vector<int64_t>(xs.begin(), xs.end() - 2))});
  ctx.SetOutput(0, det);
}

}  // namespace

void RegisterDetConverters(ConverterTable& t) { t["Det"] = ConvertDet; }

}  // namespace tessera::frontend::onnx_import
