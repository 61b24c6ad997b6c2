// PartitionGraph (graph/transform/partition_graph.h).
#include <algorithm>
#include <map>
#include <numeric>
#include <unordered_map>

#include "tessera/graph/functor.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph/transform/partition_graph.h"
#include "tessera/support/error.h"

#include "byoc_util.h"

namespace tessera::graph::transform {

namespace {

struct Region {
  std::string backend;
  std::vector<Expr> inputs;   // the values entering (compiler_begin's arguments), first-use order
  std::vector<Expr> outputs;  // the region's values that leave it (compiler_end's arguments)
  std::string symbol;
};

// The regions of an annotated (merged) function body: calls connected by arguments that are not
// compiler_begin, grown from every compiler_end.
class RegionFinder {
 public:
  explicit RegionFinder(const Expr& body) {
    std::vector<Expr> order;
    PostOrderVisit(body, [&](const Expr& e) { order.push_back(e); });
    for (const Expr& e : order)
      if (const CallNode* end = byoc::CallOf(e, byoc::kEnd)) Grow(end->args[0], end->attrs.GetString("compiler"));
    // Number the regions by their first output in post-order; collect inputs and outputs.
    std::map<int, int> numbering;
    for (const Expr& e : order) {
      const CallNode* end = byoc::CallOf(e, byoc::kEnd);
      if (!end) continue;
      const int root = Find(id_.at(end->args[0].get()));
      if (!numbering.count(root)) {
        numbering[root] = static_cast<int>(regions.size());
        regions.push_back(Region{backend_.at(root), {}, {}, ""});
      }
      Region& r = regions[numbering[root]];
      if (std::find(r.outputs.begin(), r.outputs.end(), end->args[0]) == r.outputs.end()) r.outputs.push_back(end->args[0]);
    }
    for (const Expr& e : order) {
      auto it = id_.find(e.get());
      if (it == id_.end()) continue;
      const int k = numbering.at(Find(it->second));
      of_[e.get()] = k;
      for (const Expr& a : Args(e)) {
        const CallNode* begin = byoc::CallOf(a, byoc::kBegin);
        if (!begin) continue;
        auto& in = regions[k].inputs;
        if (std::find(in.begin(), in.end(), begin->args[0]) == in.end()) in.push_back(begin->args[0]);
      }
    }
    std::map<std::string, int> per_backend;
    for (Region& r : regions) r.symbol = r.backend + "_" + std::to_string(per_backend[r.backend]++);
  }

  std::vector<Region> regions;
  /// The region of a node inside one; -1 outside.
  int RegionOf(const Expr& e) const {
    auto it = of_.find(e.get());
    return it == of_.end() ? -1 : it->second;
  }

 private:
  static std::vector<Expr> Args(const Expr& e) {
    if (const auto* c = e->as<CallNode>()) return c->args;
    if (const auto* t = e->as<TupleNode>()) return t->fields;
    if (const auto* g = e->as<TupleGetItemNode>()) return {g->tuple};
    return {};
  }
  int Find(int i) { return parent_[i] == i ? i : parent_[i] = Find(parent_[i]); }
  int IdOf(const Expr& e, const std::string& backend) {
    auto it = id_.find(e.get());
    if (it != id_.end()) return it->second;
    const int id = static_cast<int>(parent_.size());
    parent_.push_back(id);
    id_[e.get()] = id;
    backend_[id] = backend;
    return id;
  }
  // Adds `e` and what it reaches without crossing a compiler_begin to one region.
  void Grow(const Expr& e, const std::string& backend) {
    const bool seen = id_.count(e.get()) != 0;
    const int id = Find(IdOf(e, backend));
    if (seen) return;
    for (const Expr& a : Args(e)) {
      if (byoc::CallOf(a, byoc::kBegin)) continue;
      TESSERA_ICHECK(a->as<CallNode>() || a->as<TupleNode>() || a->as<TupleGetItemNode>(),
                     "PartitionGraph: a region's value reads an unannotated input (run AnnotateTarget)");
      Grow(a, backend);
      const int other = Find(id_.at(a.get()));
      if (other != Find(id)) parent_[other] = Find(id);
    }
  }
  std::unordered_map<const ExprNode*, int> id_;
  std::vector<int> parent_;
  std::map<int, std::string> backend_;
  std::unordered_map<const ExprNode*, int> of_;
};

class Partitioner : public ExprMutator {
 public:
  explicit Partitioner(const RegionFinder& f) : f_(f), calls_(f.regions.size()) {}

