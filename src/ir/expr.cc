// Node constructors (make) of ir/expr.h: argument checks and result dtypes.
#include "tessera/ir/expr.h"

#include "tessera/support/error.h"

namespace tessera::ir {

PrimExpr::PrimExpr(int value) : PrimExpr(IntImmNode::make(DataType::Int(32), value)) {}
PrimExpr::PrimExpr(float value) : PrimExpr(FloatImmNode::make(DataType::Float(32), value)) {}

PrimExpr IntImmNode::make(DataType t, int64_t value) {
  TESSERA_ICHECK(t.is_scalar() && (t.is_int() || t.is_uint() || t.is_bool()),
                 "IntImm needs a scalar int / uint / bool dtype, got ", t.str());
  return PrimExpr(std::make_shared<const IntImmNode>(t, value));
}

PrimExpr FloatImmNode::make(DataType t, double value) {
  TESSERA_ICHECK(t.is_scalar() && (t.is_float() || t.is_bfloat16()),
                 "FloatImm needs a scalar float dtype, got ", t.str());
  return PrimExpr(std::make_shared<const FloatImmNode>(t, value));
}

PrimExpr StringImmNode::make(std::string value) {
  return PrimExpr(std::make_shared<const StringImmNode>(std::move(value)));
}

Var::Var(std::string name_hint, DataType dtype)
    : PrimExpr(std::make_shared<const VarNode>(std::move(name_hint), dtype)) {}

Var Var::copy_with_suffix(const std::string& suffix) const {
  return Var(get_var()->name_hint + suffix, dtype());
}

namespace {
constexpr bool IsCompare(ExprKind k) {
  return k == ExprKind::kEQ || k == ExprKind::kNE || k == ExprKind::kLT || k == ExprKind::kLE ||
         k == ExprKind::kGT || k == ExprKind::kGE;
}
constexpr bool IsLogic(ExprKind k) { return k == ExprKind::kAnd || k == ExprKind::kOr; }
}  // namespace

template <ExprKind K>
PrimExpr BinaryNode<K>::make(PrimExpr a, PrimExpr b) {
  TESSERA_ICHECK(a.defined() && b.defined(), "binary operand undefined");
  TESSERA_ICHECK(a.dtype() == b.dtype(), "binary operands of different dtypes: ", a.dtype().str(),
                 " and ", b.dtype().str(), "; insert a Cast");
  DataType t = a.dtype();
  if constexpr (IsCompare(K)) {
    t = DataType::Bool(a.dtype().lanes());
  } else if constexpr (IsLogic(K)) {
    TESSERA_ICHECK(a.dtype().is_bool(), "And / Or need bool operands, got ", a.dtype().str());
  }
  return PrimExpr(std::make_shared<const BinaryNode<K>>(t, std::move(a), std::move(b)));
}

template struct BinaryNode<ExprKind::kAdd>;
template struct BinaryNode<ExprKind::kSub>;
template struct BinaryNode<ExprKind::kMul>;
template struct BinaryNode<ExprKind::kDiv>;
template struct BinaryNode<ExprKind::kMod>;
template struct BinaryNode<ExprKind::kFloorDiv>;
template struct BinaryNode<ExprKind::kFloorMod>;
template struct BinaryNode<ExprKind::kMin>;
template struct BinaryNode<ExprKind::kMax>;
template struct BinaryNode<ExprKind::kEQ>;
template struct BinaryNode<ExprKind::kNE>;
template struct BinaryNode<ExprKind::kLT>;
template struct BinaryNode<ExprKind::kLE>;
template struct BinaryNode<ExprKind::kGT>;
template struct BinaryNode<ExprKind::kGE>;
template struct BinaryNode<ExprKind::kAnd>;
template struct BinaryNode<ExprKind::kOr>;

PrimExpr NotNode::make(PrimExpr a) {
  TESSERA_ICHECK(a.defined() && a.dtype().is_bool(), "Not needs a bool operand");
  DataType t = a.dtype();
  return PrimExpr(std::make_shared<const NotNode>(t, std::move(a)));
}

PrimExpr SelectNode::make(PrimExpr condition, PrimExpr true_value, PrimExpr false_value) {
  TESSERA_ICHECK(condition.defined() && true_value.defined() && false_value.defined(),
                 "Select operand undefined");
  TESSERA_ICHECK(condition.dtype().is_bool(), "Select condition must be bool, got ",
                 condition.dtype().str());
  TESSERA_ICHECK(true_value.dtype() == false_value.dtype(), "Select branches differ in dtype: ",
                 true_value.dtype().str(), " vs ", false_value.dtype().str());
  TESSERA_ICHECK(condition.dtype().lanes() == 1 ||
                     condition.dtype().lanes() == true_value.dtype().lanes(),
                 "Select condition lanes do not match the value lanes");
  DataType t = true_value.dtype();
  return PrimExpr(std::make_shared<const SelectNode>(t, std::move(condition), std::move(true_value),
                                                     std::move(false_value)));
}

PrimExpr CastNode::make(DataType t, PrimExpr value) {
  TESSERA_ICHECK(value.defined(), "Cast of undefined value");
  TESSERA_ICHECK(t.lanes() == value.dtype().lanes(), "Cast changes lanes: ", value.dtype().str(),
                 " -> ", t.str());
  return PrimExpr(std::make_shared<const CastNode>(t, std::move(value)));
}

PrimExpr CallNode::make(DataType t, std::string op, std::vector<PrimExpr> args) {
  TESSERA_ICHECK(!op.empty(), "Call needs an intrinsic name");
  for (const auto& a : args) TESSERA_ICHECK(a.defined(), "Call ", op, ": undefined argument");
  return PrimExpr(std::make_shared<const CallNode>(t, std::move(op), std::move(args)));
}

PrimExpr RampNode::make(PrimExpr base, PrimExpr stride, int lanes) {
  TESSERA_ICHECK(base.defined() && stride.defined(), "Ramp operand undefined");
  TESSERA_ICHECK(lanes > 1, "Ramp needs at least 2 lanes, got ", lanes);
  TESSERA_ICHECK(base.dtype().is_scalar() && base.dtype() == stride.dtype(),
                 "Ramp base and stride must be scalars of one dtype");
  DataType t = base.dtype().with_lanes(lanes);
  return PrimExpr(std::make_shared<const RampNode>(t, std::move(base), std::move(stride), lanes));
}

PrimExpr BroadcastNode::make(PrimExpr value, int lanes) {
  TESSERA_ICHECK(value.defined(), "Broadcast of undefined value");
  TESSERA_ICHECK(lanes > 1, "Broadcast needs at least 2 lanes, got ", lanes);
  TESSERA_ICHECK(value.dtype().is_scalar(), "Broadcast of a vector ", value.dtype().str());
  DataType t = value.dtype().with_lanes(lanes);
  return PrimExpr(std::make_shared<const BroadcastNode>(t, std::move(value), lanes));
}

PrimExpr LetNode::make(Var var, PrimExpr value, PrimExpr body) {
  TESSERA_ICHECK(var.defined() && value.defined() && body.defined(), "Let operand undefined");
  TESSERA_ICHECK(var.dtype() == value.dtype(), "Let value dtype ", value.dtype().str(),
                 " differs from the variable's ", var.dtype().str());
  DataType t = body.dtype();
  return PrimExpr(std::make_shared<const LetNode>(t, std::move(var), std::move(value), std::move(body)));
}

}  // namespace tessera::ir
