// Dispatch of ExprVisitor / ExprMutator (ir/expr_functor.h).
#include "tessera/ir/expr_functor.h"

#include <algorithm>

namespace tessera::ir {

PrimExpr MakeBinary(ExprKind kind, PrimExpr a, PrimExpr b) {
  switch (kind) {
    case ExprKind::kAdd: return AddNode::make(std::move(a), std::move(b));
    case ExprKind::kSub: return SubNode::make(std::move(a), std::move(b));
    case ExprKind::kMul: return MulNode::make(std::move(a), std::move(b));
    case ExprKind::kDiv: return DivNode::make(std::move(a), std::move(b));
    case ExprKind::kMod: return ModNode::make(std::move(a), std::move(b));
    case ExprKind::kFloorDiv: return FloorDivNode::make(std::move(a), std::move(b));
    case ExprKind::kFloorMod: return FloorModNode::make(std::move(a), std::move(b));
    case ExprKind::kMin: return MinNode::make(std::move(a), std::move(b));
    case ExprKind::kMax: return MaxNode::make(std::move(a), std::move(b));
    case ExprKind::kEQ: return EQNode::make(std::move(a), std::move(b));
    case ExprKind::kNE: return NENode::make(std::move(a), std::move(b));
    case ExprKind::kLT: return LTNode::make(std::move(a), std::move(b));
    case ExprKind::kLE: return LENode::make(std::move(a), std::move(b));
    case ExprKind::kGT: return GTNode::make(std::move(a), std::move(b));
    case ExprKind::kGE: return GENode::make(std::move(a), std::move(b));
    case ExprKind::kAnd: return AndNode::make(std::move(a), std::move(b));
    case ExprKind::kOr: return OrNode::make(std::move(a), std::move(b));
    default: break;
  }
  TESSERA_THROW(InternalError, "MakeBinary: kind ", static_cast<int>(kind), " is not binary");
}

namespace {
template <ExprKind K>
bool Operands(const PrimExpr& e, PrimExpr* a, PrimExpr* b) {
  auto* n = static_cast<const BinaryNode<K>*>(e.get());
  *a = n->a;
  *b = n->b;
  return true;
}
}  // namespace

bool GetBinaryOperands(const PrimExpr& e, PrimExpr* a, PrimExpr* b) {
  if (!e.defined()) return false;
  switch (e->kind) {
#define TESSERA_BIN(K) \
  case ExprKind::K: return Operands<ExprKind::K>(e, a, b);
    TESSERA_BIN(kAdd) TESSERA_BIN(kSub) TESSERA_BIN(kMul) TESSERA_BIN(kDiv) TESSERA_BIN(kMod)
    TESSERA_BIN(kFloorDiv) TESSERA_BIN(kFloorMod) TESSERA_BIN(kMin) TESSERA_BIN(kMax)
    TESSERA_BIN(kEQ) TESSERA_BIN(kNE) TESSERA_BIN(kLT) TESSERA_BIN(kLE) TESSERA_BIN(kGT)
    TESSERA_BIN(kGE) TESSERA_BIN(kAnd) TESSERA_BIN(kOr)
#undef TESSERA_BIN
    default: return false;
  }
}

void ExprVisitor::VisitExpr(const PrimExpr& e) {
  TESSERA_ICHECK(e.defined(), "ExprVisitor: undefined expression");
  const PrimExprNode* n = e.get();
  PrimExpr a, b;
  if (GetBinaryOperands(e, &a, &b)) return VisitBinary_(n, a, b);
  switch (n->kind) {
    case ExprKind::kIntImm: return VisitExpr_(static_cast<const IntImmNode*>(n));
    case ExprKind::kFloatImm: return VisitExpr_(static_cast<const FloatImmNode*>(n));
    case ExprKind::kStringImm: return VisitExpr_(static_cast<const StringImmNode*>(n));
    case ExprKind::kVar: return VisitExpr_(static_cast<const VarNode*>(n));
    case ExprKind::kNot: return VisitExpr_(static_cast<const NotNode*>(n));
    case ExprKind::kSelect: return VisitExpr_(static_cast<const SelectNode*>(n));
    case ExprKind::kCast: return VisitExpr_(static_cast<const CastNode*>(n));
    case ExprKind::kCall: return VisitExpr_(static_cast<const CallNode*>(n));
    case ExprKind::kRamp: return VisitExpr_(static_cast<const RampNode*>(n));
    case ExprKind::kBroadcast: return VisitExpr_(static_cast<const BroadcastNode*>(n));
    case ExprKind::kLet: return VisitExpr_(static_cast<const LetNode*>(n));
    default: return VisitExprExtension_(e);
  }
}

void ExprVisitor::VisitBinary_(const PrimExprNode*, const PrimExpr& a, const PrimExpr& b) {
  VisitExpr(a);
  VisitExpr(b);
}
void ExprVisitor::VisitExpr_(const NotNode* op) { VisitExpr(op->a); }
void ExprVisitor::VisitExpr_(const SelectNode* op) {
  VisitExpr(op->condition);
  VisitExpr(op->true_value);
  VisitExpr(op->false_value);
}
void ExprVisitor::VisitExpr_(const CastNode* op) { VisitExpr(op->value); }
void ExprVisitor::VisitExpr_(const CallNode* op) {
  for (const auto& a : op->args) VisitExpr(a);
}
void ExprVisitor::VisitExpr_(const RampNode* op) {
  VisitExpr(op->base);
  VisitExpr(op->stride);
}
void ExprVisitor::VisitExpr_(const BroadcastNode* op) { VisitExpr(op->value); }
void ExprVisitor::VisitExpr_(const LetNode* op) {
  VisitExpr(op->value);
  VisitExpr(op->body);
}

PrimExpr ExprMutator::VisitExpr(const PrimExpr& e) {
  TESSERA_ICHECK(e.defined(), "ExprMutator: undefined expression");
  const PrimExprNode* n = e.get();
  PrimExpr a, b;
  if (GetBinaryOperands(e, &a, &b)) return VisitBinary_(n, a, b, e);
  switch (n->kind) {
    case ExprKind::kIntImm: return VisitExpr_(static_cast<const IntImmNode*>(n), e);
    case ExprKind::kFloatImm: return VisitExpr_(static_cast<const FloatImmNode*>(n), e);
    case ExprKind::kStringImm: return VisitExpr_(static_cast<const StringImmNode*>(n), e);
    case ExprKind::kVar: return VisitExpr_(static_cast<const VarNode*>(n), e);
    case ExprKind::kNot: return VisitExpr_(static_cast<const NotNode*>(n), e);
    case ExprKind::kSelect: return VisitExpr_(static_cast<const SelectNode*>(n), e);
    case ExprKind::kCast: return VisitExpr_(static_cast<const CastNode*>(n), e);
    case ExprKind::kCall: return VisitExpr_(static_cast<const CallNode*>(n), e);
    case ExprKind::kRamp: return VisitExpr_(static_cast<const RampNode*>(n), e);
    case ExprKind::kBroadcast: return VisitExpr_(static_cast<const BroadcastNode*>(n), e);
    case ExprKind::kLet: return VisitExpr_(static_cast<const LetNode*>(n), e);
    default: return VisitExprExtension_(e);
  }
}

PrimExpr ExprMutator::VisitBinary_(const PrimExprNode* op, const PrimExpr& a, const PrimExpr& b,
                                   const PrimExpr& e) {
  PrimExpr na = VisitExpr(a);
  PrimExpr nb = VisitExpr(b);
  if (na.same_as(a) && nb.same_as(b)) return e;
  return MakeBinary(op->kind, std::move(na), std::move(nb));
}

PrimExpr ExprMutator::VisitExpr_(const NotNode* op, const PrimExpr& e) {
  PrimExpr a = VisitExpr(op->a);
  return a.same_as(op->a) ? e : NotNode::make(a);
}

PrimExpr ExprMutator::VisitExpr_(const SelectNode* op, const PrimExpr& e) {
  PrimExpr c = VisitExpr(op->condition);
  PrimExpr t = VisitExpr(op->true_value);
  PrimExpr f = VisitExpr(op->false_value);
  if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) return e;
  return SelectNode::make(c, t, f);
}

