// ONNX elementwise math: Add/Sub/Mul/Div/Pow/Max/Min (numpy broadcasting; opset < 7 legacy
// broadcast/axis attrs), unary activations, Clip (opset < 11: min/max attrs; 11+: inputs).
#include <limits>

#include "const_eval.h"
#include "context.h"

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
  if (fold_op && ctx.AllInputsConst()) {
    runtime::NDArray a = ctx.InputConst(0), b = ctx.InputConst(1);
    if (a.dtype() == b.dtype() && (!a.dtype().is_float() || a.NumElements() * b.NumElements() <= (1 << 16))) {
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

void ConvertPow(NodeContext& ctx) {
  Expr base = ctx.Input(0), exponent = ctx.Input(1);
  DataType bt = ctx.InputType(0).dtype;
  if (ctx.InputType(1).dtype != bt) exponent = ctx.Call("cast", {exponent}, Attrs{{"dtype", bt.str()}});
  ctx.SetOutput(0, ctx.Call("power", {base, exponent}));
}

double ScalarInput(NodeContext& ctx, int i, const char* what) {
  std::vector<double> v = ctx.InputDoubles(i, what);
  if (v.size() != 1) ctx.Fail(std::string(what) + " must be a scalar, got " + std::to_string(v.size()) + " values");
  return v[0];
}

void ConvertClip(NodeContext& ctx) {
  double lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
  if (ctx.opset() < 11) {
    lo = ctx.AttrFloat("min", static_cast<float>(lo));
    hi = ctx.AttrFloat("max", static_cast<float>(hi));
  } else {
    if (ctx.HasInput(1)) lo = ScalarInput(ctx, 1, "Clip min");
    if (ctx.HasInput(2)) hi = ScalarInput(ctx, 2, "Clip max");
  }
  ctx.SetOutput(0, ctx.Call("clip", {ctx.Input(0)}, Attrs{{"a_min", lo}, {"a_max", hi}}));
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
  t["Sqrt"] = Unary("sqrt");
  t["Tanh"] = Unary("tanh");
  t["Neg"] = Unary("negative");
  t["Abs"] = Unary("abs");
  t["HardSigmoid"] = ConvertHardSigmoid;
  t["Clip"] = ConvertClip;
}

}  // namespace tessera::frontend::onnx_import
