// CompleteTarget: a target checked against, and filled in from, LLVM's tables (target_info.h).
#include "tessera/codegen/target_info.h"

#include <memory>

#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/TargetParser/Triple.h>

#include "llvm_target.h"
#include "tessera/support/error.h"

namespace tessera::codegen {
namespace {

std::unique_ptr<llvm::MCSubtargetInfo> SubtargetInfo(const std::string& triple, const std::string& cpu,
                                                     const std::string& features) {
  return std::unique_ptr<llvm::MCSubtargetInfo>(
      detail::LookupLLVMTarget(triple)->createMCSubtargetInfo(triple, cpu, features));
}

}  // namespace

target::Target CompleteTarget(const target::Target& t, bool expand_cpu_features) {
  TESSERA_ICHECK(!t.NeedsResolution(), "CompleteTarget needs a triple and a CPU, got '", t.str(), "'");
  const std::string triple = llvm::Triple::normalize(t.triple);
  // Names are checked on a generic subtarget first: LLVM itself only warns on stderr.
  auto generic = SubtargetInfo(triple, "", "");
  if (!generic->isCPUStringValid(t.cpu)) {
    TESSERA_THROW(UserError, "unknown CPU '", t.cpu, "' for triple ", triple,
                  " (an LLVM CPU name such as znver4, skylake-avx512 or neoverse-n1, or native)");
  }
  for (const std::string& f : t.features) {
    const std::string name = f.substr(1);
    bool known = false;
    for (const auto& kv : generic->getAllProcessorFeatures()) known |= name == kv.Key;
    if (!known) {
      TESSERA_THROW(UserError, "unknown feature '", name, "' in -mattr for triple ",
                    triple, " (an LLVM feature name such as avx2, avx512f or neon)");
    }
  }
  std::vector<std::string> features = t.features;
  if (expand_cpu_features) {
    auto cpu_only = SubtargetInfo(triple, t.cpu, "");
    auto with_list = SubtargetInfo(triple, t.cpu, t.FeatureString());
    features.clear();
    for (const auto& kv : generic->getAllProcessorFeatures()) {
      const std::string name = kv.Key;
      if (with_list->checkFeatures("+" + name)) {
        features.push_back("+" + name);
      } else if (cpu_only->checkFeatures("+" + name)) {
        features.push_back("-" + name);
      }
    }
  }
  target::Target out = target::Target::Make(triple, t.cpu, features, t.num_cores, t.kind);
  return out;
}

}  // namespace tessera::codegen
