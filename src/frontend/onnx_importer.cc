// The ONNX import driver: parse the ModelProto, bind inputs and initializers, convert the nodes
// in order (one converter per op type, src/frontend/onnx/ops_*.cc), then build and type "main".
#include "tessera/frontend/onnx_importer.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

#include "onnx/const_eval.h"
#include "onnx/context.h"
#include "onnx/symbolic_shape.h"
#include "onnx/tensor_convert.h"
#include "tessera/graph/expr_util.h"
#include "tessera/graph/infer_type.h"
#include "tessera/support/checked_math.h"
#include "tessera/support/error.h"
#include "tessera/support/file_read.h"

namespace tessera::frontend {

using namespace onnx_import;  // NOLINT

namespace {

int64_t DefaultOpset(const onnx::ModelProto& model) {
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  return 1;
}

// The newest ONNX IR version and default-domain opset this importer knows (onnx.proto of ONNX
// 1.23: IR version 14, opset 28). A newer model may use semantics the converters do not have.
constexpr int64_t kMaxIRVersion = 14;
constexpr int64_t kMaxOpset = 28;

void CheckVersions(const onnx::ModelProto& model, int64_t opset, const std::string& source) {
  if (model.ir_version() > kMaxIRVersion)
    TESSERA_THROW(UserError, source, ": the model's IR version ", model.ir_version(),
                  " is newer than the newest Tessera reads (", kMaxIRVersion,
                  "); re-export it with an older ONNX, or convert it (onnx.version_converter)");
  if (opset < 1 || opset > kMaxOpset)
    TESSERA_THROW(UserError, source, ": the model imports the default ONNX domain at opset ", opset,
                  "; Tessera supports opsets 1 to ", kMaxOpset,
                  " (convert it with onnx.version_converter.convert_version(model, ", kMaxOpset, "))");
}

// A graph input's byte size must fit int64, so that every product of its extents the converters
// and relations form fits too.
void CheckInputExtents(const graph::Shape& shape, DataType dtype, const std::string& source, const std::string& name) {
  int64_t bytes = dtype.bytes();
  for (const graph::Dim& d : shape) {
    if (!d.is_static()) continue;
    bytes = CheckedMul(bytes, d.value(), source + ": the byte size of graph input '" + name + "'");
  }
}

// The declared type of a graph input/output with symbolic dims bound (inputs) or looked up in
// `bound` (outputs). Returns null when the model declares no tensor type.
graph::Type DeclaredType(const onnx::ValueInfoProto& vi, const std::string& source, const ImportOptions& opts,
                         std::map<std::string, int64_t>& bound, bool is_input) {
  if (!vi.has_type() || !vi.type().has_tensor_type()) {
    if (is_input) {
      TESSERA_THROW(UnsupportedError, source, ": graph input '", vi.name(),
                    "' is not a tensor (sequences, maps and optionals are not supported)");
    }
    return nullptr;
  }
  const auto& tt = vi.type().tensor_type();
  DataType dtype = DataTypeFromONNX(tt.elem_type(), source + ": graph value '" + vi.name() + "'");
  auto given = opts.input_shapes.find(vi.name());
  graph::Shape shape;
  if (auto value = opts.input_values.find(vi.name()); is_input && value != opts.input_values.end()) {
    // A value bound at compile time: its dtype and shape, checked against the declaration.
    const runtime::NDArray& a = value->second;
    const std::string who = source + ": input_values gives '" + vi.name() + "' ";
    if (a.dtype() != dtype) TESSERA_THROW(UserError, who, "a ", a.dtype().str(), " value; the model declares ", dtype.str());
    if (given != opts.input_shapes.end() && given->second != a.shape())
      TESSERA_THROW(UserError, who, "the shape ", runtime::ShapeToString(a.shape()), " but input_shapes gives ",
                    runtime::ShapeToString(given->second));
    const int rank = static_cast<int>(a.shape().size());
    if (tt.has_shape() && tt.shape().dim_size() != rank)
      TESSERA_THROW(UserError, who, "rank ", rank, " but the model declares rank ", tt.shape().dim_size());
    for (int i = 0; i < rank; ++i) {
      if (tt.has_shape() && tt.shape().dim(i).has_dim_value() && tt.shape().dim(i).dim_value() != a.shape()[i])
        TESSERA_THROW(UserError, who, "dim ", i, " = ", a.shape()[i], " but the model declares ",
                      tt.shape().dim(i).dim_value());
      if (tt.has_shape() && tt.shape().dim(i).has_dim_param()) bound[tt.shape().dim(i).dim_param()] = a.shape()[i];
      shape.emplace_back(a.shape()[i]);
    }
    return graph::TensorTypeNode::make(shape, dtype);
  }
  if (is_input && given != opts.input_shapes.end()) {
    const std::vector<int64_t>& g = given->second;
    if (tt.has_shape() && tt.shape().dim_size() != static_cast<int>(g.size())) {
      TESSERA_THROW(UserError, source, ": input_shapes gives '", vi.name(), "' rank ", g.size(),
                    " but the model declares rank ", tt.shape().dim_size());
    }
    const auto names = opts.input_dim_names.find(vi.name());
    for (int i = 0; i < static_cast<int>(g.size()); ++i) {
      const bool declared_param = tt.has_shape() && tt.shape().dim(i).has_dim_param() && !tt.shape().dim(i).dim_param().empty();
      if (g[i] == -1) {  // kept symbolic
        std::string name = vi.name() + "_" + std::to_string(i);
        if (declared_param) name = tt.shape().dim(i).dim_param();
        if (names != opts.input_dim_names.end() && names->second.count(i)) name = names->second.at(i);
        if (tt.has_shape() && tt.shape().dim(i).has_dim_value()) {
          TESSERA_THROW(UserError, source, ": input_shapes makes '", vi.name(), "' dim ", i,
                        " symbolic but the model declares the static extent ", tt.shape().dim(i).dim_value());
        }
        shape.push_back(graph::Dim::Symbolic(SymbolName(name)));
        continue;
      }
      if (tt.has_shape() && tt.shape().dim(i).has_dim_value() && tt.shape().dim(i).dim_value() != g[i]) {
        TESSERA_THROW(UserError, source, ": input_shapes gives '", vi.name(), "' dim ", i, " = ", g[i],
                      " but the model declares ", tt.shape().dim(i).dim_value());
      }
      if (declared_param) bound[tt.shape().dim(i).dim_param()] = g[i];
      if (g[i] < 0) TESSERA_THROW(UserError, source, ": input_shapes gives '", vi.name(), "' the negative extent ", g[i]);
      shape.emplace_back(g[i]);
    }
    CheckInputExtents(shape, dtype, source, vi.name());
    return graph::TensorTypeNode::make(shape, dtype);
  }
  if (!tt.has_shape()) {
    if (is_input) {
      TESSERA_THROW(UserError, source, ": graph input '", vi.name(),
                    "' has no declared shape; give one with ImportOptions::input_shapes");
    }
    return nullptr;
  }
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto& d = tt.shape().dim(i);
    if (d.has_dim_value()) {
      // A negative extent would read as a symbolic dim (graph::Dim).
      if (d.dim_value() < 0)
        TESSERA_THROW(UserError, source, ": graph ", is_input ? "input" : "output", " '", vi.name(),
                      "' declares the negative extent ", d.dim_value(), " (dim ", i, "); fix the model");
      shape.emplace_back(d.dim_value());
      continue;
    }
    const bool named = d.has_dim_param() && !d.dim_param().empty();
    std::string name = named ? d.dim_param() : vi.name() + "[" + std::to_string(i) + "]";
    if (opts.keep_symbolic_dims) {
      // A dim kept symbolic; an output's unnamed dim is whatever the graph computes ("?").
      if (!is_input && !named) {
        shape.push_back(graph::Dim::Any());
      } else {
        shape.push_back(graph::Dim::Symbolic(SymbolName(named ? name : vi.name() + "_" + std::to_string(i))));
      }
      continue;
    }
    if (is_input && !bound.count(name)) bound[name] = opts.default_symbolic_dim;
    auto it = bound.find(name);
    shape.push_back(it != bound.end() ? graph::Dim(it->second) : graph::Dim::Symbolic(name));
  }
  if (is_input) CheckInputExtents(shape, dtype, source, vi.name());
  return graph::TensorTypeNode::make(shape, dtype);
}

}  // namespace

