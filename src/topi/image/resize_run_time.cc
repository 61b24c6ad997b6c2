// Resize whose scales, sizes and roi are read at run time (topi/image/resize.h, the second
// `resize`; the VM's vm.resize). The arithmetic is the compile-time compute's (resize.cc) with
// every per-axis constant an expression: the ONNX coordinate transformation in float64, nearest
// rounding, and linear / cubic weights over a reduction of taps whose count the kernel computes
// (antialias widens the filter by 1 / scale when scale < 1).
#include <string>

#include "resize_util.h"
#include "tessera/support/error.h"
#include "tessera/topi/tags.h"

namespace tessera::topi {

using namespace resize_detail;

namespace {

const DataType kF64 = DataType::Float(64);

PrimExpr AsF64(const PrimExpr& e) { return e.dtype() == kF64 ? e : ir::cast(kF64, e); }

// One resized axis: its position in x, extents (float64: n the input's, m the output's), the
// input extent as an index, and the run-time scale and roi.
struct Axis {
  int64_t dim = 0;
  PrimExpr n, m, n_index;
  PrimExpr scale, roi_start, roi_end;
};

// The source coordinate of output index o (float64) as the ONNX spec's coordinate transformation
// (resize.cc's Coordinate, there over compile-time scales). As the reference implementation, the
// resized length is the real scale * n, not the output extent.
PrimExpr Coordinate(const std::string& mode, const Axis& ax, const PrimExpr& o) {
  const PrimExpr& s = ax.scale;
  const PrimExpr out_width = s * ax.n, one = F64(1), half = F64(0.5);
  if (mode == "half_pixel") return (o + half) / s - half;
  if (mode == "half_pixel_symmetric") {
    const PrimExpr offset = ax.n / F64(2) * (one - ax.m / out_width);
    return offset + (o + half) / s - half;
  }
  // pytorch_half_pixel of a length-1 output: 0, as the spec and ONNX Runtime.
  if (mode == "pytorch_half_pixel") return ir::select(out_width == one, F64(0), (o + half) / s - half);
  if (mode == "align_corners") return ir::select(out_width == one, F64(0), o * (ax.n - one) / (out_width - one));
  if (mode == "asymmetric") return o / s;
  if (mode == "tf_half_pixel_for_nn") return (o + half) / s;
  // tf_crop_and_resize: roi in normalised coordinates.
  const PrimExpr span = ax.n - one, start = ax.roi_start, end = ax.roi_end;
  return ir::select(out_width == one, (end - start) * span / F64(2) + start * span,
                    o * ((end - start) * span) / (out_width - one) + start * span);
}

// A float64 source position clamped into [0, n - 1] (the reference's edge padding), as an index.
PrimExpr ClampIndex(const PrimExpr& v, const Axis& ax, DataType index) {
  return ir::cast(index, ir::min(ir::max(v, F64(0)), ax.n - F64(1)));
}

PrimExpr NearestSource(const std::string& m, const PrimExpr& c, const PrimExpr& scale) {
  const PrimExpr fl = ir::floor(c), r = c - fl;
  if (m == "round_prefer_floor") return ir::select(r <= F64(0.5), fl, fl + F64(1));
  if (m == "round_prefer_ceil") return ir::select(r < F64(0.5), fl, fl + F64(1));
  if (m == "floor") return fl;
  if (m == "ceil") return ir::ceil(c);
  return ir::select(scale < F64(1), ir::ceil(c), fl);  // simple: ceil when downsampling
}

// The taps of linear / cubic interpolation along one axis at output index o: tap j (j in
// [0, count)) reads floor(c) + start + j with weight filter((start + j - r) * scale'), where
// r = c - floor(c) and scale' = min(scale, 1) with antialias, else 1 (the plain 2 / 4 taps).
struct Taps {
  PrimExpr floor_c, r, start, scale, count;  // count: index dtype, the same for every o

