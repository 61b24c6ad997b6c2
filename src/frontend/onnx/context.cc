#include "context.h"

#include <cctype>

#include "const_eval.h"
#include "graph_build.h"
#include "tensor_convert.h"
#include "tessera/graph/expr_util.h"
#include "tessera/graph/infer_type.h"
#include "tessera/support/error.h"

namespace tessera::frontend::onnx_import {

using graph::Expr;

NodeContext::NodeContext(ImportState& state, const onnx::NodeProto& node, int index)
    : state_(state), node_(node), index_(index), read_(static_cast<size_t>(node.input_size()), false) {}

std::string NodeContext::Where() const { return detail::Concat(state_.source, ": ", Label()); }

std::string NodeContext::Label() const {
  std::string who = node_.name().empty() ? "node #" + std::to_string(index_) : "node '" + node_.name() + "'";
  std::string domain = node_.domain().empty() ? "ai.onnx" : node_.domain();
  auto it = state_.domain_opsets.find(domain);
  const std::string opset = domain == "ai.onnx" ? std::to_string(state_.opset)
                            : it != state_.domain_opsets.end() ? std::to_string(it->second)
                                                                : std::string("not imported by the model");
  return detail::Concat(who, " (op ", node_.op_type(), ", domain ", domain, ", opset ", opset, ")");
}

void NodeContext::Fail(const std::string& msg) const { throw UserError(Where() + ": " + msg); }
void NodeContext::Unsupported(const std::string& msg) const { throw UnsupportedError(Where() + ": " + msg); }
void NodeContext::Warn(const std::string& msg) const { state_.warnings.push_back(Where() + ": " + msg); }

bool NodeContext::HasInput(int i) const { return i < node_.input_size() && !node_.input(i).empty(); }

Value& NodeContext::InputValue(int i) {
  if (!HasInput(i)) Fail("input " + std::to_string(i) + " is required but absent");
  read_[i] = true;
  auto it = state_.values.find(node_.input(i));
  if (it == state_.values.end()) {
    Fail("input '" + node_.input(i) +
         "' is not produced by any earlier node, initializer or graph input (the graph is not topologically "
         "sorted or is incomplete)");
  }
  return it->second;
}

Expr ExprOf(Value& v) {
  if (v.sequence)
    TESSERA_THROW(UserError, "a sequence (of ", v.sequence->size(), " ", v.sequence_dtype.str(),
                  " tensors) is used where a tensor is expected");
  if (v.dims && v.expr) return v.expr;  // already read at run time (NodeContext::Input)
  if (v.dims) {
    std::string text;
    for (const graph::Dim& d : *v.dims) text += (text.empty() ? "" : ", ") + d.str();
    TESSERA_THROW(UnsupportedError, "the shape value [", text,
                  "] (of symbolic dims) is used as a run-time tensor; symbolic shape values only feed shape "
                  "operands (Reshape's shape, Range's limit) so far: bind the input dims at import "
                  "(--input-shape NAME=D0,D1,...)");
  }
  if (!v.expr) {
    v.expr = graph::ConstantNode::make(v.constant);
    graph::InferExprType(v.expr);
  }
  return v.expr;
}

Value ValueOf(Expr e) {
  Value v;
  v.type = graph::InferExprType(e);
  if (auto* c = e->as<graph::ConstantNode>()) v.constant = c->data;
  v.expr = std::move(e);
  return v;
}

Expr NodeContext::Input(int i) {
  Value& v = InputValue(i);
  if (!v.dims) return ExprOf(v);
  if (!v.expr) v.expr = DimsTensor(v);  // made once; the dims still feed shape operands
  return v.expr;
}

Expr NodeContext::DimsTensor(const Value& v) {
  const auto* type = v.type->as<graph::TensorTypeNode>();
  std::vector<Expr> parts;
  for (const graph::Dim& d : *v.dims) {
    if (d.is_static()) {
      parts.push_back(ScalarConst(static_cast<double>(d.value()), DataType::Int(64)));
      continue;
    }
    // The extent at run time: the ShapeOf of a tensor that has the dim (vm.shape_of).
    auto [tensor, axis] = TensorWithDim(d);
    if (!tensor)
      Unsupported("the shape value's dim '" + d.str() + "' is used as a run-time tensor, and no tensor computed so far "
                  "has that extent");
    Expr shape = Call("vm.shape_of", {tensor});
    parts.push_back(Call("take", {shape, ScalarConst(static_cast<double>(axis), DataType::Int(64))},
                         graph::Attrs{{"axis", int64_t{0}}}));
  }
  std::vector<Expr> items;
  for (Expr& p : parts) items.push_back(Call("reshape", {p}, graph::Attrs{{"newshape", std::vector<int64_t>{1}}}));
  Expr out = items.size() == 1 ? items[0] : Call("concatenate", {graph::TupleNode::make(items)}, graph::Attrs{{"axis", int64_t{0}}});
  if (type->ndim() == 0) out = Call("reshape", {out}, graph::Attrs{{"newshape", std::vector<int64_t>{}}});
  if (type->dtype != DataType::Int(64)) out = Call("cast", {out}, graph::Attrs{{"dtype", type->dtype.str()}});
  return out;
}

std::pair<Expr, int64_t> NodeContext::TensorWithDim(const graph::Dim& d) const {
  auto [input, axis] = GraphInputWithDim(d);
  return input ? std::pair{input, axis} : FindTensorWithDim(d, /*graph_inputs_only=*/false);
}
const graph::TensorTypeNode& NodeContext::InputType(int i) {
  Value& v = InputValue(i);
  auto* t = v.type->as<graph::TensorTypeNode>();
  if (!t) Fail("input '" + node_.input(i) + "' is not a tensor");
  return *t;
}

std::vector<int64_t> NodeContext::InputShape(int i) {
  const graph::TensorTypeNode& t = InputType(i);
  auto s = graph::StaticShape(t.shape);
  if (!s) {
    Unsupported("input '" + node_.input(i) + "' has a symbolic shape " + graph::ShapeStr(t.shape) +
                "; this converter needs static shapes (bind symbolic dims with ImportOptions::input_shapes)");
  }
  return *s;
}

int64_t NodeContext::InputDim(int i, int axis, const std::string& what) {
  const std::vector<int64_t> shape = InputShape(i);
  if (axis < 0 || static_cast<size_t>(axis) >= shape.size())
    Fail(what + " (input '" + node_.input(i) + "') must have at least " + std::to_string(axis + 1) +
         " dimensions; it has shape " + runtime::ShapeToString(shape));
  return shape[axis];
}

runtime::NDArray NodeContext::InputConst(int i) { return HasInput(i) ? InputValue(i).constant : runtime::NDArray(); }

void NodeContext::RefuseRunTimeOperand(int i, const std::string& what) const {
  // InputConst gives no constant for an absent input either (the node has fewer inputs).
  if (!HasInput(i)) Fail(what + " (input " + std::to_string(i) + ") is required but absent");
  Unsupported(what + " (input '" + node_.input(i) +
              "') is computed at run time; Tessera needs it to be a constant or foldable at import "
              "(operands that decide a shape at run time compile to shape functions for Reshape, ConstantOfShape, "
              "Expand, Tile, Unsqueeze / Squeeze, Slice, TopK's k and the reductions' axes; not yet for this one)");
}

std::vector<int64_t> NodeContext::InputInts(int i, const std::string& what) {
  runtime::NDArray c = InputConst(i);
  if (!c.defined()) {
    RefuseRunTimeOperand(i, what);
  }
  if (c.dtype().is_floating()) Fail(what + " must be an integer tensor, got " + c.dtype().str());
  return ToInts(c);
}

std::vector<double> NodeContext::InputDoubles(int i, const std::string& what) {
  runtime::NDArray c = InputConst(i);
  if (!c.defined()) {
    RefuseRunTimeOperand(i, what);
  }
  return ToDoubles(c);
}

bool NodeContext::InputHasDims(int i) { return HasInput(i) && InputValue(i).dims != nullptr; }

const std::vector<graph::Dim>& NodeContext::InputDims(int i) {
  Value& v = InputValue(i);
  TESSERA_ICHECK(v.dims != nullptr, "input ", i, " is no symbolic shape value");
  return *v.dims;
}

std::string SymbolName(const std::string& name) {
  std::string s = name.empty() ? "dim" : name;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != ':' && c != '-') c = '_';
  if (!std::isalpha(static_cast<unsigned char>(s[0])) && s[0] != '_') s = "_" + s;
  return s;
}

