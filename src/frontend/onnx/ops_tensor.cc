// ONNX tensor / shape ops: Constant, Identity, Cast, CastLike, Shape, Reshape, Flatten, Transpose,
// Concat, Gather, Slice, Unsqueeze, Squeeze. Each folds at import when its inputs are known.
#include <algorithm>
#include <set>

#include "const_eval.h"
#include "context.h"
#include "graph_build.h"
#include "tensor_convert.h"
#include "tessera/graph/infer_type.h"
#include "tessera/support/checked_math.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

// Constant-1/9/11/12/13+: value (tensor), value_float(s), value_int(s).
void ConvertConstant(NodeContext& ctx) {
  const auto& attrs = ctx.node().attribute();
  if (attrs.size() != 1) ctx.Fail("Constant needs exactly one value attribute");
  const onnx::AttributeProto& a = attrs[0];
  const std::string& n = a.name();
  if (n == "value") {
    ctx.SetOutputConst(0, TensorProtoToNDArray(a.t(), ctx.Where() + " attribute 'value'"));
  } else if (n == "value_float") {
    ctx.SetOutputConst(0, FromDoubles({a.f()}, {}, DataType::Float(32)));
  } else if (n == "value_floats") {
    std::vector<double> v(a.floats().begin(), a.floats().end());
    ctx.SetOutputConst(0, FromDoubles(v, {static_cast<int64_t>(v.size())}, DataType::Float(32)));
  } else if (n == "value_int") {
    ctx.SetOutputConst(0, MakeInts({a.i()}, {}));
  } else if (n == "value_ints") {
    ctx.SetOutputConst(0, MakeInts(std::vector<int64_t>(a.ints().begin(), a.ints().end())));
  } else {
    ctx.Unsupported("attribute '" + n + "' of Constant is not supported (value, value_float(s), value_int(s))");
  }
}

void ConvertIdentity(NodeContext& ctx) {
  if (runtime::NDArray c = ctx.InputConst(0); c.defined()) return ctx.SetOutputConst(0, c);
  ctx.SetOutput(0, ctx.Input(0));
}

// x converted to `to` with Cast's attributes: `saturate` (19+) for float8 results,
// `round_mode` (24+) for float8e8m0 results; float8 / float4 / 4- and 2-bit integer
// semantics in runtime/float_formats.h. Constants fold here when the attributes are the
// defaults (FoldConstant folds the others through the compiled cast).
void CastTo(NodeContext& ctx, DataType to) {
  const int64_t saturate = ctx.AttrInt("saturate", 1);
  const std::string round_mode = ctx.AttrString("round_mode", "up");
  if (round_mode != "up" && round_mode != "down" && round_mode != "nearest")
    ctx.Fail("round_mode must be 'up', 'down' or 'nearest', got '" + round_mode + "'");
  if (saturate != 0 && saturate != 1) ctx.Fail("saturate must be 0 or 1, got " + std::to_string(saturate));
  if (runtime::NDArray c = ctx.InputConst(0); c.defined() && saturate == 1 && round_mode == "up")
    return ctx.SetOutputConst(0, CastArray(c, to));
  if (ctx.InputType(0).dtype == to) return ctx.SetOutput(0, ctx.Input(0));
  ctx.SetOutput(0, ctx.Call("cast", {ctx.Input(0)},
                            Attrs{{"dtype", to.str()}, {"saturate", saturate}, {"round_mode", round_mode}}));
}

// Cast-1/6/9/13/19/21/23/24/25.
void ConvertCast(NodeContext& ctx) {
  DataType to = DataTypeFromONNX(static_cast<int>(ctx.AttrInt("to")), ctx.Where() + " attribute 'to'");
  CastTo(ctx, to);
}

// CastLike-15/19/21/23/24/25: Cast to the dtype of input 1.
void ConvertCastLike(NodeContext& ctx) { CastTo(ctx, ctx.InputType(1).dtype); }

