// TensorIR passes on the shared pass infrastructure (ir/pass.h): the Pass and Sequential of
// tir::IRModule, and PrimFuncPass, which lifts a PrimFunc -> PrimFunc transform to a module pass
// (TVM's tir.transform.prim_func_pass). The lowering pipeline built from them is
// LowerToFlatPasses() (lower.h); the driver runs it under the build's PassContext, so
// `tessera compile --dump-ir DIR` writes the kernels after every TIR step and `--time-passes`
// times each one (as Halide's Lower.cpp logs after each step).
#pragma once

#include <functional>
#include <string>

#include "tessera/ir/pass.h"
#include "tessera/tir/function.h"
#include "tessera/tir/printer.h"

namespace tessera::ir {
template <>
struct ModuleTraits<tir::IRModule> {
  static std::string Print(const tir::IRModule& m) { return tir::AsText(m); }
};
}  // namespace tessera::ir

namespace tessera::tir::transform {

using Pass = ir::Pass<IRModule>;
using Sequential = ir::Sequential<IRModule>;
using ir::PassContext;
using ir::PassInfo;

/// A module pass that applies `f` to every function of the module (in order; the function
/// names are kept). Errors of `f` propagate unchanged.
Pass PrimFuncPass(PassInfo info, std::function<PrimFunc(const PrimFunc&)> f);

}  // namespace tessera::tir::transform
