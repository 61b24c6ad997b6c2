// FlattenBuffer (tir/transform/flatten_buffer.h).
#include "tessera/tir/transform/flatten_buffer.h"

#include "tessera/arith/analyzer.h"
#include "tessera/ir/op.h"
#include "tessera/tir/functor.h"

namespace tessera::tir::transform {

namespace {
class Flattener : public StmtExprMutator {
 public:
  Buffer View(const Buffer& b) {
    if (b.ndim() == 1 && b->strides.empty()) return b;
    auto it = views_.find(b.get());
    if (it != views_.end()) return it->second;
    auto n = std::make_shared<BufferNode>(*b.get());
    PrimExpr size = ir::make_const(DataType::Int(32), int64_t{1});
    if (!b->shape.empty()) size = b->shape[0];
    for (size_t i = 1; i < b->shape.size(); ++i) size = size * b->shape[i];
    if (!b->strides.empty()) {  // the extent reached through the strides
      size = ir::make_const(size.dtype(), int64_t{1});
      for (size_t i = 0; i < b->shape.size(); ++i) size = size + (b->shape[i] - 1) * b->strides[i];
    }
    n->shape = {arith::Analyzer().Simplify(size)};
    n->strides.clear();
    Buffer view(std::move(n));
    views_[b.get()] = view;
    return view;
  }

 protected:
  std::vector<PrimExpr> Index(const Buffer& b, const std::vector<PrimExpr>& indices) {
    if (b.ndim() == 1 && b->strides.empty()) return indices;
    if (indices.size() == 1 && b.ndim() != 1) return indices;  // already flat
    return {an_.Simplify(b.OffsetOf(indices))};
  }
  PrimExpr VisitExpr_(const BufferLoadNode* op, const PrimExpr& e) override {
    PrimExpr visited = StmtExprMutator::VisitExpr_(op, e);
    auto* l = visited.as<BufferLoadNode>();
    return BufferLoadNode::make(View(l->buffer), Index(l->buffer, l->indices));
  }
  Stmt VisitStmt_(const BufferStoreNode* op, const Stmt& s) override {
    Stmt visited = StmtExprMutator::VisitStmt_(op, s);
    auto* st = visited.as<BufferStoreNode>();
    return BufferStoreNode::make(View(st->buffer), st->value, Index(st->buffer, st->indices));
  }
  Stmt VisitStmt_(const AllocateNode* op, const Stmt& s) override {
    return AllocateNode::make(View(op->buffer), VisitStmt(op->body));
  }

 private:
  std::map<const BufferNode*, Buffer> views_;
  arith::Analyzer an_;
};
}  // namespace

PrimFunc FlattenBuffer(const PrimFunc& func) {
  Stmt body = Flattener().VisitStmt(func->body);
  return body.same_as(func->body) ? func : func.WithBody(body);
}

}  // namespace tessera::tir::transform
