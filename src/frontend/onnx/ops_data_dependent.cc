// Operators whose output size the data decides: NonZero, Compress, NonMaxSuppression, Unique.
// Known at import, NonZero and Compress's condition fold; otherwise the VM runs a counting kernel,
// binds the count to the output's symbolic extent, then runs the kernel that writes the values
// (vm.nonzero_count / vm.nonzero, graph/op/vm.cc). NonMaxSuppression selects in a static-shape
// kernel (per batch and class, 1 + the selected boxes in order, topi/nms.h) and takes its non-zero
// slots' coordinates as NonZero does. Unique computes each element's position among the distinct
// values (a static shape), whose maximum + 1 is the count the VM binds (topi/unique.h).
// Spec: https://onnx.ai/onnx/operators/onnx__NonZero.html, onnx__Compress.html,
// onnx__NonMaxSuppression.html, onnx__Unique.html.
#include <cmath>
#include <optional>

#include "const_eval.h"
#include "context.h"
#include "graph_build.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

// The row-major coordinates of a's non-zero elements (a NaN is non-zero), [max(rank, 1), count].
runtime::NDArray NonZeroArray(const runtime::NDArray& a) {
  std::vector<int64_t> shape = a.shape();
  if (shape.empty()) shape = {1};
  // Every element converted to double: a non-zero integer stays non-zero, a NaN stays NaN.
  const std::vector<double> v = ToDoubles(a);
  std::vector<int64_t> flat;
  for (size_t p = 0; p < v.size(); ++p)
    if (v[p] != 0 || std::isnan(v[p])) flat.push_back(static_cast<int64_t>(p));
  const int64_t rank = static_cast<int64_t>(shape.size()), k = static_cast<int64_t>(flat.size());
  std::vector<int64_t> out(static_cast<size_t>(rank * k));
  for (int64_t j = 0; j < k; ++j) {
    int64_t p = flat[static_cast<size_t>(j)];
    for (int64_t d = rank; d-- > 0;) {
      out[static_cast<size_t>(d * k + j)] = p % shape[static_cast<size_t>(d)];
      p /= shape[static_cast<size_t>(d)];
    }
  }
  return MakeInts(out, {rank, k});
}

// NonZero of a run-time tensor: [max(rank, 1), K], K bound by the VM from vm.nonzero_count.
Expr RunTimeNonZero(NodeContext& ctx, const Expr& x, int output) {
  Expr count = ctx.Call("vm.nonzero_count", {x});
  return ctx.Call("vm.nonzero", {x, count}, Attrs{{"symbols", ctx.OutputSymbol(output, 1)}});
}

void ConvertNonZero(NodeContext& ctx) {
  runtime::NDArray x = ctx.InputConst(0);
  if (x.defined()) return ctx.SetOutputConst(0, NonZeroArray(x));
  ctx.SetOutput(0, RunTimeNonZero(ctx, ctx.Input(0), 0));
}

// Compress-9/11: the slices of input along `axis` (the flattened input without it) whose
// condition is true; the condition (1-D bool) may be shorter than the axis, never longer.
void ConvertCompress(NodeContext& ctx) {
  const graph::TensorTypeNode& x = ctx.InputType(0);
  const graph::TensorTypeNode& cond = ctx.InputType(1);
  if (cond.ndim() != 1 || cond.dtype != DataType::Bool())
    ctx.Fail("the condition must be a 1-D bool tensor, got " + cond.dtype.str() + " " + graph::ShapeStr(cond.shape));
  const bool has_axis = ctx.HasAttr("axis");
  const int64_t axis = has_axis ? NormAxis(ctx, ctx.AttrInt("axis"), x.ndim()) : 0;
  // The extent the condition selects from: x's axis, or its element count.
  std::optional<int64_t> extent;
  if (has_axis) {
    if (x.shape[axis].is_static()) extent = x.shape[axis].value();
  } else {
    extent = x.NumElements();
  }
  if (extent && cond.shape[0].is_static() && cond.shape[0].value() > *extent)
    ctx.Fail("the condition has " + std::to_string(cond.shape[0].value()) + " entries but the input has " +
             std::to_string(*extent) + (has_axis ? " slices along axis " + std::to_string(axis) : " elements") +
             "; it may be shorter, not longer");
  if (!cond.shape[0].is_static() || !extent)
    ctx.Unsupported("Compress over a symbolic extent (condition " + graph::ShapeStr(cond.shape) + ", input " +
                    graph::ShapeStr(x.shape) + ") is not supported; give the input static shapes");
  Expr indices;
  if (runtime::NDArray c = ctx.InputConst(1); c.defined()) {
    runtime::NDArray nz = NonZeroArray(c);
    indices = Reshape(ctx, graph::ConstantNode::make(nz), {nz.shape()[1]});
  } else {
    Expr nz = RunTimeNonZero(ctx, ctx.Input(1), 0);
    indices = ctx.Call("squeeze", {nz}, Attrs{{"axis", std::vector<int64_t>{0}}});
  }
  Attrs take{{"mode", std::string("fast")}};  // every index is a position of the condition: in range
  if (has_axis) take.Set("axis", axis);
  ctx.SetOutput(0, ctx.Call("take", {ctx.Input(0), indices}, take));
}

