// ONNX reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare (axes an
// attribute before opset 13 (ReduceSum) / 18 (the others), an optional input from then on;
// keepdims default 1; noop_with_empty_axes; axes computed at run time: vm.reduce_shape / vm.reduce;
// Sum / Mean / Max / Min / Prod of a known value fold at import),
// ArgMax / ArgMin (select_last_index from 12),
// TopK, CumSum / CumProd.
#include <algorithm>
#include <cmath>
#include <optional>

#include "const_eval.h"
#include "context.h"
#include "fold.h"
#include "graph_build.h"
#include "run_time_switch.h"
#include "tessera/graph/infer_type.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

Expr Reduce(NodeContext& ctx, const std::string& op, Expr x, const std::vector<int64_t>& axes, bool keepdims) {
  return ctx.Call(op, {x}, Attrs{{"axis", axes}, {"keepdims", int64_t{keepdims}}});
}

enum class Kind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

// The elementwise map applied before summing (L1: |x|, L2 and SumSquare: x * x).
Expr ElementMap(NodeContext& ctx, Kind kind, Expr x) {
  if (kind == Kind::kL1) return ctx.Call("abs", {x});
  if (kind == Kind::kL2 || kind == Kind::kSumSquare) return ctx.Call("multiply", {x, x});
  return x;
}

// A reduction of a known value, evaluated at import (shape arithmetic: torchvision's image batching
// pads to the ReduceMax of constant image sizes): sum, mean, max, min and prod over `axes` (empty:
// all, unless noop) in double (int64 exact for integers), stored in x's dtype.
runtime::NDArray FoldReduce(const runtime::NDArray& x, Kind kind, std::vector<int64_t> axes, bool keepdims) {
  const std::vector<int64_t>& xs = x.shape();
  const int64_t rank = static_cast<int64_t>(xs.size());
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t a : axes) reduced[static_cast<size_t>(a)] = true;
  std::vector<int64_t> out_shape, kept_shape;  // kept_shape: with 1 for each reduced dim
  for (int64_t d = 0; d < rank; ++d) {
    kept_shape.push_back(reduced[d] ? 1 : xs[d]);
    if (!reduced[d] || keepdims) out_shape.push_back(reduced[d] ? 1 : xs[d]);
  }
  int64_t out_n = 1, count = 1;
  for (int64_t d = 0; d < rank; ++d) (reduced[d] ? count : out_n) *= xs[d];
  // The elements as long double: exact for int64 (ToInts) and for every float dtype (ToDoubles).
  const bool integer = !x.dtype().is_floating();
  std::vector<long double> elems;
  if (integer) {
    for (int64_t v : ToInts(x)) elems.push_back(static_cast<long double>(v));
  } else {
    for (double v : ToDoubles(x)) elems.push_back(static_cast<long double>(v));
  }
  std::vector<long double> acc(static_cast<size_t>(out_n));
  for (long double& a : acc)
    a = kind == Kind::kProd ? 1.0L : kind == Kind::kMax ? -HUGE_VALL : kind == Kind::kMin ? HUGE_VALL : 0.0L;
  const int64_t n = x.NumElements();
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, out = 0, stride = 1;  // i's output position: its coordinates with reduced dims at 0
    for (int64_t d = rank; d-- > 0;) {
      const int64_t c = rest % xs[d];
      rest /= xs[d];
      out += (reduced[d] ? 0 : c) * stride;
      stride *= kept_shape[d];
    }
    const long double v = elems[static_cast<size_t>(i)];
    long double& a = acc[static_cast<size_t>(out)];
    a = kind == Kind::kMax ? std::max(a, v) : kind == Kind::kMin ? std::min(a, v) : kind == Kind::kProd ? a * v : a + v;
  }
  if (kind == Kind::kMean)
    for (long double& a : acc) a /= static_cast<long double>(std::max<int64_t>(count, 1));
  if (!integer) return FromDoubles(std::vector<double>(acc.begin(), acc.end()), out_shape, x.dtype());
  return FromInts(std::vector<int64_t>(acc.begin(), acc.end()), out_shape, x.dtype());
}

