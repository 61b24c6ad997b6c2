// VectorizeLoop (tir/transform/vectorize_loop.h).
#include "tessera/tir/transform/vectorize_loop.h"

#include <algorithm>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/expr_functor.h"
#include "tessera/ir/op.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/tir/functor.h"

#include "select_interior.h"

namespace tessera::tir::transform {

namespace {

struct NotVectorizable {
  std::string reason;
};

// Rewrites one loop body with the loop var as a ramp; throws NotVectorizable.
class Vectorizer : public StmtExprMutator {
 public:
  Vectorizer(const Var& var, PrimExpr ramp, int lanes) : var_(var), ramp_(std::move(ramp)), lanes_(lanes) {}

  Stmt VisitStmt(const Stmt& s) override {
    switch (s->kind) {
      case StmtKind::kBufferStore: case StmtKind::kSeqStmt: case StmtKind::kEvaluate:
        return StmtExprMutator::VisitStmt(s);
      case StmtKind::kFor: throw NotVectorizable{"the body contains an inner loop"};
      case StmtKind::kIfThenElse: {
        // A condition that does not depend on the loop var (e.g. a split's predicate on an
        // outer loop) stays scalar around the vectorized branches.
        auto* op = s.as<IfThenElseNode>();
        if (!VisitExpr(op->condition).same_as(op->condition)) throw NotVectorizable{"the body contains an if"};
        Stmt t = VisitStmt(op->then_case);
        Stmt e = op->else_case.defined() ? VisitStmt(op->else_case) : Stmt();
        return IfThenElseNode::make(op->condition, t, e);
      }
      case StmtKind::kAllocate: throw NotVectorizable{"the body contains an allocate"};
      case StmtKind::kLetStmt: throw NotVectorizable{"the body contains a let"};
      default: throw NotVectorizable{"the body contains a block"};
    }
  }

 protected:
  PrimExpr VisitExpr_(const ir::VarNode* op, const PrimExpr& e) override {
    return op == var_.get_var() ? ramp_ : e;
  }
  PrimExpr VisitBinary_(const ir::PrimExprNode* op, const PrimExpr& a, const PrimExpr& b, const PrimExpr& e) override {
    PrimExpr na = VisitExpr(a), nb = VisitExpr(b);
    if (na.same_as(a) && nb.same_as(b)) return e;
    int lanes = std::max(na.dtype().lanes(), nb.dtype().lanes());
    return ir::MakeBinary(op->kind, Widen(na, lanes), Widen(nb, lanes));
  }
  PrimExpr VisitExpr_(const ir::SelectNode* op, const PrimExpr& e) override {
    PrimExpr c = VisitExpr(op->condition), t = VisitExpr(op->true_value), f = VisitExpr(op->false_value);
    if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) return e;
    int lanes = std::max({c.dtype().lanes(), t.dtype().lanes(), f.dtype().lanes()});
    return ir::SelectNode::make(Widen(c, lanes), Widen(t, lanes), Widen(f, lanes));
  }
  PrimExpr VisitExpr_(const ir::CallNode* op, const PrimExpr& e) override {
    std::vector<PrimExpr> args;
    int lanes = 1;
    for (const auto& a : op->args) {
      args.push_back(VisitExpr(a));
      lanes = std::max(lanes, args.back().dtype().lanes());
    }
    for (auto& a : args) a = Widen(a, lanes);
    return ir::CallNode::make(op->dtype.with_lanes(lanes), op->op, std::move(args));
  }
  PrimExpr VisitExpr_(const ir::LetNode*, const PrimExpr&) override { throw NotVectorizable{"the body contains a let"}; }
  PrimExpr VisitExpr_(const ir::RampNode*, const PrimExpr&) override {
    throw NotVectorizable{"the body already contains vector expressions"};
  }
  PrimExpr VisitExpr_(const ir::BroadcastNode*, const PrimExpr&) override {
    throw NotVectorizable{"the body already contains vector expressions"};
  }
  PrimExpr VisitExprExtension_(const PrimExpr& e) override {
    if (e.as<BufferLoadNode>()) return StmtExprMutator::VisitExprExtension_(e);
    throw NotVectorizable{"the body contains a reduction"};
  }
  Stmt VisitStmt_(const BufferStoreNode* op, const Stmt& s) override {
    PrimExpr value = VisitExpr(op->value);
    std::vector<PrimExpr> idx;
    int idx_lanes = 1;
    for (const auto& i : op->indices) {
      idx.push_back(VisitExpr(i));
      idx_lanes = std::max(idx_lanes, idx.back().dtype().lanes());
    }
    if (idx_lanes == 1 && value.dtype().lanes() > 1) {
      throw NotVectorizable{"store to " + op->buffer->name + " does not depend on the loop variable (a reduction)"};
    }
    if (idx_lanes == 1) return s;
    return BufferStoreNode::make(op->buffer, Widen(value, idx_lanes), std::move(idx));
  }