 protected:
  Expr MutateCall_(const Call& call) override {
    if (const CallNode* end = byoc::CallOf(call, byoc::kEnd)) {
      const int k = f_.RegionOf(end->args[0]);
      TESSERA_ICHECK(k >= 0, "PartitionGraph: compiler_end outside a region");
      const Region& r = f_.regions[k];
      Expr c = RegionCall(k);
      if (r.outputs.size() == 1) return c;
      const auto idx = std::find(r.outputs.begin(), r.outputs.end(), end->args[0]) - r.outputs.begin();
      return TupleGetItemNode::make(c, static_cast<int>(idx));
    }
    TESSERA_ICHECK(!byoc::CallOf(call, byoc::kBegin), "PartitionGraph: compiler_begin outside a region");
    return ExprMutator::MutateCall_(call);
  }
  Expr MutateFunction_(const Function& f) override { return f; }

 private:
  Expr RegionCall(int k) {
    if (calls_[k]) return calls_[k];
    const Region& r = f_.regions[k];
    std::vector<Var> params;
    std::vector<Expr> args;
    std::unordered_map<const ExprNode*, Expr> inside;
    for (size_t i = 0; i < r.inputs.size(); ++i) {
      const Expr& x = r.inputs[i];
      Var p = VarNode::make(r.symbol + "_i" + std::to_string(i), x->has_checked_type() ? x->checked_type() : nullptr);
      params.push_back(p);
      inside[x.get()] = p;
      args.push_back(Mutate(x));
    }
    std::vector<Expr> outs;
    for (const Expr& o : r.outputs) outs.push_back(Clone(o, inside));
    Expr body = outs.size() == 1 ? outs[0] : TupleNode::make(outs);
    Function fn = FunctionNode::make(params, body, nullptr, Attrs{{"Compiler", r.backend}, {"global_symbol", r.symbol}});
    return calls_[k] = CallNode::make(fn, args);
  }
  // A node of the region with its compiler_begin inputs replaced by the params.
  Expr Clone(const Expr& e, std::unordered_map<const ExprNode*, Expr>& inside) {
    if (const CallNode* begin = byoc::CallOf(e, byoc::kBegin)) return inside.at(begin->args[0].get());
    if (auto it = inside.find(e.get()); it != inside.end()) return it->second;
    Expr out;
    if (const auto* c = e->as<CallNode>()) {
      std::vector<Expr> args;
      for (const Expr& a : c->args) args.push_back(Clone(a, inside));
      out = CallNode::make(c->op, args, c->attrs);
    } else if (const auto* t = e->as<TupleNode>()) {
      std::vector<Expr> fields;
      for (const Expr& x : t->fields) fields.push_back(Clone(x, inside));
      out = TupleNode::make(fields);
    } else if (const auto* g = e->as<TupleGetItemNode>()) {
      out = TupleGetItemNode::make(Clone(g->tuple, inside), g->index);
    } else {
      TESSERA_THROW(InternalError, "PartitionGraph: unexpected node in a region");
    }
    return inside[e.get()] = out;
  }
  const RegionFinder& f_;
  std::vector<Expr> calls_;
};

}  // namespace

IRModule PartitionGraph(const IRModule& mod) {
  IRModule typed = InferType(mod);  // the params are typed as the region's inputs
  IRModule out = IRModule::WithTypesOf(mod);
  for (const auto& [name, fn] : typed.functions()) {
    RegionFinder f(fn->body);
    Partitioner p(f);
    out.Add(name, FunctionNode::make(fn->params, p.Mutate(fn->body), fn->ret_type, fn->attrs));
  }
  return InferType(out);
}

Pass PartitionGraphPass() {
  return Pass({"PartitionGraph", "outlines each external backend region into a function (Compiler, global_symbol)", 0},
              [](const IRModule& m, const PassContext&) { return PartitionGraph(m); });
}

std::vector<std::string> ExternalFunctionOps(const FunctionNode& fn) {
  std::vector<std::string> ops;
  auto add = [&](const std::string& name) {
    if (std::find(ops.begin(), ops.end(), name) == ops.end()) ops.push_back(name);
  };
  // From the body (the visitors do not enter an external function itself, functor.h), and not
  // inside a composite: it is one unit, listed by its name.
  struct Lister : ExprVisitor {
    std::function<void(const std::string&)> add;
    void VisitCall_(const CallNode* c) override {
      for (const Expr& a : c->args) VisitExpr(a);
      if (const auto* op = c->op->as<OpNode>()) add(op->name);
      if (const auto* f = c->op->as<FunctionNode>()) add(f->attrs.GetString("Composite", "function"));
    }
  } lister;
  lister.add = add;
  lister.VisitExpr(fn.body);
  return ops;
}

namespace {

// Main with the refused external calls replaced by their bodies.
class Inliner : public ExprMutator {
 public:
  explicit Inliner(const std::function<bool(const FunctionNode&)>& keep) : keep_(keep) {}

