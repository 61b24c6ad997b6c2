#include "tessera/topi/nn/attention.h"

#include "tessera/support/error.h"
#include "tessera/topi/tags.h"

namespace tessera::topi {

namespace {

// The index of `v`'s batch dims and its last two.
std::vector<PrimExpr> Index3(const std::vector<Var>& batch, PrimExpr a, PrimExpr b) {
  std::vector<PrimExpr> idx(batch.begin(), batch.end());
  idx.push_back(std::move(a));
  idx.push_back(std::move(b));
  return idx;
}

}  // namespace

Tensor attention(const Tensor& q, const Tensor& k_t, const Tensor& v, const std::optional<Tensor>& bias,
                 double scale) {
  const std::vector<int64_t> qs = ConstShape(q), ks = ConstShape(k_t), vs = ConstShape(v);
  TESSERA_CHECK(q.dtype().is_float() && q.dtype().bits() >= 32,
                   "attention: q must be float32 or float64, got ", q.dtype().str());
  TESSERA_CHECK(k_t.dtype() == q.dtype() && v.dtype() == q.dtype() && (!bias || bias->dtype() == q.dtype()),
                   "attention: q, k_t, v and bias must share one dtype");
  TESSERA_CHECK(qs.size() >= 2 && ks.size() == qs.size() && vs.size() == qs.size(),
                   "attention: q, k_t and v must have one rank >= 2, got ", ShapeString(qs), ", ", ShapeString(ks),
                   ", ", ShapeString(vs));
  const size_t nb = qs.size() - 2;
  for (size_t d = 0; d < nb; ++d)
    TESSERA_CHECK(ks[d] == qs[d] && vs[d] == qs[d], "attention: batch dims differ: ", ShapeString(qs),
                     ", ", ShapeString(ks), ", ", ShapeString(vs));
  const int64_t m = qs[nb], dk = qs[nb + 1], n = ks[nb + 1], dv = vs[nb + 1];
  TESSERA_CHECK(ks[nb] == dk, "attention: q [.., M, D] and k_t [.., D, N] differ in D: ",
                   ShapeString(qs), ", ", ShapeString(ks));
  TESSERA_CHECK(vs[nb] == n, "attention: k_t [.., D, N] and v [.., N, Dv] differ in N: ",
                   ShapeString(ks), ", ", ShapeString(vs));
  std::vector<int64_t> score_shape(qs.begin(), qs.end() - 2);
  std::vector<int64_t> row_shape = score_shape;
  score_shape.push_back(m);
  score_shape.push_back(n);
  row_shape.push_back(m);
  std::vector<int64_t> bs;
  if (bias) {
    bs = ConstShape(*bias);
    bool ok = bs.size() <= score_shape.size();
    for (size_t d = 0; ok && d < bs.size(); ++d) {
      const int64_t want = score_shape[score_shape.size() - bs.size() + d];
      ok = bs[d] == 1 || bs[d] == want;
    }
    TESSERA_CHECK(ok, "attention: bias ", ShapeString(bs), " does not broadcast to the scores ",
                     ShapeString(score_shape));
  }
  const DataType t = q.dtype();
  const size_t rank = score_shape.size();
  auto split = [&](const std::vector<Var>& i, size_t keep) {
    return std::vector<Var>(i.begin(), i.begin() + static_cast<long>(keep));
  };

  te::IterVar k = te::reduce_axis(Range(Index(0), Index(dk)), "k");
  Tensor score = te::compute(
      MakeShape(score_shape),
      [&](const std::vector<Var>& i) {
        const std::vector<Var> b = split(i, nb);
        return te::sum(q(Index3(b, i[nb], k.var)) * k_t(Index3(b, k.var, i[nb + 1])), {k});
      },
      kAttentionScore, tag::kDense);
  Tensor logit = te::compute(
      MakeShape(score_shape),
      [&](const std::vector<Var>& i) {
        PrimExpr x = score(AsExprs(i));
        if (scale != 1.0) x = x * ir::make_const(t, scale);
        if (!bias) return x;
        std::vector<PrimExpr> bi;
        for (size_t d = 0; d < bs.size(); ++d) bi.push_back(bs[d] == 1 ? Index(0) : PrimExpr(i[rank - bs.size() + d]));
        return x + (*bias)(bi);
      },
      kAttentionLogit, tag::kBroadcast);
  // A reduction of x [B.., M, N] over its keys j: [B.., M].
  auto along_keys = [&](const Tensor& x, bool take_max, const char* name) {
    te::IterVar j = te::reduce_axis(Range(Index(0), Index(n)), "j");
    return te::compute(
        MakeShape(row_shape),
        [&](const std::vector<Var>& r) {
          std::vector<PrimExpr> idx = AsExprs(r);
          idx.push_back(j.var);
          return take_max ? te::max(x(idx), {j}) : te::sum(x(idx), {j});
        },
        name, tag::kSoftmax);
  };
  Tensor mx = along_keys(logit, true, kAttentionMax);
  Tensor e = te::compute(
      MakeShape(score_shape),
      [&](const std::vector<Var>& i) {
        return ir::exp(logit(AsExprs(i)) - mx(AsExprs(split(i, nb + 1))));
      },
      kAttentionExp, tag::kElemWise);
  Tensor sum = along_keys(e, false, kAttentionSum);
  std::vector<int64_t> out_shape(qs.begin(), qs.end() - 1);
  out_shape.push_back(dv);
  te::IterVar j3 = te::reduce_axis(Range(Index(0), Index(n)), "j");
  Tensor pv = te::compute(
      MakeShape(out_shape),
      [&](const std::vector<Var>& i) {
        const std::vector<Var> b = split(i, nb);
        return te::sum(e(Index3(b, i[nb], j3.var)) * v(Index3(b, j3.var, i[nb + 1])), {j3});
      },
      kAttentionPV, tag::kDense);
  return te::compute(
      MakeShape(out_shape),
      [&](const std::vector<Var>& i) { return pv(AsExprs(i)) / sum(AsExprs(split(i, nb + 1))); }, kAttentionOut,
      tag::kSoftmax);
}

}  // namespace tessera::topi
