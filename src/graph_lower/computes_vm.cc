// FComputes of the VM's data-dependent shape ops (graph/op/vm.cc): vm.reshape_shape, the shape
// function of a Reshape to a run-time shape, and vm.full, a tensor of a run-time shape. (vm.reshape
// is a ReshapeTensor of the VM: no kernel.)
#include "computes.h"
#include "tessera/graph_lower/compute_registry.h"
#include "tessera/ir/op.h"
#include "tessera/support/error.h"
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
  // x's dim d at a run-time position i (a select chain over the rank; 0 past it).
  auto dim_at = [&](const ir::PrimExpr& i) {
    ir::PrimExpr v = I64(0);
    for (size_t d = xs.size(); d-- > 0;) v = ir::select(i == topi::Index(static_cast<int64_t>(d)), ir::cast(kI64, xs[d]), v);
    return v;
  };
  te::Tensor resolved = te::compute(
      {r},
      [&](const std::vector<ir::Var>& i) {
        ir::PrimExpr v = s({i[0]});
        return allowzero ? v : ir::select(v == I64(0), dim_at(i[0]), v);
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
  const double value = a.GetDouble("value");
  ir::PrimExpr v = tt->dtype.is_floating() ? ir::cast(tt->dtype, ir::make_const(DataType::Float(64), value))
                                           : ir::cast(tt->dtype, I64(static_cast<int64_t>(value)));
  return {te::compute(
      ShapeExtents(tt->shape), [&](const std::vector<ir::Var>&) { return v; }, "T_full", topi::tag::kElemWise)};
}

}  // namespace

void RegisterVMComputes(graph::OpRegistry& r) {
  r.SetCompute("vm.reshape_shape", ReshapeShape);
  r.SetCompute("vm.full", Full);
}

}  // namespace tessera::graph_lower::detail
