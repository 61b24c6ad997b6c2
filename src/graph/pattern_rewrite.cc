// RewritePatterns and PartitionPattern (graph/pattern_rewrite.h).
#include "tessera/graph/pattern_rewrite.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "tessera/graph/functor.h"
#include "tessera/graph/infer_type.h"
#include "tessera/support/error.h"

namespace tessera::graph {

namespace {

// Applies the first rule whose pattern matches each rewritten node.
class Rewriter : public ExprMutator {
 public:
  explicit Rewriter(const std::vector<PatternRewrite>& rules) : rules_(rules) {}
  bool changed = false;

  Expr Mutate(const Expr& e) override {
    auto it = memo_.find(e.get());
    if (it != memo_.end()) return it->second;
    Expr post = ExprMutator::Mutate(e);
    if (post->as<OpNode>() || post->as<VarNode>()) return post;
    for (const PatternRewrite& r : rules_) {
      PatternMatcher m(post);
      if (!m.Match(r.pattern, post)) continue;
      Expr out = r.rewrite(post, m);
      TESSERA_ICHECK(out != nullptr, "a pattern rewrite returned null for ", PatternStr(r.pattern));
      if (out != post) {
        changed = true;
        memo_[e.get()] = out;
        return out;
      }
    }
    return post;
  }

 private:
  const std::vector<PatternRewrite>& rules_;
};

// Nodes reachable from `e` without entering functions, inputs before users.
std::vector<Expr> PostOrderOutsideFunctions(const Expr& e) {
  std::vector<Expr> order;
  std::unordered_set<const ExprNode*> seen;
  std::vector<std::pair<Expr, bool>> stack = {{e, false}};
  while (!stack.empty()) {
    auto [x, expanded] = stack.back();
    stack.pop_back();
    if (expanded) {
      order.push_back(x);
      continue;
    }
    if (!seen.insert(x.get()).second) continue;
    stack.push_back({x, true});
    std::vector<Expr> in;
    if (const auto* c = x->as<CallNode>()) {
      in = c->args;
      if (!c->op->as<FunctionNode>()) in.push_back(c->op);
    }
    if (const auto* t = x->as<TupleNode>()) in = t->fields;
    if (const auto* g = x->as<TupleGetItemNode>()) in = {g->tuple};
    if (const auto* l = x->as<LetNode>()) in = {l->value, l->body};
    if (const auto* i = x->as<IfNode>()) in = {i->cond, i->true_branch, i->false_branch};
    for (auto it = in.rbegin(); it != in.rend(); ++it)
      if (!seen.count(it->get())) stack.push_back({*it, false});
  }
  return order;
}

struct Group {
  std::vector<Expr> covered;
  std::vector<Expr> inputs;
  std::string name;  // PartitionedFromPattern
};

class Outliner : public ExprMutator {
 public:
  Outliner(const std::unordered_map<const ExprNode*, Group>& groups, const Attrs& attrs) : groups_(groups), attrs_(attrs) {}

  Expr Mutate(const Expr& e) override {
    auto it = memo_.find(e.get());
    if (it != memo_.end()) return it->second;
    auto g = groups_.find(e.get());
    if (g == groups_.end()) return ExprMutator::Mutate(e);
    const Group& group = g->second;
    std::vector<Var> params;
    std::unordered_map<const ExprNode*, Expr> inside;
    std::vector<Expr> args;
    for (size_t i = 0; i < group.inputs.size(); ++i) {
      const Expr& x = group.inputs[i];
      Var p = VarNode::make("p" + std::to_string(i), x->has_checked_type() ? x->checked_type() : nullptr);
      params.push_back(p);
      inside[x.get()] = p;
      args.push_back(Mutate(x));
    }
    Expr body = Clone(e, group, inside);
    Attrs fattrs = attrs_;
    fattrs.Set("PartitionedFromPattern", group.name);
    Expr out = CallNode::make(FunctionNode::make(params, body, nullptr, fattrs), args);
    memo_[e.get()] = out;
    return out;
  }

