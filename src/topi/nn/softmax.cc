#include "tessera/topi/nn/softmax.h"

#include "tessera/support/error.h"
#include "tessera/topi/tags.h"

namespace tessera::topi {

Tensor softmax(const Tensor& x, int64_t axis_in) {
  TESSERA_CHECK(x.dtype().is_float(), "softmax needs a float tensor, got ", x.dtype().str());
  std::vector<int64_t> xs = ConstShape(x);
  const int nd = static_cast<int>(xs.size());
  const int axis = NormalizeAxis(axis_in, nd, "softmax");
  std::vector<int64_t> reduced;
  for (int d = 0; d < nd; ++d)
    if (d != axis) reduced.push_back(xs[d]);
  // Index of a full-rank point with the axis replaced by `a`; and the reduced-rank point.
  auto with_axis = [&](const std::vector<Var>& r, PrimExpr a) {
    std::vector<PrimExpr> idx(r.begin(), r.end());
    idx.insert(idx.begin() + axis, a);
    return idx;
  };
  auto drop_axis = [&](const std::vector<Var>& i) {
    std::vector<PrimExpr> idx(i.begin(), i.end());
    idx.erase(idx.begin() + axis);
    return idx;
  };
  te::IterVar k1 = te::reduce_axis(Range(Index(0), Index(xs[axis])), "k");
  Tensor m = te::compute(
      MakeShape(reduced), [&](const std::vector<Var>& r) { return te::max(x(with_axis(r, k1.var)), {k1}); },
      "T_softmax_maxelem", tag::kSoftmax);
  Tensor e = te::compute(
      x.shape(), [&](const std::vector<Var>& i) { return ir::exp(x(AsExprs(i)) - m(drop_axis(i))); },
      "T_softmax_exp", tag::kElemWise);
  te::IterVar k2 = te::reduce_axis(Range(Index(0), Index(xs[axis])), "k");
  Tensor s = te::compute(
      MakeShape(reduced), [&](const std::vector<Var>& r) { return te::sum(e(with_axis(r, k2.var)), {k2}); },
      "T_softmax_expsum", tag::kSoftmax);
  return te::compute(
      x.shape(), [&](const std::vector<Var>& i) { return e(AsExprs(i)) / s(drop_axis(i)); }, "T_softmax_norm",
      tag::kSoftmax);
}

}  // namespace tessera::topi
