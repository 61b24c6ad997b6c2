// Internal: default cache sizes of known CPUs (LLVM CPU names and the tags' CPUs).
#pragma once

#include <string>

#include "tessera/target/target.h"

namespace tessera::target::detail {

/// The caches of `cpu` on `arch` ("x86_64", "aarch64", ...): a table entry for known CPUs, else
/// a generic default for the architecture.
CacheSizes DefaultCaches(const std::string& arch, const std::string& cpu);

}  // namespace tessera::target::detail
