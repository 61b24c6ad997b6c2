// Internal: the target a LowerToTE call lowers for, as the FComputes see it.
//
// An FCompute (graph op registry) takes attrs, tensors and the output type, no target; the
// computes that pick a target-specific strategy (the packed GEMM's tile, the x86 conv's im2col
// choice) ask LoweringTarget() instead, which LowerToTE sets for the duration of the call
// (TVM's `Target.current()`). The op-strategy table (issue 13) will pass the target to the
// strategy explicitly and retire this.
#pragma once

#include "tessera/target/target.h"

namespace tessera::graph_lower::detail {

/// The target of the innermost LoweringTargetScope of this thread. An InternalError outside one
/// (an FCompute called other than through LowerToTE).
const target::Target& LoweringTarget();

/// Makes `target` the LoweringTarget() of this thread until destroyed (scopes nest).
class LoweringTargetScope {
 public:
  explicit LoweringTargetScope(const target::Target& target);
  ~LoweringTargetScope();
  LoweringTargetScope(const LoweringTargetScope&) = delete;
  LoweringTargetScope& operator=(const LoweringTargetScope&) = delete;

 private:
  const target::Target* previous_;
};

}  // namespace tessera::graph_lower::detail
