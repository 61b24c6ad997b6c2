// EliminateCommonSubexpr: see include/tessera/graph/transform/eliminate_common_subexpr.h.
#include "tessera/graph/transform/eliminate_common_subexpr.h"

#include <cstring>
#include <string_view>
#include <unordered_map>

#include "tessera/graph/functor.h"
#include "tessera/graph/transform/pass.h"

namespace tessera::graph::transform {
namespace {

class CSE : public ExprMutator {
 protected:
  Expr MutateConstant_(const Constant& c) override {
    const runtime::NDArray& a = c->data;
    std::string key = a.dtype().str() + runtime::ShapeToString(a.shape());
    const size_t h = std::hash<std::string_view>()(
        std::string_view(static_cast<const char*>(a.raw_data()), a.NBytes()));
    for (const Constant& other : constants_[key + "#" + std::to_string(h)]) {
      if (std::memcmp(other->data.raw_data(), a.raw_data(), a.NBytes()) == 0) return other;
    }
    constants_[key + "#" + std::to_string(h)].push_back(c);
    return c;
  }

  Expr MutateCall_(const Call& call) override {
    Expr e = ExprMutator::MutateCall_(call);
    const auto* c = e->as<CallNode>();
    const auto* op = c->op->as<OpNode>();
    if (!op) return e;
    std::string key = op->name + "(";
    for (const auto& a : c->args) key += std::to_string(reinterpret_cast<uintptr_t>(a.get())) + ",";
    key += ")" + c->attrs.str();
    return Lookup(key, e);
  }

  Expr MutateTuple_(const Tuple& t) override {
    Expr e = ExprMutator::MutateTuple_(t);
    std::string key = "(";
    for (const auto& f : e->as<TupleNode>()->fields) key += std::to_string(reinterpret_cast<uintptr_t>(f.get())) + ",";
    return Lookup(key + ")", e);
  }

  Expr MutateTupleGetItem_(const TupleGetItem& g) override {
    Expr e = ExprMutator::MutateTupleGetItem_(g);
    const auto* n = e->as<TupleGetItemNode>();
    return Lookup(std::to_string(reinterpret_cast<uintptr_t>(n->tuple.get())) + "." + std::to_string(n->index), e);
  }

 private:
  Expr Lookup(const std::string& key, const Expr& e) {
    auto [it, inserted] = seen_.emplace(key, e);
    return it->second;
  }
  std::unordered_map<std::string, Expr> seen_;
  std::unordered_map<std::string, std::vector<Constant>> constants_;
};

}  // namespace

IRModule EliminateCommonSubexpr(const IRModule& mod) {
  IRModule out = IRModule::WithTypesOf(mod);
  for (const auto& [name, fn] : mod.functions()) {
    CSE cse;
    Expr body = cse.Mutate(fn->body);
    out.Add(name, body == fn->body ? fn : FunctionNode::make(fn->params, body, fn->ret_type, fn->attrs));
  }
  return out;
}

Pass EliminateCommonSubexprPass() {
  return Pass({"EliminateCommonSubexpr", "merges identical calls, tuples and constants", 3},
              [](const IRModule& m, const PassContext&) { return EliminateCommonSubexpr(m); });
}

}  // namespace tessera::graph::transform
