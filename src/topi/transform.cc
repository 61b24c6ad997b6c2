#include "tessera/topi/transform.h"

#include <algorithm>
#include <functional>

#include "tessera/support/error.h"
#include "tessera/topi/tags.h"

namespace tessera::topi {

Tensor reshape(const Tensor& x, const std::vector<int64_t>& newshape) {
  std::vector<int64_t> in = ConstShape(x);
  std::vector<int64_t> out = newshape;
  int64_t known = 1;
  int infer = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      TESSERA_CHECK(infer < 0, "reshape: more than one -1 in the new shape");
      infer = static_cast<int>(i);
    } else {
      TESSERA_CHECK(out[i] >= 0, "reshape: invalid extent ", out[i]);
      known *= out[i];
    }
  }
  if (infer >= 0) {
    TESSERA_CHECK(known != 0 && Product(in) % known == 0, "reshape: cannot infer the -1 extent");
    out[infer] = Product(in) / known;
  }
  TESSERA_CHECK(Product(out) == Product(in), "reshape: ", Product(in), " elements cannot be reshaped to ",
                Product(out));
  return te::compute(
      MakeShape(out), [&](const std::vector<Var>& i) { return x(Unravel(Ravel(AsExprs(i), out), in)); },
      "T_reshape", tag::kInjective);
}

Tensor transpose(const Tensor& x, std::vector<int64_t> axes) {
  const std::vector<PrimExpr>& in = x.shape();
  int nd = static_cast<int>(in.size());
  if (axes.empty())
    for (int i = nd - 1; i >= 0; --i) axes.push_back(i);
  TESSERA_CHECK(static_cast<int>(axes.size()) == nd, "transpose: ", axes.size(), " axes for a tensor of rank ", nd);
  std::vector<PrimExpr> out(nd);
  std::vector<bool> seen(nd, false);
  for (int i = 0; i < nd; ++i) {
    axes[i] = NormalizeAxis(axes[i], nd, "transpose");
    TESSERA_CHECK(!seen[axes[i]], "transpose: axis ", axes[i], " repeated");
    seen[axes[i]] = true;
    out[i] = in[axes[i]];
  }
  return te::compute(
      out,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx(nd);
        for (int d = 0; d < nd; ++d) idx[axes[d]] = i[d];
        return x(idx);
      },
      "T_transpose", tag::kInjective);
}

Tensor concatenate(const std::vector<Tensor>& xs, int64_t axis_in) {
  TESSERA_CHECK(!xs.empty(), "concatenate: no inputs");
  // Extents may be symbolic (a concatenation over run-time-shaped tensors, run by the VM); static
  // ones fold to constants.
  std::vector<PrimExpr> out = xs[0].shape();
  int nd = static_cast<int>(out.size());
  int axis = NormalizeAxis(axis_in, nd, "concatenate");
  std::vector<PrimExpr> offsets{Index(0)};
  for (const Tensor& t : xs) {
    const std::vector<PrimExpr>& s = t.shape();
    TESSERA_CHECK(static_cast<int>(s.size()) == nd && t.dtype() == xs[0].dtype(),
                  "concatenate: inputs differ in rank or dtype");
    for (int d = 0; d < nd; ++d)
      TESSERA_CHECK(d == axis || SameExtent(s[d], out[d]), "concatenate: extents differ on axis ", d);
    offsets.push_back(offsets.back() + s[axis]);
  }
  out[axis] = offsets.back();
  return te::compute(
      out,
      [&](const std::vector<Var>& i) {
        // A balanced tree of selects on the axis index: out = i < off_mid ? (left half) : (right
        // half), so that code generation, which evaluates only the taken operand of a select
        // whose condition is the same for every lane (codegen_expr.cc), tests log2(n) conditions
        // and reads one input per element.
        auto read = [&](size_t k) {
          // Clamped so that an untaken operand, evaluated where the select is eager (a condition
          // that differs across vector lanes), reads inside x_k.
          std::vector<PrimExpr> idx = AsExprs(i);
          const PrimExpr ext = offsets[k + 1] - offsets[k];
          idx[axis] = ir::min(ir::max(idx[axis] - offsets[k], Index(0)), ext - Index(1));
          return xs[k](idx);
        };
        std::function<PrimExpr(size_t, size_t)> tree = [&](size_t lo, size_t hi) -> PrimExpr {
          if (hi - lo == 1) return read(lo);
          const size_t mid = (lo + hi) / 2;
          return ir::select(i[axis] < offsets[mid], tree(lo, mid), tree(mid, hi));
        };
        return tree(0, xs.size());
      },
      "T_concat", tag::kInjective);
}