// Shape-1/13: the whole shape; Shape-15+: shape[start:end] (clamped).
void ConvertShape(NodeContext& ctx) {
  const graph::TensorTypeNode& t = ctx.InputType(0);
  for (const graph::Dim& d : t.shape) {
    if (d.is_symbolic() && d.name() == "?")
      ctx.Unsupported("Shape of a tensor with an extent no type relation computed " + graph::ShapeStr(t.shape) +
                      " is not supported; bind the input shapes (--input-shape NAME=D0,D1,...)");
  }
  int64_t rank = t.ndim();
  int64_t start = ctx.opset() >= 15 ? ctx.AttrInt("start", 0) : 0;
  int64_t end = ctx.opset() >= 15 ? ctx.AttrInt("end", rank) : rank;
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  // A symbolic dim makes a shape value (symbolic_shape.h); a static shape a constant.
  ctx.SetOutputDims(0, std::vector<graph::Dim>(t.shape.begin() + start, t.shape.begin() + end), 1, DataType::Int(64));
}

// Resolves 0 (copy, unless allowzero) and -1 against the input shape.
std::vector<int64_t> ResolveReshape(NodeContext& ctx, const std::vector<int64_t>& in, std::vector<int64_t> ns,
                                    bool allowzero) {
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < ns.size(); ++i) {
    if (ns[i] == 0 && !allowzero) {
      if (i >= in.size()) ctx.Fail("shape[" + std::to_string(i) + "] = 0 copies a dim the input does not have");
      ns[i] = in[i];
    }
    if (ns[i] == -1) {
      if (infer >= 0) ctx.Fail("the shape has more than one -1");
      infer = static_cast<int64_t>(i);
    } else if (ns[i] < 0) {
      ctx.Fail("invalid shape entry " + std::to_string(ns[i]));
    } else {
      known = CheckedMul(known, ns[i], "Reshape's target element count");
    }
  }
  int64_t total = 1;
  for (int64_t d : in) total = CheckedMul(total, d, "Reshape's input element count");
  if (infer >= 0) {
    if (known == 0 || total % known != 0) {
      ctx.Fail("cannot reshape " + runtime::ShapeToString(in) + " with -1 into " + runtime::ShapeToString(ns));
    }
    ns[infer] = total / known;
  } else if (known != total) {
    ctx.Fail("cannot reshape " + runtime::ShapeToString(in) + " (" + std::to_string(total) + " elements) to " +
             runtime::ShapeToString(ns));
  }
  return ns;
}

void Reshape(NodeContext& ctx, std::vector<int64_t> newshape) {
  const graph::TensorTypeNode& t = ctx.InputType(0);
  if (auto in = graph::StaticShape(t.shape)) {
    bool allowzero = ctx.opset() >= 14 && ctx.AttrInt("allowzero", 0) != 0;
    newshape = ResolveReshape(ctx, *in, newshape, allowzero);
    if (runtime::NDArray c = ctx.InputConst(0); c.defined()) return ctx.SetOutputConst(0, ReshapeArray(c, newshape));
  } else if (std::find(newshape.begin(), newshape.end(), 0) != newshape.end()) {
    ctx.Unsupported("Reshape with 0 (copy) entries of a symbolically shaped input " + graph::ShapeStr(t.shape) +
                    " is not supported; bind the input shapes (ImportOptions::input_shapes)");
  }
  ctx.SetOutput(0, ctx.Call("reshape", {ctx.Input(0)}, Attrs{{"newshape", newshape}}));
}

