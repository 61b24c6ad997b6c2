// Graph executor codegen: turns a fused graph (main calls only primitive functions) into
// the executor plan of runtime/graph_executor.h — the graph JSON, the parameters, and the
// primitive functions to lower, one kernel each (TVM's GraphExecutorCodegen).
//
// Graph inputs are main's parameters (named by their name_hint); constants become
// parameters "p0", "p1", ...; each call of a primitive function becomes one node whose
// output gets a storage from PlanMemory. Structurally identical primitive functions
// share one kernel. A primitive function that only reshapes its input (reshape /
// expand_dims / squeeze) is a zero-copy alias: its value shares the input's storage at
// offset 0 and no kernel runs (the input's lifetime extends to the alias's last reader).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tessera/graph/module.h"
#include "tessera/runtime/ndarray.h"

namespace tessera::driver {

struct ExecutorPlan {
  std::string graph_json;
  std::map<std::string, runtime::NDArray> params;
  /// kernel name → primitive function, one per distinct kernel.
  std::vector<std::pair<std::string, graph::Function>> kernels;
  int num_nodes = 0;                  ///< kernel calls per run
  std::map<std::string, int> kernel_calls;  ///< kernel name → its calls per run
  size_t storage_bytes = 0;           ///< bytes of all planned storages (inputs included)
  size_t unplanned_bytes = 0;         ///< bytes without reuse (each tensor its own storage)
};

/// `output_names` names main's results in order (main's body is a Tuple when there are
/// several). Throws UnsupportedError for constructs the graph executor cannot run
/// (control flow, symbolic shapes) with the reason.
ExecutorPlan GraphExecutorCodegen(const graph::IRModule& fused,
                                  const std::vector<std::string>& output_names);

}  // namespace tessera::driver
