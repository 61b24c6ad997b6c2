// LoopPartition (tir/transform/loop_partition.h).
#include "tessera/tir/transform/loop_partition.h"

#include <map>
#include <vector>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/op.h"
#include "tessera/tir/functor.h"

namespace tessera::tir::transform {

namespace {

using ir::VarNode;

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

/// A copy of a statement in which every loop, let and allocation it defines has a fresh
/// variable (flat TIR defines each variable once).
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
  Stmt VisitStmt_(const AllocateNode* op, const Stmt& s) override {
    auto n = std::make_shared<BufferNode>(*op->buffer.get());
    n->data = Var(op->buffer->data->name_hint + "_t", op->buffer->data.dtype());
    Buffer fresh(std::move(n));
    Stmt body = BufferRenamer({{op->buffer.get(), fresh}}).VisitStmt(VisitStmt(op->body));
    return AllocateNode::make(fresh, body);
  }
};

/// A guard of an `if` under the candidate loop, with the loops between them.
struct Guard {
  PrimExpr term;                    ///< one conjunct that uses the candidate loop's variable
  std::vector<const ForNode*> inner;
};

class GuardCollector : public StmtExprVisitor {
 public:
  explicit GuardCollector(const VarNode* var) : var_(var) {}
  std::vector<Guard> guards;

 protected:
  void VisitStmt_(const ForNode* op) override {
    stack_.push_back(op);
    StmtExprVisitor::VisitStmt_(op);
    stack_.pop_back();
  }
  void VisitStmt_(const IfThenElseNode* op) override {
    if (!op->else_case.defined()) {
      // Upper bounds only (`a < b`, `a <= b`): the guards of a split's tail. Equalities such as
      // an unhoisted reduction init (`k == 0`) are left in place.
      for (const PrimExpr& t : Conjuncts(op->condition))
        if ((t.as<ir::LTNode>() || t.as<ir::LENode>()) && UsesVar(t)) guards.push_back({t, stack_});
    }
    StmtExprVisitor::VisitStmt_(op);
  }

 private:
  static std::vector<PrimExpr> Conjuncts(const PrimExpr& e) {
    if (auto* a = e.as<ir::AndNode>()) {
      std::vector<PrimExpr> l = Conjuncts(a->a), r = Conjuncts(a->b);
      l.insert(l.end(), r.begin(), r.end());
      return l;
    }
    return {e};
  }
  bool UsesVar(const PrimExpr& e) const {
    struct Finder : StmtExprVisitor {
      const VarNode* var;
      bool found = false;
      void VisitExpr_(const VarNode* op) override { found |= op == var; }
    } f;
    f.var = var_;
    f.VisitExpr(e);
    return f.found;
  }
  const VarNode* var_;
  std::vector<const ForNode*> stack_;
};

class Partitioner : public StmtExprMutator {
 protected:
  Stmt VisitStmt_(const ForNode* op, const Stmt& s) override {
    int64_t m = 0, e = 0;
    if (op->for_kind != ForKind::kSerial || !ir::as_const_int(op->min, &m) || !ir::as_const_int(op->extent, &e) ||
        e < 2) {
      return StmtExprMutator::VisitStmt_(op, s);
    }
    GuardCollector gc(op->loop_var.get_var());
    gc.VisitStmt(op->body);
    if (gc.guards.empty()) return StmtExprMutator::VisitStmt_(op, s);
    // The largest k with every guard provable for loop_var in [m, m + k): binary search
    // (true on a prefix; k = 0 always holds).
    auto provable = [&](int64_t k) {
      for (const Guard& g : gc.guards) {
        arith::Analyzer an;
        an.Bind(op->loop_var, m, m + k - 1);
        for (const ForNode* f : g.inner) an.Bind(f->loop_var, Range(f->min, f->extent));
        if (!an.CanProve(g.term)) return false;
      }
      return true;
    };
    int64_t lo = 0, hi = e;  // provable(lo) holds; find the largest
    if (provable(hi)) lo = hi;
    while (hi - lo > 1) {
      int64_t mid = lo + (hi - lo) / 2;
      (provable(mid) ? lo : hi) = mid;
    }
    if (lo == 0 || lo == e) return StmtExprMutator::VisitStmt_(op, s);
    DataType t = op->min.dtype();
    Stmt body = VisitStmt(op->body);
    Stmt main = ForNode::make(op->loop_var, op->min, ir::make_const(t, lo), op->for_kind, body, op->annotations);
    Stmt tail = FreshCopier().VisitStmt(
        ForNode::make(op->loop_var, ir::make_const(t, m + lo), ir::make_const(t, e - lo), op->for_kind, body,
                      op->annotations));
    return SeqStmtNode::make({main, tail});
  }
};

}  // namespace

PrimFunc LoopPartition(const PrimFunc& func) {
  Stmt body = Partitioner().VisitStmt(func->body);
  return body.same_as(func->body) ? func : func.WithBody(body);
}

}  // namespace tessera::tir::transform
