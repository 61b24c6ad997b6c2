// ONNX shape-driven and data-movement ops: ConstantOfShape, Size, Expand, Tile, Pad,
// Split, DepthToSpace, SpaceToDepth, GatherElements, Trilu, Range, EyeLike, OneHot. Shapes,
// repeats, pads and split sizes must be known at import (constants or folded shape
// arithmetic), except ConstantOfShape's, Expand's and Tile's, which may be computed at run time
// (data-dependent shapes: graph/op/vm.cc), and Range's limit, which may be a symbolic dim; known
// inputs fold.
#include <cmath>

#include "const_eval.h"
#include "context.h"
#include "fold.h"
#include "graph_build.h"
#include "tensor_convert.h"
#include "tessera/graph/infer_type.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

int64_t Elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// ConstantOfShape of a shape computed at run time: vm.full, whose dims the VM binds from the
// shape's values (a data-dependent shape, graph/op/vm.cc).
void RunTimeConstantOfShape(NodeContext& ctx) {
  const int64_t rank = ctx.RunTimeShapeLength(0, "the shape");
  runtime::NDArray value = FromDoubles({0.0}, {1}, DataType::Float(32));
  if (const onnx::AttributeProto* a = ctx.Attr("value")) value = TensorProtoToNDArray(a->t(), ctx.Where() + " attribute 'value'");
  if (value.NumElements() != 1) ctx.Fail("attribute 'value' must hold exactly one element");
  if (!value.dtype().is_floating() && !value.dtype().is_int() && !value.dtype().is_uint() && !value.dtype().is_bool())
    ctx.Unsupported("a value of dtype " + value.dtype().str() + " with a run-time shape");
  // The value exactly: a double for floats, an int64 for integers and bools (no rounding past 2^53).
  Attrs attrs{{"symbols", ctx.OutputSymbols(rank)}, {"dtype", value.dtype().str()}};
  if (value.dtype().is_floating()) attrs.Set("value", ToDoubles(value)[0]);
  else attrs.Set("value", ToInts(value)[0]);
  ctx.SetOutput(0, ctx.Call("vm.full", {ctx.Input(0)}, attrs));
}

// ConstantOfShape-9/20/21/23: a tensor of shape input(0) filled with `value` (one element;
// default float32 0).
void ConvertConstantOfShape(NodeContext& ctx) {
  if (ctx.InputIsRunTime(0)) return RunTimeConstantOfShape(ctx);
  std::vector<int64_t> shape = ctx.InputInts(0, "ConstantOfShape's shape");
  for (int64_t d : shape)
    if (d < 0) ctx.Fail("shape entries must be >= 0, got " + std::to_string(d));
  runtime::NDArray value = FromDoubles({0.0}, {1}, DataType::Float(32));
  if (const onnx::AttributeProto* a = ctx.Attr("value")) value = TensorProtoToNDArray(a->t(), ctx.Where() + " attribute 'value'");
  if (value.NumElements() != 1) ctx.Fail("attribute 'value' must hold exactly one element");
  int64_t n = Elements(shape);
  if (value.dtype().is_floating()) {
    ctx.SetOutputConst(0, FromDoubles(std::vector<double>(n, ToDoubles(value)[0]), shape, value.dtype()));
  } else {
    ctx.SetOutputConst(0, FromInts(std::vector<int64_t>(n, ToInts(value)[0]), shape, value.dtype()));
  }
}

// Size-1/13/19/21: the number of elements, an int64 scalar.
void ConvertSize(NodeContext& ctx) { ctx.SetOutputConst(0, MakeInts({Elements(ctx.InputShape(0))}, {})); }

// Expand-8/13: numpy broadcast of input 0 and the shape input.
// Expand / Tile with a run-time shape operand: a shape function, then a kernel over the symbols
// its values bind (a data-dependent shape, graph/op/vm.cc).
void RunTimeExpandOrTile(NodeContext& ctx, bool tile) {
  ctx.RunTimeShapeLength(1, tile ? "the repeats" : "the shape");
  Expr shape = ctx.Call(tile ? "vm.tile_shape" : "vm.broadcast_shape", {ctx.Input(0), ctx.Input(1)});
  const int64_t n = graph::InferExprType(shape)->as<graph::TensorTypeNode>()->shape[0].value();
  ctx.SetOutput(0, ctx.Call(tile ? "vm.tile" : "vm.broadcast_to", {ctx.Input(0), shape},
                            Attrs{{"symbols", ctx.OutputSymbols(n)}}));
}

