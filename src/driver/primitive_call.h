// What both executor codegens (graph_executor_codegen.h, vm_codegen.h) need to know about the
// calls of a fused main function: primitive functions, their kernels and external functions.
// Internal to the driver.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tessera/graph/expr.h"
#include "tessera/runtime/data_type.h"
#include "tessera/runtime/ndarray.h"

namespace tessera::driver {

/// The static shape of a tensor type; InternalError when `type` is no tensor, UnsupportedError
/// naming `what` when a dimension is symbolic.
std::vector<int64_t> StaticShapeOf(const graph::Type& type, const std::string& what);
/// The dtype of a tensor type; InternalError otherwise.
DataType DTypeOf(const graph::Type& type);

/// True when `fn` only reshapes its one parameter (reshape / expand_dims / squeeze chains): its
/// output is the input's bytes under another shape, so it needs no kernel.
bool IsReshapeOnly(const graph::FunctionNode* fn);

/// The `source` attrs of fn's op calls (the model nodes of ops that check their indices at run
/// time), each once, in post order.
std::vector<std::string> RuntimeChecks(const graph::Function& fn);

/// Whether `e` calls an external function (BYOC, partition_graph.h).
bool IsExternalCall(const graph::Expr& e);

/// The params of the inputs main was specialized for (BuildOptions::input_guards): each value
/// is added to `params` as "pN" (N = its size before); returns (input name, param name) pairs.
/// UserError when a guard names no input of main; InternalError when its type differs.
std::vector<std::pair<std::string, std::string>> GuardParams(const graph::Function& main,
                                                             const std::map<std::string, runtime::NDArray>& guards,
                                                             std::map<std::string, runtime::NDArray>& params);

/// One kernel per structurally identical primitive function, named after its ops
/// ("fused_conv2d_add_relu_3"), with its calls per run.
class KernelTable {
 public:
  /// The kernel of `fn` (made on first sight); counts one call.
  std::string KernelFor(const graph::Function& fn);
  /// kernel name -> primitive function, in the order of first sight.
  std::vector<std::pair<std::string, graph::Function>>& kernels() { return kernels_; }
  const std::map<std::string, int>& calls() const { return calls_; }

 private:
  std::map<std::string, std::string> by_key_;
  std::vector<std::pair<std::string, graph::Function>> kernels_;
  std::map<std::string, int> calls_;
};

}  // namespace tessera::driver