std::string NodeContext::OutputSymbol(int i, int d) const {
  // A node without output i (its value is dropped) still gets a name unique to it.
  const std::string base = i < node_.output_size() && !node_.output(i).empty()
                               ? node_.output(i)
                               : node_.op_type() + "_" + std::to_string(index_) + "_output" + std::to_string(i);
  return SymbolName(base + "_" + std::to_string(d));
}

int64_t NodeContext::RunTimeShapeLength(int i, const std::string& what) {
  const graph::TensorTypeNode& t = InputType(i);
  if (t.ndim() != 1 || !t.shape[0].is_static() || t.dtype != DataType::Int(64))
    Fail(what + " must be a 1-D int64 tensor of static length, got " + t.dtype.str() + " " + graph::ShapeStr(t.shape));
  return t.shape[0].value();
}

std::string NodeContext::OutputSymbols(int64_t n, int i) const {
  std::string symbols;
  for (int64_t d = 0; d < n; ++d) symbols += (d ? "," : "") + OutputSymbol(i, static_cast<int>(d));
  return symbols;
}

bool NodeContext::InputIsRunTime(int i) {
  if (!HasInput(i)) return false;
  Value& v = InputValue(i);
  return !v.sequence && !v.dims && !v.constant.defined();
}

std::pair<graph::Expr, int64_t> NodeContext::GraphInputWithDim(const graph::Dim& d) const {
  return FindTensorWithDim(d, /*graph_inputs_only=*/true);
}