Tensor take(const Tensor& data, const Tensor& indices, int64_t axis_in, TakeMode mode) {
  const std::vector<PrimExpr>& ds = data.shape();
  const std::vector<PrimExpr>& is = indices.shape();
  int nd = static_cast<int>(ds.size());
  int axis = NormalizeAxis(axis_in, nd, "take");
  TESSERA_CHECK(indices.dtype().is_int() || indices.dtype().is_uint(), "take: indices must be integers, got ",
                indices.dtype().str());
  std::vector<PrimExpr> out(ds.begin(), ds.begin() + axis);
  out.insert(out.end(), is.begin(), is.end());
  out.insert(out.end(), ds.begin() + axis + 1, ds.end());
  const PrimExpr n = ds[axis];  // a constant or a shape var
  int ni = static_cast<int>(is.size());
  return te::compute(
      out,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> iidx(i.begin() + axis, i.begin() + axis + ni);
        PrimExpr raw = indices(iidx);
        DataType it = raw.dtype();
        PrimExpr norm = raw;
        const PrimExpr extent = ir::cast(it, n);
        if (mode == TakeMode::kRaise) {
          norm = ir::checked_index(raw, n);
        } else if (mode == TakeMode::kWrap) {
          norm = ir::floormod(raw, extent);
        } else {
          if (mode == TakeMode::kNormalize) norm = ir::select(raw < ir::make_const(it, 0), raw + extent, raw);
          norm = ir::min(ir::max(norm, ir::make_const(it, 0)), extent - ir::make_const(it, 1));
        }
        std::vector<PrimExpr> didx(i.begin(), i.begin() + axis);
        didx.push_back(ir::cast(DataType::Int(32), norm));
        didx.insert(didx.end(), i.begin() + axis + ni, i.end());
        return data(didx);
      },
      "T_take", tag::kInjective);
}

Tensor strided_slice(const Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                     const std::vector<int64_t>& strides, const std::vector<int64_t>& axes_in) {
  std::vector<int64_t> in = ConstShape(x);
  int nd = static_cast<int>(in.size());
  TESSERA_CHECK(begin.size() == end.size(), "strided_slice: begin and end differ in length");
  std::vector<int64_t> axes = axes_in;
  if (axes.empty())
    for (size_t i = 0; i < begin.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  TESSERA_CHECK(axes.size() == begin.size(), "strided_slice: axes and begin differ in length");
  TESSERA_CHECK(strides.empty() || strides.size() == begin.size(), "strided_slice: strides and begin differ in length");
  std::vector<int64_t> start(nd, 0), step(nd, 1), out = in;
  for (size_t k = 0; k < axes.size(); ++k) {
    int a = NormalizeAxis(axes[k], nd, "strided_slice");
    int64_t n = in[a], s = strides.empty() ? 1 : strides[k];
    TESSERA_CHECK(s != 0, "strided_slice: stride 0 on axis ", a);
    int64_t b = begin[k] < 0 ? begin[k] + n : begin[k];
    int64_t e = end[k] < 0 ? end[k] + n : end[k];
    int64_t count;
    if (s > 0) {
      b = std::clamp<int64_t>(b, 0, n);
      e = std::clamp<int64_t>(e, 0, n);
      count = e > b ? (e - b + s - 1) / s : 0;
    } else {
      b = std::clamp<int64_t>(b, 0, n - 1);
      e = std::clamp<int64_t>(e, -1, n - 1);
      count = b > e ? (b - e + (-s) - 1) / (-s) : 0;
    }
    start[a] = b;
    step[a] = s;
    out[a] = count;
  }
  return te::compute(
      MakeShape(out),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx;
        for (int d = 0; d < nd; ++d) idx.push_back(Index(start[d]) + i[d] * Index(step[d]));
        return x(idx);
      },
      "T_strided_slice", tag::kInjective);
}

