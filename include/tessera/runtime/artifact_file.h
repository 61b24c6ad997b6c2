// What a model library holds, read from the file itself without loading it (issue 15): the
// target record, the graph JSON, the params blob and the content hash, found through the ELF
// symbol table (the exported data symbols of kernel_abi.h) and read with bounds checks against
// the file's size. No dlopen: nothing of the library runs (no constructor), and a library for
// another architecture (an aarch64 .so on an x86 host) or another Tessera version reads the same.
// `tessera inspect` shows what this returns; the fuzz target `artifact` feeds it arbitrary bytes.
//
// Errors: UserError naming the file for a file that cannot be read or is not a regular file, is
// not a 64-bit ELF file or has no section headers, has a table or a symbol outside the file (a
// truncated or corrupt copy), has no graph JSON (not a Tessera model) or no target record (built
// by an older Tessera), an unterminated record or JSON, or only one of the params symbols.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::runtime {

struct ArtifactFile {
  std::string arch;         ///< the ELF machine, named as ElfArch names it ("x86_64", "aarch64")
  std::string target_info;  ///< the target record's text (artifact_info.h), without its NUL
  std::string graph_json;   ///< the executor graph (graph_executor.h), without its NUL
  std::string params_blob;  ///< the serialized parameters (param_io.h); empty when there are none
  bool has_content_hash = false;
  uint64_t content_hash = 0;  ///< the recorded ArtifactContentHash, when has_content_hash
};

/// Reads the model library at `path` (see the header comment).
ArtifactFile ReadArtifactFile(const std::string& path);
/// The same from the bytes of a library file; `what` names it in errors.
ArtifactFile ParseArtifactImage(std::string_view image, const std::string& what);

}  // namespace tessera::runtime
