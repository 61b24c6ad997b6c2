// FComputes of image.resize -> topi::resize and image.grid_sample -> topi::grid_sample (op/image.cc),
// and of Resize with run-time operands (op/vm.cc): the shape function vm.resize_shape and the kernel
// vm.resize -> topi::resize with ResizeRunTimeOperands; vision.nms / vision.nms_indices -> topi/nms.h.
#include "computes.h"
#include "tessera/graph_lower/compute_registry.h"
#include "tessera/topi/image/grid_sample.h"
#include "tessera/topi/nms.h"
#include "tessera/topi/image/resize.h"
#include "tessera/topi/tags.h"

namespace tessera::graph_lower::detail {

namespace {

const DataType kF64 = DataType::Float(64), kI64 = DataType::Int(64);

// The modes of image.resize / vm.resize (sizes, scales and roi are the caller's).
topi::ResizeParams ResizeModes(const Attrs& a) {
  topi::ResizeParams p;
  p.axes = a.GetInts("axes");
  p.mode = a.GetString("mode", p.mode);
  p.coordinate_transformation_mode = a.GetString("coordinate_transformation_mode", p.coordinate_transformation_mode);
  p.nearest_mode = a.GetString("nearest_mode", p.nearest_mode);
  p.cubic_coeff_a = a.GetDouble("cubic_coeff_a", p.cubic_coeff_a);
  p.exclude_outside = a.GetInt("exclude_outside", 0) != 0;
  p.extrapolation_value = a.GetDouble("extrapolation_value", 0.0);
  p.antialias = a.GetInt("antialias", 0) != 0;
  return p;
}

ir::PrimExpr F64(const ir::PrimExpr& e) { return ir::cast(kF64, e); }

// The single scale of keep_aspect_ratio_policy not_larger / not_smaller: min / max over the axes
// of size / in (float64).
ir::PrimExpr PolicyScale(const std::string& policy, const te::Tensor& x, const te::Tensor& sizes,
                         const std::vector<int64_t>& axes) {
  ir::PrimExpr s;
  for (size_t a = 0; a < axes.size(); ++a) {
    const ir::PrimExpr ratio = F64(sizes({topi::Index(static_cast<int64_t>(a))})) / F64(x.shape()[axes[a]]);
    s = !s.defined() ? ratio : policy == "not_larger" ? ir::min(s, ratio) : ir::max(s, ratio);
  }
  return s;
}

// vm.resize_shape (op/vm.cc): x's dims with each resized axis's output extent, or -1 where the
// operands are invalid (LoadShape refuses it). The rank and the axes are static, so the compute
// unrolls over them.
Tensors ResizeShape(const Attrs& a, const Tensors& in, const Type&) {
  const te::Tensor &x = in[0], &values = in[1];
  const std::vector<int64_t> axes = a.GetInts("axes");
  const std::string kind = a.GetString("kind"), policy = a.GetString("keep_aspect_ratio_policy", "stretch");
  const int64_t r = x.ndim();
  const ir::PrimExpr invalid = ir::make_const(kI64, -1), one = ir::make_const(kI64, 1);
  std::vector<ir::PrimExpr> out(r);
  for (int64_t d = 0; d < r; ++d) out[d] = ir::cast(kI64, x.shape()[d]);
  const ir::PrimExpr scale = kind == "sizes" && policy != "stretch" ? PolicyScale(policy, x, values, axes) : ir::PrimExpr();
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t d = axes[k];
    const ir::PrimExpr v = values({topi::Index(static_cast<int64_t>(k))}), n = out[d];
    if (kind == "scales") {
      // As the compile-time importer: out = floor(in * scale) in float64, >= 1 and exact in a double.
      const ir::PrimExpr extent = ir::floor(F64(n) * F64(v));
      const ir::PrimExpr ok = F64(v) > ir::make_const(kF64, 0.0) && extent >= ir::make_const(kF64, 1.0) &&
                              extent <= ir::make_const(kF64, 9.0e15);
      out[d] = ir::select(ok, ir::cast(kI64, ir::select(ok, extent, ir::make_const(kF64, 1.0))), invalid);
    } else if (policy == "stretch") {
      out[d] = ir::select(v >= one && n >= one, v, invalid);
    } else {
      ir::PrimExpr ok = n >= one;
      for (size_t j = 0; j < axes.size(); ++j)
        ok = ok && values({topi::Index(static_cast<int64_t>(j))}) >= one && ir::cast(kI64, x.shape()[axes[j]]) >= one;
      const ir::PrimExpr rounded = ir::floor(scale * F64(n) + ir::make_const(kF64, 0.5));
      out[d] = ir::select(ok, ir::max(one, ir::cast(kI64, ir::select(ok, rounded, ir::make_const(kF64, 1.0)))), invalid);
    }
  }
  return {te::compute(
      {topi::Index(r)}, [&](const std::vector<ir::Var>& i) { return Pick(ir::cast(kI64, i[0]), out); }, "T_resize_shape",
      topi::tag::kInjective)};
}

// vm.resize (op/vm.cc): the output extents are the type's symbols; the scales the operand's
// (kind scales) or the extents over x's (kind sizes; one policy scale with not_larger / not_smaller).
Tensors VMResize(const Attrs& a, const Tensors& in, const Type& out) {
  const te::Tensor &x = in[0], &values = in[1], &roi = in[2];
  const auto* tt = out->as<graph::TensorTypeNode>();
  TESSERA_ICHECK(tt, "vm.resize's type is no tensor");
  const std::vector<ir::PrimExpr> os = ShapeExtents(tt->shape);
  topi::ResizeParams p = ResizeModes(a);
  const std::string kind = a.GetString("kind"), policy = a.GetString("keep_aspect_ratio_policy", "stretch");
  const ir::PrimExpr policy_scale = kind == "sizes" && policy != "stretch" ? PolicyScale(policy, x, values, p.axes)
                                                                          : ir::PrimExpr();
  const int64_t k = static_cast<int64_t>(p.axes.size());
  topi::ResizeRunTimeOperands rt;
  rt.shape = os;
  for (int64_t j = 0; j < k; ++j) {
    const int64_t d = p.axes[j];
    rt.sizes.push_back(os[d]);
    if (kind == "scales") rt.scales.push_back(F64(values({topi::Index(j)})));
    else if (policy_scale.defined()) rt.scales.push_back(policy_scale);
    else rt.scales.push_back(F64(os[d]) / F64(x.shape()[d]));
    if (p.coordinate_transformation_mode == "tf_crop_and_resize") {
      rt.roi_start.push_back(F64(roi({topi::Index(j)})));
      rt.roi_end.push_back(F64(roi({topi::Index(k + j)})));
    }
  }
  return {topi::resize(x, p, rt)};
}

}  // namespace