// Reshape to a shape with symbolic entries (symbolic_shape.h): `ns` holds static extents, 0 (copy
// the input's dim, unless allowzero), -1 (infer) and symbols. The graph op gets the output dims
// (reshape's "symbols": one name per -1 of newshape). The -1 is inferred by cancelling the
// input's and the output's symbols and dividing the static products; what remains must be one
// symbol or a static extent (an extent such as seq * 12 needs dim expressions: unsupported).
void SymbolicReshape(NodeContext& ctx, const std::vector<graph::Dim>& ns, bool allowzero) {
  const graph::TensorTypeNode& t = ctx.InputType(0);
  graph::Shape out;
  int infer = -1;
  for (size_t i = 0; i < ns.size(); ++i) {
    graph::Dim d = ns[i];
    if (d.is_static() && d.value() == 0 && !allowzero) {
      if (i >= t.shape.size()) ctx.Fail("shape[" + std::to_string(i) + "] = 0 copies a dim the input does not have");
      d = t.shape[i];
    }
    out.push_back(d);
  }
  // Negative static entries arrive as symbols named after their value (none is a real name).
  auto is_infer = [](const graph::Dim& d) { return d.is_symbolic() && d.name() == "-1"; };
  for (size_t i = 0; i < out.size(); ++i) {
    if (is_infer(out[i])) {
      if (infer >= 0) ctx.Fail("the shape has more than one -1");
      infer = static_cast<int>(i);
    } else if (out[i].is_symbolic() && !out[i].name().empty() && out[i].name()[0] == '-') {
      ctx.Fail("invalid shape entry " + out[i].name());
    }
  }
  std::multiset<std::string> in_symbols, out_symbols;
  int64_t in_static = 1, out_static = 1;
  for (const graph::Dim& d : t.shape) {
    if (d.is_static()) in_static = CheckedMul(in_static, d.value(), "Reshape's input element count");
    else in_symbols.insert(d.name());
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (static_cast<int>(i) == infer) continue;
    if (out[i].is_static()) out_static = CheckedMul(out_static, out[i].value(), "Reshape's target element count");
    else out_symbols.insert(out[i].name());
  }
  std::multiset<std::string> left = in_symbols;
  for (const std::string& s : out_symbols) {
    auto it = left.find(s);
    if (it == left.end()) {
      ctx.Unsupported("Reshape of " + graph::ShapeStr(t.shape) + " to a shape with the symbol '" + s +
                      "', which the input's dims do not have, is not supported");
    }
    left.erase(it);
  }
  const std::string target = [&] {
    std::string text;
    for (const graph::Dim& d : out) text += (text.empty() ? "" : ", ") + d.str();
    return "[" + text + "]";
  }();
  if (out_static == 0 || in_static % out_static != 0 || (infer < 0 && (!left.empty() || in_static != out_static)) ||
      (infer >= 0 && (left.size() > 1 || (left.size() == 1 && in_static != out_static)))) {
    ctx.Unsupported("Reshape of " + graph::ShapeStr(t.shape) + " to " + target +
                    " needs an extent that is a product or quotient of symbols (dim expressions are not supported); "
                    "bind the input dims at import (--input-shape NAME=D0,D1,...)");
  }
  if (infer >= 0) out[infer] = left.empty() ? graph::Dim(in_static / out_static) : graph::Dim::Symbolic(*left.begin());
  std::vector<int64_t> newshape;
  std::string symbols;
  for (const graph::Dim& d : out) {
    newshape.push_back(d.is_static() ? d.value() : -1);
    if (d.is_symbolic()) symbols += (symbols.empty() ? "" : ",") + d.name();
  }
  Attrs attrs{{"newshape", newshape}};
  if (!symbols.empty()) attrs.Set("symbols", symbols);
  ctx.SetOutput(0, ctx.Call("reshape", {ctx.Input(0)}, attrs));
}

// Reshape to a shape computed at run time (a data-dependent shape; Relay's dyn.reshape): the
// output dims are symbols the VM binds from the resolved shape (graph/op/vm.cc): a shape function
// (vm.reshape_shape) resolves 0 and -1, vm.reshape views x with it.
void RunTimeReshape(NodeContext& ctx, bool allowzero) {
  const std::string symbols = ctx.OutputSymbols(ctx.RunTimeShapeLength(1, "the shape"));
  Expr resolved = ctx.Call("vm.reshape_shape", {ctx.Input(0), ctx.Input(1)}, Attrs{{"allowzero", allowzero ? 1 : 0}});
  ctx.SetOutput(0, ctx.Call("vm.reshape", {ctx.Input(0), resolved}, Attrs{{"symbols", symbols}}));
}

// Reshape-1/4: shape attr; 5/13/14/19/21: shape input (14+: allowzero).
void ConvertReshape(NodeContext& ctx) {
  if (ctx.opset() < 5) return Reshape(ctx, ctx.AttrInts("shape", {}));
  const bool allowzero = ctx.opset() >= 14 && ctx.AttrInt("allowzero", 0) != 0;
  if (ctx.InputHasDims(1)) return SymbolicReshape(ctx, ctx.InputDims(1), allowzero);
  if (ctx.InputIsRunTime(1)) return RunTimeReshape(ctx, allowzero);
  std::vector<int64_t> ns = ctx.InputInts(1, "Reshape's shape");
  if (!graph::StaticShape(ctx.InputType(0).shape)) {
    std::vector<graph::Dim> dims;
    for (int64_t v : ns) dims.push_back(v >= 0 ? graph::Dim(v) : graph::Dim::Symbolic(std::to_string(v)));
    return SymbolicReshape(ctx, dims, allowzero);
  }
  Reshape(ctx, ns);
}

