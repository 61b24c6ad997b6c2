// LoopPartition (tir/transform/loop_partition.h).
#include "tessera/tir/transform/loop_partition.h"

#include <map>
#include <set>
#include <vector>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/op.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/tir/functor.h"

#include "fresh_copy.h"
#include "select_interior.h"

namespace tessera::tir::transform {

namespace {

using ir::VarNode;

/// Calls f(var) for every variable occurrence in e.
template <typename F>
void ForEachVar(const PrimExpr& e, F f) {
  struct V : StmtExprVisitor {
    F* f;
    void VisitExpr_(const VarNode* op) override { (*f)(op); }
  } v;
  v.f = &f;
  v.VisitExpr(e);
}

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
      for (const PrimExpr& t : detail::Conjuncts(op->condition)) {
        bool uses = false;
        ForEachVar(t, [&](const VarNode* v) { uses |= v == var_; });
        if ((t.as<ir::LTNode>() || t.as<ir::LENode>()) && uses) guards.push_back({t, stack_});
      }
    }
    StmtExprVisitor::VisitStmt_(op);
  }

 private:
  const VarNode* var_;
  std::vector<const ForNode*> stack_;
};

/// The conjuncts of select conditions under the candidate loop that bound its variable for
/// every value of the loops between (select_interior.h): the interior of the loop where all of
/// them hold is [max(lower), min(upper)).
class SelectBoundCollector : public StmtExprVisitor {
 public:
  explicit SelectBoundCollector(const Var& var) : var_(var) {}
  std::vector<PrimExpr> facts, lower, upper;

