// Pass objects of the graph passes defined outside this folder's one-file-per-pass layout
// (InferType lives in graph/infer_type.h, FuseOps predates the pass infrastructure).
#include "tessera/graph/transform/pass.h"

#include "tessera/graph/infer_type.h"
#include "tessera/graph/transform/fuse_ops.h"

namespace tessera::graph::transform {

Pass InferTypePass() {
  return Pass({"InferType", "fills the checked type of every expression", 0, true},
              [](const IRModule& m, const PassContext&) { return InferType(m); });
}

Pass FuseOpsPass() {
  return Pass({"FuseOps", "groups operator calls into primitive functions, one kernel each", 0, true},
              [](const IRModule& m, const PassContext& ctx) {
                FuseOpsOptions options;
                options.fuse_opt_level = ctx.opt_level >= 1 ? 1 : 0;
                options.max_fuse_depth = static_cast<int>(ctx.GetIntOption("FuseOps.max_depth", options.max_fuse_depth));
                return FuseOps(InferType(m), options);  // FuseOps reads the types of its inputs
              });
}

}  // namespace tessera::graph::transform