std::pair<graph::Expr, int64_t> NodeContext::FindTensorWithDim(const graph::Dim& d, bool graph_inputs_only) const {
  for (const auto& [name, value] : state_.values) {
    const bool input = value.expr && value.expr->as<graph::VarNode>();
    const auto* t = value.expr && value.type && (input || !graph_inputs_only) ? value.type->as<graph::TensorTypeNode>()
                                                                               : nullptr;
    if (!t) continue;
    for (size_t axis = 0; axis < t->shape.size(); ++axis)
      if (t->shape[axis] == d) return {value.expr, static_cast<int64_t>(axis)};
  }
  return {nullptr, -1};
}
void NodeContext::SetOutputDims(int i, std::vector<graph::Dim> dims, int rank, DataType dtype) {
  if (i >= node_.output_size() || node_.output(i).empty()) return;
  std::vector<int64_t> shape = rank == 0 ? std::vector<int64_t>{} : std::vector<int64_t>{static_cast<int64_t>(dims.size())};
  bool symbolic = false;
  for (const graph::Dim& d : dims) symbolic |= d.is_symbolic();
  if (!symbolic) {
    std::vector<int64_t> values;
    for (const graph::Dim& d : dims) values.push_back(d.value());
    return SetOutputConst(i, FromInts(values, shape, dtype));
  }
  Value v;
  v.type = graph::TensorTypeNode::make(shape, dtype);
  v.dims = std::make_shared<const std::vector<graph::Dim>>(std::move(dims));
  state_.values[node_.output(i)] = std::move(v);
}

bool NodeContext::AllInputsConst(int required) {
  for (int i = 0; i < required; ++i)
    if (!HasInput(i))
      Fail(node_.op_type() + " takes " + std::to_string(required) + " input" + (required == 1 ? "" : "s") + "; input " +
           std::to_string(i) + " is absent");
  for (int i = 0; i < node_.input_size(); ++i)
    if (HasInput(i) && !InputValue(i).constant.defined()) return false;
  return true;
}

