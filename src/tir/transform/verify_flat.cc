// VerifyFlat (tir/transform/verify_flat.h).
#include "tessera/tir/transform/verify_flat.h"

#include <set>

#include "tessera/tir/functor.h"

namespace tessera::tir::transform {

namespace {

class FlatVerifier : public StmtExprVisitor {
 public:
  explicit FlatVerifier(const PrimFunc& f) : name_(f->name) {
    for (const auto& p : f->params) Define(p->data.get_var(), "parameter buffer " + p->name);
    for (const auto& v : f->shape_vars) Define(v.get_var(), "shape var");
  }
  using StmtExprVisitor::VisitStmt;

 protected:
  [[noreturn]] void Fail(const std::string& what) {
    TESSERA_THROW(InternalError, "VerifyFlat: PrimFunc ", name_, " is not in flat form: ", what);
  }
  void Define(const ir::VarNode* v, const std::string& what) {
    if (!defined_.insert(v).second) Fail("variable " + v->name_hint + " (" + what + ") is defined twice");
  }
  void UseBuffer(const Buffer& b, size_t nindices, const char* access) {
    if (nindices != 1) Fail(std::string(access) + " of buffer " + b->name + " has " + std::to_string(nindices) + " indices (run FlattenBuffer)");
    if (!defined_.count(b->data.get_var())) Fail("buffer " + b->name + " is used but neither a parameter nor allocated");
  }

  void VisitExpr_(const ir::VarNode* op) override {
    if (!defined_.count(op)) Fail("variable " + op->name_hint + " is used before its definition");
  }
  void VisitExpr_(const ir::LetNode* op) override {
    VisitExpr(op->value);
    Define(op->var.get_var(), "let");
    VisitExpr(op->body);
  }
  void VisitExprExtension_(const PrimExpr& e) override {
    if (e->kind == ir::ExprKind::kReduce) Fail("a te Reduce node remains (lower it with create_prim_func)");
    StmtExprVisitor::VisitExprExtension_(e);
  }
  void VisitExpr_(const BufferLoadNode* op) override {
    UseBuffer(op->buffer, op->indices.size(), "a load");
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    UseBuffer(op->buffer, op->indices.size(), "a store");
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const ForNode* op) override {
    VisitExpr(op->min);
    VisitExpr(op->extent);
    Define(op->loop_var.get_var(), "loop variable");
    VisitStmt(op->body);
  }
  void VisitStmt_(const LetStmtNode* op) override {
    VisitExpr(op->value);
    Define(op->var.get_var(), "let");
    VisitStmt(op->body);
  }
  void VisitStmt_(const AllocateNode* op) override {
    if (op->buffer.ndim() != 1) Fail("allocate of " + std::to_string(op->buffer.ndim()) + "-d buffer " + op->buffer->name);
    for (const auto& d : op->buffer->shape) VisitExpr(d);
    Define(op->buffer->data.get_var(), "allocated buffer " + op->buffer->name);
    VisitStmt(op->body);
  }
  void VisitStmt_(const BlockNode* op) override { Fail("block \"" + op->name_hint + "\" remains (run LowerBlocks)"); }
  void VisitStmt_(const BlockRealizeNode* op) override {
    Fail("block \"" + op->block_node()->name_hint + "\" remains (run LowerBlocks)");
  }

 private:
  std::string name_;
  std::set<const ir::VarNode*> defined_;
};

}  // namespace

void VerifyFlat(const PrimFunc& func) {
  TESSERA_ICHECK(func.defined(), "VerifyFlat of an undefined PrimFunc");
  FlatVerifier(func).VisitStmt(func->body);
}

}  // namespace tessera::tir::transform