Tensor expand_dims(const Tensor& x, int64_t axis_in, int num_newaxis) {
  const std::vector<PrimExpr>& in = x.shape();
  int nd = static_cast<int>(in.size());
  int axis = NormalizeAxis(axis_in, nd + 1, "expand_dims");
  std::vector<PrimExpr> out(in.begin(), in.begin() + axis);
  out.insert(out.end(), num_newaxis, Index(1));
  out.insert(out.end(), in.begin() + axis, in.end());
  return te::compute(
      out,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx(i.begin(), i.begin() + axis);
        idx.insert(idx.end(), i.begin() + axis + num_newaxis, i.end());
        return x(idx);
      },
      "T_expand_dims", tag::kInjective);
}

Tensor squeeze(const Tensor& x, const std::vector<int64_t>& axes) {
  const std::vector<PrimExpr>& in = x.shape();
  int nd = static_cast<int>(in.size());
  std::vector<bool> drop(nd, false);
  for (int64_t a : axes) {
    int d = NormalizeAxis(a, nd, "squeeze");
    TESSERA_CHECK(IsConst(in[d], 1), "squeeze: axis ", d, " of ", ShapeString(in), " has an extent other than 1");
    drop[d] = true;
  }
  if (axes.empty())
    for (int d = 0; d < nd; ++d) drop[d] = IsConst(in[d], 1);
  std::vector<PrimExpr> out;
  for (int d = 0; d < nd; ++d)
    if (!drop[d]) out.push_back(in[d]);
  return te::compute(
      out,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx;
        size_t k = 0;
        for (int d = 0; d < nd; ++d) idx.push_back(drop[d] ? Index(0) : PrimExpr(i[k++]));
        return x(idx);
      },
      "T_squeeze", tag::kInjective);
}

Tensor pad(const Tensor& x, const std::vector<int64_t>& before, const std::vector<int64_t>& after,
           PrimExpr pad_value, const std::string& name) {
  std::vector<int64_t> in = ConstShape(x);
  int nd = static_cast<int>(in.size());
  TESSERA_CHECK(static_cast<int>(before.size()) == nd && static_cast<int>(after.size()) == nd,
                "pad: need one before / after value per dim (rank ", nd, ")");
  std::vector<int64_t> out(nd);
  for (int d = 0; d < nd; ++d) {
    TESSERA_CHECK(before[d] >= 0 && after[d] >= 0, "pad: negative padding");
    out[d] = before[d] + in[d] + after[d];
  }
  PrimExpr value = ir::cast(x.dtype(), pad_value);
  return te::compute(
      MakeShape(out),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx;
        PrimExpr inside;
        for (int d = 0; d < nd; ++d) {
          if (before[d] == 0 && after[d] == 0) {
            idx.push_back(i[d]);
            continue;
          }
          // Select evaluates both branches: clamp so the read stays inside x.
          PrimExpr j = before[d] ? PrimExpr(i[d] - Index(before[d])) : PrimExpr(i[d]);
          idx.push_back(ir::min(ir::max(j, Index(0)), Index(in[d] - 1)));
          PrimExpr c = before[d] ? (i[d] >= Index(before[d]) && i[d] < Index(before[d] + in[d]))
                                 : PrimExpr(i[d] < Index(in[d]));
          inside = inside.defined() ? (inside && c) : c;
        }
        if (!inside.defined()) return x(idx);
        return ir::select(inside, x(idx), value);
      },
      name, tag::kInjective);
}

}  // namespace tessera::topi
