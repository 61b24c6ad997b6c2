#include "tessera/graph/expr_util.h"

#include <functional>
#include <unordered_set>

#include "tessera/graph/functor.h"

namespace tessera::graph {

void AddTypeDefsUsed(IRModule* mod) {
  std::function<void(const ClausePatternNode&)> pattern = [&](const ClausePatternNode& p) {
    if (p.ctor) mod->AddTypeDef(p.ctor->type_data);
    for (const auto& f : p.fields) pattern(*f);
  };
  for (const auto& [name, fn] : mod->functions()) {
    PostOrderVisit(fn, [&](const Expr& e) {
      if (const auto* c = e->as<ConstructorNode>()) mod->AddTypeDef(c->type_data);
      if (const auto* m = e->as<MatchNode>())
        for (const MatchClause& clause : m->clauses) pattern(*clause.pattern);
    });
  }
}

std::vector<Type> ConstructorFieldTypes(const ConstructorNode& ctor, const ADTTypeNode& adt) {
  std::vector<std::pair<std::string, Type>> subst;
  for (size_t i = 0; i < ctor.type_data->type_params.size() && i < adt.args.size(); ++i)
    subst.emplace_back(ctor.type_data->type_params[i], adt.args[i]);
  std::vector<Type> out;
  for (const Type& f : ctor.def().fields) out.push_back(Substitute(f, subst));
  return out;
}

std::vector<Var> FreeVars(const FunctionNode& fn) {
  std::unordered_set<const VarNode*> bound, seen;
  std::vector<Var> out;
  for (const Var& p : fn.params) bound.insert(p.get());
  // Bindings first: a let's var, a nested function's params and a pattern's variables are bound
  // wherever they appear (names are unique per node), so the order of the walk does not matter.
  PostOrderVisit(fn.body, [&](const Expr& e) {
    if (const auto* l = e->as<LetNode>()) bound.insert(l->var.get());
    if (const auto* f = e->as<FunctionNode>())
      for (const Var& p : f->params) bound.insert(p.get());
    if (const auto* m = e->as<MatchNode>())
      for (const MatchClause& c : m->clauses)
        for (const Var& v : c.pattern->BoundVars()) bound.insert(v.get());
  });
  PostOrderVisit(fn.body, [&](const Expr& e) {
    if (const auto* v = e->as<VarNode>(); v && !bound.count(v) && seen.insert(v).second)
      out.push_back(std::static_pointer_cast<const VarNode>(e));
  });
  return out;
}

Expr CallOp(const std::string& name, std::vector<Expr> args, Attrs attrs) {
  return CallNode::make(OpNode::Get(name), std::move(args), std::move(attrs));
}

const TensorTypeNode* TensorTypeOf(const Expr& e) {
  if (!e || !e->has_checked_type()) return nullptr;
  return e->checked_type()->as<TensorTypeNode>();
}

std::optional<std::vector<int64_t>> StaticShapeOf(const Expr& e) {
  const TensorTypeNode* t = TensorTypeOf(e);
  if (!t) return std::nullopt;
  return StaticShape(t->shape);
}

}  // namespace tessera::graph
