// MergeComposite (graph/transform/merge_composite.h).
#include "tessera/graph/transform/merge_composite.h"

#include <algorithm>
#include <unordered_map>

#include "tessera/graph/functor.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph/pattern_rewrite.h"

namespace tessera::graph::transform {

namespace {

bool IsScalarConstant(const Expr& e) {
  const auto* c = e->as<ConstantNode>();
  return c && c->data.NumElements() == 1;
}

// The composite calls named `name` with their one-element constant arguments bound into the body.
class BindScalars : public ExprMutator {
 public:
  explicit BindScalars(const std::string& name) : name_(name) {}

 protected:
  Expr MutateCall_(const Call& call) override {
    Expr rewritten = ExprMutator::MutateCall_(call);
    const auto* c = rewritten->as<CallNode>();
    const auto* fn = c->op->as<FunctionNode>();
    if (!fn || fn->attrs.GetString("Composite", "") != name_ ||
        std::none_of(c->args.begin(), c->args.end(), IsScalarConstant))
      return rewritten;
    Substitute bind;
    std::vector<Var> params;
    std::vector<Expr> args;
    for (size_t i = 0; i < fn->params.size(); ++i) {
      if (IsScalarConstant(c->args[i])) {
        bind.values[fn->params[i].get()] = c->args[i];
      } else {
        params.push_back(fn->params[i]);
        args.push_back(c->args[i]);
      }
    }
    return CallNode::make(FunctionNode::make(params, bind.Mutate(fn->body), fn->ret_type, fn->attrs), args);
  }
  // Composite bodies are left alone: their params are bound by the call above.
  Expr MutateFunction_(const Function& f) override { return f; }

 private:
  struct Substitute : ExprMutator {
    std::unordered_map<const ExprNode*, Expr> values;
    Expr MutateVar_(const Var& v) override {
      auto it = values.find(v.get());
      return it == values.end() ? v : it->second;
    }
  };
  const std::string& name_;
};

}  // namespace

IRModule MergeComposite(const IRModule& mod, const std::vector<CompositePattern>& patterns) {
  IRModule typed = InferType(mod);  // the patterns' type checks and the params' types need them
  IRModule out = IRModule::WithTypesOf(mod);
  for (const auto& [name, fn] : typed.functions()) {
    Expr body = fn->body;
    for (const CompositePattern& p : patterns) {
      body = PartitionPattern(p.pattern, body, Attrs{{"Composite", p.name}}, p.check);
      if (p.scalars_inside) body = BindScalars(p.name).Mutate(body);
    }
    out.Add(name, body == fn->body ? fn : FunctionNode::make(fn->params, body, fn->ret_type, fn->attrs));
  }
  return InferType(out);
}

Pass MergeCompositePass(std::vector<CompositePattern> patterns) {
  return Pass({"MergeComposite", "outlines the matches of a backend's named patterns into composite functions", 0},
              [patterns = std::move(patterns)](const IRModule& m, const PassContext&) { return MergeComposite(m, patterns); });
}

}  // namespace tessera::graph::transform
