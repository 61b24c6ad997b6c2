#include "tessera/topi/math.h"

#include "tessera/tir/float_format_cast.h"

#include "tessera/support/error.h"

namespace tessera::topi {

namespace {
void CheckFloat(const Tensor& x, const char* op) {
  TESSERA_CHECK(x.dtype().is_float(), op, " needs a float tensor, got ", x.dtype().str(), " (", x.name(), ")");
}
PrimExpr Const(const PrimExpr& like, double v) { return ir::make_const(like.dtype(), v); }
}  // namespace

Tensor exp(const Tensor& x) {
  CheckFloat(x, "exp");
  return Unary(x, [](PrimExpr v) { return ir::exp(v); }, "T_exp");
}
Tensor log(const Tensor& x) {
  CheckFloat(x, "log");
  return Unary(x, [](PrimExpr v) { return ir::log(v); }, "T_log");
}
Tensor sqrt(const Tensor& x) {
  CheckFloat(x, "sqrt");
  return Unary(x, [](PrimExpr v) { return ir::sqrt(v); }, "T_sqrt");
}
Tensor tanh(const Tensor& x) {
  CheckFloat(x, "tanh");
  return Unary(x, [](PrimExpr v) { return ir::tanh(v); }, "T_tanh");
}
Tensor sigmoid(const Tensor& x) {
  CheckFloat(x, "sigmoid");
  return Unary(x, [](PrimExpr v) { return ir::sigmoid(v); }, "T_sigmoid");
}
Tensor negative(const Tensor& x) {
  return Unary(x, [](PrimExpr v) { return -v; }, "T_negative");
}
Tensor abs(const Tensor& x) {
  if (x.dtype().is_float()) return Unary(x, [](PrimExpr v) { return ir::fabs(v); }, "T_abs");
  return Unary(x, [](PrimExpr v) { return ir::select(v < Const(v, 0), -v, v); }, "T_abs");
}
Tensor relu(const Tensor& x) {
  return Unary(x, [](PrimExpr v) { return ir::max(v, Const(v, 0)); }, "T_relu");
}
Tensor clip(const Tensor& x, double a_min, double a_max) {
  return Unary(
      x, [&](PrimExpr v) { return ir::min(ir::max(v, Const(v, a_min)), Const(v, a_max)); }, "T_clip");
}
Tensor hard_sigmoid(const Tensor& x, double alpha, double beta) {
  CheckFloat(x, "hard_sigmoid");
  return Unary(
      x,
      [&](PrimExpr v) {
        PrimExpr y = Const(v, alpha) * v + Const(v, beta);
        return ir::min(ir::max(y, Const(v, 0)), Const(v, 1));
      },
      "T_hard_sigmoid");
}
Tensor hard_swish(const Tensor& x) {
  CheckFloat(x, "hard_swish");
  return Unary(
      x,
      [&](PrimExpr v) {
        PrimExpr y = Const(v, 1.0 / 6.0) * v + Const(v, 0.5);
        return v * ir::min(ir::max(y, Const(v, 0)), Const(v, 1));
      },
      "T_hard_swish");
}
Tensor reinterpret(const Tensor& x, DataType dtype) {
  return Unary(x, [&](PrimExpr v) { return ir::reinterpret(dtype.with_lanes(v.dtype().lanes()), v); }, "T_reinterpret");
}

Tensor cast(const Tensor& x, DataType dtype, const tir::FloatCastOptions& options) {
  return Unary(x, [&](PrimExpr v) { return tir::CastStorageType(dtype, v, options); }, "T_cast");
}

}  // namespace tessera::topi
