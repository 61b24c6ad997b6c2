// ONNX comparisons and logic (Equal, Less, Greater, LessOrEqual, GreaterOrEqual, Not, And, Or,
// Xor, Where, IsNaN, IsInf), the bit ops (BitwiseAnd / Or / Xor / Not, BitShift), Mod, Mean and
// the unary math ops Erf, Floor, Ceil, Round,
// Reciprocal, Sign, Sin ... Atanh. All opset versions of these ops share their semantics
// (later versions only add dtypes); binary ops broadcast per numpy rules (opset 7+). Known
// inputs fold at import.
#include <cmath>
#include <limits>

#include "const_eval.h"
#include "context.h"
#include "fold.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

using Fn = std::function<long double(const std::vector<long double>&)>;

void CheckModernBroadcast(NodeContext& ctx) {
  if (ctx.opset() < 7 && ctx.AttrInt("broadcast", 0) != 0 && ctx.HasAttr("axis")) {
    ctx.Unsupported("legacy (opset < 7) broadcast with an axis attribute is not supported");
  }
}

Converter Compare(const std::string& op, Fn fold) {
  return [op, fold](NodeContext& ctx) {
    CheckModernBroadcast(ctx);
    if (CanFold(ctx, 2) && ctx.InputConst(0).dtype() == ctx.InputConst(1).dtype()) {
      return ctx.SetOutputConst(0, FoldBroadcast({ctx.InputConst(0), ctx.InputConst(1)}, DataType::Bool(), fold));
    }
    ctx.SetOutput(0, ctx.Call(op, {ctx.Input(0), ctx.Input(1)}));
  };
}

void ConvertWhere(NodeContext& ctx) {
  if (CanFold(ctx, 3) && ctx.InputConst(1).dtype() == ctx.InputConst(2).dtype()) {
    DataType dt = ctx.InputConst(1).dtype();
    return ctx.SetOutputConst(0, FoldBroadcast({ctx.InputConst(0), ctx.InputConst(1), ctx.InputConst(2)}, dt,
                                               [](const auto& v) { return v[0] != 0 ? v[1] : v[2]; }));
  }
  ctx.SetOutput(0, ctx.Call("where", {ctx.Input(0), ctx.Input(1), ctx.Input(2)}));
}

void ConvertNot(NodeContext& ctx) {
  if (CanFold(ctx, 1)) {
    return ctx.SetOutputConst(0, FoldBroadcast({ctx.InputConst(0)}, DataType::Bool(),
                                               [](const auto& v) -> long double { return v[0] == 0; }));
  }
  ctx.SetOutput(0, ctx.Call("logical_not", {ctx.Input(0)}));
}

// IsInf-10/20: detect_positive, detect_negative (default 1).
void ConvertIsInf(NodeContext& ctx) {
  Attrs attrs{{"detect_positive", ctx.AttrInt("detect_positive", 1)},
              {"detect_negative", ctx.AttrInt("detect_negative", 1)}};
  ctx.SetOutput(0, ctx.Call("isinf", {ctx.Input(0)}, attrs));
}

// Mod-10/13: fmod (default 0) selects C fmod (sign of the dividend) over floor modulo.
void ConvertMod(NodeContext& ctx) {
  int64_t fmod = ctx.AttrInt("fmod", 0);
  if (fmod == 0 && ctx.InputType(0).dtype.is_floating()) ctx.Fail("fmod must be 1 for floating-point inputs");
  // Folded at import for shape arithmetic (Attention's expansion tests num_heads % kv_heads).
  // A zero divisor (and INT64_MIN % -1) folds to 0 instead of trapping at import.
  if (CanFold(ctx, 2) && ctx.InputConst(0).dtype() == ctx.InputConst(1).dtype() &&
      !ctx.InputConst(0).dtype().is_floating()) {
    return ctx.SetOutputConst(
        0, FoldBroadcast({ctx.InputConst(0), ctx.InputConst(1)}, ctx.InputConst(0).dtype(),
                         [fmod](const auto& v) -> long double {
                           auto a = static_cast<int64_t>(v[0]), b = static_cast<int64_t>(v[1]);
                           if (b == 0 || (b == -1 && a == std::numeric_limits<int64_t>::min())) return 0;
                           int64_t r = a % b;
                           if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
                           return static_cast<long double>(r);
                         }));
  }
  ctx.SetOutput(0, ctx.Call("mod", {ctx.Input(0), ctx.Input(1)}, Attrs{{"fmod", fmod}}));
}

