// ONNX elementwise math: Add/Sub/Mul/Div/Pow/Max/Min (numpy broadcasting; opset < 7 legacy
// broadcast/axis attrs), unary activations, Clip (opset < 11: min/max attrs; 11+: inputs).
#include <cmath>
#include <limits>

#include "const_eval.h"
#include "context.h"
#include "fold.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

// Opset < 7 Add/Sub/Mul/Div: with broadcast=1 and axis, B's dims align with A's starting at axis.
Expr LegacyBroadcast(NodeContext& ctx, Expr b) {
  if (ctx.opset() >= 7 || ctx.AttrInt("broadcast", 0) == 0 || !ctx.HasAttr("axis")) return b;
  int64_t rank_a = ctx.InputType(0).ndim(), rank_b = ctx.InputType(1).ndim();
  int64_t axis = ctx.AttrInt("axis", 0);
  if (axis < 0) axis += rank_a;
  int64_t trailing = rank_a - axis - rank_b;
  if (trailing < 0) ctx.Fail("legacy broadcast axis " + std::to_string(axis) + " does not fit B's rank");
  if (trailing == 0) return b;
  return ctx.Call("expand_dims", {b}, Attrs{{"axis", rank_b}, {"num_newaxis", trailing}});
}

void Binary(NodeContext& ctx, const std::string& op, char fold_op) {
  if (fold_op && ctx.AllInputsConst(2)) {
    runtime::NDArray a = ctx.InputConst(0), b = ctx.InputConst(1);
    if (a.dtype() == b.dtype() && (!a.dtype().is_floating() || a.NumElements() * b.NumElements() <= (1 << 16))) {
      if (ctx.opset() >= 7 || ctx.AttrInt("broadcast", 0) == 0) {
        ctx.SetOutputConst(0, BinaryArray(a, b, fold_op));
        return;
      }
    }
  }
  Expr a = ctx.Input(0), b = LegacyBroadcast(ctx, ctx.Input(1));
  ctx.SetOutput(0, ctx.Call(op, {a, b}));
}

// Max / Min / Sum are variadic: fold pairwise.
void Variadic(NodeContext& ctx, const std::string& op) {
  Expr acc = ctx.Input(0);
  for (int i = 1; i < ctx.NumInputs(); ++i) acc = ctx.Call(op, {acc, ctx.Input(i)});
  ctx.SetOutput(0, acc);
}

Converter Unary(const std::string& op) {
  return [op](NodeContext& ctx) { ctx.SetOutput(0, ctx.Call(op, {ctx.Input(0)})); };
}

// Pow-1/7/12/13/15 (folded at import when both inputs are known and small, in float64 as below):
// the result has the base's dtype. An integer base is raised in float64 and
// truncated back (as numpy's power(...).astype and ONNX Runtime's std::pow do), so that a float
// exponent is not truncated first: Pow(int32 [2, 3], float [5, 0.5]) = [32, 1].
void ConvertPow(NodeContext& ctx) {
  DataType bt = ctx.InputType(0).dtype;
  if (CanFold(ctx, 2) && !bt.is_storage_only() && !ctx.InputConst(1).dtype().is_storage_only())  // shape arithmetic
    return ctx.SetOutputConst(0, FoldBroadcast({ctx.InputConst(0), ctx.InputConst(1)}, bt, [](const auto& v) {
                                return static_cast<long double>(std::pow(static_cast<double>(v[0]),
                                                                         static_cast<double>(v[1])));
                              }));
  Expr base = ctx.Input(0), exponent = ctx.Input(1);
  if (!bt.is_floating()) {
    const Attrs f64{{"dtype", std::string("float64")}};
    Expr p = ctx.Call("power", {ctx.Call("cast", {base}, f64), ctx.Call("cast", {exponent}, f64)});
    return ctx.SetOutput(0, ctx.Call("cast", {p}, Attrs{{"dtype", bt.str()}}));
  }
  if (ctx.InputType(1).dtype != bt) exponent = ctx.Call("cast", {exponent}, Attrs{{"dtype", bt.str()}});
  ctx.SetOutput(0, ctx.Call("power", {base, exponent}));
}

double ScalarInput(NodeContext& ctx, int i, const char* what) {
  std::vector<double> v = ctx.InputDoubles(i, what);
  if (v.size() != 1) ctx.Fail(std::string(what) + " must be a scalar, got " + std::to_string(v.size()) + " values");
  return v[0];
}

