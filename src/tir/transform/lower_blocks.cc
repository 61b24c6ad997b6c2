// LowerBlocks (tir/transform/lower_blocks.h).
#include "tessera/tir/transform/lower_blocks.h"

#include "tessera/ir/op.h"
#include "tessera/tir/functor.h"
#include "tessera/tir/transform/lower_init_block_impl.h"

namespace tessera::tir::transform {

namespace {
class BlockLowerer : public StmtExprMutator {
 protected:
  Stmt VisitStmt_(const BlockRealizeNode* op, const Stmt& s) override {
    const BlockNode* block = op->block_node();
    std::map<const ir::VarNode*, PrimExpr> vmap;
    for (size_t i = 0; i < block->iter_vars.size(); ++i) vmap[block->iter_vars[i].var.get_var()] = op->iter_values[i];
    Stmt body = VisitStmt(Substitute(LowerInitOf(block), vmap));
    if (!ir::is_one(op->predicate)) body = IfThenElseNode::make(VisitExpr(op->predicate), body);
    for (size_t i = block->alloc_buffers.size(); i-- > 0;) body = AllocateNode::make(block->alloc_buffers[i], body);
    return body;
  }
  Stmt VisitStmt_(const BlockNode* op, const Stmt& s) override {
    // A block outside a BlockRealize (only the root may be): no iter values to bind.
    TESSERA_ICHECK(op->iter_vars.empty(), "LowerBlocks: block ", op->name_hint,
                   " has iter vars but no BlockRealize binding them");
    Stmt body = VisitStmt(LowerInitOf(op));
    for (size_t i = op->alloc_buffers.size(); i-- > 0;) body = AllocateNode::make(op->alloc_buffers[i], body);
    return body;
  }
};
}  // namespace

PrimFunc LowerBlocks(const PrimFunc& func) {
  Stmt body = BlockLowerer().VisitStmt(func->body);
  return body.same_as(func->body) ? func : func.WithBody(body);
}

}  // namespace tessera::tir::transform