// A reduction over axes computed at run time (a data-dependent shape, graph/op/vm.cc): the
// shape function vm.reduce_shape gives the keepdims shape, whose values bind the symbols of
// vm.reduce's result; with keepdims = 0 a second shape function drops the reduced dims, a view.
void ConvertRunTimeAxesReduce(NodeContext& ctx, Kind kind, bool noop) {
  const int64_t num_axes = ctx.RunTimeShapeLength(1, "the axes");
  const bool keepdims = ctx.AttrInt("keepdims", 1) != 0;
  const int64_t rank = ctx.InputType(0).ndim();
  Expr x = ctx.Input(0), axes = ctx.Input(1);
  if (num_axes == 0 && noop) return ctx.SetOutput(0, x);  // reduces nothing: the input as it is
  x = ElementMap(ctx, kind, x);
  std::string full;
  for (int64_t d = 0; d < rank; ++d) full += (d ? "," : "") + ctx.OutputSymbol(0, static_cast<int>(d)) + "_r";
  Expr shape = ctx.Call("vm.reduce_shape", {x, axes},
                        Attrs{{"keepdims", int64_t{1}}, {"noop_with_empty_axes", int64_t{noop}}, {"source", ctx.Label()}});
  const char* how = kind == Kind::kMean ? "mean" : kind == Kind::kMax ? "max" : kind == Kind::kMin ? "min"
                  : kind == Kind::kProd ? "prod" : kind == Kind::kLogSumExp ? "logsumexp" : "sum";
  Expr y = ctx.Call("vm.reduce", {x, shape}, Attrs{{"kind", std::string(how)}, {"symbols", full}});
  if (kind == Kind::kL2) y = ctx.Call("sqrt", {y});
  if (kind == Kind::kLogSum) y = ctx.Call("log", {y});
  if (!keepdims) {
    Expr squeezed = ctx.Call("vm.reduce_shape", {x, axes},
                             Attrs{{"keepdims", int64_t{0}}, {"noop_with_empty_axes", int64_t{noop}}, {"source", ctx.Label()}});
    const int64_t n = graph::InferExprType(squeezed)->as<graph::TensorTypeNode>()->shape[0].value();
    y = ctx.Call("vm.reshape", {y, squeezed}, Attrs{{"symbols", ctx.OutputSymbols(n)}});
  }
  ctx.SetOutput(0, y);
}

