// StmtExprVisitor / StmtExprMutator dispatch and Substitute (tir/functor.h).
#include "tessera/tir/functor.h"

#include "tessera/support/error.h"

namespace tessera::tir {

// ---------------------------------------------------------------- visitor
void StmtExprVisitor::VisitStmt(const Stmt& s) {
  TESSERA_ICHECK(s.defined(), "StmtExprVisitor: undefined statement");
  const StmtNode* n = s.get();
  switch (n->kind) {
    case StmtKind::kBufferStore: return VisitStmt_(static_cast<const BufferStoreNode*>(n));
    case StmtKind::kFor: return VisitStmt_(static_cast<const ForNode*>(n));
    case StmtKind::kSeqStmt: return VisitStmt_(static_cast<const SeqStmtNode*>(n));
    case StmtKind::kIfThenElse: return VisitStmt_(static_cast<const IfThenElseNode*>(n));
    case StmtKind::kLetStmt: return VisitStmt_(static_cast<const LetStmtNode*>(n));
    case StmtKind::kEvaluate: return VisitStmt_(static_cast<const EvaluateNode*>(n));
    case StmtKind::kAllocate: return VisitStmt_(static_cast<const AllocateNode*>(n));
    case StmtKind::kBlock: return VisitStmt_(static_cast<const BlockNode*>(n));
    case StmtKind::kBlockRealize: return VisitStmt_(static_cast<const BlockRealizeNode*>(n));
  }
}

void StmtExprVisitor::VisitExprExtension_(const PrimExpr& e) {
  if (auto* load = e.as<BufferLoadNode>()) VisitExpr_(load);
}

void StmtExprVisitor::VisitExpr_(const BufferLoadNode* op) {
  for (const auto& i : op->indices) VisitExpr(i);
}

void StmtExprVisitor::VisitStmt_(const BufferStoreNode* op) {
  VisitExpr(op->value);
  for (const auto& i : op->indices) VisitExpr(i);
}
void StmtExprVisitor::VisitStmt_(const ForNode* op) {
  VisitExpr(op->min);
  VisitExpr(op->extent);
  VisitStmt(op->body);
}
void StmtExprVisitor::VisitStmt_(const SeqStmtNode* op) {
  for (const auto& s : op->seq) VisitStmt(s);
}
void StmtExprVisitor::VisitStmt_(const IfThenElseNode* op) {
  VisitExpr(op->condition);
  VisitStmt(op->then_case);
  if (op->else_case.defined()) VisitStmt(op->else_case);
}
void StmtExprVisitor::VisitStmt_(const LetStmtNode* op) {
  VisitExpr(op->value);
  VisitStmt(op->body);
}
void StmtExprVisitor::VisitStmt_(const EvaluateNode* op) { VisitExpr(op->value); }
void StmtExprVisitor::VisitStmt_(const AllocateNode* op) { VisitStmt(op->body); }
void StmtExprVisitor::VisitStmt_(const BlockNode* op) {
  for (const auto& iv : op->iter_vars) {
    VisitExpr(iv.dom.min);
    VisitExpr(iv.dom.extent);
  }
  if (op->init.defined()) VisitStmt(op->init);
  VisitStmt(op->body);
}
void StmtExprVisitor::VisitStmt_(const BlockRealizeNode* op) {
  for (const auto& v : op->iter_values) VisitExpr(v);
  VisitExpr(op->predicate);
  VisitStmt(op->block);
}

// ---------------------------------------------------------------- mutator
namespace {
template <typename F>
bool MutateVec(std::vector<PrimExpr>* v, F&& f) {
  bool changed = false;
  for (auto& e : *v) {
    PrimExpr n = f(e);
    changed |= !n.same_as(e);
    e = std::move(n);
  }
  return changed;
}
}  // namespace

Stmt StmtExprMutator::VisitStmt(const Stmt& s) {
  TESSERA_ICHECK(s.defined(), "StmtExprMutator: undefined statement");
  const StmtNode* n = s.get();
  switch (n->kind) {
    case StmtKind::kBufferStore: return VisitStmt_(static_cast<const BufferStoreNode*>(n), s);
    case StmtKind::kFor: return VisitStmt_(static_cast<const ForNode*>(n), s);
    case StmtKind::kSeqStmt: return VisitStmt_(static_cast<const SeqStmtNode*>(n), s);
    case StmtKind::kIfThenElse: return VisitStmt_(static_cast<const IfThenElseNode*>(n), s);
    case StmtKind::kLetStmt: return VisitStmt_(static_cast<const LetStmtNode*>(n), s);
    case StmtKind::kEvaluate: return VisitStmt_(static_cast<const EvaluateNode*>(n), s);
    case StmtKind::kAllocate: return VisitStmt_(static_cast<const AllocateNode*>(n), s);
    case StmtKind::kBlock: return VisitStmt_(static_cast<const BlockNode*>(n), s);
    case StmtKind::kBlockRealize: return VisitStmt_(static_cast<const BlockRealizeNode*>(n), s);
  }
  return s;
}

PrimExpr StmtExprMutator::VisitExprExtension_(const PrimExpr& e) {
  if (auto* load = e.as<BufferLoadNode>()) return VisitExpr_(load, e);
  return e;
}

PrimExpr StmtExprMutator::VisitExpr_(const BufferLoadNode* op, const PrimExpr& e) {
  std::vector<PrimExpr> idx = op->indices;
  if (!MutateVec(&idx, [&](const PrimExpr& x) { return VisitExpr(x); })) return e;
  return BufferLoadNode::make(op->buffer, std::move(idx));
}

Stmt StmtExprMutator::VisitStmt_(const BufferStoreNode* op, const Stmt& s) {
  PrimExpr v = VisitExpr(op->value);
  std::vector<PrimExpr> idx = op->indices;
  bool changed = MutateVec(&idx, [&](const PrimExpr& x) { return VisitExpr(x); });
  if (!changed && v.same_as(op->value)) return s;
  return BufferStoreNode::make(op->buffer, std::move(v), std::move(idx));
}

Stmt StmtExprMutator::VisitStmt_(const ForNode* op, const Stmt& s) {
  PrimExpr mn = VisitExpr(op->min);
  PrimExpr ext = VisitExpr(op->extent);
  Stmt body = VisitStmt(op->body);
  if (mn.same_as(op->min) && ext.same_as(op->extent) && body.same_as(op->body)) return s;
  return ForNode::make(op->loop_var, mn, ext, op->for_kind, body, op->annotations);
}

Stmt StmtExprMutator::VisitStmt_(const SeqStmtNode* op, const Stmt& s) {
  std::vector<Stmt> seq;
  bool changed = false;
  for (const auto& st : op->seq) {
    seq.push_back(VisitStmt(st));
    changed |= !seq.back().same_as(st);
  }
  if (!changed) return s;
  return SeqStmtNode::make(std::move(seq));
}

Stmt StmtExprMutator::VisitStmt_(const IfThenElseNode* op, const Stmt& s) {
  PrimExpr c = VisitExpr(op->condition);
  Stmt t = VisitStmt(op->then_case);
  Stmt e = op->else_case.defined() ? VisitStmt(op->else_case) : Stmt();
  if (c.same_as(op->condition) && t.same_as(op->then_case) && e.same_as(op->else_case)) return s;
  return IfThenElseNode::make(c, t, e);
}

Stmt StmtExprMutator::VisitStmt_(const LetStmtNode* op, const Stmt& s) {
  PrimExpr v = VisitExpr(op->value);
  Stmt b = VisitStmt(op->body);
  if (v.same_as(op->value) && b.same_as(op->body)) return s;
  return LetStmtNode::make(op->var, v, b);
}

Stmt StmtExprMutator::VisitStmt_(const EvaluateNode* op, const Stmt& s) {
  PrimExpr v = VisitExpr(op->value);
  return v.same_as(op->value) ? s : EvaluateNode::make(v);
}

Stmt StmtExprMutator::VisitStmt_(const AllocateNode* op, const Stmt& s) {
  Stmt b = VisitStmt(op->body);
  return b.same_as(op->body) ? s : AllocateNode::make(op->buffer, b);
}

Stmt StmtExprMutator::VisitStmt_(const BlockNode* op, const Stmt& s) {
  bool changed = false;
  auto visit = [&](const PrimExpr& e) {
    PrimExpr n = VisitExpr(e);
    changed |= !n.same_as(e);
    return n;
  };
  std::vector<IterVar> ivs = op->iter_vars;
  for (auto& iv : ivs) iv.dom = Range(visit(iv.dom.min), visit(iv.dom.extent));
  auto regions = [&](std::vector<BufferRegion> rs) {
    for (auto& r : rs) {
      for (auto& rg : r.region) rg = Range(visit(rg.min), visit(rg.extent));
    }
    return rs;
  };
  std::vector<BufferRegion> reads = regions(op->reads);
  std::vector<BufferRegion> writes = regions(op->writes);
  Stmt init = op->init.defined() ? VisitStmt(op->init) : Stmt();
  Stmt body = VisitStmt(op->body);
  changed |= !init.same_as(op->init) || !body.same_as(op->body);
  if (!changed) return s;
  return BlockNode::make(op->name_hint, std::move(ivs), std::move(reads), std::move(writes), body, init,
                         op->alloc_buffers, op->annotations);
}

Stmt StmtExprMutator::VisitStmt_(const BlockRealizeNode* op, const Stmt& s) {
  std::vector<PrimExpr> vals = op->iter_values;
  bool changed = MutateVec(&vals, [&](const PrimExpr& x) { return VisitExpr(x); });
  PrimExpr pred = VisitExpr(op->predicate);
  Stmt block = VisitStmt(op->block);
  if (!changed && pred.same_as(op->predicate) && block.same_as(op->block)) return s;
  return BlockRealizeNode::make(std::move(vals), pred, block);
}

// ---------------------------------------------------------------- Substitute
namespace {
class Substituter : public StmtExprMutator {
 public:
  explicit Substituter(const std::map<const ir::VarNode*, PrimExpr>& vmap) : vmap_(vmap) {}

 protected:
  PrimExpr VisitExpr_(const ir::VarNode* op, const PrimExpr& e) override {
    auto it = vmap_.find(op);
    return it == vmap_.end() ? e : it->second;
  }

 private:
  const std::map<const ir::VarNode*, PrimExpr>& vmap_;
};
}  // namespace

PrimExpr Substitute(const PrimExpr& e, const std::map<const ir::VarNode*, PrimExpr>& vmap) {
  if (vmap.empty()) return e;
  return Substituter(vmap).VisitExpr(e);
}

Stmt Substitute(const Stmt& s, const std::map<const ir::VarNode*, PrimExpr>& vmap) {
  if (vmap.empty()) return s;
  return Substituter(vmap).VisitStmt(s);
}

}  // namespace tessera::tir
