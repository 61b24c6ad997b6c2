#include "tessera/topi/unique.h"

#include "tessera/support/error.h"
#include "tessera/topi/tags.h"

namespace tessera::topi {

namespace {

const DataType kI64 = DataType::Int(64);

// numpy.unique's order of elements: NaNs equal to each other and after every number.
PrimExpr IsNaN(const PrimExpr& v) { return v != v; }
PrimExpr Equal(const PrimExpr& a, const PrimExpr& b) {
  return a.dtype().is_floating() ? (a == b || (IsNaN(a) && IsNaN(b))) : a == b;
}
PrimExpr Less(const PrimExpr& a, const PrimExpr& b) {
  return a.dtype().is_floating() ? (a < b || (!IsNaN(a) && IsNaN(b))) : a < b;
}

// x viewed as n slices of m elements: slice i, element p (row-major over the other dims).
struct Slices {
  const Tensor* x;
  int axis;  // -1: the flattened elements (m = 1)
  int64_t n, m;
  std::vector<int64_t> shape;

  PrimExpr At(const PrimExpr& i, const PrimExpr& p) const {
    if (axis < 0) return (*x)(Unravel(i, shape));
    std::vector<int64_t> rest;
    for (size_t d = 0; d < shape.size(); ++d)
      if (static_cast<int>(d) != axis) rest.push_back(shape[d]);
    std::vector<PrimExpr> idx = Unravel(p, rest);
    idx.insert(idx.begin() + axis, i);
    return (*x)(idx);
  }
};

}  // namespace

Tensor unique_inverse(const Tensor& x, std::optional<int64_t> axis_in, bool sorted) {
  const std::vector<int64_t> xs = ConstShape(x);
  Slices sl{&x, -1, Product(xs), 1, xs};
  if (axis_in) {
    sl.axis = NormalizeAxis(*axis_in, static_cast<int>(xs.size()), "unique");
    sl.n = xs[sl.axis];
    sl.m = Product(xs) / std::max<int64_t>(sl.n, 1);
    if (sl.n == 0) sl.m = 1;
  }
  const int64_t n = sl.n, m = sl.m;
  const PrimExpr none = Index(n);
  auto reduce_k = [&](const char* name) { return te::reduce_axis(Range(Index(0), Index(std::max<int64_t>(n, 1))), name); };

  // Equality and order of slices i and k. Slices of several elements compare at their first
  // difference (a pairwise table, fd[i, k] = m when equal); an empty slice equals every other.
  std::function<PrimExpr(PrimExpr, PrimExpr)> eq, lt;
  if (sl.axis < 0 || m == 1) {
    eq = [&](PrimExpr i, PrimExpr k) { return Equal(sl.At(i, Index(0)), sl.At(k, Index(0))); };
    lt = [&](PrimExpr i, PrimExpr k) { return Less(sl.At(i, Index(0)), sl.At(k, Index(0))); };
  } else if (m == 0) {
    eq = [](PrimExpr, PrimExpr) { return ir::make_const(DataType::Bool(), 1); };
    lt = [](PrimExpr, PrimExpr) { return ir::make_const(DataType::Bool(), 0); };
  } else {
    te::IterVar p = te::reduce_axis(Range(Index(0), Index(m)), "p");
    Tensor fd = te::compute(
        MakeShape({n, n}),
        [&](const std::vector<Var>& ik) {
          return te::min(ir::select(Equal(sl.At(ik[0], p.var), sl.At(ik[1], p.var)), Index(m), PrimExpr(p.var)), {p});
        },
        "T_unique_first_difference", tag::kCommReduce);
    eq = [fd, m](PrimExpr i, PrimExpr k) { return fd({i, k}) == Index(m); };
    lt = [fd, m, &sl](PrimExpr i, PrimExpr k) {
      const PrimExpr at = ir::min(fd({i, k}), Index(m - 1));
      return fd({i, k}) < Index(m) && Less(sl.At(i, at), sl.At(k, at));
    };
  }
  // fo[i]: the first slice equal to slice i (i itself when it is the first).
  te::IterVar k1 = reduce_k("k");
  Tensor fo = te::compute(
      MakeShape({n}),
      [&](const std::vector<Var>& i) {
        const PrimExpr k = k1.var;
        return te::min(ir::select(k == PrimExpr(i[0]) || eq(k, i[0]), k, none), {k1});
      },
      "T_unique_first", tag::kCommReduce);
  // The position of slice i's value: the first occurrences that sort before it (sorted), or that
  // occur before its first occurrence.
  te::IterVar k2 = reduce_k("k");
  return te::compute(
      MakeShape({n}),
      [&](const std::vector<Var>& i) {
        const PrimExpr k = k2.var;
        const PrimExpr first_k = fo({k}) == k;
        const PrimExpr before = sorted ? lt(k, i[0]) : k < fo({i[0]});
        return te::sum(ir::select(first_k && before, ir::make_const(kI64, 1), ir::make_const(kI64, 0)), {k2});
      },
      "T_unique_inverse", tag::kCommReduce);
}

Tensor unique_select(const Tensor& inverse, const PrimExpr& count, const std::string& kind) {
  TESSERA_CHECK(kind == "first" || kind == "counts", "unique_select: kind must be first or counts, got '", kind, "'");
  TESSERA_CHECK(inverse.shape().size() == 1 && inverse.dtype() == kI64, "unique_select: the inverse must be int64 [n]");
  const PrimExpr n = inverse.shape()[0];
  te::IterVar k = te::reduce_axis(Range(Index(0), n), "k");
  return te::compute(
      {count},
      [&](const std::vector<Var>& j) {
        const PrimExpr hit = inverse({k.var}) == ir::cast(kI64, j[0]);
        if (kind == "counts") return te::sum(ir::select(hit, ir::make_const(kI64, 1), ir::make_const(kI64, 0)), {k});
        return te::min(ir::select(hit, ir::cast(kI64, k.var), ir::cast(kI64, n)), {k});
      },
      kind == "first" ? "T_unique_indices" : "T_unique_counts", tag::kCommReduce);
}

}  // namespace tessera::topi
