// The constant evaluator FoldConstant uses (graph/transform/fold_constant.h), implemented with
// the real pipeline: the expressions become the outputs of one parameterless module, which is
// built with BuildJIT (FoldConstant itself disabled, so the build does not recurse) and run
// once by the GraphExecutor. One JIT compilation per call, whatever the number of expressions;
// the kernels are those the compiled model would use, so folding does not change numerics.
#pragma once

#include "tessera/driver/build.h"
#include "tessera/graph/transform/fold_constant.h"

namespace tessera::driver {

/// Builds for `target` (resolved: ResolveTarget) when this machine runs its code, else for the
/// host (HostTarget), verifying the IR when `options.verify_ir`; the other options (dumps,
/// timing) are not passed on.
graph::transform::ConstantEvaluator MakeJITConstantEvaluator(const BuildOptions& options,
                                                             const target::Target& target);

}  // namespace tessera::driver