// Mean-1/6/8/13: the elementwise mean of the (broadcast) inputs.
void ConvertMean(NodeContext& ctx) {
  Expr acc = ctx.Input(0);
  for (int i = 1; i < ctx.NumInputs(); ++i) acc = ctx.Call("add", {acc, ctx.Input(i)});
  if (ctx.NumInputs() > 1) {
    acc = ctx.Call("divide", {acc, ctx.ScalarConst(ctx.NumInputs(), ctx.InputType(0).dtype)});
  }
  ctx.SetOutput(0, acc);
}

Converter Unary(const std::string& op) {
  return [op](NodeContext& ctx) { ctx.SetOutput(0, ctx.Call(op, {ctx.Input(0)})); };
}

Converter Binary(const std::string& op) {
  return [op](NodeContext& ctx) { ctx.SetOutput(0, ctx.Call(op, {ctx.Input(0), ctx.Input(1)})); };
}

// BitShift-11: direction LEFT / RIGHT (required), unsigned tensors.
void ConvertBitShift(NodeContext& ctx) {
  const std::string dir = ctx.AttrString("direction", "");
  if (dir != "LEFT" && dir != "RIGHT") ctx.Fail("attribute direction must be LEFT or RIGHT, got '" + dir + "'");
  ctx.SetOutput(0, ctx.Call(dir == "LEFT" ? "shift_left" : "shift_right", {ctx.Input(0), ctx.Input(1)}));
}

// `op`, folded at import when its input is known (and small: CanFold) by `fn` in long double.
Converter FoldingUnary(const std::string& op, long double (*fn)(const std::vector<long double>&)) {
  return [op, fn](NodeContext& ctx) {
    if (CanFold(ctx, 1) && !ctx.InputConst(0).dtype().is_storage_only())
      return ctx.SetOutputConst(0, FoldBroadcast({ctx.InputConst(0)}, ctx.InputConst(0).dtype(), fn));
    ctx.SetOutput(0, ctx.Call(op, {ctx.Input(0)}));
  };
}

// Sign folds too (shape arithmetic); the rest are plain elementwise ops.
void ConvertSign(NodeContext& ctx) {
  if (CanFold(ctx, 1)) {
    return ctx.SetOutputConst(0, FoldBroadcast({ctx.InputConst(0)}, ctx.InputConst(0).dtype(),
                                               [](const auto& v) -> long double { return (v[0] > 0) - (v[0] < 0); }));
  }
  ctx.SetOutput(0, ctx.Call("sign", {ctx.Input(0)}));
}

}  // namespace

void RegisterLogicConverters(ConverterTable& t) {
  t["Equal"] = Compare("equal", [](const auto& v) -> long double { return v[0] == v[1]; });
  t["Less"] = Compare("less", [](const auto& v) -> long double { return v[0] < v[1]; });
  t["Greater"] = Compare("greater", [](const auto& v) -> long double { return v[0] > v[1]; });
  t["LessOrEqual"] = Compare("less_equal", [](const auto& v) -> long double { return v[0] <= v[1]; });
  t["GreaterOrEqual"] = Compare("greater_equal", [](const auto& v) -> long double { return v[0] >= v[1]; });
  t["And"] = Compare("logical_and", [](const auto& v) -> long double { return v[0] != 0 && v[1] != 0; });
  t["Or"] = Compare("logical_or", [](const auto& v) -> long double { return v[0] != 0 || v[1] != 0; });
  t["Xor"] = Compare("logical_xor", [](const auto& v) -> long double { return (v[0] != 0) != (v[1] != 0); });
  t["Not"] = ConvertNot;
  t["BitwiseAnd"] = Binary("bitwise_and");
  t["BitwiseOr"] = Binary("bitwise_or");
  t["BitwiseXor"] = Binary("bitwise_xor");
  t["BitwiseNot"] = Unary("bitwise_not");
  t["BitShift"] = ConvertBitShift;
  t["Where"] = ConvertWhere;
  t["IsNaN"] = Unary("isnan");
  t["IsInf"] = ConvertIsInf;
  t["Mod"] = ConvertMod;
  t["Mean"] = ConvertMean;
  t["Sign"] = ConvertSign;
  // Floor / Ceil / Round fold at import too (exact; shape arithmetic such as ceil(H / patch) * patch
  // before a Reshape); Round is half to even.
  t["Floor"] = FoldingUnary("floor", [](const auto& v) -> long double { return std::floor(v[0]); });
  t["Ceil"] = FoldingUnary("ceil", [](const auto& v) -> long double { return std::ceil(v[0]); });
  t["Round"] = FoldingUnary("round", [](const auto& v) -> long double { return std::nearbyint(v[0]); });
  for (const char* name : {"Erf", "Reciprocal", "Sin", "Cos", "Tan", "Asin", "Acos",
                           "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh"}) {
    std::string op = name;
    for (char& c : op) c = static_cast<char>(std::tolower(c));
    t[name] = Unary(op);
  }
}

}  // namespace tessera::frontend::onnx_import
