// The state of one ONNX import and the per-node view a converter works with.
//
// Every ONNX tensor name maps to a Value: a graph expression, its inferred type, and, when the
// importer knows it at compile time (initializers, Constant, folded shape arithmetic), its
// value as an NDArray.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "onnx.pb.h"
#include "tessera/graph/expr.h"
#include "tessera/runtime/ndarray.h"

namespace tessera::frontend::onnx_import {

struct Value {
  graph::Expr expr;           ///< null until needed for a known constant (made lazily)
  graph::Type type;           ///< always set (a sequence's: the tuple of its elements' types)
  runtime::NDArray constant;  ///< defined when the value is known at import time
  /// An ONNX sequence (ops_sequence.cc): its elements, whose number is known at import (the
  /// elements themselves may be run-time tensors); null for a tensor. `sequence_dtype` is the
  /// element type (SequenceEmpty's dtype when there are none).
  std::shared_ptr<const std::vector<Value>> sequence;
  DataType sequence_dtype;
  /// A shape value with symbolic entries (dynamic shapes): an integer tensor of rank 0 or 1 whose
  /// elements are dims of tensors (Shape of a symbolically shaped tensor, then Gather / Unsqueeze /
  /// Concat / Slice / Squeeze / Cast of it: symbolic_shape.h). Set only when some element is
  /// symbolic (otherwise the value is a constant); `constant` is then unset: it feeds shape operands
  /// (Reshape's shape, Range's limit), and `expr` is set once it is used as data (NodeContext::Input:
  /// the dims' values read at run time, DimsTensor).
  std::shared_ptr<const std::vector<graph::Dim>> dims;
};

/// A dim name as a symbol of the compiled program (runtime/vm.h symbol names): characters other
/// than letters, digits and "_.:-" become '_', a name that does not start with a letter or '_'
/// gets a '_' in front (so no symbol reads as a number), "" becomes "dim".
std::string SymbolName(const std::string& name);

/// The expression of a value: its expr, or (made and typed once) a Constant of its known value.
/// UserError for a sequence (no tensor).
graph::Expr ExprOf(Value& v);
/// A typed value of an expression (known when it is a Constant). Throws the type error.
Value ValueOf(graph::Expr e);

struct ImportState {
  std::string source;  ///< file name for messages
  int64_t opset = 0;   ///< the default domain's (ai.onnx)
  /// Every domain's opset the model imports ("ai.onnx" for the default domain's ""), for messages.
  std::map<std::string, int64_t> domain_opsets;
  std::map<std::string, Value> values;
  std::vector<std::string> warnings;  ///< ImportResult::warnings
  std::vector<std::string> symbols;   ///< the symbolic dim names shape values use (symbolic_shape.h)
  /// The graph whose nodes are being converted (the model's, or a subgraph's in ImportSubgraph):
  /// Gradient (ops_gradient.cc) imports again the nodes between its xs and y.
  const onnx::GraphProto* graph = nullptr;
};

class NodeContext {
 public:
  NodeContext(ImportState& state, const onnx::NodeProto& node, int index);

  const onnx::NodeProto& node() const { return node_; }
  /// The graph this node belongs to (ImportState::graph; null when the importer did not set it).
  const onnx::GraphProto* graph() const { return state_.graph; }
  /// Whether `name` names a value computed so far (a graph input, initializer, earlier node's output
  /// or, in a subgraph, a value of an enclosing graph).
  bool HasValue(const std::string& name) const { return state_.values.count(name) != 0; }
  int64_t opset() const { return state_.opset; }
  /// "model.onnx: node 'name' (op Conv, domain ai.onnx, opset 10)" for messages.
  std::string Where() const;
  /// "node 'name' (op Conv, domain ai.onnx, opset 10)": the node without the file, for the
  /// `source` attr of ops whose kernels can fail at run time (an index out of range).
  std::string Label() const;

