#include <map>
#include <set>
#include <string>

#include "tessera/tir/functor.h"
#include "tessera/topi/x86/schedule.h"

namespace tessera::topi::x86 {

namespace {

class BlockNameCollector : public tir::StmtExprVisitor {
 public:
  std::set<std::string> names;

 protected:
  void VisitStmt_(const tir::BlockNode* op) override {
    names.insert(op->name_hint);
    StmtExprVisitor::VisitStmt_(op);
  }
};

class Renamer : public tir::StmtExprMutator {
 public:
  explicit Renamer(std::set<std::string> taken) : taken_(std::move(taken)) {}

 protected:
  tir::Stmt VisitStmt_(const tir::BlockNode* op, const tir::Stmt& s) override {
    tir::Stmt visited = StmtExprMutator::VisitStmt_(op, s);
    const auto* b = visited.as<tir::BlockNode>();
    if (seen_.insert(b->name_hint).second) return visited;
    std::string name;
    for (int k = 1;; ++k) {
      name = b->name_hint + "_" + std::to_string(k);
      if (!taken_.count(name)) break;
    }
    taken_.insert(name);
    seen_.insert(name);
    return tir::BlockNode::make(name, b->iter_vars, b->reads, b->writes, b->body, b->init, b->alloc_buffers,
                                b->annotations);
  }

 private:
  std::set<std::string> taken_;
  std::set<std::string> seen_;
};

}  // namespace

tir::PrimFunc UniquifyBlockNames(const tir::PrimFunc& func) {
  BlockNameCollector names;
  names.VisitStmt(func->body);
  Renamer renamer(names.names);
  tir::Stmt body = renamer.VisitStmt(func->body);
  if (body.same_as(func->body)) return func;
  return func.WithBody(body);
}

}  // namespace tessera::topi::x86
