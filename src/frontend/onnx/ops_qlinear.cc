// ONNX integer-quantized products, composed from graph ops with the reference implementation's
// exact arithmetic (onnx/reference/ops/op_matmul_integer.py, op_conv_integer.py,
// op_qlinear_matmul.py, op_qlinear_conv.py):
//
//   MatMulInteger-10:  Y int32 = (A - a_zp) @ (B - b_zp)           (int32 products and sums)
//   ConvInteger-10:    Y int32 = conv(X - x_zp, W - w_zp)          (zero padding after the shift)
//   QLinearMatMul-10/21: Y = saturate(round_half_even(float64(C) * float64(m) + y_zp)),
//                      C = (a - a_zp) @ (b - b_zp) in int32, m = a_scale * b_scale / y_scale
//                      computed in the scales' float type (numpy: int32 * float32 -> float64)
//   QLinearConv-10:    the same with C = conv(x - x_zp, w - w_zp) + B (int32) and
//                      m = x_scale * w_scale / y_scale
// Y's type is y_zero_point's (default: the input's); saturation to its range, rounding half to
// even. Zero points / scales: a scalar (or [1]) per tensor; MatMul: a's per row ([M] or
// [.., M, 1]) and b's per column ([N] or [.., 1, N]); Conv: w's per output channel ([M]).
// int8 and uint8 operands (any integer type the frontend reads); 2-D convolutions (1-D as 2-D
// over [N, C, 1, L] is not wired: a 3-D input is an UnsupportedError).
#include <limits>

#include "context.h"
#include "conv_build.h"
#include "graph_build.h"
#include "tessera/support/checked_math.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

const Attrs kToInt32{{"dtype", std::string("int32")}};
const Attrs kToFloat64{{"dtype", std::string("float64")}};

void CheckIntegerInput(NodeContext& ctx, int i, const std::string& what) {
  const DataType t = ctx.InputType(i).dtype;
  if (!t.is_int() && !t.is_uint()) ctx.Fail(what + " must be an integer tensor (int8 / uint8), got " + t.str());
}

// Input i as int32 minus the optional zero point at input zp (reshaped by `shape_zp`).
Expr Shifted(NodeContext& ctx, int i, int zp, const std::function<Expr(Expr)>& shape_zp) {
  Expr x = ctx.Call("cast", {ctx.Input(i)}, kToInt32);
  if (!ctx.HasInput(zp)) return x;
  if (ctx.InputType(zp).dtype != ctx.InputType(i).dtype)
    ctx.Fail("input " + std::to_string(zp) + " (a zero point) must have the element type of input " + std::to_string(i));
  Expr z = ctx.Call("cast", {ctx.Input(zp)}, kToInt32);
  return ctx.Call("subtract", {x, shape_zp(z)});
}

// A per-row parameter of A [.., M, K]: scalar / [1] as is; [M] -> [M, 1]; else as given.
Expr PerRow(NodeContext& ctx, Expr p, int64_t m) {
  const std::vector<int64_t> s = StaticShape(ctx, p);
  if (s.size() == 1 && s[0] == m && m != 1) return Reshape(ctx, p, {m, 1});
  return p;
}

// A per-output-channel parameter of a conv [N, O, H, W]: [O] -> [1, O, 1, 1]; scalar / [1] as is.
Expr PerChannel(NodeContext& ctx, Expr p, int64_t o, const std::string& what) {
  const std::vector<int64_t> s = StaticShape(ctx, p);
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  if (n == 1) return Reshape(ctx, p, {});
  if (s.size() != 1 || s[0] != o) ctx.Fail(what + " must be a scalar or 1-D [" + std::to_string(o) + "] (per output channel)");
  return Reshape(ctx, p, {1, o, 1, 1});
}

// The weight zero point of a conv, shaped against W [O, C/g, kH, kW].
Expr WeightZeroPoint(NodeContext& ctx, Expr z, int64_t o) {
  const std::vector<int64_t> s = StaticShape(ctx, z);
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  if (n == 1) return Reshape(ctx, z, {});
  if (s.size() != 1 || s[0] != o) ctx.Fail("the weight zero point must be a scalar or 1-D [" + std::to_string(o) + "]");
  return Reshape(ctx, z, {o, 1, 1, 1});
}

// saturate(round_half_even(float64(acc) * float64(multiplier) + y_zp)) as `out` (an integer type).
Expr Requantize(NodeContext& ctx, Expr acc, Expr multiplier, int yzp, DataType out) {
  Expr d = ctx.Call("multiply", {ctx.Call("cast", {acc}, kToFloat64), ctx.Call("cast", {multiplier}, kToFloat64)});
  if (ctx.HasInput(yzp)) d = ctx.Call("add", {d, ctx.Call("cast", {ctx.Input(yzp)}, kToFloat64)});
  double lo, hi;
  if (out.is_uint()) {
    lo = 0;
    hi = static_cast<double>((uint64_t{1} << out.bits()) - 1);
  } else {
    lo = -static_cast<double>(int64_t{1} << (out.bits() - 1));
    hi = static_cast<double>((int64_t{1} << (out.bits() - 1)) - 1);
  }
  d = ctx.Call("clip", {ctx.Call("round", {d})}, Attrs{{"a_min", lo}, {"a_max", hi}});
  return ctx.Call("cast", {d}, Attrs{{"dtype", out.str()}});
}