  // ---- inputs (an empty input name means "absent", as the ONNX spec allows) ----
  bool HasInput(int i) const;
  int NumInputs() const { return node_.input_size(); }
  /// The expression of input i (a Constant node for known values; for a shape value of symbolic dims,
  /// Value::dims, a tensor of the dims' run-time values: DimsTensor, made once and kept in the value's
  /// expr).
  graph::Expr Input(int i);
  /// A shape value of symbolic dims as a run-time tensor of its type: each static dim a constant, each
  /// symbolic one the extent of a tensor that has it (vm.shape_of, then take; graph inputs first).
  /// UnsupportedError when no tensor computed so far has one of the dims.
  graph::Expr DimsTensor(const Value& v);
  /// A tensor (a graph input first, else any value computed so far) that has dim `d`, and the axis;
  /// {nullptr, -1} when none has it.
  std::pair<graph::Expr, int64_t> TensorWithDim(const graph::Dim& d) const;
  const graph::TensorTypeNode& InputType(int i);
  /// The static shape of input i; UserError when some dim is symbolic.
  std::vector<int64_t> InputShape(int i);
  /// Extent `axis` of input i's static shape; Fail (naming `what`) when the input has rank <= axis.
  int64_t InputDim(int i, int axis, const std::string& what);
  /// The known value of input i, or an undefined NDArray.
  runtime::NDArray InputConst(int i);
  /// The known value of input i as int64s; UnsupportedError naming `what` when it is computed
  /// at run time.
  std::vector<int64_t> InputInts(int i, const std::string& what);
  /// Same for floats.
  std::vector<double> InputDoubles(int i, const std::string& what);
  /// Whether input i is a shape value with symbolic entries (Value::dims).
  bool InputHasDims(int i);
  /// The elements of input i, a symbolic shape value (InputHasDims; InternalError otherwise).
  const std::vector<graph::Dim>& InputDims(int i);
  /// A graph input that has symbolic dim `d`, and the axis: what a tensor sized by the dim can be
  /// computed from; {nullptr, -1} when none has it.
  std::pair<graph::Expr, int64_t> GraphInputWithDim(const graph::Dim& d) const;
  /// The symbol of dim d of output i when its extent is data-dependent (a shape operand computed at
  /// run time): "<output name>_<d>", as a symbol name (runtime/vm.h).
  std::string OutputSymbol(int i, int d) const;
  /// The length of input i, a run-time shape operand (Reshape's shape, Reduce*'s axes, ...): Fail
  /// naming `what` unless it is a 1-D int64 tensor of static length.
  int64_t RunTimeShapeLength(int i, const std::string& what);
  /// "s_0,s_1,...": OutputSymbol(i, d) for d < n, as a data-dependent op's attr "symbols".
  std::string OutputSymbols(int64_t n, int i = 0) const;
  /// Whether input i is present, a tensor and computed at run time (neither known at import nor a
  /// symbolic shape value).
  bool InputIsRunTime(int i);
  /// Sets output i to a shape value with symbolic entries (static only: a constant), of rank
  /// `rank` (0 or 1) and integer `dtype`.
  void SetOutputDims(int i, std::vector<graph::Dim> dims, int rank, DataType dtype);
  /// Whether every present input is known at import. Inputs 0..required-1 must be present: an
  /// absent one is a UserError naming it (a converter that folds reads them all).
  bool AllInputsConst(int required);
  /// Whether the converter read input i (any accessor above but HasInput / NumInputs). After a
  /// converter runs, every present input it did not read is an error (ConvertNode): an input the
  /// operator does not take must not be dropped silently. A converter that ignores an input on
  /// purpose says so with IgnoreInput.
  bool InputRead(int i) const { return i < static_cast<int>(read_.size()) && read_[i]; }
  /// Marks input i as deliberately unused (e.g. an optional input without effect at inference).
  void IgnoreInput(int i) {
    if (i < NumInputs()) read_[i] = true;
  }

  // ---- attributes ----
  const onnx::AttributeProto* Attr(const std::string& name) const;
  bool HasAttr(const std::string& name) const { return Attr(name) != nullptr; }
  /// Fail ("attribute 'strides' must be of type INTS, got FLOATS") when `a` declares a type other
  /// than `want` (an onnx::AttributeProto::AttributeType); an untyped attribute passes.
  void CheckAttrType(const onnx::AttributeProto& a, int want) const;
  int64_t AttrInt(const std::string& name, int64_t dflt) const;
  int64_t AttrInt(const std::string& name) const;  ///< required
  float AttrFloat(const std::string& name, float dflt) const;
  std::string AttrString(const std::string& name, const std::string& dflt) const;
  std::vector<int64_t> AttrInts(const std::string& name, const std::vector<int64_t>& dflt) const;
  std::vector<float> AttrFloats(const std::string& name) const;

