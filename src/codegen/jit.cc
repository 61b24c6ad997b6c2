// BuildJIT: the module compiled in memory by ORC LLJIT, exposed as a runtime::Module.
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/Support/Error.h>
#include <llvm/Config/llvm-config.h>

#include "llvm_target.h"
#include "module_builder.h"
#include "tessera/support/error.h"

namespace tessera::codegen {

namespace {

std::string ToString(llvm::Error err) { return llvm::toString(std::move(err)); }

/// Symbols of one LLJIT instance; owns the JIT.
class JITSymbolSource : public runtime::SymbolSource {
 public:
  explicit JITSymbolSource(std::unique_ptr<llvm::orc::LLJIT> jit) : jit_(std::move(jit)) {}
  void* Lookup(const std::string& name) override {
    auto addr = jit_->lookup(name);
    if (!addr) {
      llvm::consumeError(addr.takeError());
      return nullptr;
    }
    return addr->toPtr<void*>();
  }

 private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
};

}  // namespace

runtime::Module BuildJIT(const tir::IRModule& mod, const target::Target& target, const ModuleExtras& extras,
                         const BuildOptions& options) {
  detail::InitializeLLVM();
  llvm::Triple triple(target.triple);
  // LLVM_HOST_TRIPLE: the architecture this process is built for (a constant, not a query).
  if (triple.getArch() != llvm::Triple(LLVM_HOST_TRIPLE).getArch()) {
    TESSERA_THROW(UserError, "BuildJIT: target '", target.str(),
                  "' is not this machine's architecture; use EmitObject to cross-compile");
  }
  llvm::orc::JITTargetMachineBuilder jtmb(triple);
  jtmb.setCPU(target.cpu);
  jtmb.addFeatures(target.features);
  jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(jtmb).create();
  if (!jit) TESSERA_THROW(UserError, "BuildJIT: cannot create the LLVM JIT: ", ToString(jit.takeError()));

  // The optimisation pipeline uses a TargetMachine of the same triple / cpu / features.
  auto tm = detail::CreateTargetMachine(target);
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto m = detail::BuildLLVMModule(*ctx, mod, target, extras, options, tm.get());
  m->setDataLayout((*jit)->getDataLayout());

  // libm (expf, tanhf, ...) and libc (aligned_alloc, free) from this process.
  auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      (*jit)->getDataLayout().getGlobalPrefix());
  if (!gen) TESSERA_THROW(UserError, "BuildJIT: ", ToString(gen.takeError()));
  (*jit)->getMainJITDylib().addGenerator(std::move(*gen));
  if (auto err = (*jit)->addIRModule(llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx)))) {
    TESSERA_THROW(InternalError, "BuildJIT: cannot add the module: ", ToString(std::move(err)));
  }
  auto source = std::make_shared<JITSymbolSource>(std::move(*jit));
  return runtime::Module(source, "<jit>", source);
}

}  // namespace tessera::codegen