// NonMaxSuppression-10/11: selected_indices int64 [K, 3] (batch, class, box) per batch and class in
// order of descending score. An absent or empty max_output_boxes_per_class selects nothing (as the
// reference implementation); an absent iou_threshold is 0, and without a score_threshold every box
// is a candidate.
void ConvertNonMaxSuppression(NodeContext& ctx) {
  const std::vector<int64_t> bs = ctx.InputShape(0), ss = ctx.InputShape(1);
  if (bs.size() != 3 || bs[2] != 4)
    ctx.Fail("boxes must be [num_batches, spatial_dimension, 4], got " + graph::ShapeStr(ctx.InputType(0).shape));
  if (ss.size() != 3 || ss[0] != bs[0] || ss[2] != bs[1])
    ctx.Fail("scores must be [num_batches, num_classes, spatial_dimension] = [" + std::to_string(bs[0]) + ", C, " +
             std::to_string(bs[1]) + "] for boxes " + graph::ShapeStr(ctx.InputType(0).shape) + ", got " +
             graph::ShapeStr(ctx.InputType(1).shape));
  const int64_t center = ctx.AttrInt("center_point_box", 0);
  if (center != 0 && center != 1) ctx.Fail("center_point_box must be 0 or 1, got " + std::to_string(center));
  auto one_element = [&](int i, const char* what, bool integer) {
    const graph::TensorTypeNode& t = ctx.InputType(i);
    if ((integer ? !t.dtype.is_int() : !t.dtype.is_floating()) || t.NumElements().value_or(2) > 1)
      ctx.Fail(std::string(what) + " must be " + (integer ? "an int64" : "a float") + " tensor of one element, got " +
               t.dtype.str() + " " + graph::ShapeStr(t.shape));
    return ctx.Input(i);
  };
  auto empty = [&] { ctx.SetOutputConst(0, MakeInts({}, {0, 3})); };
  // Nothing is selected without boxes, classes or a positive max_output_boxes_per_class.
  if (!ctx.HasInput(2) || ctx.InputType(2).NumElements() == std::optional<int64_t>(0)) {
    for (int i = 3; i < ctx.NumInputs(); ++i) ctx.IgnoreInput(i);
    return empty();
  }
  const Expr max_out = one_element(2, "max_output_boxes_per_class", true);
  if (runtime::NDArray m = ctx.InputConst(2); (m.defined() && ToInts(m)[0] <= 0) || ss[0] * ss[1] * ss[2] == 0) {
    for (int i = 3; i < ctx.NumInputs(); ++i) ctx.IgnoreInput(i);
    return empty();
  }
  const Expr iou = ctx.HasInput(3) ? one_element(3, "iou_threshold", false) : ctx.ScalarConst(0, DataType::Float(32));
  const bool has_score_threshold = ctx.HasInput(4);
  const Expr score = has_score_threshold ? one_element(4, "score_threshold", false) : ctx.ScalarConst(0, DataType::Float(32));
  const Expr kept = ctx.Call("vision.nms", {ctx.Input(0), ctx.Input(1), max_out, iou, score},
                             Attrs{{"center_point_box", center}, {"has_score_threshold", int64_t{has_score_threshold}}});
  ctx.SetOutput(0, ctx.Call("vision.nms_indices", {RunTimeNonZero(ctx, kept, 0), kept}));
}

// Unique-11: Y (the distinct values or slices along axis), indices (each one's first occurrence),
// inverse_indices (each element's or slice's position in Y) and counts, any of them optional.
void ConvertUnique(NodeContext& ctx) {
  const std::vector<int64_t> xs = ctx.InputShape(0);
  const DataType dtype = ctx.InputType(0).dtype;
  const int64_t sorted = ctx.AttrInt("sorted", 1);
  if (sorted != 0 && sorted != 1) ctx.Fail("sorted must be 0 or 1, got " + std::to_string(sorted));
  Attrs attrs{{"sorted", sorted}};
  std::optional<int64_t> axis;
  int64_t n = 1;
  for (int64_t d : xs) n *= d;
  if (ctx.HasAttr("axis")) {
    axis = NormAxis(ctx, ctx.AttrInt("axis"), static_cast<int64_t>(xs.size()));
    attrs.Set("axis", *axis);
    n = xs[static_cast<size_t>(*axis)];
  }
  if (n == 0) {  // nothing is distinct: every output empty
    std::vector<int64_t> y_shape = axis ? xs : std::vector<int64_t>{0};
    if (axis) y_shape[static_cast<size_t>(*axis)] = 0;
    ctx.SetOutputConst(0, FromDoubles({}, y_shape, dtype));
    for (int i = 1; i < 4; ++i)
      if (ctx.HasOutput(i)) ctx.SetOutputConst(i, MakeInts({}, {0}));
    return;
  }
  const Expr inverse = ctx.Call("unique_inverse", {ctx.Input(0)}, attrs);
  const Expr last = ctx.Call("max", {inverse}, Attrs{{"axis", std::vector<int64_t>{0}}, {"keepdims", int64_t{1}}});
  const Expr count = ctx.Call("add", {last, ctx.ScalarConst(1, DataType::Int(64))});
  const std::string symbol = ctx.OutputSymbol(0, static_cast<int>(axis.value_or(0)));
  auto select = [&](const char* kind) {
    return ctx.Call("vm.unique_select", {inverse, count}, Attrs{{"kind", std::string(kind)}, {"symbols", symbol}});
  };
  const Expr first = select("first");
  Attrs take{{"mode", std::string("fast")}};  // first occurrences: in range
  if (axis) take.Set("axis", *axis);
  ctx.SetOutput(0, ctx.Call("take", {ctx.Input(0), first}, take));
  if (ctx.HasOutput(1)) ctx.SetOutput(1, first);
  if (ctx.HasOutput(2)) ctx.SetOutput(2, inverse);
  if (ctx.HasOutput(3)) ctx.SetOutput(3, select("counts"));
}

}  // namespace

void RegisterDataDependentConverters(ConverterTable& t) {
  t["NonZero"] = ConvertNonZero;
  t["Compress"] = ConvertCompress;
  t["NonMaxSuppression"] = ConvertNonMaxSuppression;
  t["Unique"] = ConvertUnique;
}

}  // namespace tessera::frontend::onnx_import
