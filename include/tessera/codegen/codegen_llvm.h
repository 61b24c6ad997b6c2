// The LLVM code generator: TensorIR PrimFuncs (flat, lowered form) -> native code.
//
// Every PrimFunc becomes a kernel with the calling convention of runtime/kernel_abi.h,
// `int32_t <global_symbol or name>(void* const* args)`; its buffer pointers are
// assumed 64-byte aligned and not to alias each other. Parallel For loops run on the
// runtime thread pool through the module global __tessera_parallel_launch (serially
// while it is null). The module also defines __tessera_graph_json,
// __tessera_params_blob (64-byte aligned), __tessera_params_size and __tessera_content_hash
// (their runtime::ArtifactContentHash) from ModuleExtras, and __tessera_target_info, the record of the Tessera version, triple and
// features the loader checks (runtime/artifact_info.h). The optimisation pipeline is LLVM's
// default O3 (PassBuilder) for the target's TargetMachine; float arithmetic uses only the
// `contract` flag.
//
// Every `target` must be resolved (target::Target::NeedsResolution() false: the driver resolves
// `native`, see driver/resolve_target.h); its triple, CPU and feature list go to LLVM as they are.
//
// Input requirements (what the TIR lowering passes produce): no Block, BlockRealize
// or Reduce; each buffer access has one (flattened, row-major) index; For kinds
// serial / parallel / unrolled / vectorized (vectorized is emitted as a serial loop
// with a vectorize hint). Violations throw InternalError; unsupported dtypes or
// intrinsics throw UnsupportedError.
#pragma once

#include <string>
#include <vector>

#include "tessera/target/target.h"
#include "tessera/runtime/module.h"
#include "tessera/tir/function.h"

namespace tessera::codegen {

/// Data a model library carries besides its kernels (empty by default).
struct ModuleExtras {
  std::string graph_json;   ///< executor graph (runtime/graph_executor.h), emitted NUL-terminated
  std::string params_blob;  ///< serialized parameters (runtime/param_io.h), raw bytes
};

struct BuildOptions {
  int opt_level = 3;          ///< 0..3: LLVM's default pipeline at that level
  bool verify = true;         ///< run the LLVM verifier on the generated IR
};

/// The optimised LLVM IR of `mod`, as text (for --dump-ir and tests).
std::string EmitLLVMIR(const tir::IRModule& mod, const target::Target& target, const ModuleExtras& extras = {},
                       const BuildOptions& options = {});
/// The target assembly of `mod` (AT&T syntax on x86).
std::string EmitAssembly(const tir::IRModule& mod, const target::Target& target, const ModuleExtras& extras = {},
                         const BuildOptions& options = {});
/// A relocatable, position-independent ELF object holding `mod`, as bytes.
std::string EmitObject(const tir::IRModule& mod, const target::Target& target, const ModuleExtras& extras = {},
                       const BuildOptions& options = {});

/// The C compiler that links objects for `triple` (an LLVM triple; empty: this machine): $CC when
/// set; `cc` when the triple's architecture is the one Tessera was built for; otherwise the cross
/// compiler `<triple>-gcc` or `<arch>-linux-gnu-gcc` (Debian's names, e.g. aarch64-linux-gnu-gcc),
/// the first on PATH. Throws UserError naming the Debian package to install when none is.
std::string LinkerFor(const std::string& triple);

/// Links an object (its bytes as EmitObject returns them, or a path to a .o file) for `triple`
/// (empty: this machine) into the shared library `out_so` by running
/// `<LinkerFor(triple)> -shared -o out_so obj.o <extra_inputs...> -lm`; extra_inputs are more
/// objects and libraries (BYOC: the external codegens' objects and e.g. -ldnnl). Throws UserError
/// with the command and its stderr when it fails.
void LinkSharedLibrary(const std::string& object_bytes_or_path, const std::string& out_so,
                       const std::string& triple = "", const std::vector<std::string>& extra_inputs = {});

/// Compiles `mod` in memory with ORC LLJIT for `target` (which must be the host
/// architecture) and returns a runtime::Module over the JIT'd symbols; the JIT
/// lives as long as the module (or any copy). The module's constructor stores the
/// runtime thread pool's launcher in __tessera_parallel_launch.
runtime::Module BuildJIT(const tir::IRModule& mod, const target::Target& target, const ModuleExtras& extras = {},
                         const BuildOptions& options = {});

}  // namespace tessera::codegen