  // ---- building ----
  /// A typed call of graph op `op`; type errors are reported with this node's location.
  graph::Expr Call(const std::string& op, std::vector<graph::Expr> args, graph::Attrs attrs = {});
  /// A scalar constant of `dtype` (float or int) with value v.
  graph::Expr ScalarConst(double v, DataType dtype);
  /// Sets output i to an expression (its type is inferred).
  void SetOutput(int i, graph::Expr e);
  /// Sets output i to a value known at import time.
  void SetOutputConst(int i, runtime::NDArray value);
  /// Whether the node asks for output i (present with a non-empty name).
  bool HasOutput(int i) const { return i < node_.output_size() && !node_.output(i).empty(); }
  /// UserError unless the node asks for at most `n` outputs (non-empty names).
  void CheckMaxOutputs(int n, const std::string& why);

  [[noreturn]] void Fail(const std::string& msg) const;
  [[noreturn]] void Unsupported(const std::string& msg) const;
  /// Records a warning for the user (ImportResult::warnings), prefixed with Where().
  void Warn(const std::string& msg) const;
  /// The graph-valued attribute `name` (If's branches, Scan's body); UserError when absent.
  const onnx::GraphProto& AttrGraph(const std::string& name) const;
  /// Imports subgraph `g` in place (control flow known at import: If's taken branch, an unrolled
  /// Scan step): g's inputs are bound to `inputs` in order, its initializers are constants, and
  /// names of the enclosing graphs stay visible (ONNX's outer-scope rule); returns the values of
  /// g's outputs. What the subgraph defines does not leak out.
  std::vector<Value> ImportSubgraph(const onnx::GraphProto& g, const std::vector<Value>& inputs);
  /// Sets output i to an already typed value (of a subgraph).
  void SetOutputValue(int i, Value v);
  /// The elements of input i, a sequence (its element type into *dtype when given); Fail when it
  /// is a tensor, UnsupportedError when it is a list (InputIsList).
  const std::vector<Value>& InputSequence(int i, DataType* dtype = nullptr);
  /// Whether input i is a sequence (not a tensor).
  bool InputIsSequence(int i) { return InputValue(i).sequence != nullptr; }
  /// Input i's value as it is (a tensor, a sequence or a list), marking it read.
  Value InputAsValue(int i) { return InputValue(i); }
  /// Whether input i is a sequence of a run-time length: a list of tensors (graph::ListTypeNode; a
  /// Loop's carried sequence, ops_control.cc), which SequenceInsert (appending), SequenceAt,
  /// SequenceLength and ConcatFromSequence take; InputSequence refuses it.
  bool InputIsList(int i) {
    const Value& v = InputValue(i);
    return v.type && v.type->as<graph::ListTypeNode>() != nullptr;
  }
  /// Sets output i to a sequence of `elements` (tensors) of element type `dtype`.
  void SetOutputSequence(int i, std::vector<Value> elements, DataType dtype);
  /// UnsupportedError: input i (`what`) must be known at import but is computed at run time.
  [[noreturn]] void RefuseRunTimeOperand(int i, const std::string& what) const;