  PrimExpr Source(const PrimExpr& j) const { return floor_c + start + AsF64(j); }
};

Taps MakeTaps(const ResizeParams& p, const Axis& ax, const PrimExpr& o) {
  Taps t;
  const bool cubic = p.mode == "cubic";
  const double support = cubic ? 2 : 1;
  const PrimExpr c = Coordinate(p.coordinate_transformation_mode, ax, AsF64(o));
  t.floor_c = ir::floor(c);
  t.r = c - t.floor_c;
  const DataType index = o.dtype();
  if (p.antialias) {
    t.scale = ir::min(ax.scale, F64(1));
    t.start = ir::floor(F64(-support) / t.scale) + F64(1);
    t.count = ir::cast(index, F64(2) - F64(2) * t.start);
  } else {
    t.scale = F64(1);
    t.start = F64(cubic ? -1 : 0);
    t.count = ir::make_const(index, cubic ? 4 : 2);
  }
  return t;
}

PrimExpr TapWeight(const ResizeParams& p, const Axis& ax, const Taps& t, const PrimExpr& j) {
  const PrimExpr d = (t.start + AsF64(j) - t.r) * t.scale;
  PrimExpr w = p.mode == "cubic" ? CubicKernel(d, p.cubic_coeff_a) : ir::max(F64(1) - ir::fabs(d), F64(0));
  if (p.exclude_outside) {
    const PrimExpr src = t.Source(j);
    w = ir::select(src >= F64(0) && src <= ax.n - F64(1), w, F64(0));
  }
  return w;
}

}  // namespace

Tensor resize(const Tensor& x, const ResizeParams& p, const ResizeRunTimeOperands& rt) {
  CheckResizeModes(x.dtype(), p);
  const size_t k = p.axes.size();
  const bool crop = p.coordinate_transformation_mode == "tf_crop_and_resize";
  TESSERA_CHECK(rt.sizes.size() == k && rt.scales.size() == k, "resize: ", rt.sizes.size(), " sizes and ",
                rt.scales.size(), " scales for ", k, " resized axes");
  TESSERA_CHECK(!crop || (rt.roi_start.size() == k && rt.roi_end.size() == k),
                "resize: tf_crop_and_resize needs a roi start and end for each of the ", k, " resized axes");
  const int64_t rank = x.ndim();
  TESSERA_CHECK(rt.shape.empty() || static_cast<int64_t>(rt.shape.size()) == rank, "resize: an output shape of ",
                rt.shape.size(), " dims for a tensor of rank ", rank);
  std::vector<PrimExpr> out_shape = rt.shape.empty() ? x.shape() : rt.shape;
  if (k == 0)
    return te::compute(out_shape, [&](const std::vector<Var>& o) { return x(AsExprs(o)); }, "T_resize", tag::kInjective);
  std::vector<Axis> axes(k);
  for (size_t a = 0; a < k; ++a) {
    Axis& ax = axes[a];
    ax.dim = p.axes[a];
    TESSERA_CHECK(ax.dim >= 0 && ax.dim < rank, "resize: axis ", ax.dim, " is out of range for rank ", rank);
    if (rt.shape.empty()) out_shape[ax.dim] = rt.sizes[a];
    ax.n = AsF64(x.shape()[ax.dim]);
    ax.m = AsF64(rt.sizes[a]);
    ax.scale = AsF64(rt.scales[a]);
    if (crop) ax.roi_start = AsF64(rt.roi_start[a]), ax.roi_end = AsF64(rt.roi_end[a]);
  }
  const DataType dt = x.dtype();
  auto crop_valid = [&](const std::vector<Var>& o, PrimExpr value) {
    if (!crop) return value;
    PrimExpr valid;
    for (const Axis& ax : axes) {
      const PrimExpr c = Coordinate(p.coordinate_transformation_mode, ax, AsF64(o[ax.dim]));
      const PrimExpr inside = c >= F64(0) && c <= ax.n - F64(1);
      valid = valid.defined() ? (valid && inside) : inside;
    }
    return valid.defined() ? ir::select(valid, value, ir::make_const(dt, p.extrapolation_value)) : value;
  };

  if (p.mode == "nearest") {
    return te::compute(
        out_shape,
        [&](const std::vector<Var>& o) {
          std::vector<PrimExpr> idx = AsExprs(o);
          for (const Axis& ax : axes) {
            const PrimExpr c = Coordinate(p.coordinate_transformation_mode, ax, AsF64(o[ax.dim]));
            idx[ax.dim] = ClampIndex(NearestSource(p.nearest_mode, c, ax.scale), ax, o[ax.dim].dtype());
          }
          return crop_valid(o, x(idx));
        },
        "T_resize", tag::kInjective);
  }

  // Per axis, the sum of its taps' weights over each output index when they are normalised.
  const bool normalise = p.antialias || p.exclude_outside;
  std::vector<Tensor> weight_sums;
  if (normalise) {
    for (size_t a = 0; a < k; ++a) {
      const Axis& ax = axes[a];
      weight_sums.push_back(te::compute(
          {rt.sizes[a]},
          [&](const std::vector<Var>& o) {
            const Taps t = MakeTaps(p, ax, o[0]);
            te::IterVar j = te::reduce_axis(ir::Range(ir::make_const(t.count.dtype(), 0), t.count), "j");
            return te::sum(TapWeight(p, ax, t, j.var), {j});
          },
          "T_resize_wsum" + std::to_string(a), tag::kCommReduce));
    }
  }
  const DataType acc = AccumulateType(dt);
  Tensor sum = te::compute(
      out_shape,
      [&](const std::vector<Var>& o) {
        std::vector<PrimExpr> idx = AsExprs(o);
        std::vector<te::IterVar> js;
        PrimExpr w;
        for (size_t a = 0; a < k; ++a) {
          const Axis& ax = axes[a];
          const Taps t = MakeTaps(p, ax, o[ax.dim]);
          te::IterVar j = te::reduce_axis(ir::Range(ir::make_const(t.count.dtype(), 0), t.count), "j" + std::to_string(a));
          js.push_back(j);
          PrimExpr wa = TapWeight(p, ax, t, j.var);
          if (normalise) wa = wa / weight_sums[a](std::vector<PrimExpr>{o[ax.dim]});
          w = w.defined() ? w * wa : wa;
          idx[ax.dim] = ClampIndex(t.Source(j.var), ax, o[ax.dim].dtype());
        }
        return te::sum(ir::cast(acc, w) * ir::cast(acc, x(idx)), js);
      },
      "T_resize_sum", tag::kCommReduce);
  return te::compute(
      out_shape, [&](const std::vector<Var>& o) { return crop_valid(o, ToOutput(sum(AsExprs(o)), dt)); }, "T_resize",
      tag::kInjective);
}

}  // namespace tessera::topi