const onnx::AttributeProto* NodeContext::Attr(const std::string& name) const {
  for (const auto& a : node_.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

void NodeContext::CheckAttrType(const onnx::AttributeProto& a, int want) const {
  // An attribute without a type (IR < 2 writers) is read from the field the getter expects.
  if (a.type() == onnx::AttributeProto::UNDEFINED || a.type() == want) return;
  Fail("attribute '" + a.name() + "' must be of type " +
       onnx::AttributeProto::AttributeType_Name(static_cast<onnx::AttributeProto::AttributeType>(want)) + ", got " +
       onnx::AttributeProto::AttributeType_Name(a.type()));
}

int64_t NodeContext::AttrInt(const std::string& name, int64_t dflt) const {
  const onnx::AttributeProto* a = Attr(name);
  if (!a) return dflt;
  CheckAttrType(*a, onnx::AttributeProto::INT);
  if (a->type() != onnx::AttributeProto::INT && !a->has_i()) Fail("attribute '" + name + "' must be an int");
  return a->i();
}

int64_t NodeContext::AttrInt(const std::string& name) const {
  if (!HasAttr(name)) Fail("required attribute '" + name + "' is missing");
  return AttrInt(name, 0);
}

float NodeContext::AttrFloat(const std::string& name, float dflt) const {
  const onnx::AttributeProto* a = Attr(name);
  if (!a) return dflt;
  CheckAttrType(*a, onnx::AttributeProto::FLOAT);
  if (a->type() != onnx::AttributeProto::FLOAT && !a->has_f()) Fail("attribute '" + name + "' must be a float");
  return a->f();
}

std::string NodeContext::AttrString(const std::string& name, const std::string& dflt) const {
  const onnx::AttributeProto* a = Attr(name);
  if (!a) return dflt;
  CheckAttrType(*a, onnx::AttributeProto::STRING);
  if (a->type() != onnx::AttributeProto::STRING && !a->has_s()) Fail("attribute '" + name + "' must be a string");
  return a->s();
}

std::vector<int64_t> NodeContext::AttrInts(const std::string& name, const std::vector<int64_t>& dflt) const {
  const onnx::AttributeProto* a = Attr(name);
  if (!a) return dflt;
  CheckAttrType(*a, onnx::AttributeProto::INTS);
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::vector<float> NodeContext::AttrFloats(const std::string& name) const {
  const onnx::AttributeProto* a = Attr(name);
  if (!a) return {};
  CheckAttrType(*a, onnx::AttributeProto::FLOATS);
  return std::vector<float>(a->floats().begin(), a->floats().end());
}

Expr NodeContext::Call(const std::string& op, std::vector<Expr> args, graph::Attrs attrs) {
  Expr call = graph::CallNode::make(graph::OpNode::Get(op), std::move(args), std::move(attrs));
  try {
    graph::InferExprType(call);
  } catch (const UserError& e) {
    Fail(e.what());
  }
  return call;
}

Expr NodeContext::ScalarConst(double v, DataType dtype) {
  Expr c = graph::ConstantNode::make(FromDoubles({v}, {}, dtype));
  graph::InferExprType(c);
  return c;
}

void NodeContext::SetOutput(int i, Expr e) {
  if (i >= node_.output_size() || node_.output(i).empty()) return;
  try {
    state_.values[node_.output(i)] = ValueOf(std::move(e));
  } catch (const UserError& err) {
    Fail(err.what());
  }
}

void NodeContext::SetOutputValue(int i, Value v) {
  if (i >= node_.output_size() || node_.output(i).empty()) return;
  state_.values[node_.output(i)] = std::move(v);
}

const std::vector<Value>& NodeContext::InputSequence(int i, DataType* dtype) {
  Value& v = InputValue(i);
  if (v.type && v.type->as<graph::ListTypeNode>())
    Unsupported("input '" + node_.input(i) + "' is a sequence of a run-time length (a Loop's carried sequence); of "
                "the sequence operators only SequenceInsert (appending), SequenceAt, SequenceLength and "
                "ConcatFromSequence take one yet");
  if (!v.sequence) Fail("input '" + node_.input(i) + "' must be a sequence, got a tensor");
  if (dtype) *dtype = v.sequence_dtype;
  return *v.sequence;
}

void NodeContext::SetOutputSequence(int i, std::vector<Value> elements, DataType dtype) {
  if (i >= node_.output_size() || node_.output(i).empty()) return;
  std::vector<graph::Type> types;
  for (Value& e : elements) {
    ExprOf(e);  // every element gets its expression (and type) now
    const auto* t = e.type->as<graph::TensorTypeNode>();
    if (!t) Fail("a sequence element must be a tensor, got " + e.type->str());
    if (t->dtype != dtype)
      Fail("sequence elements must all be " + dtype.str() + ", got " + t->dtype.str());
    types.push_back(e.type);
  }
  Value v;
  v.type = graph::TupleTypeNode::make(std::move(types));
  v.sequence = std::make_shared<const std::vector<Value>>(std::move(elements));
  v.sequence_dtype = dtype;
  state_.values[node_.output(i)] = std::move(v);
}

const onnx::GraphProto& NodeContext::AttrGraph(const std::string& name) const {
  const onnx::AttributeProto* a = Attr(name);
  if (!a || !a->has_g()) Fail("graph attribute '" + name + "' is missing");
  CheckAttrType(*a, onnx::AttributeProto::GRAPH);
  return a->g();
}

std::vector<Value> NodeContext::ImportSubgraph(const onnx::GraphProto& g, const std::vector<Value>& inputs) {
  if (static_cast<int>(inputs.size()) != g.input_size())
    Fail("subgraph '" + g.name() + "' takes " + std::to_string(g.input_size()) + " inputs, given " +
         std::to_string(inputs.size()));
  ImportState inner = state_;  // the outer scope, visible inside; the copy keeps inner names inside
  inner.graph = &g;
  inner.source = state_.source + ", in the subgraph '" + g.name() + "' of " +
                 (node_.name().empty() ? "node #" + std::to_string(index_) : "node '" + node_.name() + "'");
  for (const auto& init : g.initializer()) {
    Value v;
    v.constant = TensorProtoToNDArray(init, inner.source + ": initializer '" + init.name() + "'");
    v.type = graph::TensorTypeNode::make(v.constant.shape(), v.constant.dtype());
    inner.values[init.name()] = std::move(v);
  }
  for (int i = 0; i < g.input_size(); ++i) inner.values[g.input(i).name()] = inputs[i];
  for (int i = 0; i < g.node_size(); ++i) ConvertNode(inner, g.node(i), i);
  state_.warnings = std::move(inner.warnings);  // the outer ones, and what the subgraph added
  std::vector<Value> outs;
  for (const auto& o : g.output()) {
    auto it = inner.values.find(o.name());
    if (it == inner.values.end()) Fail("subgraph output '" + o.name() + "' is not produced by any of its nodes");
    outs.push_back(it->second);
  }
  return outs;
}

void NodeContext::SetOutputConst(int i, runtime::NDArray value) {
  if (i >= node_.output_size() || node_.output(i).empty()) return;
  Value v;
  v.type = graph::TensorTypeNode::make(value.shape(), value.dtype());
  v.constant = std::move(value);
  state_.values[node_.output(i)] = std::move(v);
}

void NodeContext::CheckMaxOutputs(int n, const std::string& why) {
  for (int i = n; i < node_.output_size(); ++i) {
    if (!node_.output(i).empty()) {
      Unsupported("output " + std::to_string(i) + " ('" + node_.output(i) + "') is not supported: " + why);
    }
  }
}

std::vector<int64_t> StaticShape(NodeContext& ctx, const graph::Expr& e) {
  std::optional<std::vector<int64_t>> s = graph::StaticShapeOf(e);
  if (!s) ctx.Fail("needs static shapes (a symbolic dim reached an operator that composes others)");
  return *s;
}

}  // namespace tessera::frontend::onnx_import