PrimExpr ExprMutator::VisitExpr_(const CastNode* op, const PrimExpr& e) {
  PrimExpr v = VisitExpr(op->value);
  if (v.same_as(op->value)) return e;
  // The operand may have been vectorized: keep the cast's element type.
  return CastNode::make(op->dtype.with_lanes(v.dtype().lanes()), v);
}

PrimExpr ExprMutator::VisitExpr_(const CallNode* op, const PrimExpr& e) {
  std::vector<PrimExpr> args;
  bool changed = false;
  int lanes = 1;
  for (const auto& a : op->args) {
    args.push_back(VisitExpr(a));
    changed |= !args.back().same_as(a);
    lanes = std::max(lanes, args.back().dtype().lanes());
  }
  if (!changed) return e;
  DataType t = op->dtype.lanes() == 1 && lanes > 1 ? op->dtype.with_lanes(lanes) : op->dtype;
  return CallNode::make(t, op->op, std::move(args));
}

PrimExpr ExprMutator::VisitExpr_(const RampNode* op, const PrimExpr& e) {
  PrimExpr b = VisitExpr(op->base);
  PrimExpr s = VisitExpr(op->stride);
  if (b.same_as(op->base) && s.same_as(op->stride)) return e;
  return RampNode::make(b, s, op->lanes);
}

PrimExpr ExprMutator::VisitExpr_(const BroadcastNode* op, const PrimExpr& e) {
  PrimExpr v = VisitExpr(op->value);
  return v.same_as(op->value) ? e : BroadcastNode::make(v, op->lanes);
}

PrimExpr ExprMutator::VisitExpr_(const LetNode* op, const PrimExpr& e) {
  PrimExpr v = VisitExpr(op->value);
  PrimExpr b = VisitExpr(op->body);
  if (v.same_as(op->value) && b.same_as(op->body)) return e;
  return LetNode::make(op->var, v, b);
}

}  // namespace tessera::ir
