// AnnotateTarget (graph/transform/partition_graph.h).
#include "tessera/graph/functor.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph/transform/partition_graph.h"

#include "byoc_util.h"

namespace tessera::graph::transform {

namespace {

class Annotator : public ExprMutator {
 public:
  explicit Annotator(const std::vector<ExternalBackend>& backends) : backends_(backends) {}

 protected:
  Expr MutateCall_(const Call& call) override {
    Expr rewritten = ExprMutator::MutateCall_(call);
    const std::string backend = BackendOf(*call);
    if (backend.empty()) return rewritten;
    const auto* c = rewritten->as<CallNode>();
    std::vector<Expr> args;
    for (const Expr& a : c->args) args.push_back(byoc::Annotate(byoc::kBegin, a, backend));
    return byoc::Annotate(byoc::kEnd, CallNode::make(c->op, args, c->attrs), backend);
  }
  // Composite bodies are the backend's business: not annotated inside.
  Expr MutateFunction_(const Function& f) override { return f; }

 private:
  std::string BackendOf(const CallNode& call) const {
    if (const auto* fn = call.op->as<FunctionNode>()) {
      const std::string composite = fn->attrs.GetString("Composite", "");
      for (const ExternalBackend& b : backends_)
        if (composite.rfind(b.name + ".", 0) == 0) return b.name;
      return "";
    }
    const auto* op = call.op->as<OpNode>();
    if (!op || op->name == byoc::kBegin || op->name == byoc::kEnd) return "";
    for (const ExternalBackend& b : backends_)
      if (b.supports && b.supports(call)) return b.name;
    return "";
  }
  const std::vector<ExternalBackend>& backends_;
};

}  // namespace

IRModule AnnotateTarget(const IRModule& mod, const std::vector<ExternalBackend>& backends) {
  IRModule typed = InferType(mod);  // backends decide on checked types
  IRModule out = IRModule::WithTypesOf(mod);
  for (const auto& [name, fn] : typed.functions()) {
    Annotator a(backends);
    Expr body = a.Mutate(fn->body);
    out.Add(name, FunctionNode::make(fn->params, body, fn->ret_type, fn->attrs));
  }
  return InferType(out);
}

Pass AnnotateTargetPass(std::vector<ExternalBackend> backends) {
  return Pass({"AnnotateTarget", "marks the calls each external backend supports", 0},
              [backends = std::move(backends)](const IRModule& m, const PassContext&) { return AnnotateTarget(m, backends); });
}

}  // namespace tessera::graph::transform
