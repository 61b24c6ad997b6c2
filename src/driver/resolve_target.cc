// Target resolution against the host (driver/resolve_target.h). The only compiler file that
// asks the host CPU anything.
#include "tessera/driver/resolve_target.h"

#include <unistd.h>

#include <thread>

#include <llvm/ADT/StringMap.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include "tessera/codegen/target_info.h"
#include "tessera/support/error.h"

namespace tessera::driver {
namespace {

std::vector<std::string> HostFeatures() {
  std::vector<std::string> out;
  for (const auto& kv : llvm::sys::getHostCPUFeatures()) out.push_back((kv.second ? "+" : "-") + kv.first().str());
  return out;
}

int64_t HostCache(int name, int64_t fallback) {
  const long v = sysconf(name);
  return v > 0 ? v : fallback;
}

// The target of `parsed` on this machine (ResolveTarget without the error context).
target::Target Resolve(const target::Target& parsed) {
  const std::string host_triple = llvm::sys::getProcessTriple();
  const std::string triple = parsed.triple.empty() ? host_triple : parsed.triple;
  const bool on_host = llvm::Triple(llvm::Triple::normalize(triple)).getArch() == llvm::Triple(host_triple).getArch();
  if (parsed.cpu != "native" || !on_host) {
    const std::string cpu = parsed.cpu != "native" ? parsed.cpu : "generic";
    return codegen::CompleteTarget(target::Target::Make(triple, cpu, parsed.features, parsed.num_cores, parsed.kind));
  }
  std::vector<std::string> features = HostFeatures();
  features.insert(features.end(), parsed.features.begin(), parsed.features.end());
  const unsigned hw = std::thread::hardware_concurrency();
  const int cores = parsed.num_cores > 0 ? parsed.num_cores : (hw > 0 ? static_cast<int>(hw) : 1);
  // The host's list names every feature it knows, + or -: kept as it is (the generated code
  // stays what it was), unless -mattr changed it.
  target::Target t = codegen::CompleteTarget(
      target::Target::Make(triple, llvm::sys::getHostCPUName().str(), features, cores, parsed.kind),
      /*expand_cpu_features=*/!parsed.features.empty());
#ifdef _SC_LEVEL1_DCACHE_SIZE
  t.cache.l1d_bytes = HostCache(_SC_LEVEL1_DCACHE_SIZE, t.cache.l1d_bytes);
  t.cache.l2_bytes = HostCache(_SC_LEVEL2_CACHE_SIZE, t.cache.l2_bytes);
  t.cache.l3_bytes = HostCache(_SC_LEVEL3_CACHE_SIZE, t.cache.l3_bytes);
#endif
  return t;
}

}  // namespace

target::Target ResolveTarget(const std::string& spec) {
  const target::Target parsed = target::Target::Parse(spec);  // its errors name the spec already
  try {
    return Resolve(parsed);
  } catch (const UserError& e) {
    TESSERA_THROW(UserError, "bad target '", spec, "': ", e.what());
  }
}

target::Target HostTarget() { return ResolveTarget("native"); }

bool RunsOnHost(const target::Target& t) {
  const std::string host_triple = llvm::sys::getProcessTriple();
  if (llvm::Triple(llvm::Triple::normalize(t.triple)).getArch() != llvm::Triple(host_triple).getArch()) return false;
  for (const auto& kv : llvm::sys::getHostCPUFeatures())
    if (!kv.second && t.HasFeature(kv.first().str())) return false;
  return true;
}

}  // namespace tessera::driver
