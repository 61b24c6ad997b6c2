// Visitor and mutator over PrimExpr (Halide's IRVisitor / IRMutator style):
// a pass overrides only the nodes it cares about.
//
// Nodes defined by higher layers (tir's BufferLoad, te's Reduce) reach
// VisitExprExtension_; tir/functor.h extends these classes to dispatch them.
#pragma once

#include "tessera/ir/expr.h"
#include "tessera/support/error.h"

namespace tessera::ir {

class ExprVisitor {
 public:
  virtual ~ExprVisitor() = default;
  virtual void VisitExpr(const PrimExpr& e);

 protected:
  virtual void VisitExpr_(const IntImmNode* op) {}
  virtual void VisitExpr_(const FloatImmNode* op) {}
  virtual void VisitExpr_(const StringImmNode* op) {}
  virtual void VisitExpr_(const VarNode* op) {}
  virtual void VisitBinary_(const PrimExprNode* op, const PrimExpr& a, const PrimExpr& b);
  virtual void VisitExpr_(const NotNode* op);
  virtual void VisitExpr_(const SelectNode* op);
  virtual void VisitExpr_(const CastNode* op);
  virtual void VisitExpr_(const CallNode* op);
  virtual void VisitExpr_(const RampNode* op);
  virtual void VisitExpr_(const BroadcastNode* op);
  virtual void VisitExpr_(const LetNode* op);
  /// BufferLoad, Reduce: nodes of higher layers. The default visits nothing.
  virtual void VisitExprExtension_(const PrimExpr& e) {}
};

/// Rebuilds an expression bottom-up; returns the same node when no child changed.
class ExprMutator {
 public:
  virtual ~ExprMutator() = default;
  virtual PrimExpr VisitExpr(const PrimExpr& e);

 protected:
  virtual PrimExpr VisitExpr_(const IntImmNode* op, const PrimExpr& e) { return e; }
  virtual PrimExpr VisitExpr_(const FloatImmNode* op, const PrimExpr& e) { return e; }
  virtual PrimExpr VisitExpr_(const StringImmNode* op, const PrimExpr& e) { return e; }
  virtual PrimExpr VisitExpr_(const VarNode* op, const PrimExpr& e) { return e; }
  /// All BinaryNode kinds: mutates a and b and rebuilds with the same kind.
  virtual PrimExpr VisitBinary_(const PrimExprNode* op, const PrimExpr& a, const PrimExpr& b, const PrimExpr& e);
  virtual PrimExpr VisitExpr_(const NotNode* op, const PrimExpr& e);
  virtual PrimExpr VisitExpr_(const SelectNode* op, const PrimExpr& e);
  virtual PrimExpr VisitExpr_(const CastNode* op, const PrimExpr& e);
  virtual PrimExpr VisitExpr_(const CallNode* op, const PrimExpr& e);
  virtual PrimExpr VisitExpr_(const RampNode* op, const PrimExpr& e);
  virtual PrimExpr VisitExpr_(const BroadcastNode* op, const PrimExpr& e);
  virtual PrimExpr VisitExpr_(const LetNode* op, const PrimExpr& e);
  virtual PrimExpr VisitExprExtension_(const PrimExpr& e) { return e; }
};

/// Rebuilds a binary node of `kind` (one of the BinaryNode kinds) from new operands.
PrimExpr MakeBinary(ExprKind kind, PrimExpr a, PrimExpr b);
/// The operands of a BinaryNode-kind expression; false for other kinds.
bool GetBinaryOperands(const PrimExpr& e, PrimExpr* a, PrimExpr* b);

}  // namespace tessera::ir
