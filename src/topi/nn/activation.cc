#include "tessera/topi/nn/activation.h"

#include <cmath>

#include "tessera/support/error.h"
#include "tessera/topi/broadcast.h"
#include "tessera/topi/elemwise.h"
#include "tessera/topi/tags.h"

namespace tessera::topi {

namespace {
void CheckFloat(const Tensor& x, const char* op) {
  TESSERA_CHECK(x.dtype().is_float(), op, " needs a float tensor, got ", x.dtype().str(), " (", x.name(), ")");
}
PrimExpr C(const PrimExpr& like, double v) { return ir::make_const(like.dtype(), v); }
}  // namespace

Tensor leaky_relu(const Tensor& x, double alpha) {
  CheckFloat(x, "leaky_relu");
  return Unary(x, [&](PrimExpr v) { return ir::select(v < C(v, 0), C(v, alpha) * v, v); }, "T_leaky_relu");
}

Tensor elu(const Tensor& x, double alpha) {
  CheckFloat(x, "elu");
  return Unary(
      x, [&](PrimExpr v) { return ir::select(v < C(v, 0), C(v, alpha) * (ir::exp(v) - C(v, 1)), v); }, "T_elu");
}

Tensor selu(const Tensor& x, double alpha, double gamma) {
  CheckFloat(x, "selu");
  return Unary(
      x,
      [&](PrimExpr v) {
        return C(v, gamma) * ir::select(v <= C(v, 0), C(v, alpha) * (ir::exp(v) - C(v, 1)), v);
      },
      "T_selu");
}

Tensor celu(const Tensor& x, double alpha) {
  CheckFloat(x, "celu");
  return Unary(
      x,
      [&](PrimExpr v) {
        return ir::max(v, C(v, 0)) + ir::min(C(v, 0), C(v, alpha) * (ir::exp(v / C(v, alpha)) - C(v, 1)));
      },
      "T_celu");
}

Tensor thresholded_relu(const Tensor& x, double alpha) {
  CheckFloat(x, "thresholded_relu");
  return Unary(x, [&](PrimExpr v) { return ir::select(v > C(v, alpha), v, C(v, 0)); }, "T_thresholded_relu");
}

namespace {
PrimExpr Softplus(PrimExpr v) { return ir::max(v, C(v, 0)) + ir::log(C(v, 1) + ir::exp(-ir::fabs(v))); }
}  // namespace

Tensor softplus(const Tensor& x) {
  CheckFloat(x, "softplus");
  return Unary(x, Softplus, "T_softplus");
}

Tensor softsign(const Tensor& x) {
  CheckFloat(x, "softsign");
  return Unary(x, [](PrimExpr v) { return v / (C(v, 1) + ir::fabs(v)); }, "T_softsign");
}

Tensor mish(const Tensor& x) {
  CheckFloat(x, "mish");
  return Unary(x, [](PrimExpr v) { return v * ir::tanh(Softplus(v)); }, "T_mish");
}

Tensor gelu(const Tensor& x, bool approximate_tanh) {
  CheckFloat(x, "gelu");
  if (approximate_tanh) {
    const double k = std::sqrt(2.0 / M_PI);
    return Unary(
        x,
        [&](PrimExpr v) {
          PrimExpr inner = C(v, k) * (v + C(v, 0.044715) * v * v * v);
          return C(v, 0.5) * v * (C(v, 1) + ir::tanh(inner));
        },
        "T_gelu");
  }
  return Unary(
      x, [](PrimExpr v) { return C(v, 0.5) * v * (C(v, 1) + ir::erf(v * C(v, M_SQRT1_2))); }, "T_gelu");
}

Tensor swish(const Tensor& x, double alpha) {
  CheckFloat(x, "swish");
  return Unary(x, [&](PrimExpr v) { return v * ir::sigmoid(C(v, alpha) * v); }, "T_swish");
}

Tensor shrink(const Tensor& x, double lambd, double bias) {
  return Unary(
      x,
      [&](PrimExpr v) {
        return ir::select(v < C(v, -lambd), v + C(v, bias), ir::select(v > C(v, lambd), v - C(v, bias), C(v, 0)));
      },
      "T_shrink");
}

Tensor prelu(const Tensor& x, const Tensor& slope) {
  CheckFloat(x, "prelu");
  return BroadcastBinary(
      x, slope, [](PrimExpr v, PrimExpr s) { return ir::select(v < C(v, 0), s * v, v); }, "T_prelu");
}

}  // namespace tessera::topi
