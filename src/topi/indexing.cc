#include "tessera/topi/indexing.h"

#include <algorithm>

#include "tessera/support/error.h"
#include "tessera/topi/broadcast.h"
#include "tessera/topi/tags.h"

namespace tessera::topi {

Tensor broadcast_to(const Tensor& x, const std::vector<int64_t>& shape) {
  std::vector<int64_t> out = BroadcastShape(ConstShape(x), shape);
  return te::compute(
      MakeShape(out), [&](const std::vector<Var>& i) { return BroadcastRead(x, i); }, "T_broadcast_to",
      tag::kBroadcast);
}

Tensor tile(const Tensor& x, const std::vector<int64_t>& reps) {
  std::vector<int64_t> xs = ConstShape(x);
  TESSERA_CHECK(reps.size() == xs.size(), "tile: repeats has ", reps.size(), " entries for a tensor of rank ",
                xs.size());
  std::vector<int64_t> out;
  for (size_t d = 0; d < xs.size(); ++d) {
    TESSERA_CHECK(reps[d] >= 0, "tile: repeats must be >= 0, got ", reps[d]);
    out.push_back(xs[d] * reps[d]);
  }
  return te::compute(
      MakeShape(out),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx;
        for (size_t d = 0; d < xs.size(); ++d)
          idx.push_back(reps[d] == 1 ? PrimExpr(i[d]) : ir::floormod(i[d], Index(xs[d])));
        return x(idx);
      },
      "T_tile", tag::kInjective);
}

namespace {

// pad_mode's compute over expression amounts: constants from pad_mode, run-time values from
// pad_mode_run_time. `in_range[d]`: axis d only crops (every read stays inside x). Constant
// amounts fold, so the static kernel has constant indices.
Tensor PadCompute(const Tensor& x, const std::vector<PrimExpr>& before, const std::vector<PrimExpr>& out_extents,
                  const std::vector<bool>& in_range, const std::string& mode, const PrimExpr& value) {
  return te::compute(
      out_extents,
      [&](const std::vector<Var>& o) {
        std::vector<PrimExpr> idx;
        PrimExpr inside;
        for (size_t d = 0; d < before.size(); ++d) {
          const PrimExpr i = IsConst(before[d], 0) ? PrimExpr(o[d]) : PrimExpr(o[d] - ir::cast(o[d].dtype(), before[d]));
          if (in_range[d]) {
            idx.push_back(i);
            continue;
          }
          const PrimExpr n = ir::cast(o[d].dtype(), x.shape()[d]), last = n - Index(1);
          if (mode == "constant") {
            PrimExpr ok = i >= Index(0) && i < n;
            inside = inside.defined() ? (inside && ok) : ok;
            idx.push_back(ir::min(ir::max(i, Index(0)), last));  // select reads both branches: stay inside x
          } else if (mode == "edge") {
            idx.push_back(ir::min(ir::max(i, Index(0)), last));
          } else if (mode == "wrap") {
            idx.push_back(ir::floormod(i, n));
          } else {  // reflect: -i below 0, 2(n-1) - i above n-1
            PrimExpr r = ir::select(i < Index(0), Index(0) - i, i);
            idx.push_back(ir::select(r > last, last * Index(2) - r, r));
          }
        }
        PrimExpr v = x(idx);
        if (inside.defined()) v = ir::select(inside, v, value);
        return v;
      },
      "T_pad", tag::kInjective);
}

void CheckPadMode(const std::string& mode) {
  TESSERA_CHECK(mode == "constant" || mode == "reflect" || mode == "edge" || mode == "wrap", "pad: unknown mode '",
                mode, "' (constant, reflect, edge, wrap)");
}

}  // namespace

Tensor pad_mode(const Tensor& x, const std::vector<int64_t>& before, const std::vector<int64_t>& after,
                const std::string& mode, double pad_value) {
  std::vector<int64_t> xs = ConstShape(x);
  const size_t nd = xs.size();
  TESSERA_CHECK(before.size() == nd && after.size() == nd, "pad: ", before.size(), " / ", after.size(),
                " pad amounts for a tensor of rank ", nd);
  CheckPadMode(mode);
  std::vector<int64_t> out;
  std::vector<bool> in_range;
  for (size_t d = 0; d < nd; ++d) {
    int64_t n = xs[d] + before[d] + after[d];
    TESSERA_CHECK(n >= 0, "pad: axis ", d, " would have a negative extent ", n);
    if (mode == "reflect" && (before[d] > 0 || after[d] > 0)) {
      TESSERA_CHECK(xs[d] >= 2 && before[d] < xs[d] && after[d] < xs[d], "pad: reflect padding (", before[d], ", ",
                    after[d], ") of axis ", d, " must be smaller than its extent ", xs[d]);
    }
    if ((mode == "edge" || mode == "wrap") && n > 0) {
      TESSERA_CHECK(xs[d] > 0, "pad: ", mode, " padding of an empty axis ", d);
    }
    out.push_back(n);
    in_range.push_back(before[d] <= 0 && after[d] <= 0);
  }
  std::vector<PrimExpr> before_e;
  for (int64_t b : before) before_e.push_back(Index(b));
  return PadCompute(x, before_e, MakeShape(out), in_range, mode, ir::make_const(x.dtype(), pad_value));
}