void ConvertExpand(NodeContext& ctx) {
  if (ctx.InputIsRunTime(1)) return RunTimeExpandOrTile(ctx, false);
  std::vector<int64_t> shape = ctx.InputInts(1, "Expand's shape");
  if (runtime::NDArray c = ctx.InputConst(0); c.defined()) {
    runtime::NDArray zeros = FromInts(std::vector<int64_t>(Elements(shape), 0), shape, DataType::Int(64));
    runtime::NDArray out = FoldBroadcast({c, zeros}, c.dtype(), [](const auto& v) { return v[0]; });
    if (out.NumElements() <= kMaxFoldElements) return ctx.SetOutputConst(0, out);
  }
  ctx.SetOutput(0, ctx.Call("broadcast_to", {ctx.Input(0)}, Attrs{{"shape", shape}}));
}

// Tile-6/13: repeats input (one entry per axis).
void ConvertTile(NodeContext& ctx) {
  if (ctx.opset() < 6) ctx.Unsupported("Tile before opset 6 (tiles / axis inputs) is not supported");
  if (ctx.InputIsRunTime(1)) return RunTimeExpandOrTile(ctx, true);
  std::vector<int64_t> reps = ctx.InputInts(1, "Tile's repeats");
  ctx.SetOutput(0, ctx.Call("tile", {ctx.Input(0)}, Attrs{{"reps", reps}}));
}

// Pad-11/13/18 whose pads, constant_value or axes is a run-time value.
void ConvertRunTimePad(NodeContext& ctx, const std::string& mode) {
  const int64_t rank = ctx.InputType(0).ndim();
  Expr axes;
  if (ctx.HasInput(3)) {
    axes = ctx.Input(3);
    ctx.RunTimeShapeLength(3, "Pad's axes");
  } else {
    std::vector<int64_t> iota(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; ++d) iota[static_cast<size_t>(d)] = d;
    axes = graph::ConstantNode::make(MakeInts(iota));
  }
  ctx.RunTimeShapeLength(1, "Pad's pads");
  Expr value = ctx.HasInput(2) ? ctx.Input(2) : ctx.ScalarConst(0, ctx.InputType(0).dtype);
  if (ctx.HasInput(2) && ctx.InputType(2).NumElements() != std::optional<int64_t>(1))
    ctx.Fail("constant_value must have one element, got shape " + graph::ShapeStr(ctx.InputType(2).shape));
  ctx.SetOutput(0, RunTimePad(ctx, ctx.Input(0), ctx.Input(1), axes, value, mode));
}

}  // namespace

Expr RunTimePad(NodeContext& ctx, const Expr& x, const Expr& pads, const Expr& axes, const Expr& value,
                const std::string& mode) {
  const int64_t rank = graph::InferExprType(x)->as<graph::TensorTypeNode>()->ndim();
  Expr params = ctx.Call("vm.pad_params", {x, pads, axes}, Attrs{{"mode", mode}, {"source", ctx.Label()}});
  Expr shape = ctx.Call("take", {params, ctx.ScalarConst(1, DataType::Int(64))}, Attrs{{"axis", int64_t{0}}});
  return ctx.Call("vm.pad", {x, params, value, shape}, Attrs{{"mode", mode}, {"symbols", ctx.OutputSymbols(rank)}});
}