// Adds this node's location to errors a converter raised without one (const_eval, relations).
void onnx_import::ConvertNode(ImportState& state, const onnx::NodeProto& node, int index) {
  NodeContext ctx(state, node, index);
  const std::string& domain = node.domain();
  const Converter* conv = FindConverter(domain, node.op_type());
  if (!conv && !domain.empty() && domain != "ai.onnx") {
    ctx.Unsupported("operator " + node.op_type() + " of domain '" + domain +
                    "' is not supported by Tessera's ONNX importer (domains: ai.onnx, ai.onnx.preview.training, "
                    "ai.onnx.preview: FlexAttention, ai.onnx.ml: Binarizer, ArrayFeatureExtractor, TreeEnsemble, "
                    "TreeEnsembleRegressor, TreeEnsembleClassifier)");
  }
  if (!conv) ctx.Unsupported("operator " + node.op_type() + " is not supported by Tessera's ONNX importer");
  std::string where = ctx.Where();
  auto located = [&](const char* msg) {
    std::string m = msg;
    return m.rfind(state.source + ": ", 0) == 0 ? m : where + ": " + m;
  };
  try {
    if (!ConvertShapeValueNode(state, ctx, *conv)) (*conv)(ctx);
  } catch (const UnsupportedError& e) {
    throw UnsupportedError(located(e.what()));
  } catch (const UserError& e) {
    throw UserError(located(e.what()));
  } catch (const InternalError&) {
    throw;
  } catch (const std::exception& e) {
    throw UserError(located(e.what()));
  }
  for (int i = 0; i < node.input_size(); ++i) {
    if (!node.input(i).empty() && !ctx.InputRead(i)) {
      ctx.Fail("input " + std::to_string(i) + " ('" + node.input(i) + "') is not an input of " + node.op_type() +
               " at opset " + std::to_string(state.opset) + " (the node has " + std::to_string(node.input_size()) +
               " inputs); remove it: Tessera does not drop inputs silently");
    }
  }
  for (int i = 0; i < node.output_size(); ++i) {
    if (!node.output(i).empty() && !state.values.count(node.output(i))) {
      ctx.Unsupported("output " + std::to_string(i) + " ('" + node.output(i) + "') is not produced by the converter");
    }
  }
}

