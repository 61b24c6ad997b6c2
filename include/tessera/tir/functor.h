// Visitors and mutators over TensorIR statements and expressions.
// A pass derives from StmtExprVisitor / StmtExprMutator and overrides only what it needs.
#pragma once

#include "tessera/ir/expr_functor.h"
#include "tessera/tir/function.h"
#include "tessera/tir/stmt.h"

namespace tessera::tir {

class StmtExprVisitor : public ir::ExprVisitor {
 public:
  virtual void VisitStmt(const Stmt& s);
  using ir::ExprVisitor::VisitExpr;

 protected:
  using ir::ExprVisitor::VisitExpr_;
  virtual void VisitExpr_(const BufferLoadNode* op);
  void VisitExprExtension_(const PrimExpr& e) override;

  virtual void VisitStmt_(const BufferStoreNode* op);
  virtual void VisitStmt_(const ForNode* op);
  virtual void VisitStmt_(const SeqStmtNode* op);
  virtual void VisitStmt_(const IfThenElseNode* op);
  virtual void VisitStmt_(const LetStmtNode* op);
  virtual void VisitStmt_(const EvaluateNode* op);
  virtual void VisitStmt_(const AllocateNode* op);
  virtual void VisitStmt_(const BlockNode* op);          ///< visits iter var domains, init, body
  virtual void VisitStmt_(const BlockRealizeNode* op);   ///< visits iter values, predicate, block
};

/// Returns the same Stmt / PrimExpr node when nothing below it changed (so callers
/// can use same_as to detect a no-op).
class StmtExprMutator : public ir::ExprMutator {
 public:
  virtual Stmt VisitStmt(const Stmt& s);
  using ir::ExprMutator::VisitExpr;

 protected:
  using ir::ExprMutator::VisitExpr_;
  virtual PrimExpr VisitExpr_(const BufferLoadNode* op, const PrimExpr& e);
  PrimExpr VisitExprExtension_(const PrimExpr& e) override;

  virtual Stmt VisitStmt_(const BufferStoreNode* op, const Stmt& s);
  virtual Stmt VisitStmt_(const ForNode* op, const Stmt& s);
  virtual Stmt VisitStmt_(const SeqStmtNode* op, const Stmt& s);
  virtual Stmt VisitStmt_(const IfThenElseNode* op, const Stmt& s);
  virtual Stmt VisitStmt_(const LetStmtNode* op, const Stmt& s);
  virtual Stmt VisitStmt_(const EvaluateNode* op, const Stmt& s);
  virtual Stmt VisitStmt_(const AllocateNode* op, const Stmt& s);
  virtual Stmt VisitStmt_(const BlockNode* op, const Stmt& s);
  virtual Stmt VisitStmt_(const BlockRealizeNode* op, const Stmt& s);
};

/// Replaces variables by expressions (by VarNode identity) in a statement or expression.
PrimExpr Substitute(const PrimExpr& e, const std::map<const ir::VarNode*, PrimExpr>& vmap);
Stmt Substitute(const Stmt& s, const std::map<const ir::VarNode*, PrimExpr>& vmap);

}  // namespace tessera::tir