Tensor pad_mode_run_time(const Tensor& x, const std::vector<PrimExpr>& before, const std::vector<PrimExpr>& out_extents,
                         const std::string& mode, const PrimExpr& pad_value) {
  const size_t nd = x.shape().size();
  TESSERA_CHECK(before.size() == nd && out_extents.size() == nd, "pad: ", before.size(), " pad amounts and ",
                out_extents.size(), " extents for a tensor of rank ", nd);
  CheckPadMode(mode);
  return PadCompute(x, before, out_extents, std::vector<bool>(nd, false), mode, ir::cast(x.dtype(), pad_value));
}

Tensor gather_elements(const Tensor& data, const Tensor& indices, int64_t axis_in) {
  std::vector<int64_t> ds = ConstShape(data), is = ConstShape(indices);
  TESSERA_CHECK(ds.size() == is.size(), "gather_elements: data rank ", ds.size(), " != indices rank ", is.size());
  TESSERA_CHECK(indices.dtype().is_int(), "gather_elements: indices must be int32 or int64, got ",
                indices.dtype().str());
  const int axis = NormalizeAxis(axis_in, static_cast<int>(ds.size()), "gather_elements");
  const int64_t n = ds[axis];
  return te::compute(
      MakeShape(is),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx = AsExprs(i);
        idx[axis] = ir::cast(DataType::Int(32), ir::checked_index(indices(AsExprs(i)), n));
        return data(idx);
      },
      "T_gather_elements", tag::kInjective);
}

Tensor trilu(const Tensor& x, const Tensor& k, bool upper) {
  std::vector<int64_t> xs = ConstShape(x);
  TESSERA_CHECK(xs.size() >= 2, "trilu needs a tensor of rank >= 2, got rank ", xs.size());
  std::vector<int64_t> ks = ConstShape(k);
  TESSERA_CHECK(Product(ks) == 1 && k.dtype().is_int(), "trilu: k must be one int64 value");
  const size_t nd = xs.size();
  return te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> kidx(ks.size(), Index(0));
        PrimExpr kv = ir::cast(DataType::Int(64), k(kidx));
        PrimExpr diff = ir::cast(DataType::Int(64), i[nd - 1]) - ir::cast(DataType::Int(64), i[nd - 2]);
        PrimExpr keep = upper ? diff >= kv : diff <= kv;
        return ir::select(keep, x(AsExprs(i)), ir::make_zero(x.dtype()));
      },
      "T_trilu", tag::kInjective);
}

namespace {

Tensor ArgReduce(const Tensor& x, int64_t axis_in, bool keepdims, bool select_last, bool is_max) {
  std::vector<int64_t> xs = ConstShape(x);
  const int nd = static_cast<int>(xs.size());
  const int axis = NormalizeAxis(axis_in, nd, is_max ? "argmax" : "argmin");
  const int64_t n = xs[axis];
  TESSERA_CHECK(n > 0, "arg reduction over an empty axis");
  std::vector<int64_t> out;
  for (int d = 0; d < nd; ++d) {
    if (d != axis) out.push_back(xs[d]);
    else if (keepdims) out.push_back(1);
  }
  auto at = [&](const std::vector<Var>& o, PrimExpr k) {
    std::vector<PrimExpr> idx;
    size_t j = 0;
    for (int d = 0; d < nd; ++d) {
      if (d == axis) {
        idx.push_back(k);
        if (keepdims) ++j;
      } else {
        idx.push_back(o[j++]);
      }
    }
    return idx;
  };
  const std::string name = is_max ? "T_argmax" : "T_argmin";
  te::IterVar k1 = te::reduce_axis(Range(Index(0), Index(n)), "k");
  Tensor m = te::compute(
      MakeShape(out),
      [&](const std::vector<Var>& o) {
        PrimExpr v = x(at(o, k1.var));
        return is_max ? te::max(v, {k1}) : te::min(v, {k1});
      },
      name + "_value", tag::kCommReduce);
  // The first (last) index holding the extreme value.
  te::IterVar k2 = te::reduce_axis(Range(Index(0), Index(n)), "k");
  return te::compute(
      MakeShape(out),
      [&](const std::vector<Var>& o) {
        PrimExpr k = ir::cast(DataType::Int(64), k2.var);
        PrimExpr hit = x(at(o, k2.var)) == m(AsExprs(o));
        if (select_last) return te::max(ir::select(hit, k, ir::make_const(DataType::Int(64), int64_t{-1})), {k2});
        return te::min(ir::select(hit, k, ir::make_const(DataType::Int(64), n)), {k2});
      },
      name, tag::kCommReduce);
}

}  // namespace

Tensor argmax(const Tensor& x, int64_t axis, bool keepdims, bool select_last_index) {
  return ArgReduce(x, axis, keepdims, select_last_index, true);
}
Tensor argmin(const Tensor& x, int64_t axis, bool keepdims, bool select_last_index) {
  return ArgReduce(x, axis, keepdims, select_last_index, false);
}

}  // namespace tessera::topi