namespace {

// Pad-1 (paddings attr), 2 (pads, value attrs), 11/13/18/19/21/23 (pads, constant_value, axes
// inputs). pads = [x1_begin, x2_begin, ..., x1_end, x2_end]; modes constant, reflect, edge,
// wrap (19+).
void ConvertPad(NodeContext& ctx) {
  int64_t rank = ctx.InputType(0).ndim();
  std::string mode = ctx.AttrString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    ctx.Unsupported("mode '" + mode + "' is not supported (constant, reflect, edge, wrap)");
  if (ctx.opset() >= 11 && (ctx.InputIsRunTime(1) || ctx.InputIsRunTime(2) || ctx.InputIsRunTime(3)))
    return ConvertRunTimePad(ctx, mode);
  std::vector<int64_t> pads, axes;
  double value = 0;
  if (ctx.opset() < 11) {
    pads = ctx.AttrInts(ctx.opset() < 2 ? "paddings" : "pads", {});
    value = ctx.AttrFloat("value", 0.0f);
  } else {
    pads = ctx.InputInts(1, "Pad's pads");
    if (ctx.HasInput(2)) {
      std::vector<double> v = ctx.InputDoubles(2, "Pad's constant_value");
      if (v.size() != 1) ctx.Fail("constant_value must have one element");
      value = v[0];
    }
    if (ctx.HasInput(3)) axes = ctx.InputInts(3, "Pad's axes");
  }
  if (axes.empty()) {
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  if (pads.size() != 2 * axes.size()) {
    ctx.Fail("pads has " + std::to_string(pads.size()) + " entries; expected " + std::to_string(2 * axes.size()));
  }
  std::vector<int64_t> before(rank, 0), after(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank) ctx.Fail("axis " + std::to_string(axes[i]) + " out of range");
    before[a] = pads[i];
    after[a] = pads[i + axes.size()];
  }
  Attrs attrs{{"pad_before", before}, {"pad_after", after}, {"mode", mode}, {"pad_value", value}};
  ctx.SetOutput(0, ctx.Call("pad", {ctx.Input(0)}, attrs));
}

// Split-13/18 with run-time sizes (int64 [n], n the outputs): part i is a run-time slice from the
// sum of the sizes before it (an exclusive cumsum) to that plus its size (RunTimeSlice); a part that
// is not inside the axis, or sizes that do not sum to its extent, fail the run naming the node.
void RunTimeSplit(NodeContext& ctx, int64_t axis) {
  const int64_t n_out = ctx.node().output_size();
  if (ctx.RunTimeShapeLength(1, "Split's split") != n_out)
    ctx.Fail("split has " + std::to_string(ctx.InputType(1).shape[0].value()) + " sizes for " +
             std::to_string(n_out) + " outputs");
  const Expr sizes = ctx.Input(1);
  const Expr starts = ctx.Call("cumsum", {sizes}, Attrs{{"axis", int64_t{0}}, {"exclusive", int64_t{1}}, {"reverse", int64_t{0}}});
  const Expr ends = ctx.Call("add", {starts, sizes});
  auto ints = [](std::vector<int64_t> v) { return Expr(graph::ConstantNode::make(MakeInts(v))); };
  for (int64_t i = 0; i < n_out; ++i) {
    const Attrs check{{"split_part", int64_t{i + 1 == n_out ? 2 : 1}}};
    ctx.SetOutput(static_cast<int>(i), RunTimeSlice(ctx, {ctx.Input(0)}, SliceAxis(ctx, starts, 0, i, i + 1),
                                                    SliceAxis(ctx, ends, 0, i, i + 1), ints({axis}), ints({1}), check,
                                                    static_cast<int>(i))[0]);
  }
}

// Split-1/2/11/13/18: split sizes from the attr (< 13) or input (13+), else equal parts (18+:
// num_outputs, the last part may be smaller).
void ConvertSplit(NodeContext& ctx) {
  const int64_t rank = ctx.InputType(0).ndim();
  int64_t axis = ctx.AttrInt("axis", 0);
  if (axis < -rank || axis >= rank) ctx.Fail("axis out of range");
  if (axis < 0) axis += rank;
  if (ctx.opset() >= 13 && ctx.InputIsRunTime(1)) return RunTimeSplit(ctx, axis);
  std::vector<int64_t> shape = ctx.InputShape(0);
  std::vector<int64_t> sizes;
  if (ctx.opset() < 13) sizes = ctx.AttrInts("split", {});
  else if (ctx.HasInput(1)) sizes = ctx.InputInts(1, "Split's split");
  int64_t n_out = ctx.node().output_size();
  int64_t total = shape[axis];
  if (sizes.empty()) {
    int64_t parts = ctx.opset() >= 18 && ctx.HasAttr("num_outputs") ? ctx.AttrInt("num_outputs") : n_out;
    if (parts <= 0) ctx.Fail("the number of outputs must be positive");
    int64_t chunk = (total + parts - 1) / parts;
    if (ctx.opset() < 18 && total % parts != 0) ctx.Fail("the axis extent is not divisible by the number of outputs");
    for (int64_t i = 0, left = total; i < parts; ++i, left -= chunk) sizes.push_back(std::max<int64_t>(0, std::min(chunk, left)));
  }
  int64_t sum = 0;
  for (int64_t s : sizes) sum += s;
  if (sum != total) ctx.Fail("split sizes sum to " + std::to_string(sum) + ", the axis has " + std::to_string(total));
  if (static_cast<int64_t>(sizes.size()) != n_out) ctx.Fail("split has a different number of parts than outputs");
  int64_t begin = 0;
  runtime::NDArray c = ctx.InputConst(0);
  for (int64_t i = 0; i < n_out; ++i) {
    if (c.defined()) {
      std::vector<graph::SliceRange> ranges;
      for (int64_t d = 0; d < rank; ++d) ranges.push_back({0, shape[d], 1});
      ranges[axis] = {begin, sizes[i], 1};
      ctx.SetOutputConst(static_cast<int>(i), SliceArray(c, ranges));
    } else {
      Attrs attrs{{"begin", std::vector<int64_t>{begin}},
                  {"end", std::vector<int64_t>{begin + sizes[i]}},
                  {"strides", std::vector<int64_t>{1}},
                  {"axes", std::vector<int64_t>{axis}}};
      ctx.SetOutput(static_cast<int>(i), ctx.Call("strided_slice", {ctx.Input(0)}, attrs));
    }
    begin += sizes[i];
  }
}

Expr ReshapeTo(NodeContext& ctx, Expr x, std::vector<int64_t> shape) {
  return ctx.Call("reshape", {x}, Attrs{{"newshape", std::move(shape)}});
}
Expr TransposeBy(NodeContext& ctx, Expr x, std::vector<int64_t> perm) {
  return ctx.Call("transpose", {x}, Attrs{{"axes", std::move(perm)}});
}

// DepthToSpace-1/11/13: NCHW; mode DCR (default) or CRD (11+).
void ConvertDepthToSpace(NodeContext& ctx) {
  std::vector<int64_t> s = ctx.InputShape(0);
  if (s.size() != 4) ctx.Fail("input must be 4-D NCHW");
  int64_t b = ctx.AttrInt("blocksize");
  if (b <= 0 || s[1] % (b * b) != 0) ctx.Fail("channels must be divisible by blocksize^2");
  std::string mode = ctx.AttrString("mode", "DCR");
  int64_t n = s[0], c = s[1] / (b * b), h = s[2], w = s[3];
  Expr x;
  if (mode == "DCR") {
    x = TransposeBy(ctx, ReshapeTo(ctx, ctx.Input(0), {n, b, b, c, h, w}), {0, 3, 4, 1, 5, 2});
  } else if (mode == "CRD") {
    x = TransposeBy(ctx, ReshapeTo(ctx, ctx.Input(0), {n, c, b, b, h, w}), {0, 1, 4, 2, 5, 3});
  } else {
    ctx.Fail("mode must be DCR or CRD, got " + mode);
  }
  ctx.SetOutput(0, ReshapeTo(ctx, x, {n, c, h * b, w * b}));
}

// SpaceToDepth-1/13: NCHW.
void ConvertSpaceToDepth(NodeContext& ctx) {
  std::vector<int64_t> s = ctx.InputShape(0);
  if (s.size() != 4) ctx.Fail("input must be 4-D NCHW");
  int64_t b = ctx.AttrInt("blocksize");
  if (b <= 0 || s[2] % b != 0 || s[3] % b != 0) ctx.Fail("H and W must be divisible by blocksize");
  int64_t n = s[0], c = s[1], h = s[2] / b, w = s[3] / b;
  Expr x = TransposeBy(ctx, ReshapeTo(ctx, ctx.Input(0), {n, c, h, b, w, b}), {0, 3, 5, 1, 2, 4});
  ctx.SetOutput(0, ReshapeTo(ctx, x, {n, c * b * b, h, w}));
}

// GatherElements-11/13.
void ConvertGatherElements(NodeContext& ctx) {
  ctx.SetOutput(0, ctx.Call("gather_elements", {ctx.Input(0), ctx.Input(1)},
                            Attrs{{"axis", ctx.AttrInt("axis", 0)}, {"source", ctx.Label()}}));
}

// Trilu-14: upper (default 1); k an optional int64 scalar input (may be computed at run time).
void ConvertTrilu(NodeContext& ctx) {
  Expr k = ctx.HasInput(1) ? ctx.Input(1) : graph::ConstantNode::make(MakeInts({0}, {}));
  ctx.SetOutput(0, ctx.Call("trilu", {ctx.Input(0), k}, Attrs{{"upper", ctx.AttrInt("upper", 1)}}));
}

// Range-11: start, limit, delta scalars known at import; n = max(ceil((limit - start) / delta), 0).
// Range-11 whose limit is a symbolic dim s (symbolic_shape.h): start 0 and delta 1 give [s]
// elements, an `arange` over a graph input that has the dim; other starts / deltas would need dim
// expressions (ceil((s - start) / delta)).
void SymbolicRange(NodeContext& ctx) {
  const graph::Dim s = ctx.InputDims(1).at(0);
  const double start = ctx.InputDoubles(0, "Range start")[0], delta = ctx.InputDoubles(2, "Range delta")[0];
  if (start != 0 || delta != 1)
    ctx.Unsupported("Range from " + std::to_string(start) + " by " + std::to_string(delta) + " to the symbolic dim '" +
                    s.name() + "' needs a dim expression; only Range(0, " + s.name() + ", 1) is supported");
  auto [input, axis] = ctx.GraphInputWithDim(s);
  if (!input) ctx.Unsupported("no graph input has the symbolic dim '" + s.name() + "' that Range's limit is");
  Attrs attrs{{"axis", axis}, {"start", start}, {"step", delta}, {"dtype", ctx.InputType(0).dtype.str()}};
  ctx.SetOutput(0, ctx.Call("arange", {input}, attrs));
}

// Range with a run-time start, limit or delta: the shape function vm.range_shape computes the length
// and the VM's vm.range kernel the values (graph/op/vm.cc).
void RunTimeRange(NodeContext& ctx) {
  Expr shape = ctx.Call("vm.range_shape", {ctx.Input(0), ctx.Input(1), ctx.Input(2)}, Attrs{{"source", ctx.Label()}});
  ctx.SetOutput(0, ctx.Call("vm.range", {ctx.Input(0), ctx.Input(2), shape}, Attrs{{"symbols", ctx.OutputSymbols(1)}}));
}

void ConvertRange(NodeContext& ctx) {
  if (ctx.InputHasDims(1)) return SymbolicRange(ctx);
  if (ctx.InputIsRunTime(0) || ctx.InputIsRunTime(1) || ctx.InputIsRunTime(2)) return RunTimeRange(ctx);
  runtime::NDArray s = ctx.InputConst(0);
  double start = ctx.InputDoubles(0, "Range start")[0];
  double limit = ctx.InputDoubles(1, "Range limit")[0];
  double delta = ctx.InputDoubles(2, "Range delta")[0];
  if (delta == 0) ctx.Fail("delta must not be 0");
  int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((limit - start) / delta)));
  if (s.dtype().is_floating()) {
    std::vector<double> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = start + i * delta;
    return ctx.SetOutputConst(0, FromDoubles(v, {n}, s.dtype()));
  }
  std::vector<int64_t> v(n);
  int64_t st = ToInts(s)[0], dl = ToInts(ctx.InputConst(2))[0];
  for (int64_t i = 0; i < n; ++i) v[i] = st + i * dl;
  ctx.SetOutputConst(0, FromInts(v, {n}, s.dtype()));
}

