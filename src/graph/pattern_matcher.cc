// The dataflow pattern matcher (graph/pattern_matcher.h).
#include "tessera/graph/pattern_matcher.h"

#include <algorithm>

#include "tessera/graph/functor.h"
#include "tessera/support/error.h"

namespace tessera::graph {

namespace {

std::vector<Expr> Inputs(const Expr& e) {
  if (const auto* c = e->as<CallNode>()) return c->args;
  if (const auto* t = e->as<TupleNode>()) return t->fields;
  if (const auto* g = e->as<TupleGetItemNode>()) return {g->tuple};
  return {};
}

bool AttrsHold(const Attrs& have, const Attrs& want) {
  for (const auto& [name, value] : want.items()) {
    auto it = std::find_if(have.items().begin(), have.items().end(), [&](const auto& kv) { return kv.first == name; });
    if (it == have.items().end() || !(it->second == value)) return false;
  }
  return true;
}

const TensorTypeNode* TensorTypeOf(const Expr& e) {
  return e->has_checked_type() && e->checked_type() ? e->checked_type()->as<TensorTypeNode>() : nullptr;
}

}  // namespace

PatternMatcher::PatternMatcher(const Expr& root) {
  TESSERA_ICHECK(root != nullptr, "PatternMatcher on a null graph");
  users_ = std::make_shared<UsersMap>();
  PostOrderVisit(root, [&](const Expr& e) {
    std::vector<Expr> in = graph::Inputs(e);
    if (const auto* f = e->as<FunctionNode>()) in = {f->body};
    if (const auto* l = e->as<LetNode>()) in = {l->value, l->body};
    if (const auto* i = e->as<IfNode>()) in = {i->cond, i->true_branch, i->false_branch};
    for (const Expr& x : in) {
      auto& u = (*users_)[x.get()];
      if (std::find(u.begin(), u.end(), e.get()) == u.end()) u.push_back(e.get());
    }
  });
}

const std::vector<const ExprNode*>& PatternMatcher::UsersOf(const Expr& e) const {
  static const std::vector<const ExprNode*> kNone;
  auto it = users_->find(e.get());
  return it == users_->end() ? kNone : it->second;
}

bool PatternMatcher::Match(const DFPattern& p, const Expr& e) {
  memo_.clear();
  covered_.clear();
  leaves_.clear();
  return Visit(p, e);
}

void PatternMatcher::Cover(const Expr& e) {
  if (std::find(covered_.begin(), covered_.end(), e) == covered_.end()) covered_.push_back(e);
}

std::vector<Expr> PatternMatcher::Inputs() const {
  std::vector<Expr> out;
  for (const Expr& e : leaves_)
    if (std::find(covered_.begin(), covered_.end(), e) == covered_.end() && std::find(out.begin(), out.end(), e) == out.end())
      out.push_back(e);
  return out;
}

bool PatternMatcher::Visit(const DFPattern& p, const Expr& e) {
  if (auto it = memo_.find(p.get()); it != memo_.end()) return it->second == e;
  // A failed attempt leaves nothing behind (alternatives and dominator paths backtrack).
  const auto memo = memo_;
  const size_t covered = covered_.size(), leaves = leaves_.size();
  auto fail = [&] {
    memo_ = memo;
    covered_.resize(covered);
    leaves_.resize(leaves);
    return false;
  };
  bool ok = false;
  switch (p->kind) {
    case PatternKind::kWildcard: ok = true; leaves_.push_back(e); break;
    case PatternKind::kVar: {
      const auto* v = e->as<VarNode>();
      ok = v && (p->as<VarPatternNode>()->name.empty() || v->name_hint == p->as<VarPatternNode>()->name);
      if (ok) leaves_.push_back(e);
      break;
    }
    case PatternKind::kConstant: ok = e->as<ConstantNode>() != nullptr; if (ok) leaves_.push_back(e); break;
    case PatternKind::kExpr: ok = p->as<ExprPatternNode>()->expr == e; if (ok) leaves_.push_back(e); break;
    case PatternKind::kCall: {
      const auto* cp = p->as<CallPatternNode>();
      const auto* call = e->as<CallNode>();
      const auto* op = call ? call->op->as<OpNode>() : nullptr;
      if (!op || op->name != cp->op) return fail();
      if (cp->any_args) {
        for (const Expr& a : call->args) leaves_.push_back(a);
      } else {
        if (cp->args.size() != call->args.size()) return fail();
        for (size_t i = 0; i < cp->args.size(); ++i)
          if (!Visit(cp->args[i], call->args[i])) return fail();
      }
      Cover(e);
      ok = true;
      break;
    }
    case PatternKind::kTuple: {
      const auto* tp = p->as<TuplePatternNode>();
      const auto* t = e->as<TupleNode>();
      if (!t || t->fields.size() != tp->fields.size()) return fail();
      for (size_t i = 0; i < tp->fields.size(); ++i)
        if (!Visit(tp->fields[i], t->fields[i])) return fail();
      Cover(e);
      ok = true;
      break;
    }
    case PatternKind::kTupleGetItem: {
      const auto* gp = p->as<TupleGetItemPatternNode>();
      const auto* g = e->as<TupleGetItemNode>();
      if (!g || (gp->index >= 0 && gp->index != g->index) || !Visit(gp->tuple, g->tuple)) return fail();
      Cover(e);
      ok = true;
      break;
    }
    case PatternKind::kAlt: {
      const auto* a = p->as<AltPatternNode>();
      ok = Visit(a->left, e) || Visit(a->right, e);
      break;
    }
    case PatternKind::kAttr: {
      const auto* a = p->as<AttrPatternNode>();
      const Attrs* have = nullptr;
      if (const auto* c = e->as<CallNode>()) have = &c->attrs;
      if (const auto* f = e->as<FunctionNode>()) have = &f->attrs;
      ok = have && AttrsHold(*have, a->attrs) && Visit(a->pattern, e);
      break;
    }
    case PatternKind::kType: {
      const auto* t = p->as<TypePatternNode>();
      ok = e->has_checked_type() && StructuralEqual(e->checked_type(), t->type) && Visit(t->pattern, e);
      break;
    }
    case PatternKind::kShape: {
      const auto* s = p->as<ShapePatternNode>();
      const TensorTypeNode* tt = TensorTypeOf(e);
      ok = tt && tt->shape.size() == s->shape.size();
      for (size_t i = 0; ok && i < s->shape.size(); ++i)
        ok = s->shape[i] < 0 || (tt->shape[i].is_static() && tt->shape[i].value() == s->shape[i]);
      ok = ok && Visit(s->pattern, e);
      break;
    }
    case PatternKind::kDType: {
      const auto* d = p->as<DTypePatternNode>();
      const TensorTypeNode* tt = TensorTypeOf(e);
      ok = tt && tt->dtype == d->dtype && Visit(d->pattern, e);
      break;
    }
    case PatternKind::kDominator: ok = VisitDominator(*p->as<DominatorPatternNode>(), e); break;
  }
  if (!ok) return fail();
  memo_[p.get()] = e;
  return true;
}

// The child matches; walking up its inputs through nodes that match `path` (each matched on its
// own: the path pattern's wildcards bind afresh per node) reaches exactly one node matching
// `parent`; and no node of the region but the child, parent included, is used outside it.
bool PatternMatcher::VisitDominator(const DominatorPatternNode& d, const Expr& e) {
  if (!Visit(d.child, e)) return false;
  std::vector<Expr> region = {e}, inputs;
  Expr parent;
  std::vector<Expr> work = graph::Inputs(e);
  auto in_region = [&](const Expr& x) { return std::find(region.begin(), region.end(), x) != region.end(); };
  while (!work.empty()) {
    Expr x = work.back();
    work.pop_back();
    if (in_region(x) || x == parent) continue;
    PatternMatcher sub(*this);  // same graph, fresh bindings
    if (sub.Match(d.parent, x)) {
      if (parent && parent != x) return false;  // two producers: not one dominator
      parent = x;
      continue;
    }
    if (x->as<CallNode>() && sub.Match(d.path, x)) {
      region.push_back(x);
      for (const Expr& y : graph::Inputs(x)) work.push_back(y);
      continue;
    }
    if (std::find(inputs.begin(), inputs.end(), x) == inputs.end()) inputs.push_back(x);
  }
  if (!parent) return false;
  region.push_back(parent);
  for (const Expr& r : region) {
    if (r == e) continue;
    for (const ExprNode* u : UsersOf(r))
      if (std::none_of(region.begin(), region.end(), [&](const Expr& q) { return q.get() == u; })) return false;
  }
  // The parent's own inputs are inputs of the region.
  for (const Expr& y : graph::Inputs(parent))
    if (!in_region(y) && std::find(inputs.begin(), inputs.end(), y) == inputs.end()) inputs.push_back(y);
  for (const Expr& r : region) Cover(r);
  for (const Expr& x : inputs) leaves_.push_back(x);
  return true;
}

bool MatchPattern(const DFPattern& p, const Expr& e) { return PatternMatcher(e).Match(p, e); }

}  // namespace tessera::graph
