// PrimFuncPass (tir/transform/pass.h).
#include "tessera/tir/transform/pass.h"

namespace tessera::tir::transform {

Pass PrimFuncPass(PassInfo info, std::function<PrimFunc(const PrimFunc&)> f) {
  return Pass(std::move(info), [f = std::move(f)](const IRModule& mod, const PassContext&) { return mod.Map(f); });
}

}  // namespace tessera::tir::transform