void ConvertReduce(NodeContext& ctx, Kind kind, int64_t axes_input_opset) {
  int64_t rank = ctx.InputType(0).ndim();
  std::vector<int64_t> axes;
  bool noop = false;
  if (ctx.opset() >= axes_input_opset) {
    noop = ctx.AttrInt("noop_with_empty_axes", 0) != 0;
    if (ctx.InputIsRunTime(1)) return ConvertRunTimeAxesReduce(ctx, kind, noop);
    if (ctx.HasInput(1)) axes = ctx.InputInts(1, "reduction axes");
  } else {
    axes = ctx.AttrInts("axes", {});
  }
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) ctx.Fail("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    if (a < 0) a += rank;
  }
  bool keepdims = ctx.AttrInt("keepdims", 1) != 0;
  const bool plain = kind == Kind::kSum || kind == Kind::kMean || kind == Kind::kMax || kind == Kind::kMin ||
                     kind == Kind::kProd;
  if (runtime::NDArray c = ctx.InputConst(0);
      plain && c.defined() && c.NumElements() <= kMaxFoldElements && !c.dtype().is_storage_only() && !(axes.empty() && noop))
    return ctx.SetOutputConst(0, FoldReduce(c, kind, axes, keepdims));
  Expr x = ctx.Input(0);
  x = ElementMap(ctx, kind, x);
  if (axes.empty() && noop) {
    // The input is returned unreduced (with the per-element map of the reduction applied).
    if (kind == Kind::kL2) x = ctx.Call("sqrt", {x});
    if (kind == Kind::kLogSum) x = ctx.Call("log", {x});
    return ctx.SetOutput(0, kind == Kind::kLogSumExp ? ctx.Input(0) : x);
  }
  Expr y;
  switch (kind) {
    case Kind::kMean: y = Reduce(ctx, "mean", x, axes, keepdims); break;
    case Kind::kMax: y = Reduce(ctx, "max", x, axes, keepdims); break;
    case Kind::kMin: y = Reduce(ctx, "min", x, axes, keepdims); break;
    case Kind::kProd: y = Reduce(ctx, "prod", x, axes, keepdims); break;
    case Kind::kL2: y = ctx.Call("sqrt", {Reduce(ctx, "sum", x, axes, keepdims)}); break;
    case Kind::kLogSum: y = ctx.Call("log", {Reduce(ctx, "sum", x, axes, keepdims)}); break;
    case Kind::kLogSumExp: {
      // log(sum(exp(x - m))) + m with m = max(x): no overflow for large x.
      Expr m = Reduce(ctx, "max", x, axes, true);
      Expr s = Reduce(ctx, "sum", ctx.Call("exp", {ctx.Call("subtract", {x, m})}), axes, true);
      y = ctx.Call("add", {ctx.Call("log", {s}), m});
      if (!keepdims) {
        graph::Type t = graph::InferExprType(Reduce(ctx, "sum", x, axes, false));
        auto shape = graph::StaticShape(t->as<graph::TensorTypeNode>()->shape);
        if (!shape) ctx.Unsupported("ReduceLogSumExp with keepdims=0 needs static shapes");
        y = ctx.Call("reshape", {y}, Attrs{{"newshape", std::vector<int64_t>(*shape)}});
      }
      break;
    }
    default: y = Reduce(ctx, "sum", x, axes, keepdims); break;
  }
  ctx.SetOutput(0, y);
}

// ArgMax / ArgMin-1/11/12/13: axis (default 0), keepdims (default 1), select_last_index (12+).
void ConvertArg(NodeContext& ctx, const std::string& op) {
  int64_t rank = ctx.InputType(0).ndim();
  int64_t axis = ctx.AttrInt("axis", 0);
  if (axis < -rank || axis >= rank) ctx.Fail("axis " + std::to_string(axis) + " is out of range");
  if (axis < 0) axis += rank;
  Attrs attrs{{"axis", axis},
              {"keepdims", ctx.AttrInt("keepdims", 1)},
              {"select_last_index", ctx.AttrInt("select_last_index", 0)}};
  ctx.SetOutput(0, ctx.Call(op, {ctx.Input(0)}, attrs));
}

Converter R(Kind k, int64_t axes_input_opset = 18) {
  return [k, axes_input_opset](NodeContext& ctx) { ConvertReduce(ctx, k, axes_input_opset); };
}

