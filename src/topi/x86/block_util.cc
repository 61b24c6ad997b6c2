#include "block_util.h"

#include "tessera/tir/functor.h"

namespace tessera::topi::x86 {
namespace {

class RealizeCollector : public tir::StmtExprVisitor {
 public:
  explicit RealizeCollector(const tir::StmtNode* root) : root_(root) {}
  std::vector<const tir::BlockRealizeNode*> realizes;

 protected:
  void VisitStmt_(const tir::BlockRealizeNode* op) override {
    if (op != root_) realizes.push_back(op);
    StmtExprVisitor::VisitStmt_(op);
  }

 private:
  const tir::StmtNode* root_;
};

}  // namespace

std::vector<const tir::BlockRealizeNode*> NonRootRealizes(const tir::PrimFunc& f) {
  RealizeCollector c(f->body.get());
  c.VisitStmt(f->body);
  return c.realizes;
}

}  // namespace tessera::topi::x86
