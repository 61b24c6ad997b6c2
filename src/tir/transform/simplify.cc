// Simplify (tir/transform/simplify.h).
#include "tessera/tir/transform/simplify.h"

#include "tessera/arith/analyzer.h"
#include "tessera/ir/op.h"
#include "tessera/tir/functor.h"

namespace tessera::tir::transform {

namespace {
class StmtSimplifier : public StmtExprMutator {
 public:
  /// Shape vars (dynamic shapes) are extents: never negative, and within their dtype.
  void BindShapeVars(const std::vector<ir::Var>& vars) {
    for (const ir::Var& v : vars) {
      const int64_t hi = v.dtype().bits() >= 64 ? arith::IntBound::kPosInf : (int64_t{1} << (v.dtype().bits() - 1)) - 1;
      an_.Bind(v, 0, hi);
    }
  }
  PrimExpr VisitExpr(const PrimExpr& e) override {
    // Children first (this reaches inside BufferLoad indices, opaque to arith), then the whole.
    return an_.Simplify(StmtExprMutator::VisitExpr(e));
  }

 protected:
  Stmt VisitStmt_(const ForNode* op, const Stmt& s) override {
    PrimExpr mn = VisitExpr(op->min), ext = VisitExpr(op->extent);
    int64_t n = 0;
    if (ir::as_const_int(ext, &n) && n <= 0) return EvaluateNode::make(0);
    if (n == 1) return VisitStmt(Substitute(op->body, {{op->loop_var.get_var(), mn}}));
    an_.Bind(op->loop_var, Range(mn, ext));
    Stmt body = VisitStmt(op->body);
    an_.Unbind(op->loop_var);
    if (mn.same_as(op->min) && ext.same_as(op->extent) && body.same_as(op->body)) return s;
    return ForNode::make(op->loop_var, mn, ext, op->for_kind, body, op->annotations);
  }
  Stmt VisitStmt_(const IfThenElseNode* op, const Stmt& s) override {
    PrimExpr c = VisitExpr(op->condition);
    int64_t v = 0;
    if (ir::as_const_int(c, &v)) {
      if (v) return VisitStmt(op->then_case);
      return op->else_case.defined() ? VisitStmt(op->else_case) : EvaluateNode::make(0);
    }
    Stmt t = VisitStmt(op->then_case);
    Stmt e = op->else_case.defined() ? VisitStmt(op->else_case) : Stmt();
    if (c.same_as(op->condition) && t.same_as(op->then_case) && e.same_as(op->else_case)) return s;
    return IfThenElseNode::make(c, t, e);
  }
  Stmt VisitStmt_(const LetStmtNode* op, const Stmt& s) override {
    PrimExpr v = VisitExpr(op->value);
    bool is_index = v.dtype().is_scalar() && (v.dtype().is_int() || v.dtype().is_uint());
    if (is_index) {
      arith::IntBound b = an_.ConstIntBound(v);
      an_.Bind(op->var, b.min_value, b.max_value);
    }
    Stmt body = VisitStmt(op->body);
    if (is_index) an_.Unbind(op->var);
    if (v.same_as(op->value) && body.same_as(op->body)) return s;
    return LetStmtNode::make(op->var, v, body);
  }
  Stmt VisitStmt_(const BlockNode* op, const Stmt& s) override {
    for (const auto& iv : op->iter_vars) an_.Bind(iv.var, iv.dom);
    Stmt r = StmtExprMutator::VisitStmt_(op, s);
    for (const auto& iv : op->iter_vars) an_.Unbind(iv.var);
    return r;
  }

 private:
  arith::Analyzer an_;
};
}  // namespace

Stmt Simplify(const Stmt& stmt) { return StmtSimplifier().VisitStmt(stmt); }

PrimFunc Simplify(const PrimFunc& func) {
  StmtSimplifier simplifier;
  simplifier.BindShapeVars(func->shape_vars);
  Stmt body = simplifier.VisitStmt(func->body);
  return body.same_as(func->body) ? func : func.WithBody(body);
}

}  // namespace tessera::tir::transform
