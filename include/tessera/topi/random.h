// Counter-based random numbers (ONNX RandomUniform / RandomNormal / *Like, Bernoulli, Multinomial):
// element p of a tensor (its row-major position) is a pure function of a 64-bit key and p, so a
// kernel needs no generator state, parallelizes and vectorizes like any elementwise compute, and
// gives the same values at every run (as JAX's counter-based PRNG; Salmon et al., "Parallel random
// numbers: as easy as 1, 2, 3", SC'11, for the idea).
//
// The generator is SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number
// generators", OOPSLA'14): stream position q gives
//   z = key + (q + 1) * 0x9E3779B97F4A7C15 (mod 2^64)
//   z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;  z = (z ^ (z >> 27)) * 0x94D049BB133111EB;  z ^ (z >> 31)
// (the n-th output of a SplitMix64 seeded with `key` is position n - 1), which passes BigCrush.
//   uniform in [0, 1): float64 (z >> 11) * 2^-53; float32 / float16 / bfloat16 (z >> 40) * 2^-24 in float32
//   normal: Box-Muller over positions 2p and 2p + 1: sqrt(-2 ln(1 - u0)) * cos(2 pi u1)
// computed in float64 for float64 outputs, float32 otherwise, then cast to the output dtype.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/te/tensor.h"

namespace tessera::topi {

using te::Tensor;
using ir::PrimExpr;

/// SplitMix64's constants: the Weyl increment and the two multipliers of its finalizer.
inline constexpr uint64_t kSplitMixGamma = 0x9E3779B97F4A7C15ull;
inline constexpr uint64_t kSplitMixM1 = 0xBF58476D1CE4E5B9ull;
inline constexpr uint64_t kSplitMixM2 = 0x94D049BB133111EBull;

/// SplitMix64's finalizer on a host value (what `splitmix64` computes in the kernel): the importer
/// derives generator keys with it.
constexpr uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * kSplitMixM1;
  z = (z ^ (z >> 27)) * kSplitMixM2;
  return z ^ (z >> 31);
}

/// SplitMix64's output at stream position `position` (a uint64 PrimExpr) for `key`: uint64,
/// splitmix64_mix(key + (position + 1) * kSplitMixGamma).
PrimExpr splitmix64(PrimExpr position, uint64_t key);

/// Whether draws can be of `dtype`: float16, bfloat16, float32 or float64 (scalar).
inline bool is_random_dtype(DataType dtype) {
  return dtype.is_scalar() && (dtype.is_float() || dtype.is_bfloat16()) &&
         (dtype.bits() == 16 || dtype.bits() == 32 || dtype.bits() == 64);
}

/// The type draws are computed in for an output `dtype`: float64 for float64, float32 otherwise.
inline DataType random_compute_type(DataType dtype) {
  return dtype == DataType::Float(64) ? DataType::Float(64) : DataType::Float(32);
}

/// low + (high - low) * U, U uniform in [0, 1) per element, `dtype` float16 / bfloat16 / float32 /
/// float64, `shape` any (symbolic extents allowed). Tag elemwise.
Tensor random_uniform(const std::vector<PrimExpr>& shape, DataType dtype, uint64_t key, double low, double high,
                      const std::string& name = "T_random_uniform");

/// mean + scale * N, N standard normal per element (Box-Muller), as random_uniform.
Tensor random_normal(const std::vector<PrimExpr>& shape, DataType dtype, uint64_t key, double mean, double scale,
                     const std::string& name = "T_random_normal");

}  // namespace tessera::topi