// Flatten-1/9/11/13: [prod(d < axis), prod(d >= axis)]; axis may be negative from 11.
void ConvertFlatten(NodeContext& ctx) {
  int64_t rank = ctx.InputType(0).ndim();
  int64_t axis = ctx.AttrInt("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) ctx.Fail("axis out of range for rank " + std::to_string(rank));
  std::vector<int64_t> in = ctx.InputShape(0);
  int64_t rows = 1, cols = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? rows : cols) *= in[d];
  Reshape(ctx, {rows, cols});
}

void ConvertTranspose(NodeContext& ctx) {
  int64_t rank = ctx.InputType(0).ndim();
  std::vector<int64_t> perm;
  for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  perm = ctx.AttrInts("perm", perm);
  if (runtime::NDArray c = ctx.InputConst(0); c.defined()) {
    if (static_cast<int64_t>(perm.size()) != rank) ctx.Fail("perm has the wrong length");
    return ctx.SetOutputConst(0, TransposeArray(c, perm));
  }
  ctx.SetOutput(0, ctx.Call("transpose", {ctx.Input(0)}, Attrs{{"axes", perm}}));
}

void ConvertConcat(NodeContext& ctx) {
  int64_t rank = ctx.InputType(0).ndim();
  int64_t axis = NormAxis(ctx, ctx.AttrInt("axis"), rank);
  std::vector<int> present;
  for (int i = 0; i < ctx.NumInputs(); ++i)
    if (ctx.HasInput(i)) present.push_back(i);
  if (ctx.AllInputsConst(1)) {
    std::vector<runtime::NDArray> parts;
    for (int i : present) parts.push_back(ctx.InputConst(i));
    bool same = std::all_of(parts.begin(), parts.end(), [&](auto& p) { return p.dtype() == parts[0].dtype(); });
    if (same) return ctx.SetOutputConst(0, ConcatArrays(parts, axis));
  }
  std::vector<Expr> fields;
  for (int i : present) fields.push_back(ctx.Input(i));
  Expr tuple = graph::TupleNode::make(std::move(fields));
  ctx.SetOutput(0, ctx.Call("concatenate", {tuple}, Attrs{{"axis", axis}}));
}

// Gather-1/11/13: numpy.take along axis; negative indices count from the end (11+).
void ConvertGather(NodeContext& ctx) {
  int64_t axis = NormAxis(ctx, ctx.AttrInt("axis", 0), ctx.InputType(0).ndim());
  runtime::NDArray data = ctx.InputConst(0), idx = ctx.InputConst(1);
  if (data.defined() && idx.defined()) return ctx.SetOutputConst(0, GatherArray(data, idx, axis));
  if (idx.defined() && ctx.InputType(0).shape[axis].is_static()) {  // checked here: the kernel needs no check
    const int64_t n = ctx.InputType(0).shape[axis].value();
    const std::vector<int64_t> values = ToInts(idx);
    for (size_t i = 0; i < values.size(); ++i)
      if (values[i] < -n || values[i] >= n)
        ctx.Fail("index " + std::to_string(values[i]) + " (element " + std::to_string(i) + " of input 'indices') is "
                 "outside [" + std::to_string(-n) + ", " + std::to_string(n) + "), the range of axis " +
                 std::to_string(axis) + " of the data");
    return ctx.SetOutput(0, ctx.Call("take", {ctx.Input(0), ctx.Input(1)}, Attrs{{"axis", axis}, {"mode", std::string("wrap")}}));
  }
  ctx.SetOutput(0, ctx.Call("take", {ctx.Input(0), ctx.Input(1)},
                            Attrs{{"axis", axis}, {"mode", std::string("raise")}, {"source", ctx.Label()}}));
}

// Slice-1: starts/ends/axes attrs; 10/11/13: starts, ends, axes?, steps? inputs.
// Slice-10/11/13 input i (starts, ends, axes, steps: int32 or int64 [k]) as int64.
Expr SliceOperand(NodeContext& ctx, int i, const std::string& what, int64_t* length) {
  const graph::TensorTypeNode& t = ctx.InputType(i);
  if (t.ndim() != 1 || !t.shape[0].is_static() || (t.dtype != DataType::Int(64) && t.dtype != DataType::Int(32)))
    ctx.Fail(what + " must be a 1-D int32 or int64 tensor, got " + t.dtype.str() + " " + graph::ShapeStr(t.shape));
  *length = t.shape[0].value();
  Expr e = ctx.Input(i);
  return t.dtype == DataType::Int(64) ? e : ctx.Call("cast", {e}, Attrs{{"dtype", DataType::Int(64).str()}});
}

