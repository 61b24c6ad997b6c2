// What LLVM knows about a target: the checks and the CPU feature tables that the target layer
// (which has no LLVM) cannot do itself. The driver calls these once, after resolving `native`
// (driver/resolve_target.h), before lowering.
#pragma once

#include "tessera/target/target.h"

namespace tessera::codegen {

/// Checks `t` against LLVM's tables and returns it with its triple normalized
/// ("aarch64-linux-gnu" -> "aarch64-unknown-linux-gnu") and its derived properties recomputed.
/// With `expand_cpu_features` the feature list is made explicit as well: "+name" for every
/// feature the CPU and the list enable together (implied features included: +avx512f brings
/// +avx2, +fma, ...), and "-name" for a CPU default the list turns off; so that
/// target::Target::HasFeature answers for the CPU, without LLVM. `t` must have a triple and a
/// CPU other than "native".
/// Throws UserError naming the unknown triple, CPU (for that triple) or -mattr feature.
target::Target CompleteTarget(const target::Target& t, bool expand_cpu_features = true);

}  // namespace tessera::codegen
