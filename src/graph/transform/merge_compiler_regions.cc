// MergeCompilerRegions (graph/transform/partition_graph.h).
#include <algorithm>
#include <set>
#include <unordered_map>

#include "tessera/graph/functor.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph/transform/partition_graph.h"

#include "byoc_util.h"

namespace tessera::graph::transform {

namespace {

std::vector<Expr> InputsOf(const Expr& e) {
  if (const auto* c = e->as<CallNode>()) return c->args;
  if (const auto* t = e->as<TupleNode>()) return t->fields;
  if (const auto* g = e->as<TupleGetItemNode>()) return {g->tuple};
  return {};
}

struct Regions {
  std::unordered_map<const ExprNode*, int> region;          // annotated call -> region id
  std::unordered_map<const ExprNode*, int> begin_region;    // compiler_begin -> its consumer's region
  std::unordered_map<const ExprNode*, std::set<int>> deps;  // node -> regions it depends on
  int next = 0;
};

// The annotated call inside compiler_end(call), with its backend; nullptr otherwise.
const CallNode* EndOf(const Expr& e, const Expr** inner = nullptr) {
  const CallNode* end = byoc::CallOf(e, byoc::kEnd);
  if (end && inner) *inner = &end->args[0];
  return end;
}

Regions Analyze(const Expr& body) {
  Regions r;
  std::vector<Expr> order;
  PostOrderVisit(body, [&](const Expr& e) { order.push_back(e); });
  // Annotated calls: the arguments of compiler_end.
  std::unordered_map<const ExprNode*, std::string> backend;
  for (const Expr& e : order)
    if (const CallNode* end = byoc::CallOf(e, byoc::kEnd)) backend[end->args[0].get()] = end->attrs.GetString("compiler");
  for (const Expr& e : order) {
    std::set<int> deps;
    for (const Expr& x : InputsOf(e)) {
      const auto& dx = r.deps[x.get()];
      deps.insert(dx.begin(), dx.end());
      if (auto it = r.region.find(x.get()); it != r.region.end()) deps.insert(it->second);
    }
    auto b = backend.find(e.get());
    if (b != backend.end()) {
      // Join the first producer region of the same backend that makes no cycle.
      const auto* call = e->as<CallNode>();
      int joined = -1;
      for (const Expr& a : call->args) {
        const CallNode* begin = byoc::CallOf(a, byoc::kBegin);
        const Expr* p = nullptr;
        const CallNode* end = begin ? EndOf(begin->args[0], &p) : nullptr;
        if (!end || end->attrs.GetString("compiler") != b->second || !r.region.count(p->get())) continue;
        const int cand = r.region.at(p->get());
        bool cycle = false;
        for (const Expr& other : call->args) {
          const CallNode* ob = byoc::CallOf(other, byoc::kBegin);
          const Expr* op = nullptr;
          if (ob && EndOf(ob->args[0], &op) && r.region.count(op->get()) && r.region.at(op->get()) == cand) continue;
          if (r.deps[other.get()].count(cand)) cycle = true;
        }
        if (!cycle) {
          joined = cand;
          break;
        }
      }
      r.region[e.get()] = joined >= 0 ? joined : r.next++;
      for (const Expr& a : call->args)
        if (byoc::CallOf(a, byoc::kBegin)) r.begin_region[a.get()] = r.region[e.get()];
    }
    r.deps[e.get()] = std::move(deps);
  }
  return r;
}

class Merger : public ExprMutator {
 public:
  explicit Merger(const Regions& r) : r_(r) {}

 protected:
  Expr MutateCall_(const Call& call) override {
    if (const CallNode* begin = byoc::CallOf(call, byoc::kBegin)) {
      const Expr* p = nullptr;
      auto consumer = r_.begin_region.find(call.get());
      if (EndOf(begin->args[0], &p) && consumer != r_.begin_region.end()) {
        auto producer = r_.region.find(p->get());
        if (producer != r_.region.end() && producer->second == consumer->second) return Mutate(*p);
      }
    }
    return ExprMutator::MutateCall_(call);
  }
  Expr MutateFunction_(const Function& f) override { return f; }  // composite bodies stay

 private:
  const Regions& r_;
};

}  // namespace

IRModule MergeCompilerRegions(const IRModule& mod) {
  IRModule out = IRModule::WithTypesOf(mod);
  for (const auto& [name, fn] : mod.functions()) {
    Regions r = Analyze(fn->body);
    Merger m(r);
    out.Add(name, FunctionNode::make(fn->params, m.Mutate(fn->body), fn->ret_type, fn->attrs));
  }
  return InferType(out);
}

Pass MergeCompilerRegionsPass() {
  return Pass({"MergeCompilerRegions", "joins adjacent calls of one external backend into regions", 0},
              [](const IRModule& m, const PassContext&) { return MergeCompilerRegions(m); });
}

}  // namespace tessera::graph::transform
