#include "tessera/topi/nn/softmax.h"

#include "tessera/support/error.h"
#include "tessera/topi/tags.h"

namespace tessera::topi {
namespace {

/// The pieces softmax and log_softmax share: the reduced shape without `axis`, index
/// helpers, and the stable max along the axis.
class AxisReduction {
 public:
  AxisReduction(const Tensor& x, int64_t axis_in, const char* op) : x_(x) {
    TESSERA_CHECK(x.dtype().is_float(), op, " needs a float tensor, got ", x.dtype().str());
    shape_ = x.shape();
    const int nd = static_cast<int>(shape_.size());
    axis_ = NormalizeAxis(axis_in, nd, op);
    for (int d = 0; d < nd; ++d)
      if (d != axis_) reduced_.push_back(shape_[d]);
  }

  /// A full-rank index from a reduced-rank point with the axis set to `a`.
  std::vector<PrimExpr> WithAxis(const std::vector<Var>& r, PrimExpr a) const {
    std::vector<PrimExpr> idx(r.begin(), r.end());
    idx.insert(idx.begin() + axis_, a);
    return idx;
  }
  /// The reduced-rank index of a full-rank point.
  std::vector<PrimExpr> DropAxis(const std::vector<Var>& i) const {
    std::vector<PrimExpr> idx(i.begin(), i.end());
    idx.erase(idx.begin() + axis_);
    return idx;
  }
  te::IterVar ReduceAxis() const { return te::reduce_axis(Range(Index(0), shape_[axis_]), "k"); }
  std::vector<PrimExpr> ReducedShape() const { return reduced_; }

  /// max over the axis, the shift that keeps exp from overflowing.
  Tensor Max(const std::string& name) const {
    te::IterVar k = ReduceAxis();
    return te::compute(
        ReducedShape(), [&](const std::vector<Var>& r) { return te::max(x_(WithAxis(r, k.var)), {k}); }, name,
        tag::kSoftmax);
  }

 private:
  const Tensor& x_;
  std::vector<PrimExpr> shape_;
  std::vector<PrimExpr> reduced_;
  int axis_ = 0;
};

}  // namespace

Tensor softmax(const Tensor& x, int64_t axis) {
  AxisReduction ax(x, axis, "softmax");
  Tensor m = ax.Max("T_softmax_maxelem");
  Tensor e = te::compute(
      x.shape(), [&](const std::vector<Var>& i) { return ir::exp(x(AsExprs(i)) - m(ax.DropAxis(i))); },
      "T_softmax_exp", tag::kElemWise);
  te::IterVar k = ax.ReduceAxis();
  Tensor s = te::compute(
      ax.ReducedShape(), [&](const std::vector<Var>& r) { return te::sum(e(ax.WithAxis(r, k.var)), {k}); },
      "T_softmax_expsum", tag::kSoftmax);
  return te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        // One division per row: e * (1 / s) (the reciprocal is invariant along the row).
        return e(AsExprs(i)) * (ir::make_const(x.dtype(), 1.0) / s(ax.DropAxis(i)));
      },
      "T_softmax_norm",
      tag::kSoftmax);
}

Tensor log_softmax(const Tensor& x, int64_t axis) {
  AxisReduction ax(x, axis, "log_softmax");
  Tensor m = ax.Max("T_log_softmax_maxelem");
  te::IterVar k = ax.ReduceAxis();
  Tensor s = te::compute(
      ax.ReducedShape(),
      [&](const std::vector<Var>& r) { return te::sum(ir::exp(x(ax.WithAxis(r, k.var)) - m(AsExprs(r))), {k}); },
      "T_log_softmax_expsum", tag::kSoftmax);
  return te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) { return x(AsExprs(i)) - m(ax.DropAxis(i)) - ir::log(s(ax.DropAxis(i))); },
      "T_log_softmax_norm", tag::kSoftmax);
}

}  // namespace tessera::topi
