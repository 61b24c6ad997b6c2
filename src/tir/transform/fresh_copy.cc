// FreshCopy (fresh_copy.h).
#include "fresh_copy.h"

#include <map>
#include <memory>

#include "tessera/tir/functor.h"

namespace tessera::tir::transform::detail {

namespace {

/// Replaces accesses of some buffers by others (the fresh copies of allocations).
class BufferRenamer : public StmtExprMutator {
 public:
  explicit BufferRenamer(std::map<const BufferNode*, Buffer> m) : map_(std::move(m)) {}

 protected:
  PrimExpr VisitExpr_(const BufferLoadNode* op, const PrimExpr& e) override {
    PrimExpr v = StmtExprMutator::VisitExpr_(op, e);
    auto* l = v.as<BufferLoadNode>();
    auto it = map_.find(l->buffer.get());
    return it == map_.end() ? v : BufferLoadNode::make(it->second, l->indices);
  }
  Stmt VisitStmt_(const BufferStoreNode* op, const Stmt& s) override {
    Stmt v = StmtExprMutator::VisitStmt_(op, s);
    auto* st = v.as<BufferStoreNode>();
    auto it = map_.find(st->buffer.get());
    return it == map_.end() ? v : BufferStoreNode::make(it->second, st->value, st->indices);
  }

 private:
  std::map<const BufferNode*, Buffer> map_;
};

class FreshCopier : public StmtExprMutator {
 protected:
  Stmt VisitStmt_(const ForNode* op, const Stmt& s) override {
    Var v = op->loop_var.copy_with_suffix("_t");
    Stmt body = Substitute(VisitStmt(op->body), {{op->loop_var.get_var(), v}});
    return ForNode::make(v, op->min, op->extent, op->for_kind, body, op->annotations);
  }
  Stmt VisitStmt_(const LetStmtNode* op, const Stmt& s) override {
    Var v = op->var.copy_with_suffix("_t");
    Stmt body = Substitute(VisitStmt(op->body), {{op->var.get_var(), v}});
    return LetStmtNode::make(v, op->value, body);
  }
  PrimExpr VisitExpr_(const ir::LetNode* op, const PrimExpr& e) override {
    Var v = op->var.copy_with_suffix("_t");
    PrimExpr body = Substitute(VisitExpr(op->body), {{op->var.get_var(), v}});
    return ir::LetNode::make(v, VisitExpr(op->value), body);
  }
  Stmt VisitStmt_(const AllocateNode* op, const Stmt& s) override {
    auto n = std::make_shared<BufferNode>(*op->buffer.get());
    n->data = Var(op->buffer->data->name_hint + "_t", op->buffer->data.dtype());
    Buffer fresh(std::move(n));
    Stmt body = BufferRenamer({{op->buffer.get(), fresh}}).VisitStmt(VisitStmt(op->body));
    return AllocateNode::make(fresh, body);
  }
};

}  // namespace

Stmt FreshCopy(const Stmt& s) { return FreshCopier().VisitStmt(s); }

}  // namespace tessera::tir::transform::detail