// Slice-10/11/13 whose starts, ends, axes or steps are computed at run time: the VM resolves the
// slice (RunTimeSlice); absent axes are 0..k-1, absent steps 1.
void ConvertRunTimeSlice(NodeContext& ctx) {
  int64_t k = 0, n = 0;
  Expr starts = SliceOperand(ctx, 1, "Slice starts", &k), ends = SliceOperand(ctx, 2, "Slice ends", &n);
  if (n != k) ctx.Fail("starts and ends must have the same length");
  auto operand_or = [&](int i, const std::string& what, std::vector<int64_t> dflt) {
    if (!ctx.HasInput(i)) return Expr(graph::ConstantNode::make(MakeInts(dflt)));
    Expr e = SliceOperand(ctx, i, what, &n);
    if (n != k) ctx.Fail("starts, ends, axes and steps must have the same length");
    return e;
  };
  std::vector<int64_t> iota(static_cast<size_t>(k));
  for (int64_t j = 0; j < k; ++j) iota[static_cast<size_t>(j)] = j;
  Expr axes = operand_or(3, "Slice axes", iota), steps = operand_or(4, "Slice steps", std::vector<int64_t>(k, 1));
  ctx.SetOutput(0, RunTimeSlice(ctx, {ctx.Input(0)}, starts, ends, axes, steps)[0]);
}

}  // namespace

std::vector<Expr> RunTimeSlice(NodeContext& ctx, const std::vector<Expr>& xs, Expr starts, Expr ends, Expr axes,
                               Expr steps, Attrs checks, int output) {
  const int64_t rank = graph::InferExprType(xs.at(0))->as<graph::TensorTypeNode>()->ndim();
  checks.Set("source", ctx.Label());
  Expr params = ctx.Call("vm.slice_params", {xs[0], std::move(starts), std::move(ends), std::move(axes), std::move(steps)},
                         checks);
  Expr shape = ctx.Call("take", {params, ctx.ScalarConst(2, DataType::Int(64))}, Attrs{{"axis", int64_t{0}}});
  std::vector<Expr> out;
  for (const Expr& x : xs)
    out.push_back(ctx.Call("vm.slice", {x, params, shape}, Attrs{{"symbols", ctx.OutputSymbols(rank, output)}}));
  return out;
}

namespace {

void ConvertSlice(NodeContext& ctx) {
  if (ctx.opset() >= 10 && (ctx.InputIsRunTime(1) || ctx.InputIsRunTime(2) || ctx.InputIsRunTime(3) ||
                            ctx.InputIsRunTime(4)))
    return ConvertRunTimeSlice(ctx);
  int64_t rank = ctx.InputType(0).ndim();
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    starts = ctx.AttrInts("starts", {});
    ends = ctx.AttrInts("ends", {});
    axes = ctx.AttrInts("axes", {});
  } else {
    starts = ctx.InputInts(1, "Slice starts");
    ends = ctx.InputInts(2, "Slice ends");
    if (ctx.HasInput(3)) axes = ctx.InputInts(3, "Slice axes");
    if (ctx.HasInput(4)) steps = ctx.InputInts(4, "Slice steps");
  }
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    ctx.Fail("starts, ends, axes and steps must have the same length");
  }
  for (int64_t& a : axes) a = NormAxis(ctx, a, rank);
  if (runtime::NDArray c = ctx.InputConst(0); c.defined()) {
    std::vector<graph::SliceRange> ranges;
    for (int64_t d = 0; d < rank; ++d) ranges.push_back({0, c.shape()[d], 1});
    for (size_t i = 0; i < axes.size(); ++i)
      ranges[axes[i]] = graph::NormalizeSlice(c.shape()[axes[i]], starts[i], ends[i], steps[i]);
    return ctx.SetOutputConst(0, SliceArray(c, ranges));
  }
  Attrs attrs{{"begin", starts}, {"end", ends}, {"strides", steps}, {"axes", axes}};
  ctx.SetOutput(0, ctx.Call("strided_slice", {ctx.Input(0)}, attrs));
}