// TopK-1/10/11: k from the attribute (opset 1) or input 1 (10+, known at import, or read at run
// time: the VM slices the first k of the ranked axis); outputs Values (gather_elements of the
// indices) and Indices (int64), sorted (also for sorted=0, which leaves the order to the
// implementation).
void ConvertTopK(NodeContext& ctx) {
  const int64_t axis = ctx.AttrInt("axis", -1), largest = ctx.opset() >= 11 ? ctx.AttrInt("largest", 1) : 1;
  if (ctx.opset() >= 10 && ctx.InputIsRunTime(1)) {
    // k read at run time: the whole axis ranked, then its first k (a run-time slice whose end is k,
    // which must lie in [0, n]: RunTimeSlice's check_ends).
    const graph::TensorTypeNode& kt = ctx.InputType(1);
    if (kt.dtype != DataType::Int(64) || kt.NumElements() != std::optional<int64_t>(1))
      ctx.Fail("k must be a one-element int64 tensor, got " + kt.dtype.str() + " " + graph::ShapeStr(kt.shape));
    const std::vector<int64_t> xs = ctx.InputShape(0);
    const int64_t rank = static_cast<int64_t>(xs.size());
    if (axis < -rank || axis >= rank) ctx.Fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    const int64_t a = axis < 0 ? axis + rank : axis;
    Expr x = ctx.Input(0);
    Expr idx = ctx.Call("topk_indices", {x}, Attrs{{"k", xs[a]}, {"axis", a}, {"largest", largest}});
    Expr values = ctx.Call("gather_elements", {x, idx}, Attrs{{"axis", a}});
    auto ints = [](std::vector<int64_t> v) { return Expr(graph::ConstantNode::make(MakeInts(v))); };
    std::vector<Expr> out = RunTimeSlice(ctx, {values, idx}, ints({0}), Reshape(ctx, ctx.Input(1), {1}), ints({a}),
                                         ints({1}), Attrs{{"check_ends", int64_t{1}}});
    ctx.SetOutput(0, out[0]);
    ctx.SetOutput(1, out[1]);
    return;
  }
  int64_t k = 0;
  if (ctx.opset() < 10) {
    k = ctx.AttrInt("k");
  } else {
    std::vector<int64_t> v = ctx.InputInts(1, "TopK's k");
    if (v.size() != 1) ctx.Fail("k must hold one value, got " + std::to_string(v.size()));
    k = v[0];
  }
  if (k < 0) ctx.Fail("k must be >= 0, got " + std::to_string(k));
  Expr x = ctx.Input(0);
  Expr idx = ctx.Call("topk_indices", {x}, Attrs{{"k", k}, {"axis", axis}, {"largest", largest}});
  ctx.SetOutput(0, ctx.Call("gather_elements", {x, idx}, Attrs{{"axis", axis}}));
  ctx.SetOutput(1, idx);
}

// CumSum-11/14 and CumProd-26: x, axis (a scalar input); attrs exclusive, reverse. An axis
// computed at run time selects among one cumulation per axis (run_time_switch.h: the output type
// does not depend on it).
Converter Cumulative(const char* op, const char* onnx_op) {
  return [op, onnx_op](NodeContext& ctx) {
    auto along = [&](int64_t axis) {
      return ctx.Call(op, {ctx.Input(0)}, Attrs{{"axis", axis}, {"exclusive", ctx.AttrInt("exclusive", 0)},
                                                 {"reverse", ctx.AttrInt("reverse", 0)}});
    };
    if (!ctx.InputConst(1).defined() && ctx.HasInput(1)) {
      const int64_t rank = ctx.InputType(0).ndim();
      ctx.SetOutput(0, SwitchOnRunTimeInt(ctx, 1, rank, rank, std::string(onnx_op) + "'s axis", along));
      return;
    }
    std::vector<int64_t> axis = ctx.InputInts(1, std::string(onnx_op) + "'s axis");
    if (axis.size() != 1) ctx.Fail("axis must hold one value, got " + std::to_string(axis.size()));
    ctx.SetOutput(0, along(axis[0]));
  };
}

}  // namespace

void RegisterReduceConverters(ConverterTable& t) {
  t["TopK"] = ConvertTopK;
  t["CumSum"] = Cumulative("cumsum", "CumSum");
  t["CumProd"] = Cumulative("cumprod", "CumProd");
  t["ReduceSum"] = R(Kind::kSum, 13);
  t["ReduceMean"] = R(Kind::kMean);
  t["ReduceMax"] = R(Kind::kMax);
  t["ReduceMin"] = R(Kind::kMin);
  t["ReduceProd"] = R(Kind::kProd);
  t["ReduceL1"] = R(Kind::kL1);
  t["ReduceL2"] = R(Kind::kL2);
  t["ReduceLogSum"] = R(Kind::kLogSum);
  t["ReduceLogSumExp"] = R(Kind::kLogSumExp);
  t["ReduceSumSquare"] = R(Kind::kSumSquare);
  t["ArgMax"] = [](NodeContext& ctx) { ConvertArg(ctx, "argmax"); };
  t["ArgMin"] = [](NodeContext& ctx) { ConvertArg(ctx, "argmin"); };
}

}  // namespace tessera::frontend::onnx_import
