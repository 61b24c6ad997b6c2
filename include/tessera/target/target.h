// Target: the machine a model is compiled for (TVM's `llvm -mtriple=... -mcpu=... -mattr=...`),
// below topi so that computes, schedules and layout rewrites can ask it (DESIGN.md "Layers").
// This layer knows no LLVM and never asks the host: `native` is resolved once, in the driver
// (driver/resolve_target.h), into an explicit CPU and feature list.
//
// Accepted forms (Target::Parse):
//
//   llvm [-mtriple=<triple>] [-mcpu=<cpu>|native] [-mattr=+feat,-feat,...] [-num-cores=<n>]
//       tokens separated by spaces, options in any order, each at most once. Without -mcpu the
//       CPU is `native`; without -mtriple the triple is left empty (the driver fills in the
//       host's). Features are LLVM feature names with a sign; a later one overrides an earlier.
//   native                   same as `llvm` (the machine the compiler runs on)
//   <tag> [options]          a named target, optionally followed by `-mattr=` / `-num-cores=`:
//     x86-64-v3, avx2        x86_64-pc-linux-gnu, CPU x86-64-v3: AVX2 + FMA (256-bit vectors)
//     x86-64-v4, avx512      x86_64-pc-linux-gnu, CPU x86-64-v4: AVX-512 F/CD/BW/DQ/VL (512-bit)
//     aarch64                aarch64-linux-gnu, CPU generic, NEON (128-bit vectors)
//   Every tag expands to an explicit triple, CPU and feature list (TagNames() lists them).
//
// Derived properties (recomputed by Make from triple, CPU and features; a feature counts as
// present when the last entry naming it has a '+'):
//   vector_width_bits  widest SIMD register: x86: 512 with avx512f, 256 with avx, else 128;
//                      aarch64: 128 (NEON); others: 128.
//   vector_registers   architectural SIMD registers: x86-64 32 with avx512f, else 16; aarch64 32.
//   cache              L1d / L2 / L3 bytes (per core for L1d / L2, per package for L3): defaults
//                      for known CPUs and tags, else a generic 32 KiB / 512 KiB / 8 MiB; the
//                      driver replaces them with the host's for `native`.
//   keys               for op-strategy lookup, most specific last: {"cpu", "x86"} (x86 triples),
//                      {"cpu", "arm"} (aarch64 / arm), {"cpu"} otherwise.
//
// Errors: Parse throws UserError naming the offending token and listing the accepted forms for
// an empty string, an unknown first word (neither `llvm`, `native` nor a tag), an unknown
// option, an option given twice or without a value, an -mattr entry without a sign, or a
// -num-cores value that is not a positive integer. Unknown CPU and feature names are checked
// against LLVM's tables by codegen (codegen/target_info.h), which the driver calls.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::target {

struct CacheSizes {
  int64_t l1d_bytes = 32 * 1024;   ///< L1 data cache of one core
  int64_t l2_bytes = 512 * 1024;   ///< L2 of one core
  int64_t l3_bytes = 8 << 20;      ///< last-level cache of the package (0: none)
};

struct Target {
  std::string kind = "llvm";          ///< code generator: "llvm" (later "c")
  std::string triple;                 ///< e.g. "x86_64-pc-linux-gnu"; empty until resolved
  std::string cpu = "native";         ///< LLVM CPU name, e.g. "znver4"; "native" until resolved
  std::vector<std::string> features;  ///< LLVM features with a sign, e.g. {"+avx2", "-avx512f"}
  int num_cores = 0;                  ///< cores parallel loops may use; 0: not given (the runtime decides)

  // Derived by Make (see the header comment).
  int vector_width_bits = 128;
  int vector_registers = 16;
  CacheSizes cache;
  std::vector<std::string> keys;

  /// Parses one of the accepted forms above. Throws UserError otherwise.
  static Target Parse(const std::string& spec);
  /// A target from its defining fields, with the derived properties computed.
  static Target Make(std::string triple, std::string cpu, std::vector<std::string> features,
                     int num_cores = 0, std::string kind = "llvm");
  /// The tag names Parse accepts, in the order of the header comment.
  static std::vector<std::string> TagNames();

  /// True until the driver has resolved `native` and the empty triple.
  bool NeedsResolution() const { return cpu == "native" || triple.empty(); }
  /// The architecture: the triple's first component ("x86_64", "aarch64", ...); "" when unresolved.
  std::string Arch() const;
  bool IsX86() const;
  bool IsAArch64() const;
  /// True when the last entry of `features` naming `feature` (no sign, e.g. "avx512f") enables it.
  bool HasFeature(const std::string& feature) const;
  /// True when `key` is one of `keys`.
  bool HasKey(const std::string& key) const;
  /// Lanes of `element_bits`-wide elements in one vector register (>= 1): 16 for float32 on AVX-512.
  int VectorLanes(int element_bits) const {
    return vector_width_bits >= element_bits ? vector_width_bits / element_bits : 1;
  }
  /// The features joined by commas, as LLVM's target-features attribute takes them.
  std::string FeatureString() const;
  /// Canonical string "llvm -mtriple=T -mcpu=C [-mattr=...] [-num-cores=N]"; Parse(str())
  /// gives back an equal Target (the options left unresolved are left out).
  std::string str() const;

  bool operator==(const Target& o) const {
    return kind == o.kind && triple == o.triple && cpu == o.cpu && features == o.features && num_cores == o.num_cores;
  }
};

}  // namespace tessera::target
