// MergeComposite (graph/transform/merge_composite.h).
#include "tessera/graph/transform/merge_composite.h"

#include "tessera/graph/infer_type.h"
#include "tessera/graph/pattern_rewrite.h"

namespace tessera::graph::transform {

IRModule MergeComposite(const IRModule& mod, const std::vector<CompositePattern>& patterns) {
  IRModule typed = InferType(mod);  // the patterns' type checks and the params' types need them
  IRModule out;
  for (const auto& [name, fn] : typed.functions()) {
    Expr body = fn->body;
    for (const CompositePattern& p : patterns) body = PartitionPattern(p.pattern, body, Attrs{{"Composite", p.name}}, p.check);
    out.Add(name, body == fn->body ? fn : FunctionNode::make(fn->params, body, fn->ret_type, fn->attrs));
  }
  return InferType(out);
}

Pass MergeCompositePass(std::vector<CompositePattern> patterns) {
  return Pass({"MergeComposite", "outlines the matches of a backend's named patterns into composite functions", 0},
              [patterns = std::move(patterns)](const IRModule& m, const PassContext&) { return MergeComposite(m, patterns); });
}

}  // namespace tessera::graph::transform
