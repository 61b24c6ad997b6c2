// UnrollLoop (tir/transform/unroll_loop.h).
#include "tessera/tir/transform/unroll_loop.h"

#include "tessera/ir/op.h"
#include "tessera/tir/functor.h"

#include "fresh_copy.h"

namespace tessera::tir::transform {

namespace {
class Unroller : public StmtExprMutator {
 protected:
  Stmt VisitStmt_(const ForNode* op, const Stmt& s) override {
    Stmt body = VisitStmt(op->body);
    if (op->for_kind != ForKind::kUnrolled) {
      return body.same_as(op->body) ? s : ForNode::make(op->loop_var, op->min, op->extent, op->for_kind, body, op->annotations);
    }
    int64_t n = 0;
    if (!ir::as_const_int(op->extent, &n)) {
      // A symbolic extent (dynamic shapes): the loop stays, still marked unrolled, and codegen
      // asks LLVM to unroll it (llvm.loop.unroll.enable).
      return body.same_as(op->body) ? s : ForNode::make(op->loop_var, op->min, op->extent, op->for_kind, body, op->annotations);
    }
    if (n <= 0) return EvaluateNode::make(0);
    std::vector<Stmt> copies;
    for (int64_t i = 0; i < n; ++i) {
      PrimExpr value = op->min + ir::make_const(op->min.dtype(), i);
      Stmt copy = Substitute(body, {{op->loop_var.get_var(), value}});
      // Loops, lets and allocations inside the body are defined once per copy: fresh variables.
      copies.push_back(i == 0 ? copy : detail::FreshCopy(copy));
    }
    return SeqStmtNode::make(std::move(copies));
  }
};
}  // namespace

PrimFunc UnrollLoop(const PrimFunc& func) {
  Stmt body = Unroller().VisitStmt(func->body);
  return body.same_as(func->body) ? func : func.WithBody(body);
}

}  // namespace tessera::tir::transform
