#include "tessera/topi/logical.h"

#include "tessera/support/error.h"
#include "tessera/topi/elemwise.h"
#include "tessera/topi/tags.h"

namespace tessera::topi {

namespace {
void CheckBool(const Tensor& t, const char* op) {
  TESSERA_CHECK(t.dtype().is_bool(), op, " needs bool tensors, got ", t.dtype().str(), " (", t.name(), ")");
}
}  // namespace

Tensor equal(const Tensor& a, const Tensor& b) {
  return BroadcastBinary(a, b, [](PrimExpr x, PrimExpr y) { return x == y; }, "T_equal");
}
Tensor not_equal(const Tensor& a, const Tensor& b) {
  return BroadcastBinary(a, b, [](PrimExpr x, PrimExpr y) { return x != y; }, "T_not_equal");
}
Tensor less(const Tensor& a, const Tensor& b) {
  return BroadcastBinary(a, b, [](PrimExpr x, PrimExpr y) { return x < y; }, "T_less");
}
Tensor less_equal(const Tensor& a, const Tensor& b) {
  return BroadcastBinary(a, b, [](PrimExpr x, PrimExpr y) { return x <= y; }, "T_less_equal");
}
Tensor greater(const Tensor& a, const Tensor& b) {
  return BroadcastBinary(a, b, [](PrimExpr x, PrimExpr y) { return x > y; }, "T_greater");
}
Tensor greater_equal(const Tensor& a, const Tensor& b) {
  return BroadcastBinary(a, b, [](PrimExpr x, PrimExpr y) { return x >= y; }, "T_greater_equal");
}

Tensor logical_and(const Tensor& a, const Tensor& b) {
  CheckBool(a, "logical_and");
  return BroadcastBinary(a, b, [](PrimExpr x, PrimExpr y) { return x && y; }, "T_logical_and");
}
Tensor logical_or(const Tensor& a, const Tensor& b) {
  CheckBool(a, "logical_or");
  return BroadcastBinary(a, b, [](PrimExpr x, PrimExpr y) { return x || y; }, "T_logical_or");
}
Tensor logical_xor(const Tensor& a, const Tensor& b) {
  CheckBool(a, "logical_xor");
  return BroadcastBinary(a, b, [](PrimExpr x, PrimExpr y) { return x != y; }, "T_logical_xor");
}
Tensor logical_not(const Tensor& x) {
  CheckBool(x, "logical_not");
  return Unary(x, [](PrimExpr v) { return !v; }, "T_logical_not");
}

namespace {
Tensor IntBinary(const Tensor& a, const Tensor& b, PrimExpr (*f)(PrimExpr, PrimExpr), const std::string& name) {
  TESSERA_CHECK((a.dtype().is_int() || a.dtype().is_uint()) && a.dtype() == b.dtype(), name,
                " needs integer tensors of one dtype, got ", a.dtype().str(), " and ", b.dtype().str());
  return BroadcastBinary(a, b, [f](PrimExpr x, PrimExpr y) { return f(x, y); }, "T_" + name);
}
}  // namespace

Tensor bitwise_and(const Tensor& a, const Tensor& b) { return IntBinary(a, b, &ir::bitwise_and, "bitwise_and"); }
Tensor bitwise_or(const Tensor& a, const Tensor& b) { return IntBinary(a, b, &ir::bitwise_or, "bitwise_or"); }
Tensor bitwise_xor(const Tensor& a, const Tensor& b) { return IntBinary(a, b, &ir::bitwise_xor, "bitwise_xor"); }
Tensor shift_left(const Tensor& a, const Tensor& b) { return IntBinary(a, b, &ir::shift_left, "shift_left"); }
Tensor shift_right(const Tensor& a, const Tensor& b) { return IntBinary(a, b, &ir::shift_right, "shift_right"); }
Tensor bitwise_not(const Tensor& x) {
  TESSERA_CHECK(x.dtype().is_int() || x.dtype().is_uint(), "bitwise_not needs an integer tensor, got ",
                x.dtype().str());
  return te::compute(
      x.shape(), [&](const std::vector<Var>& i) { return ir::bitwise_not(x(AsExprs(i))); }, "T_bitwise_not",
      tag::kElemWise);
}

Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y) {
  CheckBool(cond, "where (condition)");
  TESSERA_CHECK(x.dtype() == y.dtype(), "where: x and y dtypes differ (", x.dtype().str(), " vs ", y.dtype().str(),
                ")");
  // Symbolic extents broadcast as in BroadcastBinary (a where over a run-time-shaped tensor, run by the VM).
  const std::vector<PrimExpr> out = BroadcastExtents(BroadcastExtents(cond.shape(), x.shape()), y.shape());
  const char* tg =
      SameExtents(cond.shape(), out) && SameExtents(x.shape(), out) && SameExtents(y.shape(), out) ? tag::kElemWise
                                                                                                    : tag::kBroadcast;
  return te::compute(
      out,
      [&](const std::vector<Var>& i) {
        return ir::select(BroadcastRead(cond, i), BroadcastRead(x, i), BroadcastRead(y, i));
      },
      "T_where", tg);
}

Tensor mod(const Tensor& a, const Tensor& b, bool fmod) {
  if (!fmod) {
    TESSERA_CHECK(!a.dtype().is_float(), "mod with fmod=0 needs integer tensors, got ", a.dtype().str(),
                  " (use fmod=1 for floats)");
    return BroadcastBinary(a, b, [](PrimExpr x, PrimExpr y) { return ir::floormod(x, y); }, "T_mod");
  }
  return BroadcastBinary(a, b, [](PrimExpr x, PrimExpr y) { return ir::truncmod(x, y); }, "T_fmod");
}

}  // namespace tessera::topi
