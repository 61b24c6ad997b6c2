#include "tessera/topi/nonzero.h"

#include "tessera/ir/expr.h"
#include "tessera/topi/tags.h"

namespace tessera::topi {

namespace {

// x's extents, a scalar read as one element.
std::vector<PrimExpr> Extents(const Tensor& x) {
  return x.shape().empty() ? std::vector<PrimExpr>{Index(1)} : x.shape();
}

// x at row-major position p of its (possibly symbolic) extents.
PrimExpr ReadFlat(const Tensor& x, PrimExpr p) {
  std::vector<PrimExpr> idx(x.shape().size());
  for (size_t d = idx.size(); d-- > 0;) {
    if (d == 0) {
      idx[d] = p;
    } else {
      idx[d] = ir::floormod(p, x.shape()[d]);
      p = ir::floordiv(p, x.shape()[d]);
    }
  }
  return x(idx);
}

PrimExpr IsNonZero(const PrimExpr& v) { return v != ir::make_zero(v.dtype()); }

// The largest power of two not above n (n >= 1); 2^30 for a symbolic n (n < 2^31).
int64_t TopStep(const PrimExpr& n) {
  int64_t v = 0;
  if (!ir::as_const_int(n, &v)) return int64_t{1} << 30;
  int64_t s = 1;
  while (s * 2 <= v) s *= 2;
  return s;
}

}  // namespace

Tensor nonzero_count(const Tensor& x) {
  const std::vector<PrimExpr> ext = Extents(x);
  std::vector<te::IterVar> axes;
  for (size_t d = 0; d < ext.size(); ++d)
    axes.push_back(te::reduce_axis(Range(Index(0), ext[d]), "k" + std::to_string(d)));
  return te::compute(
      {Index(1)},
      [&](const std::vector<Var>&) {
        std::vector<PrimExpr> idx;
        if (!x.shape().empty())
          for (const auto& a : axes) idx.push_back(a.var);
        return te::sum(ir::cast(DataType::Int(64), IsNonZero(x(idx))), axes);
      },
      "T_nonzero_count", tag::kCommReduce);
}

Tensor nonzero_positions(const Tensor& x, const PrimExpr& count) {
  const PrimExpr n = ExtentProduct(Extents(x));
  // c[p] = #{q <= p : x[q] != 0}, in order along p.
  Tensor c = te::scan(
      {n}, DataType::Int(32), 0,
      [&](const std::vector<Var>& i, const Tensor& self) {
        const PrimExpr p = i[0];
        const PrimExpr here = ir::cast(DataType::Int(32), IsNonZero(ReadFlat(x, p)));
        return here + ir::select(p > Index(0), self({ir::max(p - Index(1), Index(0))}), Index(0));
      },
      "T_nonzero_prefix", tag::kScan);
  // Position of element j: #{p : c[p] <= j}, by binary search (lo counts the positions known to be
  // <= j; each step tests the next `s` of them at once). int64: lo + s may pass 2^31 - 1.
  const DataType i64 = DataType::Int(64);
  const int64_t top = TopStep(n);
  return te::compute(
      {count},
      [&](const std::vector<Var>& j) {
        const PrimExpr n64 = ir::cast(i64, n);
        std::vector<std::pair<Var, PrimExpr>> steps;
        PrimExpr lo = ir::make_const(i64, 0);
        for (int64_t s = top; s >= 1; s /= 2) {
          const PrimExpr next = lo + ir::make_const(i64, s);
          const PrimExpr at = ir::cast(DataType::Int(32), ir::min(next, n64) - ir::make_const(i64, 1));
          const PrimExpr take = next <= n64 && c({at}) <= PrimExpr(j[0]);
          Var v("lo" + std::to_string(steps.size()), i64);
          steps.emplace_back(v, ir::select(take, next, lo));
          lo = v;
        }
        PrimExpr body = ir::cast(DataType::Int(32), ir::min(lo, n64 - ir::make_const(i64, 1)));
        for (size_t k = steps.size(); k-- > 0;) body = ir::LetNode::make(steps[k].first, steps[k].second, body);
        return body;
      },
      "T_nonzero_positions", tag::kInjective);
}

Tensor nonzero(const Tensor& x, const PrimExpr& count) {
  Tensor pos = nonzero_positions(x, count);
  const std::vector<PrimExpr> ext = Extents(x);
  const int rank = static_cast<int>(ext.size());
  return te::compute(
      {Index(rank), count},
      [&](const std::vector<Var>& i) {
        // Coordinate d of the flat position: (p / stride_d) mod extent_d.
        PrimExpr p = pos({i[1]});
        PrimExpr coord = ir::make_zero(DataType::Int(32));
        PrimExpr stride = Index(1);
        for (int d = rank; d-- > 0;) {
          coord = ir::select(PrimExpr(i[0]) == Index(d), ir::floormod(ir::floordiv(p, stride), ext[d]), coord);
          stride = stride * ext[d];
        }
        return ir::cast(DataType::Int(64), coord);
      },
      "T_nonzero", tag::kInjective);
}

}  // namespace tessera::topi
