// Module: the function table of a compiled model.
//
// A Module looks symbols up in a SymbolSource: a model shared library opened with
// dlopen (LoadFromFile), or any other provider, such as the codegen layer's LLVM
// JIT, which implements SymbolSource and hands it over with a keep-alive.
//
// The symbols a model library exports are named in kernel_abi.h:
//   <kernel name>               int32_t(void* const* args), one per PrimFunc
//   __tessera_parallel_launch   TesseraParallelLaunchFn global; on construction the
//                               Module stores TesseraParallelLaunch (thread_pool.h) in it
//   __tessera_graph_json        NUL-terminated graph JSON (graph_executor.h)
//   __tessera_params_blob       serialized parameters (param_io.h), 64-byte aligned ...
//   __tessera_params_size       ... and their size in bytes (int64 global)
//   __tessera_target_info       the version, triple and features it needs (artifact_info.h)
//   __tessera_content_hash      ArtifactContentHash of the JSON and the blob (artifact_info.h)
// The JSON and the blob are arrays (`const char __tessera_graph_json[]`): the symbol
// is the first byte itself, not a pointer to it.
//
// Lifetime: a Module is a shared handle; the library stays loaded (and kernel
// pointers valid) while any copy lives. Copies are cheap.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "tessera/runtime/kernel_abi.h"

namespace tessera::runtime {

/// Where a Module finds its symbols.
class SymbolSource {
 public:
  virtual ~SymbolSource() = default;
  /// The address of symbol `name` (data or function), or nullptr when it is absent.
  virtual void* Lookup(const std::string& name) = 0;
};

class Module {
 public:
  /// dlopens a model shared library (RTLD_LOCAL | RTLD_NOW). Throws UserError naming
  /// the path when the file does not exist, is not a loadable shared library for this
  /// machine (corrupt, wrong architecture, unresolved symbols), or defines neither
  /// __tessera_parallel_launch nor __tessera_graph_json (not a Tessera model), or when this
  /// machine cannot run it: no or another version's target record, another architecture,
  /// missing CPU features (runtime::CheckRunsHere), or when its graph JSON or params blob no
  /// longer match the content hash recorded at compile time (CheckContentHash: a corrupt copy);
  /// no kernel has run then. Cost: the hash reads the JSON and the blob once (several GB/s).
  /// dlopen runs the library's constructors: to look at a library without loading it, read it
  /// with ReadArtifactFile (artifact_file.h).
  static Module LoadFromFile(const std::string& path);

  /// A module over `source`. `origin` names it in error messages (e.g. "<jit>");
  /// `keep_alive` is held as long as the module lives (e.g. the JIT that owns the
  /// code `source` points into). No symbol is required.
  explicit Module(std::shared_ptr<SymbolSource> source, std::string origin = "<symbol source>",
                  std::shared_ptr<void> keep_alive = nullptr);

  /// The kernel `name`. Throws UserError naming the kernel and the module when missing.
  TesseraKernelFn GetKernel(const std::string& name) const;
  /// True when the module defines symbol `name`.
  bool HasSymbol(const std::string& name) const;
  /// The raw address of `name`, or nullptr.
  void* Lookup(const std::string& name) const;

  /// The executor graph JSON (__tessera_graph_json). Throws UserError when absent.
  std::string_view GraphJson() const;
  /// The serialized parameters (__tessera_params_blob / __tessera_params_size); an
  /// empty view when the module has neither symbol. Throws UserError when only one
  /// exists or the size is negative.
  std::string_view ParamsBlob() const;

  /// Where the module came from: the library path or the origin given.
  const std::string& origin() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace tessera::runtime
