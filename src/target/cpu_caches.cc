// Default cache sizes (cpu_caches.h), from the vendors' data sheets: L1d and L2 per core, L3
// per package (a typical SKU where the size varies).
#include "cpu_caches.h"

#include <cstdint>

namespace tessera::target::detail {
namespace {

constexpr int64_t KiB = 1024, MiB = 1024 * 1024;

struct CpuCaches {
  const char* cpu;
  CacheSizes caches;
};

constexpr CpuCaches kTable[] = {
    {"znver1", {32 * KiB, 512 * KiB, 8 * MiB}},
    {"znver2", {32 * KiB, 512 * KiB, 16 * MiB}},
    {"znver3", {32 * KiB, 512 * KiB, 32 * MiB}},
    {"znver4", {32 * KiB, 1 * MiB, 32 * MiB}},
    {"znver5", {48 * KiB, 1 * MiB, 32 * MiB}},
    {"haswell", {32 * KiB, 256 * KiB, 8 * MiB}},
    {"broadwell", {32 * KiB, 256 * KiB, 8 * MiB}},
    {"skylake", {32 * KiB, 256 * KiB, 8 * MiB}},
    {"skylake-avx512", {32 * KiB, 1 * MiB, 32 * MiB}},
    {"cascadelake", {32 * KiB, 1 * MiB, 32 * MiB}},
    {"icelake-server", {48 * KiB, 1280 * KiB, 48 * MiB}},
    {"sapphirerapids", {48 * KiB, 2 * MiB, 96 * MiB}},
    {"x86-64-v3", {32 * KiB, 512 * KiB, 16 * MiB}},
    {"x86-64-v4", {32 * KiB, 1 * MiB, 32 * MiB}},
    {"neoverse-n1", {64 * KiB, 1 * MiB, 32 * MiB}},
    {"neoverse-v1", {64 * KiB, 1 * MiB, 32 * MiB}},
    {"cortex-a72", {32 * KiB, 1 * MiB, 0}},
};

}  // namespace

CacheSizes DefaultCaches(const std::string& arch, const std::string& cpu) {
  for (const CpuCaches& e : kTable)
    if (cpu == e.cpu) return e.caches;
  if (arch == "aarch64") return {64 * KiB, 1 * MiB, 0};
  return CacheSizes{};
}

}  // namespace tessera::target::detail
