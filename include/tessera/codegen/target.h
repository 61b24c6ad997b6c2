// Target: the CPU a module is compiled for (TVM's `llvm -mcpu=... -mattr=...` strings).
//
// Accepted form (tokens separated by spaces, any order after the leading "llvm"):
//
//     llvm [-mtriple=<triple>] [-mcpu=<cpu>|native] [-mattr=+feat,-feat,...] [-num-cores=<n>]
//
// "llvm" alone, or -mcpu=native, detects the host CPU name and its features through
// llvm::sys (getHostCPUName / getHostCPUFeatures). An explicit -mcpu takes that CPU's
// default features (LLVM's processor tables) plus any -mattr. The triple defaults to
// the host process triple. num_cores defaults to the host's hardware concurrency.
//
// Parse throws UserError naming the offending token and the accepted form for an
// unknown option, an unknown triple or CPU, or a malformed number.
#pragma once

#include <string>

namespace tessera::codegen {

struct Target {
  std::string triple;    ///< LLVM target triple, e.g. "x86_64-pc-linux-gnu"
  std::string cpu;       ///< LLVM CPU name, e.g. "znver4" (never "native": resolved by Parse)
  std::string features;  ///< comma-separated LLVM feature string, e.g. "+avx512f,-avx512vnni"
  int vector_width_bits = 128;  ///< widest native SIMD register: 512 for AVX-512, 256 AVX2
  int num_cores = 1;            ///< cores parallel loops may use

  /// Parses a target string of the accepted form above. Throws UserError otherwise.
  static Target Parse(const std::string& spec);
  /// The machine this process runs on (same as Parse("llvm")).
  static Target Host();

  /// True when the CPU (with the extra features) has `feature`, an LLVM feature
  /// name without sign, e.g. HasFeature("avx512f").
  bool HasFeature(const std::string& feature) const;
  /// Number of lanes of `bits`-wide elements in one native vector register (>= 1).
  int VectorLanes(int element_bits) const { return vector_width_bits >= element_bits ? vector_width_bits / element_bits : 1; }
  /// Canonical string: "llvm -mtriple=... -mcpu=... [-mattr=...] -num-cores=N";
  /// Parse(str()) gives back an equal Target.
  std::string str() const;
};

}  // namespace tessera::codegen
