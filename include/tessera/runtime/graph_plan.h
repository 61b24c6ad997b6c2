// The parsed and validated executor graph JSON (graph_executor.h documents the format): what
// GraphExecutor builds itself from, and what `tessera inspect` shows of a library (read from the
// file, without loading it: artifact_file.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/runtime/data_type.h"

namespace tessera::runtime {

struct PlanStorage {
  size_t size_bytes = 0;
};

struct PlanValue {
  enum class Kind { kInput, kParam, kIntermediate };
  int64_t id = 0;
  DataType dtype;
  std::vector<int64_t> shape;
  Kind kind = Kind::kIntermediate;
  int storage = -1;          // index into GraphPlan::storages (input / intermediate)
  size_t offset_bytes = 0;   // inside that storage
  std::string param;         // kind == kParam
  /// A zero-copy view of another value's bytes (a reshape): that value's index into
  /// GraphPlan::values, else -1. The root is never itself an alias and has the same storage,
  /// offset and byte size.
  int alias_of = -1;
};

struct PlanIO {
  std::string name;
  int value = -1;  // index into GraphPlan::values
};

struct PlanNode {
  std::string name;
  std::string kernel;
  std::vector<int> args;  // indices into GraphPlan::values
  /// The model nodes whose run-time checks this kernel makes (optional "checks": e.g. "node
  /// 'g' (op Gather, domain ai.onnx, opset 13)"): named when the kernel fails one.
  std::vector<std::string> checks;
};

/// A kernel of an external codegen (BYOC): the optional "external" list of the graph JSON.
struct PlanExternal {
  std::string symbol;    ///< the kernel nodes call
  std::string compiler;  ///< its backend ("dnnl")
  std::vector<std::string> ops;
};

/// An input the model was specialized for at compile time (optional "guards" of the graph
/// JSON): every run must give it the value of `param`.
struct PlanGuard {
  int input = -1;     ///< index into GraphPlan::inputs
  std::string param;  ///< the params-blob tensor holding the value
};

struct GraphPlan {
  std::vector<PlanStorage> storages;
  std::vector<PlanValue> values;
  std::vector<PlanIO> inputs, outputs;
  std::vector<PlanNode> nodes;
  std::vector<PlanExternal> external;
  std::vector<PlanGuard> guards;
};

/// Parses and checks the structure of the graph JSON (ids, names, kinds, sizes; every index in
/// the result is in range). Parameters are checked against the blob later, by the executor.
/// `origin` names the module in errors. Throws UserError, never anything else, whatever the text.
GraphPlan ParseGraphPlan(std::string_view json, const std::string& origin);

}  // namespace tessera::runtime