 protected:
  Expr MutateCall_(const Call& call) override {
    const auto* fn = call->op->as<FunctionNode>();
    if (!fn || !IsExternalFunction(*fn) || keep_(*fn)) return ExprMutator::MutateCall_(call);
    Binder bind;
    for (size_t i = 0; i < fn->params.size(); ++i) bind.values[fn->params[i].get()] = Mutate(call->args[i]);
    return bind.Mutate(fn->body);
  }
  Expr MutateTupleGetItem_(const TupleGetItem& g) override {
    Expr t = Mutate(g->tuple);
    if (const auto* tuple = t->as<TupleNode>()) return tuple->fields.at(g->index);  // an inlined tuple result
    return t == g->tuple ? g : TupleGetItemNode::make(t, g->index);
  }

 private:
  // The body with its parameters replaced (fresh nodes: the body belongs to this call only), and
  // its composite calls (MergeComposite) replaced by their bodies: Tessera's path runs plain ops.
  struct Binder : ExprMutator {
    std::unordered_map<const ExprNode*, Expr> values;
    Expr MutateVar_(const Var& v) override {
      auto it = values.find(v.get());
      return it == values.end() ? v : it->second;
    }
    Expr MutateCall_(const Call& call) override {
      const auto* fn = call->op->as<FunctionNode>();
      if (!fn || !fn->attrs.Has("Composite")) return ExprMutator::MutateCall_(call);
      for (size_t i = 0; i < fn->params.size(); ++i) values[fn->params[i].get()] = Mutate(call->args[i]);
      return Mutate(fn->body);
    }
  };
  const std::function<bool(const FunctionNode&)>& keep_;
};

}  // namespace

IRModule InlineExternalFunctions(const IRModule& mod, const std::function<bool(const FunctionNode&)>& keep) {
  IRModule out = IRModule::WithTypesOf(mod);
  for (const auto& [name, fn] : mod.functions()) {
    Inliner inliner(keep);
    Expr body = inliner.Mutate(fn->body);
    out.Add(name, body == fn->body ? fn : FunctionNode::make(fn->params, body, fn->ret_type, fn->attrs));
  }
  return InferType(out);
}

Pass InlineExternalFunctionsPass(std::function<bool(const FunctionNode&)> keep) {
  return Pass({"InlineExternalFunctions", "external functions a backend does not want back onto Tessera's path", 0},
              [keep = std::move(keep)](const IRModule& m, const PassContext&) { return InlineExternalFunctions(m, keep); });
}

}  // namespace tessera::graph::transform
