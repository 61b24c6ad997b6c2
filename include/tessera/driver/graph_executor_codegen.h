// Graph executor codegen: turns a fused graph (main calls only primitive functions) into
// the executor plan of runtime/graph_executor.h — the graph JSON, the parameters, and the
// primitive functions to lower, one kernel each (TVM's GraphExecutorCodegen).
//
// Graph inputs are main's parameters (named by their name_hint); constants become
// parameters "p0", "p1", ...; each call of a primitive function becomes one node whose
// output gets a storage from PlanMemory. Structurally identical primitive functions
// share one kernel. A primitive function that only reshapes its input (reshape /
// expand_dims / squeeze) is a zero-copy alias: its value shares the input's storage at
// offset 0 and no kernel runs (the input's lifetime extends to the alias's last reader); the
// graph JSON marks it with "alias_of" (runtime/graph_executor.h).
//
// A call of an external function (BYOC: a Function with `Compiler` and `global_symbol` attrs,
// graph/transform/partition_graph.h) becomes one node whose kernel is the global_symbol, with
// the same kernel ABI (runtime/kernel_abi.h): its arguments, then one output per result (a
// tuple-typed function writes one value per field; main reads them by TupleGetItem). Its
// function goes to `externals` for the backend's codegen (byoc/external_codegen.h), and the
// graph JSON lists it under "external": [{"symbol", "compiler", "ops"}] (tessera inspect).
//
// A node whose primitive function holds ops with a `source` attr (ops that check their indices at
// run time, ir::checked_index) lists those labels as its "checks", so that the executor's error
// names the model node.
//
// A graph input bound to a value at import (input_guards) stays an input; the JSON's
// "guards": [{"input": NAME, "param": "pN"}] hold the value the run must get.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tessera/graph/module.h"
#include "tessera/runtime/ndarray.h"

namespace tessera::driver {

/// An external function called by the plan, for its backend's codegen.
struct ExternalFunction {
  std::string symbol;    ///< global_symbol: the kernel name the node calls
  std::string compiler;  ///< the backend (Compiler attr)
  graph::Function function;
  /// Per parameter: whether every call passes a constant (a graph executor param: weights, which
  /// a backend may prepare once).
  std::vector<bool> constant_params;
};

struct ExecutorPlan {
  std::string graph_json;
  std::map<std::string, runtime::NDArray> params;
  /// kernel name → primitive function, one per distinct kernel.
  std::vector<std::pair<std::string, graph::Function>> kernels;
  /// External functions (BYOC), one per global_symbol, in the order of their first call.
  std::vector<ExternalFunction> externals;
  int num_nodes = 0;                  ///< kernel calls per run
  std::map<std::string, int> kernel_calls;  ///< kernel name → its calls per run
  size_t storage_bytes = 0;           ///< bytes of all planned storages (inputs included)
  size_t unplanned_bytes = 0;         ///< bytes without reuse (each tensor its own storage)
};

/// `output_names` names main's results in order (main's body is a Tuple when there are
/// several). `input_guards` (input name -> value) are inputs the model was specialized for at
/// import (frontend::ImportResult::input_values, of the input's type): each value becomes a parameter and the
/// graph JSON's "guards" make the executor check it against the input at every run. Throws
/// UnsupportedError for constructs the graph executor cannot run (control flow, symbolic
/// shapes) with the reason; UserError when a guard names no graph input.
ExecutorPlan GraphExecutorCodegen(const graph::IRModule& fused, const std::vector<std::string>& output_names,
                                  const std::map<std::string, runtime::NDArray>& input_guards = {});

}  // namespace tessera::driver