// Unsqueeze-1/11: axes attr; 13+: axes input. Axes index the output.
// A view of input 0 with the shape a shape function `shape_op` computes from it and input 1 (a
// run-time operand: Unsqueeze / Squeeze axes), checked by the VM's ReshapeTensor.
void RunTimeView(NodeContext& ctx, const std::string& shape_op, Attrs shape_attrs, const std::string& what) {
  ctx.RunTimeShapeLength(1, what);
  shape_attrs.Set("source", ctx.Label());
  Expr shape = ctx.Call(shape_op, {ctx.Input(0), ctx.Input(1)}, shape_attrs);
  const int64_t n = graph::InferExprType(shape)->as<graph::TensorTypeNode>()->shape[0].value();
  ctx.SetOutput(0, ctx.Call("vm.reshape", {ctx.Input(0), shape}, Attrs{{"symbols", ctx.OutputSymbols(n)}}));
}

void ConvertUnsqueeze(NodeContext& ctx) {
  if (ctx.opset() >= 13 && ctx.InputIsRunTime(1)) return RunTimeView(ctx, "vm.unsqueeze_shape", {}, "Unsqueeze axes");
  std::vector<int64_t> axes =
      ctx.opset() < 13 ? ctx.AttrInts("axes", {}) : ctx.InputInts(1, "Unsqueeze axes");
  int64_t out_rank = ctx.InputType(0).ndim() + static_cast<int64_t>(axes.size());
  for (int64_t& a : axes) a = NormAxis(ctx, a, out_rank);
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) ctx.Fail("axes contains duplicates");
  if (runtime::NDArray c = ctx.InputConst(0); c.defined()) {
    std::vector<int64_t> shape = c.shape();
    for (int64_t a : axes) shape.insert(shape.begin() + a, 1);
    return ctx.SetOutputConst(0, ReshapeArray(c, shape));
  }
  Expr x = ctx.Input(0);
  for (int64_t a : axes) x = ctx.Call("expand_dims", {x}, Attrs{{"axis", a}, {"num_newaxis", int64_t{1}}});
  ctx.SetOutput(0, x);
}

// Squeeze-1/11: axes attr; 13+: optional axes input.
void ConvertSqueeze(NodeContext& ctx) {
  std::vector<int64_t> axes;
  if (ctx.opset() < 13) axes = ctx.AttrInts("axes", {});
  else if (ctx.InputIsRunTime(1) && ctx.InputType(1).ndim() == 1 && ctx.InputType(1).shape[0] != graph::Dim(0))
    // Drop the listed dims (the reduction's keepdims = 0 shape); a dim other than 1 changes the
    // element count, which the VM's ReshapeTensor refuses.
    return RunTimeView(ctx, "vm.reduce_shape", Attrs{{"keepdims", int64_t{0}}, {"noop_with_empty_axes", int64_t{1}}},
                       "Squeeze axes");
  else if (ctx.HasInput(1)) axes = ctx.InputInts(1, "Squeeze axes");
  int64_t rank = ctx.InputType(0).ndim();
  for (int64_t& a : axes) a = NormAxis(ctx, a, rank);
  if (runtime::NDArray c = ctx.InputConst(0); c.defined()) {
    std::vector<int64_t> shape;
    for (int64_t d = 0; d < rank; ++d) {
      bool listed = std::find(axes.begin(), axes.end(), d) != axes.end();
      bool drop = axes.empty() ? c.shape()[d] == 1 : listed;
      if (drop && c.shape()[d] != 1) ctx.Fail("cannot squeeze axis " + std::to_string(d) + " of extent != 1");
      if (!drop) shape.push_back(c.shape()[d]);
    }
    return ctx.SetOutputConst(0, ReshapeArray(c, shape));
  }
  ctx.SetOutput(0, ctx.Call("squeeze", {ctx.Input(0)}, Attrs{{"axis", axes}}));
}

}  // namespace

void RegisterTensorConverters(ConverterTable& t) {
  t["Constant"] = ConvertConstant;
  t["Identity"] = ConvertIdentity;
  t["Cast"] = ConvertCast;
  t["CastLike"] = ConvertCastLike;
  t["Shape"] = ConvertShape;
  t["Reshape"] = ConvertReshape;
  t["Flatten"] = ConvertFlatten;
  t["Transpose"] = ConvertTranspose;
  t["Concat"] = ConvertConcat;
  t["Gather"] = ConvertGather;
  t["Slice"] = ConvertSlice;
  t["Unsqueeze"] = ConvertUnsqueeze;
  t["Squeeze"] = ConvertSqueeze;
}

}  // namespace tessera::frontend::onnx_import
