// The JIT constant evaluator: see include/tessera/driver/constant_evaluator.h.
#include "tessera/driver/constant_evaluator.h"

#include "tessera/driver/resolve_target.h"
#include "tessera/runtime/graph_executor.h"
#include "tessera/support/error.h"

namespace tessera::driver {

graph::transform::ConstantEvaluator MakeJITConstantEvaluator(const BuildOptions& options,
                                                             const target::Target& target) {
  // Folding runs here: for a target this machine cannot run (cross-compiling, AVX-512 on AVX2)
  // the constants are computed with the host's kernels.
  const target::Target run_on = RunsOnHost(target) ? target : HostTarget();
  BuildOptions nested;
  nested.opt_level = options.opt_level;
  nested.verify_ir = options.verify_ir;
  nested.disabled_passes = {"FoldConstant"};
  return [nested, run_on](const std::vector<graph::Expr>& exprs) {
    std::vector<runtime::NDArray> out;
    if (exprs.empty()) return out;
    std::vector<std::string> names;
    for (size_t i = 0; i < exprs.size(); ++i) names.push_back("c" + std::to_string(i));
    graph::Expr body = exprs.size() == 1 ? exprs[0] : graph::TupleNode::make(exprs);
    graph::IRModule mod = graph::IRModule::FromMain(graph::FunctionNode::make({}, body));
    runtime::GraphExecutor exec(BuildJIT(mod, names, run_on, nested));
    exec.Run();
    for (size_t i = 0; i < exprs.size(); ++i) out.push_back(exec.GetOutput(static_cast<int>(i)));
    return out;
  };
}

}  // namespace tessera::driver