// EyeLike-9/22: ones on diagonal k of a 2-D tensor shaped like the input.
void ConvertEyeLike(NodeContext& ctx) {
  std::vector<int64_t> s = ctx.InputShape(0);
  if (s.size() != 2) ctx.Fail("input must be 2-D");
  DataType dt = ctx.HasAttr("dtype") ? DataTypeFromONNX(static_cast<int>(ctx.AttrInt("dtype")), ctx.Where())
                                     : ctx.InputType(0).dtype;
  int64_t k = ctx.AttrInt("k", 0);
  std::vector<double> v(s[0] * s[1], 0.0);
  for (int64_t i = 0; i < s[0]; ++i)
    if (i + k >= 0 && i + k < s[1]) v[i * s[1] + i + k] = 1.0;
  ctx.SetOutputConst(0, FromDoubles(v, s, dt));
}

// OneHot-9/11: indices (negative count from the end; outside [-depth, depth) all off), depth and
// values [off, on] (each a constant or a run-time value); the new axis of extent depth is
// inserted at `axis` (default -1).
void ConvertOneHot(NodeContext& ctx) {
  int64_t rank = ctx.InputType(0).ndim();
  int64_t axis = ctx.AttrInt("axis", -1);
  if (axis < -(rank + 1) || axis > rank) ctx.Fail("axis out of range");
  if (axis < 0) axis += rank + 1;
  const DataType i64 = DataType::Int(64);
  auto to_i64 = [&](Expr e, DataType t) { return t == i64 ? e : ctx.Call("cast", {e}, Attrs{{"dtype", i64.str()}}); };
  // The classes 0..depth-1 along the new axis (shape [1, .., depth, .., 1]), and depth as an int64 scalar.
  Expr classes, depth_e;
  if (ctx.InputIsRunTime(1)) {
    // A run-time depth: the classes are vm.range(0, depth) (graph/op/vm.cc), the new axis's extent a symbol.
    if (ctx.InputType(1).NumElements() != std::optional<int64_t>(1)) ctx.Fail("depth must be a scalar");
    depth_e = ctx.Call("reshape", {to_i64(ctx.Input(1), ctx.InputType(1).dtype)}, Attrs{{"newshape", std::vector<int64_t>{}}});
    Expr zero = ctx.ScalarConst(0, i64), one = ctx.ScalarConst(1, i64);
    Expr length = ctx.Call("vm.range_shape", {zero, depth_e, one}, Attrs{{"source", ctx.Label()}});
    classes = ctx.Call("vm.range", {zero, one, length}, Attrs{{"symbols", ctx.OutputSymbol(0, static_cast<int>(axis))}});
    if (axis > 0) classes = ctx.Call("expand_dims", {classes}, Attrs{{"axis", int64_t{0}}, {"num_newaxis", axis}});
    if (rank - axis > 0) classes = ctx.Call("expand_dims", {classes}, Attrs{{"axis", axis + 1}, {"num_newaxis", rank - axis}});
  } else {
    std::vector<double> depth_v = ctx.InputDoubles(1, "OneHot depth");
    if (depth_v.size() != 1) ctx.Fail("depth must be a scalar");
    const int64_t depth = static_cast<int64_t>(depth_v[0]);
    depth_e = ctx.ScalarConst(static_cast<double>(depth), i64);
    std::vector<int64_t> iota(depth), iota_shape(rank + 1, 1);
    for (int64_t i = 0; i < depth; ++i) iota[i] = i;
    iota_shape[axis] = depth;
    classes = graph::ConstantNode::make(MakeInts(iota, iota_shape));
  }
  // values [off, on]: constants, or scalars taken from the run-time tensor.
  Expr off_e, on_e;
  if (runtime::NDArray values = ctx.InputConst(2); values.defined()) {
    if (values.NumElements() != 2) ctx.Fail("values must have two elements [off, on]");
    off_e = graph::ConstantNode::make(ReshapeArray(SliceArray(values, {{0, 1, 1}}), {}));
    on_e = graph::ConstantNode::make(ReshapeArray(SliceArray(values, {{1, 1, 1}}), {}));
  } else {
    if (ctx.InputType(2).NumElements() != std::optional<int64_t>(2)) ctx.Fail("values must have two elements [off, on]");
    Expr flat = ctx.Call("reshape", {ctx.Input(2)}, Attrs{{"newshape", std::vector<int64_t>{2}}});
    off_e = ctx.Call("take", {flat, ctx.ScalarConst(0, i64)}, Attrs{{"axis", int64_t{0}}});
    on_e = ctx.Call("take", {flat, ctx.ScalarConst(1, i64)}, Attrs{{"axis", int64_t{0}}});
  }
  Expr idx = to_i64(ctx.Input(0), ctx.InputType(0).dtype);
  Expr zero = ctx.ScalarConst(0, i64);
  idx = ctx.Call("where", {ctx.Call("less", {idx, zero}), ctx.Call("add", {idx, depth_e}), idx});
  idx = ctx.Call("expand_dims", {idx}, Attrs{{"axis", axis}, {"num_newaxis", int64_t{1}}});
  ctx.SetOutput(0, ctx.Call("where", {ctx.Call("equal", {classes, idx}), on_e, off_e}));
}

}  // namespace

void RegisterShapeConverters(ConverterTable& t) {
  t["ConstantOfShape"] = ConvertConstantOfShape;
  t["Size"] = ConvertSize;
  t["Expand"] = ConvertExpand;
  t["Tile"] = ConvertTile;
  t["Pad"] = ConvertPad;
  t["Split"] = ConvertSplit;
  t["DepthToSpace"] = ConvertDepthToSpace;
  t["SpaceToDepth"] = ConvertSpaceToDepth;
  t["GatherElements"] = ConvertGatherElements;
  t["Trilu"] = ConvertTrilu;
  t["Range"] = ConvertRange;
  t["EyeLike"] = ConvertEyeLike;
  t["OneHot"] = ConvertOneHot;
}

}  // namespace tessera::frontend::onnx_import
