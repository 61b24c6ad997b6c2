// The ONNX importer: an ONNX ModelProto -> a graph::IRModule whose "main" takes the graph
// inputs (in graph-input order, initializers excluded) and returns the graph output, or a
// tuple of them in graph-output order.
//
// - Initializers and Constant nodes become graph Constants.
// - Shape-driven subgraphs over static shapes are folded at import: every tensor whose value
//   is known (initializers, Constant, Shape of a static tensor, and Gather/Unsqueeze/Concat/
//   Slice/Cast/Reshape/arithmetic over known values) is kept as a compile-time value, so e.g.
//   Reshape's shape input becomes the op's static `newshape`.
// - Symbolic input dims are bound to static extents: from ImportOptions::input_shapes, else each
//   symbolic name is bound to default_symbolic_dim (1), and recorded in ImportResult::bound_dims.
//   With ImportOptions::keep_symbolic_dims (or a -1 in input_shapes) a dim stays symbolic instead
//   (graph::Dim::Symbolic, named by the model's dim_param): the model is compiled once for every
//   extent and run by the VM (dynamic shapes, Relay's Any). An input that is an ImageDecoder's
//   encoded stream always keeps its length symbolic (bound to 1 it could hold no image). Converters that need a static extent
//   refuse a symbolic one with an UnsupportedError naming the node and the dim.
//
// Errors (tessera::UserError, UnsupportedError for unsupported ops / attributes / dtypes) name
// the file, the node, the op and the opset, e.g.
//   "model.onnx: node 'LSTM_12' (op LSTM, domain ai.onnx, opset 16): operator LSTM is not
//    supported by Tessera's ONNX importer".
// Before converting anything the importer checks every node's operator: when several nodes
// use operators it lacks, one UnsupportedError lists them all, grouped by operator with counts:
//   "model.onnx: 3 nodes use 2 operators that Tessera's ONNX importer does not support
//    (opset 16):\n  If: 2 nodes ('If_0', 'If_1')\n  LSTM: 1 node ('lstm')".
// Converters follow the ONNX operator specs (https://onnx.ai/onnx/operators/) per opset version.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tessera/graph/module.h"
#include "tessera/runtime/ndarray.h"

namespace tessera::frontend {

struct ImportOptions {
  /// Shapes for graph inputs, by input name; they override the declared shape (declared static
  /// extents must agree). An extent of -1 keeps the dim symbolic: named input_dim_names[name][i]
  /// when given, else the model's dim_param, else "<input>_<i>".
  std::map<std::string, std::vector<int64_t>> input_shapes;
  /// Names for the -1 dims of input_shapes (input name -> dim index -> symbol name); inputs that
  /// share a name share the extent (e.g. input_ids and attention_mask both [1, "seq"]).
  std::map<std::string, std::map<int, std::string>> input_dim_names;
  /// Keep the model's symbolic dims (not fixed by input_shapes) symbolic instead of binding them
  /// to default_symbolic_dim.
  bool keep_symbolic_dims = false;
  /// The extent given to symbolic dims (e.g. "batch_size") not fixed by input_shapes.
  int64_t default_symbolic_dim = 1;
  /// Graph inputs whose value is fixed at compile time (specialization, as TVM's
  /// bind_params_by_name and torch.compile's specialization on ints): the importer folds with
  /// the value (an If on a sample rate imports its taken branch) while the input stays an input
  /// of main, and the built library checks at every run that it gets this value
  /// (pass ImportResult::input_values as driver::BuildOptions::input_guards). dtype must equal the declared one; the shape must
  /// match the declared rank and static extents (it binds the symbolic ones). UserError otherwise.
  std::map<std::string, runtime::NDArray> input_values;
};

struct ImportResult {
  graph::IRModule module;
  std::vector<std::string> input_names;   ///< main's parameters, in order
  std::vector<std::string> output_names;  ///< main's results, in order
  /// The graph inputs' types as imported (symbolic dims bound unless kept).
  std::vector<graph::Type> input_types;
  /// The types the model declares for its outputs, with the same symbol binding (null where
  /// the model declares none).
  std::vector<graph::Type> declared_output_types;
  /// ImportOptions::input_values as bound: each converted to its input's dtype (a number literal
  /// given as int64 / float64). Pass this map as driver::BuildOptions::input_guards.
  std::map<std::string, runtime::NDArray> input_values;
  /// Symbolic dim name -> the extent it was bound to (e.g. "batch_size" -> 1).
  std::map<std::string, int64_t> bound_dims;
  int64_t opset = 0;  ///< the default-domain opset the model imports
  int64_t ir_version = 0;
  /// ONNX op type -> number of nodes of the main graph using it (before any folding).
  std::map<std::string, int> onnx_op_counts;
  std::string producer;  ///< producer_name and version, e.g. "pytorch 1.13.1"
  /// What the user should know about the compiled model, each naming the node (e.g. an If branch
  /// that cannot run with the compiled input shapes and fails the run when taken).
  std::vector<std::string> warnings;
};

/// Imports the model file at `path`. UserError for a missing, unreadable, truncated or corrupt
/// file, one that is not a regular file (a FIFO, a device, a folder: support/file_read.h) or is
/// over 2 GiB (protobuf's limit), or a model without a graph; UnsupportedError for
/// ops/attributes Tessera lacks.
ImportResult FromONNX(const std::string& path, const ImportOptions& options = {});

/// Imports a serialized ModelProto; `source` names it in error messages.
ImportResult FromONNXBytes(const std::string& bytes, const ImportOptions& options = {},
                           const std::string& source = "<memory>");

}  // namespace tessera::frontend