// Clip-1/6: min / max attrs; 11/12/13: optional min / max inputs (scalars; when computed at run
// time they become maximum / minimum ops). Absent bounds are the dtype's limits.
void ConvertClip(NodeContext& ctx) {
  DataType dt = ctx.InputType(0).dtype;
  double lo, hi;
  if (dt.is_floating()) {
    lo = -std::numeric_limits<double>::infinity();
    hi = std::numeric_limits<double>::infinity();
  } else if (dt.is_uint() || dt.is_bool()) {
    lo = 0;
    hi = dt.bits() >= 64 ? 1.8446744073709552e19 : std::ldexp(1.0, dt.bits()) - 1;
  } else {
    lo = -std::ldexp(1.0, dt.bits() - 1);
    hi = std::ldexp(1.0, dt.bits() - 1) - 1;
  }
  Expr x = ctx.Input(0);
  if (ctx.opset() < 11) {
    lo = ctx.AttrFloat("min", -std::numeric_limits<float>::max());
    hi = ctx.AttrFloat("max", std::numeric_limits<float>::max());
  } else {
    for (int i = 1; i <= 2; ++i) {
      if (!ctx.HasInput(i)) continue;
      if (!ctx.InputConst(i).defined()) {  // a bound computed at run time
        if (ctx.InputType(i).ndim() != 0 && ctx.InputType(i).ndim() != 1) ctx.Fail("Clip bounds must be scalars");
        x = ctx.Call(i == 1 ? "maximum" : "minimum", {x, ctx.Input(i)});
        continue;
      }
      double v = ScalarInput(ctx, i, i == 1 ? "Clip min" : "Clip max");
      (i == 1 ? lo : hi) = v;
    }
  }
  if (!dt.is_floating() && dt.bits() >= 64) {
    lo = std::max(lo, -9.2233720368547748e18);
    hi = std::min(hi, 9.2233720368547748e18);
  }
  // min > max gives max everywhere (ONNX: min(max(x, min), max)).
  if (lo > hi) lo = hi;
  ctx.SetOutput(0, ctx.Call("clip", {x}, Attrs{{"a_min", lo}, {"a_max", hi}}));
}

void ConvertHardSigmoid(NodeContext& ctx) {
  double alpha = ctx.AttrFloat("alpha", 0.2f), beta = ctx.AttrFloat("beta", 0.5f);
  ctx.SetOutput(0, ctx.Call("hard_sigmoid", {ctx.Input(0)}, Attrs{{"alpha", alpha}, {"beta", beta}}));
}

}  // namespace

void RegisterMathConverters(ConverterTable& t) {
  t["Add"] = [](NodeContext& ctx) { Binary(ctx, "add", '+'); };
  t["Sub"] = [](NodeContext& ctx) { Binary(ctx, "subtract", '-'); };
  t["Mul"] = [](NodeContext& ctx) { Binary(ctx, "multiply", '*'); };
  t["Div"] = [](NodeContext& ctx) { Binary(ctx, "divide", '/'); };
  t["Pow"] = ConvertPow;
  t["Max"] = [](NodeContext& ctx) { Variadic(ctx, "maximum"); };
  t["Min"] = [](NodeContext& ctx) { Variadic(ctx, "minimum"); };
  t["Sum"] = [](NodeContext& ctx) { Variadic(ctx, "add"); };
  t["Relu"] = Unary("nn.relu");
  t["Sigmoid"] = Unary("sigmoid");
  t["HardSwish"] = Unary("hard_swish");
  t["Exp"] = Unary("exp");
  t["Log"] = Unary("log");
  t["Sqrt"] = [](NodeContext& ctx) {  // folded at import for shape arithmetic (1 / sqrt(head size))
    if (CanFold(ctx, 1) && !ctx.InputConst(0).dtype().is_storage_only())
      return ctx.SetOutputConst(0, FoldBroadcast({ctx.InputConst(0)}, ctx.InputConst(0).dtype(),
                                                 [](const auto& v) -> long double { return std::sqrt(v[0]); }));
    ctx.SetOutput(0, ctx.Call("sqrt", {ctx.Input(0)}));
  };
  t["Tanh"] = Unary("tanh");
  t["Neg"] = [](NodeContext& ctx) {
    // Folded at import for shape arithmetic (LayerNormalization's expansion negates an axis).
    if (CanFold(ctx, 1) && !ctx.InputConst(0).dtype().is_storage_only())
      return ctx.SetOutputConst(0, FoldBroadcast({ctx.InputConst(0)}, ctx.InputConst(0).dtype(),
                                                 [](const auto& v) -> long double { return -v[0]; }));
    ctx.SetOutput(0, ctx.Call("negative", {ctx.Input(0)}));
  };
  t["Abs"] = Unary("abs");
  t["HardSigmoid"] = ConvertHardSigmoid;
  t["Clip"] = ConvertClip;
}

}  // namespace tessera::frontend::onnx_import
