// External codegens (BYOC, arXiv 2105.03215 §3.4): a backend turns each external function that
// PartitionGraph made for it (graph/transform/partition_graph.h: attrs Compiler = its name,
// global_symbol = the kernel name) into source code defining that symbol with the kernel ABI of
// runtime/kernel_abi.h,
//
//     extern "C" int32_t <global_symbol>(void* const* args);
//
// args = the function's parameters in order, then one output per result (per tuple field), each
// a dense row-major buffer of its static shape. The system compiler turns the source into an
// object linked into the model library beside the LLVM object (byoc/compile_external.h), so the
// graph executor calls it like any kernel and one .so carries both.
//
// Backends are registered by name in one table (src/byoc/registry.cc, no static initializers),
// one folder per backend (src/byoc/<name>/). docs/byoc.md says how to add one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessera/graph/expr.h"
#include "tessera/graph/transform/merge_composite.h"
#include "tessera/graph/transform/partition_graph.h"

namespace tessera::byoc {

/// One external function to compile.
struct ExternalRegion {
  const graph::FunctionNode* function = nullptr;
  std::string symbol;  ///< its global_symbol: the kernel name
  /// Per parameter: every call passes a constant (weights the backend may prepare once).
  std::vector<bool> constant_params;
};

/// What a backend generated for its regions of one model: one translation unit.
struct ExternalSource {
  std::string backend;   ///< the backend's name ("dnnl")
  std::string language;  ///< "c" or "c++": how the system compiler compiles `code`
  std::string code;
  std::vector<std::string> symbols;  ///< the kernels it defines
};

class ExternalCodegen {
 public:
  virtual ~ExternalCodegen() = default;
  /// The name of `--byoc NAME` and of the Compiler attr.
  virtual std::string name() const = 0;
  /// Whether the backend runs this op call (op, attrs, checked argument and result types): the
  /// AnnotateTarget predicate. A rejected call stays on Tessera's own path.
  virtual bool Supports(const graph::CallNode& call) const = 0;
  /// Named patterns (Composite = "<name>.<pattern>") the driver outlines into composite functions
  /// (MergeComposite) before AnnotateTarget: units the backend runs as one primitive, such as
  /// the layer norm the ONNX importer expands into ten ops. A composite of this backend belongs
  /// to it without Supports; Generate sees it as one RegionStep (op = the Composite name) when
  /// it flattens with composites_as_steps. Default: none.
  virtual std::vector<graph::transform::CompositePattern> Patterns() const { return {}; }
  /// Whether a region (after PartitionGraph) is worth a call of this backend; a refused region
  /// goes back to Tessera's path (InlineExternalFunctions). Default: every region.
  virtual bool WorthOffloading(const graph::FunctionNode& region) const { return true; }
  /// One source defining the kernels of all `regions` (this backend's external functions of one
  /// model). Throws UnsupportedError naming the region and op when a function holds something
  /// Supports did not accept.
  virtual ExternalSource Generate(const std::vector<ExternalRegion>& regions) const = 0;
  /// Flags for the compiler ("-I...") and for the link ("-ldnnl") of every model using it.
  virtual std::vector<std::string> CompileFlags() const { return {}; }
  virtual std::vector<std::string> LinkFlags() const { return {}; }
};

/// The backend `name`. UserError listing the registered names when there is none.
const ExternalCodegen& GetExternalCodegen(const std::string& name);
/// The registered names, sorted.
std::vector<std::string> ExternalCodegenNames();
/// Whether the external function `fn` (Compiler attr = a registered backend) is worth offloading.
bool WorthOffloading(const graph::FunctionNode& fn);
/// The composite patterns of the named backends, in order (MergeComposite's input).
std::vector<graph::transform::CompositePattern> CompositePatterns(const std::vector<std::string>& names);
/// The partitioner's view of the named backends, in order (the first that supports a call wins).
std::vector<graph::transform::ExternalBackend> ExternalBackends(const std::vector<std::string>& names);

}  // namespace tessera::byoc
