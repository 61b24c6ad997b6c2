// EmitLLVMIR / EmitAssembly / EmitObject: the module through LLVM's code generator.
#include <llvm/ADT/SmallVector.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/Support/raw_ostream.h>

#include "llvm_target.h"
#include "module_builder.h"
#include "tessera/support/error.h"

namespace tessera::codegen {

namespace {

std::string EmitFile(const tir::IRModule& mod, const target::Target& target, const ModuleExtras& extras,
                     const BuildOptions& options, llvm::CodeGenFileType type) {
  auto tm = detail::CreateTargetMachine(target);
  llvm::LLVMContext ctx;
  auto m = detail::BuildLLVMModule(ctx, mod, target, extras, options, tm.get());
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr, type)) {
    TESSERA_THROW(UnsupportedError, "target '", target.str(), "' cannot emit ",
                  type == llvm::CodeGenFileType::ObjectFile ? "object files" : "assembly");
  }
  pm.run(*m);
  return std::string(buffer.data(), buffer.size());
}

}  // namespace

std::string EmitLLVMIR(const tir::IRModule& mod, const target::Target& target, const ModuleExtras& extras,
                       const BuildOptions& options) {
  auto tm = detail::CreateTargetMachine(target);
  llvm::LLVMContext ctx;
  auto m = detail::BuildLLVMModule(ctx, mod, target, extras, options, tm.get());
  std::string out;
  llvm::raw_string_ostream os(out);
  m->print(os, nullptr);
  os.flush();
  return out;
}

std::string EmitAssembly(const tir::IRModule& mod, const target::Target& target, const ModuleExtras& extras,
                         const BuildOptions& options) {
  return EmitFile(mod, target, extras, options, llvm::CodeGenFileType::AssemblyFile);
}

std::string EmitObject(const tir::IRModule& mod, const target::Target& target, const ModuleExtras& extras,
                       const BuildOptions& options) {
  return EmitFile(mod, target, extras, options, llvm::CodeGenFileType::ObjectFile);
}

}  // namespace tessera::codegen
