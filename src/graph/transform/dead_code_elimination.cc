// DeadCodeElimination: see include/tessera/graph/transform/dead_code_elimination.h.
#include "tessera/graph/transform/dead_code_elimination.h"

#include "pass_util.h"
#include "tessera/graph/functor.h"
#include "tessera/graph/transform/pass.h"

namespace tessera::graph::transform {
namespace {

class DeadCode : public ExprMutator {
 public:
  explicit DeadCode(const Expr& body) : uses_(detail::CountUses(body)) {}
  bool changed = false;

 protected:
  Expr MutateLet_(const Let& l) override {
    if (uses_.count(l->var.get()) == 0) {
      changed = true;
      return Mutate(l->body);
    }
    return ExprMutator::MutateLet_(l);
  }
  Expr MutateTupleGetItem_(const TupleGetItem& g) override {
    if (const auto* t = g->tuple->as<TupleNode>()) {
      changed = true;
      return Mutate(t->fields.at(static_cast<size_t>(g->index)));
    }
    return ExprMutator::MutateTupleGetItem_(g);
  }
  Expr MutateIf_(const If& i) override {
    if (const auto* c = i->cond->as<ConstantNode>(); c && c->data.dtype().is_bool() && c->data.NumElements() == 1) {
      changed = true;
      const bool v = *static_cast<const uint8_t*>(c->data.raw_data()) != 0;
      return Mutate(v ? i->true_branch : i->false_branch);
    }
    return ExprMutator::MutateIf_(i);
  }

 private:
  std::unordered_map<const ExprNode*, int> uses_;
};

}  // namespace

IRModule DeadCodeElimination(const IRModule& mod) {
  IRModule out = IRModule::WithTypesOf(mod);
  for (const auto& [name, fn] : mod.functions()) {
    Expr body = fn->body;
    for (bool changed = true; changed;) {
      DeadCode dce(body);
      body = dce.Mutate(body);
      changed = dce.changed;
    }
    out.Add(name, body == fn->body ? fn : FunctionNode::make(fn->params, body, fn->ret_type, fn->attrs));
  }
  return out;
}

Pass DeadCodeEliminationPass() {
  return Pass({"DeadCodeElimination", "drops unused let bindings, unused tuple fields and constant branches", 1},
              [](const IRModule& m, const PassContext&) { return DeadCodeElimination(m); });
}

}  // namespace tessera::graph::transform
