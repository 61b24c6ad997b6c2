// Internal: LLVM initialisation and TargetMachine creation for a target::Target.
// Includes LLVM headers: never include from a public header.
#pragma once

#include <memory>

#include <llvm/Target/TargetMachine.h>

#include "tessera/target/target.h"

namespace tessera::codegen::detail {

/// Registers the native (and every linked) LLVM target, asm printer and parser once.
void InitializeLLVM();

/// The llvm::Target for `triple`; throws UserError naming the triple when unknown.
const llvm::Target* LookupLLVMTarget(const std::string& triple);

/// A TargetMachine for `target` (PIC, O3 code generation).
std::unique_ptr<llvm::TargetMachine> CreateTargetMachine(const target::Target& target);

}  // namespace tessera::codegen::detail
