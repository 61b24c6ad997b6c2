// Module-level emission: kernels, runtime globals, verification, the O3 pipeline.
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/PassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>

#include "codegen_llvm.h"
#include "module_builder.h"
#include "tessera/runtime/artifact_info.h"
#include "tessera/runtime/kernel_abi.h"
#include "tessera/support/error.h"
#include "tessera/support/version.h"

namespace tessera::codegen::detail {

namespace {

void EmitExtras(llvm::Module& m, const ModuleExtras& extras) {
  llvm::LLVMContext& ctx = m.getContext();
  auto* json = llvm::ConstantDataArray::getString(ctx, extras.graph_json, /*AddNull=*/true);
  new llvm::GlobalVariable(m, json->getType(), true, llvm::GlobalValue::ExternalLinkage, json,
                           runtime::kGraphJsonSymbol);
  auto* blob_init = llvm::ConstantDataArray::getRaw(extras.params_blob, extras.params_blob.size(),
                                                    llvm::Type::getInt8Ty(ctx));
  auto* blob = new llvm::GlobalVariable(m, blob_init->getType(), true, llvm::GlobalValue::ExternalLinkage,
                                        blob_init, runtime::kParamsBlobSymbol);
  blob->setAlignment(llvm::Align(64));
  auto* size = new llvm::GlobalVariable(
      m, llvm::Type::getInt64Ty(ctx), true, llvm::GlobalValue::ExternalLinkage,
      llvm::ConstantInt::get(llvm::Type::getInt64Ty(ctx), extras.params_blob.size()), runtime::kParamsSizeSymbol);
  size->setAlignment(llvm::Align(8));
  // The integrity check of both (artifact_info.h, ArtifactContentHash), recomputed by the loader.
  auto* hash = new llvm::GlobalVariable(
      m, llvm::Type::getInt64Ty(ctx), true, llvm::GlobalValue::ExternalLinkage,
      llvm::ConstantInt::get(llvm::Type::getInt64Ty(ctx),
                             runtime::ArtifactContentHash(extras.graph_json, extras.params_blob)),
      runtime::kContentHashSymbol);
  hash->setAlignment(llvm::Align(8));
}

// The record the loader checks (runtime/artifact_info.h): version, triple, the checked features.
void EmitTargetInfo(llvm::Module& m, const target::Target& target) {
  runtime::ArtifactInfo info{TESSERA_VERSION, target.triple, {}};
  for (const std::string& f : runtime::CheckedFeatures())
    if (target.HasFeature(f)) info.features.push_back(f);
  auto* text = llvm::ConstantDataArray::getString(m.getContext(), runtime::FormatArtifactInfo(info), /*AddNull=*/true);
  new llvm::GlobalVariable(m, text->getType(), true, llvm::GlobalValue::ExternalLinkage, text,
                           runtime::kTargetInfoSymbol);
}

}  // namespace

void OptimizeModule(llvm::Module& m, llvm::TargetMachine* tm, int opt_level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = opt_level >= 2;
  pto.SLPVectorization = opt_level >= 2;
  pto.LoopUnrolling = opt_level >= 2;
  llvm::PassBuilder pb(tm, pto);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm;
  if (opt_level <= 0) {
    mpm = pb.buildO0DefaultPipeline(llvm::OptimizationLevel::O0);
  } else {
    llvm::OptimizationLevel level = opt_level == 1   ? llvm::OptimizationLevel::O1
                                    : opt_level == 2 ? llvm::OptimizationLevel::O2
                                                     : llvm::OptimizationLevel::O3;
    mpm = pb.buildPerModuleDefaultPipeline(level);
  }
  mpm.run(m, mam);
}

std::unique_ptr<llvm::Module> BuildLLVMModule(llvm::LLVMContext& ctx, const tir::IRModule& mod,
                                              const target::Target& target, const ModuleExtras& extras,
                                              const BuildOptions& options, llvm::TargetMachine* tm) {
  auto m = std::make_unique<llvm::Module>("tessera", ctx);
  m->setTargetTriple(tm->getTargetTriple().str());
  m->setDataLayout(tm->createDataLayout());
  CodeGenLLVM cg(m.get(), target);
  cg.ParallelLaunchGlobal();
  for (const tir::PrimFunc& f : mod.functions()) cg.AddFunction(f);
  EmitExtras(*m, extras);
  EmitTargetInfo(*m, target);
  if (options.verify) {
    std::string err;
    llvm::raw_string_ostream os(err);
    if (llvm::verifyModule(*m, &os)) {
      os.flush();
      TESSERA_THROW(InternalError, "LLVM codegen produced invalid IR: ", err);
    }
  }
  OptimizeModule(*m, tm, options.opt_level);
  return m;
}

}  // namespace tessera::codegen::detail
