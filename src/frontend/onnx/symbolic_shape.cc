// Shape values with symbolic entries: see symbolic_shape.h.
#include "symbolic_shape.h"

#include <algorithm>
#include <set>

#include "const_eval.h"
#include "tensor_convert.h"
#include "tessera/support/error.h"

namespace tessera::frontend::onnx_import {

namespace {

// Symbol k stands for kSentinel - k: far below any extent, -1, or index an element-moving op uses.
constexpr int64_t kSentinel = -(int64_t{1} << 61);
constexpr int64_t kMaxSymbols = int64_t{1} << 20;

// A -1 in a shape value (Reshape's "infer"): a dim name no symbol has (SymbolName).
const char* const kInferDim = "-1";

int64_t Encode(const graph::Dim& d, std::vector<std::string>& symbols) {
  if (d.is_static()) return d.value();
  if (d.name() == kInferDim) return -1;
  auto it = std::find(symbols.begin(), symbols.end(), d.name());
  if (it == symbols.end()) it = symbols.insert(symbols.end(), d.name());
  return kSentinel - static_cast<int64_t>(it - symbols.begin());
}

bool IsSentinel(int64_t v) { return v <= kSentinel && v > kSentinel - kMaxSymbols; }

// The data operands of the element-moving ops: where a shape value may stand.
bool IsDataOperand(const std::string& op, int input) {
  if (op == "Concat") return true;
  return input == 0;
}

const std::set<std::string>& ElementMovingOps() {
  static const std::set<std::string> ops = {"Gather", "Unsqueeze", "Squeeze", "Concat",
                                            "Slice",  "Reshape",   "Flatten", "Identity"};
  return ops;
}

}  // namespace

bool ConvertShapeValueNode(ImportState& state, NodeContext& ctx, const Converter& convert) {
  const onnx::NodeProto& node = ctx.node();
  if (!node.domain().empty() && node.domain() != "ai.onnx") return false;
  // Looked up without reading the inputs (NodeContext::InputRead: the converter must read them).
  std::vector<int> dims_inputs;
  for (int i = 0; i < node.input_size(); ++i) {
    auto it = node.input(i).empty() ? state.values.end() : state.values.find(node.input(i));
    if (it != state.values.end() && it->second.dims) dims_inputs.push_back(i);
  }
  if (dims_inputs.empty()) return false;
  const std::string& op = node.op_type();
  if (op == "Cast") {  // an extent is the same number in any numeric type
    const auto& in = ctx.InputType(0);
    DataType to = DataTypeFromONNX(static_cast<int>(ctx.AttrInt("to")), ctx.Where());
    if (to.is_bool() || !(to.is_int() || to.is_uint() || to.is_floating()))
      ctx.Unsupported("Cast of a symbolic shape value to " + to.str() + " is not supported");
    ctx.SetOutputDims(0, ctx.InputDims(0), static_cast<int>(in.ndim()), to);
    return true;
  }
  if (!ElementMovingOps().count(op)) return false;
  for (int i : dims_inputs)
    if (!IsDataOperand(op, i)) return false;  // e.g. a symbolic Gather index: the converter refuses it

  // Run the converter over stand-in constants, then decode its outputs.
  std::vector<std::pair<std::string, Value>> saved;
  for (int i : dims_inputs) {
    Value& v = state.values.at(node.input(i));
    saved.emplace_back(node.input(i), v);
    std::vector<int64_t> encoded;
    for (const graph::Dim& d : *v.dims) encoded.push_back(Encode(d, state.symbols));
    const auto* t = v.type->as<graph::TensorTypeNode>();
    Value stand_in;
    stand_in.type = graph::TensorTypeNode::make(*graph::StaticShape(t->shape), DataType::Int(64));
    stand_in.constant = FromInts(encoded, *graph::StaticShape(t->shape), DataType::Int(64));
    v = stand_in;
  }
  auto restore = [&] {
    for (auto& [name, v] : saved) state.values[name] = v;
  };
  try {
    convert(ctx);
  } catch (...) {
    restore();
    throw;
  }
  restore();
  for (int o = 0; o < node.output_size(); ++o) {
    if (node.output(o).empty()) continue;
    Value& out = state.values.at(node.output(o));
    if (!out.constant.defined() || !out.constant.dtype().is_int()) {
      ctx.Unsupported(op + " of a symbolic shape value did not fold at import (its result is computed at run time); "
                      "bind the input dims at import (--input-shape NAME=D0,D1,...)");
    }
    const std::vector<int64_t> values = ToInts(out.constant);
    if (std::none_of(values.begin(), values.end(), IsSentinel)) continue;  // only static elements remain
    if (out.constant.shape().size() > 1)
      ctx.Unsupported(op + " makes a symbolic shape value of rank " + std::to_string(out.constant.shape().size()) +
                      "; only rank 0 and 1 are supported");
    std::vector<graph::Dim> dims;
    for (int64_t v : values) {
      if (IsSentinel(v)) dims.push_back(graph::Dim::Symbolic(state.symbols.at(static_cast<size_t>(kSentinel - v))));
      else if (v >= 0) dims.emplace_back(v);
      else if (v == -1) dims.push_back(graph::Dim::Symbolic(kInferDim));  // Reshape's "infer this dim"
      else ctx.Unsupported(op + " mixes a symbolic shape value with the negative number " + std::to_string(v));
    }
    const DataType dtype = out.constant.dtype();
    const int rank = static_cast<int>(out.constant.shape().size());
    ctx.SetOutputDims(o, std::move(dims), rank, dtype);
  }
  return true;
}

}  // namespace tessera::frontend::onnx_import
