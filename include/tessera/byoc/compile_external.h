// Compiling the external codegens' sources (byoc/external_codegen.h) with the system compiler.
//
// Library path (`tessera compile`): CompileExternalSources writes each source into a folder and
// compiles it to a position-independent object (`cc -c -O2 -fPIC` for C, `c++ -std=c++17 -c -O2
// -fPIC` for C++, plus the backend's CompileFlags); the driver links those objects and the
// backends' LinkFlags beside the LLVM object into the one model library
// (codegen::LinkSharedLibrary).
// JIT path (driver::BuildJIT, tests): LoadExternalLibrary compiles them the same way, links them
// into a temporary shared library, dlopens it (RTLD_LOCAL | RTLD_NOW) and removes the file; the
// returned SymbolSource keeps it loaded.
//
// Compilers: $CC / `cc` (codegen::LinkerFor(triple)) for C, $CXX / `c++` (for a cross gcc:
// its g++) for C++. A failure is a UserError naming the backend, the region and the compiler's
// stderr.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessera/byoc/external_codegen.h"
#include "tessera/runtime/module.h"

namespace tessera::byoc {

/// Object files, one per source, written into `dir` (which must exist).
std::vector<std::string> CompileExternalSources(const std::vector<ExternalSource>& sources, const std::string& triple,
                                                const std::string& dir);

/// The link flags of the backends of `sources` (each once, in order), e.g. {"-ldnnl", "-lstdc++"}.
std::vector<std::string> ExternalLinkFlags(const std::vector<ExternalSource>& sources);

/// The sources compiled and loaded into this process (see above).
std::shared_ptr<runtime::SymbolSource> LoadExternalLibrary(const std::vector<ExternalSource>& sources);

}  // namespace tessera::byoc