 private:
  // The covered subgraph rooted at `e`, with the group's inputs replaced by its params.
  Expr Clone(const Expr& e, const Group& group, std::unordered_map<const ExprNode*, Expr>& inside) {
    if (auto it = inside.find(e.get()); it != inside.end()) return it->second;
    TESSERA_ICHECK(std::find(group.covered.begin(), group.covered.end(), e) != group.covered.end(),
                   "partition: a node of the match is neither covered nor an input");
    Expr out;
    if (const auto* c = e->as<CallNode>()) {
      std::vector<Expr> args;
      for (const Expr& a : c->args) args.push_back(Clone(a, group, inside));
      out = CallNode::make(c->op, args, c->attrs);
    } else if (const auto* t = e->as<TupleNode>()) {
      std::vector<Expr> fields;
      for (const Expr& f : t->fields) fields.push_back(Clone(f, group, inside));
      out = TupleNode::make(fields);
    } else if (const auto* gi = e->as<TupleGetItemNode>()) {
      out = TupleGetItemNode::make(Clone(gi->tuple, group, inside), gi->index);
    } else {
      TESSERA_THROW(InternalError, "partition: cannot outline a ", static_cast<int>(e->kind), " node");
    }
    inside[e.get()] = out;
    return out;
  }

  const std::unordered_map<const ExprNode*, Group>& groups_;
  const Attrs& attrs_;
};

}  // namespace

Expr RewritePatterns(const std::vector<PatternRewrite>& rules, const Expr& e, int max_rounds) {
  Expr cur = e;
  for (int round = 0; round < max_rounds; ++round) {
    Rewriter r(rules);
    Expr next = r.Mutate(cur);
    if (!r.changed) return next;
    cur = next;
  }
  TESSERA_THROW(InternalError, "RewritePatterns: the rules still change the graph after ", max_rounds,
                " rounds (a rule that undoes another, or grows the graph)");
}

Expr PartitionPattern(const DFPattern& pattern, const Expr& e, const Attrs& attrs,
                      const std::function<bool(const Expr&, const PatternMatcher&)>& check) {
  if (!e->has_checked_type()) InferExprType(e);  // the params are typed as their inputs
  const std::vector<Expr> order = PostOrderOutsideFunctions(e);
  PatternMatcher matcher(e);
  std::unordered_set<const ExprNode*> claimed;
  std::unordered_map<const ExprNode*, Group> groups;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Expr& n = *it;
    if (claimed.count(n.get()) || !(n->as<CallNode>() || n->as<TupleNode>() || n->as<TupleGetItemNode>())) continue;
    if (!matcher.Match(pattern, n)) continue;
    Group g{matcher.covered(), matcher.Inputs(), ""};
    if (std::find(g.covered.begin(), g.covered.end(), n) == g.covered.end()) continue;  // a leaf-only match
    bool ok = std::none_of(g.covered.begin(), g.covered.end(), [&](const Expr& c) { return claimed.count(c.get()); });
    for (const Expr& c : g.covered) {
      if (!ok || c == n) continue;
      for (const ExprNode* u : matcher.UsersOf(c))
        ok &= std::any_of(g.covered.begin(), g.covered.end(), [&](const Expr& q) { return q.get() == u; });
    }
    if (!ok || (check && !check(n, matcher))) continue;
    for (const Expr& c : g.covered) claimed.insert(c.get());
    // The name: covered ops in post-order.
    for (const Expr& x : order) {
      if (std::find(g.covered.begin(), g.covered.end(), x) == g.covered.end()) continue;
      if (const auto* c = x->as<CallNode>())
        if (const auto* op = c->op->as<OpNode>()) g.name += op->name + "_";
    }
    groups[n.get()] = std::move(g);
  }
  if (groups.empty()) return e;
  return Outliner(groups, attrs).Mutate(e);
}

}  // namespace tessera::graph