namespace {

// Every node whose operator has no converter (or whose domain is not ai.onnx), listed before
// any node is converted so that the user sees all of them at once, grouped by operator:
//   m.onnx: 3 nodes use 2 operators that Tessera's ONNX importer does not support (opset 16):
//     If: 2 nodes ('If_0', 'If_1')
//     LSTM: 1 node ('lstm')
// A single such node keeps the per-node message that ConvertNode gives.
void CheckEveryOperatorIsSupported(const onnx::GraphProto& g, ImportState& state) {
  std::map<std::string, std::vector<std::string>> missing;  // "domain:op" or "op" -> node names
  int first = -1, count = 0;
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& node = g.node(i);
    const bool foreign = !node.domain().empty() && node.domain() != "ai.onnx";
    if (FindConverter(node.domain(), node.op_type())) continue;
    if (first < 0) first = i;
    ++count;
    const std::string op = foreign ? node.domain() + ":" + node.op_type() : node.op_type();
    missing[op].push_back(node.name().empty() ? "node #" + std::to_string(i) : "'" + node.name() + "'");
  }
  if (count == 0) return;
  if (count == 1) ConvertNode(state, g.node(first), first);  // throws the per-node message
  std::ostringstream msg;
  msg << state.source << ": " << count << " nodes use " << missing.size()
      << " operators that Tessera's ONNX importer does not support (opset " << state.opset << "):";
  for (const auto& [op, nodes] : missing) {
    msg << "\n  " << op << ": " << nodes.size() << (nodes.size() == 1 ? " node (" : " nodes (");
    for (size_t k = 0; k < nodes.size() && k < 5; ++k) msg << (k ? ", " : "") << nodes[k];
    if (nodes.size() > 5) msg << ", and " << nodes.size() - 5 << " more";
    msg << ")";
  }
  throw UnsupportedError(msg.str());
}

