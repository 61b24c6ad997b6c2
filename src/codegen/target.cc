// Target string parsing and host detection (see tessera/codegen/target.h).
#include "tessera/codegen/target.h"

#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include <llvm/ADT/StringMap.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include "llvm_target.h"
#include "tessera/support/error.h"

namespace tessera::codegen {
namespace {

constexpr const char* kAcceptedForm =
    "expected 'llvm [-mtriple=<triple>] [-mcpu=<cpu>|native] [-mattr=+feat,-feat,...] "
    "[-num-cores=<n>]', e.g. 'llvm -mcpu=znver4 -mattr=+avx512f'";

std::string HostFeatureString() {
  std::string out;
  for (const auto& kv : llvm::sys::getHostCPUFeatures()) {
    if (!out.empty()) out += ',';
    out += (kv.second ? '+' : '-');
    out += kv.first().str();
  }
  return out;
}

std::unique_ptr<llvm::MCSubtargetInfo> MakeSubtargetInfo(const Target& t) {
  const llvm::Target* lt = detail::LookupLLVMTarget(t.triple);
  return std::unique_ptr<llvm::MCSubtargetInfo>(
      lt->createMCSubtargetInfo(t.triple, t.cpu, t.features));
}

int DetectVectorWidth(const Target& t) {
  llvm::Triple triple(t.triple);
  if (triple.isX86()) {
    if (t.HasFeature("avx512f")) return 512;
    if (t.HasFeature("avx")) return 256;
    return 128;
  }
  return 128;  // NEON, SSE-class defaults
}

int ParseCount(const std::string& token, const std::string& text) {
  int v = 0;
  if (text.empty() || text.size() > 6) v = -1;
  for (char c : text) {
    if (c < '0' || c > '9') { v = -1; break; }
    v = v * 10 + (c - '0');
  }
  if (v < 1) {
    TESSERA_THROW(UserError, "bad target option '", token, "': the value must be a positive integer; ",
                  kAcceptedForm);
  }
  return v;
}

}  // namespace

namespace detail {

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
    TESSERA_THROW(UserError, "unknown target triple '", triple, "' (", err, "); ", kAcceptedForm);
  }
  return t;
}

std::unique_ptr<llvm::TargetMachine> CreateTargetMachine(const Target& target) {
  const llvm::Target* lt = LookupLLVMTarget(target.triple);
  llvm::TargetOptions opts;
  std::unique_ptr<llvm::TargetMachine> tm(lt->createTargetMachine(target.triple, target.cpu, target.features,
                                                                  opts, llvm::Reloc::PIC_, std::nullopt,
                                                                  llvm::CodeGenOptLevel::Aggressive));
  if (!tm) TESSERA_THROW(UserError, "cannot create an LLVM target machine for '", target.str(), "'");
  return tm;
}

}  // namespace detail

Target Target::Parse(const std::string& spec) {
  std::istringstream is(spec);
  std::vector<std::string> tokens;
  for (std::string tok; is >> tok;) tokens.push_back(tok);
  if (tokens.empty() || tokens[0] != "llvm") {
    TESSERA_THROW(UserError, "bad target string '", spec, "': ", kAcceptedForm);
  }
  std::string triple, cpu = "native", mattr;
  int cores = 0;
  bool seen_cpu = false, seen_attr = false, seen_triple = false, seen_cores = false;
  auto take = [&](const std::string& tok, const std::string& prefix, bool* seen) -> bool {
    if (tok.rfind(prefix, 0) != 0) return false;
    if (*seen) TESSERA_THROW(UserError, "bad target string '", spec, "': '", prefix, "' given twice; ", kAcceptedForm);
    *seen = true;
    return true;
  };
  for (size_t i = 1; i < tokens.size(); ++i) {
    const std::string& tok = tokens[i];
    std::string value = tok.substr(tok.find('=') == std::string::npos ? tok.size() : tok.find('=') + 1);
    if (take(tok, "-mcpu=", &seen_cpu)) {
      cpu = value;
    } else if (take(tok, "-mattr=", &seen_attr)) {
      mattr = value;
    } else if (take(tok, "-mtriple=", &seen_triple)) {
      triple = value;
    } else if (take(tok, "-num-cores=", &seen_cores)) {
      cores = ParseCount(tok, value);
    } else {
      TESSERA_THROW(UserError, "bad target string '", spec, "': unknown option '", tok, "'; ",
                    kAcceptedForm);
    }
    if (value.empty()) {
      TESSERA_THROW(UserError, "bad target string '", spec, "': option '", tok, "' has no value; ",
                    kAcceptedForm);
    }
  }
  for (size_t p = 0; !mattr.empty() && p < mattr.size();) {
    size_t q = mattr.find(',', p);
    std::string f = mattr.substr(p, q == std::string::npos ? std::string::npos : q - p);
    if (f.size() < 2 || (f[0] != '+' && f[0] != '-')) {
      TESSERA_THROW(UserError, "bad target string '", spec, "': feature '", f,
                    "' in -mattr must be +name or -name; ", kAcceptedForm);
    }
    if (q == std::string::npos) break;
    p = q + 1;
  }

  detail::InitializeLLVM();
  Target t;
  std::string host_triple = llvm::sys::getProcessTriple();
  t.triple = triple.empty() ? host_triple : llvm::Triple::normalize(triple);
  detail::LookupLLVMTarget(t.triple);
  if (cpu == "native") {
    if (llvm::Triple(t.triple).getArch() == llvm::Triple(host_triple).getArch()) {
      t.cpu = llvm::sys::getHostCPUName().str();
      t.features = HostFeatureString();
    } else {
      t.cpu = "generic";
    }
  } else {
    t.cpu = cpu;
  }
  {
    // Validate names against a generic subtarget first: LLVM only warns on stderr.
    std::unique_ptr<llvm::MCSubtargetInfo> generic(
        detail::LookupLLVMTarget(t.triple)->createMCSubtargetInfo(t.triple, "", ""));
    if (!generic->isCPUStringValid(t.cpu)) {
      TESSERA_THROW(UserError, "bad target string '", spec, "': unknown CPU '", t.cpu,
                    "' for triple ", t.triple, "; ", kAcceptedForm);
    }
    for (size_t p = 0; !mattr.empty() && p < mattr.size();) {
      size_t q = mattr.find(',', p);
      std::string name = mattr.substr(p + 1, q == std::string::npos ? std::string::npos : q - p - 1);
      bool known = false;
      for (const auto& kv : generic->getAllProcessorFeatures()) known |= (name == kv.Key);
      if (!known) {
        TESSERA_THROW(UserError, "bad target string '", spec, "': unknown feature '", name,
                      "' in -mattr for triple ", t.triple, "; ", kAcceptedForm);
      }
      if (q == std::string::npos) break;
      p = q + 1;
    }
  }
  if (!mattr.empty()) t.features = t.features.empty() ? mattr : t.features + "," + mattr;
  t.vector_width_bits = DetectVectorWidth(t);
  unsigned hw = std::thread::hardware_concurrency();
  t.num_cores = cores > 0 ? cores : (hw > 0 ? static_cast<int>(hw) : 1);
  return t;
}

Target Target::Host() { return Parse("llvm"); }

bool Target::HasFeature(const std::string& feature) const {
  auto sti = MakeSubtargetInfo(*this);
  return sti->checkFeatures("+" + feature);
}

std::string Target::str() const {
  std::string s = "llvm -mtriple=" + triple + " -mcpu=" + cpu;
  if (!features.empty()) s += " -mattr=" + features;
  s += " -num-cores=" + std::to_string(num_cores);
  return s;
}

}  // namespace tessera::codegen
