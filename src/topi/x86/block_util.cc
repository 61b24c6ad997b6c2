#include "block_util.h"

#include <cstdio>
#include <cstdlib>

#include "tessera/ir/op.h"
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

std::vector<const tir::BlockNode*> NonRootBlocks(const tir::PrimFunc& f) {
  std::vector<const tir::BlockNode*> blocks;
  for (const auto* r : NonRootRealizes(f)) blocks.push_back(r->block_node());
  return blocks;
}

void DebugRefusedStep(const char* schedule, const char* step, const ScheduleError& err) {
  if (std::getenv("TESSERA_DEBUG_SCHEDULE")) std::fprintf(stderr, "%s %s: %s\n", schedule, step, err.what());
}

int64_t ConstExtent(const tir::Schedule& sch, const tir::LoopRV& loop) {
  int64_t v = -1;
  if (!ir::as_const_int(sch.GetFor(loop)->extent, &v)) return -1;
  return v;
}

}  // namespace tessera::topi::x86