 protected:
  void VisitStmt_(const ForNode* op) override {
    defined_.insert(op->loop_var.get_var());
    stack_.push_back(op);
    StmtExprVisitor::VisitStmt_(op);
    stack_.pop_back();
  }
  void VisitStmt_(const LetStmtNode* op) override {
    defined_.insert(op->var.get_var());
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitExpr_(const ir::LetNode* op) override {
    defined_.insert(op->var.get_var());
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitExpr_(const ir::SelectNode* op) override {
    for (const PrimExpr& c : detail::Conjuncts(op->condition)) Consider(c);
    StmtExprVisitor::VisitExpr_(op);
  }

 private:
  void Consider(const PrimExpr& c) {
    for (const PrimExpr& f : facts)
      if (ir::ExprStructuralEqual(c, f)) return;
    auto fact = detail::NormalizeComparison(c);
    if (!fact) return;
    // Every variable must be the candidate, a loop between it and the select, or defined
    // outside the candidate (invariant over it): not a let or loop of a sibling subtree.
    std::set<const VarNode*> on_stack;
    for (const ForNode* f : stack_) on_stack.insert(f->loop_var.get_var());
    bool ok = true, uses = false;
    ForEachVar(c, [&](const VarNode* v) {
      if (v == var_.get_var()) uses = true;
      else if (defined_.count(v) && !on_stack.count(v)) ok = false;
    });
    if (!ok || !uses) return;
    auto b = detail::BoundForAllInner(*fact, var_, stack_);
    if (!b) return;
    facts.push_back(c);
    (b->is_lower ? lower : upper).push_back(b->bound);
  }
  Var var_;
  std::vector<const ForNode*> stack_;
  std::set<const VarNode*> defined_;
};

class Partitioner : public StmtExprMutator {
 protected:
  Stmt VisitStmt_(const ForNode* op, const Stmt& s) override {
    int64_t m = 0, e = 0;
    if (op->for_kind == ForKind::kSerial && (!ir::as_const_int(op->min, &m) || !ir::as_const_int(op->extent, &e))) {
      return PartitionSymbolic(op, s);
    }
    if (op->for_kind != ForKind::kSerial || e < 2) return StmtExprMutator::VisitStmt_(op, s);
    GuardCollector gc(op->loop_var.get_var());
    gc.VisitStmt(op->body);
    if (gc.guards.empty()) return PartitionSelects(op, s, m, e);
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
    Stmt tail = detail::FreshCopy(
        ForNode::make(op->loop_var, ir::make_const(t, m + lo), ir::make_const(t, e - lo), op->for_kind, body,
                      op->annotations));
    return SeqStmtNode::make({main, tail});
  }

 private:
  /// Splits `for v in [m, m + e)` into the iterations before, inside and after the interior
  /// where every select conjunct bounding v holds (bounds may be symbolic); inside, the
  /// conjuncts are facts (AssumeFacts). At most kMaxDepth nested partitions on a path.
  Stmt PartitionSelects(const ForNode* op, const Stmt& s, int64_t m, int64_t e) {
    static constexpr int kMaxDepth = 3;
    if (depth_ >= kMaxDepth) return StmtExprMutator::VisitStmt_(op, s);
    SelectBoundCollector sc(op->loop_var);
    sc.VisitStmt(op->body);
    if (sc.facts.empty()) return StmtExprMutator::VisitStmt_(op, s);
    arith::Analyzer an;
    const DataType t = op->min.dtype();
    const PrimExpr lo = ir::make_const(t, m), hi = ir::make_const(t, m + e);
    PrimExpr a = lo, b = hi;
    for (const PrimExpr& x : sc.lower) a = ir::max(a, x);
    for (const PrimExpr& x : sc.upper) b = ir::min(b, x);
    a = an.Simplify(ir::min(a, hi));
    b = an.Simplify(ir::max(b, a));
    int64_t ca = 0, cb = 0;
    const bool constant = ir::as_const_int(a, &ca) && ir::as_const_int(b, &cb);
    if (constant && ca >= cb) return StmtExprMutator::VisitStmt_(op, s);  // no interior
    ++depth_;
    std::vector<Stmt> pieces;
    auto piece = [&](const PrimExpr& from, const PrimExpr& to, const Stmt& body, bool fresh) {
      int64_t f = 0, u = 0;
      if (ir::as_const_int(from, &f) && ir::as_const_int(to, &u) && u <= f) return;
      Stmt loop;
      if (ir::as_const_int(from, &f) && ir::as_const_int(to, &u) && u == f + 1) {
        // A single iteration: the body with v = from, no loop.
        loop = VisitStmt(Substitute(body, {{op->loop_var.get_var(), from}}));
      } else {
        Stmt inner = VisitStmt(body);
        loop = ForNode::make(op->loop_var, from, an.Simplify(to - from), op->for_kind, inner, op->annotations);
      }
      pieces.push_back(fresh ? detail::FreshCopy(loop) : loop);
    };
    piece(lo, a, op->body, true);
    piece(a, b, detail::AssumeFacts(op->body, sc.facts), false);
    piece(b, hi, op->body, true);
    --depth_;
    return pieces.size() == 1 ? pieces[0] : SeqStmtNode::make(pieces);
  }
  int depth_ = 0;

  /// A loop of symbolic range (dynamic shapes: the outer loop of split(n, {-1, f}) has extent
  /// floordiv(n + f - 1, f) and its blocks the guard `i_0 * f + i_1 < n`): each guard that is
  /// affine in the loop and the loops between (constant ranges) holds on a prefix [min, b_g) of
  /// it (BoundForAllInner); the loop becomes [min, s) with those guards assumed true
  /// (AssumeFacts) and the tail [s, end) with every guard kept, s = min(end, max(min, min_g b_g)).
  Stmt PartitionSymbolic(const ForNode* op, const Stmt& s) {
    GuardCollector gc(op->loop_var.get_var());
    gc.VisitStmt(op->body);
    // Variables defined inside the loop (loops, lets): a bound must not use them.
    struct Defined : StmtExprVisitor {
      std::set<const VarNode*> vars;
      void VisitStmt_(const ForNode* f) override {
        vars.insert(f->loop_var.get_var());
        StmtExprVisitor::VisitStmt_(f);
      }
      void VisitStmt_(const LetStmtNode* l) override {
        vars.insert(l->var.get_var());
        StmtExprVisitor::VisitStmt_(l);
      }
      void VisitExpr_(const ir::LetNode* l) override {
        vars.insert(l->var.get_var());
        StmtExprVisitor::VisitExpr_(l);
      }
    } defined;
    defined.VisitStmt(op->body);
    std::vector<PrimExpr> facts, bounds;
    for (const Guard& g : gc.guards) {
      auto fact = detail::NormalizeComparison(g.term);
      if (!fact) continue;
      auto b = detail::BoundForAllInner(*fact, op->loop_var, g.inner);
      if (!b || b->is_lower) continue;
      bool local = false;
      ForEachVar(b->bound, [&](const VarNode* v) { local |= defined.vars.count(v) > 0 || v == op->loop_var.get_var(); });
      if (local) continue;
      bool seen = false;
      for (const PrimExpr& f : facts) seen |= ir::ExprStructuralEqual(f, g.term);
      if (!seen) facts.push_back(g.term);
      bounds.push_back(b->bound);
    }
    if (facts.empty()) return StmtExprMutator::VisitStmt_(op, s);
    arith::Analyzer an;
    const PrimExpr end = an.Simplify(op->min + op->extent);
    PrimExpr split = bounds[0];
    for (size_t i = 1; i < bounds.size(); ++i) split = ir::min(split, bounds[i]);
    split = an.Simplify(ir::min(end, ir::max(op->min, split)));
    Stmt main = ForNode::make(op->loop_var, op->min, an.Simplify(split - op->min), op->for_kind,
                              VisitStmt(detail::AssumeFacts(op->body, facts)), op->annotations);
    Stmt tail = detail::FreshCopy(
        ForNode::make(op->loop_var, split, an.Simplify(end - split), op->for_kind, VisitStmt(op->body), op->annotations));
    return SeqStmtNode::make({main, tail});
  }
};

}  // namespace

PrimFunc LoopPartition(const PrimFunc& func) {
  Stmt body = Partitioner().VisitStmt(func->body);
  return body.same_as(func->body) ? func : func.WithBody(body);
}

}  // namespace tessera::tir::transform
