// RemoveNoOp (tir/transform/remove_no_op.h).
#include "tessera/tir/transform/remove_no_op.h"

#include "tessera/ir/op.h"
#include "tessera/tir/functor.h"
#include "tessera/tir/structural_equal.h"

namespace tessera::tir::transform {

namespace {

bool IsNoOp(const Stmt& s) {
  if (auto* e = s.as<EvaluateNode>()) return e->value.as<ir::IntImmNode>() || e->value.as<ir::FloatImmNode>();
  if (auto* q = s.as<SeqStmtNode>()) return q->seq.empty();
  return false;
}

Stmt NoOp() { return EvaluateNode::make(0); }

class NoOpRemover : public StmtExprMutator {
 protected:
  Stmt VisitStmt_(const EvaluateNode* op, const Stmt& s) override {
    // Every PrimExpr is pure: evaluating it has no effect.
    return NoOp();
  }
  Stmt VisitStmt_(const BufferStoreNode* op, const Stmt& s) override {
    if (auto* l = op->value.as<BufferLoadNode>(); l && l->buffer->data.same_as(op->buffer->data) &&
                                                   l->indices.size() == op->indices.size()) {
      bool same = true;
      for (size_t i = 0; i < l->indices.size(); ++i) same &= StructuralEqual(l->indices[i], op->indices[i]);
      if (same) return NoOp();
    }
    return s;
  }
  Stmt VisitStmt_(const ForNode* op, const Stmt& s) override {
    int64_t n = 1;
    if (ir::as_const_int(op->extent, &n) && n <= 0) return NoOp();
    Stmt body = VisitStmt(op->body);
    if (IsNoOp(body)) return NoOp();
    return body.same_as(op->body) ? s : ForNode::make(op->loop_var, op->min, op->extent, op->for_kind, body, op->annotations);
  }
  Stmt VisitStmt_(const IfThenElseNode* op, const Stmt& s) override {
    Stmt t = VisitStmt(op->then_case);
    Stmt e = op->else_case.defined() ? VisitStmt(op->else_case) : Stmt();
    if (e.defined() && IsNoOp(e)) e = Stmt();
    if (IsNoOp(t) && !e.defined()) return NoOp();
    if (IsNoOp(t)) return IfThenElseNode::make(!op->condition, e);
    if (t.same_as(op->then_case) && e.same_as(op->else_case)) return s;
    return IfThenElseNode::make(op->condition, t, e);
  }
  Stmt VisitStmt_(const LetStmtNode* op, const Stmt& s) override {
    Stmt b = VisitStmt(op->body);
    if (IsNoOp(b)) return NoOp();
    return b.same_as(op->body) ? s : LetStmtNode::make(op->var, op->value, b);
  }
  Stmt VisitStmt_(const AllocateNode* op, const Stmt& s) override {
    Stmt b = VisitStmt(op->body);
    if (IsNoOp(b)) return NoOp();
    return b.same_as(op->body) ? s : AllocateNode::make(op->buffer, b);
  }
  Stmt VisitStmt_(const SeqStmtNode* op, const Stmt& s) override {
    std::vector<Stmt> kept;
    bool changed = false;
    for (const auto& st : op->seq) {
      Stmt v = VisitStmt(st);
      changed |= !v.same_as(st);
      if (IsNoOp(v)) {
        changed = true;
        continue;
      }
      kept.push_back(v);
    }
    if (!changed) return s;
    if (kept.empty()) return NoOp();
    return SeqStmtNode::make(std::move(kept));
  }
};

}  // namespace

PrimFunc RemoveNoOp(const PrimFunc& func) {
  Stmt body = NoOpRemover().VisitStmt(func->body);
  return body.same_as(func->body) ? func : func.WithBody(body);
}

}  // namespace tessera::tir::transform