void RegisterImageComputes(graph::OpRegistry& r) {
  r.SetCompute("image.resize", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    topi::ResizeParams p = ResizeModes(a);
    p.sizes = a.GetInts("sizes");
    p.scales = a.GetDoubles("scales");
    if (a.Has("roi_start")) p.roi_start = a.GetDoubles("roi_start");
    if (a.Has("roi_end")) p.roi_end = a.GetDoubles("roi_end");
    return {topi::resize(in[0], p)};
  });
  r.SetCompute("vm.resize_shape", ResizeShape);
  r.SetCompute("vm.resize", VMResize);
  r.SetCompute("image.grid_sample", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::grid_sample(in[0], in[1], a.GetString("mode", "linear"), a.GetString("padding_mode", "zeros"),
                              a.GetInt("align_corners", 0) != 0)};
  });
  r.SetCompute("vision.nms", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::non_max_suppression(in[0], in[1], in[2], in[3], in[4], a.GetInt("center_point_box", 0) != 0,
                                      a.GetInt("has_score_threshold", 0) != 0)};
  });
  r.SetCompute("vision.nms_indices", [](const Attrs&, const Tensors& in, const Type&) -> Tensors {
    return {topi::non_max_suppression_indices(in[0], in[1])};
  });
}

}  // namespace tessera::graph_lower::detail
