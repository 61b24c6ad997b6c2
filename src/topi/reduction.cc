#include "tessera/topi/reduction.h"

#include <algorithm>
#include <functional>

#include "tessera/support/error.h"
#include "tessera/topi/tags.h"

namespace tessera::topi {

namespace {

using Reducer = std::function<PrimExpr(PrimExpr, std::vector<te::IterVar>)>;

// The reduced-dim mask and the output shape of reducing x over axes.
std::vector<bool> ReducedMask(const std::vector<PrimExpr>& in, const std::vector<int64_t>& axes, const char* op) {
  int nd = static_cast<int>(in.size());
  std::vector<bool> red(nd, axes.empty());
  for (int64_t a : axes) red[NormalizeAxis(a, nd, op)] = true;
  return red;
}

Tensor Reduce(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims, const Reducer& reducer,
              const char* op, const std::string& name) {
  const std::vector<PrimExpr>& in = x.shape();
  int nd = static_cast<int>(in.size());
  std::vector<bool> red = ReducedMask(in, axes, op);
  std::vector<PrimExpr> out;
  for (int d = 0; d < nd; ++d) {
    if (!red[d]) out.push_back(in[d]);
    else if (keepdims) out.push_back(Index(1));
  }
  return te::compute(
      out,
      [&](const std::vector<Var>& i) {
        std::vector<te::IterVar> rv;
        std::vector<PrimExpr> idx;
        size_t k = 0;
        for (int d = 0; d < nd; ++d) {
          if (red[d]) {
            rv.push_back(te::reduce_axis(Range(Index(0), in[d]), "k" + std::to_string(d)));
            idx.push_back(rv.back().var);
            if (keepdims) ++k;
          } else {
            idx.push_back(i[k++]);
          }
        }
        return reducer(x(idx), rv);
      },
      name, tag::kCommReduce);
}

}  // namespace

Tensor sum(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims) {
  return Reduce(x, axes, keepdims, [](PrimExpr v, std::vector<te::IterVar> r) { return te::sum(v, r); }, "sum",
                "T_sum");
}

Tensor mean(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims) {
  TESSERA_CHECK(x.dtype().is_float(), "mean needs a float tensor, got ", x.dtype().str());
  const std::vector<PrimExpr>& in = x.shape();
  std::vector<bool> red = ReducedMask(in, axes, "mean");
  std::vector<PrimExpr> reduced;
  for (size_t d = 0; d < in.size(); ++d)
    if (red[d]) reduced.push_back(in[d]);
  Tensor s = sum(x, axes, keepdims);
  // The element count, a constant unless a reduced extent is a shape var.
  const PrimExpr count = ExtentProduct(reduced);
  int64_t static_count = 0;
  PrimExpr n = ir::as_const_int(count, &static_count) ? ir::make_const(x.dtype(), static_cast<double>(static_count))
                                                      : ir::cast(x.dtype(), count);
  return te::compute(
      s.shape(), [&](const std::vector<Var>& i) { return s(AsExprs(i)) / n; }, "T_mean", tag::kElemWise);
}

Tensor max(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims) {
  return Reduce(x, axes, keepdims, [](PrimExpr v, std::vector<te::IterVar> r) { return te::max(v, r); }, "max",
                "T_max");
}

Tensor min(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims) {
  return Reduce(x, axes, keepdims, [](PrimExpr v, std::vector<te::IterVar> r) { return te::min(v, r); }, "min",
                "T_min");
}

Tensor prod(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims) {
  return Reduce(x, axes, keepdims, [](PrimExpr v, std::vector<te::IterVar> r) { return te::prod(v, r); }, "prod",
                "T_prod");
}

namespace {

// ONNX CumSum / CumProd as a scan along the axis (te::scan): O(n) per row, accumulated in
// order (position t of the scan is element t, or n - 1 - t when reversed); an exclusive scan
// starts from the identity and adds the previous element.
Tensor Cumulative(const Tensor& x, int64_t axis_in, bool exclusive, bool reverse, bool product) {
  const std::vector<PrimExpr>& xs = x.shape();
  const char* op = product ? "cumprod" : "cumsum";
  const int axis = NormalizeAxis(axis_in, static_cast<int>(xs.size()), op);
  const PrimExpr n = xs[axis];
  const PrimExpr identity = product ? ir::make_const(x.dtype(), 1.0) : ir::make_zero(x.dtype());
  auto combine = [&](PrimExpr a, PrimExpr b) { return product ? a * b : a + b; };
  auto source = [&](const std::vector<Var>& i, PrimExpr t) {  // x at scan position t (t in [0, n))
    std::vector<PrimExpr> idx = AsExprs(i);
    idx[axis] = reverse ? n - 1 - t : t;
    return x(idx);
  };
  Tensor s = te::scan(
      x.shape(), x.dtype(), axis,
      [&](const std::vector<Var>& i, const Tensor& self) {
        const PrimExpr t = i[axis];
        std::vector<PrimExpr> prev = AsExprs(i);
        prev[axis] = ir::max(t - 1, Index(0));
        const PrimExpr before = ir::select(t > Index(0), self(prev), identity);
        if (!exclusive) return combine(before, source(i, t));
        return ir::select(t > Index(0), combine(before, source(i, ir::max(t - 1, Index(0)))), identity);
      },
      product ? "T_cumprod" : "T_cumsum", tag::kScan);
  if (!reverse) return s;
  return te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx = AsExprs(i);
        idx[axis] = n - 1 - i[axis];
        return s(idx);
      },
      product ? "T_cumprod_reverse" : "T_cumsum_reverse", tag::kInjective);
}

}  // namespace

Tensor cumsum(const Tensor& x, int64_t axis, bool exclusive, bool reverse) {
  return Cumulative(x, axis, exclusive, reverse, false);
}

Tensor cumprod(const Tensor& x, int64_t axis, bool exclusive, bool reverse) {
  return Cumulative(x, axis, exclusive, reverse, true);
}

}  // namespace tessera::topi
