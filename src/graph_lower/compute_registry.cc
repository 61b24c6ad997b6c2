#include "tessera/graph_lower/compute_registry.h"

#include <map>
#include <mutex>

#include "computes.h"
#include "tessera/topi/util.h"
#include "tessera/support/error.h"

namespace tessera::graph_lower {

ir::PrimExpr DimExtent(const graph::Dim& d) {
  if (d.is_static()) return topi::Index(d.value());
  if (d.name() == "?")
    TESSERA_THROW(UnsupportedError, "an extent that no type relation could compute ('?') cannot be compiled; a kernel "
                  "needs every extent static or named by a symbolic dim");
  static std::mutex mu;
  static auto* vars = new std::map<std::string, ir::Var>;
  std::lock_guard<std::mutex> lock(mu);
  return vars->try_emplace(d.name(), ir::Var(d.name(), DataType::Int(32))).first->second;
}

std::vector<ir::PrimExpr> ShapeExtents(const graph::Shape& shape) {
  std::vector<ir::PrimExpr> out;
  for (const graph::Dim& d : shape) out.push_back(DimExtent(d));
  return out;
}

namespace detail {

std::vector<int64_t> StaticOutShape(const graph::Type& t) {
  const auto* tt = t ? t->as<graph::TensorTypeNode>() : nullptr;
  TESSERA_ICHECK(tt, "expected a tensor type, got ", graph::TypeStr(t));
  auto s = graph::StaticShape(tt->shape);
  TESSERA_ICHECK(s.has_value(), "expected a static shape, got ", graph::ShapeStr(tt->shape));
  return *s;
}

std::array<int64_t, 4> Padding4(const graph::Attrs& attrs) {
  std::vector<int64_t> p = attrs.GetInts("padding", {0, 0, 0, 0});
  if (p.size() == 1) return {p[0], p[0], p[0], p[0]};
  if (p.size() == 2) return {p[0], p[1], p[0], p[1]};
  TESSERA_CHECK(p.size() == 4, "padding must have 1, 2 or 4 values, got ", p.size());
  return {p[0], p[1], p[2], p[3]};
}

std::array<int64_t, 2> Pair(const graph::Attrs& attrs, const std::string& name, std::array<int64_t, 2> dflt) {
  if (!attrs.Has(name)) return dflt;
  std::vector<int64_t> v = attrs.GetInts(name);
  if (v.size() == 1) return {v[0], v[0]};
  TESSERA_CHECK(v.size() == 2, name, " must have 1 or 2 values, got ", v.size());
  return {v[0], v[1]};
}

topi::Conv2DParams ConvParamsOf(const graph::Attrs& attrs) {
  topi::Conv2DParams p;
  p.strides = Pair(attrs, "strides", {1, 1});
  p.dilation = Pair(attrs, "dilation", {1, 1});
  p.padding = Padding4(attrs);
  p.groups = attrs.GetInt("groups", 1);
  return p;
}

}  // namespace detail

void RegisterComputes() {
  static std::once_flag once;
  std::call_once(once, [] {
    graph::OpRegistry& r = graph::OpRegistry::Global();
    detail::RegisterNNComputes(r);
    detail::RegisterTensorComputes(r);
    detail::RegisterTransformComputes(r);
    detail::RegisterLayoutComputes(r);
    detail::RegisterLogicalComputes(r);
    detail::RegisterActivationComputes(r);
    detail::RegisterIndexingComputes(r);
    detail::RegisterImageComputes(r);
    detail::RegisterRandomComputes(r);
    detail::RegisterVMComputes(r);
    detail::RegisterDenseComputes(r);
    detail::RegisterWinogradComputes(r);
  });
}

std::vector<std::string> OpsWithCompute() {
  RegisterComputes();
  std::vector<std::string> out;
  const graph::OpRegistry& r = graph::OpRegistry::Global();
  for (const std::string& name : r.ListOps())
    if (r.GetCompute(name)) out.push_back(name);
  return out;
}

}  // namespace tessera::graph_lower
