// Gradient: reverse-mode automatic differentiation over the graph IR's dataflow (gradient.h).
// The per-op rules are in gradient_rules.cc.
#include "tessera/graph/transform/gradient.h"

#include <unordered_map>
#include <unordered_set>

#include "gradient_rules.h"
#include "pass_util.h"
#include "tessera/graph/infer_type.h"
#include "tessera/support/error.h"

namespace tessera::graph::transform {

namespace {

bool IsFloatTensor(const Type& t) {
  const auto* tt = t ? t->as<TensorTypeNode>() : nullptr;
  return tt && tt->dtype.is_floating();
}

/// Whether a value of type `t` can carry an adjoint: a float tensor or a tuple of tensors with one.
bool Differentiable(const Type& t) {
  if (IsFloatTensor(t)) return true;
  if (const auto* tt = t ? t->as<TupleTypeNode>() : nullptr) {
    for (const Type& f : tt->fields)
      if (IsFloatTensor(f)) return true;
  }
  return false;
}

/// The construct an expression is, in the user's terms, for the refusal of what has no rule.
std::string Describe(const Expr& e) {
  switch (e->kind) {
    case ExprKind::kIf: return "an if expression";
    case ExprKind::kMatch: return "a match expression";
    case ExprKind::kFunction: return "a function (closure)";
    case ExprKind::kCall: return "a call of a function";
    default: return "this expression";
  }
}

class ReverseAD {
 public:
  ReverseAD(const Expr& y, const std::vector<Expr>& xs) : y_(y) {
    for (const Expr& x : xs) {
      if (!x->has_checked_type()) InferExprType(x);
      if (!IsFloatTensor(x->checked_type()))
        TESSERA_THROW(UserError, "Gradient: cannot differentiate with respect to a value of type ",
                      x->checked_type()->str(), " (only float tensors)");
      xs_.insert(x.get());
    }
    Order();
  }

  std::vector<Expr> Run(const std::vector<Expr>& xs, const Expr& seed) {
    if (depends_.count(y_.get())) AddTensor(y_, seed ? seed : detail::FilledLike(y_, 1, "(the seed of y)"), "seed");
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) Propagate(*it);
    std::vector<Expr> out;
    for (const Expr& x : xs) {
      auto it = adj_.find(x.get());
      out.push_back(it != adj_.end() ? it->second : detail::FilledLike(x, 0, "(zeros of an x y does not depend on)"));
    }
    return out;
  }

 private:
  /// What `e` uses, for ordering and dependence: ForEachUse, and a let-bound var's value.
  std::vector<Expr> Children(const Expr& e) {
    std::vector<Expr> c;
    if (const auto* v = e->as<VarNode>()) {
      if (auto it = let_values_.find(v); it != let_values_.end()) c.push_back(it->second);
      return c;
    }
    if (const auto* l = e->as<LetNode>()) let_values_[l->var.get()] = l->value;
    detail::ForEachUse(e, [&](const Expr& u) { c.push_back(u); });
    return c;
  }