// input_values with number literals (rank-0 int64 / float64 values: `--input-value sr=16000`)
// converted to the dtype the model declares for that input, when the conversion is exact.
ImportOptions ResolveLiterals(const onnx::GraphProto& g, ImportOptions opts, const std::string& source) {
  for (auto& [name, value] : opts.input_values) {
    if (!value.defined()) TESSERA_THROW(UserError, source, ": input_values gives '", name, "' no value");
    for (const auto& in : g.input()) {
      if (in.name() != name || !in.type().has_tensor_type()) continue;
      const DataType declared =
          DataTypeFromONNX(in.type().tensor_type().elem_type(), source + ": graph input '" + name + "'");
      const DataType given = value.dtype();
      if (given == declared || !value.shape().empty() || (given != DataType::Int(64) && given != DataType::Float(64)) ||
          !(declared.is_int() || declared.is_uint() || declared.is_float()))
        continue;
      runtime::NDArray converted = onnx_import::CastArray(value, declared);
      runtime::NDArray back = onnx_import::CastArray(converted, given);
      if (std::memcmp(back.raw_data(), value.raw_data(), value.NBytes()) != 0)
        TESSERA_THROW(UserError, source, ": input_values gives '", name, "' the value ", runtime::ValuesToString(value),
                      ", which ", declared.str(), " (its declared dtype) cannot hold exactly");
      value = converted;
    }
  }
  return opts;
}

