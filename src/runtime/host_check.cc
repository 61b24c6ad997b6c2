// The loader's check of an artifact against this machine (runtime/artifact_info.h). The runtime
// is the one layer that asks the host: it decides whether an artifact may run here.
#include <algorithm>

#if defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#include "tessera/runtime/artifact_info.h"
#include "tessera/support/error.h"
#include "tessera/support/version.h"

namespace tessera::runtime {

std::string HostArch() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#elif defined(__riscv) && __riscv_xlen == 64
  return "riscv64";
#else
  return "unknown";
#endif
}

bool HostHasFeature(const std::string& f) {
#if defined(__x86_64__) || defined(__i386__)
  // __builtin_cpu_supports takes a string literal: one line per feature.
  if (f == "popcnt") return __builtin_cpu_supports("popcnt");
  if (f == "sse4.2") return __builtin_cpu_supports("sse4.2");
  if (f == "bmi") return __builtin_cpu_supports("bmi");
  if (f == "bmi2") return __builtin_cpu_supports("bmi2");
  if (f == "avx") return __builtin_cpu_supports("avx");
  if (f == "avx2") return __builtin_cpu_supports("avx2");
  if (f == "fma") return __builtin_cpu_supports("fma");
  if (f == "avx512f") return __builtin_cpu_supports("avx512f");
  if (f == "avx512cd") return __builtin_cpu_supports("avx512cd");
  if (f == "avx512bw") return __builtin_cpu_supports("avx512bw");
  if (f == "avx512dq") return __builtin_cpu_supports("avx512dq");
  if (f == "avx512vl") return __builtin_cpu_supports("avx512vl");
  if (f == "avx512vnni") return __builtin_cpu_supports("avx512vnni");
  if (f == "avx512bf16") return __builtin_cpu_supports("avx512bf16");
  if (f == "avx512ifma") return __builtin_cpu_supports("avx512ifma");
  if (f == "avx512vbmi") return __builtin_cpu_supports("avx512vbmi");
  return false;
#elif defined(__aarch64__) && defined(__linux__)
  // The kernel's hardware capabilities; Advanced SIMD ("neon", HWCAP_ASIMD) is on every AArch64
  // Linux machine in practice, but the record says what the artifact needs, so check it.
  if (f == "neon") return (getauxval(AT_HWCAP) & HWCAP_ASIMD) != 0;
  return false;
#elif defined(__aarch64__)
  return f == "neon";  // Advanced SIMD is part of the AArch64 base profile
#else
  return false;
#endif
}

void CheckRunsHere(const ArtifactInfo& info, const std::string& origin) {
  TESSERA_CHECK(info.version == TESSERA_VERSION, "model library '", origin, "' was built by Tessera ",
                info.version, " but this runtime is Tessera ", TESSERA_VERSION,
                ": recompile the model with this version (tessera compile)");
  const std::string arch = info.triple.substr(0, info.triple.find('-'));
  TESSERA_CHECK(arch == HostArch(), "model library '", origin, "' was compiled for ", info.triple,
                " but this machine is ", HostArch(), ": run it on a ", arch,
                " machine, or recompile it with --target native");
  std::string missing, needs;
  for (const std::string& f : info.features) {
    needs += (needs.empty() ? "" : ", ") + f;
    if (!HostHasFeature(f)) missing += (missing.empty() ? "" : ", ") + f;
  }
  TESSERA_CHECK(missing.empty(), "model library '", origin, "' was compiled for a CPU with ", needs,
                "; this machine lacks ", missing, ". Recompile it for this machine: tessera compile --target native",
                arch == "x86_64" ? " (or a tag it supports, e.g. --target avx2)" : "");
}

}  // namespace tessera::runtime
