// FComputes of the VM's data-dependent shape ops (graph/op/vm.cc): the shape functions
// vm.reshape_shape, vm.reduce_shape, vm.slice_params, vm.pad_params, vm.range_shape, vm.nonzero_count, ..., and
// the kernels of vm.full, vm.reduce, vm.slice, vm.pad, vm.range, vm.nonzero, vm.unique_select, ..., whose output extents are symbols
// bound from a shape computed at run time. (vm.reshape is a ReshapeTensor of the VM: no kernel;
// Resize's are in computes_image.cc.)
#include "computes.h"
#include "tessera/graph_lower/compute_registry.h"
#include "tessera/ir/op.h"
#include "tessera/support/error.h"
#include "tessera/topi/indexing.h"
#include "tessera/topi/nonzero.h"
#include "tessera/topi/unique.h"
#include "tessera/topi/tags.h"
#include "tessera/topi/util.h"

namespace tessera::graph_lower::detail {

namespace {

const DataType kI64 = DataType::Int(64);

ir::PrimExpr I64(int64_t v) { return ir::make_const(kI64, v); }

// out[i] = s[i], with 0 -> x's dim i (unless allowzero) and -1 -> the element count of x over the
// product of the other resolved entries (ONNX Reshape-5/13/14). Invalid shapes (two -1, a count
// that does not divide) give an element count the VM's ReshapeTensor refuses; a negative entry
// is refused by LoadShape.
Tensors ReshapeShape(const Attrs& a, const Tensors& in, const Type&) {
  const te::Tensor &x = in[0], &s = in[1];
  const bool allowzero = a.GetInt("allowzero", 0) != 0;
  const std::vector<ir::PrimExpr>& xs = x.shape();
  const ir::PrimExpr r = s.shape()[0];
  std::vector<ir::PrimExpr> dims;  // x's dims as int64 (0 past the rank: Pick)
  for (const ir::PrimExpr& d : xs) dims.push_back(ir::cast(kI64, d));
  te::Tensor resolved = te::compute(
      {r},
      [&](const std::vector<ir::Var>& i) {
        ir::PrimExpr v = s({i[0]});
        return allowzero ? v : ir::select(v == I64(0), Pick(ir::cast(kI64, i[0]), dims), v);
      },
      "T_reshape_resolved", topi::tag::kInjective);
  te::IterVar k = te::reduce_axis(ir::Range(topi::Index(0), r), "k");
  te::Tensor known = te::compute(
      {},
      [&](const std::vector<ir::Var>&) {
        ir::PrimExpr v = resolved({k.var});
        return te::prod(ir::select(v == I64(-1), I64(1), v), {k});
      },
      "T_reshape_known", topi::tag::kCommReduce);
  ir::PrimExpr total = I64(1);
  for (const ir::PrimExpr& d : xs) total = total * ir::cast(kI64, d);
  return {te::compute(
      {r},
      [&](const std::vector<ir::Var>& i) {
        ir::PrimExpr v = resolved({i[0]}), n = known(std::vector<ir::PrimExpr>{});
        return ir::select(v == I64(-1), ir::select(n == I64(0), I64(-1), ir::floordiv(total, ir::max(n, I64(1)))), v);
      },
      "T_reshape_shape", topi::tag::kInjective)};
}

Tensors Full(const Attrs& a, const Tensors&, const Type& out) {
  const auto* tt = out->as<graph::TensorTypeNode>();
  TESSERA_ICHECK(tt, "vm.full's type is no tensor");
  // attr value: a double for a float dtype, an int64 otherwise (exact).
  ir::PrimExpr v = tt->dtype.is_floating() ? ir::cast(tt->dtype, ir::make_const(DataType::Float(64), a.GetDouble("value")))
                                           : ir::cast(tt->dtype, I64(a.GetInt("value")));
  return {te::compute(
      ShapeExtents(tt->shape), [&](const std::vector<ir::Var>&) { return v; }, "T_full", topi::tag::kElemWise)};
}

// The shape of reducing x over run-time axes (graph/op/vm.cc vm.reduce_shape): the rank r and the
// number of axes k are static, so the compute unrolls over them.
Tensors ReduceShape(const Attrs& a, const Tensors& in, const Type& out) {
  const te::Tensor &x = in[0], &axes = in[1];
  const int64_t r = x.ndim();
  int64_t k = 0;
  TESSERA_ICHECK(ir::as_const_int(axes.shape()[0], &k), "vm.reduce_shape: the axes' length must be static");
  const bool keepdims = a.GetInt("keepdims", 1) != 0, noop = a.GetInt("noop_with_empty_axes", 0) != 0;
  std::vector<ir::PrimExpr> reduced(r), in_dim(r);
  for (int64_t d = 0; d < r; ++d) {
    in_dim[d] = ir::cast(kI64, x.shape()[d]);
    reduced[d] = ir::make_const(DataType::Bool(), k == 0 && !noop ? 1 : 0);
    // An axis outside [-r, r) fails the kernel (kKernelIndexOutOfRange, naming the node: attr source).
    for (int64_t j = 0; j < k; ++j) reduced[d] = reduced[d] || ir::checked_index(axes({topi::Index(j)}), r) == I64(d);
  }
  const auto* tt = out->as<graph::TensorTypeNode>();
  TESSERA_ICHECK(tt && tt->shape.size() == 1 && tt->shape[0].is_static(), "vm.reduce_shape's type");
  const int64_t n = tt->shape[0].value();
  return {te::compute(
      {topi::Index(n)},
      [&](const std::vector<ir::Var>& i) {
        ir::PrimExpr value = I64(0);
        if (keepdims || (k == 0 && noop)) {
          for (int64_t d = r; d-- > 0;)
            value = ir::select(i[0] == topi::Index(d), ir::select(reduced[d], I64(1), in_dim[d]), value);
        } else {
          // The j-th kept dim: the dim d that is kept with j kept dims before it.
          ir::PrimExpr before = I64(0);
          for (int64_t d = 0; d < r; ++d) {
            value = value + ir::select(!reduced[d] && before == ir::cast(kI64, i[0]), in_dim[d], I64(0));
            before = before + ir::select(reduced[d], I64(0), I64(1));
          }
        }
        return value;
      },
      "T_reduce_shape", topi::tag::kInjective)};
}

// x reduced to a run-time shape in keepdims form: out[i] = reduce over k of x[i + k], where each
// dim reduces over x's extent when its output extent is 1 and over [0, 1) otherwise (one of i_d,
// k_d is always 0).
Tensors Reduce(const Attrs& a, const Tensors& in, const Type& out) {
  const te::Tensor& x = in[0];
  const auto* tt = out->as<graph::TensorTypeNode>();
  TESSERA_ICHECK(tt, "vm.reduce's type is no tensor");
  const std::vector<ir::PrimExpr> os = ShapeExtents(tt->shape);
  const std::vector<ir::PrimExpr>& xs = x.shape();
  const std::string kind = a.GetString("kind");
  std::vector<ir::PrimExpr> extent(xs.size());
  for (size_t d = 0; d < xs.size(); ++d) extent[d] = ir::select(os[d] == topi::Index(1), xs[d], topi::Index(1));
  auto reduce_axes = [&] {
    std::vector<te::IterVar> ks;
    for (size_t d = 0; d < xs.size(); ++d) ks.push_back(te::reduce_axis(ir::Range(topi::Index(0), extent[d]), "k" + std::to_string(d)));
    return ks;
  };
  auto read = [&](const std::vector<ir::Var>& i, const std::vector<te::IterVar>& ks) {
    std::vector<ir::PrimExpr> idx;
    for (size_t d = 0; d < xs.size(); ++d) idx.push_back(i[d] + ks[d].var);
    return x(idx);
  };
  auto reduction = [&](const std::string& how, const std::string& name) {
    return te::compute(
        os,
        [&](const std::vector<ir::Var>& i) {
          std::vector<te::IterVar> ks = reduce_axes();
          ir::PrimExpr v = read(i, ks);
          if (how == "max") return te::max(v, ks);
          if (how == "min") return te::min(v, ks);
          if (how == "prod") return te::prod(v, ks);
          return te::sum(v, ks);
        },
        name, topi::tag::kCommReduce);
  };
  if (kind == "sum" || kind == "max" || kind == "min" || kind == "prod") return {reduction(kind, "T_reduce_" + kind)};
  if (kind == "mean") {
    te::Tensor s = reduction("sum", "T_reduce_sum");
    const ir::PrimExpr count = topi::ExtentProduct(extent);
    return {te::compute(
        os, [&](const std::vector<ir::Var>& i) { return s(topi::AsExprs(i)) / ir::cast(x.dtype(), count); },
        "T_reduce_mean", topi::tag::kElemWise)};
  }
  TESSERA_ICHECK(kind == "logsumexp", "vm.reduce: unknown kind ", kind);
  te::Tensor m = reduction("max", "T_reduce_max");
  te::Tensor s = te::compute(
      os,
      [&](const std::vector<ir::Var>& i) {
        std::vector<te::IterVar> ks = reduce_axes();
        return te::sum(ir::exp(read(i, ks) - m(topi::AsExprs(i))), ks);
      },
      "T_reduce_expsum", topi::tag::kCommReduce);
  return {te::compute(
      os, [&](const std::vector<ir::Var>& i) { return ir::log(s(topi::AsExprs(i))) + m(topi::AsExprs(i)); },
      "T_reduce_logsumexp", topi::tag::kElemWise)};
}

// The static length of a shape function's result.
int64_t OutLength(const Type& out) {
  const auto* tt = out->as<graph::TensorTypeNode>();
  TESSERA_ICHECK(tt && tt->shape.size() == 1 && tt->shape[0].is_static(), "a shape function's type");
  return tt->shape[0].value();
}

Tensors UnsqueezeShape(const Attrs&, const Tensors& in, const Type& out) {
  const te::Tensor &x = in[0], &axes = in[1];
  const int64_t n = OutLength(out), k = n - x.ndim();
  std::vector<ir::PrimExpr> xs;
  for (const ir::PrimExpr& d : x.shape()) xs.push_back(ir::cast(kI64, d));
  std::vector<ir::PrimExpr> inserted(n), values(n);
  for (int64_t p = 0; p < n; ++p) {
    inserted[p] = ir::make_const(DataType::Bool(), 0);
    for (int64_t j = 0; j < k; ++j)
      inserted[p] = inserted[p] || ir::checked_index(axes({topi::Index(j)}), n) == I64(p);
  }
  // Position p holds 1 when inserted, else x's dim (p - the insertions before p).
  ir::PrimExpr before = I64(0);
  for (int64_t p = 0; p < n; ++p) {
    values[p] = ir::select(inserted[p], I64(1), Pick(I64(p) - before, xs));
    before = before + ir::select(inserted[p], I64(1), I64(0));
  }
  return {te::compute(
      {topi::Index(n)}, [&](const std::vector<ir::Var>& i) { return Pick(ir::cast(kI64, i[0]), values); },
      "T_unsqueeze_shape", topi::tag::kInjective)};
}

Tensors BroadcastShape(const Attrs&, const Tensors& in, const Type& out) {
  const te::Tensor &x = in[0], &s = in[1];
  const int64_t n = OutLength(out), r = x.ndim();
  int64_t m = 0;
  ir::as_const_int(s.shape()[0], &m);
  std::vector<ir::PrimExpr> values(n);
  for (int64_t p = 0; p < n; ++p) {
    const int64_t xd = p - (n - r), sd = p - (n - m);
    ir::PrimExpr a = xd >= 0 ? ir::cast(kI64, x.shape()[xd]) : I64(1);
    ir::PrimExpr b = sd >= 0 ? s({topi::Index(sd)}) : I64(1);
    values[p] = ir::select(a == I64(1), b, ir::select(b == I64(1) || b == a, a, I64(-1)));
  }
  return {te::compute(
      {topi::Index(n)}, [&](const std::vector<ir::Var>& i) { return Pick(ir::cast(kI64, i[0]), values); },
      "T_broadcast_shape", topi::tag::kInjective)};
}

Tensors TileShape(const Attrs&, const Tensors& in, const Type& out) {
  const te::Tensor &x = in[0], &reps = in[1];
  return {te::compute(
      {topi::Index(OutLength(out))},
      [&](const std::vector<ir::Var>& i) {
        std::vector<ir::PrimExpr> xs;
        for (const ir::PrimExpr& d : x.shape()) xs.push_back(ir::cast(kI64, d));
        return Pick(ir::cast(kI64, i[0]), xs) * reps({i[0]});
      },
      "T_tile_shape", topi::tag::kInjective)};
}

// x read at an output point of a broadcast (right-aligned; an extent-1 dim of x reads index 0) or a
// tile (index modulo x's extent).
Tensors BroadcastOrTile(const Tensors& in, const Type& out, bool tile) {
  const te::Tensor& x = in[0];
  const auto* tt = out->as<graph::TensorTypeNode>();
  TESSERA_ICHECK(tt, "a vm.broadcast_to / vm.tile type");
  const std::vector<ir::PrimExpr> os = ShapeExtents(tt->shape);
  const size_t off = os.size() - x.shape().size();
  return {te::compute(
      os,
      [&](const std::vector<ir::Var>& i) {
        std::vector<ir::PrimExpr> idx;
        for (size_t d = 0; d < x.shape().size(); ++d) {
          const ir::PrimExpr& xd = x.shape()[d];
          const ir::PrimExpr at = i[off + d];
          if (tile) idx.push_back(ir::floormod(at, ir::max(xd, topi::Index(1))));
          else idx.push_back(topi::IsConst(xd, 1) ? topi::Index(0) : ir::select(xd == topi::Index(1), topi::Index(0), at));
        }
        return x(idx);
      },
      tile ? "T_tile" : "T_broadcast_to", topi::tag::kInjective)};
}

// ONNX Slice resolved per dim at run time (graph/op/vm.cc vm.slice_params): the rank r and the
// operands' length k are static, so the compute unrolls over them.
Tensors SliceParams(const Attrs& a, const Tensors& in, const Type&) {
  const te::Tensor &x = in[0], &starts = in[1], &ends = in[2], &axes = in[3], &steps = in[4];
  const int64_t r = x.ndim();
  int64_t k = 0;
  TESSERA_ICHECK(ir::as_const_int(starts.shape()[0], &k), "vm.slice_params: the starts' length must be static");
  const bool check_ends = a.GetInt("check_ends", 0) != 0;
  const int64_t split_part = a.GetInt("split_part", 0);
  // Two entries naming one axis fail the kernel, as ONNX Runtime refuses them (the sum of checks
  // is 0 otherwise and joins every step).
  ir::PrimExpr no_duplicates = I64(0);
  for (int64_t j = 0; j < k; ++j)
    for (int64_t l = j + 1; l < k; ++l) {
      const ir::PrimExpr same = ir::checked_index(axes({topi::Index(j)}), r) == ir::checked_index(axes({topi::Index(l)}), r);
      no_duplicates = no_duplicates + ir::checked_index(ir::select(same, I64(1), I64(0)), 1);
    }
  std::vector<ir::PrimExpr> first(r), step(r), extent(r);
  for (int64_t d = 0; d < r; ++d) {
    const ir::PrimExpr dim = ir::cast(kI64, x.shape()[d]);
    first[d] = I64(0), step[d] = I64(1), extent[d] = dim;
    for (int64_t j = 0; j < k; ++j) {
      const ir::PrimExpr jj = topi::Index(j);
      // A step of 0 fails the kernel (index 1 is outside [-1, 1)); otherwise this adds 0.
      const ir::PrimExpr st = steps({jj});
      const ir::PrimExpr st_checked = st + ir::checked_index(ir::select(st == I64(0), I64(1), I64(0)), 1);
      const ir::PrimExpr hit = ir::checked_index(axes({jj}), r) == I64(d);
      ir::PrimExpr s = starts({jj}), e = ends({jj});
      // TopK's k: on its axis the end must lie in [0, dim] (a value outside fails the kernel).
      if (check_ends)
        e = ir::checked_index(ir::select(hit, ir::select(e < I64(0), dim + I64(1), e), I64(0)), dim + I64(1));
      // A Split part: 0 <= start <= end <= dim on its axis, end = dim for the last (else the kernel
      // fails; the check term is 0).
      if (split_part != 0) {
        ir::PrimExpr ok = s >= I64(0) && s <= e && e <= dim;
        if (split_part == 2) ok = ok && e == dim;
        e = e + ir::checked_index(ir::select(hit && !ok, I64(1), I64(0)), 1);
      }
      s = ir::select(s < I64(0), s + dim, s);
      e = ir::select(e < I64(0), e + dim, e);
      // numpy's clip: min(max(v, lo), hi), so that an empty dim gives first = end = -1 backwards.
      auto clip = [](const ir::PrimExpr& v, const ir::PrimExpr& lo, const ir::PrimExpr& hi) {
        return ir::min(ir::max(v, lo), hi);
      };
      const ir::PrimExpr forward = st_checked > I64(0);
      const ir::PrimExpr s_c = ir::select(forward, clip(s, I64(0), dim), clip(s, I64(0), dim - I64(1)));
      const ir::PrimExpr e_c = ir::select(forward, clip(e, I64(0), dim), clip(e, I64(-1), dim - I64(1)));
      const ir::PrimExpr mag = ir::select(forward, st_checked, I64(0) - st_checked);
      const ir::PrimExpr span = ir::select(forward, e_c - s_c, s_c - e_c);
      // (A step of 0 has already failed the kernel; the divisor stays >= 1 all the same.)
      const ir::PrimExpr n = ir::max(I64(0), ir::floordiv(span + mag - I64(1), ir::max(mag, I64(1))));
      first[d] = ir::select(hit, s_c, first[d]);
      step[d] = ir::select(hit, st_checked + no_duplicates, step[d]);
      extent[d] = ir::select(hit, n, extent[d]);
    }
  }
  return {te::compute(
      {topi::Index(3), topi::Index(r)},
      [&](const std::vector<ir::Var>& i) {
        const ir::PrimExpr d = ir::cast(kI64, i[1]), row = ir::cast(kI64, i[0]);
        return ir::select(row == I64(0), Pick(d, first), ir::select(row == I64(1), Pick(d, step), Pick(d, extent)));
      },
      "T_slice_params", topi::tag::kInjective)};
}

// out[i] = x[first + i * step] per dim over the symbolic extents (vm.slice_params' rows 0 and 1).
Tensors Slice(const Attrs&, const Tensors& in, const Type& out) {
  const te::Tensor &x = in[0], &params = in[1];
  const auto* tt = out->as<graph::TensorTypeNode>();
  TESSERA_ICHECK(tt, "vm.slice's type is no tensor");
  return {te::compute(
      ShapeExtents(tt->shape),
      [&](const std::vector<ir::Var>& i) {
        std::vector<ir::PrimExpr> idx;
        for (size_t d = 0; d < i.size(); ++d) {
          const ir::PrimExpr dd = topi::Index(static_cast<int64_t>(d));
          const ir::PrimExpr at = params({topi::Index(0), dd}) + ir::cast(kI64, i[d]) * params({topi::Index(1), dd});
          idx.push_back(ir::cast(x.shape()[d].dtype(), at));
        }
        return x(idx);
      },
      "T_vm_slice", topi::tag::kInjective)};
}

// ONNX Pad resolved per dim at run time (graph/op/vm.cc vm.pad_params): the rank r and the number
// of axes k are static, so the compute unrolls over them.
Tensors PadParams(const Attrs& a, const Tensors& in, const Type&) {
  const te::Tensor &x = in[0], &pads = in[1], &axes = in[2];
  const int64_t r = x.ndim();
  int64_t k = 0;
  TESSERA_ICHECK(ir::as_const_int(axes.shape()[0], &k), "vm.pad_params: the axes' length must be static");
  const std::string mode = a.GetString("mode", "constant");
  std::vector<ir::PrimExpr> begin(r), extent(r);
  for (int64_t d = 0; d < r; ++d) {
    const ir::PrimExpr n = ir::cast(kI64, x.shape()[d]);
    ir::PrimExpr b = I64(0), e = I64(0);
    for (int64_t j = 0; j < k; ++j) {
      // An axis outside [-r, r) fails the kernel (kKernelIndexOutOfRange, naming attr source).
      const ir::PrimExpr hit = ir::checked_index(axes({topi::Index(j)}), r) == I64(d);
      b = b + ir::select(hit, pads({topi::Index(j)}), I64(0));
      e = e + ir::select(hit, pads({topi::Index(k + j)}), I64(0));
    }
    const ir::PrimExpr out = n + b + e;
    ir::PrimExpr ok = out >= I64(0);
    if (mode == "reflect")
      ok = ok && ((b <= I64(0) && e <= I64(0)) || (n >= I64(2) && b < n && e < n));
    else if (mode == "edge" || mode == "wrap")
      ok = ok && (out == I64(0) || n > I64(0));
    begin[d] = b;
    extent[d] = ir::select(ok, out, I64(-1));
  }
  return {te::compute(
      {topi::Index(2), topi::Index(r)},
      [&](const std::vector<ir::Var>& i) {
        const ir::PrimExpr d = ir::cast(kI64, i[1]);
        return ir::select(ir::cast(kI64, i[0]) == I64(0), Pick(d, begin), Pick(d, extent));
      },
      "T_pad_params", topi::tag::kInjective)};
}

// x padded by vm.pad_params' begins (row 0) to the symbolic extents (row 1's values).
Tensors Pad(const Attrs& a, const Tensors& in, const Type& out) {
  const te::Tensor &x = in[0], &params = in[1], &value = in[2];
  const auto* tt = out->as<graph::TensorTypeNode>();
  TESSERA_ICHECK(tt, "vm.pad's type is no tensor");
  std::vector<ir::PrimExpr> begin;
  for (int64_t d = 0; d < x.ndim(); ++d) begin.push_back(params({topi::Index(0), topi::Index(d)}));
  return {topi::pad_mode_run_time(x, begin, ShapeExtents(tt->shape), a.GetString("mode", "constant"),
                                  ScalarAs(value, x.dtype()))};
}

// ONNX Range's length (vm.range_shape) in float64, as the compile-time importer computes it.
Tensors RangeShape(const Attrs&, const Tensors& in, const Type&) {
  const DataType f64 = DataType::Float(64);
  const ir::PrimExpr start = ScalarAs(in[0], f64), limit = ScalarAs(in[1], f64), delta = ScalarAs(in[2], f64);
  const ir::PrimExpr n = ir::max(I64(0), ir::cast(kI64, ir::ceil((limit - start) / delta)));
  return {te::compute(
      {topi::Index(1)}, [&](const std::vector<ir::Var>&) { return ir::select(delta == ir::make_const(f64, 0.0), I64(-1), n); },
      "T_range_shape", topi::tag::kInjective)};
}

// start + i * delta over the symbolic length: float types in float64, rounded once.
Tensors Range(const Attrs&, const Tensors& in, const Type& out) {
  const te::Tensor &start = in[0], &delta = in[1];
  const auto* tt = out->as<graph::TensorTypeNode>();
  TESSERA_ICHECK(tt, "vm.range's type is no tensor");
  const DataType dt = start.dtype(), wide = dt.is_floating() ? DataType::Float(64) : kI64;
  return {te::compute(
      ShapeExtents(tt->shape),
      [&](const std::vector<ir::Var>& i) {
        return ir::cast(dt, ScalarAs(start, wide) + ir::cast(wide, i[0]) * ScalarAs(delta, wide));
      },
      "T_vm_range", topi::tag::kInjective)};
}

// ONNX NonZero (vm.nonzero): the output's second extent is the count vm.nonzero_count computed.
Tensors NonZero(const Attrs&, const Tensors& in, const Type& out) {
  const auto* tt = out->as<graph::TensorTypeNode>();
  TESSERA_ICHECK(tt && tt->shape.size() == 2, "vm.nonzero's type is no matrix");
  return {topi::nonzero(in[0], ShapeExtents(tt->shape)[1])};
}

}  // namespace

void RegisterVMComputes(graph::OpRegistry& r) {
  r.SetCompute("vm.range_shape", RangeShape);
  r.SetCompute("vm.range", Range);
  r.SetCompute("vm.pad_params", PadParams);
  r.SetCompute("vm.pad", Pad);
  r.SetCompute("vm.slice_params", SliceParams);
  r.SetCompute("vm.slice", Slice);
  r.SetCompute("vm.unsqueeze_shape", UnsqueezeShape);
  r.SetCompute("vm.broadcast_shape", BroadcastShape);
  r.SetCompute("vm.tile_shape", TileShape);
  r.SetCompute("vm.broadcast_to", [](const Attrs&, const Tensors& in, const Type& out) { return BroadcastOrTile(in, out, false); });
  r.SetCompute("vm.tile", [](const Attrs&, const Tensors& in, const Type& out) { return BroadcastOrTile(in, out, true); });
  r.SetCompute("vm.reshape_shape", ReshapeShape);
  r.SetCompute("vm.full", Full);
  r.SetCompute("vm.reduce_shape", ReduceShape);
  r.SetCompute("vm.reduce", Reduce);
  r.SetCompute("vm.nonzero_count", [](const Attrs&, const Tensors& in, const Type&) {
    return Tensors{topi::nonzero_count(in[0])};
  });
  r.SetCompute("vm.nonzero", NonZero);
  r.SetCompute("vm.unique_select", [](const Attrs& a, const Tensors& in, const Type& out) {
    const auto* tt = out->as<graph::TensorTypeNode>();
    TESSERA_ICHECK(tt && tt->shape.size() == 1, "vm.unique_select's type is no vector");
    return Tensors{topi::unique_select(in[0], ShapeExtents(tt->shape)[0], a.GetString("kind"))};
  });
}

}  // namespace tessera::graph_lower::detail
