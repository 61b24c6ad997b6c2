// FoldConstant: see include/tessera/graph/transform/fold_constant.h.
#include "tessera/graph/transform/fold_constant.h"

#include <unordered_map>
#include <unordered_set>

#include "tessera/graph/functor.h"
#include "tessera/graph/infer_type.h"
#include "tessera/support/error.h"
#include "pass_util.h"

namespace tessera::graph::transform {
namespace {

/// Marks the constant nodes of one function body and finds the roots to evaluate.
class ConstantFinder {
 public:
  explicit ConstantFinder(const Expr& body) {
    PostOrderVisit(body, [this](const Expr& e) { Mark(e); });
    // A constant call is a root when a non-constant node uses it, or it is the result.
    PostOrderVisit(body, [this](const Expr& e) {
      if (is_const_.count(e.get())) return;
      detail::ForEachUse(e, [this](const Expr& child) { MaybeRoot(child); });
    });
    MaybeRoot(body);
  }
  const std::vector<Expr>& roots() const { return roots_; }

 private:
  bool IsConst(const Expr& e) const { return is_const_.count(e.get()) != 0; }

  void Mark(const Expr& e) {
    if (e->as<ConstantNode>()) {
      is_const_.insert(e.get());
    } else if (const auto* c = e->as<CallNode>()) {
      if (!c->op->as<OpNode>()) return;  // calls of functions are left alone
      if (e->has_checked_type() && e->checked_type()->as<ListTypeNode>()) return;  // a VM list: no kernel
      for (const auto& a : c->args)
        if (!IsConst(a)) return;
      is_const_.insert(e.get());
    } else if (const auto* t = e->as<TupleNode>()) {
      for (const auto& f : t->fields)
        if (!IsConst(f)) return;
      is_const_.insert(e.get());
    }
  }

  void MaybeRoot(const Expr& e) {
    if (!IsConst(e) || !e->as<CallNode>() || !roots_seen_.insert(e.get()).second) return;
    if (e->has_checked_type() && e->checked_type()->as<TensorTypeNode>()) roots_.push_back(e);
  }

  std::unordered_set<const ExprNode*> is_const_;
  std::unordered_set<const ExprNode*> roots_seen_;
  std::vector<Expr> roots_;
};

class Replacer : public ExprMutator {
 public:
  explicit Replacer(std::unordered_map<const ExprNode*, Expr> folded) : folded_(std::move(folded)) {}

 protected:
  Expr MutateCall_(const Call& call) override {
    if (auto it = folded_.find(call.get()); it != folded_.end()) return it->second;
    return ExprMutator::MutateCall_(call);
  }
  Expr MutateTupleGetItem_(const TupleGetItem& g) override {
    Expr tuple = Mutate(g->tuple);
    if (const auto* t = tuple->as<TupleNode>()) return t->fields.at(static_cast<size_t>(g->index));
    return tuple == g->tuple ? Expr(g) : TupleGetItemNode::make(tuple, g->index);
  }

 private:
  std::unordered_map<const ExprNode*, Expr> folded_;
};

}  // namespace

IRModule FoldConstant(const IRModule& input, const ConstantEvaluator& evaluate) {
  IRModule mod = InferType(input);
  std::vector<Expr> roots;
  for (const auto& [name, fn] : mod.functions()) {
    if (fn->attrs.GetInt("Primitive", 0)) continue;
    ConstantFinder finder(fn->body);
    roots.insert(roots.end(), finder.roots().begin(), finder.roots().end());
  }
  std::unordered_map<const ExprNode*, Expr> folded;
  if (!roots.empty() && evaluate) {
    std::vector<runtime::NDArray> values = evaluate(roots);
    TESSERA_ICHECK(values.size() == roots.size(), "FoldConstant: the evaluator returned ", values.size(),
                   " arrays for ", roots.size(), " expressions");
    for (size_t i = 0; i < roots.size(); ++i) folded[roots[i].get()] = ConstantNode::make(values[i]);
  }
  IRModule out = IRModule::WithTypesOf(mod);
  for (const auto& [name, fn] : mod.functions()) {
    Replacer r(folded);
    Expr body = r.Mutate(fn->body);
    out.Add(name, body == fn->body ? fn : FunctionNode::make(fn->params, body, fn->ret_type, fn->attrs));
  }
  return out;
}

Pass FoldConstantPass(ConstantEvaluator evaluate) {
  return Pass({"FoldConstant", "evaluates subgraphs whose inputs are all constants at compile time", 2},
              [evaluate = std::move(evaluate)](const IRModule& m, const PassContext&) {
                return FoldConstant(m, evaluate);
              });
}

}  // namespace tessera::graph::transform
