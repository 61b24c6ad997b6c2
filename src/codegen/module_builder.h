// Internal: builds and optimises the llvm::Module of a tir::IRModule.
#pragma once

#include <memory>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include "tessera/codegen/codegen_llvm.h"

namespace tessera::codegen::detail {

/// Translates every PrimFunc, defines the runtime globals, verifies (when asked)
/// and runs the optimisation pipeline for `tm`. The module takes tm's triple and
/// data layout.
std::unique_ptr<llvm::Module> BuildLLVMModule(llvm::LLVMContext& ctx, const tir::IRModule& mod,
                                              const target::Target& target, const ModuleExtras& extras,
                                              const BuildOptions& options, llvm::TargetMachine* tm);

/// Runs LLVM's default per-module pipeline at `opt_level` (0..3).
void OptimizeModule(llvm::Module& m, llvm::TargetMachine* tm, int opt_level);

}  // namespace tessera::codegen::detail
