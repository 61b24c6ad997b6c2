// LowerInitBlock (tir/transform/lower_init_block.h).
#include "tessera/tir/transform/lower_init_block.h"

#include "tessera/ir/op.h"
#include "tessera/tir/functor.h"
#include "tessera/tir/transform/lower_init_block_impl.h"

namespace tessera::tir::transform {

Stmt LowerInitOf(const BlockNode* block) {
  if (!block->init.defined()) return block->body;
  PrimExpr cond;
  for (const auto& iv : block->iter_vars) {
    if (iv.iter_type != IterVarType::kCommReduce) continue;
    PrimExpr c = iv.var == iv.dom.min;
    cond = cond.defined() ? (cond && c) : c;
  }
  Stmt init = cond.defined() ? IfThenElseNode::make(cond, block->init) : block->init;
  return SeqStmtNode::make({init, block->body});
}

namespace {
class InitLowerer : public StmtExprMutator {
 protected:
  Stmt VisitStmt_(const BlockNode* op, const Stmt& s) override {
    Stmt visited = StmtExprMutator::VisitStmt_(op, s);
    auto* b = visited.as<BlockNode>();
    if (!b->init.defined()) return visited;
    return BlockNode::make(b->name_hint, b->iter_vars, b->reads, b->writes, LowerInitOf(b), Stmt(),
                           b->alloc_buffers, b->annotations);
  }
};
}  // namespace

PrimFunc LowerInitBlock(const PrimFunc& func) {
  Stmt body = InitLowerer().VisitStmt(func->body);
  return body.same_as(func->body) ? func : func.WithBody(body);
}

}  // namespace tessera::tir::transform