 private:
  Value& InputValue(int i);
  /// The first value (a graph input only, with `graph_inputs_only`) that is a tensor with dim `d`, and
  /// the axis; {nullptr, -1} when none is.
  std::pair<graph::Expr, int64_t> FindTensorWithDim(const graph::Dim& d, bool graph_inputs_only) const;
  ImportState& state_;
  const onnx::NodeProto& node_;
  int index_;
  std::vector<bool> read_;  // per input: read by the converter (InputRead)
};

/// Converts one node into `state` (the importer's loop; also used for subgraphs). Errors carry
/// the node's location.
void ConvertNode(ImportState& state, const onnx::NodeProto& node, int index);

using Converter = std::function<void(NodeContext&)>;
using ConverterTable = std::map<std::string, Converter>;

/// The table key of an operator: its op_type in the default domain ("" or "ai.onnx"),
/// "domain:op_type" in any other (e.g. "ai.onnx.preview.training:Adam").
std::string ConverterKey(const std::string& domain, const std::string& op_type);
/// The converter of operator `op_type` of `domain`, or nullptr.
const Converter* FindConverter(const std::string& domain, const std::string& op_type);

// One group per file; FindConverter calls each once.
void RegisterMathConverters(ConverterTable& t);    // ops_math.cc
void RegisterNNConverters(ConverterTable& t);      // ops_nn.cc
void RegisterTensorConverters(ConverterTable& t);  // ops_tensor.cc
void RegisterLogicConverters(ConverterTable& t);   // ops_logic.cc
void RegisterReduceConverters(ConverterTable& t);  // ops_reduce.cc
void RegisterActivationConverters(ConverterTable& t);  // ops_activation.cc
void RegisterShapeConverters(ConverterTable& t);   // ops_shape.cc
void RegisterImageConverters(ConverterTable& t);   // ops_image.cc
void RegisterConvTransposeConverters(ConverterTable& t);  // ops_conv_transpose.cc
void RegisterLossConverters(ConverterTable& t);    // ops_loss.cc
void RegisterAttentionConverters(ConverterTable& t);  // ops_attention.cc
void RegisterGatherScatterConverters(ConverterTable& t);  // ops_gather_scatter.cc
void RegisterQuantizeConverters(ConverterTable& t);  // ops_quantize.cc
void RegisterEinsumConverters(ConverterTable& t);  // ops_einsum.cc
void RegisterRotaryConverters(ConverterTable& t);  // ops_rotary.cc
void RegisterTrainingConverters(ConverterTable& t);  // ops_training.cc (ai.onnx.preview.training)
void RegisterGradientConverters(ConverterTable& t);  // ops_gradient.cc (ai.onnx.preview.training Gradient)
void RegisterControlConverters(ConverterTable& t);   // ops_control.cc (If, Scan, Loop)
void RegisterCol2ImConverters(ConverterTable& t);  // ops_col2im.cc
void RegisterCenterCropPadConverters(ConverterTable& t);  // ops_center_crop_pad.cc
void RegisterAffineGridConverters(ConverterTable& t);  // ops_affine_grid.cc
void RegisterMaxUnpoolConverters(ConverterTable& t);  // ops_max_unpool.cc
void RegisterDetConverters(ConverterTable& t);  // ops_det.cc
void RegisterTfIdfConverters(ConverterTable& t);  // ops_tfidf.cc
void RegisterRoiAlignConverters(ConverterTable& t);  // ops_roi_align.cc
void RegisterDeformConvConverters(ConverterTable& t);  // ops_deform_conv.cc
void RegisterTensorScatterConverters(ConverterTable& t);  // ops_tensor_scatter.cc
void RegisterBitCastConverters(ConverterTable& t);  // ops_bitcast.cc
void RegisterDftConverters(ConverterTable& t);  // ops_dft.cc
void RegisterWindowConverters(ConverterTable& t);  // ops_windows.cc
void RegisterQLinearConverters(ConverterTable& t);  // ops_qlinear.cc
void RegisterCausalConvConverters(ConverterTable& t);  // ops_causal_conv.cc
void RegisterLinearAttentionConverters(ConverterTable& t);  // ops_linear_attention.cc
void RegisterRnnConverters(ConverterTable& t);  // ops_rnn.cc
void RegisterSequenceConverters(ConverterTable& t);  // ops_sequence.cc
void RegisterOptionalConverters(ConverterTable& t);  // ops_optional.cc (the prelude's Option ADT)
void RegisterDataDependentConverters(ConverterTable& t);  // ops_data_dependent.cc (NonZero, Compress, NonMaxSuppression, Unique)
void RegisterImageDecoderConverters(ConverterTable& t);  // ops_image_decoder.cc (ImageDecoder, the runtime's decoders)
void RegisterRandomConverters(ConverterTable& t);  // ops_random.cc (RandomUniform/Normal(Like), Bernoulli, Multinomial)
void RegisterMLConverters(ConverterTable& t);  // ops_ml.cc (ai.onnx.ml: Binarizer, ArrayFeatureExtractor; and
                                               // the tree ensembles below)
/// ops_tree_ensemble.cc (ai.onnx.ml: TreeEnsemble, TreeEnsembleRegressor, TreeEnsembleClassifier); called
/// by RegisterMLConverters.
void RegisterTreeEnsembleConverters(ConverterTable& t);

}  // namespace tessera::frontend::onnx_import