  // Post-order of the nodes reachable from y (iterative DFS: no recursion on deep graphs), and
  // which of them depend on an x.
  void Order() {
    std::unordered_set<const ExprNode*> seen;
    struct Frame {
      Expr e;
      std::vector<Expr> children;
      size_t next = 0;
    };
    std::vector<Frame> stack;
    seen.insert(y_.get());
    stack.push_back({y_, Children(y_)});
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next < f.children.size()) {
        Expr c = f.children[f.next++];
        if (seen.insert(c.get()).second) {
          std::vector<Expr> cc = Children(c);
          stack.push_back({c, std::move(cc)});
        }
        continue;
      }
      bool dep = xs_.count(f.e.get()) != 0;
      if (!dep && f.e->has_checked_type() && Differentiable(f.e->checked_type())) {
        for (const Expr& c : f.children) dep = dep || depends_.count(c.get()) != 0;
      }
      if (dep) depends_.insert(f.e.get());
      order_.push_back(f.e);
      stack.pop_back();
    }
  }

  void CheckType(const Expr& node, const Expr& g, const std::string& from) {
    if (!StructuralEqual(node->checked_type(), g->checked_type()))
      TESSERA_THROW(InternalError, "Gradient: the rule of ", from, " gave an adjoint of type ", g->checked_type()->str(),
                    " for a value of type ", node->checked_type()->str());
  }

  void AddTensor(const Expr& node, const Expr& g, const std::string& from) {
    if (!g->has_checked_type()) InferExprType(g);
    if (node->checked_type()->as<TupleTypeNode>()) {
      const auto* t = g->as<TupleNode>();
      if (!t) TESSERA_THROW(InternalError, "Gradient: the rule of ", from, " gave a tuple value a non-tuple adjoint");
      for (size_t i = 0; i < t->fields.size(); ++i) AddField(node, static_cast<int>(i), t->fields[i], from);
      return;
    }
    CheckType(node, g, from);
    Expr& slot = adj_[node.get()];
    slot = slot ? CallOp("add", {slot, g}) : g;
    InferExprType(slot);
  }

  void AddField(const Expr& node, int i, const Expr& g, const std::string& from) {
    if (!g) return;
    const auto* tt = node->checked_type()->as<TupleTypeNode>();
    if (!g->has_checked_type()) InferExprType(g);
    if (!StructuralEqual(tt->fields[i], g->checked_type()))
      TESSERA_THROW(InternalError, "Gradient: the rule of ", from, " gave field ", i, " an adjoint of type ",
                    g->checked_type()->str(), " for a field of type ", tt->fields[i]->str());
    std::vector<Expr>& fields = tuple_adj_[node.get()];
    fields.resize(tt->fields.size());
    fields[i] = fields[i] ? CallOp("add", {fields[i], g}) : g;
    InferExprType(fields[i]);
  }

  bool HasAdjoint(const ExprNode* n) const { return adj_.count(n) != 0 || tuple_adj_.count(n) != 0; }

  /// Passes node's adjoint (tensor or tuple) on to `to`, which has node's type (a let's body, a
  /// let-bound var's value).
  void PassOn(const Expr& node, const Expr& to, const std::string& from) {
    if (!depends_.count(to.get())) return;
    if (auto it = adj_.find(node.get()); it != adj_.end()) AddTensor(to, it->second, from);
    if (auto it = tuple_adj_.find(node.get()); it != tuple_adj_.end()) {
      for (size_t i = 0; i < it->second.size(); ++i) AddField(to, static_cast<int>(i), it->second[i], from);
    }
  }

  void Propagate(const Expr& e) {
    if (!depends_.count(e.get()) || !HasAdjoint(e.get())) return;
    if (const auto* call = e->as<CallNode>()) {
      const auto* op = call->op->as<OpNode>();
      if (!op) TESSERA_THROW(UnsupportedError, "Gradient through ", Describe(e), " is not supported");
      const detail::GradientRule* rule = detail::FindGradientRule(op->name);
      if (!rule) TESSERA_THROW(UnsupportedError, "Gradient through op ", op->name, " is not supported");
      if (!adj_.count(e.get()))
        TESSERA_THROW(UnsupportedError, "Gradient through op ", op->name, " (a tuple result) is not supported");
      std::vector<bool> needs;
      for (const Expr& a : call->args) needs.push_back(depends_.count(a.get()) != 0);
      std::vector<Expr> grads = (*rule)(Downcast<CallNode>(e), adj_.at(e.get()), needs);
      for (size_t i = 0; i < call->args.size(); ++i) {
        if (!needs[i]) continue;
        if (i >= grads.size() || !grads[i])
          TESSERA_THROW(UnsupportedError, "Gradient through op ", op->name, " with respect to its argument ", i,
                        " is not supported");
        AddTensor(call->args[i], grads[i], "op " + op->name);
      }
    } else if (const auto* t = e->as<TupleNode>()) {
      auto it = tuple_adj_.find(e.get());
      if (it == tuple_adj_.end()) return;
      for (size_t i = 0; i < t->fields.size() && i < it->second.size(); ++i) {
        if (it->second[i] && depends_.count(t->fields[i].get())) AddTensor(t->fields[i], it->second[i], "a tuple");
      }
    } else if (const auto* g = e->as<TupleGetItemNode>()) {
      if (!depends_.count(g->tuple.get())) return;
      if (!g->tuple->checked_type()->as<TupleTypeNode>())
        TESSERA_THROW(UnsupportedError, "Gradient through a field of ", g->tuple->checked_type()->str(),
                      " is not supported");
      AddField(g->tuple, g->index, adj_.at(e.get()), "a tuple field");
    } else if (const auto* l = e->as<LetNode>()) {
      PassOn(e, l->body, "a let");
    } else if (const auto* v = e->as<VarNode>()) {
      if (auto it = let_values_.find(v); it != let_values_.end()) PassOn(e, it->second, "a let-bound variable");
    } else if (e->as<ConstantNode>() == nullptr) {
      TESSERA_THROW(UnsupportedError, "Gradient through ", Describe(e), " is not supported");
    }
  }

  Expr y_;
  std::unordered_set<const ExprNode*> xs_;
  std::unordered_map<const VarNode*, Expr> let_values_;
  std::vector<Expr> order_;
  std::unordered_set<const ExprNode*> depends_;
  std::unordered_map<const ExprNode*, Expr> adj_;
  std::unordered_map<const ExprNode*, std::vector<Expr>> tuple_adj_;
};

}  // namespace

std::vector<Expr> Gradient(const Expr& y, const std::vector<Expr>& xs, const Expr& seed) {
  TESSERA_CHECK(y != nullptr, "Gradient: y is null");
  if (!y->has_checked_type()) InferExprType(y);
  if (!IsFloatTensor(y->checked_type()))
    TESSERA_THROW(UserError, "Gradient: y must be a float tensor, got ", y->checked_type()->str());
  if (seed) {
    if (!seed->has_checked_type()) InferExprType(seed);
    if (!StructuralEqual(seed->checked_type(), y->checked_type()))
      TESSERA_THROW(UserError, "Gradient: the seed's type ", seed->checked_type()->str(), " is not y's type ",
                    y->checked_type()->str());
  }
  return ReverseAD(y, xs).Run(xs, seed);
}

Function GradientFunction(const Function& fn) {
  InferExprType(fn->body);
  std::vector<Expr> params(fn->params.begin(), fn->params.end());
  std::vector<Expr> grads = Gradient(fn->body, params);
  Expr body = TupleNode::make({fn->body, TupleNode::make(grads)});
  return FunctionNode::make(fn->params, body, nullptr, fn->attrs);
}

bool HasGradientRule(const std::string& op) { return detail::FindGradientRule(op) != nullptr; }

std::vector<std::string> ListGradientOps() { return detail::GradientRuleOps(); }

}  // namespace tessera::graph::transform
