#include "tessera/topi/gather_scatter.h"

#include <algorithm>
#include <functional>

#include "tessera/support/error.h"
#include "tessera/topi/tags.h"

namespace tessera::topi {

namespace {

// An index value read from `indices` as int64, negative values counted from the end of an
// axis of extent n; outside [-n, n) the kernel fails (ir::checked_index).
PrimExpr Normalized(PrimExpr v, int64_t n) { return ir::checked_index(std::move(v), n); }

PrimExpr AsInt64(const PrimExpr& v) { return ir::cast(DataType::Int(64), v); }

Tensor Copy(const Tensor& data, const std::string& name) {
  return te::compute(data.shape(), [&](const std::vector<Var>& o) { return data(AsExprs(o)); }, name, tag::kInjective);
}

void CheckIndices(const Tensor& indices, const char* op) {
  TESSERA_CHECK(indices.dtype().is_int(), op, ": indices must be int32 or int64, got ", indices.dtype().str());
}

void CheckReduction(const std::string& reduction, DataType dt, const char* op) {
  TESSERA_CHECK(reduction == "none" || reduction == "add" || reduction == "mul" || reduction == "max" ||
                    reduction == "min",
                op, ": unknown reduction '", reduction, "' (none, add, mul, max, min)");
  TESSERA_CHECK(reduction == "none" || !dt.is_bool(), op, ": reduction '", reduction, "' of a bool tensor");
}

// The scatter of one output element: `match(r)` says whether the update at reduction point r
// is aimed at it, `update(r)` is that update; `rank(r)` orders the points (the last one wins
// for reduction "none"); `at(last)` reads the update of the winning rank.
struct ScatterSearch {
  std::vector<te::IterVar> axes;                      ///< the reduction axes over the updates
  std::function<PrimExpr(const std::vector<Var>&)> match, update, rank;
  std::function<PrimExpr(const std::vector<Var>&, PrimExpr)> at;
};

Tensor Scatter(const Tensor& data, const std::string& reduction, const std::string& name,
               const std::function<ScatterSearch(const std::vector<Var>&)>& search_of) {
  const DataType dt = data.dtype();
  if (reduction == "none") {
    // Stage 1: the rank of the last update aimed at each element (-1: none).
    Tensor last = te::compute(
        data.shape(),
        [&](const std::vector<Var>& o) {
          ScatterSearch s = search_of(o);
          PrimExpr none = ir::make_const(DataType::Int(64), int64_t{-1});
          return te::max(ir::select(s.match(o), s.rank(o), none), s.axes);
        },
        name + "_last", tag::kCommReduce);
    return te::compute(
        data.shape(),
        [&](const std::vector<Var>& o) {
          ScatterSearch s = search_of(o);
          PrimExpr l = last(AsExprs(o));
          PrimExpr safe = ir::max(l, ir::make_const(DataType::Int(64), int64_t{0}));
          return ir::select(l >= ir::make_const(DataType::Int(64), int64_t{0}), s.at(o, safe), data(AsExprs(o)));
        },
        name, tag::kInjective);
  }
  PrimExpr identity = reduction == "add"   ? ir::make_zero(dt)
                      : reduction == "mul" ? ir::make_const(dt, 1.0)
                      : reduction == "max" ? ir::min_value(dt)
                                           : ir::max_value(dt);
  Tensor combined = te::compute(
      data.shape(),
      [&](const std::vector<Var>& o) {
        ScatterSearch s = search_of(o);
        PrimExpr v = ir::select(s.match(o), s.update(o), identity);
        if (reduction == "add") return te::sum(v, s.axes);
        if (reduction == "mul") return te::prod(v, s.axes);
        return reduction == "max" ? te::max(v, s.axes) : te::min(v, s.axes);
      },
      name + "_" + reduction, tag::kCommReduce);
  return te::compute(
      data.shape(),
      [&](const std::vector<Var>& o) {
        PrimExpr d = data(AsExprs(o)), c = combined(AsExprs(o));
        if (reduction == "add") return d + c;
        if (reduction == "mul") return d * c;
        return reduction == "max" ? ir::max(d, c) : ir::min(d, c);
      },
      name, tag::kInjective);
}

}  // namespace

Tensor gather_nd(const Tensor& data, const Tensor& indices, int64_t batch_dims) {
  CheckIndices(indices, "gather_nd");
  const std::vector<int64_t> ds = ConstShape(data), is = ConstShape(indices);
  const int64_t r = static_cast<int64_t>(ds.size()), q = static_cast<int64_t>(is.size());
  TESSERA_CHECK(r >= 1 && q >= 1, "gather_nd: data and indices must have rank >= 1");
  const int64_t b = batch_dims, k = is.back();
  TESSERA_CHECK(b >= 0 && b < q && b < r, "gather_nd: batch_dims ", b, " must be smaller than both ranks (", r,
                ", ", q, ")");
  TESSERA_CHECK(k >= 1 && k <= r - b, "gather_nd: indices' last dim ", k, " must be in [1, ", r - b, "]");
  for (int64_t d = 0; d < b; ++d)
    TESSERA_CHECK(ds[d] == is[d], "gather_nd: batch dim ", d, " differs (data ", ds[d], ", indices ", is[d], ")");
  std::vector<int64_t> out(is.begin(), is.end() - 1);
  out.insert(out.end(), ds.begin() + b + k, ds.end());
  return te::compute(
      MakeShape(out),
      [&](const std::vector<Var>& o) {
        std::vector<PrimExpr> src, at(o.begin(), o.begin() + (q - 1));
        for (int64_t d = 0; d < b; ++d) src.push_back(o[d]);
        for (int64_t m = 0; m < k; ++m) {
          std::vector<PrimExpr> ii = at;
          ii.push_back(Index(m));
          const int64_t n = ds[b + m];
          src.push_back(ir::cast(DataType::Int(32), Normalized(indices(ii), n)));
        }
        for (int64_t d = q - 1; d < static_cast<int64_t>(o.size()); ++d) src.push_back(o[d]);
        return data(src);
      },
      "T_gather_nd", tag::kInjective);
}

Tensor scatter_elements(const Tensor& data, const Tensor& indices, const Tensor& updates, int64_t axis_in,
                        const std::string& reduction) {
  CheckIndices(indices, "scatter_elements");
  CheckReduction(reduction, data.dtype(), "scatter_elements");
  const std::vector<int64_t> ds = ConstShape(data), is = ConstShape(indices), us = ConstShape(updates);
  TESSERA_CHECK(is == us, "scatter_elements: updates ", ShapeString(us), " must have the indices' shape ",
                ShapeString(is));
  TESSERA_CHECK(is.size() == ds.size(), "scatter_elements: indices rank ", is.size(), " != data rank ", ds.size());
  TESSERA_CHECK(updates.dtype() == data.dtype(), "scatter_elements: updates dtype ", updates.dtype().str(),
                " != data dtype ", data.dtype().str());
  const int nd = static_cast<int>(ds.size());
  const int axis = NormalizeAxis(axis_in, nd, "scatter_elements");
  for (int d = 0; d < nd; ++d)
    TESSERA_CHECK(d == axis || is[d] <= ds[d], "scatter_elements: indices extent ", is[d], " of axis ", d,
                  " exceeds the data's ", ds[d]);
  if (Product(is) == 0) return Copy(data, "T_scatter_elements");
  auto search_of = [&](const std::vector<Var>&) {
    ScatterSearch s;
    s.axes = {te::reduce_axis(Range(Index(0), Index(is[axis])), "t")};
    const Var t = s.axes[0].var;
    // The update point of output o at t: o's coordinates (clamped into indices' extent, the
    // excess masked by `inside`) with t on the axis.
    auto point = [&, t](const std::vector<Var>& o, PrimExpr tt) {
      std::vector<PrimExpr> p;
      for (int d = 0; d < nd; ++d)
        p.push_back(d == axis ? tt : is[d] == ds[d] ? PrimExpr(o[d]) : ir::min(PrimExpr(o[d]), Index(is[d] - 1)));
      return p;
    };
    s.match = [&, t, point](const std::vector<Var>& o) {
      PrimExpr m = Normalized(indices(point(o, t)), ds[axis]) == AsInt64(o[axis]);
      for (int d = 0; d < nd; ++d)
        if (d != axis && is[d] < ds[d]) m = m && (o[d] < Index(is[d]));
      return m;
    };
    s.update = [&, t, point](const std::vector<Var>& o) { return updates(point(o, t)); };
    s.rank = [t](const std::vector<Var>&) { return AsInt64(t); };
    s.at = [&, point](const std::vector<Var>& o, PrimExpr l) {
      return updates(point(o, ir::cast(DataType::Int(32), l)));
    };
    return s;
  };
  return Scatter(data, reduction, "T_scatter_elements", search_of);
}

Tensor scatter_nd(const Tensor& data, const Tensor& indices, const Tensor& updates, const std::string& reduction) {
  CheckIndices(indices, "scatter_nd");
  CheckReduction(reduction, data.dtype(), "scatter_nd");
  const std::vector<int64_t> ds = ConstShape(data), is = ConstShape(indices), us = ConstShape(updates);
  TESSERA_CHECK(!is.empty() && is.back() >= 1 && is.back() <= static_cast<int64_t>(ds.size()),
                "scatter_nd: indices' last dim must be in [1, ", ds.size(), "], indices ", ShapeString(is));
  const int64_t k = is.back();
  std::vector<int64_t> rows(is.begin(), is.end() - 1), want = rows;
  want.insert(want.end(), ds.begin() + k, ds.end());
  TESSERA_CHECK(us == want, "scatter_nd: updates ", ShapeString(us), " must be indices.shape[:-1] + data.shape[k:] ",
                ShapeString(want));
  TESSERA_CHECK(updates.dtype() == data.dtype(), "scatter_nd: updates dtype ", updates.dtype().str(),
                " != data dtype ", data.dtype().str());
  if (Product(rows) == 0) return Copy(data, "T_scatter_nd");
  const bool no_rows = rows.empty();  // indices [k]: a single update
  if (no_rows) rows = {1};
  auto search_of = [&](const std::vector<Var>&) {
    ScatterSearch s;
    for (size_t d = 0; d < rows.size(); ++d)
      s.axes.push_back(te::reduce_axis(Range(Index(0), Index(rows[d])), "u" + std::to_string(d)));
    std::vector<Var> u;
    for (const te::IterVar& a : s.axes) u.push_back(a.var);
    auto row_index = [no_rows](const std::vector<PrimExpr>& row) {
      return no_rows ? std::vector<PrimExpr>{} : row;
    };
    s.match = [&, u, row_index](const std::vector<Var>& o) {
      PrimExpr m;
      for (int64_t j = 0; j < k; ++j) {
        std::vector<PrimExpr> ii = row_index(AsExprs(u));
        ii.push_back(Index(j));
        PrimExpr e = Normalized(indices(ii), ds[j]) == AsInt64(o[j]);
        m = m.defined() ? (m && e) : e;
      }
      return m;
    };
    auto update_at = [&, row_index](const std::vector<Var>& o, std::vector<PrimExpr> row) {
      std::vector<PrimExpr> ui = row_index(row);
      for (size_t d = k; d < ds.size(); ++d) ui.push_back(o[d]);
      return updates(ui);
    };
    s.update = [u, update_at](const std::vector<Var>& o) { return update_at(o, AsExprs(u)); };
    s.rank = [&, u](const std::vector<Var>&) {
      std::vector<PrimExpr> wide;
      for (const Var& v : u) wide.push_back(AsInt64(v));
      PrimExpr flat = wide[0];
      for (size_t d = 1; d < wide.size(); ++d) flat = flat * ir::make_const(DataType::Int(64), rows[d]) + wide[d];
      return flat;
    };
    s.at = [&, update_at](const std::vector<Var>& o, PrimExpr l) {
      return update_at(o, Unravel(ir::cast(DataType::Int(32), l), rows));
    };
    return s;
  };
  return Scatter(data, reduction, "T_scatter_nd", search_of);
}

}  // namespace tessera::topi