ImportResult ImportModel(const onnx::ModelProto& model, const ImportOptions& given_opts, const std::string& source) {
  if (!model.has_graph()) {
    TESSERA_THROW(UserError, source, ": the ONNX model has no graph; is this a complete .onnx model file?");
  }
  const onnx::GraphProto& g = model.graph();
  const ImportOptions opts = ResolveLiterals(g, given_opts, source);
  ImportResult result;
  result.input_values = opts.input_values;
  result.opset = DefaultOpset(model);
  CheckVersions(model, result.opset, source);
  result.ir_version = model.ir_version();
  result.producer = model.producer_name() + (model.producer_version().empty() ? "" : " " + model.producer_version());
  for (const auto& node : model.graph().node()) result.onnx_op_counts[node.op_type()] += 1;

  ImportState state;
  state.source = source;
  state.opset = result.opset;
  state.graph = &g;
  for (const auto& o : model.opset_import()) state.domain_opsets[o.domain().empty() ? "ai.onnx" : o.domain()] = o.version();
  for (const auto& init : g.initializer()) {
    Value v;
    v.constant = TensorProtoToNDArray(init, source + ": initializer '" + init.name() + "'");
    v.type = graph::TensorTypeNode::make(v.constant.shape(), v.constant.dtype());
    state.values[init.name()] = std::move(v);
  }
  // An encoded image stream (an ImageDecoder's input) keeps its length symbolic: bound to 1 it would
  // hold no image, and the decoded image's extents are the run's anyway.
  std::set<std::string> encoded_streams;
  for (const auto& node : g.node())
    if (node.op_type() == "ImageDecoder" && (node.domain().empty() || node.domain() == "ai.onnx") && node.input_size() > 0)
      encoded_streams.insert(node.input(0));
  ImportOptions keep_symbolic = opts;
  keep_symbolic.keep_symbolic_dims = true;
  std::vector<graph::Var> params;
  for (const auto& in : g.input()) {
    if (state.values.count(in.name())) continue;  // an initializer listed as input (IR < 4): a constant
    graph::Type t =
        DeclaredType(in, source, encoded_streams.count(in.name()) ? keep_symbolic : opts, result.bound_dims, true);
    graph::Var var = graph::VarNode::make(in.name(), t);
    graph::InferExprType(var);
    // An input with no elements (a static dim of 0) has a known value, the empty tensor: e.g.
    // the empty `axes` of ReduceSum-18, which selects reducing everything (or nothing).
    runtime::NDArray known;
    if (auto value = opts.input_values.find(in.name()); value != opts.input_values.end()) known = value->second;
    if (const auto* tt = t->as<graph::TensorTypeNode>(); tt && !known.defined()) {
      if (auto shape = graph::StaticShape(tt->shape)) {
        int64_t n = 1;
        for (int64_t d : *shape) n *= d;
        if (n == 0) known = runtime::NDArray::Empty(*shape, tt->dtype);
      }
    }
    state.values[in.name()] = Value{var, t, known};
    params.push_back(var);
    result.input_names.push_back(in.name());
    result.input_types.push_back(t);
  }
  for (const auto& [name, shape] : opts.input_shapes) {
    if (std::find(result.input_names.begin(), result.input_names.end(), name) == result.input_names.end()) {
      TESSERA_THROW(UserError, source, ": input_shapes names '", name, "', which is not a graph input");
    }
  }
  for (const auto& [name, value] : opts.input_values) {
    if (std::find(result.input_names.begin(), result.input_names.end(), name) == result.input_names.end()) {
      TESSERA_THROW(UserError, source, ": input_values names '", name, "', which is not a graph input");
    }
  }
  CheckEveryOperatorIsSupported(g, state);
  for (int i = 0; i < g.node_size(); ++i) ConvertNode(state, g.node(i), i);

  std::vector<graph::Expr> outs;
  for (const auto& out : g.output()) {
    auto it = state.values.find(out.name());
    if (it == state.values.end()) {
      TESSERA_THROW(UserError, source, ": graph output '", out.name(), "' is not produced by any node");
    }
    if (std::find(result.output_names.begin(), result.output_names.end(), out.name()) != result.output_names.end()) {
      TESSERA_THROW(UserError, source, ": graph output '", out.name(),
                    "' is listed twice; graph outputs must have distinct names (ONNX IR: names are unique)");
    }
    Value& v = it->second;
    if (v.sequence)
      TESSERA_THROW(UnsupportedError, source, ": graph output '", out.name(), "' is a sequence (of ", v.sequence->size(),
                    " tensors); Tessera's executors return tensors only: concatenate it (ConcatFromSequence) or "
                    "return its elements (SequenceAt)");
    if (!v.expr) v.expr = graph::ConstantNode::make(v.constant);
    outs.push_back(v.expr);
    result.output_names.push_back(out.name());
    result.declared_output_types.push_back(DeclaredType(out, source, opts, result.bound_dims, false));
  }
  if (outs.empty()) TESSERA_THROW(UserError, source, ": the graph has no outputs");
  graph::Expr body = outs.size() == 1 ? outs[0] : graph::TupleNode::make(outs);
  graph::IRModule mod = graph::IRModule::FromMain(graph::FunctionNode::make(params, body));
  graph::AddTypeDefsUsed(&mod);  // the prelude's Option of the optional operators (ops_optional.cc)
  result.module = graph::InferType(mod);
  result.warnings = std::move(state.warnings);
  return result;
}

}  // namespace

ImportResult FromONNXBytes(const std::string& bytes, const ImportOptions& options, const std::string& source) {
  onnx::ModelProto model;
  if (bytes.empty() || !model.ParseFromString(bytes)) {
    TESSERA_THROW(UserError, source,
                  ": not a valid ONNX model (the protobuf could not be parsed: the file is truncated, corrupt or "
                  "not an .onnx file); re-export or re-download the model");
  }
  return ImportModel(model, options, source);
}

ImportResult FromONNX(const std::string& path, const ImportOptions& options) {
  // A regular file only (a FIFO or /dev/zero would block or never end), and no larger than a
  // protobuf message can be (2 GiB).
  return FromONNXBytes(ReadRegularFile(path, "ONNX model file", kMaxProtobufBytes), options, path);
}

}  // namespace tessera::frontend
