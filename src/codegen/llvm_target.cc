// LLVM initialisation and TargetMachine creation (llvm_target.h).
#include "llvm_target.h"

#include <mutex>

#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetOptions.h>

#include "tessera/support/error.h"

namespace tessera::codegen::detail {

void InitializeLLVM() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    llvm::InitializeAllAsmParsers();
  });
}

const llvm::Target* LookupLLVMTarget(const std::string& triple) {
  InitializeLLVM();
  std::string err;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(triple, err);
  if (t == nullptr) {
    TESSERA_THROW(UserError, "unknown target triple '", triple, "' (", err,
                  "); give an LLVM triple such as x86_64-pc-linux-gnu or aarch64-linux-gnu");
  }
  return t;
}

std::unique_ptr<llvm::TargetMachine> CreateTargetMachine(const target::Target& target) {
  TESSERA_ICHECK(!target.NeedsResolution(), "codegen needs a resolved target (driver::ResolveTarget), got '",
                 target.str(), "'");
  const llvm::Target* lt = LookupLLVMTarget(target.triple);
  llvm::TargetOptions opts;
  std::unique_ptr<llvm::TargetMachine> tm(lt->createTargetMachine(target.triple, target.cpu, target.FeatureString(),
                                                                  opts, llvm::Reloc::PIC_, std::nullopt,
                                                                  llvm::CodeGenOptLevel::Aggressive));
  if (!tm) TESSERA_THROW(UserError, "cannot create an LLVM target machine for '", target.str(), "'");
  return tm;
}

}  // namespace tessera::codegen::detail
