#include "tessera/topi/nn/dense.h"

#include "tessera/support/error.h"
#include "tessera/topi/broadcast.h"
#include "tessera/topi/tags.h"

namespace tessera::topi {

Tensor dense(const Tensor& x, const Tensor& w) {
  const std::vector<PrimExpr>& xs = x.shape();
  const std::vector<PrimExpr>& ws = w.shape();
  TESSERA_CHECK(!xs.empty() && ws.size() == 2, "dense: need x of rank >= 1 and a 2-D weight [N, K]");
  TESSERA_CHECK(SameExtent(xs.back(), ws[1]), "dense: reduction extents differ (", ShapeString(xs), " vs ",
                ShapeString(ws), ")");
  TESSERA_CHECK(x.dtype() == w.dtype(), "dense: dtypes differ");
  std::vector<PrimExpr> out = xs;
  out.back() = ws[0];
  te::IterVar k = te::reduce_axis(Range(Index(0), ws[1]), "k");
  return te::compute(
      out,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> xi = AsExprs(i);
        xi.back() = k.var;
        return te::sum(x(xi) * w({PrimExpr(i.back()), k.var}), {k});
      },
      "T_dense", tag::kDense);
}

namespace {
// Reads the batch dims of t (its dims before the last two) at the output batch index `b`
// (right-aligned, extent-1 dims broadcast).
std::vector<PrimExpr> BatchIndex(const std::vector<PrimExpr>& ts, const std::vector<Var>& i, size_t nb) {
  std::vector<PrimExpr> idx;
  size_t tb = ts.size() - 2;
  for (size_t d = 0; d < tb; ++d) idx.push_back(IsConst(ts[d], 1) ? Index(0) : PrimExpr(i[nb - tb + d]));
  return idx;
}
}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  const std::vector<PrimExpr>& sa = a.shape();
  const std::vector<PrimExpr>& sb = b.shape();
  TESSERA_CHECK(!sa.empty() && !sb.empty(), "matmul: operands must have rank >= 1");
  TESSERA_CHECK(a.dtype() == b.dtype(), "matmul: dtypes differ");
  const bool a_vec = sa.size() == 1, b_vec = sb.size() == 1;
  std::vector<PrimExpr> pa = sa, pb = sb;
  if (a_vec) pa.insert(pa.begin(), Index(1));
  if (b_vec) pb.push_back(Index(1));
  const PrimExpr kext = pa.back();
  TESSERA_CHECK(SameExtent(kext, pb[pb.size() - 2]), "matmul: reduction extents differ (", ShapeString(sa), " x ",
                ShapeString(sb), ")");
  std::vector<PrimExpr> batch = BroadcastExtents(std::vector<PrimExpr>(pa.begin(), pa.end() - 2),
                                                 std::vector<PrimExpr>(pb.begin(), pb.end() - 2));
  const size_t nb = batch.size();
  std::vector<PrimExpr> out = batch;
  if (!a_vec) out.push_back(pa[pa.size() - 2]);
  if (!b_vec) out.push_back(pb.back());
  te::IterVar k = te::reduce_axis(Range(Index(0), kext), "k");
  return te::compute(
      out,
      [&](const std::vector<Var>& i) {
        PrimExpr m = a_vec ? Index(0) : PrimExpr(i[nb]);
        PrimExpr nn = b_vec ? Index(0) : PrimExpr(i.back());
        std::vector<PrimExpr> ai = BatchIndex(pa, i, nb), bi = BatchIndex(pb, i, nb);
        if (!a_vec) ai.push_back(m);
        ai.push_back(k.var);
        bi.push_back(k.var);
        if (!b_vec) bi.push_back(nn);
        return te::sum(a(ai) * b(bi), {k});
      },
      "T_matmul", tag::kDense);
}

Tensor batch_matmul(const Tensor& x, const Tensor& y, bool transpose_a, bool transpose_b) {
  const std::vector<PrimExpr>& xs = x.shape();
  const std::vector<PrimExpr>& ys = y.shape();
  TESSERA_CHECK(xs.size() == 3 && ys.size() == 3, "batch_matmul: operands must be 3-D");
  TESSERA_CHECK(x.dtype() == y.dtype(), "batch_matmul: dtypes differ");
  const PrimExpr m = transpose_a ? xs[2] : xs[1], kx = transpose_a ? xs[1] : xs[2];
  const PrimExpr n = transpose_b ? ys[1] : ys[2], ky = transpose_b ? ys[2] : ys[1];
  TESSERA_CHECK(SameExtent(kx, ky), "batch_matmul: reduction extents differ (", ShapeString(xs), " x ",
                ShapeString(ys), ")");
  const PrimExpr b = BroadcastExtents({xs[0]}, {ys[0]})[0];
  const bool bx1 = IsConst(xs[0], 1), by1 = IsConst(ys[0], 1);
  te::IterVar k = te::reduce_axis(Range(Index(0), kx), "k");
  return te::compute(
      {b, m, n},
      [&](const std::vector<Var>& i) {
        PrimExpr bx = bx1 ? Index(0) : PrimExpr(i[0]);
        PrimExpr by = by1 ? Index(0) : PrimExpr(i[0]);
        PrimExpr xv = transpose_a ? x({bx, k.var, i[1]}) : x({bx, i[1], k.var});
        PrimExpr yv = transpose_b ? y({by, i[2], k.var}) : y({by, k.var, i[2]});
        return te::sum(xv * yv, {k});
      },
      "T_batch_matmul", tag::kDense);
}

}  // namespace tessera::topi
