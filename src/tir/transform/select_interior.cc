// Interior analysis of select conditions (select_interior.h).
#include "select_interior.h"

#include <map>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/op.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/tir/functor.h"

namespace tessera::tir::transform::detail {

namespace {

using ir::VarNode;

/// Signed scalar integers: index arithmetic (unsigned differences would wrap).
bool IsScalarInt(const PrimExpr& e) { return e.dtype().is_scalar() && e.dtype().is_int(); }

/// The facts a rewrite may use, each in the form `d <= k`.
class FactRewriter : public StmtExprMutator {
 public:
  explicit FactRewriter(const std::vector<PrimExpr>& facts) : facts_(facts) {
    for (const PrimExpr& f : facts)
      if (auto n = NormalizeComparison(f)) linear_.push_back(*n);
  }

 protected:
  PrimExpr VisitExpr_(const ir::SelectNode* op, const PrimExpr& e) override {
    PrimExpr cond = VisitExpr(op->condition);
    PrimExpr tv = VisitExpr(op->true_value), fv = VisitExpr(op->false_value);
    PrimExpr kept;
    bool changed = false;
    for (const PrimExpr& c : Conjuncts(cond)) {
      if (IsFact(c)) {
        changed = true;
        continue;
      }
      kept = kept.defined() ? (kept && c) : c;
    }
    if (!changed && cond.same_as(op->condition) && tv.same_as(op->true_value) && fv.same_as(op->false_value))
      return e;
    if (!kept.defined()) return tv;
    return ir::SelectNode::make(kept, tv, fv);
  }

  Stmt VisitStmt_(const IfThenElseNode* op, const Stmt& s) override {
    Stmt then_case = VisitStmt(op->then_case);
    Stmt else_case = op->else_case.defined() ? VisitStmt(op->else_case) : Stmt();
    PrimExpr cond = VisitExpr(op->condition), kept;
    for (const PrimExpr& c : Conjuncts(cond)) {
      if (!IsFact(c)) kept = kept.defined() ? (kept && c) : c;
    }
    if (!kept.defined()) return then_case;
    if (kept.same_as(op->condition) && then_case.same_as(op->then_case) && else_case.same_as(op->else_case)) return s;
    return IfThenElseNode::make(kept, then_case, else_case);
  }

  PrimExpr VisitBinary_(const ir::PrimExprNode* op, const PrimExpr& a, const PrimExpr& b,
                        const PrimExpr& e) override {
    PrimExpr r = StmtExprMutator::VisitBinary_(op, a, b, e);
    if (op->kind != ir::ExprKind::kMin && op->kind != ir::ExprKind::kMax) return r;
    PrimExpr x, y;
    if (!ir::GetBinaryOperands(r, &x, &y) || !IsScalarInt(x)) return r;
    // min(x, y) = x when x - y <= 0; max(x, y) = x when y - x <= 0.
    const bool is_min = op->kind == ir::ExprKind::kMin;
    if (ProvesNonPositive(is_min ? x - y : y - x)) return x;
    if (ProvesNonPositive(is_min ? y - x : x - y)) return y;
    return r;
  }

 private:
  bool IsFact(const PrimExpr& c) const {
    for (const PrimExpr& f : facts_)
      if (ir::ExprStructuralEqual(c, f)) return true;
    return false;
  }
  /// e <= 0 follows from a fact d <= k when e - d simplifies to a constant c with c + k <= 0.
  bool ProvesNonPositive(const PrimExpr& e) const {
    arith::Analyzer an;
    for (const LinearFact& f : linear_) {
      int64_t c = 0;
      if (f.d.dtype() != e.dtype()) continue;
      if (ir::as_const_int(an.Simplify(e - f.d), &c) && c + f.k <= 0) return true;
    }
    return false;
  }
  const std::vector<PrimExpr>& facts_;
  std::vector<LinearFact> linear_;
};

}  // namespace

std::optional<LinearFact> NormalizeComparison(const PrimExpr& cond) {
  PrimExpr a, b;
  if (!ir::GetBinaryOperands(cond, &a, &b) || !IsScalarInt(a) || a.dtype() != b.dtype()) return std::nullopt;
  switch (cond->kind) {
    case ir::ExprKind::kLT: return LinearFact{a - b, -1};
    case ir::ExprKind::kLE: return LinearFact{a - b, 0};
    case ir::ExprKind::kGT: return LinearFact{b - a, -1};
    case ir::ExprKind::kGE: return LinearFact{b - a, 0};
    default: return std::nullopt;
  }
}

std::vector<PrimExpr> Conjuncts(const PrimExpr& cond) {
  if (auto* a = cond.as<ir::AndNode>()) {
    std::vector<PrimExpr> l = Conjuncts(a->a), r = Conjuncts(a->b);
    l.insert(l.end(), r.begin(), r.end());
    return l;
  }
  return {cond};
}

std::optional<VarBound> BoundForAllInner(const LinearFact& fact, const Var& v, const std::vector<const ForNode*>& inner) {
  arith::Analyzer an;
  const DataType t = v.dtype();
  std::map<const VarNode*, PrimExpr> zero = {{v.get_var(), ir::make_const(t, 0)}};
  for (const ForNode* f : inner) zero[f->loop_var.get_var()] = ir::make_const(f->loop_var.dtype(), 0);
  const PrimExpr d0 = an.Simplify(Substitute(fact.d, zero));
  auto coefficient = [&](const Var& x, int64_t* c) {
    std::map<const VarNode*, PrimExpr> one = zero;
    one[x.get_var()] = ir::make_const(x.dtype(), 1);
    return ir::as_const_int(an.Simplify(Substitute(fact.d, one) - d0), c);
  };
  int64_t cv = 0;
  if (!coefficient(v, &cv) || cv == 0) return std::nullopt;
  // d = cv * v + sum(ci * xi) + d0 exactly, and the inner part is at most M.
  PrimExpr affine = ir::make_const(t, cv) * v + d0;
  int64_t m = 0;
  for (const ForNode* f : inner) {
    int64_t ci = 0, lo = 0, ext = 0;
    if (!coefficient(f->loop_var, &ci)) return std::nullopt;
    if (ci == 0) continue;
    if (!ir::as_const_int(f->min, &lo) || !ir::as_const_int(f->extent, &ext) || ext < 1) return std::nullopt;
    affine = affine + ir::make_const(f->loop_var.dtype(), ci) * f->loop_var;
    m += ci > 0 ? ci * (lo + ext - 1) : ci * lo;
  }
  if (!ir::is_zero(an.Simplify(fact.d - affine))) return std::nullopt;
  // cv * v + M + d0 <= k.
  const PrimExpr rest = ir::make_const(t, fact.k - m) - d0;  // cv * v <= rest
  if (cv > 0) return VarBound{false, an.Simplify(ir::floordiv(rest, ir::make_const(t, cv)) + 1)};
  // -a v <= rest  <=>  v >= ceil(-rest / a)
  const int64_t a = -cv;
  return VarBound{true, an.Simplify(ir::floordiv(ir::make_const(t, a - 1) - rest, ir::make_const(t, a)))};
}

Stmt AssumeFacts(const Stmt& s, const std::vector<PrimExpr>& facts) { return FactRewriter(facts).VisitStmt(s); }

}  // namespace tessera::tir::transform::detail
