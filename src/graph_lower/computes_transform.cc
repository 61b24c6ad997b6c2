// FComputes of the shape transforms and reductions.
#include "computes.h"
#include "tessera/support/error.h"
#include "tessera/graph_lower/compute_registry.h"
#include "tessera/ir/op.h"
#include "tessera/topi/elemwise.h"
#include "tessera/topi/tags.h"
#include "tessera/topi/util.h"
#include "tessera/topi/reduction.h"
#include "tessera/topi/transform.h"

namespace tessera::graph_lower::detail {

namespace {

using ReduceFn = Tensor (*)(const Tensor&, const std::vector<int64_t>&, bool);

graph::FCompute Reduce(ReduceFn f) {
  return [f](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    std::vector<int64_t> axes = a.GetInts("axis", {});
    const int64_t nd = in[0].ndim();
    if (a.GetInt("exclude", 0) != 0) {
      std::vector<bool> listed(nd, false);
      for (int64_t ax : axes) listed[topi::NormalizeAxis(ax, static_cast<int>(nd), "reduce")] = true;
      axes.clear();
      for (int64_t d = 0; d < nd; ++d)
        if (!listed[d]) axes.push_back(d);
      if (axes.empty()) return {topi::copy(in[0])};  // nothing to reduce
    }
    return {f(in[0], axes, a.GetInt("keepdims", 0) != 0)};
  };
}

topi::TakeMode ParseTakeMode(const std::string& mode) {
  if (mode == "clip") return topi::TakeMode::kClip;
  if (mode == "wrap") return topi::TakeMode::kWrap;
  if (mode == "raise") return topi::TakeMode::kRaise;
  return topi::TakeMode::kNormalize;  // "fast": no bounds handling asked; normalise + clamp is safe
}
bool IsStatic(const te::Tensor& t) {
  for (const ir::PrimExpr& e : t.shape())
    if (!e.as<ir::IntImmNode>()) return false;
  return true;
}

// Reshape to extents that may be symbolic: the row-major linear index of the output point, split
// over the input's extents.
te::Tensor SymbolicReshape(const te::Tensor& x, const std::vector<ir::PrimExpr>& shape) {
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& i) {
        ir::PrimExpr linear = topi::Index(0);
        for (size_t d = 0; d < shape.size(); ++d) linear = linear * shape[d] + i[d];
        std::vector<ir::PrimExpr> index(x.shape().size());
        for (size_t d = x.shape().size(); d-- > 0;) {
          index[d] = d == 0 ? linear : ir::floormod(linear, x.shape()[d]);
          if (d > 0) linear = ir::floordiv(linear, x.shape()[d]);
        }
        return x(index);
      },
      "T_reshape", topi::tag::kInjective);
}

}  // namespace

void RegisterTransformComputes(graph::OpRegistry& r) {
  r.SetCompute("reshape", [](const Attrs&, const Tensors& in, const Type& out) -> Tensors {
    // The type relation already resolved 0 / -1 entries of newshape.
    const auto* tt = out->as<graph::TensorTypeNode>();
    TESSERA_ICHECK(tt, "reshape's type is no tensor");
    if (!graph::StaticShape(tt->shape) || !IsStatic(in[0])) return {SymbolicReshape(in[0], ShapeExtents(tt->shape))};
    return {topi::reshape(in[0], StaticOutShape(out))};
  });
  r.SetCompute("arange", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    const DataType dtype = DataType::Parse(a.GetString("dtype"));
    const double start = a.GetDouble("start"), step = a.GetDouble("step");
    const ir::PrimExpr extent = in[0].shape().at(static_cast<size_t>(a.GetInt("axis")));
    return {te::compute(
        {extent},
        [&](const std::vector<ir::Var>& i) -> ir::PrimExpr {
          if (dtype.is_floating())
            return ir::cast(dtype, ir::make_const(DataType::Float(64), start) +
                                       ir::cast(DataType::Float(64), i[0]) * ir::make_const(DataType::Float(64), step));
          return ir::cast(dtype, ir::make_const(DataType::Int(64), static_cast<int64_t>(start)) +
                                     ir::cast(DataType::Int(64), i[0]) *
                                         ir::make_const(DataType::Int(64), static_cast<int64_t>(step)));
        },
        "T_arange", topi::tag::kInjective)};
  });
  r.SetCompute("transpose", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::transpose(in[0], a.GetInts("axes", {}))};
  });
  r.SetCompute("concatenate", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::concatenate(in, a.GetInt("axis", 0))};
  });
  r.SetCompute("take", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    topi::TakeMode mode = ParseTakeMode(a.GetString("mode", "clip"));
    if (!a.Has("axis")) return {topi::take(topi::reshape(in[0], {-1}), in[1], 0, mode)};
    return {topi::take(in[0], in[1], a.GetInt("axis"), mode)};
  });
  r.SetCompute("strided_slice", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    std::vector<int64_t> begin = a.GetInts("begin");
    std::vector<int64_t> strides = a.GetInts("strides", {});
    if (strides.size() == 1 && begin.size() > 1) strides.assign(begin.size(), strides[0]);
    return {topi::strided_slice(in[0], begin, a.GetInts("end"), strides, a.GetInts("axes", {}))};
  });
  r.SetCompute("expand_dims", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::expand_dims(in[0], a.GetInt("axis"), static_cast<int>(a.GetInt("num_newaxis", 1)))};
  });
  r.SetCompute("squeeze", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::squeeze(in[0], a.GetInts("axis", {}))};
  });
  r.SetCompute("sum", Reduce(&topi::sum));
  r.SetCompute("mean", Reduce(&topi::mean));
  r.SetCompute("max", Reduce(&topi::max));
  r.SetCompute("min", Reduce(&topi::min));
  r.SetCompute("prod", Reduce(&topi::prod));
  for (const char* name : {"cumsum", "cumprod"}) {
    const bool product = std::string(name) == "cumprod";
    r.SetCompute(name, [product](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
      auto f = product ? &topi::cumprod : &topi::cumsum;
      return {f(in[0], a.GetInt("axis", 0), a.GetInt("exclusive", 0) != 0, a.GetInt("reverse", 0) != 0)};
    });
  }
}

}  // namespace tessera::graph_lower::detail
