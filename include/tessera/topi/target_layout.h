// The data-layout blocks a target's kernels use, from the target (never from the host):
// AlterOpLayout's NCHWc channel block, the packed GEMM weights' column block and the x86
// schedules' vector loops all take this width.
#pragma once

#include <cstdint>

#include "tessera/target/target.h"

namespace tessera::topi {

/// Elements of `element_bits` in one layout block: one 64-byte cache line, so a block is
/// loaded whole (16 float32: one zmm with AVX-512, two ymm with AVX2, four NEON q registers),
/// and at least one vector register (64 float32 lanes would be a 2048-bit register).
int64_t BlockLanes(const target::Target& target, int element_bits = 32);

}  // namespace tessera::topi