void CheckScale(NodeContext& ctx, int i, const std::string& what) {
  if (!ctx.InputType(i).dtype.is_float()) ctx.Fail(what + " must be a float tensor, got " + ctx.InputType(i).dtype.str());
}

Expr IntegerMatMul(NodeContext& ctx, int a, int azp, int b, int bzp) {
  CheckIntegerInput(ctx, a, "A");
  CheckIntegerInput(ctx, b, "B");
  const std::vector<int64_t> as = ctx.InputShape(a);
  if (as.empty() || ctx.InputShape(b).empty()) ctx.Fail("A and B must have rank >= 1");
  const int64_t m = as.size() >= 2 ? as[as.size() - 2] : 1;
  Expr x = Shifted(ctx, a, azp, [&](Expr z) { return PerRow(ctx, z, m); });
  Expr y = Shifted(ctx, b, bzp, [](Expr z) { return z; });
  return ctx.Call("nn.matmul", {x, y});
}

void ConvertMatMulInteger(NodeContext& ctx) { ctx.SetOutput(0, IntegerMatMul(ctx, 0, 2, 1, 3)); }

void ConvertQLinearMatMul(NodeContext& ctx) {
  // a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point
  CheckScale(ctx, 1, "a_scale");
  CheckScale(ctx, 4, "b_scale");
  CheckScale(ctx, 6, "y_scale");
  Expr acc = IntegerMatMul(ctx, 0, 2, 3, 5);
  const std::vector<int64_t> as = ctx.InputShape(0);
  const int64_t m = as.size() >= 2 ? as[as.size() - 2] : 1;
  Expr mult = ctx.Call("divide", {ctx.Call("multiply", {PerRow(ctx, ctx.Input(1), m), ctx.Input(4)}), ctx.Input(6)});
  const DataType out = ctx.HasInput(7) ? ctx.InputType(7).dtype : ctx.InputType(0).dtype;
  ctx.SetOutput(0, Requantize(ctx, acc, mult, 7, out));
}

Expr IntegerConv(NodeContext& ctx, int x, int xzp, int w, int wzp) {
  CheckIntegerInput(ctx, x, "x");
  CheckIntegerInput(ctx, w, "w");
  if (ctx.InputType(x).ndim() != 4)
    ctx.Unsupported("only 2-D integer convolutions (a 4-D input) are supported; the input has rank " +
                    std::to_string(ctx.InputType(x).ndim()));
  const int64_t o = ctx.InputDim(w, 0, "w");
  if (ctx.HasInput(xzp)) {
    int64_t n = 1;
    for (int64_t d : ctx.InputShape(xzp)) n = CheckedMul(n, d, "x_zero_point's element count");
    if (n != 1) ctx.Fail("x_zero_point must be a scalar (per-tensor)");
  }
  Expr xs = Shifted(ctx, x, xzp, [&](Expr z) { return Reshape(ctx, z, {}); });
  Expr ws = Shifted(ctx, w, wzp, [&](Expr z) { return WeightZeroPoint(ctx, z, o); });
  return BuildConv2D(ctx, xs, ws);
}

void ConvertConvInteger(NodeContext& ctx) { ctx.SetOutput(0, IntegerConv(ctx, 0, 2, 1, 3)); }

void ConvertQLinearConv(NodeContext& ctx) {
  // x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B
  CheckScale(ctx, 1, "x_scale");
  CheckScale(ctx, 4, "w_scale");
  CheckScale(ctx, 6, "y_scale");
  Expr acc = IntegerConv(ctx, 0, 2, 3, 5);
  const int64_t o = ctx.InputDim(3, 0, "w");
  if (ctx.HasInput(8)) {
    if (ctx.InputType(8).dtype != DataType::Int(32)) ctx.Fail("B must be an int32 tensor");
    acc = ctx.Call("nn.bias_add", {acc, ctx.Input(8)}, Attrs{{"axis", int64_t{1}}});
  }
  Expr mult = ctx.Call("divide", {ctx.Call("multiply", {ctx.Input(1), PerChannel(ctx, ctx.Input(4), o, "w_scale")}),
                                  ctx.Input(6)});
  const DataType out = ctx.HasInput(7) ? ctx.InputType(7).dtype : ctx.InputType(0).dtype;
  ctx.SetOutput(0, Requantize(ctx, acc, mult, 7, out));
}

}  // namespace

void RegisterQLinearConverters(ConverterTable& t) {
  t["MatMulInteger"] = ConvertMatMulInteger;
  t["QLinearMatMul"] = ConvertQLinearMatMul;
  t["ConvInteger"] = ConvertConvInteger;
  t["QLinearConv"] = ConvertQLinearConv;
}

}  // namespace tessera::frontend::onnx_import