 private:
  PrimExpr Widen(const PrimExpr& e, int lanes) {
    if (e.dtype().lanes() == lanes) return e;
    return ir::BroadcastNode::make(e, lanes);
  }
  Var var_;
  PrimExpr ramp_;
  int lanes_;
};

// Whether every conjunct of `cond` that uses v is an upper bound `d <= k` with d non-decreasing
// in v (a split tail's or an unpadding copy's guard): then it holds on every lane when it holds
// on the last one.
bool MonotoneUpperBounds(const PrimExpr& cond, const Var& v) {
  arith::Analyzer an;
  bool uses_v = false;
  for (const PrimExpr& c : detail::Conjuncts(cond)) {
    const PrimExpr next = Substitute(c, {{v.get_var(), v + ir::make_const(v.dtype(), 1)}});
    if (ir::ExprStructuralEqual(next, c)) continue;  // invariant in v
    uses_v = true;
    auto fact = detail::NormalizeComparison(c);
    if (!fact) return false;
    int64_t step = 0;
    const PrimExpr d_next = Substitute(fact->d, {{v.get_var(), v + ir::make_const(v.dtype(), 1)}});
    if (!ir::as_const_int(an.Simplify(d_next - fact->d), &step) || step < 0) return false;
  }
  return uses_v;
}

class LoopVectorizer : public StmtExprMutator {
 protected:
  Stmt VisitStmt_(const ForNode* op, const Stmt& s) override {
    Stmt body = VisitStmt(op->body);
    if (op->for_kind != ForKind::kVectorized) {
      return body.same_as(op->body) ? s : ForNode::make(op->loop_var, op->min, op->extent, op->for_kind, body, op->annotations);
    }
    int64_t n = 0;
    std::string reason;
    if (!ir::as_const_int(op->extent, &n) || n < 1) {
      reason = "the extent is not a positive constant";
    } else if (n == 1) {
      return Substitute(body, {{op->loop_var.get_var(), op->min}});
    } else {
      PrimExpr ramp = ir::RampNode::make(op->min, ir::make_const(op->min.dtype(), int64_t{1}), static_cast<int>(n));
      try {
        Stmt v = Vectorizer(op->loop_var, ramp, static_cast<int>(n)).VisitStmt(body);
        return v;
      } catch (const NotVectorizable& e) {
        reason = e.reason;
      }
      // Versioning: a body `if (guard) then` whose guard depends on the loop var only through
      // monotone upper bounds (dynamic shapes: the last partial column panel of an unpadding
      // copy) runs the vectorized `then` when the guard holds on the last lane, else the loop.
      const auto* guarded = body.as<IfThenElseNode>();
      PrimExpr last_ok;
      int64_t known = 0;
      if (guarded && !guarded->else_case.defined() && MonotoneUpperBounds(guarded->condition, op->loop_var)) {
        last_ok = arith::Analyzer().Simplify(Substitute(
            guarded->condition, {{op->loop_var.get_var(), op->min + ir::make_const(op->min.dtype(), n - 1)}}));
      }
      // A guard known at compile time on the last lane: false keeps the serial loop (some lane
      // fails); true vectorizes the then case alone.
      if (last_ok.defined() && !(ir::as_const_int(last_ok, &known) && known == 0)) {
        try {
          Stmt v = Vectorizer(op->loop_var, ramp, static_cast<int>(n)).VisitStmt(guarded->then_case);
          if (ir::as_const_int(last_ok, &known)) return v;
          auto ann = op->annotations;
          ann["vectorize_fallback"] = ir::StringImmNode::make("the guard fails on the last lane");
          Stmt serial = ForNode::make(op->loop_var, op->min, op->extent, ForKind::kSerial, body, ann);
          return IfThenElseNode::make(last_ok, v, serial);
        } catch (const NotVectorizable&) {
        }
      }
    }
    auto ann = op->annotations;
    ann["vectorize_fallback"] = ir::StringImmNode::make(reason);
    return ForNode::make(op->loop_var, op->min, op->extent, ForKind::kSerial, body, ann);
  }
};

}  // namespace

PrimFunc VectorizeLoop(const PrimFunc& func) {
  Stmt body = LoopVectorizer().VisitStmt(func->body);
  return body.same_as(func->body) ? func : func.WithBody(body);
}

}  // namespace tessera::tir::transform
