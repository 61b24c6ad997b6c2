// ReadArtifactFile / ParseArtifactImage (artifact_file.h).
#include "tessera/runtime/artifact_file.h"

#include <cstring>

#include "elf_symbols.h"
#include "tessera/runtime/artifact_info.h"
#include "tessera/runtime/kernel_abi.h"
#include "tessera/support/error.h"
#include "tessera/support/file_read.h"

namespace tessera::runtime {
namespace {

constexpr uint64_t kMaxRecordBytes = 64 * 1024;

// A NUL-terminated text symbol, without its NUL.
std::string Text(const detail::ElfSymbols& elf, const detail::ElfSymbols::Symbol& sym, uint64_t max_bytes,
                 const char* name, const std::string& what) {
  std::string bytes = elf.Bytes(sym, max_bytes);
  const size_t nul = bytes.find('\0');
  TESSERA_CHECK(nul != std::string::npos, what, " is corrupt: symbol ", name,
                " is not NUL-terminated; copy or compile it again (tessera compile)");
  bytes.resize(nul);
  return bytes;
}

ArtifactFile ReadArtifact(const detail::ElfSymbols& elf, uint64_t file_size, const std::string& what) {
  ArtifactFile a;
  a.arch = ElfMachineArch(elf.machine());
  const auto json = elf.Find(kGraphJsonSymbol);
  TESSERA_CHECK(json.has_value(), what, " is not a Tessera model library: it defines no ", kGraphJsonSymbol,
                ". Pass the library that tessera compile wrote");
  a.graph_json = Text(elf, *json, file_size, kGraphJsonSymbol, what);
  const auto record = elf.Find(kTargetInfoSymbol);
  TESSERA_CHECK(record.has_value(), what, " has no target record (", kTargetInfoSymbol,
                "): it was built by an older Tessera; recompile the model with this version");
  a.target_info = Text(elf, *record, kMaxRecordBytes, kTargetInfoSymbol, what);

  const auto blob = elf.Find(kParamsBlobSymbol);
  const auto size = elf.Find(kParamsSizeSymbol);
  TESSERA_CHECK(blob.has_value() == size.has_value(), what, " defines ",
                blob ? kParamsBlobSymbol : kParamsSizeSymbol, " but not ", blob ? kParamsSizeSymbol : kParamsBlobSymbol,
                ": the library is corrupt; rebuild it");
  if (blob) {
    const uint64_t n = elf.U64(*size, kParamsSizeSymbol);
    TESSERA_CHECK(n <= blob->size, what, " is corrupt: ", kParamsSizeSymbol, " says ", n, " bytes but ",
                  kParamsBlobSymbol, " has ", blob->size, "; rebuild it");
    a.params_blob = elf.Bytes({blob->file_offset, n}, n);
  }
  if (const auto hash = elf.Find(kContentHashSymbol)) {
    a.has_content_hash = true;
    a.content_hash = elf.U64(*hash, kContentHashSymbol);
  }
  return a;
}

}  // namespace

ArtifactFile ReadArtifactFile(const std::string& path) {
  RegularFile file(path, "model library");
  const std::string what = "model library '" + path + "'";
  detail::ElfSymbols elf([&](uint64_t offset, void* out, size_t n) { file.ReadAt(offset, out, n); }, file.size(),
                         what);
  return ReadArtifact(elf, file.size(), what);
}

ArtifactFile ParseArtifactImage(std::string_view image, const std::string& what) {
  detail::ElfSymbols elf([&](uint64_t offset, void* out, size_t n) { std::memcpy(out, image.data() + offset, n); },
                         image.size(), what);
  return ReadArtifact(elf, image.size(), what);
}

}  // namespace tessera::runtime
