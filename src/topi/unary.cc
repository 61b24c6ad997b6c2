#include "tessera/topi/unary.h"

#include <limits>

#include "tessera/support/error.h"

namespace tessera::topi {

namespace {
PrimExpr Const(const PrimExpr& like, double v) { return ir::make_const(like.dtype(), v); }
PrimExpr Intrin(const char* name, const PrimExpr& v) { return ir::CallNode::make(v.dtype(), name, {v}); }
}  // namespace

Tensor float_unary(const Tensor& x, const std::string& op) {
  TESSERA_CHECK(x.dtype().is_float(), op, " needs a float tensor, got ", x.dtype().str(), " (", x.name(), ")");
  std::function<PrimExpr(PrimExpr)> f;
  if (op == "erf") f = [](PrimExpr v) { return ir::erf(v); };
  else if (op == "floor") f = [](PrimExpr v) { return ir::floor(v); };
  else if (op == "ceil") f = [](PrimExpr v) { return ir::ceil(v); };
  else if (op == "round") f = [](PrimExpr v) { return ir::round(v); };
  else if (op == "reciprocal") f = [](PrimExpr v) { return Const(v, 1.0) / v; };
  else if (op == "sin" || op == "cos" || op == "tan" || op == "asin" || op == "acos" || op == "atan" ||
           op == "sinh" || op == "cosh" || op == "asinh" || op == "acosh" || op == "atanh") {
    // The LLVM code generator maps sin / cos to LLVM intrinsics and the others to libm.
    std::string name = op;
    f = [name](PrimExpr v) { return Intrin(name.c_str(), v); };
  } else {
    TESSERA_THROW(UserError, "float_unary: unknown function '", op, "'");
  }
  return Unary(x, f, "T_" + op);
}

Tensor sign(const Tensor& x) {
  return Unary(
      x,
      [](PrimExpr v) {
        return ir::select(v > Const(v, 0), Const(v, 1), ir::select(v < Const(v, 0), Const(v, -1), Const(v, 0)));
      },
      "T_sign");
}

Tensor isnan(const Tensor& x) {
  TESSERA_CHECK(x.dtype().is_float(), "isnan needs a float tensor, got ", x.dtype().str());
  return Unary(x, [](PrimExpr v) { return v != v; }, "T_isnan");
}

Tensor isinf(const Tensor& x, bool detect_positive, bool detect_negative) {
  TESSERA_CHECK(x.dtype().is_float(), "isinf needs a float tensor, got ", x.dtype().str());
  return Unary(
      x,
      [&](PrimExpr v) {
        const double inf = std::numeric_limits<double>::infinity();
        PrimExpr pos = v == Const(v, inf), neg = v == Const(v, -inf);
        if (detect_positive && detect_negative) return pos || neg;
        if (detect_positive) return pos;
        if (detect_negative) return neg;
        return ir::make_const(DataType::Bool(), int64_t{0}) && (v == v);
      },
      "T_isinf");
}

}  // namespace tessera::topi
