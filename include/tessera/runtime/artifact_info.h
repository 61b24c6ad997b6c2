// Where an artifact runs: the record every compiled model library carries (symbol
// __tessera_target_info, kernel_abi.h), and the loader's check of it against this machine.
//
// The record is NUL-terminated text, one "key value" line each, in this order:
//   tessera <version>            the TESSERA_VERSION that built it (support/version.h)
//   triple <LLVM triple>         e.g. x86_64-pc-linux-gnu
//   features <+f,+g,...>         the enabled features of CheckedFeatures() (may be empty)
//
// Module::LoadFromFile checks the record before any kernel runs, so an artifact built for
// AVX-512 fails on an AVX2 machine with one UserError (what it needs, what this machine lacks,
// how to rebuild), not with SIGILL inside a kernel.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::runtime {

struct ArtifactInfo {
  std::string version;                ///< Tessera version that built the artifact
  std::string triple;                 ///< LLVM target triple
  std::vector<std::string> features;  ///< enabled features, without sign, e.g. {"avx2", "fma"}
};

/// The features an artifact records and the loader checks: the x86 ISA extensions that
/// generated code uses (popcnt, sse4.2, bmi, bmi2, avx, avx2, fma, avx512f/cd/bw/dq/vl/vnni/
/// bf16/ifma/vbmi) and AArch64's neon.
const std::vector<std::string>& CheckedFeatures();

/// The record's text (see the header comment).
std::string FormatArtifactInfo(const ArtifactInfo& info);
/// Parses a record. Throws UserError naming `origin` when it is malformed.
ArtifactInfo ParseArtifactInfo(std::string_view text, const std::string& origin);

/// The architecture this runtime is built for: "x86_64", "aarch64", ... (the first component of
/// a triple).
std::string HostArch();
/// The architecture an ELF file is for, from its header's e_machine, named as HostArch() names
/// them ("x86_64", "aarch64", "riscv64"; others "elf-machine-<N>"), or "" when `path` cannot be
/// read or is not an ELF file. The loader checks it before dlopen, whose error for a foreign
/// library is unhelpful ("cannot open shared object file").
std::string ElfArch(const std::string& path);
/// The architecture of an ELF e_machine number, named as ElfArch names it.
std::string ElfMachineArch(uint16_t machine);
/// Checks that the 64-bit ELF file at `path` (`file_size` bytes) is whole before the loader maps
/// it: the program and section header tables and every loadable segment's file range lie inside
/// the file (a truncated copy would otherwise fault inside dlopen with SIGBUS). UserError naming
/// the file and the first range that does not fit; nothing for a file that is not a 64-bit ELF
/// (dlopen reports those).
void CheckElfImage(const std::string& path, uint64_t file_size);
/// True when this machine has `feature` (a CheckedFeatures() name); false for other names.
bool HostHasFeature(const std::string& feature);

/// The content hash an artifact records (symbol __tessera_content_hash, kernel_abi.h): the
/// ContentHash64 (support/content_hash.h) of the graph JSON's bytes (without its NUL), then of
/// the params blob's, chained. Codegen computes it at compile time; Module::LoadFromFile and
/// `tessera inspect` recompute it, so data changed after compilation is detected.
uint64_t ArtifactContentHash(std::string_view graph_json, std::string_view params_blob);
/// UserError naming `origin` when `recorded` is not ArtifactContentHash of the two: the library
/// was corrupted after compilation (a bad copy, a flipped bit, an edit).
void CheckContentHash(uint64_t recorded, std::string_view graph_json, std::string_view params_blob,
                      const std::string& origin);

/// Throws UserError naming `origin` when this runtime cannot run the artifact: another Tessera
/// version, another architecture, or features this machine lacks (the error lists them and says
/// to recompile with --target native or a tag the machine supports).
void CheckRunsHere(const ArtifactInfo& info, const std::string& origin);

}  // namespace tessera::runtime
